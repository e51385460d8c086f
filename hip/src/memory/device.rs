//! Typed device allocations (`hipMalloc`) and views of them.

use super::tracking::{Allocation, Release};
use super::DevicePtr;
use super::{DeviceCopy, DeviceMemoryMut};
use crate::device::Device;
use crate::error::Result;
use crate::result;
use std::marker::PhantomData;
use std::sync::Arc;

/// `len` values of `T` in device memory, freed on drop (once no stream still uses it: see
/// [`crate::memory`]).
///
/// Most of what a buffer does comes from two traits, shared with views and managed memory (bring them in
/// with `use hip::prelude::*`):
/// - [`DeviceMemory`](super::DeviceMemory): `len`, `is_empty`, `device`, `device_ptr`, `to_vec`,
///   `copy_to_host`, `slice`, `track_use`;
/// - [`DeviceMemoryMut`]: `copy_from_host`, `copy_from_device`, `memset_bytes`, `zero`, `slice_mut`.
///
/// Queued copies, memsets and fills are methods of [`Stream`](crate::Stream) (`copy_from_host_async`,
/// `copy_to_host_async`, `copy_device_async`, `memset_async`, `fill_async`): the stream first.
///
/// `ptr` is the first field a kernel argument points at: passing `&buffer` to a launch passes the device
/// address.
///
/// ```no_run
/// use hip::prelude::*;
///
/// let device = Device::get(0)?;
/// let mut x = DeviceBuffer::from_slice(&device, &[1u32, 2, 3, 4])?; // allocates, copies, blocks
/// let zeros = DeviceBuffer::<u32>::zeroed(&device, 4)?;
/// x.slice_mut(2..)?.copy_from_device(&zeros.slice(..2)?)?;
/// assert_eq!(x.to_vec()?, [1, 2, 0, 0]);
/// # Ok::<(), hip::Error>(())
/// ```
#[derive(Debug)]
pub struct DeviceBuffer<T: DeviceCopy> {
    pub(super) ptr: DevicePtr,
    pub(super) len: usize,
    pub(super) alloc: Arc<Allocation>,
    _elem: PhantomData<T>,
}

// SAFETY: `ptr` is a device address the host never dereferences (only HIP calls take it), and HIP
// accepts it from any thread; the allocation (`Arc<Allocation>`) is Send + Sync. T is DeviceCopy (Send).
unsafe impl<T: DeviceCopy> Send for DeviceBuffer<T> {}
// SAFETY: as for Send: through `&DeviceBuffer` safe code only queues reads of the memory (writes need
// `&mut`; `track_use(.., Access::Write)` only records a use for raw work the caller queues in unsafe
// code), and every use goes through the allocation's thread-safe tracking (atomics and a mutex).
unsafe impl<T: DeviceCopy> Sync for DeviceBuffer<T> {}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// `len` zeroed elements (every `DeviceCopy` type is valid as zero bits): `hipMalloc`, then a memset
    /// on the device's null stream. Blocks until allocated; the memset is ordered before every later use.
    ///
    /// # Errors
    ///
    /// [`Error::AllocationTooLarge`](crate::Error::AllocationTooLarge) when the byte size overflows, and
    /// [`Error::Hip`](crate::Error::Hip) with what HIP returns (`hipErrorOutOfMemory`, status
    /// `out_of_memory`, when there is no room).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// let device = Device::get(0)?;
    /// let y = DeviceBuffer::<f32>::zeroed(&device, 1 << 20)?;
    /// assert_eq!(y.len(), 1 << 20);
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn zeroed(device: &Device, len: usize) -> Result<Self> {
        // SAFETY: `uninit` asks that the contents be written before they are read: `zero()` below writes
        // every byte (through the null stream, recorded as the writer, so every later use is ordered after
        // it), and on its failure the buffer is dropped unread.
        let mut b = unsafe { Self::uninit(device, len)? };
        b.zero()?;
        Ok(b)
    }

    /// `len` elements with whatever the allocation held.
    ///
    /// # Errors
    ///
    /// As [`zeroed`](Self::zeroed) without the memset:
    /// [`Error::AllocationTooLarge`](crate::Error::AllocationTooLarge) when the byte size overflows, and
    /// [`Error::Hip`](crate::Error::Hip) with what HIP returns for making the device current and for
    /// `hipMalloc` (`hipErrorOutOfMemory` when there is no room).
    ///
    /// # Safety
    /// The contents are uninitialised: write them (a copy, a memset, a kernel) before reading them back.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream) -> hip::Result<()> {
    /// // SAFETY: the fill writes every element before anything reads it.
    /// let mut out = unsafe { DeviceBuffer::<u32>::uninit(device, 4096)? };
    /// stream.fill_async(&mut out, 0)?;
    /// # Ok(()) }
    /// ```
    pub unsafe fn uninit(device: &Device, len: usize) -> Result<Self> {
        let bytes = super::byte_size::<T>(len)?;
        let ptr = if bytes == 0 {
            std::ptr::null_mut()
        } else {
            device.bind()?;
            result::malloc(bytes)?
        };
        Ok(Self::from_parts(ptr, len, device, Release::Free))
    }

    /// A new buffer on `device` holding a copy of `src` (the constructor every buffer type names
    /// `from_slice`, as [`PinnedBuffer::from_slice`](crate::PinnedBuffer::from_slice)).
    ///
    /// Blocking, like [`copy_from_host`](crate::DeviceMemoryMut::copy_from_host): it allocates
    /// (`hipMalloc`), queues the copy on the device's null stream and returns once `src` may be changed or
    /// freed. A large pageable copy goes through the staging ring, whose first use allocates pinned
    /// staging buffers and starts its copy threads.
    ///
    /// # Errors
    ///
    /// [`Error::Hip`](crate::Error::Hip) with `hipErrorOutOfMemory` (status `out_of_memory`) when the
    /// device has no room, [`Error::AllocationTooLarge`](crate::Error::AllocationTooLarge) when the byte
    /// size overflows, and any error HIP returns for the copy.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// let device = Device::get(0)?;
    /// let x = DeviceBuffer::from_slice(&device, &[1.0f32, 2.0, 3.0])?;
    /// assert_eq!(x.to_vec()?, [1.0, 2.0, 3.0]);
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn from_slice(device: &Device, src: &[T]) -> Result<Self> {
        // SAFETY: as in `zeroed`: `copy_from_host` writes all len() elements (recorded as a write, so
        // later uses are ordered after it), and on failure the buffer is dropped unread.
        let mut b = unsafe { Self::uninit(device, src.len())? };
        b.copy_from_host(src)?;
        Ok(b)
    }

    /// A new buffer holding a copy of `src`: the old name of [`from_slice`](Self::from_slice).
    #[deprecated(
        since = "0.1.0",
        note = "renamed `DeviceBuffer::from_slice`, the name every buffer type uses"
    )]
    pub fn from_host(device: &Device, src: &[T]) -> Result<Self> {
        Self::from_slice(device, src)
    }

    /// A buffer over memory allocated elsewhere in this module, released as `release` says.
    pub(super) fn from_parts(
        ptr: DevicePtr,
        len: usize,
        device: &Device,
        release: Release,
    ) -> Self {
        DeviceBuffer {
            ptr,
            len,
            alloc: Allocation::new(ptr, device, release),
            _elem: PhantomData,
        }
    }

    /// The whole buffer as an immutable view.
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        DeviceSlice::new(self.ptr, self.len, &self.alloc)
    }

    /// The whole buffer as a mutable view.
    pub fn as_slice_mut(&mut self) -> DeviceSliceMut<'_, T> {
        DeviceSliceMut::new(self.ptr, self.len, &self.alloc)
    }

    /// Number of elements (also [`DeviceMemory::len`](super::DeviceMemory::len)).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Turn the memory model off (`true`) or back on for this buffer and its views: operations on it are
    /// then neither ordered nor recorded. For experts who order every use themselves (events,
    /// [`Stream::wait_event`](crate::Stream::wait_event), one stream).
    ///
    /// # Safety
    /// While tracking is off, the caller orders every operation on this memory against every other one
    /// that conflicts (read after write, write after read or write) on other streams and the host, and
    /// keeps the memory alive until work on it has finished: the drop (and a graph's) then waits only as
    /// raw `hipFree` does (the whole device, not other devices; `hipFreeAsync` only its stream). Uses
    /// recorded before tracking was turned off are still waited for when it is turned back on.
    pub unsafe fn set_untracked(&mut self, untracked: bool) {
        self.alloc.set_untracked(untracked);
    }
}

