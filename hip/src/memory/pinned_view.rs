//! Views of pinned host memory ([`PinnedBuffer::slice`], [`PinnedBuffer::slice_mut`],
//! [`PinnedBuffer::split_at_mut`]) and the traits the asynchronous copies take ([`HostMemory`],
//! [`HostMemoryMut`]), so that a chunked pipeline copies parts of one pinned buffer.
//!
//! A view is tracked as its buffer is: a copy through a view records its stream on the whole buffer, and
//! the host reads or writes through any view only after the copies that conflict with that access, on
//! any part of the buffer, are done (the wait is for the whole buffer: cheap to track, never too short).

use super::tracking::{Access, Allocation};
use super::{bounds, sealed, DeviceCopy, PinnedBuffer};
use crate::device::Device;
use crate::error::Result;
use std::marker::PhantomData;
use std::ops::RangeBounds;
use std::sync::Arc;

/// Pinned host memory holding [`len`](HostMemory::len) values of `T`: a whole [`PinnedBuffer`] or a view
/// of one. Asynchronous copies to the device read it.
///
/// Sealed: only this crate's types implement it, so its pointer and length are always right.
pub trait HostMemory<T: DeviceCopy>: sealed::Sealed {
    /// Number of elements.
    fn len(&self) -> usize;
    /// The device whose streams copy to and from this memory.
    fn device(&self) -> &Device;
    /// The host address of the first element (never null; dangling when empty).
    #[doc(hidden)]
    fn host_ptr(&self) -> *const T;
    /// The allocation this memory belongs to (a view's is its buffer's).
    #[doc(hidden)]
    fn allocation(&self) -> &Arc<Allocation>;

    /// Whether there are no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Pinned host memory that may be written: a whole [`PinnedBuffer`] or a mutable view of one.
/// Asynchronous copies from the device write it.
pub trait HostMemoryMut<T: DeviceCopy>: HostMemory<T> {
    /// The host address of the first element, for writing.
    #[doc(hidden)]
    fn host_mut_ptr(&mut self) -> *mut T;
}

/// A read-only view of part of a [`PinnedBuffer`].
#[derive(Debug)]
pub struct PinnedSlice<'a, T: DeviceCopy> {
    ptr: *const T,
    len: usize,
    alloc: &'a Arc<Allocation>,
    _borrow: PhantomData<&'a [T]>,
}

/// A writable view of part of a [`PinnedBuffer`]; [`PinnedBuffer::split_at_mut`] gives two that do not
/// overlap.
#[derive(Debug)]
pub struct PinnedSliceMut<'a, T: DeviceCopy> {
    ptr: *mut T,
    len: usize,
    alloc: &'a Arc<Allocation>,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: a PinnedSlice is a shared borrow of `len` T (Sync plain data) in pinned memory that its
// buffer keeps alive for 'a, like `&'a [T]`; the allocation handle is Send + Sync.
unsafe impl<T: DeviceCopy> Send for PinnedSlice<'_, T> {}
// SAFETY: as for Send: `&PinnedSlice` only reads (after the writers are done) and queues reads.
unsafe impl<T: DeviceCopy> Sync for PinnedSlice<'_, T> {}
// SAFETY: a PinnedSliceMut is an exclusive borrow of `len` T, like `&'a mut [T]`: moving it to another
// thread moves that exclusive access.
unsafe impl<T: DeviceCopy> Send for PinnedSliceMut<'_, T> {}
// SAFETY: `&PinnedSliceMut` only reads (after the writers are done) and queues reads; writes need `&mut`.
unsafe impl<T: DeviceCopy> Sync for PinnedSliceMut<'_, T> {}

