//! The thin layer: each HIP runtime call the safe types make, returning [`Result`], owning nothing.
//!
//! A reader finds every runtime call of this crate here. Functions that take raw handles or pointers are
//! `unsafe`: the caller guarantees they are live and of the right size.
//!
//! Newer groups of calls live in one submodule per HIP object ([`graph`], [`pool`], [`occupancy`],
//! [`host_fn`], [`memory`], [`device`]: identity, [`module`]: modules and kernels, re-exported here);
//! the older calls stay at this level.

use crate::error::{Error, Result};
use hip_sys as sys;
use std::ffi::c_void;
use std::mem::MaybeUninit;

pub mod device;
pub mod graph;
pub mod graph_build;
pub mod graph_query;
pub mod host_fn;
pub mod ipc;
pub mod memory;
pub mod module;
pub mod occupancy;
pub mod pool;
pub mod pool_share;
pub mod stream_memop;
pub mod texture;
pub mod vmm;
pub mod vmm_query;
#[cfg(unix)]
pub mod vmm_share;

// Module and kernel calls, at this level as they always were.
pub use module::{
    func_get_attribute, module_get_function, module_get_global, module_launch_kernel, module_load,
    module_load_data, module_unload,
};
#[cfg(hip_platform = "nvidia")]
pub use module::{module_func_set_attribute, module_func_set_cache_config};

/// Turn a `hipError_t` into a `Result`, naming the call.
#[inline]
pub fn check(call: &'static str, code: sys::hipError_t) -> Result<()> {
    if code == sys::hipSuccess {
        Ok(())
    } else {
        Err(Error::from_hip(call, code))
    }
}

/// `hipRuntimeGetVersion`.
pub fn runtime_version() -> Result<i32> {
    let mut v = 0;
    // SAFETY: the only argument is an out-pointer to a live local `i32`.
    check("hipRuntimeGetVersion", unsafe {
        sys::hipRuntimeGetVersion(&mut v)
    })?;
    Ok(v)
}

/// `hipDriverGetVersion`.
pub fn driver_version() -> Result<i32> {
    let mut v = 0;
    // SAFETY: the only argument is an out-pointer to a live local `i32`.
    check("hipDriverGetVersion", unsafe {
        sys::hipDriverGetVersion(&mut v)
    })?;
    Ok(v)
}

/// `hipGetDeviceCount`: `hipErrorNoDevice` where there is none.
pub fn device_count() -> Result<i32> {
    let mut n = 0;
    // SAFETY: the only argument is an out-pointer to a live local `i32`.
    check("hipGetDeviceCount", unsafe {
        sys::hipGetDeviceCount(&mut n)
    })?;
    Ok(n)
}

/// `hipSetDevice`.
#[inline]
pub fn set_device(ordinal: i32) -> Result<()> {
    // SAFETY: takes a plain integer; an ordinal out of range is an error code, not undefined behaviour.
    check("hipSetDevice", unsafe { sys::hipSetDevice(ordinal) })
}

/// `hipCtxGetCurrent`: the calling thread's current context (null where none is).
#[inline]
pub fn ctx_get_current() -> Result<sys::hipCtx_t> {
    let mut c = std::ptr::null_mut();
    // SAFETY: the only argument is an out-pointer to a live local handle.
    check("hipCtxGetCurrent", unsafe { sys::hipCtxGetCurrent(&mut c) })?;
    Ok(c)
}

/// `hipGetDevice`.
pub fn get_device() -> Result<i32> {
    let mut d = 0;
    // SAFETY: the only argument is an out-pointer to a live local `i32`.
    check("hipGetDevice", unsafe { sys::hipGetDevice(&mut d) })?;
    Ok(d)
}

/// `hipGetDeviceProperties`.
pub fn device_properties(ordinal: i32) -> Result<sys::hipDeviceProp_t> {
    let mut p = MaybeUninit::<sys::hipDeviceProp_t>::zeroed();
    // SAFETY: `p` is a live, writable `hipDeviceProp_t` of the layout the bindings were generated from
    // (and, with `dynamic-loading`, the symbol of that layout is the one looked up: hip-sys's loader);
    // an ordinal out of range is an error code.
    check("hipGetDeviceProperties", unsafe {
        sys::hipGetDeviceProperties(p.as_mut_ptr(), ordinal)
    })?;
    // SAFETY: `hipDeviceProp_t` is plain C data (integers, floats and char arrays) for which all-zero
    // bits are a valid value, and `p` was zero-initialised above (then filled by the runtime).
    Ok(unsafe { p.assume_init() })
}

