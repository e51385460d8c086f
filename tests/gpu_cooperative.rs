//! Cooperative launches on a real device (issue 57, family 5), with kernels that synchronize the whole
//! grid through cooperative groups (`this_grid().sync()`), compiled by HIPRTC (NVRTC on HIP's NVIDIA
//! platform, given the CUDA include folder for `cooperative_groups.h`). Compiled only with
//! `--features gpu`.
//!
//! Ported from hip-tests (`catch/unit/cooperativeGrps`): `hipLaunchCooperativeKernel` basic (a grid-wide
//! sum, as its `test_gws` kernel: every block writes a partial sum, the grid syncs, block 0 adds them),
//! grid sync (every block writes, the grid syncs, every block reads another block's value), and the
//! co-residency limit (the largest grid the occupancy query allows runs; one block more is refused, here
//! by the crate before anything is sent, with the numbers).
#![cfg(feature = "gpu")]
mod common;

use common::cooperative::builder;
use common::device;
use hip::launch::cooperative::CALL;
use hip::prelude::*;
use hip::Error;

const BLOCK: u32 = 256;

/// The kernels, compiled for `d` (on NVIDIA with CUDA's include folder: `common::cooperative::builder`).
fn module(d: &Device) -> Module {
    let code = builder(&d.arch_name().unwrap())
        .compile()
        .unwrap_or_else(|e| panic!("{e}"));
    Module::load_data(d, code.code()).unwrap()
}

/// Skip (with a note) where the build or the device cannot launch cooperatively (HIP 5.2.3 headers:
/// `the_device_reports_cooperative_launch_and_the_build_has_it` checks the refusal); otherwise the module.
fn setup() -> Option<(Device, Module)> {
    let d = device();
    if !hip::launch::cooperative::HAS_COOPERATIVE_LAUNCH {
        eprintln!("these HIP headers have no {CALL}: skipped");
        return None;
    }
    if !d.properties().unwrap().cooperative_launch {
        eprintln!("device 0 has no cooperative launch: skipped");
        return None;
    }
    let m = module(&d);
    Some((d, m))
}

fn launch(k: &Function, s: &Stream, grid: u32, args: &mut LaunchArgs<'_>) -> hip::Result<()> {
    // SAFETY: every call passes the arguments its kernel takes, buffers the kernel writes with arg_mut,
    // sized for `grid` blocks of BLOCK threads; every thread of every block reaches the grid barrier.
    unsafe { k.launch_cooperative(s, &LaunchConfig::new(grid, BLOCK), args) }
}

#[test]
fn every_block_reads_what_another_block_wrote_before_the_grid_barrier() {
    let Some((d, m)) = setup() else { return };
    let k = m.function("exchange").unwrap();
    let s = Stream::new(&d).unwrap();
    let max = k.max_cooperative_grid(BLOCK, 0).unwrap();
    eprintln!("largest co-resident grid at {BLOCK} threads: {max} blocks");
    assert!(max >= 1);
    for (round, grid) in [1, 2, max / 2, max - 1, max]
        .into_iter()
        .filter(|&g| g >= 1)
        .enumerate()
    {
        let total = (grid * BLOCK) as usize;
        let salt = 77 + round as u32;
        let mut slots = DeviceBuffer::<u32>::zeroed(&d, total).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&d, total).unwrap();
        let mut args = LaunchArgs::new();
        args.arg_mut(&mut slots).arg_mut(&mut out).arg(&salt);
        launch(&k, &s, grid, &mut args).unwrap();
        let value = |i: usize| (i as u32).wrapping_mul(2654435761).wrapping_add(salt);
        let want: Vec<u32> = (0..total)
            .map(|i| value((i + BLOCK as usize) % total))
            .collect();
        assert_eq!(out.to_vec().unwrap(), want, "grid of {grid} blocks");
    }
}

