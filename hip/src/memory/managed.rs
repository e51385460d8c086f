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

// SAFETY: as DeviceBuffer: the buffer owns the allocation (Send + Sync) and T is DeviceCopy (Send + Sync).
unsafe impl<T: DeviceCopy> Send for ManagedBuffer<T> {}
// SAFETY: `&ManagedBuffer` gives host reads of Sync data (`as_slice`, after the writers are done) and
// queues work that only reads; host writes and device writes need `&mut`.
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
            // SAFETY: `p` is a fresh hipMallocManaged allocation of `bytes` bytes, attached globally so the
            // host may write it, and no work uses it yet; zero bits are a valid T. (On a device without
            // concurrent managed access the host may touch managed memory only while the device is idle:
            // work on other buffers running now is not waited for here.)
            unsafe { p.cast::<u8>().write_bytes(0, bytes) };
            p
        };
        Ok(ManagedBuffer {
            ptr,
            len,
            alloc: Allocation::host_visible(ptr, device, Release::Free),
            _elem: std::marker::PhantomData,
        })
    }

    /// The contents on the host, once the work that writes them is done.
    pub fn as_slice(&self) -> Result<&[T]> {
        self.host_wait(Access::Read)?;
        // SAFETY: `host_ptr` is aligned and valid on the host for `len` initialised T (zeroed at
        // allocation; or dangling with no bytes), alive while `self` is borrowed. Every write queued
        // before was waited for above (and, without concurrent managed access, the whole device); a new
        // device write needs `&mut self`, which the returned borrow excludes, a graph replaying a captured
        // write aside (see the `memory` module doc). Without concurrent managed access the slice is only
        // valid while the device stays idle, which is not enforced after this returns.
        Ok(unsafe { std::slice::from_raw_parts(self.host_ptr(), self.len) })
    }

    /// The contents on the host for writing, once every queued use of them is done.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.host_wait(Access::Write)?;
        // SAFETY: as in as_slice, for writing: every use queued before (reads too) was waited for, no
        // other borrow of the buffer exists, and the same two exceptions apply.
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
