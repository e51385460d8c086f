//! Stream-ordered allocation (`hipMallocAsync`, `hipFreeAsync`) and memory pools.

use super::check;
use crate::error::Result;
use hip_sys as sys;
use std::ffi::c_void;

/// `hipMallocAsync`: `bytes` from the device's current pool, usable by work queued on `stream` after this.
///
/// # Safety
/// `stream` is live.
pub unsafe fn malloc_async(bytes: usize, stream: sys::hipStream_t) -> Result<*mut c_void> {
    let mut p = std::ptr::null_mut();
    // SAFETY: the caller's contract (`# Safety`): `stream` is live; `p` is a live local for the address.
    check("hipMallocAsync", unsafe {
        sys::hipMallocAsync(&mut p, bytes, stream)
    })?;
    Ok(p)
}

/// `hipFreeAsync`: return `ptr` to its pool once the work queued on `stream` before this is done.
///
/// # Safety
/// `ptr` came from [`malloc_async`], `stream` is live, and no work queued later on another stream uses
/// `ptr` without first waiting for `stream`.
pub unsafe fn free_async(ptr: *mut c_void, stream: sys::hipStream_t) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `ptr` came from hipMallocAsync, `stream` is live, and
    // later work on other streams using `ptr` first waits for `stream`.
    check("hipFreeAsync", unsafe { sys::hipFreeAsync(ptr, stream) })
}

/// `hipDeviceGetDefaultMemPool`.
pub fn device_default_mem_pool(ordinal: i32) -> Result<sys::hipMemPool_t> {
    let mut pool = std::ptr::null_mut();
    // SAFETY: an out-pointer to a live local handle; an ordinal out of range is an error code.
    check("hipDeviceGetDefaultMemPool", unsafe {
        sys::hipDeviceGetDefaultMemPool(&mut pool, ordinal)
    })?;
    Ok(pool)
}

/// `hipMemPoolAttrReleaseThreshold` (4 on both platforms: CUDA's `cudaMemPoolAttrReleaseThreshold` is
/// 4 too, and HIP's NVIDIA headers map the type without naming the values).
pub const RELEASE_THRESHOLD: sys::hipMemPoolAttr = 4 as sys::hipMemPoolAttr;

/// `hipMemPoolGetAttribute` for a 64-bit attribute such as [`RELEASE_THRESHOLD`].
///
/// # Safety
/// `pool` is live and `attr` is an attribute whose value is a `u64`.
pub unsafe fn mem_pool_get_u64(pool: sys::hipMemPool_t, attr: sys::hipMemPoolAttr) -> Result<u64> {
    let mut v: u64 = 0;
    // SAFETY: the caller's contract (`# Safety`): `pool` is live and `attr`'s value is a `u64`, which `v`
    // holds.
    check("hipMemPoolGetAttribute", unsafe {
        sys::hipMemPoolGetAttribute(pool, attr, &mut v as *mut u64 as *mut c_void)
    })?;
    Ok(v)
}

/// `hipMemPoolSetAttribute` for a 64-bit attribute such as [`RELEASE_THRESHOLD`].
///
/// # Safety
/// `pool` is live and `attr` is an attribute whose value is a `u64`.
pub unsafe fn mem_pool_set_u64(
    pool: sys::hipMemPool_t,
    attr: sys::hipMemPoolAttr,
    value: u64,
) -> Result<()> {
    let mut v = value;
    // SAFETY: the caller's contract (`# Safety`): `pool` is live and `attr`'s value is a `u64`, which `v`
    // holds (HIP reads it).
    check("hipMemPoolSetAttribute", unsafe {
        sys::hipMemPoolSetAttribute(pool, attr, &mut v as *mut u64 as *mut c_void)
    })
}

/// `hipMemPoolTrimTo`: release pool memory to the system until at most `keep_bytes` unused stay reserved.
///
/// # Safety
/// `pool` is live.
pub unsafe fn mem_pool_trim_to(pool: sys::hipMemPool_t, keep_bytes: usize) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `pool` is live.
    check("hipMemPoolTrimTo", unsafe {
        sys::hipMemPoolTrimTo(pool, keep_bytes)
    })
}