#[test]
fn a_grid_wide_sum_matches_the_host() {
    let Some((d, m)) = setup() else { return };
    let k = m.function("grid_sum").unwrap();
    let s = Stream::new(&d).unwrap();
    let grid = k.max_cooperative_grid(BLOCK, 0).unwrap();
    let n = 1u32 << 20;
    let host: Vec<u32> = (0..n).map(|i| i % 1000).collect();
    let x = DeviceBuffer::from_slice(&d, &host).unwrap();
    let mut partial = DeviceBuffer::<u32>::zeroed(&d, grid as usize).unwrap();
    let mut total = DeviceBuffer::<u64>::zeroed(&d, 1).unwrap();
    let mut args = LaunchArgs::new();
    args.arg(&x)
        .arg(&n)
        .arg_mut(&mut partial)
        .arg_mut(&mut total);
    launch(&k, &s, grid, &mut args).unwrap();
    let want: u64 = host.iter().map(|&v| u64::from(v)).sum();
    assert_eq!(total.to_vec().unwrap(), [want]);
}

#[test]
fn the_largest_grid_runs_and_one_block_more_is_refused_with_the_numbers() {
    let Some((d, m)) = setup() else { return };
    let k = m.function("exchange").unwrap();
    let s = Stream::new(&d).unwrap();
    let per = k.max_active_blocks_per_multiprocessor(BLOCK, 0).unwrap();
    let sms = d
        .attribute(hip::sys::hipDeviceAttributeMultiprocessorCount)
        .unwrap() as u32;
    let max = k.max_cooperative_grid(BLOCK, 0).unwrap();
    assert_eq!(max, per * sms);
    let total = ((max + 1) * BLOCK) as usize;
    let mut slots = DeviceBuffer::<u32>::zeroed(&d, total).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(&d, total).unwrap();
    let salt = 5u32;
    let mut args = LaunchArgs::new();
    args.arg_mut(&mut slots).arg_mut(&mut out).arg(&salt);
    let e = launch(&k, &s, max + 1, &mut args).unwrap_err();
    eprintln!("{e}");
    let Error::InvalidLaunch(text) = &e else {
        panic!("{e:?}")
    };
    for part in [
        format!("{} blocks", max + 1),
        format!("{per} active blocks per multiprocessor"),
        format!("{sms} multiprocessors"),
        format!("{max} blocks at most"),
    ] {
        assert!(text.contains(&part), "{part}: {text}");
    }
    assert_eq!(out.to_vec().unwrap(), vec![0; total], "nothing was sent");
    let mut args = LaunchArgs::new();
    args.arg_mut(&mut slots).arg_mut(&mut out).arg(&salt);
    launch(&k, &s, max, &mut args).unwrap();
    s.synchronize().unwrap();
    // Dynamic shared memory lowers the limit as the occupancy query says.
    let shared = (d.max_shared_mem_per_block() / 2) as u32;
    let with_shared = k.max_cooperative_grid(BLOCK, shared).unwrap();
    let per_shared = k
        .max_active_blocks_per_multiprocessor(BLOCK, shared as usize)
        .unwrap();
    assert_eq!(with_shared, per_shared * sms);
    assert!(with_shared <= max);
}

#[test]
fn a_cooperative_kernel_waits_for_a_slow_producer_on_another_stream() {
    let Some((d, m)) = setup() else { return };
    let (fill, gather) = (
        m.function("slow_fill").unwrap(),
        m.function("gather").unwrap(),
    );
    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let grid = gather.max_cooperative_grid(BLOCK, 0).unwrap().min(64);
    let n = grid * BLOCK;
    let mut x = DeviceBuffer::<u32>::zeroed(&d, n as usize).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&d, n as usize).unwrap();
    for round in 1..=8u32 {
        let value = round * 1000;
        let cycles = 20_000_000i64; // about 10 ms before it writes
        let mut args = LaunchArgs::new();
        args.arg_mut(&mut x).arg(&value).arg(&n).arg(&cycles);
        // SAFETY: slow_fill(unsigned*, unsigned, unsigned, long long) writes x[..n].
        unsafe { fill.launch(&a, &LaunchConfig::for_num_elems(n), &mut args) }.unwrap();
        let mut args = LaunchArgs::new();
        args.arg(&x).arg_mut(&mut y);
        launch(&gather, &b, grid, &mut args).unwrap();
        let want: Vec<u32> = (0..n).map(|i| 2 * value + i + (i + BLOCK) % n).collect();
        assert_eq!(y.to_vec().unwrap(), want, "round {round}");
    }
}

