//! Stream memory operations: a stream writes a value to memory, or waits until memory holds one
//! (`hipStreamWriteValue32/64`, `hipStreamWaitValue32/64`; CUDA's `cuStreamWriteValue*` /
//! `cuStreamWaitValue*` on HIP's NVIDIA platform).

use super::check;
use crate::error::Result;
use hip_sys as sys;
use std::ffi::c_void;

/// `hipStreamWaitValueGte`: wait until `(*ptr & mask) >= value` (CUDA: `CU_STREAM_WAIT_VALUE_GEQ`).
pub const WAIT_GTE: u32 = sys::hipStreamWaitValueGte as u32;
/// `hipStreamWaitValueEq`: wait until `(*ptr & mask) == value`.
pub const WAIT_EQ: u32 = sys::hipStreamWaitValueEq as u32;

/// `hipStreamWriteValue64` (flags 0: the write follows the stream's earlier work, memory barrier included).
///
/// # Safety
/// `stream` is live, and `ptr` is 8-byte aligned device-accessible memory that stays allocated until the
/// write has run.
pub unsafe fn write_value64(stream: sys::hipStream_t, ptr: *mut c_void, value: u64) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`). (HIP's NVIDIA platform takes the value as `int64_t`.)
    check("hipStreamWriteValue64", unsafe {
        sys::hipStreamWriteValue64(stream, ptr, value as _, 0)
    })
}

/// `hipStreamWriteValue32` (flags 0).
///
/// # Safety
/// `stream` is live, and `ptr` is 4-byte aligned device-accessible memory that stays allocated until the
/// write has run.
pub unsafe fn write_value32(stream: sys::hipStream_t, ptr: *mut c_void, value: u32) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`). (HIP's NVIDIA platform takes the value as `int32_t`.)
    check("hipStreamWriteValue32", unsafe {
        sys::hipStreamWriteValue32(stream, ptr, value as _, 0)
    })
}

/// `hipStreamWaitValue64`: work queued on `stream` after this waits until the 64-bit word at `ptr`
/// compares with `value` as `flags` says ([`WAIT_GTE`], [`WAIT_EQ`]), under the full mask.
///
/// # Safety
/// `stream` is live, and `ptr` is 8-byte aligned device-accessible memory that stays allocated until the
/// wait has ended.
pub unsafe fn wait_value64(
    stream: sys::hipStream_t,
    ptr: *mut c_void,
    value: u64,
    flags: u32,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`). The full mask: HIP's NVIDIA platform ignores any other
    // (and prints a warning).
    check("hipStreamWaitValue64", unsafe {
        sys::hipStreamWaitValue64(stream, ptr, value as _, flags, u64::MAX)
    })
}

/// `hipStreamWaitValue32`, as [`wait_value64`] on a 32-bit word.
///
/// # Safety
/// `stream` is live, and `ptr` is 4-byte aligned device-accessible memory that stays allocated until the
/// wait has ended.
pub unsafe fn wait_value32(
    stream: sys::hipStream_t,
    ptr: *mut c_void,
    value: u32,
    flags: u32,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`), with the full mask as in `wait_value64`.
    check("hipStreamWaitValue32", unsafe {
        sys::hipStreamWaitValue32(stream, ptr, value as _, flags, u32::MAX)
    })
}

/// `hipHostGetDevicePointer`: the device address of mapped pinned memory `host`.
///
/// # Safety
/// `host` came from `hipHostMalloc` with `hipHostMallocMapped` and is not freed.
pub unsafe fn host_get_device_pointer(host: *mut c_void) -> Result<*mut c_void> {
    let mut d = std::ptr::null_mut();
    // SAFETY: the caller's contract (`# Safety`); `d` is a live local for the address.
    check("hipHostGetDevicePointer", unsafe {
        sys::hipHostGetDevicePointer(&mut d, host, 0)
    })?;
    Ok(d)
}