/// `hipDeviceGetAttribute`.
pub fn device_attribute(attr: sys::hipDeviceAttribute_t, ordinal: i32) -> Result<i32> {
    let mut v = 0;
    // SAFETY: an out-pointer to a live local `i32`; an unknown attribute or ordinal is an error code.
    check("hipDeviceGetAttribute", unsafe {
        sys::hipDeviceGetAttribute(&mut v, attr, ordinal)
    })?;
    Ok(v)
}

/// `hipDeviceSynchronize` on the current device.
pub fn device_synchronize() -> Result<()> {
    // SAFETY: no arguments; it only blocks the calling thread.
    check("hipDeviceSynchronize", unsafe {
        sys::hipDeviceSynchronize()
    })
}

/// `hipMemGetInfo` on the current device: `(free, total)` bytes.
pub fn mem_get_info() -> Result<(usize, usize)> {
    let (mut free, mut total) = (0, 0);
    // SAFETY: two out-pointers to live local `usize`s.
    check("hipMemGetInfo", unsafe {
        sys::hipMemGetInfo(&mut free, &mut total)
    })?;
    Ok((free, total))
}

/// `hipDeviceCanAccessPeer`.
pub fn can_access_peer(device: i32, peer: i32) -> Result<bool> {
    let mut v = 0;
    // SAFETY: an out-pointer to a live local `i32` and two integers (bad ordinals are an error code).
    check("hipDeviceCanAccessPeer", unsafe {
        sys::hipDeviceCanAccessPeer(&mut v, device, peer)
    })?;
    Ok(v != 0)
}

/// `hipDeviceEnablePeerAccess` from the current device to `peer`.
pub fn enable_peer_access(peer: i32) -> Result<()> {
    // SAFETY: plain integers only (the peer's ordinal, and flags 0, the only value HIP accepts).
    check("hipDeviceEnablePeerAccess", unsafe {
        sys::hipDeviceEnablePeerAccess(peer, 0)
    })
}

/// `hipMalloc`.
pub fn malloc(bytes: usize) -> Result<*mut c_void> {
    let mut p = std::ptr::null_mut();
    // SAFETY: an out-pointer to a live local; a size HIP cannot serve is an error code.
    check("hipMalloc", unsafe { sys::hipMalloc(&mut p, bytes) })?;
    Ok(p)
}

/// `hipFree`. It synchronizes the device first, so queued work using the memory finishes.
///
/// # Safety
/// `ptr` came from [`malloc`] or [`malloc_managed`] and is not used afterwards.
pub unsafe fn free(ptr: *mut c_void) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `ptr` came from hipMalloc or hipMallocManaged and nothing
    // uses it afterwards.
    check("hipFree", unsafe { sys::hipFree(ptr) })
}

/// `hipHostMalloc` (pinned, page-locked host memory).
pub fn host_malloc(bytes: usize, flags: u32) -> Result<*mut c_void> {
    let mut p = std::ptr::null_mut();
    // SAFETY: an out-pointer to a live local; bad flags or sizes are an error code.
    check("hipHostMalloc", unsafe {
        sys::hipHostMalloc(&mut p, bytes, flags)
    })?;
    Ok(p)
}

/// `hipHostFree`.
///
/// # Safety
/// `ptr` came from [`host_malloc`] and is not used afterwards.
pub unsafe fn host_free(ptr: *mut c_void) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `ptr` came from hipHostMalloc and nothing uses it
    // afterwards.
    check("hipHostFree", unsafe { sys::hipHostFree(ptr) })
}

/// `hipMallocManaged`.
pub fn malloc_managed(bytes: usize, flags: u32) -> Result<*mut c_void> {
    let mut p = std::ptr::null_mut();
    // SAFETY: an out-pointer to a live local; bad flags or sizes are an error code.
    check("hipMallocManaged", unsafe {
        sys::hipMallocManaged(&mut p, bytes, flags)
    })?;
    Ok(p)
}

