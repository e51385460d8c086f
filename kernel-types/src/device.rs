//! The parameter types of a `#[kernel]` function (`hiprs-kernel-macros`): [`In`], a read-only view whose
//! every read is checked; [`Out`] and [`OutChunk`], whose writes are disjoint by construction (a thread
//! reaches only the elements its 64-bit global index gives it: one, a grid-stride set, a contiguous
//! chunk ([`OutChunk`]), its block's ([`OutBlock`]) or its row and column ([`Out2d`])); and [`Shared`] / [`SharedRead`], the block's shared memory in write and read phases with the
//! barrier between them.
//!
//! None can be built outside `unsafe` (the `from_raw_parts` functions, which only the macro's generated
//! entry point calls): a kernel body, compiled under `forbid(unsafe_code)`, receives them and can do
//! nothing with them that reads out of bounds, writes another thread's element or slot, or reads a slot
//! while another thread writes it.

use crate::gpu;
use core::marker::PhantomData;

#[doc(hidden)]
pub use crate::shared::launch_sized_shared;
pub use crate::shared::{Shared, SharedRead, Strided, StridedIter};
pub use crate::value::DeviceValue;

/// A kernel's read-only input: `len` elements of `T` in device memory, read with [`get`](In::get)
/// (`None` past the end) or `[]` (which stops the kernel past the end, as a panic on the GPU does).
///
/// ```ignore
/// #[kernel]
/// pub fn copy(x: In<f32>, mut y: Out<f32>) {
///     if let Some(slot) = y.mine() {
///         *slot = x.get(gpu::global_linear_id()).unwrap_or(0.0);
///     }
/// }
/// ```
#[derive(Clone, Copy)]
pub struct In<'a, T: DeviceValue> {
    ptr: *const T,
    len: u64,
    _data: PhantomData<&'a [T]>,
}

impl<T: DeviceValue> In<'_, T> {
    /// A view of `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` points to `len` initialised `T` in memory this thread may read, not written by anyone while
    /// the view lives (the host's launcher borrows the buffer shared and orders the launch after its
    /// writers).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *const T, len: u64) -> Self {
        In {
            ptr,
            len,
            _data: PhantomData,
        }
    }

    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are none.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `i`, or `None` when `i >= len()`.
    #[inline(always)]
    pub fn get(&self, i: u64) -> Option<T> {
        if i < self.len {
            // SAFETY: i < len, and `from_raw_parts`' contract makes the `len` elements readable; `i`
            // fits in a usize on the 64-bit GPU targets (and no host reaches this: In is made only on
            // the device).
            Some(unsafe { self.ptr.add(i as usize).read() })
        } else {
            None
        }
    }
}