/// A cooperative launch recorded in a stream capture replays as a cooperative kernel node: every block
/// reads what another block wrote before the grid barrier, at each replay (the output zeroed between
/// them); a grid one block past the co-resident limit is refused in the capture, nothing recorded.
#[test]
fn a_captured_cooperative_launch_replays_with_its_grid_barrier() {
    let Some((d, m)) = setup() else { return };
    let k = m.function("exchange").unwrap();
    let s = Stream::new(&d).unwrap();
    let max = k.max_cooperative_grid(BLOCK, 0).unwrap();
    let grid = max.min(32);
    let total = (grid * BLOCK) as usize;
    let salt = 5u32;
    let mut slots = DeviceBuffer::<u32>::zeroed(&d, total).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(&d, total).unwrap();
    // Allocated before the capture: CUDA refuses hipMalloc on a thread whose stream is capturing.
    let (mut a, mut b) = (
        DeviceBuffer::<u32>::zeroed(&d, ((max + 1) * BLOCK) as usize).unwrap(),
        DeviceBuffer::<u32>::zeroed(&d, ((max + 1) * BLOCK) as usize).unwrap(),
    );
    let mut cap = s.begin_capture(CaptureMode::ThreadLocal).unwrap();
    {
        let mut args = LaunchArgs::new();
        args.arg_mut(&mut slots).arg_mut(&mut out).arg(&salt);
        // SAFETY: exchange(unsigned*, unsigned*, unsigned) as the module's, sized for `grid` blocks;
        // every block reaches the grid barrier.
        unsafe { cap.launch_cooperative(&k, &LaunchConfig::new(grid, BLOCK), &mut args) }.unwrap();
    }
    let mut big_args = LaunchArgs::new();
    big_args.arg_mut(&mut a).arg_mut(&mut b).arg(&salt);
    // SAFETY: as above (refused before anything is recorded).
    let e =
        unsafe { cap.launch_cooperative(&k, &LaunchConfig::new(max + 1, BLOCK), &mut big_args) }
            .unwrap_err();
    assert!(matches!(e, Error::InvalidLaunch(_)), "{e}");
    let mut exec = cap.end().unwrap().instantiate().unwrap();
    let value = |i: usize| (i as u32).wrapping_mul(2654435761).wrapping_add(salt);
    let want: Vec<u32> = (0..total)
        .map(|i| value((i + BLOCK as usize) % total))
        .collect();
    for replay in 0..3 {
        s.fill_async(&mut out, 0).unwrap();
        exec.launch(&s).unwrap();
        assert_eq!(out.to_vec().unwrap(), want, "replay {replay}");
    }
}

#[test]
fn the_device_reports_cooperative_launch_and_the_build_has_it() {
    let d = device();
    let attr = d
        .attribute(hip::sys::hipDeviceAttributeCooperativeLaunch)
        .unwrap();
    assert_eq!(d.properties().unwrap().cooperative_launch, attr != 0);
    eprintln!(
        "hipDeviceAttributeCooperativeLaunch = {attr}, build has {CALL}: {}",
        hip::launch::cooperative::HAS_COOPERATIVE_LAUNCH
    );
    if !hip::launch::cooperative::HAS_COOPERATIVE_LAUNCH {
        // HIP 5.2.3 headers: the launch is NotSupported, naming the call, even on a capable device.
        // (A kernel without cooperative groups: 5.2.3's HIPRTC has none.)
        let m = common::load(
            &d,
            r#"extern "C" __global__ void exchange(unsigned* s, unsigned* o, unsigned salt) {}"#,
        );
        let k = m.function("exchange").unwrap();
        let s = Stream::new(&d).unwrap();
        let mut slots = DeviceBuffer::<u32>::zeroed(&d, BLOCK as usize).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&d, BLOCK as usize).unwrap();
        let mut args = LaunchArgs::new();
        args.arg_mut(&mut slots).arg_mut(&mut out).arg(&1u32);
        let e = launch(&k, &s, 1, &mut args).unwrap_err();
        assert!(
            matches!(e, Error::NotSupported { what, .. } if what == CALL),
            "{e:?}"
        );
    }
}
