//! The parameter types of a `#[kernel]` function (`hiprs-kernel-macros`): [`In`], a read-only view whose
//! every read is checked, and [`Out`], whose writes are disjoint by construction (a thread reaches only
//! the elements its 64-bit global index gives it).
//!
//! Neither can be built outside `unsafe` ([`In::from_raw_parts`], [`Out::from_raw_parts`], which only the
//! macro's generated entry point calls): a kernel body, compiled under `forbid(unsafe_code)`, receives
//! them and can do nothing with them that reads out of bounds or writes another thread's element.

use crate::gpu;
use core::marker::PhantomData;

mod sealed {
    pub trait Sealed {}
}

/// An element type a kernel may read and write through [`In`] and [`Out`], or take by value: the
/// primitive numbers, for which every bit pattern is a value (so reading device memory is never
/// undefined behaviour) and whose layout the host and the device agree on.
pub trait DeviceValue: Copy + sealed::Sealed + 'static {}

macro_rules! device_values {
    ($($t:ty),*) => { $(impl sealed::Sealed for $t {} impl DeviceValue for $t {})* };
}
device_values!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);

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
