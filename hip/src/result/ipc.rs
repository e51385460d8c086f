//! Interprocess sharing: memory and event handles another process can open (`hipIpc*`), and the
//! address-range query that sizes an opened allocation.

use super::check;
use crate::error::Result;
use hip_sys as sys;
use std::ffi::c_void;

/// `hipIpcGetMemHandle`: a handle another process can open for the allocation starting at `ptr`.
///
/// # Safety
/// `ptr` is the start of a live `hipMalloc` allocation of the current device.
pub unsafe fn get_mem_handle(ptr: *mut c_void) -> Result<sys::hipIpcMemHandle_t> {
    let mut handle = sys::hipIpcMemHandle_t::default();
    // SAFETY: an out-pointer to a live local; `ptr` is as the caller's contract says.
    check("hipIpcGetMemHandle", unsafe {
        sys::hipIpcGetMemHandle(&mut handle, ptr)
    })?;
    Ok(handle)
}

/// `hipIpcOpenMemHandle` with `hipIpcMemLazyEnablePeerAccess`: the address of the memory another process
/// exported, mapped into this one on the current device. Close it with [`close_mem_handle`]; never free it.
pub fn open_mem_handle(handle: sys::hipIpcMemHandle_t) -> Result<*mut c_void> {
    let mut p = std::ptr::null_mut();
    // SAFETY: an out-pointer to a live local; the handle is plain bytes HIP validates (an unknown or stale
    // one is an error code).
    check("hipIpcOpenMemHandle", unsafe {
        sys::hipIpcOpenMemHandle(&mut p, handle, sys::hipIpcMemLazyEnablePeerAccess)
    })?;
    Ok(p)
}

/// `hipIpcCloseMemHandle`: unmap memory opened with [`open_mem_handle`].
///
/// # Safety
/// `ptr` came from [`open_mem_handle`], is closed once, and no queued work uses it any more.
pub unsafe fn close_mem_handle(ptr: *mut c_void) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`).
    check("hipIpcCloseMemHandle", unsafe {
        sys::hipIpcCloseMemHandle(ptr)
    })
}

/// `hipIpcGetEventHandle`: a handle another process can open for `event` (created with
/// `hipEventInterprocess | hipEventDisableTiming`).
///
/// # Safety
/// `event` is a live event.
pub unsafe fn get_event_handle(event: sys::hipEvent_t) -> Result<sys::hipIpcEventHandle_t> {
    let mut handle = sys::hipIpcEventHandle_t::default();
    // SAFETY: an out-pointer to a live local; `event` is live (the caller's contract).
    check("hipIpcGetEventHandle", unsafe {
        sys::hipIpcGetEventHandle(&mut handle, event)
    })?;
    Ok(handle)
}

/// `hipIpcOpenEventHandle`: an event of this process standing for the one another process exported.
/// Destroy it with `hipEventDestroy`.
pub fn open_event_handle(handle: sys::hipIpcEventHandle_t) -> Result<sys::hipEvent_t> {
    let mut event = std::ptr::null_mut();
    // SAFETY: an out-pointer to a live local; the handle is plain bytes HIP validates.
    check("hipIpcOpenEventHandle", unsafe {
        sys::hipIpcOpenEventHandle(&mut event, handle)
    })?;
    Ok(event)
}

/// `hipMemGetAddressRange`: the start and byte size of the allocation holding `ptr`.
pub fn mem_get_address_range(ptr: *mut c_void) -> Result<(*mut c_void, usize)> {
    // hipDeviceptr_t is void* on AMD and an integer (CUdeviceptr) on NVIDIA; both hold one address.
    let (mut base, mut size) = (0usize as sys::hipDeviceptr_t, 0usize);
    // SAFETY: out-pointers to live locals; an address HIP does not know is an error code.
    check("hipMemGetAddressRange", unsafe {
        sys::hipMemGetAddressRange(&mut base, &mut size, ptr as usize as sys::hipDeviceptr_t)
    })?;
    Ok((base as usize as *mut c_void, size))
}
