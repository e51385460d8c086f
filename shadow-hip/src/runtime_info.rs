//! Queries and settings without ordering: pointer attributes, device limits, the device cache
//! preference, stream flags and priority, peer access off. Answers shaped like HIP's, from the shadow's own tables.

use crate::memory::{self, MemKind};
use crate::streams::{self, lock, rt};
use crate::{Status, INVALID_HANDLE, INVALID_VALUE, SUCCESS};
use hip_sys as sys;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// Stack size, printf FIFO, malloc heap (bytes), as `hipLimit_t` 0, 1, 2 index them; one set for all
/// devices.
static LIMITS: Mutex<[usize; 3]> = Mutex::new([1024, 1 << 20, 8 << 20]);

/// The device-wide cache preference (`hipFuncCache_t`), one for all devices: kept as set, as CUDA keeps
/// it (AMD documents the hint as ignored).
static CACHE_CONFIG: AtomicU32 = AtomicU32::new(0);

#[no_mangle]
pub unsafe extern "C" fn hipDeviceSetCacheConfig(config: sys::hipFuncCache_t) -> Status {
    if config > 3 {
        return INVALID_VALUE;
    }
    CACHE_CONFIG.store(config, Ordering::Relaxed);
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetCacheConfig(config: *mut sys::hipFuncCache_t) -> Status {
    if config.is_null() {
        return INVALID_VALUE;
    }
    *config = CACHE_CONFIG.load(Ordering::Relaxed);
    SUCCESS
}

/// `hipPointerGetAttributes`: the shadow's allocations; anything else is `hipErrorInvalidValue` (as HIP
/// 5.x answers for memory it does not know). The memory type is written by position (its member's name
/// differs between HIP versions); managed memory is reported as device memory with `isManaged`, as HIP
/// 5.2 does, or as `hipMemoryTypeManaged` where the headers name it.
#[no_mangle]
pub unsafe extern "C" fn hipPointerGetAttributes(
    a: *mut sys::hipPointerAttribute_t,
    p: *const c_void,
) -> Status {
    if a.is_null() {
        return INVALID_VALUE;
    }
    let Some((base, _, kind, flags)) = memory::find(p as usize) else {
        return INVALID_VALUE;
    };
    if memory::live_block(base).is_none() {
        return INVALID_VALUE;
    }
    #[cfg(hip6)]
    let managed_type = sys::hipMemoryTypeManaged;
    #[cfg(not(hip6))]
    let managed_type = sys::hipMemoryTypeDevice;
    let ty = match kind {
        MemKind::Device | MemKind::Object => sys::hipMemoryTypeDevice,
        MemKind::Array => sys::hipMemoryTypeArray,
        MemKind::Pinned => sys::hipMemoryTypeHost,
        MemKind::Managed => managed_type,
    };
    let mut out: sys::hipPointerAttribute_t = std::mem::zeroed();
    *(&mut out as *mut sys::hipPointerAttribute_t).cast::<sys::hipMemoryType>() = ty;
    out.device = crate::state::current();
    out.devicePointer = p as *mut c_void;
    out.hostPointer = if kind == MemKind::Device {
        std::ptr::null_mut()
    } else {
        p as *mut c_void
    };
    out.isManaged = c_int::from(kind == MemKind::Managed);
    out.allocationFlags = flags;
    *a = out;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetLimit(v: *mut usize, limit: sys::hipLimit_t) -> Status {
    match LIMITS.lock().unwrap().get(limit as usize) {
        Some(&l) if !v.is_null() => {
            *v = l;
            SUCCESS
        }
        _ => sys::hipErrorUnsupportedLimit,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceSetLimit(limit: sys::hipLimit_t, value: usize) -> Status {
    match LIMITS.lock().unwrap().get_mut(limit as usize) {
        Some(l) => {
            *l = value;
            SUCCESS
        }
        None => sys::hipErrorUnsupportedLimit,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamGetFlags(s: sys::hipStream_t, flags: *mut u32) -> Status {
    let mut g = lock();
    let rt = rt(&mut g);
    match rt.streams.get(&streams::key(s as usize)) {
        Some(st) if !flags.is_null() => {
            *flags = if st.non_blocking {
                sys::hipStreamNonBlocking
            } else {
                0
            };
            SUCCESS
        }
        Some(_) => INVALID_VALUE,
        None => INVALID_HANDLE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamGetPriority(s: sys::hipStream_t, priority: *mut c_int) -> Status {
    let mut g = lock();
    let rt = rt(&mut g);
    let sid = streams::key(s as usize);
    if !rt.streams.contains_key(&sid) {
        return INVALID_HANDLE;
    }
    if priority.is_null() {
        return INVALID_VALUE;
    }
    *priority = rt.priorities.get(&sid).copied().unwrap_or(0);
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceDisablePeerAccess(peer: c_int) -> Status {
    if (0..crate::state::count()).contains(&peer) && peer != crate::state::current() {
        SUCCESS
    } else {
        INVALID_VALUE
    }
}