impl<'a, T: DeviceValue> In<'a, T> {
    /// Elements `start .. start + len` as a view of their own (`None` unless inside this one): one
    /// check here, and reads of the sub-view check only against its own length (`get(i)`: `i < len`),
    /// which a kernel's own loop bound often already implies.
    ///
    /// ```ignore
    /// // Row `r` of a row-major m x k matrix; `row.get(j)` is `a[r * k + j]` for j < k.
    /// let row = r.checked_mul(k).and_then(|start| a.slice(start, k));
    /// ```
    #[inline(always)]
    pub fn slice(&self, start: u64, len: u64) -> Option<In<'a, T>> {
        let end = start.checked_add(len)?;
        // SAFETY: start + len <= self.len: the sub-view's elements are this view's (same contract).
        (end <= self.len).then(|| unsafe { In::from_raw_parts(self.ptr.add(start as usize), len) })
    }

    /// The `count` elements `start, start + stride, ..` (a column of a row-major matrix, for `stride` its
    /// row length), or `None` unless the last of them is inside this view (computed without overflow).
    /// Checked once here; the view's `get(i)` checks only `i < count`.
    ///
    /// ```ignore
    /// // Column `c` of a row-major k x n matrix; `col.get(j)` is `b[j * n + c]` for j < k.
    /// let col = b.strided(c, n, k);
    /// ```
    #[inline(always)]
    pub fn strided(&self, start: u64, stride: u64, count: u64) -> Option<Strided<'a, T>> {
        // strided_fits (in `checked`): every element of the view is one of this view's, which are
        // readable and unwritten for 'a (from_raw_parts' contract).
        Strided::checked(self.ptr, start, stride, count, self.len)
    }

    /// [`slice`](In::slice), with an empty view (every [`get`](In::get) is `None`) where it does not fit,
    /// instead of `None`: a load from it is one check (`i < len()`, the length `len` or 0) where an
    /// `Option` costs a test of its own in every loop that reads it.
    ///
    /// ```ignore
    /// // Row `r` of a row-major k-column matrix, or nothing; a tile load is then one compare.
    /// let row = a.slice_or_empty(r.saturating_mul(k), k);
    /// let x = row.get(kt + tx).unwrap_or(0.0);
    /// ```
    #[inline(always)]
    pub fn slice_or_empty(&self, start: u64, len: u64) -> In<'a, T> {
        let fits = start.checked_add(len).is_some_and(|end| end <= self.len);
        // SAFETY: where it fits, start + len <= self.len: the sub-view's elements are this view's (same
        // contract); otherwise no element, at this view's own (readable or dangling, never read) start.
        unsafe {
            In::from_raw_parts(
                self.ptr.wrapping_add(if fits { start as usize } else { 0 }),
                if fits { len } else { 0 },
            )
        }
    }

    /// [`strided`](In::strided), with an empty view where it does not fit, instead of `None` (as
    /// [`SharedRead::strided_or_empty`]).
    ///
    /// ```ignore
    /// // Column `c` of a row-major k x n matrix, or nothing.
    /// let col = b.strided_or_empty(c, n, k);
    /// let x = col.get(kt + ty).unwrap_or(0.0);
    /// ```
    #[inline(always)]
    pub fn strided_or_empty(&self, start: u64, stride: u64, count: u64) -> Strided<'a, T> {
        // or_empty: every element of the view is one of this view's (readable and unwritten for 'a), or
        // it has none.
        Strided::or_empty(self.ptr, start, stride, count, self.len)
    }
}

impl<T: DeviceValue> core::ops::Index<u64> for In<'_, T> {
    type Output = T;
    /// Element `i`; past the end the kernel stops (a panic: the wavefront ends on AMD, a trap on NVIDIA).
    #[inline(always)]
    fn index(&self, i: u64) -> &T {
        assert!(i < self.len, "In index out of bounds");
        // SAFETY: i < len (just checked) and the elements are readable and unchanged for 'a.
        unsafe { &*self.ptr.add(i as usize) }
    }
}

/// A kernel's output: `len` elements of `T` in device memory, of which each thread reaches only its own:
/// the element at its [`gpu::global_linear_id`] ([`mine`](Out::mine)) or its grid-stride share
/// ([`for_each_mine`](Out::for_each_mine)). Two threads never reach one element, so the writes are
/// disjoint by construction; a thread may read back what it reaches (`y = a * x + y`).
///
/// Neither `Clone` nor `Copy`: the `&mut` it hands out borrows it.
pub struct Out<'a, T: DeviceValue> {
    ptr: *mut T,
    len: u64,
    _data: PhantomData<&'a mut [T]>,
}

impl<T: DeviceValue> Out<'_, T> {
    /// A view of `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` points to `len` initialised `T` in memory this thread may read and write, that nothing else
    /// reads or writes while the launch runs except the other threads of this launch through their own
    /// `Out` of the same memory (each reaching only its own elements), and the launch's thread indices
    /// ([`gpu::global_linear_id`]) are distinct (the host's launcher checks that the thread count fits in
    /// a `u64`).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, len: u64) -> Self {
        Out {
            ptr,
            len,
            _data: PhantomData,
        }
    }

    /// Number of elements (of all threads).
    #[inline(always)]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are none.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// This thread's element: the one at its [`gpu::global_linear_id`], `None` past the end (the bounds
    /// check before the store).
    #[inline(always)]
    pub fn mine(&mut self) -> Option<&mut T> {
        let i = gpu::global_linear_id();
        self.slot(i)
    }

    /// Call `f(i, &mut element_i)` for each of this thread's elements in a grid-stride loop
    /// ([`gpu::grid_stride`]): `i = global_linear_id() + k * grid_threads()` below `len()`.
    #[inline(always)]
    pub fn for_each_mine(&mut self, mut f: impl FnMut(u64, &mut T)) {
        for i in gpu::grid_stride(self.len) {
            if let Some(slot) = self.slot(i) {
                f(i, slot);
            }
        }
    }

    /// Element `i` when `i < len()`: private, as `i` must be this thread's.
    #[inline(always)]
    fn slot(&mut self, i: u64) -> Option<&mut T> {
        if i < self.len {
            // SAFETY: i < len, and `from_raw_parts`' contract gives this thread element `i` (its own
            // index, or its grid-stride share: distinct from every other thread's) for reading and
            // writing; the &mut borrows `self`, so this thread holds one at a time.
            Some(unsafe { &mut *self.ptr.add(i as usize) })
        } else {
            None
        }
    }
}

