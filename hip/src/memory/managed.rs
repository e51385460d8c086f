//! Managed (unified) memory: one address valid on the host and the device.

use super::tracking::{Access, Allocation, Release};
use super::DevicePtr;
use super::{byte_size, DeviceCopy, DeviceMemory, DeviceMemoryMut};
use crate::device::Device;
use crate::error::Result;
use crate::result;
use hip_sys as sys;
use std::sync::Arc;

/// `len` values of `T` in managed memory (`hipMallocManaged`, attached globally), freed on drop (once no
/// stream still uses it).
///
/// Kernels and copies use it like device memory, ordered by the memory model like a [`DeviceBuffer`](crate::DeviceBuffer)
///. The host reads and writes it through [`as_slice`](Self::as_slice) and
/// [`as_mut_slice`](Self::as_mut_slice), which wait for the conflicting work (a read for the last
/// writer, a write for every user). On a device that cannot access managed memory while the host does
/// (`hipDeviceAttributeConcurrentManagedAccess` = 0) they wait for every device instead
/// ([`Device::synchronize_all`]): there any running kernel forbids host access.
///
/// On NVIDIA GPUs never ask for more managed memory than the device has free.
#[derive(Debug)]
pub struct ManagedBuffer<T: DeviceCopy> {
    ptr: DevicePtr,
    len: usize,
    alloc: Arc<Allocation>,
    _elem: std::marker::PhantomData<T>,
}

// SAFETY: as DeviceBuffer; host access goes through &self / &mut self after the conflicting work is done.
unsafe impl<T: DeviceCopy> Send for ManagedBuffer<T> {}
// SAFETY: as above.
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
            alloc: Allocation::new(ptr, device, Release::Free),
            _elem: std::marker::PhantomData,
        })
    }

    /// The contents on the host, once the work that writes them is done.
    pub fn as_slice(&self) -> Result<&[T]> {
        self.host_wait(Access::Read)?;
        // SAFETY: `host_ptr` is valid for `len` T, and no queued work writes it (waited above; new work
        // needs `&mut self` or a shared borrow that only reads).
        Ok(unsafe { std::slice::from_raw_parts(self.host_ptr(), self.len) })
    }

    /// The contents on the host for writing, once every queued use of them is done.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.host_wait(Access::Write)?;
        // SAFETY: as in as_slice, and nothing queued reads it either.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.host_ptr(), self.len) })
    }

    fn host_wait(&self, access: Access) -> Result<()> {
        if self.ptr.is_null() {
            return Ok(());
        }
        self.alloc.host_wait(access)?;
        let concurrent = self
            .device()
            .attribute(sys::hipDeviceAttributeConcurrentManagedAccess)?;
        if concurrent == 0 {
            Device::synchronize_all()?;
        }
        Ok(())
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

device_memory!(ManagedBuffer);
impl<T: DeviceCopy> DeviceMemoryMut<T> for ManagedBuffer<T> {}
