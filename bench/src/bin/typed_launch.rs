//! The `#[kernel]` launcher against the raw launch, paired in one run (issue 58):
//!
//! 1. host time per launch: `typed::vector_add::launch` (safe, generated) against
//!    `Function::launch_with_index` with the same `LaunchArgs` built by hand (unsafe), on the same loaded
//!    function, the same three tracked buffers, 256 elements (so the GPU is never the bottleneck);
//! 2. device time per launch over 2^26 elements, memory-bound: the typed `vector_add` (each read
//!    `In::get`-checked, the store `Out::mine`-checked) against the raw `vector_add` (one `i < n`
//!    check), both Rust-built;
//! 3. device time per launch, compute-bound: the typed, tiled `matmul_f32` (`Shared<f32, 2>`: checked
//!    slot reads, the live-lane check before each barrier on AMD, `Out2d` store) against
//!    `matmul_f32_unchecked` (the same algorithm, raw pointers, `gpu::sync_threads`), 1024 x 1024 x 1024,
//!    16 x 16 tiles; both results checked against the host (256^3) and against each other (1024^3).
//!
//! `cargo run --release -p hip-rs-bench --bin typed_launch [-- ELEMENTS]`. Rounds alternate which side goes
//! first; both kernels' results are checked before timing.
#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;
#[path = "../../../kernels/src/typed.rs"]
#[allow(dead_code)]
mod typed;

use hip::launch::ThreadIndex;
use hip::prelude::*;
use stats::{paired_ratio, Samples};
use std::process::ExitCode;
use std::time::Instant;

const AMDGPU: &[u8] = include_bytes!("../../../kernels/prebuilt/hip_rs_kernels.hipfb");
const PTX: &[u8] = include_bytes!("../../../kernels/prebuilt/hip_rs_kernels-sm_70.ptx");
const ROUNDS: usize = 21;
const HOST_LAUNCHES: u32 = 2000;
const DEVICE_LAUNCHES: u32 = 20;

