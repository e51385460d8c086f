//! Block-shared memory (LDS on AMD, `.shared` on NVIDIA) for a `#[kernel]`: a handle whose type says
//! which phase the block is in, with the barrier between phases in the API.
//!
//! - [`Shared<T, K>`](Shared) is a **write phase**: each thread reaches only its own `K` slots, the
//!   slots `t, t + B, .., t + (K - 1) B` for the thread's index `t` in its block of `B` threads
//!   ([`mine`](Shared::mine), [`for_each_mine`](Shared::for_each_mine)). No two threads reach one slot.
//! - [`sync`](Shared::sync) consumes it at a block barrier and gives a [`SharedRead`]: a **read phase**,
//!   where every thread reads any slot ([`get`](SharedRead::get), `[]`, checked against `K * B`) and
//!   none writes. Its `sync` gives the next write phase.
//!
//! Why no race is reachable from a safe body: the handles are neither `Clone` nor `Copy` and `sync` takes
//! `self`, so a thread's handle is in phase `p` exactly when it has passed `p` barriers, writes in even
//! phases and only reads in odd ones; a kernel has at most one `Shared` (the macro refuses two) and no
//! other barrier (`gpu::sync_threads` is `unsafe`). The barrier ([`crate::gpu`]'s `shared_barrier`) makes
//! the n-th barrier of every thread the same event, or stops the kernel: so a thread in phase `q` runs
//! only after every other thread still alive has finished its phases before `q`, and threads running at
//! once are in the same phase, where they either each write their own slots or all only read.
//! What is assumed, not proved by Rust's types: the barrier and its fences order shared memory between
//! the threads of a block (the GPU memory model; Rust's has no block scope), and the launch gave at least
//! `K * B * size_of::<T>()` bytes of dynamic shared memory (the host's generated launcher checks it).

use crate::gpu;
use crate::value::DeviceValue;
use core::marker::PhantomData;

/// A write phase of the block's shared memory: `K * B` slots of `T` (`B` threads in the block), of which
/// this thread reaches only its own `K`. See the module documentation.
///
/// ```ignore
/// #[kernel]
/// pub fn reverse_in_block(x: In<u32>, mut y: Out<u32>, mut tile: Shared<u32>) {
///     let (t, b) = (u64::from(gpu::thread_linear_id_in_block()), u64::from(gpu::block_threads()));
///     if let Some(slot) = tile.mine(0) {
///         *slot = x.get(gpu::global_linear_id()).unwrap_or(0);
///     }
///     let tile = tile.sync(); // every thread of the block, here: the slots are read-only from now on
///     if let Some(y_i) = y.mine() {
///         *y_i = tile.get(b - 1 - t).unwrap_or(0);
///     }
/// }
/// ```
pub struct Shared<'a, T: DeviceValue, const K: usize = 1> {
    ptr: *mut T,
    me: u64,
    threads: u64,
    _data: PhantomData<&'a mut [T]>,
}

/// A read phase of the block's shared memory (after [`Shared::sync`]): every slot readable, none
/// writable, until [`sync`](SharedRead::sync) starts the next write phase.
pub struct SharedRead<'a, T: DeviceValue, const K: usize = 1> {
    ptr: *mut T,
    me: u64,
    threads: u64,
    _data: PhantomData<&'a mut [T]>,
}

/// The block's dynamic shared memory (`LaunchConfig::shared_mem_bytes`), aligned for `T`.
///
/// # Safety
/// Called once per kernel, by the `#[kernel]` entry point, to build its one [`Shared`].
#[doc(hidden)]
#[inline(always)]
pub unsafe fn launch_sized_shared<T: DeviceValue>() -> *mut T {
    #[cfg(any(target_arch = "amdgpu", target_arch = "nvptx64"))]
    return core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>();
    #[cfg(not(any(target_arch = "amdgpu", target_arch = "nvptx64")))]
    panic!("shared memory exists only on the GPU")
}

