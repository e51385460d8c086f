//! FFT throughput: safe `hip::fft` against raw C++ through hipFFT (bench/baseline/fft_baseline.cpp, its own
//! plan of the same shape on the same stream), the same library: a 2^24-point complex FFT and 1024
//! real-to-complex FFTs of 4096 points, single precision.
//!
//! ```text
//! fft --baseline libhiprs_fft_baseline.so
//! ```
//! Rounds (order rotating) of a batch of executions timed from the host around a stream synchronize;
//! executions per second of the median round, and the median of the per-round ratios with their range.
use hip::fft::{Complex32, Direction, Plan, Shape, Transform};
use hip::prelude::*;
use std::ffi::{c_int, c_void};
use std::time::Instant;

#[path = "../baseline_arg.rs"]
mod baseline_arg;
#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;
use stats::Samples;

type MakePlan = unsafe extern "C" fn(hip::sys::hipStream_t, c_int, c_int, c_int) -> *mut c_void;
type Exec = unsafe extern "C" fn(*mut c_void, c_int, *mut c_void, *mut c_void, c_int) -> c_int;

const ROUNDS: usize = 11;
const CALLS: usize = 50;

fn main() {
    baseline_arg::main("fft", "libhiprs_fft_baseline.so", run);
}

fn run(baseline: &str) -> Result<(), String> {
    let e = |err: hip::Error| err.to_string();
    let device = Device::get(0).map_err(e)?;
    let stream = Stream::new(&device).map_err(e)?;
    // SAFETY: this project's baseline (scripts/gpu-bundle-math.sh); the functions have the types above.
    let lib = unsafe { libloading::Library::new(baseline) }
        .map_err(|err| format!("open {baseline}: {err}"))?;
    // SAFETY: as above.
    let (make, exec) = unsafe {
        (
            *lib.get::<MakePlan>(b"fft_raw_plan\0")
                .map_err(|err| err.to_string())?,
            *lib.get::<Exec>(b"fft_raw_exec\0")
                .map_err(|err| err.to_string())?,
        )
    };
    println!(
        "FFT on {} (HIP's {} platform, hipFFT {:?}), single precision:\n\n\
         | transform | raw C++ hipFFT exec/s | safe hip::fft exec/s | safe / raw (median of rounds, range) |\n|---|---|---|---|",
        device.properties().map_err(e)?.name,
        hip::PLATFORM,
        hip::fft::hipfft_sys::HEADER_VERSION
    );
    for (name, n, batch, real) in [
        ("C2C 2^24 points", 1usize << 24, 1usize, false),
        ("R2C 1024 x 4096 points", 4096, 1024, true),
    ] {
        let t = if real { Transform::R2C } else { Transform::C2C };
        let plan = Plan::<f32>::new(&stream, t, &Shape::new(&[n]).batch(batch)).map_err(e)?;
        // SAFETY: a live stream; the raw plan is leaked with the process.
        let raw = unsafe { make(stream.raw(), n as c_int, batch as c_int, real as c_int) };
        if raw.is_null() {
            return Err("fft_raw_plan failed".into());
        }
        let reals = DeviceBuffer::<f32>::zeroed(&device, n * batch).map_err(e)?;
        let input = DeviceBuffer::from_slice(&device, &vec![Complex32::new(0.5, -0.25); n * batch])
            .map_err(e)?;
        let mut out = DeviceBuffer::<Complex32>::zeroed(&device, plan.output_len()).map_err(e)?;
        let in_ptr = if real {
            reals.device_ptr()
        } else {
            input.device_ptr()
        };
        let out_ptr = out.device_ptr();
        let side =
            |who: usize, calls: usize, out: &mut DeviceBuffer<Complex32>| -> Result<(), String> {
                if who == 0 {
                    // SAFETY: the raw plan on the same stream; the buffers hold what the plan reaches.
                    let rc = unsafe { exec(raw, real as c_int, in_ptr, out_ptr, calls as c_int) };
                    if rc != 0 {
                        return Err(format!("raw hipFFT result {rc}"));
                    }
                } else {
                    for _ in 0..calls {
                        if real {
                            plan.r2c(&reals, out).map_err(e)?;
                        } else {
                            plan.c2c(Direction::Forward, &input, out).map_err(e)?;
                        }
                    }
                }
                stream.synchronize().map_err(e)
            };
        for who in 0..2 {
            side(who, 3, &mut out)?;
        }
        let mut rate = [Vec::new(), Vec::new()];
        for round in 0..ROUNDS {
            for i in 0..2 {
                let who = (i + round) % 2;
                let t0 = Instant::now();
                side(who, CALLS, &mut out)?;
                rate[who].push(CALLS as f64 / t0.elapsed().as_secs_f64());
            }
        }
        let med = |v: &[f64]| Samples::new(v.to_vec()).median();
        println!(
            "| {name} | {:.0} | {:.0} | {} |",
            med(&rate[0]),
            med(&rate[1]),
            stats::paired_ratio(&rate[1], &rate[0])
        );
    }
    Ok(())
}