/// A kernel's output cut in chunks of `N` contiguous elements: chunk `c` (elements `c N .. (c + 1) N`,
/// the last one shorter) belongs to the thread whose [`gpu::global_linear_id`] is `c` modulo
/// [`gpu::grid_threads`]: [`mine`](OutChunk::mine) is chunk `global_linear_id()`,
/// [`for_each_mine`](OutChunk::for_each_mine) its grid-stride share of chunks. `N` is part of the type
/// (of the kernel's signature), so every thread cuts the same chunks: no two threads reach one element.
///
/// ```ignore
/// #[kernel]
/// pub fn scale4(x: In<f32>, mut y: OutChunk<f32, 4>) {
///     y.for_each_mine(|first, chunk| {
///         for (k, e) in chunk.iter_mut().enumerate() {
///             *e *= x.get(first + k as u64).unwrap_or(0.0);
///         }
///     });
/// }
/// ```
pub struct OutChunk<'a, T: DeviceValue, const N: usize> {
    ptr: *mut T,
    len: u64,
    _data: PhantomData<&'a mut [T]>,
}

impl<T: DeviceValue, const N: usize> OutChunk<'_, T, N> {
    /// A view of `len` elements at `ptr`, in chunks of `N`.
    ///
    /// # Safety
    /// As [`Out::from_raw_parts`], and `N > 0` (the macro refuses `OutChunk<T, 0>`).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, len: u64) -> Self {
        OutChunk {
            ptr,
            len,
            _data: PhantomData,
        }
    }

    /// Number of elements (of all threads).
    #[inline(always)]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are none.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// This thread's chunk (number [`gpu::global_linear_id`]) and the index of its first element;
    /// `None` when it starts past the end. The last chunk may be shorter than `N`.
    #[inline(always)]
    pub fn mine(&mut self) -> Option<(u64, &mut [T])> {
        let c = gpu::global_linear_id();
        self.chunk(c)
    }

    /// `f(first_index, chunk)` for each of this thread's chunks, in a grid-stride loop over chunk numbers
    /// (`global_linear_id() + k * grid_threads()`).
    #[inline(always)]
    pub fn for_each_mine(&mut self, mut f: impl FnMut(u64, &mut [T])) {
        let chunks = self.len.div_ceil(N as u64);
        for c in gpu::grid_stride(chunks) {
            if let Some((first, chunk)) = self.chunk(c) {
                f(first, chunk);
            }
        }
    }

    /// Chunk `c` when it starts below `len()`: private, as `c` must be this thread's.
    #[inline(always)]
    fn chunk(&mut self, c: u64) -> Option<(u64, &mut [T])> {
        let (first, n) = chunk_range(c, N as u64, self.len)?;
        // SAFETY: first + n <= len, and `from_raw_parts`' contract gives this thread chunk `c` (its own
        // index, or its grid-stride share of chunks: distinct from every other thread's, all threads
        // cutting chunks of the same N) for reading and writing; the &mut borrows `self`.
        Some((first, unsafe {
            core::slice::from_raw_parts_mut(self.ptr.add(first as usize), n as usize)
        }))
    }
}

/// A kernel's output with `N` elements per block: block [`gpu::block_linear_id`] `b` owns elements
/// `b N .. (b + 1) N`, and the thread of index `t < N` in the block ([`gpu::thread_linear_id_in_block`])
/// the element `b N + t` ([`mine`](OutBlock::mine)). For per-block results: a reduction's partial sums
/// (`N = 1`, written by the block's first thread).
pub struct OutBlock<'a, T: DeviceValue, const N: usize = 1> {
    ptr: *mut T,
    len: u64,
    _data: PhantomData<&'a mut [T]>,
}

