//! Device identity: the calls that name a device by something stabler than its ordinal (its UUID, its PCI
//! bus id), and the reverse lookup.

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
