//! Queued uploads from pageable memory, the safe call against the raw one, paired in one run (issue 57):
//! for each size, one upload of a `Vec` into a device buffer on a stream, then a synchronize of it:
//!
//! - `safe`: `Stream::copy_from_slice_async` (a host copy into a pooled pinned staging buffer, then an
//!   asynchronous copy from it, ordered by the memory model);
//! - `raw`: `hipMemcpyAsync` straight from the `Vec` (the runtime stages pageable memory itself).
//!
//! Printed per size: each side's median time to return from the call and to the end of the upload (µs),
//! and the paired ratio safe / raw of the latter (median and range). Rounds alternate which side goes
//! first.
//!
//! `cargo run --release -p hip-rs-bench --bin slice_upload [-- ROUNDS]` (default 31).
#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;

use hip::prelude::*;
use hip::result;
use stats::{paired_ratio, Samples};
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let rounds = match std::env::args().nth(1).map(|a| a.parse::<usize>()) {
        None => 31,
        Some(Ok(r)) if r > 0 => r,
        Some(_) => {
            eprintln!("usage: slice_upload [ROUNDS > 0]");
            return ExitCode::from(2);
        }
    };
    match run(rounds) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("slice_upload: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `(time to return, time to completion)` in µs of `upload` followed by a synchronize of `stream`.
fn time(stream: &Stream, upload: impl FnOnce() -> hip::Result<()>) -> hip::Result<(f64, f64)> {
    let t = Instant::now();
    upload()?;
    let returned = t.elapsed().as_secs_f64() * 1e6;
    stream.synchronize()?;
    Ok((returned, t.elapsed().as_secs_f64() * 1e6))
}

fn run(rounds: usize) -> hip::Result<()> {
    let device = Device::get(0)?;
    let stream = Stream::non_blocking(&device)?;
    println!(
        "device: {}; {rounds} rounds per size",
        device.properties()?.name
    );
    println!("| size | safe return µs | safe done µs | raw return µs | raw done µs | safe / raw (done) |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    for kib in [4usize, 64, 1024, 16 << 10, 64 << 10] {
        let n = kib * 1024 / 4;
        let host: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let mut dev = DeviceBuffer::<f32>::zeroed(&device, n)?;
        let (mut safe, mut raw) = (Vec::new(), Vec::new());
        for round in 0..rounds + 1 {
            let one_safe = |dev: &mut DeviceBuffer<f32>| {
                time(&stream, || stream.copy_from_slice_async(&host, dev))
            };
            let s;
            let r;
            let one_raw = |dev: &DeviceBuffer<f32>| {
                time(&stream, || {
                    // SAFETY: `host` is n initialised f32 and `dev` n f32 of device memory, both live
                    // until the synchronize in `time`, which waits for the copy.
                    unsafe {
                        result::memcpy_async(
                            dev.device_ptr(),
                            host.as_ptr().cast(),
                            n * 4,
                            hip::sys::hipMemcpyHostToDevice,
                            stream.raw(),
                        )
                    }
                })
            };
            if round % 2 == 0 {
                s = one_safe(&mut dev)?;
                r = one_raw(&dev)?;
            } else {
                r = one_raw(&dev)?;
                s = one_safe(&mut dev)?;
            }
            if round > 0 {
                // Round 0 warms up (the staging pool's first buffer, the runtime's own).
                safe.push(s);
                raw.push(r);
            }
        }
        let done = |v: &[(f64, f64)]| v.iter().map(|x| x.1).collect::<Vec<_>>();
        let ret = |v: &[(f64, f64)]| Samples::new(v.iter().map(|x| x.0).collect());
        let size = if kib >= 1024 {
            format!("{} MiB", kib / 1024)
        } else {
            format!("{kib} KiB")
        };
        println!(
            "| {size} | {:.1} | {:.1} | {:.1} | {:.1} | {} |",
            ret(&safe).median(),
            Samples::new(done(&safe)).median(),
            ret(&raw).median(),
            Samples::new(done(&raw)).median(),
            paired_ratio(&done(&safe), &done(&raw))
        );
        let check = dev.to_vec()?;
        assert!(check.iter().enumerate().all(|(i, &v)| v == i as f32));
    }
    Ok(())
}
