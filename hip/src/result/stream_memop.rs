//! Stream memory operations: a stream writes a value to memory, or waits until memory holds one
//! (`hipStreamWriteValue32/64`, `hipStreamWaitValue32/64`; CUDA's `cuStreamWriteValue*` /
//! `cuStreamWaitValue*` on HIP's NVIDIA platform, through hip-sys's C mappings `hipRs*`: HIP's own are C++
//! only there).

use super::check;
use crate::error::Result;
use hip_sys as sys;
use std::ffi::c_void;

// The constants are `u32` on AMD's headers and on the NVIDIA platform's (hip-sys provides them there).
/// `hipStreamWaitValueGte`: wait until `(*ptr & mask) >= value` (CUDA: `CU_STREAM_WAIT_VALUE_GEQ`).
pub const WAIT_GTE: u32 = sys::hipStreamWaitValueGte;
/// `hipStreamWaitValueEq`: wait until `(*ptr & mask) == value`.
pub const WAIT_EQ: u32 = sys::hipStreamWaitValueEq;

/// Why [`can_use_wait_value64`] answering 0 means no stream flag, per platform.
#[cfg(hip_platform = "amd")]
pub const NO_WAIT_VALUE: &str = "the device answers hipDeviceAttributeCanUseStreamWaitValue = 0";
/// Why [`can_use_wait_value64`] answering 0 means no stream flag, per platform.
#[cfg(hip_platform = "nvidia")]
pub const NO_WAIT_VALUE: &str =
    "CUDA answers CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS = 0 for the device";

/// Whether device `ordinal` supports 64-bit stream waits and writes: `hipDeviceAttributeCanUseStreamWaitValue`
/// on AMD; on HIP's NVIDIA platform (which does not map that attribute) CUDA's
/// `CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS`, through hip-sys's `hipRsDeviceStreamMemOps64`.
pub fn can_use_wait_value64(ordinal: i32) -> Result<i32> {
    #[cfg(hip_platform = "amd")]
    return super::device_attribute(sys::hipDeviceAttributeCanUseStreamWaitValue, ordinal);
    #[cfg(hip_platform = "nvidia")]
    {
        let mut v = 0;
        // SAFETY: an out-pointer to a live local; an ordinal out of range is an error code.
        let rc = unsafe { sys::hipRsDeviceStreamMemOps64(&mut v, ordinal) };
        check("cuDeviceGetAttribute(CAN_USE_64_BIT_STREAM_MEM_OPS)", rc)?;
        Ok(v)
    }
}

/// `hipStreamWriteValue64` (flags 0: the write follows the stream's earlier work, memory barrier included).
///
/// # Safety
/// `stream` is live, and `ptr` is 8-byte aligned device-accessible memory that stays allocated until the
/// write has run.
pub unsafe fn write_value64(stream: sys::hipStream_t, ptr: *mut c_void, value: u64) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`).
    check("hipStreamWriteValue64", unsafe {
        #[cfg(hip_platform = "amd")]
        let rc = sys::hipStreamWriteValue64(stream, ptr, value, 0);
        #[cfg(hip_platform = "nvidia")]
        let rc = sys::hipRsStreamWriteValue64(stream, ptr, value, 0);
        rc
    })
}

/// `hipStreamWriteValue32` (flags 0).
///
/// # Safety
/// `stream` is live, and `ptr` is 4-byte aligned device-accessible memory that stays allocated until the
/// write has run.
pub unsafe fn write_value32(stream: sys::hipStream_t, ptr: *mut c_void, value: u32) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`).
    check("hipStreamWriteValue32", unsafe {
        #[cfg(hip_platform = "amd")]
        let rc = sys::hipStreamWriteValue32(stream, ptr, value, 0);
        #[cfg(hip_platform = "nvidia")]
        let rc = sys::hipRsStreamWriteValue32(stream, ptr, value, 0);
        rc
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
    // SAFETY: the caller's contract (`# Safety`). The full mask (CUDA has none).
    check("hipStreamWaitValue64", unsafe {
        #[cfg(hip_platform = "amd")]
        let rc = sys::hipStreamWaitValue64(stream, ptr, value, flags, u64::MAX);
        #[cfg(hip_platform = "nvidia")]
        let rc = sys::hipRsStreamWaitValue64(stream, ptr, value, flags);
        rc
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
        #[cfg(hip_platform = "amd")]
        let rc = sys::hipStreamWaitValue32(stream, ptr, value, flags, u32::MAX);
        #[cfg(hip_platform = "nvidia")]
        let rc = sys::hipRsStreamWaitValue32(stream, ptr, value, flags);
        rc
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
