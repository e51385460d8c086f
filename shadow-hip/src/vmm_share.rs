//! Physical allocations shared between processes (`hipMemExportToShareableHandle`,
//! `hipMemImportFromShareableHandle`), within one process: the test's "processes" are threads sharing
//! the shadow, as with pools (pool_share.rs). The exported descriptor is a real one, of an unlinked
//! temporary file holding the allocation's size, so it can be duplicated and passed on as a descriptor
//! is. An import is a new physical allocation of that size: its bytes do not alias the exporter's here
//! (vmm.rs: a physical allocation's bytes are those of the address it is mapped at), so the shadow checks
//! the calls' rules (only shareable memory exports; a descriptor that is no export, or a mapping of
//! another size, is refused) and each side's uses of its own mapping, not the data between them.

use crate::pool_share::{descriptor, words};
use crate::vmm::{new_physical, physical, POSIX_FD};
use crate::{Status, INVALID_VALUE, SUCCESS};
use hip_sys as sys;
use std::ffi::{c_int, c_ulonglong, c_void};
use std::fs::File;
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;
use std::os::unix::fs::FileExt;

const VMM_TAG: u64 = 0x5348_4950_564d_4d31; // "SHIPVMM1"

/// Writes the descriptor as an `int` at `out`, as HIP does.
#[no_mangle]
pub unsafe extern "C" fn hipMemExportToShareableHandle(
    out: *mut c_void,
    h: sys::hipMemGenericAllocationHandle_t,
    handle_type: sys::hipMemAllocationHandleType,
    flags: c_ulonglong,
) -> Status {
    if out.is_null() || handle_type != POSIX_FD || flags != 0 {
        return INVALID_VALUE;
    }
    let Some((size, true)) = physical(h as usize) else {
        return INVALID_VALUE;
    };
    let Some(fd) = descriptor([VMM_TAG, size as u64]) else {
        eprintln!("hip-rs shadow: hipMemExportToShareableHandle could not make a temporary file");
        return sys::hipErrorOutOfMemory;
    };
    *out.cast::<c_int>() = fd;
    SUCCESS
}

/// The descriptor is the pointer's value, as on CUDA and in AMD's own tests.
#[no_mangle]
pub unsafe extern "C" fn hipMemImportFromShareableHandle(
    out: *mut sys::hipMemGenericAllocationHandle_t,
    os_handle: *mut c_void,
    handle_type: sys::hipMemAllocationHandleType,
) -> Status {
    let fd = os_handle as usize;
    if out.is_null() || fd == 0 || fd > c_int::MAX as usize || handle_type != POSIX_FD {
        return INVALID_VALUE;
    }
    // SAFETY: the caller's descriptor, borrowed: ManuallyDrop never closes it.
    let f = ManuallyDrop::new(File::from_raw_fd(fd as c_int));
    let mut bytes = [0u8; 24];
    if f.read_at(&mut bytes[..16], 0).ok() != Some(16) {
        return INVALID_VALUE;
    }
    let [tag, size, _] = words(&bytes);
    if tag != VMM_TAG {
        return INVALID_VALUE;
    }
    // Imported on the calling thread's current device, as HIP does.
    *out = new_physical(size as usize, crate::state::current(), true)
        as sys::hipMemGenericAllocationHandle_t;
    SUCCESS
}