impl<'a, T: DeviceValue, const K: usize> Shared<'a, T, K> {
    /// The first write phase over the block's shared memory at `ptr`, this thread's slots zeroed (so a
    /// read phase never reads memory no thread wrote).
    ///
    /// # Safety
    /// `ptr` points to at least `K * B` `T` of this block's shared memory (`B` its threads), used by
    /// nothing else in the kernel; every thread of the block makes its own `Shared` of the same `ptr` and
    /// `K` once, at the kernel's start; nothing passes a block barrier other than through these handles.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T) -> Self {
        let mut s = Shared {
            ptr,
            me: u64::from(gpu::thread_linear_id_in_block()),
            threads: u64::from(gpu::block_threads()),
            _data: PhantomData,
        };
        // SAFETY: every DeviceValue is plain data for which all-zero bits is a value.
        let zero: T = unsafe { core::mem::zeroed() };
        s.for_each_mine(|_, slot| *slot = zero);
        s
    }

    /// Slots in the block (`K * B`), all threads' together.
    #[inline(always)]
    pub fn len(&self) -> u64 {
        K as u64 * self.threads
    }

    /// Whether there are none (never, in a launch: a block has threads).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// This thread's `k`-th slot, `t + k * B` (`None` for `k >= K`). Its value is what this thread last
    /// wrote there (zero at first).
    #[inline(always)]
    pub fn mine(&mut self, k: usize) -> Option<&mut T> {
        if k < K {
            let slot = self
                .ptr
                .wrapping_add((self.me + k as u64 * self.threads) as usize);
            // SAFETY: a generic address of shared memory is never 0 on either target (NVIDIA's and AMD's
            // shared-memory windows of the generic address space start above it). Said to the compiler,
            // which cannot see it through the address-space cast: the caller's `if let Some(slot)` is
            // then no test of the pointer (a compare and a branch in each tile load of the typed matmul).
            unsafe { core::hint::assert_unchecked(!slot.is_null()) };
            // SAFETY: k < K, so t + k B < K B: inside the block's slots (from_raw_parts' contract), and
            // this thread's own (no other thread reaches t + k B in a write phase); the &mut borrows
            // self, so this thread holds one at a time.
            Some(unsafe { &mut *slot })
        } else {
            None
        }
    }

    /// `f(slot_index, &mut slot)` for each of this thread's `K` slots.
    #[inline(always)]
    pub fn for_each_mine(&mut self, mut f: impl FnMut(u64, &mut T)) {
        for k in 0..K {
            let index = self.me + k as u64 * self.threads;
            if let Some(slot) = self.mine(k) {
                f(index, slot);
            }
        }
    }

    /// Wait for every thread of the block, then read: the writes of this phase are visible to all.
    ///
    /// On AMD, a wavefront some of whose threads are not here (divergent code, an early return) stops
    /// the kernel; on NVIDIA, a thread waits for every other thread of its block (one that never comes
    /// is waited for, a hang, not a race).
    #[inline(always)]
    #[must_use = "the read phase is the only way to read the block's slots"]
    pub fn sync(self) -> SharedRead<'a, T, K> {
        gpu::shared_barrier();
        SharedRead {
            ptr: self.ptr,
            me: self.me,
            threads: self.threads,
            _data: PhantomData,
        }
    }
}

impl<'a, T: DeviceValue, const K: usize> SharedRead<'a, T, K> {
    /// Slots in the block (`K * B`).
    #[inline(always)]
    pub fn len(&self) -> u64 {
        K as u64 * self.threads
    }

    /// Whether there are none (never, in a launch).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slot `j`, or `None` when `j >= len()`.
    #[inline(always)]
    pub fn get(&self, j: u64) -> Option<T> {
        if j < self.len() {
            // SAFETY: j < K B: inside the block's slots; a read phase: no thread writes any slot until
            // every thread has passed the next barrier, which this one has not.
            Some(unsafe { self.ptr.add(j as usize).read() })
        } else {
            None
        }
    }

