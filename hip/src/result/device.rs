//! Device identity: the calls that name a device by something stabler than its ordinal (its UUID, its PCI
//! bus id), and the reverse lookup; device limits, peer access off, stream flags and priority.

use super::check;
use crate::error::{Error, Result};
use hip_sys as sys;
use std::ffi::{CStr, CString};

/// `hipDeviceGetUuid` (HIP >= 5.1; every HIP this crate supports has it): the 16 bytes of device
/// `ordinal`'s UUID, as the runtime gives them. On NVIDIA they are the driver's UUID (`nvidia-smi -L`); on
/// AMD 16 ASCII characters, the hexadecimal unique id `rocminfo` prints after `GPU-`.
pub fn uuid(ordinal: i32) -> Result<[u8; 16]> {
    let mut raw = sys::hipUUID { bytes: [0; 16] };
    // SAFETY: an out-pointer to a live local `hipUUID` (16 bytes) and a plain ordinal; an ordinal out of
    // range is an error code.
    check("hipDeviceGetUuid", unsafe {
        sys::hipDeviceGetUuid(&mut raw, ordinal)
    })?;
    Ok(raw.bytes.map(|c| c as u8))
}

/// `hipDeviceGetPCIBusId`: device `ordinal`'s PCI address as the runtime writes it,
/// `domain:bus:device.function` in hexadecimal (`0000:3b:00.0`).
pub fn pci_bus_id(ordinal: i32) -> Result<String> {
    // CUDA asks for at least 13 bytes (`0000:00:00.0` and a NUL); room for a domain of 8 digits and more.
    let mut buf = [0 as std::ffi::c_char; 64];
    // SAFETY: `buf` is a live local array of `buf.len()` bytes, and that length is what is passed; the
    // runtime writes a NUL-terminated string within it.
    check("hipDeviceGetPCIBusId", unsafe {
        sys::hipDeviceGetPCIBusId(buf.as_mut_ptr(), buf.len() as i32, ordinal)
    })?;
    // The last byte stays NUL whatever the runtime wrote, so the string always ends inside the buffer.
    buf[buf.len() - 1] = 0;
    // SAFETY: `buf` holds a NUL (set above) and lives for the call.
    let text = unsafe { CStr::from_ptr(buf.as_ptr()) };
    Ok(text.to_string_lossy().into_owned())
}

/// `hipDeviceGetByPCIBusId`: the ordinal of the device at PCI address `bus_id` (the forms the runtime
/// accepts: `domain:bus:device.function`, `domain:bus:device`, `bus:device.function`, hexadecimal). A NUL
/// inside `bus_id` is [`Error::InteriorNul`].
pub fn device_by_pci_bus_id(bus_id: &str) -> Result<i32> {
    let c = CString::new(bus_id).map_err(|_| Error::InteriorNul {
        what: "PCI bus id",
        value: bus_id.to_string(),
    })?;
    let mut ordinal = -1;
    // SAFETY: an out-pointer to a live local `i32` and a NUL-terminated string that lives for the call.
    check("hipDeviceGetByPCIBusId", unsafe {
        sys::hipDeviceGetByPCIBusId(&mut ordinal, c.as_ptr())
    })?;
    Ok(ordinal)
}

/// `hipDeviceGetLimit` on the current device: the value of `limit` (bytes).
pub fn get_limit(limit: sys::hipLimit_t) -> Result<usize> {
    let mut v = 0usize;
    // SAFETY: an out-pointer to a live local `usize`; an unknown limit is an error code.
    check("hipDeviceGetLimit", unsafe {
        sys::hipDeviceGetLimit(&mut v, limit)
    })?;
    Ok(v)
}

/// `hipDeviceSetLimit` on the current device (HIP >= 5.7 headers; 5.2 declares no such call, and this is
/// [`Error::NotSupported`] there).
pub fn set_limit(limit: sys::hipLimit_t, value: usize) -> Result<()> {
    #[cfg(hip_device_set_limit)]
    {
        // SAFETY: plain values; an unknown limit or a bad value is an error code.
        check("hipDeviceSetLimit", unsafe {
            sys::hipDeviceSetLimit(limit, value)
        })
    }
    #[cfg(not(hip_device_set_limit))]
    {
        let _ = (limit, value);
        Err(Error::NotSupported {
            what: "hipDeviceSetLimit",
            reason:
                "the HIP headers this crate was built with (5.2) declare no hipDeviceSetLimit; \
                     HIP 5.7 added it",
        })
    }
}

/// `hipDeviceSetCacheConfig` on the current device: the L1 / shared memory preference of its kernels
/// that set none of their own.
pub fn set_cache_config(config: sys::hipFuncCache_t) -> Result<()> {
    // SAFETY: a plain value; one HIP does not know is an error code.
    check("hipDeviceSetCacheConfig", unsafe {
        sys::hipDeviceSetCacheConfig(config)
    })
}

/// `hipDeviceGetCacheConfig` on the current device.
pub fn get_cache_config() -> Result<sys::hipFuncCache_t> {
    // SAFETY: zero is a valid hipFuncCache_t (hipFuncCachePreferNone), overwritten by the call.
    let mut c: sys::hipFuncCache_t = unsafe { std::mem::zeroed() };
    // SAFETY: an out-pointer to a live local.
    check("hipDeviceGetCacheConfig", unsafe {
        sys::hipDeviceGetCacheConfig(&mut c)
    })?;
    Ok(c)
}

/// `hipDeviceDisablePeerAccess`: the current device no longer maps `peer`'s memory.
pub fn disable_peer_access(peer: i32) -> Result<()> {
    // SAFETY: a plain ordinal; one out of range, or access never enabled, is an error code.
    check("hipDeviceDisablePeerAccess", unsafe {
        sys::hipDeviceDisablePeerAccess(peer)
    })
}

/// `hipStreamGetFlags`.
///
/// # Safety
/// `stream` is live (or null: the current device's null stream).
pub unsafe fn stream_get_flags(stream: sys::hipStream_t) -> Result<u32> {
    let mut f = 0u32;
    // SAFETY: the caller's contract (`# Safety`); `f` is a live local.
    check("hipStreamGetFlags", unsafe {
        sys::hipStreamGetFlags(stream, &mut f)
    })?;
    Ok(f)
}

/// `hipStreamGetPriority`.
///
/// # Safety
/// `stream` is live (or null: the current device's null stream).
pub unsafe fn stream_get_priority(stream: sys::hipStream_t) -> Result<i32> {
    let mut p = 0i32;
    // SAFETY: the caller's contract (`# Safety`); `p` is a live local.
    check("hipStreamGetPriority", unsafe {
        sys::hipStreamGetPriority(stream, &mut p)
    })?;
    Ok(p)
}
