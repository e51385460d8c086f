//! Physical allocations shared between processes: one made exportable (`hipMemCreate` with
//! `hipMemHandleTypePosixFileDescriptor`), exported as a file descriptor
//! (`hipMemExportToShareableHandle`) and imported in another process (`hipMemImportFromShareableHandle`).
//!
//! Built against headers without the virtual memory calls (`cfg(hip_vmm)` unset) each answers
//! [`Error::NotSupported`](crate::Error::NotSupported) naming itself.

#[cfg(not(hip_vmm))]
use super::vmm::missing;
use super::vmm::RawPhysical;
#[cfg(hip_vmm)]
use super::{
    check,
    vmm::{create_with, device_prop},
};
use crate::error::Result;
#[cfg(hip_vmm)]
use hip_sys as sys;
#[cfg(hip_vmm)]
use std::os::fd::AsRawFd;
use std::os::fd::BorrowedFd;

/// `hipMemHandleTypePosixFileDescriptor`.
#[cfg(hip_vmm)]
const POSIX_FD: u32 = 1;

/// Pinned memory on device `ordinal` whose handle may be exported as a POSIX file descriptor. The
/// requested handle type's field has three names (the crate's build script says which these headers use).
#[cfg(hip_vmm)]
fn shareable_prop(ordinal: i32) -> sys::hipMemAllocationProp {
    let mut prop = device_prop(ordinal);
    #[cfg(hip_mem_prop_handle = "union")]
    {
        prop.__bindgen_anon_1.requestedHandleType = POSIX_FD as _;
    }
    #[cfg(hip_mem_prop_handle = "types")]
    {
        prop.requestedHandleTypes = POSIX_FD as _;
    }
    #[cfg(not(any(hip_mem_prop_handle = "union", hip_mem_prop_handle = "types")))]
    {
        prop.requestedHandleType = POSIX_FD as _;
    }
    prop
}

/// `hipMemCreate` of `size` bytes (a multiple of the granularity) on device `ordinal`, exportable as a
/// POSIX file descriptor. Release it with [`super::vmm::release`].
pub fn create_shareable(ordinal: i32, size: usize) -> Result<RawPhysical> {
    #[cfg(hip_vmm)]
    {
        create_with(&shareable_prop(ordinal), size)
    }
    #[cfg(not(hip_vmm))]
    {
        let _ = (ordinal, size);
        Err(missing("hipMemCreate"))
    }
}

/// `hipMemExportToShareableHandle` as a POSIX file descriptor, which the caller then owns (HIP writes an
/// `int`: a negative one is no descriptor).
///
/// # Safety
/// `handle` is a live handle from [`create_shareable`] (or [`super::vmm::create`], which HIP refuses).
pub unsafe fn export_fd(handle: RawPhysical) -> Result<i32> {
    #[cfg(hip_vmm)]
    {
        // A pointer-sized zeroed slot, as AMD's own tests pass it; HIP writes the `int` at its start.
        let mut slot = 0u64;
        // SAFETY: the caller's contract for `handle`; `slot` is live, aligned and large enough.
        check("hipMemExportToShareableHandle", unsafe {
            sys::hipMemExportToShareableHandle(
                std::ptr::from_mut(&mut slot).cast(),
                handle,
                POSIX_FD as _,
                0,
            )
        })?;
        // The `int` HIP wrote is the slot's first 4 bytes.
        Ok(i32::from_ne_bytes(
            slot.to_ne_bytes()[..4].try_into().unwrap(),
        ))
    }
    #[cfg(not(hip_vmm))]
    {
        let _ = handle;
        Err(missing("hipMemExportToShareableHandle"))
    }
}

/// `hipMemImportFromShareableHandle` from a POSIX file descriptor (which stays the caller's), on the
/// current device. Release the handle with [`super::vmm::release`].
pub fn import_fd(fd: BorrowedFd<'_>) -> Result<RawPhysical> {
    #[cfg(hip_vmm)]
    {
        // SAFETY: all-zero bytes are a valid (null) handle value, overwritten on success.
        let mut h: RawPhysical = unsafe { std::mem::zeroed() };
        // The descriptor passes as the pointer's value, as on CUDA and in AMD's own tests.
        let os_handle = fd.as_raw_fd() as usize as *mut std::ffi::c_void;
        // SAFETY: an out-pointer to a live local; HIP reads the descriptor, open while borrowed.
        check("hipMemImportFromShareableHandle", unsafe {
            sys::hipMemImportFromShareableHandle(&mut h, os_handle, POSIX_FD as _)
        })?;
        Ok(h)
    }
    #[cfg(not(hip_vmm))]
    {
        let _ = fd;
        Err(missing("hipMemImportFromShareableHandle"))
    }
}