    /// Slots `start .. start + len` as a slice (`None` unless `start + len <= self.len()`), checked once
    /// here: reading it costs no check per element. It borrows this read phase, so the phase's
    /// [`sync`](SharedRead::sync) cannot run while the slice lives (no thread writes what it reads).
    ///
    /// ```ignore
    /// let tile = tiles.sync();
    /// if let Some(row) = tile.slice(ty * t, t) {
    ///     acc = row.iter().sum::<f32>();
    /// }
    /// let tiles = tile.sync(); // `row` is gone: its borrow ends before the next write phase
    /// ```
    #[inline(always)]
    pub fn slice(&self, start: u64, len: u64) -> Option<&[T]> {
        let end = start.checked_add(len)?;
        if end <= self.len() {
            // SAFETY: start + len <= K B: inside the block's slots (from_raw_parts' contract: they exist,
            // so their count and size fit a usize and an isize); read-only until the next barrier, which
            // `sync(self)` cannot reach while this borrow of `self` lives.
            Some(unsafe { core::slice::from_raw_parts(self.ptr.add(start as usize), len as usize) })
        } else {
            None
        }
    }

    /// The `count` slots `start, start + stride, .., start + (count - 1) stride` (a column of a row-major
    /// tile, for `stride` its row length), or `None` unless the last of them is below `self.len()`
    /// (computed without overflow; with `count == 0`, unless `start <= self.len()`). Checked once here:
    /// reading its elements costs no check each. Borrows this read phase, as [`slice`](SharedRead::slice).
    ///
    /// ```ignore
    /// let (row, col) = (tile.slice(ty * t, t), tile.strided(t * t + tx, t, t));
    /// if let (Some(row), Some(col)) = (row, col) {
    ///     for (x, y) in row.iter().zip(col) {
    ///         acc += x * y;
    ///     }
    /// }
    /// ```
    #[inline(always)]
    pub fn strided(&self, start: u64, stride: u64, count: u64) -> Option<Strided<'_, T>> {
        // strided_fits (in `checked`): start <= K B, and every element of the view is a slot of this
        // phase, read-only while the view borrows it.
        Strided::checked(self.ptr, start, stride, count, self.len())
    }

    /// [`strided`](SharedRead::strided), with an empty view (no element: every
    /// [`get`](Strided::get) is `None`) where it does not fit, instead of `None`.
    ///
    /// For inner loops: the view's stride is `stride` whichever way the check went, where an `Option`
    /// makes the compiler carry it as a per-thread choice. On NVIDIA a stride that is the same in every
    /// thread (a tile's row length) then stays in a uniform register and each read of the column is one
    /// shared load; through `strided`, each read cost one more integer instruction (the typed matmul of
    /// 16 x 16 tiles ran at 1.35x its unchecked twin, 2026-12-06).
    ///
    /// ```ignore
    /// let col = tile.strided_or_empty(t * t + tx, t, t);
    /// if let Some(row) = tile.slice(ty * t, t) {
    ///     for j in 0..row.len().min(col.len() as usize) {
    ///         acc += row[j] * col.get(j as u64).unwrap_or(0.0);
    ///     }
    /// }
    /// ```
    #[inline(always)]
    pub fn strided_or_empty(&self, start: u64, stride: u64, count: u64) -> Strided<'_, T> {
        // or_empty: the view's elements are slots of this phase (read-only while it borrows it), or
        // there are none.
        Strided::or_empty(self.ptr, start, stride, count, self.len())
    }

    /// Wait for every thread of the block (all reads of this phase done), then write this thread's slots
    /// again.
    #[inline(always)]
    #[must_use = "the next write phase is the only way to write the block's slots"]
    pub fn sync(self) -> Shared<'a, T, K> {
        gpu::shared_barrier();
        Shared {
            ptr: self.ptr,
            me: self.me,
            threads: self.threads,
            _data: PhantomData,
        }
    }
}

impl<T: DeviceValue, const K: usize> core::ops::Index<u64> for SharedRead<'_, T, K> {
    type Output = T;
    /// Slot `j`; past the end the kernel stops (a panic).
    #[inline(always)]
    fn index(&self, j: u64) -> &T {
        assert!(j < self.len(), "shared slot out of bounds");
        // SAFETY: as in `get`; the reference borrows this read phase, which `sync` consumes.
        unsafe { &*self.ptr.add(j as usize) }
    }
}

