//! Uniform f32 generation throughput: safe `hip::rand` against raw C++ through hipRAND
//! (bench/baseline/rand_baseline.cpp, its own Philox generator on the same stream), the same library.
//!
//! ```text
//! rand --baseline libhiprs_rand_baseline.so
//! ```
//! Fills of 2^28 values (1 GiB) into one buffer, in rounds (order rotating), each a batch of fills timed
//! from the host around a stream synchronize; GB/s of the median round, and the median of the per-round
//! ratios with their range.
use hip::prelude::*;
use hip::rand::{Generator, RngType};
use std::ffi::{c_int, c_void};
use std::time::Instant;

#[path = "../baseline_arg.rs"]
mod baseline_arg;
#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;
use stats::Samples;

type Create = unsafe extern "C" fn(hip::sys::hipStream_t, u64) -> *mut c_void;
type Uniform = unsafe extern "C" fn(*mut c_void, *mut f32, usize, c_int) -> c_int;

const N: usize = 1 << 28;
const CALLS: usize = 20;
const ROUNDS: usize = 11;

fn main() {
    baseline_arg::main("rand", "libhiprs_rand_baseline.so", run);
}

fn run(baseline: &str) -> Result<(), String> {
    let e = |err: hip::Error| err.to_string();
    let device = Device::get(0).map_err(e)?;
    let stream = Stream::new(&device).map_err(e)?;
    let mut safe = Generator::new(&stream, RngType::Philox4x32_10).map_err(e)?;
    safe.set_seed(1).map_err(e)?;
    let mut buf = DeviceBuffer::<f32>::zeroed(&device, N).map_err(e)?;
    // SAFETY: this project's baseline (scripts/gpu-bundle-rand.sh); the functions have the types above.
    let lib = unsafe { libloading::Library::new(baseline) }
        .map_err(|err| format!("open {baseline}: {err}"))?;
    // SAFETY: as above.
    let (create, uniform) = unsafe {
        (
            *lib.get::<Create>(b"rand_raw_create\0")
                .map_err(|err| err.to_string())?,
            *lib.get::<Uniform>(b"rand_raw_uniform\0")
                .map_err(|err| err.to_string())?,
        )
    };
    // SAFETY: a live stream; the generator lives as long as the process (never destroyed here).
    let raw = unsafe { create(stream.raw(), 1) };
    if raw.is_null() {
        return Err("rand_raw_create failed".into());
    }
    let ptr = buf.device_ptr().cast::<f32>();
    let mut side = |who: usize, calls: usize, buf: &mut DeviceBuffer<f32>| -> Result<(), String> {
        if who == 0 {
            // SAFETY: the raw generator on the same stream; `ptr` holds N floats. The safe side's later
            // fills are ordered after these by the stream.
            let rc = unsafe { uniform(raw, ptr, N, calls as c_int) };
            if rc != 0 {
                return Err(format!("raw hipRAND status {rc}"));
            }
        } else {
            for _ in 0..calls {
                safe.uniform(buf).map_err(e)?;
            }
        }
        stream.synchronize().map_err(e)
    };
    for who in 0..2 {
        side(who, 2, &mut buf)?;
    }
    let mut gbs = [Vec::new(), Vec::new()];
    for round in 0..ROUNDS {
        for i in 0..2 {
            let who = (i + round) % 2;
            let t0 = Instant::now();
            side(who, CALLS, &mut buf)?;
            gbs[who].push((N * 4 * CALLS) as f64 / t0.elapsed().as_secs_f64() / 1e9);
        }
    }
    let med = |v: &[f64]| Samples::new(v.to_vec()).median();
    println!(
        "Uniform f32 (Philox4x32-10), fills of 2^28 values on {} (HIP's {} platform, hipRAND {:?}):\n\n\
         | raw C++ hipRAND GB/s | safe hip::rand GB/s | safe / raw (median of rounds, range) |\n|---|---|---|\n\
         | {:.1} | {:.1} | {} |",
        device.properties().map_err(e)?.name,
        hip::PLATFORM,
        hip::rand::hiprand_sys::HEADER_VERSION,
        med(&gbs[0]),
        med(&gbs[1]),
        stats::paired_ratio(&gbs[1], &gbs[0])
    );
    Ok(())
}
