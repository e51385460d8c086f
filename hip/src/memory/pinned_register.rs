//! The user's own memory as a pinned buffer: [`PinnedBuffer::register`] page-locks a `Vec`
//! (`hipHostRegister`) and owns it, so the memory model orders and keeps it exactly as it does memory
//! from `hipHostMalloc`; [`PinnedBuffer::into_vec`] gives the `Vec` back once nothing uses it.
//!
//! The buffer owns the `Vec` rather than borrowing it: a borrowed registration could be leaked with
//! `mem::forget` while copies still run, and the `Vec` freed under them. Owned, the memory is
//! unregistered and freed only after every stream that used it is done (or leaked, never freed, if that
//! wait fails).

use super::pinned::PinnedBuffer;
use super::tracking::{Allocation, Release};
use super::{byte_size, DeviceCopy};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::result;
use hip_sys as sys;
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// A `Vec`'s parts, owned: dropping it frees the `Vec`. Kept by the allocation until its memory is
/// unregistered.
struct OwnedVec<T> {
    ptr: *mut T,
    len: usize,
    cap: usize,
}

// SAFETY: it owns the Vec's memory (of Send + Sync DeviceCopy values) as the Vec did, and gives no access
// to it: only its drop (or `into_vec`, by value) touches it.
unsafe impl<T: DeviceCopy> Send for OwnedVec<T> {}
// SAFETY: as for Send: `&OwnedVec` gives nothing.
unsafe impl<T: DeviceCopy> Sync for OwnedVec<T> {}

impl<T> OwnedVec<T> {
    fn new(vec: Vec<T>) -> Self {
        let mut vec = ManuallyDrop::new(vec);
        OwnedVec {
            ptr: vec.as_mut_ptr(),
            len: vec.len(),
            cap: vec.capacity(),
        }
    }

    fn into_vec(self) -> Vec<T> {
        let me = ManuallyDrop::new(self);
        // SAFETY: the parts of a Vec taken apart in `new`, put together once (`me` is never dropped).
        unsafe { Vec::from_raw_parts(me.ptr, me.len, me.cap) }
    }
}

impl<T> Drop for OwnedVec<T> {
    fn drop(&mut self) {
        // SAFETY: as in `into_vec`: the parts are put together once, here.
        drop(unsafe { Vec::from_raw_parts(self.ptr, self.len, self.cap) });
    }
}

impl<T: DeviceCopy> PinnedBuffer<T> {
    /// Page-lock `vec`, the program's own memory, and use it as a pinned buffer (`hipHostRegister`,
    /// mapped, so [`mapped`](Self::mapped) reaches it from kernels): asynchronous copies from and to it
    /// need no staging and are ordered by the memory model as every pinned buffer's are. The buffer owns
    /// `vec`: dropping it waits for every stream still using the memory, unregisters it
    /// (`hipHostUnregister`) and frees `vec`; [`into_vec`](Self::into_vec) gives it back.
    ///
    /// Registering locks whole pages. A runtime may refuse memory on a page another registration holds
    /// (two small `Vec`s next to each other): register large `Vec`s, or allocate with
    /// [`zeroed`](Self::zeroed).
    ///
    /// # Errors
    ///
    /// [`Error::AllocationTooLarge`] when the byte size overflows; what HIP returns for making the device
    /// current and for `hipHostRegister` (`hipErrorHostMemoryAlreadyRegistered` for memory registered
    /// already, `hipErrorOutOfMemory` past the limit of locked memory). `vec` is dropped then.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream, x: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// let samples: Vec<f32> = (0..x.len()).map(|i| i as f32).collect();
    /// let host = PinnedBuffer::register(device, samples)?;
    /// stream.copy_from_host_async(&host, x)?; // straight from the Vec's pages
    /// let samples: Vec<f32> = host.into_vec()?; // waits for the copy, unregisters
    /// # Ok(()) }
    /// ```
    pub fn register(device: &Device, vec: Vec<T>) -> Result<Self> {
        let bytes = byte_size::<T>(vec.len())?;
        let owned = OwnedVec::new(vec);
        let (ptr, len) = (owned.ptr, owned.len);
        if bytes > 0 {
            device.bind()?;
            // SAFETY: `ptr` is valid for `bytes` (= len * size_of::<T>()) initialised bytes of the Vec
            // `owned` holds; the allocation made below keeps `owned` until after hipHostUnregister, which
            // its drop calls once every copy using the memory completed.
            unsafe {
                result::memory::host_register(ptr.cast(), bytes, sys::hipHostRegisterMapped)
            }?;
        }
        let release = Release::Unregister {
            keep: Arc::new(owned),
            registered: bytes > 0,
        };
        Ok(PinnedBuffer {
            ptr,
            len,
            alloc: Allocation::host_visible(ptr.cast(), device, release),
        })
    }

    /// The contents as a `Vec`, once every asynchronous copy using the buffer has completed: the
    /// registered `Vec` itself ([`register`](Self::register)), unregistered, with no copy; a copy of the
    /// contents for memory from `hipHostMalloc`, or while a graph still holds the buffer.
    ///
    /// # Errors
    ///
    /// As [`wait`](Self::wait) (the copies' errors; refused inside a host function while a copy still
    /// uses the buffer), and what HIP returns for making the device current and for `hipHostUnregister`
    /// (the buffer is dropped then, as on drop).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream, x: &DeviceBuffer<u32>) -> hip::Result<()> {
    /// let mut host = PinnedBuffer::register(device, vec![0u32; x.len()])?;
    /// stream.copy_to_host_async(x, &mut host)?;
    /// let values: Vec<u32> = host.into_vec()?; // waits for the copy
    /// # Ok(()) }
    /// ```
    pub fn into_vec(self) -> Result<Vec<T>> {
        self.wait()?;
        let (ptr, len) = (self.ptr, self.len);
        let alloc = match Arc::try_unwrap(self.alloc) {
            Ok(sole) => sole,
            Err(shared) => return copy_out(ptr, len, shared),
        };
        match alloc.take_registration()? {
            Ok(keep) => keep
                .downcast::<OwnedVec<T>>()
                .ok()
                .and_then(|owned| Arc::try_unwrap(owned).ok())
                .map(OwnedVec::into_vec)
                .ok_or_else(|| Error::InvalidArgument {
                    what: "pinned buffer",
                    value: "a registered buffer".into(),
                    reason: "its Vec is not of this element type, or held elsewhere".into(),
                }),
            Err(alloc) => copy_out(ptr, len, Arc::new(alloc)),
        }
    }
}

/// The contents of pinned memory another owner still holds (or that is not a registered `Vec`), copied.
fn copy_out<T: DeviceCopy>(ptr: *mut T, len: usize, alloc: Arc<Allocation>) -> Result<Vec<T>> {
    let buffer = PinnedBuffer { ptr, len, alloc };
    Ok(buffer.as_slice()?.to_vec())
}