/// A read-only view of `count` elements `stride` apart, of a shared-memory read phase
/// ([`SharedRead::strided`]) or of an input ([`In::strided`](crate::device::In::strided)): bounds checked
/// once, when it was made, so [`iter`](Strided::iter) reads every element with no check and
/// [`get`](Strided::get) checks only `i < len()`. It borrows what it came from (a read phase's `sync`
/// waits until it is gone).
#[derive(Clone, Copy)]
pub struct Strided<'r, T: DeviceValue> {
    // Invariant: for every i < count, ptr + i * stride is an element this view borrows, read-only for 'r.
    ptr: *const T,
    stride: usize,
    count: usize,
    _data: PhantomData<&'r [T]>,
}

/// Whether `count` elements `stride` apart from `start` lie below `len` (computed without overflow; with
/// `count == 0`, whether `start <= len`).
#[inline(always)]
pub(crate) fn strided_fits(start: u64, stride: u64, count: u64, len: u64) -> bool {
    match count.checked_sub(1) {
        None => start <= len,
        Some(last) => last
            .checked_mul(stride)
            .and_then(|offset| offset.checked_add(start))
            .is_some_and(|end| end < len),
    }
}

impl<'r, T: DeviceValue> Strided<'r, T> {
    /// The view of `count` elements `stride` apart from `base + start`, if [`strided_fits`] them below
    /// `len`.
    ///
    /// The view is built before the check, its pointer with `wrapping_add`, so a refused view never
    /// makes an out-of-bounds pointer; only the `Some` carries the invariant below. Building it in both
    /// outcomes does not by itself keep the stride uniform in a loop: LLVM still carried the fields of
    /// the returned `Option` around the typed matmul's k loop as per-thread selects (its PTX, 2026-12-06).
    /// Inner loops that need a uniform stride use [`SharedRead::strided_or_empty`], which returns no
    /// `Option`.
    ///
    /// Not `unsafe`: `Some` only where every `base + start + i * stride` (`i < count`) is below
    /// `base + len`, which the caller's `base .. base + len` makes readable and unwritten for `'r`.
    #[inline(always)]
    pub(crate) fn checked(
        base: *const T,
        start: u64,
        stride: u64,
        count: u64,
        len: u64,
    ) -> Option<Self> {
        let view = Strided {
            ptr: base.wrapping_add(start as usize),
            stride: stride as usize,
            count: count as usize,
            _data: PhantomData,
        };
        if strided_fits(start, stride, count, len) {
            Some(view)
        } else {
            None
        }
    }

    /// The view of `count` elements `stride` apart from `base + start` if [`strided_fits`] them below
    /// `len`, else an empty view (count 0) with the same stride: no `Option`, so a loop over it keeps the
    /// stride the same in every thread.
    ///
    /// Not `unsafe`, as [`checked`](Strided::checked): elements only where they fit, and a refused view
    /// has none (its pointer, `base`, is never read).
    #[inline(always)]
    pub(crate) fn or_empty(base: *const T, start: u64, stride: u64, count: u64, len: u64) -> Self {
        let fits = strided_fits(start, stride, count, len);
        Strided {
            ptr: base.wrapping_add(if fits { start as usize } else { 0 }),
            stride: stride as usize,
            count: if fits { count as usize } else { 0 },
            _data: PhantomData,
        }
    }

    /// How many elements the view has (its `count`).
    #[inline(always)]
    pub fn len(&self) -> u64 {
        self.count as u64
    }

    /// Whether it has none.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Element `i` (element `start + i * stride` of what it views), or `None` when `i >= len()`.
    #[inline(always)]
    pub fn get(&self, i: u64) -> Option<T> {
        if i < self.count as u64 {
            // SAFETY: i < count: the struct's invariant makes ptr + i stride an element it borrows.
            Some(unsafe { self.ptr.add(i as usize * self.stride).read() })
        } else {
            None
        }
    }

    /// The elements in order, each read without a check (the view's were made once).
    #[inline(always)]
    pub fn iter(&self) -> StridedIter<'r, T> {
        StridedIter {
            view: *self,
            next: 0,
        }
    }
}

impl<'r, T: DeviceValue> IntoIterator for Strided<'r, T> {
    type Item = T;
    type IntoIter = StridedIter<'r, T>;
    #[inline(always)]
    fn into_iter(self) -> StridedIter<'r, T> {
        self.iter()
    }
}

