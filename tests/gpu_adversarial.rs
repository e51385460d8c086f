//! Hostile inputs on a real device: extremes of every length and extent, streams dropped under pending
//! copies, wrong devices, wrong sizes. Compiled only with `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use hip::prelude::*;
use hip::{Error, Status};

fn device() -> Device {
    Device::get(0).expect("--features gpu needs a HIP device")
}

fn vector_add(d: &Device) -> Function {
    let code = ProgramBuilder::new(common::VECTOR_ADD).compile().unwrap();
    Module::load_data(d, code.code())
        .unwrap()
        .function("vector_add")
        .unwrap()
}

#[test]
fn lengths_whose_byte_size_overflows_are_refused() {
    let d = device();
    for err in [
        DeviceBuffer::<u64>::zeroed(&d, usize::MAX).unwrap_err(),
        PinnedBuffer::<u64>::zeroed(&d, usize::MAX).unwrap_err(),
        ManagedBuffer::<u64>::zeroed(&d, usize::MAX).unwrap_err(),
        DeviceBuffer::<[u8; 3]>::zeroed(&d, usize::MAX / 2).unwrap_err(),
    ] {
        assert!(matches!(err, Error::AllocationTooLarge { .. }), "{err}");
        assert_eq!(err.status(), Status::AllocationFailed);
    }
    // A size that fits in usize but not in any device is HIP's out-of-memory, not a panic.
    let err = DeviceBuffer::<u64>::zeroed(&d, usize::MAX / 8).unwrap_err();
    assert_eq!(err.status(), Status::OutOfMemory, "{err}");
}

#[test]
fn zero_sized_elements_of_usize_max_length_work_without_touching_hip() {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let mut a = DeviceBuffer::<[u32; 0]>::zeroed(&d, usize::MAX).unwrap();
    assert_eq!(a.len(), usize::MAX);
    assert_eq!(a.byte_len(), 0);
    assert_eq!(a.to_vec().unwrap().len(), usize::MAX);
    assert_eq!(a.slice(usize::MAX..).unwrap().len(), 0);
    assert_eq!(a.slice(..).unwrap().len(), usize::MAX);
    assert!(matches!(
        a.slice(..=usize::MAX),
        Err(Error::OutOfBounds { .. })
    ));
    a.zero().unwrap();
    let m = ManagedBuffer::<[u32; 0]>::zeroed(&d, usize::MAX).unwrap();
    assert_eq!(m.as_slice().unwrap().len(), usize::MAX);
    let mut p = PinnedBuffer::<[u32; 0]>::zeroed(&d, usize::MAX).unwrap();
    assert_eq!(p.as_slice().unwrap().len(), usize::MAX);
    s.copy_to_host_async(&a, &mut p).unwrap();
    s.copy_to_device_async(&p, &mut a).unwrap();
    s.memset_async(&mut a, 7).unwrap();
    assert_eq!(p.as_mut_slice().unwrap().len(), usize::MAX);
    // Empty buffers of ordinary types.
    let e = DeviceBuffer::<f64>::zeroed(&d, 0).unwrap();
    assert!(e.to_vec().unwrap().is_empty());
    assert!(ManagedBuffer::<f64>::zeroed(&d, 0)
        .unwrap()
        .as_slice()
        .unwrap()
        .is_empty());
}

#[test]
fn extreme_launch_extents_are_invalid_launches_not_panics() {
    let d = device();
    let f = vector_add(&d);
    let s = Stream::new(&d).unwrap();
    let buf = DeviceBuffer::<f32>::zeroed(&d, 16).unwrap();
    let n = 16u32;
    let m = u32::MAX;
    for cfg in [
        LaunchConfig::new((m, m, m), 64),
        LaunchConfig::new((m, m, m), (m, m, m)),
        LaunchConfig::new(1, (m, m, m)),
        LaunchConfig::new((0, m, m), 1),
        LaunchConfig::new((m, 1, 1), (1024, 1, 1)),
        LaunchConfig {
            shared_mem_bytes: m,
            ..LaunchConfig::new(1, 1)
        },
    ] {
        let mut args = LaunchArgs::new();
        args.arg(&buf).arg(&buf).arg(&buf).arg(&n);
        let err = unsafe { f.launch(&s, &cfg, &mut args) }.unwrap_err();
        assert!(matches!(err, Error::InvalidLaunch(_)), "{cfg:?}: {err}");
    }
}
