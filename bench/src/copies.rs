//! Copy bandwidth: synchronous copies of one size repeated, then a device synchronise; bytes / time.
use crate::baseline::{checked, Baseline};
use hip::prelude::*;
use std::ffi::c_void;
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    HostToDevicePageable,
    HostToDevicePinned,
    DeviceToHostPageable,
    DeviceToHostPinned,
    DeviceToDevice,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::HostToDevicePageable,
        Kind::HostToDevicePinned,
        Kind::DeviceToHostPageable,
        Kind::DeviceToHostPinned,
        Kind::DeviceToDevice,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Kind::HostToDevicePageable => "H2D pageable",
            Kind::HostToDevicePinned => "H2D pinned",
            Kind::DeviceToHostPageable => "D2H pageable",
            Kind::DeviceToHostPinned => "D2H pinned",
            Kind::DeviceToDevice => "D2D",
        }
    }

    pub fn crosses_host_link(self) -> bool {
        self != Kind::DeviceToDevice
    }
}

/// Buffers for every kind at the largest size; each measurement copies a prefix.
pub struct Buffers {
    pub pageable: Vec<u32>,
    pub pinned: PinnedBuffer<u32>,
    pub dev_a: DeviceBuffer<u32>,
    pub dev_b: DeviceBuffer<u32>,
}

/// Repetitions for one sample: about 64 MiB moved, at least 4, at most 2000.
pub fn reps_for(bytes: usize) -> usize {
    ((64usize << 20) / bytes).clamp(4, 2000)
}

/// The safe API: `copy_from_host`, `copy_to_host`, `copy_from_device` on views of the buffers.
pub fn safe(device: &Device, buf: &mut Buffers, kind: Kind, bytes: usize) -> hip::Result<f64> {
    let n = bytes / 4;
    let reps = reps_for(bytes);
    let t = Instant::now();
    match kind {
        Kind::HostToDevicePageable => {
            let mut dst = buf.dev_a.slice_mut(..n)?;
            for _ in 0..reps {
                dst.copy_from_host(&buf.pageable[..n])?;
            }
        }
        Kind::HostToDevicePinned => {
            let src = &buf.pinned.as_slice()?[..n];
            let mut dst = buf.dev_a.slice_mut(..n)?;
            for _ in 0..reps {
                dst.copy_from_host(src)?;
            }
        }
        Kind::DeviceToHostPageable => {
            let src = buf.dev_a.slice(..n)?;
            for _ in 0..reps {
                src.copy_to_host(&mut buf.pageable[..n])?;
            }
        }
        Kind::DeviceToHostPinned => {
            let src = buf.dev_a.slice(..n)?;
            let dst = &mut buf.pinned.as_mut_slice()?[..n];
            for _ in 0..reps {
                src.copy_to_host(dst)?;
            }
        }
        Kind::DeviceToDevice => {
            let src = buf.dev_a.slice(..n)?;
            let mut dst = buf.dev_b.slice_mut(..n)?;
            for _ in 0..reps {
                dst.copy_from_device(&src)?;
            }
        }
    }
    device.synchronize()?;
    Ok(t.elapsed().as_nanos() as f64 / reps as f64)
}

/// The same copies through the C++ baseline's hipMemcpy loop.
pub fn cpp(b: &Baseline, buf: &mut Buffers, kind: Kind, bytes: usize) -> Result<f64, String> {
    let reps = reps_for(bytes);
    let pageable = buf.pageable.as_mut_ptr() as *mut c_void;
    let pinned = buf
        .pinned
        .as_mut_slice()
        .map_err(|e| e.to_string())?
        .as_mut_ptr() as *mut c_void;
    let (a, d) = (buf.dev_a.device_ptr(), buf.dev_b.device_ptr());
    let (code, dst, src) = match kind {
        Kind::HostToDevicePageable => (0, a, pageable),
        Kind::HostToDevicePinned => (0, a, pinned),
        Kind::DeviceToHostPageable => (1, pageable, a),
        Kind::DeviceToHostPinned => (1, pinned, a),
        Kind::DeviceToDevice => (2, d, a),
    };
    let ns = checked("copy", unsafe {
        (b.copy)(code, dst, src, bytes, reps as i32)
    })?;
    Ok(ns / reps as f64)
}
