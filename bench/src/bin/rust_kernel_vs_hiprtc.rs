//! The Rust-built `vector_add` (kernels/, committed code objects: an AMD offload bundle, or sm_70 PTX on
//! NVIDIA) against the same kernel in HIP C++ compiled by HIPRTC at run time (bench/kernels/vector_add.hip),
//! launched the same way over a large array. Prints the time per launch of each and the ratio.
//!
//! `cargo run --release -p hip-rs-bench --bin rust_kernel_vs_hiprtc [-- ELEMENTS]` (default 2^26: three
//! buffers of 256 MiB). Both kernels' results are checked before timing. Rounds alternate which kernel goes
//! first; each round times a batch of launches between two events.
#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;
use hip::prelude::*;
use stats::Samples;
use std::process::ExitCode;

const HIP_SOURCE: &str = include_str!("../../kernels/vector_add.hip");
const RUST_AMDGPU: &[u8] = include_bytes!("../../../kernels/prebuilt/hip_rs_kernels.hipfb");
const RUST_PTX: &[u8] = include_bytes!("../../../kernels/prebuilt/hip_rs_kernels-sm_70.ptx");

const ROUNDS: usize = 21;
const LAUNCHES_PER_ROUND: u32 = 20;

fn main() -> ExitCode {
    let n: u32 = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 1 << 26,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: rust_kernel_vs_hiprtc [ELEMENTS > 0]");
            return ExitCode::from(2);
        }
    };
    match run(n) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rust_kernel_vs_hiprtc: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(n: u32) -> hip::Result<()> {
    let Some(device) = Device::first_usable(|why| println!("{why}\nnothing to time"))? else {
        return Ok(());
    };
    let props = device.properties()?;
    let rust_image = if hip::PLATFORM == "amd" {
        RUST_AMDGPU
    } else {
        RUST_PTX
    };
    let rust = Module::load_data(&device, rust_image)?.function("vector_add")?;
    let compiled = ProgramBuilder::new(HIP_SOURCE)
        .name("vector_add.hip")
        .compile()?;
    let hiprtc = Module::load_data(&device, compiled.code())?.function("vector_add")?;

    let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 777) as f32 * 0.25).collect();
    let d_a = DeviceBuffer::from_slice(&device, &a)?;
    let d_b = DeviceBuffer::from_slice(&device, &b)?;
    let mut d_c = DeviceBuffer::<f32>::zeroed(&device, n as usize)?;
    let stream = Stream::new(&device)?;
    let config = LaunchConfig::for_num_elems(n);
    let n64 = u64::from(n);
    let launch = |k: &Function, c: &mut DeviceBuffer<f32>| -> hip::Result<()> {
        let mut args = LaunchArgs::new();
        args.arg(&d_a).arg(&d_b).arg_mut(c);
        // The Rust kernel takes a 64-bit length (its indices are 64-bit), the C++ one an unsigned int.
        if std::ptr::eq(k, &rust) {
            args.arg(&n64);
        } else {
            args.arg(&n);
        }
        // SAFETY: the kernels are vector_add(const float*, const float*, float*, n) with n a u64 (Rust)
        // or unsigned (C++), passed as such, and stay inside the n elements each buffer holds.
        unsafe { k.launch(&stream, &config, &mut args) }
    };

    for (name, k) in [("Rust", &rust), ("HIPRTC", &hiprtc)] {
        d_c.zero()?;
        launch(k, &mut d_c)?;
        stream.synchronize()?;
        let c = d_c.to_vec()?;
        let bad = (0..n as usize).filter(|&i| c[i] != a[i] + b[i]).count();
        if bad > 0 {
            return Err(hip::Error::InvalidLaunch(format!(
                "{name} vector_add: {bad} of {n} results wrong"
            )));
        }
    }

    let (start, stop) = (Event::with_timing(&device)?, Event::with_timing(&device)?);
    let time = |k: &Function, c: &mut DeviceBuffer<f32>| -> hip::Result<f64> {
        start.record(&stream)?;
        for _ in 0..LAUNCHES_PER_ROUND {
            launch(k, c)?;
        }
        stop.record(&stream)?;
        stop.synchronize()?;
        Ok(start.elapsed_ms(&stop)? as f64 * 1e3 / LAUNCHES_PER_ROUND as f64)
    };
    // Warm-up.
    time(&rust, &mut d_c)?;
    time(&hiprtc, &mut d_c)?;
    let (mut t_rust, mut t_rtc) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        if round % 2 == 0 {
            t_rust.push(time(&rust, &mut d_c)?);
            t_rtc.push(time(&hiprtc, &mut d_c)?);
        } else {
            t_rtc.push(time(&hiprtc, &mut d_c)?);
            t_rust.push(time(&rust, &mut d_c)?);
        }
    }
    let (r, h) = (Samples::new(t_rust), Samples::new(t_rtc));
    let bytes = 3.0 * 4.0 * n as f64;
    println!(
        "vector_add over {n} f32 ({:.0} MiB moved per launch) on {} ({}), platform {}",
        bytes / (1 << 20) as f64,
        props.name,
        props.arch_name,
        hip::PLATFORM
    );
    println!("both kernels' results checked: correct");
    println!("| kernel | us per launch, median (min-max of {ROUNDS} rounds x {LAUNCHES_PER_ROUND}) | GB/s at median |");
    println!("|---|---:|---:|");
    for (name, s) in [
        ("Rust-built (kernels/)", &r),
        ("HIPRTC-built (HIP C++)", &h),
    ] {
        println!(
            "| {name} | {} | {:.0} |",
            s.show(1),
            bytes / (s.median() * 1e-6) / 1e9
        );
    }
    println!(
        "ratio Rust / HIPRTC (median time per launch): {:.3}",
        r.median() / h.median()
    );
    Ok(())
}