impl<T: DeviceCopy> PinnedBuffer<T> {
    /// A read-only view of `range` ([`Error::OutOfBounds`](crate::Error::OutOfBounds) past the end).
    ///
    /// # Errors
    ///
    /// [`Error::OutOfBounds`](crate::Error::OutOfBounds) for a range that does not fit in the buffer or
    /// whose start is past its end.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, host: &PinnedBuffer<f32>, x: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// // Upload the first half of `host` into `x`.
    /// stream.copy_from_host_async(&host.slice(..host.len() / 2)?, x)?;
    /// # Ok(()) }
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<PinnedSlice<'_, T>> {
        let (start, end) = bounds(range, self.len())?;
        Ok(PinnedSlice {
            // SAFETY: start <= end <= len: the offset stays inside the allocation (or is 0 when empty).
            ptr: unsafe { self.host_ptr().add(start) },
            len: end - start,
            alloc: self.allocation(),
            _borrow: PhantomData,
        })
    }

    /// A writable view of `range` ([`Error::OutOfBounds`](crate::Error::OutOfBounds) past the end).
    ///
    /// # Errors
    ///
    /// [`Error::OutOfBounds`](crate::Error::OutOfBounds) for a range that does not fit in the buffer or
    /// whose start is past its end.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, x: &DeviceBuffer<f32>, host: &mut PinnedBuffer<f32>) -> hip::Result<()> {
    /// // Download `x` into the tail of `host`.
    /// let start = host.len() - x.len();
    /// stream.copy_to_host_async(x, &mut host.slice_mut(start..)?)?;
    /// # Ok(()) }
    /// ```
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<PinnedSliceMut<'_, T>> {
        let (start, end) = bounds(range, self.len())?;
        let ptr = self.host_mut_ptr();
        Ok(PinnedSliceMut {
            // SAFETY: as in `slice`.
            ptr: unsafe { ptr.add(start) },
            len: end - start,
            alloc: self.allocation(),
            _borrow: PhantomData,
        })
    }

    /// Two writable views, `..mid` and `mid..`, that do not overlap: for example one filled by the host
    /// while the other is copied ([`Error::OutOfBounds`](crate::Error::OutOfBounds) for `mid` past the
    /// end).
    ///
    /// # Errors
    ///
    /// [`Error::OutOfBounds`](crate::Error::OutOfBounds) when `mid` is greater than the length.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, host: &mut PinnedBuffer<u8>, x: &mut DeviceBuffer<u8>) -> hip::Result<()> {
    /// let half = host.len() / 2;
    /// let (mut front, mut back) = host.split_at_mut(half)?;
    /// front.as_mut_slice()?.fill(1);
    /// stream.copy_from_host_async(&front, &mut x.slice_mut(..half)?)?;
    /// back.as_mut_slice()?.fill(2); // while the front half is copied
    /// stream.copy_from_host_async(&back, &mut x.slice_mut(half..)?)?;
    /// # Ok(()) }
    /// ```
    pub fn split_at_mut(
        &mut self,
        mid: usize,
    ) -> Result<(PinnedSliceMut<'_, T>, PinnedSliceMut<'_, T>)> {
        let (_, mid) = bounds(..mid, self.len())?;
        let len = self.len();
        let ptr = self.host_mut_ptr();
        let alloc = self.allocation();
        let part = |start: usize, len: usize| PinnedSliceMut {
            // SAFETY: start <= len of the buffer: inside the allocation (or 0 when empty).
            ptr: unsafe { ptr.add(start) },
            len,
            alloc,
            _borrow: PhantomData,
        };
        Ok((part(0, mid), part(mid, len - mid)))
    }
}

macro_rules! host_view {
    ($ty:ident) => {
        impl<T: DeviceCopy> sealed::Sealed for $ty<'_, T> {}
        impl<T: DeviceCopy> HostMemory<T> for $ty<'_, T> {
            fn len(&self) -> usize {
                self.len
            }
            fn device(&self) -> &Device {
                self.alloc.device()
            }
            fn host_ptr(&self) -> *const T {
                self.ptr
            }
            fn allocation(&self) -> &Arc<Allocation> {
                self.alloc
            }
        }
        impl<T: DeviceCopy> $ty<'_, T> {
            /// The viewed elements, once every asynchronous copy writing the buffer has completed.
            ///
            /// # Errors
            ///
            /// As [`PinnedBuffer::as_slice`]: an error of the copy it waited for, and
            /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) inside a host function while a
            /// copy still writes the buffer (or, feature `rccl`, while an open RCCL group uses it).
            ///
            /// ```no_run
            /// # use hip::prelude::*;
            /// # fn f(stream: &Stream, x: &DeviceBuffer<u32>, host: &mut PinnedBuffer<u32>) -> Result<()> {
            /// let mut tail = host.slice_mut(4..)?;
            /// stream.copy_to_host_async(&x.slice(..tail.len())?, &mut tail)?;
            /// println!("{:?}", tail.as_slice()?); // waits for the copy
            /// # Ok(()) }
            /// ```
            pub fn as_slice(&self) -> Result<&[T]> {
                self.alloc.host_wait(Access::Read)?;
                // SAFETY: `ptr` is aligned and valid for `len` initialised T inside the buffer (or
                // dangling with no bytes), which the borrow keeps alive. Every copy writing the buffer
                // queued before was waited for; a new one into these elements needs `&mut` of this view
                // (or of the buffer), which the returned borrow excludes; one into other elements (another
                // view) does not touch these.
                Ok(unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
            }
        }
    };
}

host_view!(PinnedSlice);
host_view!(PinnedSliceMut);

impl<T: DeviceCopy> HostMemoryMut<T> for PinnedSliceMut<'_, T> {
    fn host_mut_ptr(&mut self) -> *mut T {
        self.ptr
    }
}

impl<T: DeviceCopy> PinnedSliceMut<'_, T> {
    /// The viewed elements for writing, once every asynchronous copy using the buffer has completed.
    ///
    /// # Errors
    ///
    /// As [`PinnedBuffer::as_mut_slice`]: an error of the copies it waited for, and
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) inside a host function while a copy still
    /// uses the buffer (or, feature `rccl`, while an open RCCL group uses it).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(host: &mut PinnedBuffer<u32>) -> hip::Result<()> {
    /// host.slice_mut(..4)?.as_mut_slice()?.copy_from_slice(&[1, 2, 3, 4]);
    /// # Ok(()) }
    /// ```
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.alloc.host_wait(Access::Write)?;
        // SAFETY: as in as_slice, for writing: every copy using the buffer queued before was waited for,
        // `&mut self` excludes queueing another into or out of these elements while the slice lives, and
        // views of the same buffer never overlap (split_at_mut), so no other slice of them exists.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }
}
