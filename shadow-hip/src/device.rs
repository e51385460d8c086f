//! The fake devices: `HIP_RS_SHADOW_DEVICES` of them (1 or 2; default 1), gfx90a-like properties.

use crate::state::{self, count, current};
use crate::streams::{self, lock, rt};
use crate::{Status, INVALID_VALUE, SUCCESS};
use hip_sys as sys;
use std::ffi::{c_char, c_int};

const TOTAL_MEM: usize = 64 << 30;

#[no_mangle]
pub unsafe extern "C" fn hipGetDeviceCount(n: *mut c_int) -> Status {
    if n.is_null() {
        return INVALID_VALUE;
    }
    *n = count();
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipSetDevice(d: c_int) -> Status {
    if !(0..count()).contains(&d) {
        return sys::hipErrorInvalidDevice;
    }
    state::set_current(d);
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDevice(d: *mut c_int) -> Status {
    if d.is_null() {
        return INVALID_VALUE;
    }
    *d = current();
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxGetCurrent(ctx: *mut sys::hipCtx_t) -> Status {
    if ctx.is_null() {
        return INVALID_VALUE;
    }
    *ctx = (0x100 + current() as usize * 0x10) as sys::hipCtx_t;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipRuntimeGetVersion(v: *mut c_int) -> Status {
    if v.is_null() {
        return INVALID_VALUE;
    }
    *v = 50_222_153;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipDriverGetVersion(v: *mut c_int) -> Status {
    hipRuntimeGetVersion(v)
}

fn copy_str(dst: &mut [c_char], s: &str) {
    for (d, b) in dst.iter_mut().zip(s.bytes().chain(std::iter::once(0))) {
        *d = b as c_char;
    }
}

/// Built from ROCm >= 6 headers (`cfg(hip6)`) `hipDeviceProp_t` has the 6.x layout: exported under
/// the name such headers call, `hipGetDevicePropertiesR0600`.
#[cfg_attr(not(hip6), no_mangle)]
#[cfg_attr(hip6, export_name = "hipGetDevicePropertiesR0600")]
pub unsafe extern "C" fn hipGetDeviceProperties(p: *mut sys::hipDeviceProp_t, d: c_int) -> Status {
    if p.is_null() || !(0..count()).contains(&d) {
        return INVALID_VALUE;
    }
    // SAFETY: plain C data; all-zero bits are valid for every field.
    let mut q: sys::hipDeviceProp_t = std::mem::zeroed();
    copy_str(&mut q.name, "hip-rs shadow device");
    copy_str(&mut q.gcnArchName, "gfx90a:sramecc+:xnack-");
    q.totalGlobalMem = TOTAL_MEM;
    q.sharedMemPerBlock = 64 << 10;
    q.regsPerBlock = 65536;
    q.warpSize = 64;
    q.maxThreadsPerBlock = 1024;
    q.maxThreadsDim = [1024, 1024, 1024];
    q.maxGridSize = [i32::MAX, 65535, 65535];
    q.clockRate = 1_700_000;
    q.memoryClockRate = 1_600_000;
    q.memoryBusWidth = 4096;
    q.totalConstMem = 64 << 10;
    q.major = 9;
    q.minor = 0;
    q.multiProcessorCount = 104;
    q.l2CacheSize = 8 << 20;
    q.maxThreadsPerMultiProcessor = 2048;
    q.concurrentKernels = 1;
    q.pciBusID = 3 + d;
    q.maxSharedMemoryPerMultiProcessor = 64 << 10;
    q.canMapHostMemory = 1;
    q.cooperativeLaunch = 1;
    #[cfg(not(hip6))]
    {
        q.gcnArch = 910;
    }
    q.managedMemory = 1;
    q.concurrentManagedAccess = 1;
    q.isLargeBar = 1;
    *p = q;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetAttribute(
    v: *mut c_int,
    attr: sys::hipDeviceAttribute_t,
    d: c_int,
) -> Status {
    if v.is_null() || !(0..count()).contains(&d) {
        return INVALID_VALUE;
    }
    let mut p: sys::hipDeviceProp_t = std::mem::zeroed();
    hipGetDeviceProperties(&mut p, d);
    *v = match attr {
        sys::hipDeviceAttributeMaxThreadsPerBlock => p.maxThreadsPerBlock,
        sys::hipDeviceAttributeWarpSize => p.warpSize,
        sys::hipDeviceAttributeMultiprocessorCount => p.multiProcessorCount,
        sys::hipDeviceAttributeMaxSharedMemoryPerBlock => p.sharedMemPerBlock as c_int,
        sys::hipDeviceAttributeManagedMemory => 1,
        sys::hipDeviceAttributeConcurrentManagedAccess => 1,
        // Stream-ordered allocation (`pools.rs`): `alloc_async` and pools of one's own take this path.
        sys::hipDeviceAttributeMemoryPoolsSupported => 1,
        sys::hipDeviceAttributeCanUseStreamWaitValue => 1,
        sys::hipDeviceAttributeCooperativeLaunch => 1,
        _ => 0,
    };
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetStreamPriorityRange(
    least: *mut c_int,
    greatest: *mut c_int,
) -> Status {
    if !least.is_null() {
        *least = 0;
    }
    if !greatest.is_null() {
        *greatest = -1;
    }
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> Status {
    if !free.is_null() {
        *free = TOTAL_MEM / 2;
    }
    if !total.is_null() {
        *total = TOTAL_MEM;
    }
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceCanAccessPeer(v: *mut c_int, d: c_int, peer: c_int) -> Status {
    if v.is_null() {
        return INVALID_VALUE;
    }
    *v = c_int::from(d != peer && (0..count()).contains(&d) && (0..count()).contains(&peer));
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceEnablePeerAccess(_peer: c_int, _flags: u32) -> Status {
    SUCCESS
}

/// Waits for the queued work of every stream of the current device; the host learns all of it.
#[no_mangle]
pub unsafe extern "C" fn hipDeviceSynchronize() -> Status {
    let mut g = lock();
    let all = streams::snapshot(rt(&mut g), Some(current()), false);
    drop(streams::host_wait_all(g, all));
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipGetLastError() -> Status {
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipPeekAtLastError() -> Status {
    SUCCESS
}

fn error_name(e: Status) -> &'static [u8] {
    match e.0 {
        0 => b"hipSuccess\0",
        1 => b"hipErrorInvalidValue\0",
        2 => b"hipErrorOutOfMemory\0",
        101 => b"hipErrorInvalidDevice\0",
        400 => b"hipErrorInvalidHandle\0",
        401 => b"hipErrorIllegalState\0",
        500 => b"hipErrorNotFound\0",
        600 => b"hipErrorNotReady\0",
        801 => b"hipErrorNotSupported\0",
        900 => b"hipErrorStreamCaptureUnsupported\0",
        910 => b"hipErrorGraphExecUpdateFailure\0",
        _ => b"hipErrorUnknown\0",
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipGetErrorName(e: Status) -> *const c_char {
    error_name(e).as_ptr().cast()
}

#[no_mangle]
pub unsafe extern "C" fn hipGetErrorString(e: Status) -> *const c_char {
    error_name(e).as_ptr().cast()
}
