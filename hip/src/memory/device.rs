//! Typed device allocations (`hipMalloc`) and views of them.

use super::DevicePtr;
use super::{DeviceCopy, DeviceMemoryMut};
use crate::device::Device;
use crate::error::Result;
use crate::result;
use crate::stream::StreamHandle;
use std::marker::PhantomData;
use std::sync::Arc;

/// `len` values of `T` in device memory, freed on drop.
///
/// `ptr` is the first field a kernel argument points at: passing `&buffer` to a launch passes the device
/// address.
#[derive(Debug)]
pub struct DeviceBuffer<T: DeviceCopy> {
    ptr: DevicePtr,
    len: usize,
    device: Device,
    /// Set for stream-ordered allocations ([`DeviceBuffer::alloc_async`]): freed with `hipFreeAsync` on
    /// this stream, which the buffer keeps alive.
    pub(super) free_on: Option<Arc<StreamHandle>>,
    _elem: PhantomData<T>,
}

// SAFETY: the buffer owns device memory; no host data is shared. Device memory may be read from several
// threads (&self) and written through &mut only.
unsafe impl<T: DeviceCopy> Send for DeviceBuffer<T> {}
unsafe impl<T: DeviceCopy> Sync for DeviceBuffer<T> {}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// `len` zeroed elements (every `DeviceCopy` type is valid as zero bits).
    pub fn zeroed(device: &Device, len: usize) -> Result<Self> {
        let mut b = unsafe { Self::uninit(device, len)? };
        b.zero()?;
        Ok(b)
    }

    /// `len` elements with whatever the allocation held.
    ///
    /// # Safety
    /// The contents are uninitialised: write them (a copy, a memset, a kernel) before reading them back.
    pub unsafe fn uninit(device: &Device, len: usize) -> Result<Self> {
        let bytes = super::byte_size::<T>(len)?;
        let ptr = if bytes == 0 {
            std::ptr::null_mut()
        } else {
            device.bind()?;
            result::malloc(bytes)?
        };
        Ok(DeviceBuffer {
            ptr,
            len,
            device: device.clone(),
            free_on: None,
            _elem: PhantomData,
        })
    }

    /// A new buffer holding a copy of `src`.
    pub fn from_host(device: &Device, src: &[T]) -> Result<Self> {
        let mut b = unsafe { Self::uninit(device, src.len())? };
        b.copy_from_host(src)?;
        Ok(b)
    }

    /// A buffer over memory allocated elsewhere in this module (`free_on`: see the field).
    pub(super) fn from_parts(
        ptr: DevicePtr,
        len: usize,
        device: &Device,
        free_on: Option<Arc<StreamHandle>>,
    ) -> Self {
        DeviceBuffer {
            ptr,
            len,
            device: device.clone(),
            free_on,
            _elem: PhantomData,
        }
    }

    /// The whole buffer as an immutable view.
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        DeviceSlice::new(self.ptr, self.len, &self.device)
    }

    /// The whole buffer as a mutable view.
    pub fn as_slice_mut(&mut self) -> DeviceSliceMut<'_, T> {
        DeviceSliceMut::new(self.ptr, self.len, &self.device)
    }
}

impl<T: DeviceCopy> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            let _ = self.device.bind();
            if let Some(stream) = &self.free_on {
                // Freed in stream order: after the work queued on its stream so far.
                if unsafe { result::pool::free_async(self.ptr, stream.raw) }.is_ok() {
                    return;
                }
            }
            // hipFree waits for queued work on the device, so nothing still uses the memory.
            let _ = unsafe { result::free(self.ptr) };
        }
    }
}

/// An immutable view of device memory.
#[derive(Clone, Copy, Debug)]
pub struct DeviceSlice<'a, T: DeviceCopy> {
    ptr: DevicePtr,
    len: usize,
    device: &'a Device,
    _elem: PhantomData<&'a T>,
}

/// A mutable view of device memory.
#[derive(Debug)]
pub struct DeviceSliceMut<'a, T: DeviceCopy> {
    ptr: DevicePtr,
    len: usize,
    device: &'a Device,
    _elem: PhantomData<&'a mut T>,
}

// SAFETY: views are borrows of device memory, shareable as the buffers are.
unsafe impl<T: DeviceCopy> Send for DeviceSlice<'_, T> {}
unsafe impl<T: DeviceCopy> Sync for DeviceSlice<'_, T> {}
unsafe impl<T: DeviceCopy> Send for DeviceSliceMut<'_, T> {}
unsafe impl<T: DeviceCopy> Sync for DeviceSliceMut<'_, T> {}

impl<'a, T: DeviceCopy> DeviceSlice<'a, T> {
    pub(crate) fn new(ptr: DevicePtr, len: usize, device: &'a Device) -> Self {
        DeviceSlice {
            ptr,
            len,
            device,
            _elem: PhantomData,
        }
    }
}

impl<'a, T: DeviceCopy> DeviceSliceMut<'a, T> {
    pub(crate) fn new(ptr: DevicePtr, len: usize, device: &'a Device) -> Self {
        DeviceSliceMut {
            ptr,
            len,
            device,
            _elem: PhantomData,
        }
    }
}

device_memory!(DeviceBuffer);
device_memory!(DeviceSlice<'a>);
device_memory!(DeviceSliceMut<'a>);

impl<T: DeviceCopy> DeviceMemoryMut<T> for DeviceBuffer<T> {}
impl<T: DeviceCopy> DeviceMemoryMut<T> for DeviceSliceMut<'_, T> {}