/// `hipMemcpy` (synchronous with respect to the host).
///
/// # Safety
/// Both pointers are valid for `bytes` in the spaces `kind` names.
pub unsafe fn memcpy(
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: sys::hipMemcpyKind,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): both pointers are valid for `bytes` in the spaces `kind`
    // names.
    check("hipMemcpy", unsafe {
        sys::hipMemcpy(dst, src, bytes, kind)
    })
}

/// `hipMemcpyAsync`.
///
/// # Safety
/// Both pointers stay valid, and unaliased by host writes, until the copy on `stream` completes.
pub unsafe fn memcpy_async(
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: sys::hipMemcpyKind,
    stream: sys::hipStream_t,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): both pointers stay valid, and unaliased by host writes,
    // until the copy on `stream` completes.
    check("hipMemcpyAsync", unsafe {
        sys::hipMemcpyAsync(dst, src, bytes, kind, stream)
    })
}

/// `hipMemcpyPeerAsync`: `bytes` from `src` on device `src_device` to `dst` on `dst_device`.
///
/// # Safety
/// Both pointers are device memory of their devices, valid for `bytes` until the copy on `stream`
/// completes.
pub unsafe fn memcpy_peer_async(
    dst: *mut c_void,
    dst_device: i32,
    src: *const c_void,
    src_device: i32,
    bytes: usize,
    stream: sys::hipStream_t,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): both are device memory of their devices, valid for
    // `bytes` until the copy on `stream` completes.
    check("hipMemcpyPeerAsync", unsafe {
        sys::hipMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, stream)
    })
}

/// `hipMemset` (bytes).
///
/// # Safety
/// `dst` is device memory valid for `bytes`.
pub unsafe fn memset(dst: *mut c_void, value: u8, bytes: usize) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `dst` is device memory valid for `bytes`.
    check("hipMemset", unsafe {
        sys::hipMemset(dst, value as i32, bytes)
    })
}

/// `hipMemsetAsync` (bytes).
///
/// # Safety
/// `dst` is device memory valid for `bytes` until the operation on `stream` completes.
pub unsafe fn memset_async(
    dst: *mut c_void,
    value: u8,
    bytes: usize,
    stream: sys::hipStream_t,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `dst` is device memory valid for `bytes` until the fill
    // on `stream` completes.
    check("hipMemsetAsync", unsafe {
        sys::hipMemsetAsync(dst, value as i32, bytes, stream)
    })
}

/// `hipStreamCreateWithPriority`.
pub fn stream_create(flags: u32, priority: i32) -> Result<sys::hipStream_t> {
    let mut s = std::ptr::null_mut();
    // SAFETY: an out-pointer to a live local handle; flags and priority are plain integers.
    check("hipStreamCreateWithPriority", unsafe {
        sys::hipStreamCreateWithPriority(&mut s, flags, priority)
    })?;
    Ok(s)
}

/// `hipStreamDestroy`.
///
/// # Safety
/// `stream` was created by [`stream_create`] and is not used afterwards.
pub unsafe fn stream_destroy(stream: sys::hipStream_t) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `stream` came from hipStreamCreate and nothing uses it
    // afterwards.
    check("hipStreamDestroy", unsafe { sys::hipStreamDestroy(stream) })
}

/// `hipDeviceGetStreamPriorityRange` on the current device: `(least, greatest)`.
pub fn stream_priority_range() -> Result<(i32, i32)> {
    let (mut least, mut greatest) = (0, 0);
    // SAFETY: two out-pointers to live local `i32`s.
    check("hipDeviceGetStreamPriorityRange", unsafe {
        sys::hipDeviceGetStreamPriorityRange(&mut least, &mut greatest)
    })?;
    Ok((least, greatest))
}

/// `hipStreamSynchronize`.
///
/// # Safety
/// `stream` is live (or null, the default stream).
pub unsafe fn stream_synchronize(stream: sys::hipStream_t) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `stream` is live, or null (the default stream).
    check("hipStreamSynchronize", unsafe {
        sys::hipStreamSynchronize(stream)
    })
}