/// The elements of a [`Strided`] view, by value, in order.
#[derive(Clone)]
pub struct StridedIter<'r, T: DeviceValue> {
    view: Strided<'r, T>,
    next: usize,
}

impl<T: DeviceValue> Iterator for StridedIter<'_, T> {
    type Item = T;
    #[inline(always)]
    fn next(&mut self) -> Option<T> {
        let i = self.next;
        if i < self.view.count {
            self.next = i + 1;
            // SAFETY: i < count: the view's invariant makes ptr + i stride an element it borrows.
            Some(unsafe { self.view.ptr.add(i * self.view.stride).read() })
        } else {
            None
        }
    }

    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.view.count - self.next;
        (left, Some(left))
    }
}

impl<T: DeviceValue> ExactSizeIterator for StridedIter<'_, T> {}

#[cfg(test)]
mod tests {
    //! The read views' bounds, on host memory standing in for a block's slots (2 per thread, 6 threads).
    extern crate std;
    use super::SharedRead;
    use core::marker::PhantomData;
    use std::vec::Vec;

    fn phase(slots: &mut [f32]) -> SharedRead<'_, f32, 2> {
        SharedRead {
            ptr: slots.as_mut_ptr(),
            me: 0,
            threads: slots.len() as u64 / 2,
            _data: PhantomData,
        }
    }

    #[test]
    fn slice_is_checked_once_against_the_block_slots() {
        let mut slots: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let read = phase(&mut slots);
        assert_eq!(read.slice(3, 4), Some(&[3.0, 4.0, 5.0, 6.0][..]));
        assert_eq!(read.slice(0, 12).map(<[f32]>::len), Some(12));
        assert_eq!(read.slice(12, 0), Some(&[][..]));
        assert_eq!(read.slice(9, 4), None); // one past the end
        assert_eq!(read.slice(13, 0), None);
        assert_eq!(read.slice(u64::MAX, 2), None); // start + len overflows
    }

    #[test]
    fn strided_reaches_only_slots_of_the_block() {
        let mut slots: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let read = phase(&mut slots);
        // A column of a 3 x 4 row-major tile.
        let col = read.strided(1, 4, 3).unwrap();
        assert_eq!(col.iter().collect::<Vec<_>>(), [1.0, 5.0, 9.0]);
        assert_eq!((col.len(), col.get(2), col.get(3)), (3, Some(9.0), None));
        assert_eq!(read.strided(11, 0, 5).unwrap().iter().count(), 5); // stride 0: one slot, 5 times
        assert!(read.strided(3, 4, 3).is_some()); // 3, 7, 11: the last slot
        assert!(read.strided(4, 4, 3).is_none()); // 4, 8, 12: one past the end
        assert!(read.strided(12, 1, 0).is_some_and(|v| v.is_empty()));
        assert!(read.strided(13, 1, 0).is_none());
        assert!(read.strided(1, u64::MAX, 2).is_none()); // the offset overflows
        assert!(read.strided(u64::MAX, 1, 1).is_none()); // start + offset overflows
        assert_eq!(
            read.strided(0, 3, 4).unwrap().iter().size_hint(),
            (4, Some(4))
        );
    }

    #[test]
    fn strided_or_empty_is_strided_where_it_fits_and_reads_nothing_where_not() {
        let mut slots: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let read = phase(&mut slots);
        for (start, stride, count) in [
            (1, 4, 3),
            (3, 4, 3),
            (11, 0, 5),
            (12, 1, 0),
            (4, 4, 3),
            (13, 1, 0),
            (1, u64::MAX, 2),
            (u64::MAX, 1, 1),
        ] {
            let empty = read.strided_or_empty(start, stride, count);
            match read.strided(start, stride, count) {
                Some(view) => {
                    assert_eq!(empty.len(), view.len(), "{start} {stride} {count}");
                    assert!(empty.iter().eq(view.iter()), "{start} {stride} {count}");
                }
                None => {
                    assert!(empty.is_empty(), "{start} {stride} {count}");
                    assert_eq!((empty.get(0), empty.iter().next()), (None, None));
                }
            }
        }
    }
}