fn main() -> ExitCode {
    let n: usize = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 1 << 26,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: typed_launch [ELEMENTS > 0]");
            return ExitCode::from(2);
        }
    };
    match run(n) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("typed_launch: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(n: usize) -> hip::Result<()> {
    let Some(device) = Device::first_usable(|why| println!("{why}\nnothing to time"))? else {
        return Ok(());
    };
    let props = device.properties()?;
    let image = if hip::PLATFORM == "amd" { AMDGPU } else { PTX };
    let module = Module::load_data(&device, image)?;
    let typed = typed::vector_add::load(&module)?;
    let raw = module.function("vector_add")?;
    let stream = Stream::new(&device)?;
    let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 777) as f32 * 0.25).collect();
    let (d_a, d_b) = (
        DeviceBuffer::from_slice(&device, &a)?,
        DeviceBuffer::from_slice(&device, &b)?,
    );
    let mut d_c = DeviceBuffer::<f32>::zeroed(&device, n)?;
    let config = LaunchConfig::for_num_elems(n);

    // The raw twin of the typed launch: the same entry point, the same arguments.
    let raw_typed = |c: &mut DeviceBuffer<f32>, config: &LaunchConfig| -> hip::Result<()> {
        let (la, lb, lc) = (d_a.len() as u64, d_b.len() as u64, c.len() as u64);
        let mut args = LaunchArgs::new();
        args.arg(&d_a)
            .arg(&la)
            .arg(&d_b)
            .arg(&lb)
            .arg_mut(c)
            .arg(&lc);
        // SAFETY: vector_add_hk*(In<f32>, In<f32>, Out<f32>) as the macro lays it out: pointer and u64
        // length each; it reads a and b, writes c, within their lengths, with 64-bit indices.
        unsafe {
            typed
                .function()
                .launch_with_index(&stream, config, &mut args, ThreadIndex::Bits64)
        }
    };
    let raw_plain = |c: &mut DeviceBuffer<f32>| -> hip::Result<()> {
        let len = n as u64;
        let mut args = LaunchArgs::new();
        args.arg(&d_a).arg(&d_b).arg_mut(c).arg(&len);
        // SAFETY: vector_add(const float*, const float*, float*, u64) over buffers of n elements.
        unsafe { raw.launch(&stream, &config, &mut args) }
    };

    // Results first.
    for (name, which) in [("typed", 0), ("raw", 1)] {
        d_c.zero()?;
        if which == 0 {
            typed.launch(&stream, &config, &d_a, &d_b, &mut d_c)?;
        } else {
            raw_plain(&mut d_c)?;
        }
        let c = d_c.to_vec()?;
        let bad = (0..n).filter(|&i| c[i] != a[i] + b[i]).count();
        if bad > 0 {
            return Err(hip::Error::InvalidLaunch(format!(
                "{name} vector_add: {bad} of {n} wrong"
            )));
        }
    }

    // 1. Host time per launch, 256 elements.
    let small = 256usize;
    let mut c_small = DeviceBuffer::<f32>::zeroed(&device, small)?;
    let (sa, sb) = (d_a.slice(..small)?, d_b.slice(..small)?);
    let small_config = LaunchConfig::for_num_elems(small);
    let host = |typed_side: bool, c: &mut DeviceBuffer<f32>| -> hip::Result<f64> {
        let t = Instant::now();
        for _ in 0..HOST_LAUNCHES {
            if typed_side {
                typed.launch(&stream, &small_config, &sa, &sb, c)?;
            } else {
                raw_typed(c, &small_config)?;
            }
        }
        let ns = t.elapsed().as_nanos() as f64 / f64::from(HOST_LAUNCHES);
        stream.synchronize()?;
        Ok(ns)
    };
    host(true, &mut c_small)?;
    host(false, &mut c_small)?;
    let (mut h_typed, mut h_raw) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let first = round % 2 == 0;
        let x = host(first, &mut c_small)?;
        let y = host(!first, &mut c_small)?;
        let (t, r) = if first { (x, y) } else { (y, x) };
        h_typed.push(t);
        h_raw.push(r);
    }

    // 2. Device time per launch, n elements.
    let (start, stop) = (Event::with_timing(&device)?, Event::with_timing(&device)?);
    let device_time = |typed_side: bool, c: &mut DeviceBuffer<f32>| -> hip::Result<f64> {
        start.record(&stream)?;
        for _ in 0..DEVICE_LAUNCHES {
            if typed_side {
                typed.launch(&stream, &config, &d_a, &d_b, c)?;
            } else {
                raw_plain(c)?;
            }
        }
        stop.record(&stream)?;
        stop.synchronize()?;
        Ok(f64::from(start.elapsed_ms(&stop)?) * 1e3 / f64::from(DEVICE_LAUNCHES))
    };
    device_time(true, &mut d_c)?;
    device_time(false, &mut d_c)?;
    let (mut d_typed, mut d_raw) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let first = round % 2 == 0;
        let x = device_time(first, &mut d_c)?;
        let y = device_time(!first, &mut d_c)?;
        let (t, r) = if first { (x, y) } else { (y, x) };
        d_typed.push(t);
        d_raw.push(r);
    }

    println!(
        "{} ({}), platform {}",
        props.name,
        props.arch_name,
        hip::PLATFORM
    );
    let pair = |a: &[f64], b: &[f64]| paired_ratio(a, b);
    let (ht, hr) = (Samples::new(h_typed.clone()), Samples::new(h_raw.clone()));
    println!("| host time per launch (ns), {ROUNDS} rounds x {HOST_LAUNCHES} | median (min-max) |");
    println!("|---|---:|");
    println!("| typed launcher (safe) | {} |", ht.show(0));
    println!("| raw launch_with_index, same arguments | {} |", hr.show(0));
    println!(
        "typed - raw (medians): {:+.1} ns; typed / raw (paired): {}",
        ht.median() - hr.median(),
        pair(&h_typed, &h_raw)
    );
    let (mt, mr, mp, mo) = matmul(&device, &module, &stream)?;
    let (dt, dr) = (Samples::new(d_typed.clone()), Samples::new(d_raw.clone()));
    println!("| device time per launch (us), {n} f32, {ROUNDS} rounds x {DEVICE_LAUNCHES} | median (min-max) |");
    println!("|---|---:|");
    println!(
        "| typed vector_add (In::get x2, Out::mine) | {} |",
        dt.show(2)
    );
    println!("| raw vector_add (one i < n) | {} |", dr.show(2));
    println!("typed / raw (paired): {}", pair(&d_typed, &d_raw));
    let (st, sr) = (Samples::new(mt.clone()), Samples::new(mr.clone()));
    println!(
        "| device time per launch (us), matmul {MM}^3 f32, 16x16 tiles, {ROUNDS} rounds x {MM_LAUNCHES} | median (min-max) |"
    );
    println!("|---|---:|");
    println!(
        "| typed matmul_f32 (Shared<f32, 2>, checked reads, barrier check) | {} |",
        st.show(2)
    );
    println!("| matmul_f32_unchecked (raw pointers) | {} |", sr.show(2));
    println!(
        "| matmul_f32_unchecked_pb (raw pointers, the typed kernels' per-thread barrier on NVIDIA) | {} |",
        Samples::new(mp.clone()).show(2)
    );
    println!("typed / unchecked (paired): {}", pair(&mt, &mr));
    println!(
        "unchecked_pb / unchecked (paired: the barrier's share): {}",
        pair(&mp, &mr)
    );
    println!(
        "typed / unchecked_pb (paired: the checks' share): {}",
        pair(&mt, &mp)
    );
    println!(
        "| matmul_f32_unchecked at the typed kernel's occupancy (padded shared memory) | {} |",
        Samples::new(mo.clone()).show(2)
    );
    println!(
        "unchecked at typed occupancy / unchecked (paired: occupancy's share): {}",
        pair(&mo, &mr)
    );
    println!(
        "typed / unchecked at typed occupancy (paired: what is left): {}",
        pair(&mt, &mo)
    );
    Ok(())
}