/// `hipStreamQuery`: `Ok(true)` when all work is done, `Ok(false)` for `hipErrorNotReady`.
///
/// # Safety
/// `stream` is live (or null).
pub unsafe fn stream_query(stream: sys::hipStream_t) -> Result<bool> {
    // SAFETY: the caller's contract (`# Safety`): `stream` is live, or null (the default stream).
    ready("hipStreamQuery", unsafe { sys::hipStreamQuery(stream) })
}

/// `hipStreamWaitEvent`.
///
/// # Safety
/// Both handles are live.
pub unsafe fn stream_wait_event(stream: sys::hipStream_t, event: sys::hipEvent_t) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): both handles are live.
    check("hipStreamWaitEvent", unsafe {
        sys::hipStreamWaitEvent(stream, event, 0)
    })
}

/// `hipEventCreateWithFlags`.
pub fn event_create(flags: u32) -> Result<sys::hipEvent_t> {
    let mut e = std::ptr::null_mut();
    // SAFETY: an out-pointer to a live local handle; bad flags are an error code.
    check("hipEventCreateWithFlags", unsafe {
        sys::hipEventCreateWithFlags(&mut e, flags)
    })?;
    Ok(e)
}

/// `hipEventDestroy`.
///
/// # Safety
/// `event` was created by [`event_create`] and is not used afterwards.
pub unsafe fn event_destroy(event: sys::hipEvent_t) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `event` came from hipEventCreate and nothing uses it
    // afterwards.
    check("hipEventDestroy", unsafe { sys::hipEventDestroy(event) })
}

/// `hipEventRecord`.
///
/// # Safety
/// Both handles are live.
pub unsafe fn event_record(event: sys::hipEvent_t, stream: sys::hipStream_t) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): both handles are live.
    check("hipEventRecord", unsafe {
        sys::hipEventRecord(event, stream)
    })
}

/// `hipEventSynchronize`.
///
/// # Safety
/// `event` is live.
pub unsafe fn event_synchronize(event: sys::hipEvent_t) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `event` is live.
    check("hipEventSynchronize", unsafe {
        sys::hipEventSynchronize(event)
    })
}

/// `hipEventQuery`: `Ok(true)` once the recorded work is done.
///
/// # Safety
/// `event` is live.
pub unsafe fn event_query(event: sys::hipEvent_t) -> Result<bool> {
    // SAFETY: the caller's contract (`# Safety`): `event` is live.
    ready("hipEventQuery", unsafe { sys::hipEventQuery(event) })
}

/// `hipEventElapsedTime` in milliseconds.
///
/// # Safety
/// Both events are live.
pub unsafe fn event_elapsed_time(start: sys::hipEvent_t, end: sys::hipEvent_t) -> Result<f32> {
    let mut ms = 0.0;
    // SAFETY: the caller's contract (`# Safety`): both events are live; `ms` is a live local HIP writes one
    // float to.
    check("hipEventElapsedTime", unsafe {
        sys::hipEventElapsedTime(&mut ms, start, end)
    })?;
    Ok(ms)
}

/// The shared memory per block a kernel may use once it opted in: `hipDeviceAttributeSharedMemPerBlockOptin`
/// on AMD (where the runtime may not know it: the caller falls back to the plain limit), and
/// `cudaDevAttrMaxSharedMemoryPerBlockOptin` on HIP's NVIDIA platform (HIP 5.2.3 does not map the
/// attribute there).
pub fn shared_mem_per_block_optin(ordinal: i32) -> Result<i32> {
    #[cfg(hip_platform = "nvidia")]
    {
        let mut v = 0;
        // SAFETY: `v` is a valid out-pointer for the call; any ordinal is accepted (an invalid one errors).
        check("cudaDeviceGetAttribute", unsafe {
            sys::hipRsDeviceSharedMemPerBlockOptin(&mut v, ordinal)
        })?;
        Ok(v)
    }
    #[cfg(not(hip_platform = "nvidia"))]
    {
        device_attribute(sys::hipDeviceAttributeSharedMemPerBlockOptin, ordinal)
    }
}

fn ready(call: &'static str, code: sys::hipError_t) -> Result<bool> {
    if code == sys::hipErrorNotReady {
        Ok(false)
    } else {
        check(call, code).map(|()| true)
    }
}