/// An immutable view of device memory. Ordered with (and kept alive through) its parent's allocation.
#[derive(Clone, Copy, Debug)]
pub struct DeviceSlice<'a, T: DeviceCopy> {
    ptr: DevicePtr,
    len: usize,
    alloc: &'a Arc<Allocation>,
    _elem: PhantomData<&'a T>,
}

/// A mutable view of device memory. Ordered with its parent's allocation.
#[derive(Debug)]
pub struct DeviceSliceMut<'a, T: DeviceCopy> {
    ptr: DevicePtr,
    len: usize,
    alloc: &'a Arc<Allocation>,
    _elem: PhantomData<&'a mut T>,
}

// SAFETY: a view is a device address (never dereferenced by the host) and a borrow of its parent's
// `Arc<Allocation>` (Sync), so it may move between threads as the buffer may.
unsafe impl<T: DeviceCopy> Send for DeviceSlice<'_, T> {}
// SAFETY: as for Send; `&DeviceSlice` only queues reads.
unsafe impl<T: DeviceCopy> Sync for DeviceSlice<'_, T> {}
// SAFETY: as for DeviceSlice; the exclusive borrow of the parent travels with the view.
unsafe impl<T: DeviceCopy> Send for DeviceSliceMut<'_, T> {}
// SAFETY: `&DeviceSliceMut` only queues reads (writes need `&mut`), as for DeviceSlice.
unsafe impl<T: DeviceCopy> Sync for DeviceSliceMut<'_, T> {}

impl<'a, T: DeviceCopy> DeviceSlice<'a, T> {
    pub(crate) fn new(ptr: DevicePtr, len: usize, alloc: &'a Arc<Allocation>) -> Self {
        DeviceSlice {
            ptr,
            len,
            alloc,
            _elem: PhantomData,
        }
    }
}

impl<'a, T: DeviceCopy> DeviceSliceMut<'a, T> {
    pub(crate) fn new(ptr: DevicePtr, len: usize, alloc: &'a Arc<Allocation>) -> Self {
        DeviceSliceMut {
            ptr,
            len,
            alloc,
            _elem: PhantomData,
        }
    }
}

device_memory!(DeviceBuffer);
device_memory!(DeviceSlice<'a>);
device_memory!(DeviceSliceMut<'a>);

impl<T: DeviceCopy> DeviceMemoryMut<T> for DeviceBuffer<T> {}

#[cfg(test)]
impl<T: DeviceCopy> DeviceBuffer<T> {
    /// A buffer record of `len` elements for unit tests without a GPU: no memory behind it (null, never
    /// freed); only for checks made before any HIP call.
    pub(crate) fn for_unit_tests(device: &Device, len: usize) -> Self {
        Self::from_parts(std::ptr::null_mut(), len, device, Release::Nothing)
    }
}
impl<T: DeviceCopy> DeviceMemoryMut<T> for DeviceSliceMut<'_, T> {}