/// Square size of the timed matrix multiply, and launches per timing.
const MM: usize = 1024;
const MM_LAUNCHES: u32 = 10;

/// Which matmul a timing launches.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Typed,
    Unchecked,
    /// The unchecked twin with the typed kernels' barrier (`matmul_f32_unchecked_pb`).
    UncheckedPb,
    /// The unchecked twin given unused dynamic shared memory, so that no more of its blocks fit an SM
    /// than of the typed kernel's: what the typed kernel's lower occupancy alone costs.
    UncheckedAtTypedOccupancy,
}

/// Device times (us) of the typed matmul and of each unchecked variant.
type MatmulTimes = (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>);

/// The typed tiled matmul against its unchecked twins: results checked, then paired device times (us).
fn matmul(device: &Device, module: &Module, stream: &Stream) -> hip::Result<MatmulTimes> {
    let typed = typed::matmul_f32::load(module)?;
    let raw = module.function("matmul_f32_unchecked")?;
    let raw_pb = module.function("matmul_f32_unchecked_pb")?;
    // What the compiled kernels cost the SM: registers per thread and resident 16 x 16 blocks.
    for name in [
        typed::matmul_f32::NAME,
        "matmul_f32_unchecked",
        "matmul_f32_unchecked_pb",
    ] {
        let f = module.function(name)?;
        let blocks = f.max_active_blocks_per_multiprocessor(256, 2 * 256 * 4)?;
        println!(
            "{name}: {} registers per thread, {blocks} blocks of 256 threads per SM",
            f.num_regs()?
        );
    }
    let config = typed::matmul_f32::with_shared(LaunchConfig::new(
        ((MM / 16) as u32, (MM / 16) as u32),
        (16, 16),
    ))?;
    // The least dynamic shared memory with which the unchecked kernel's resident blocks per SM drop to
    // the typed kernel's (a typed launch needs 2 KiB).
    let typed_blocks = module
        .function(typed::matmul_f32::NAME)?
        .max_active_blocks_per_multiprocessor(256, 2048)?;
    let mut padded = 2048usize;
    while raw.max_active_blocks_per_multiprocessor(256, padded)? > typed_blocks
        && padded < 48 * 1024
    {
        padded += 256;
    }
    println!(
        "matmul_f32_unchecked at the typed kernel's occupancy: {padded} B of dynamic shared memory, {} blocks per SM",
        raw.max_active_blocks_per_multiprocessor(256, padded)?
    );
    let launch = |side: Side,
                  n: usize,
                  a: &DeviceBuffer<f32>,
                  b: &DeviceBuffer<f32>,
                  c: &mut DeviceBuffer<f32>|
     -> hip::Result<()> {
        let n64 = n as u64;
        let mut config = LaunchConfig {
            grid: ((n as u32).div_ceil(16), (n as u32).div_ceil(16)).into(),
            ..config
        };
        if side == Side::UncheckedAtTypedOccupancy {
            config.shared_mem_bytes = padded as u32;
        }
        if side == Side::Typed {
            return typed.launch(stream, &config, n64, n64, n64, a, b, c, n64);
        }
        let raw = if side == Side::UncheckedPb {
            &raw_pb
        } else {
            &raw
        };
        let mut args = LaunchArgs::new();
        args.arg(a).arg(b).arg_mut(c).arg(&n64).arg(&n64).arg(&n64);
        // SAFETY: matmul_f32_unchecked(a, b, c, m, n, k) over n x n matrices, 16 x 16 blocks, 2 tiles of
        // 16 x 16 f32 in shared memory (config, set by the typed kernel's with_shared: the same need).
        unsafe { raw.launch(stream, &config, &mut args) }
    };
    // Results: 256^3 against the host (the kernel's order, no fused multiply-add: the same bits).
    let small = 256usize;
    let a: Vec<f32> = (0..small * small)
        .map(|i| ((i * 7) % 13) as f32 - 6.0)
        .collect();
    let b: Vec<f32> = (0..small * small)
        .map(|i| ((i * 5) % 11) as f32 * 0.5)
        .collect();
    let (da, db) = (
        DeviceBuffer::from_slice(device, &a)?,
        DeviceBuffer::from_slice(device, &b)?,
    );
    let mut want = vec![0.0f32; small * small];
    for r in 0..small {
        for c in 0..small {
            let mut acc = 0.0f32;
            for j in 0..small {
                acc += a[r * small + j] * b[j * small + c];
            }
            want[r * small + c] = acc;
        }
    }
    for (name, side) in [
        ("typed matmul_f32", Side::Typed),
        ("matmul_f32_unchecked", Side::Unchecked),
        ("matmul_f32_unchecked_pb", Side::UncheckedPb),
    ] {
        let mut dc = DeviceBuffer::<f32>::zeroed(device, small * small)?;
        launch(side, small, &da, &db, &mut dc)?;
        if dc.to_vec()? != want {
            return Err(hip::Error::InvalidLaunch(format!(
                "{name}: wrong results at 256^3"
            )));
        }
    }
    // Timing at MM^3; the two results must agree bit for bit.
    let a: Vec<f32> = (0..MM * MM).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let b: Vec<f32> = (0..MM * MM).map(|i| ((i * 5) % 11) as f32 * 0.5).collect();
    let (da, db) = (
        DeviceBuffer::from_slice(device, &a)?,
        DeviceBuffer::from_slice(device, &b)?,
    );
    let (mut c1, mut c2) = (
        DeviceBuffer::<f32>::zeroed(device, MM * MM)?,
        DeviceBuffer::<f32>::zeroed(device, MM * MM)?,
    );
    let mut c3 = DeviceBuffer::<f32>::zeroed(device, MM * MM)?;
    launch(Side::Typed, MM, &da, &db, &mut c1)?;
    launch(Side::Unchecked, MM, &da, &db, &mut c2)?;
    launch(Side::UncheckedPb, MM, &da, &db, &mut c3)?;
    let want = c2.to_vec()?;
    if c1.to_vec()? != want || c3.to_vec()? != want {
        return Err(hip::Error::InvalidLaunch(
            "the three matmuls differ at 1024^3".into(),
        ));
    }
    let (start, stop) = (Event::with_timing(device)?, Event::with_timing(device)?);
    let time = |side: Side, c: &mut DeviceBuffer<f32>| -> hip::Result<f64> {
        start.record(stream)?;
        for _ in 0..MM_LAUNCHES {
            launch(side, MM, &da, &db, c)?;
        }
        stop.record(stream)?;
        stop.synchronize()?;
        Ok(f64::from(start.elapsed_ms(&stop)?) * 1e3 / f64::from(MM_LAUNCHES))
    };
    let sides = [
        Side::Typed,
        Side::Unchecked,
        Side::UncheckedPb,
        Side::UncheckedAtTypedOccupancy,
    ];
    for side in sides {
        time(side, &mut c1)?;
    }
    let mut times: [Vec<f64>; 4] = Default::default();
    for round in 0..ROUNDS {
        // Each round starts with the next side, so no side always runs first.
        for k in 0..sides.len() {
            let which = (round + k) % sides.len();
            times[which].push(time(sides[which], &mut c1)?);
        }
    }
    let [t, r, p, o] = times;
    Ok((t, r, p, o))
}
