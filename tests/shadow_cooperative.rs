//! Cooperative launches under the shadow HIP runtime (scripts/shadow.sh): the co-residency numbers come
//! from the shadow's occupancy answer and multiprocessor count, one block past them is refused before
//! anything is sent, and a cooperative kernel reading a buffer a slow kernel on another stream wrote is
//! ordered after it (no report from the race detector). Where the HIP headers lack
//! `hipModuleLaunchCooperativeKernel` (5.2.3, the host's) the launch is `NotSupported` naming it, which
//! is what runs here; the ordering runs where the crate is built from 5.7 or later headers.
#![cfg(feature = "shadow")]

mod shadow;

use hip::launch::cooperative::{CALL, HAS_COOPERATIVE_LAUNCH};
use hip::prelude::*;
use hip::Error;
use shadow::{assert_no_reports, ShadowKernel};

const N: usize = 4096;
const KERNELS: &str = r#"
extern "C" __global__ void produce(unsigned int* x, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = i;
}
extern "C" __global__ void gather(const unsigned int* x, unsigned int* y, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[n - 1 - i];
}
"#;

fn module(d: &Device) -> Module {
    let code = shadow::compile(
        KERNELS,
        &[
            ShadowKernel("produce", b"w\0", 1500),
            ShadowKernel("gather", b"rw\0", 300),
        ],
    );
    Module::load_data(d, &code).unwrap()
}

#[test]
fn the_grid_limit_is_occupancy_times_multiprocessors_and_one_block_more_is_refused() {
    let d = Device::get(0).unwrap();
    let m = module(&d);
    let k = m.function("gather").unwrap();
    let sms = d
        .attribute(hip::sys::hipDeviceAttributeMultiprocessorCount)
        .unwrap() as u32;
    assert_eq!(
        d.attribute(hip::sys::hipDeviceAttributeCooperativeLaunch)
            .unwrap(),
        1
    );
    let per = k.max_active_blocks_per_multiprocessor(256, 0).unwrap();
    for flags in [
        hip::OccupancyFlags::DEFAULT,
        hip::OccupancyFlags::DISABLE_CACHING_OVERRIDE,
    ] {
        assert_eq!(
            k.max_active_blocks_per_multiprocessor_with_flags(256, 0, flags)
                .unwrap(),
            per
        );
    }
    let max = k.max_cooperative_grid(256, 0).unwrap();
    assert_eq!(max, per * sms);
    let x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let s = Stream::new(&d).unwrap();
    let n = N as u32;
    let mut args = LaunchArgs::new();
    args.arg(&x).arg_mut(&mut y).arg(&n);
    // SAFETY: gather(const unsigned*, unsigned*, unsigned) reads x[..n], writes y[..n]; no grid barrier.
    let e = unsafe { k.launch_cooperative(&s, &LaunchConfig::new(max + 1, 256), &mut args) }
        .unwrap_err();
    eprintln!("{e}");
    if HAS_COOPERATIVE_LAUNCH {
        let text = e.to_string();
        assert!(matches!(e, Error::InvalidLaunch(_)), "{e:?}");
        for part in [
            format!("{} blocks", max + 1),
            format!("{per} active blocks per multiprocessor"),
            format!("{sms} multiprocessors"),
            format!("{max} blocks at most"),
        ] {
            assert!(text.contains(&part), "{part}: {text}");
        }
    } else {
        assert!(
            matches!(e, Error::NotSupported { what, .. } if what == CALL),
            "{e:?}"
        );
    }
    assert_no_reports();
}

#[test]
fn a_cooperative_kernel_is_ordered_after_a_slow_producer_on_another_stream() {
    let d = Device::get(0).unwrap();
    let m = module(&d);
    let (produce, gather) = (
        m.function("produce").unwrap(),
        m.function("gather").unwrap(),
    );
    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let n = N as u32;
    let grid = gather.max_cooperative_grid(256, 0).unwrap().min(16);
    for _ in 0..4 {
        let mut args = LaunchArgs::new();
        args.arg_mut(&mut x).arg(&n);
        // SAFETY: produce(unsigned*, unsigned) writes x[..n].
        unsafe { produce.launch(&a, &LaunchConfig::for_num_elems(n), &mut args) }.unwrap();
        let mut args = LaunchArgs::new();
        args.arg(&x).arg_mut(&mut y).arg(&n);
        // SAFETY: as above; the shadow runs no body, and the grid is within the co-resident limit.
        let r = unsafe { gather.launch_cooperative(&b, &LaunchConfig::new(grid, 256), &mut args) };
        match r {
            Ok(()) => assert!(std::hint::black_box(HAS_COOPERATIVE_LAUNCH)),
            Err(Error::NotSupported { what, .. }) if what == CALL => {
                assert!(!std::hint::black_box(HAS_COOPERATIVE_LAUNCH));
                return;
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    b.synchronize().unwrap();
    a.synchronize().unwrap();
    assert_no_reports();
}

/// A cooperative launch recorded in a capture, after a slow producer on another stream: each replay is
/// ordered after the producer's write (no report). `NotSupported` naming the call where the headers lack
/// it (5.2.3, the host's), as for a direct launch.
#[test]
fn a_captured_cooperative_launch_is_ordered_at_each_replay() {
    let d = Device::get(0).unwrap();
    let m = module(&d);
    let (produce, gather) = (
        m.function("produce").unwrap(),
        m.function("gather").unwrap(),
    );
    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let n = N as u32;
    let grid = gather.max_cooperative_grid(256, 0).unwrap().min(16);
    let mut cap = b.begin_capture(CaptureMode::ThreadLocal).unwrap();
    let r = {
        let mut args = LaunchArgs::new();
        args.arg(&x).arg_mut(&mut y).arg(&n);
        // SAFETY: gather(const unsigned*, unsigned*, unsigned); the shadow runs no body.
        unsafe { cap.launch_cooperative(&gather, &LaunchConfig::new(grid, 256), &mut args) }
    };
    match r {
        Ok(()) => assert!(std::hint::black_box(HAS_COOPERATIVE_LAUNCH)),
        Err(Error::NotSupported { what, .. }) if what == CALL => {
            assert!(!std::hint::black_box(HAS_COOPERATIVE_LAUNCH));
            return;
        }
        Err(e) => panic!("{e:?}"),
    }
    let mut exec = cap.end().unwrap().instantiate().unwrap();
    for _ in 0..3 {
        let mut args = LaunchArgs::new();
        args.arg_mut(&mut x).arg(&n);
        // SAFETY: produce(unsigned*, unsigned) writes x[..n].
        unsafe { produce.launch(&a, &LaunchConfig::for_num_elems(n), &mut args) }.unwrap();
        exec.launch(&b).unwrap();
    }
    b.synchronize().unwrap();
    a.synchronize().unwrap();
    assert_no_reports();
}
