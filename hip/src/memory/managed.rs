//! Managed (unified) memory: one address valid on the host and the device.

use super::DevicePtr;
use super::{byte_size, DeviceCopy, DeviceMemoryMut};
use crate::device::Device;
use crate::error::Result;
use crate::result;
use hip_sys as sys;

/// `len` values of `T` in managed memory (`hipMallocManaged`, attached globally), freed on drop.
///
/// Kernels and copies use it like device memory; the host reads and writes it through
/// [`as_slice`](Self::as_slice) and [`as_mut_slice`](Self::as_mut_slice), which synchronise **every**
/// device first ([`Device::synchronize_all`]): managed memory is valid on all of them, so a kernel on
/// another device may be the one still writing it.
///
/// On NVIDIA GPUs never ask for more managed memory than the device has free.
#[derive(Debug)]
pub struct ManagedBuffer<T: DeviceCopy> {
    ptr: DevicePtr,
    len: usize,
    device: Device,
    _elem: std::marker::PhantomData<T>,
}

// SAFETY: as DeviceBuffer; host access goes through &self / &mut self after device synchronisation.
unsafe impl<T: DeviceCopy> Send for ManagedBuffer<T> {}
unsafe impl<T: DeviceCopy> Sync for ManagedBuffer<T> {}

impl<T: DeviceCopy> ManagedBuffer<T> {
    /// `len` zeroed elements.
    pub fn zeroed(device: &Device, len: usize) -> Result<Self> {
        let bytes = byte_size::<T>(len)?;
        let ptr = if bytes == 0 {
            std::ptr::null_mut()
        } else {
            device.bind()?;
            let p = result::malloc_managed(bytes, sys::hipMemAttachGlobal)?;
            // SAFETY: fresh allocation of `bytes`, valid on the host; zero bits are a valid T.
            unsafe { p.cast::<u8>().write_bytes(0, bytes) };
            p
        };
        Ok(ManagedBuffer {
            ptr,
            len,
            device: device.clone(),
            _elem: std::marker::PhantomData,
        })
    }

    /// The contents on the host, after waiting for all work on every device.
    pub fn as_slice(&self) -> Result<&[T]> {
        Device::synchronize_all()?;
        Ok(self.host_slice())
    }

    /// The contents on the host for writing, after waiting for all work on every device.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        Device::synchronize_all()?;
        // SAFETY: `host_ptr` is the allocation (or dangling when it holds no bytes), valid for `len` T.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.host_ptr(), self.len) })
    }

    fn host_slice(&self) -> &[T] {
        // SAFETY: as in as_mut_slice.
        unsafe { std::slice::from_raw_parts(self.host_ptr(), self.len) }
    }

    /// The host address of the elements: the allocation, or a dangling (never null) pointer when nothing
    /// was allocated (no elements, or zero-sized ones; a slice may never start at null, even an empty one).
    fn host_ptr(&self) -> *mut T {
        if self.ptr.is_null() {
            std::ptr::NonNull::<T>::dangling().as_ptr()
        } else {
            self.ptr.cast()
        }
    }
}

impl<T: DeviceCopy> Drop for ManagedBuffer<T> {
    /// `hipFree` waits for the owning device's work only, and managed memory may be in use by a kernel on
    /// any device: every device is synchronised first, and if that fails the memory is leaked, never freed
    /// under a running kernel.
    fn drop(&mut self) {
        if !self.ptr.is_null() && Device::synchronize_all().is_ok() {
            let _ = self.device.bind();
            let _ = unsafe { result::free(self.ptr) };
        }
    }
}

device_memory!(ManagedBuffer);
impl<T: DeviceCopy> DeviceMemoryMut<T> for ManagedBuffer<T> {}