impl<T: DeviceValue, const N: usize> OutBlock<'_, T, N> {
    /// A view of `len` elements at `ptr`, `N` per block.
    ///
    /// # Safety
    /// As [`Out::from_raw_parts`]; the launch's blocks have distinct [`gpu::block_linear_id`]s and its
    /// threads distinct indices in their block (both hold for every grid).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, len: u64) -> Self {
        OutBlock {
            ptr,
            len,
            _data: PhantomData,
        }
    }

    /// Number of elements (of all blocks).
    #[inline(always)]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are none.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// This thread's element, `b N + t`: `None` for a thread `t >= N` or past the end.
    #[inline(always)]
    pub fn mine(&mut self) -> Option<&mut T> {
        let t = u64::from(gpu::thread_linear_id_in_block());
        let i = block_element(gpu::block_linear_id(), t, N as u64, self.len)?;
        // SAFETY: i < len; element b N + t with t < N is this thread's alone (blocks and threads in a
        // block have distinct indices); the &mut borrows self.
        Some(unsafe { &mut *self.ptr.add(i as usize) })
    }
}

/// A kernel's output as a row-major matrix whose row length (`cols`) the host passes with the buffer:
/// the thread at global position `(x, y)` ([`gpu::global_id_x`], [`gpu::global_id_y`]; `z` 0) owns the
/// element at row `y`, column `x`, index `y * cols + x`, when `x < cols` and the index is below
/// `len()`. One `cols` for the whole launch (an argument, not something a thread chooses), so no two
/// threads reach one element.
pub struct Out2d<'a, T: DeviceValue> {
    ptr: *mut T,
    len: u64,
    cols: u64,
    _data: PhantomData<&'a mut [T]>,
}

impl<T: DeviceValue> Out2d<'_, T> {
    /// A view of `len` elements at `ptr`, rows of `cols`.
    ///
    /// # Safety
    /// As [`Out::from_raw_parts`], with `cols` the same in every thread of the launch.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, len: u64, cols: u64) -> Self {
        Out2d {
            ptr,
            len,
            cols,
            _data: PhantomData,
        }
    }

    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are none.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Elements per row (the host's argument).
    #[inline(always)]
    pub fn cols(&self) -> u64 {
        self.cols
    }

    /// This thread's element, row [`gpu::global_id_y`], column [`gpu::global_id_x`]; `None` for a
    /// thread with `z > 0`, a column past `cols()` or an index past the end.
    #[inline(always)]
    pub fn mine(&mut self) -> Option<&mut T> {
        let (x, y, z) = (gpu::global_id_x(), gpu::global_id_y(), gpu::global_id_z());
        let i = cell(x, y, z, self.cols, self.len)?;
        // SAFETY: i < len; (y, x) with x < cols maps to y cols + x for this thread alone (z = 0
        // threads have distinct (x, y)); the &mut borrows self.
        Some(unsafe { &mut *self.ptr.add(i as usize) })
    }
}

/// Chunk `c` of `n`-element chunks over `len` elements: its first index and its length, `None` when it
/// starts at or past `len` (or its start overflows).
#[inline(always)]
fn chunk_range(c: u64, n: u64, len: u64) -> Option<(u64, u64)> {
    let first = c.checked_mul(n)?;
    (first < len).then(|| (first, (len - first).min(n)))
}

/// The element of thread `t` of block `b` in an `OutBlock` of `n` per block over `len`.
#[inline(always)]
fn block_element(b: u64, t: u64, n: u64, len: u64) -> Option<u64> {
    if t >= n {
        return None;
    }
    let i = b.checked_mul(n)?.checked_add(t)?;
    (i < len).then_some(i)
}

/// The element of the thread at global `(x, y, z)` in an `Out2d` of rows of `cols` over `len`.
#[inline(always)]
fn cell(x: u64, y: u64, z: u64, cols: u64, len: u64) -> Option<u64> {
    if z != 0 || x >= cols {
        return None;
    }
    let i = y.checked_mul(cols)?.checked_add(x)?;
    (i < len).then_some(i)
}

#[cfg(test)]
mod tests {
    //! The partitions the output types promise, checked over every thread of small launches: each
    //! element reached by exactly one thread.
    extern crate std;
    use crate::gpu::GridStride;
    use std::{vec, vec::Vec};

