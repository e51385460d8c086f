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

/// `hipMemPoolCreate`: a pool of pinned device memory on device `ordinal` (`hipMemAllocationTypePinned`
/// and `hipMemLocationTypeDevice`, 1 on both platforms), with no shareable handle type.
pub fn mem_pool_create(ordinal: i32) -> Result<sys::hipMemPool_t> {
    let props = sys::hipMemPoolProps {
        allocType: 1 as _,
        location: device_location(ordinal),
        ..Default::default()
    };
    let mut pool = std::ptr::null_mut();
    // SAFETY: an out-pointer to a live local handle and a live, fully initialised properties struct
    // (zeroed reserved bytes, as HIP requires) that HIP only reads.
    check("hipMemPoolCreate", unsafe {
        sys::hipMemPoolCreate(&mut pool, &props)
    })?;
    Ok(pool)
}

/// `hipMemPoolDestroy`.
///
/// # Safety
/// `pool` came from [`mem_pool_create`] and is not used again. Allocations still outstanding are
/// released by the runtime when they are freed.
pub unsafe fn mem_pool_destroy(pool: sys::hipMemPool_t) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`).
    check("hipMemPoolDestroy", unsafe { sys::hipMemPoolDestroy(pool) })
}

/// `hipMallocFromPoolAsync`: `bytes` from `pool` in `stream`'s order.
///
/// # Safety
/// `pool` and `stream` are live, and the pool is on the stream's device.
pub unsafe fn malloc_from_pool_async(
    bytes: usize,
    pool: sys::hipMemPool_t,
    stream: sys::hipStream_t,
) -> Result<*mut c_void> {
    let mut p = std::ptr::null_mut();
    // SAFETY: the caller's contract (`# Safety`); `p` is a live local for the address.
    check("hipMallocFromPoolAsync", unsafe {
        sys::hipMallocFromPoolAsync(&mut p, bytes, pool, stream)
    })?;
    Ok(p)
}

/// `hipMemPoolGetAttribute` for an `int` attribute (the reuse policies, 1 to 3).
///
/// # Safety
/// `pool` is live and `attr`'s value is an `int`.
pub unsafe fn mem_pool_get_i32(pool: sys::hipMemPool_t, attr: sys::hipMemPoolAttr) -> Result<i32> {
    let mut v: i32 = 0;
    // SAFETY: the caller's contract; `v` holds an `int`.
    check("hipMemPoolGetAttribute", unsafe {
        sys::hipMemPoolGetAttribute(pool, attr, &mut v as *mut i32 as *mut c_void)
    })?;
    Ok(v)
}

/// `hipMemPoolSetAttribute` for an `int` attribute.
///
/// # Safety
/// `pool` is live and `attr`'s value is an `int`.
pub unsafe fn mem_pool_set_i32(
    pool: sys::hipMemPool_t,
    attr: sys::hipMemPoolAttr,
    value: i32,
) -> Result<()> {
    let mut v = value;
    // SAFETY: the caller's contract; HIP reads an `int` from `v`.
    check("hipMemPoolSetAttribute", unsafe {
        sys::hipMemPoolSetAttribute(pool, attr, &mut v as *mut i32 as *mut c_void)
    })
}

/// Device `ordinal` as a memory location (`hipMemLocationTypeDevice`, 1 on both platforms).
fn device_location(ordinal: i32) -> sys::hipMemLocation {
    sys::hipMemLocation {
        type_: 1 as _,
        id: ordinal,
    }
}

/// `hipMemPoolSetAccess` for one device: `flags` 0 (none), 1 (read) or 3 (read and write).
///
/// # Safety
/// `pool` is live.
pub unsafe fn mem_pool_set_access(pool: sys::hipMemPool_t, ordinal: i32, flags: u32) -> Result<()> {
    let desc = sys::hipMemAccessDesc {
        location: device_location(ordinal),
        flags: flags as _,
    };
    // SAFETY: the caller's contract; one live descriptor, which HIP reads.
    check("hipMemPoolSetAccess", unsafe {
        sys::hipMemPoolSetAccess(pool, &desc, 1)
    })
}

/// `hipMemPoolGetAccess` for one device: 0 (none), 1 (read) or 3 (read and write).
///
/// # Safety
/// `pool` is live.
pub unsafe fn mem_pool_get_access(pool: sys::hipMemPool_t, ordinal: i32) -> Result<u32> {
    let mut location = device_location(ordinal);
    let mut flags = 0 as _;
    // SAFETY: the caller's contract; live locals for the location (read) and the flags (written).
    check("hipMemPoolGetAccess", unsafe {
        sys::hipMemPoolGetAccess(&mut flags, pool, &mut location)
    })?;
    // The flags' type is HIP's enum on AMD and CUDA's on NVIDIA: not `u32` on every platform.
    #[allow(clippy::unnecessary_cast)]
    Ok(flags as u32)
}

/// `hipDeviceSetMemPool`: the pool `hipMallocAsync` takes from on device `ordinal`.
///
/// # Safety
/// `pool` is live and stays live while it is the device's current pool.
pub unsafe fn device_set_mem_pool(ordinal: i32, pool: sys::hipMemPool_t) -> Result<()> {
    // SAFETY: the caller's contract.
    check("hipDeviceSetMemPool", unsafe {
        sys::hipDeviceSetMemPool(ordinal, pool)
    })
}

/// `hipDeviceGetMemPool`: the device's current pool.
pub fn device_get_mem_pool(ordinal: i32) -> Result<sys::hipMemPool_t> {
    let mut pool = std::ptr::null_mut();
    // SAFETY: an out-pointer to a live local handle; an ordinal out of range is an error code.
    check("hipDeviceGetMemPool", unsafe {
        sys::hipDeviceGetMemPool(&mut pool, ordinal)
    })?;
    Ok(pool)
}