    #[test]
    fn input_sub_views_are_checked_once_against_the_input() {
        // A 3 x 4 row-major matrix in host memory standing in for an input buffer.
        let m: Vec<f32> = (0..12).map(|i| i as f32).collect();
        // SAFETY: 12 readable f32 that nothing writes while the view lives.
        let a = unsafe { super::In::from_raw_parts(m.as_ptr(), 12) };
        let row = a.slice(4, 4).unwrap();
        assert_eq!(
            (row.len(), row.get(0), row.get(3), row.get(4)),
            (4, Some(4.0), Some(7.0), None)
        );
        assert!(a.slice(9, 4).is_none()); // one past the end
        assert!(a.slice(12, 0).is_some_and(|v| v.is_empty()));
        assert!(a.slice(u64::MAX, 2).is_none()); // start + len overflows
        let col = a.strided(2, 4, 3).unwrap();
        assert_eq!(col.iter().collect::<Vec<_>>(), [2.0, 6.0, 10.0]);
        assert_eq!(col.get(3), None);
        assert!(a.strided(4, 4, 3).is_none()); // 4, 8, 12: one past the end
        assert!(a.strided(1, u64::MAX, 2).is_none()); // the offset overflows

        // The or-empty forms: the same views where they fit, empty ones (no element) where not.
        let row = a.slice_or_empty(8, 4);
        assert_eq!(
            (row.len(), row.get(0), row.get(3)),
            (4, Some(8.0), Some(11.0))
        );
        for (start, len) in [(9, 4), (u64::MAX, 2), (13, 0)] {
            let v = a.slice_or_empty(start, len);
            assert_eq!((v.len(), v.get(0)), (0, None), "{start} {len}");
        }
        let col = a.strided_or_empty(3, 4, 3);
        assert_eq!(col.iter().collect::<Vec<_>>(), [3.0, 7.0, 11.0]);
        for (start, stride, count) in [(4, 4, 3), (1, u64::MAX, 2)] {
            let v = a.strided_or_empty(start, stride, count);
            assert_eq!((v.len(), v.get(0)), (0, None), "{start} {stride} {count}");
        }
    }

    /// How many threads of a launch of `threads` reach each element (grid-stride over chunks).
    fn chunk_owners(threads: u64, n: u64, len: u64) -> Vec<u8> {
        let mut seen = vec![0u8; len as usize];
        for g in 0..threads {
            for c in GridStride::new(g, threads, len.div_ceil(n)) {
                let (first, k) = super::chunk_range(c, n, len).unwrap();
                for i in first..first + k {
                    seen[i as usize] += 1;
                }
            }
        }
        seen
    }

    #[test]
    fn out_chunk_reaches_each_element_once_for_any_thread_count() {
        for (threads, n, len) in [
            (3, 4, 50),
            (64, 4, 1000),
            (1, 7, 13),
            (100, 3, 10),
            (5, 1, 5),
        ] {
            assert_eq!(
                chunk_owners(threads, n, len),
                vec![1; len as usize],
                "{threads} {n} {len}"
            );
        }
        assert_eq!(super::chunk_range(3, 4, 12), None);
        assert_eq!(super::chunk_range(2, 4, 10), Some((8, 2)));
        assert_eq!(super::chunk_range(u64::MAX / 2, 4, u64::MAX), None); // the start overflows
    }

    #[test]
    fn out_block_gives_each_block_its_own_elements() {
        let (blocks, threads, n, len) = (7u64, 32u64, 3u64, 20u64);
        let mut seen = vec![0u8; len as usize];
        for b in 0..blocks {
            for t in 0..threads {
                if let Some(i) = super::block_element(b, t, n, len) {
                    assert_eq!(i / n, b);
                    seen[i as usize] += 1;
                }
            }
        }
        assert_eq!(seen, vec![1; len as usize]);
        assert_eq!(super::block_element(u64::MAX, 1, 2, u64::MAX), None);
    }

    #[test]
    fn out_2d_maps_each_thread_to_its_own_cell_and_ignores_z() {
        let (cols, rows) = (5u64, 3u64);
        let len = cols * rows;
        let mut seen = vec![0u8; len as usize];
        // A grid wider and taller than the matrix, and two layers in z.
        for z in 0..2 {
            for y in 0..8 {
                for x in 0..8 {
                    if let Some(i) = super::cell(x, y, z, cols, len) {
                        assert_eq!((z, i / cols, i % cols), (0, y, x));
                        seen[i as usize] += 1;
                    }
                }
            }
        }
        assert_eq!(seen, vec![1; len as usize]);
        assert_eq!(super::cell(0, u64::MAX, 0, 2, u64::MAX), None);
    }
}
