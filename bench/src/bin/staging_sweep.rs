//! What bounds the staging ring's pageable copies (issue 56): the same safe copies
//! (`DeviceSliceMut::copy_from_host` / `copy_to_host` from pageable memory, the ring at every size) under
//! each staging configuration of a grid (host copy threads x chunk size x pinned buffers), the
//! configurations interleaved in each round, against a copy from pinned memory (the link's limit) timed
//! in the same rounds; first, the host's own memcpy rate from pageable into pinned memory by thread count. GB/s, median of ROUNDS, per direction
//! and size; the best configuration of each is named at the end.
//!
//! `cargo run --release -p hip-rs-bench --bin staging_sweep [-- [--ramp] MIB...]` (default: 64 256).
//! `--ramp`: a smaller grid instead, each of 4 and 8 MiB chunks and 4 and 6 buffers (the default
//! threads) with the ramp ([`StagingConfig::ramp`]) off and on.

#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;

use hip::memory::staging::{self, StagingConfig};
use hip::prelude::*;
use stats::Samples;
use std::process::ExitCode;
use std::time::Instant;

const ROUNDS: usize = 7;
const MIB: usize = 1 << 20;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ramp = args.iter().any(|a| a == "--ramp");
    let sizes: Result<Vec<usize>, _> = args
        .iter()
        .filter(|a| *a != "--ramp")
        .map(|a| a.parse::<usize>().map(|m| m * MIB))
        .collect();
    let sizes = match sizes {
        Ok(s) if s.is_empty() => vec![64 * MIB, 256 * MIB],
        Ok(s) if s.iter().all(|&b| b > 0) => s,
        _ => {
            eprintln!("usage: staging_sweep [--ramp] [MIB > 0 ...]");
            return ExitCode::from(2);
        }
    };
    match run(&sizes, ramp) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("staging_sweep: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One copy of `src` into the first `src.len()` elements of `dev` (`h2d`) or of them into `dst`,
/// timed on the host until it returned (the copies wait for their DMA).
fn time_copy(
    dev: &mut DeviceBuffer<u32>,
    h2d: bool,
    src: &[u32],
    dst: &mut [u32],
) -> Result<f64, String> {
    let e = |e: hip::Error| e.to_string();
    let mut v = dev.slice_mut(..src.len()).map_err(e)?;
    let t = Instant::now();
    if h2d {
        v.copy_from_host(src).map_err(e)?;
    } else {
        v.copy_to_host(dst).map_err(e)?;
    }
    Ok(t.elapsed().as_nanos() as f64)
}

/// The host's own bound on staging: `threads` threads copying the pattern (pageable) into pinned memory
/// in equal parts, no GPU involved, GB/s of copied bytes (the memory traffic is twice that), median of
/// ROUNDS. A staged copy moves each byte through host memory three times (read, write, the DMA's read).
fn host_copy_rates(
    pattern: &[u32],
    pinned: &mut PinnedBuffer<u32>,
    cores: usize,
) -> Result<(), String> {
    let dst = pinned.as_mut_slice().map_err(|e| e.to_string())?;
    println!(
        "\nhost memcpy, pageable -> pinned, {} MiB, no GPU: GB/s median of {ROUNDS}",
        std::mem::size_of_val(pattern) / MIB
    );
    println!("| threads | GB/s |\n|---:|---:|");
    for threads in [1, 2, 4, 8, 16].into_iter().filter(|&t| t <= cores.max(1)) {
        let mut t = Vec::with_capacity(ROUNDS);
        for _ in 0..ROUNDS {
            let part = pattern.len().div_ceil(threads);
            let start = Instant::now();
            std::thread::scope(|s| {
                for (d, src) in dst.chunks_mut(part).zip(pattern.chunks(part)) {
                    s.spawn(move || d.copy_from_slice(src));
                }
            });
            t.push(gbps(
                std::mem::size_of_val(pattern),
                start.elapsed().as_nanos() as f64,
            ));
        }
        println!("| {threads} | {} |", Samples::new(t).show(1));
    }
    dst.copy_from_slice(pattern);
    Ok(())
}

fn gbps(bytes: usize, ns: f64) -> f64 {
    bytes as f64 / ns
}

fn run(sizes: &[usize], ramp: bool) -> Result<(), String> {
    let e = |e: hip::Error| e.to_string();
    let Some(device) = Device::first_usable(|why| println!("{why}\nnothing to time")).map_err(e)?
    else {
        return Ok(());
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "device: {}; {cores} host cores; default {:?}",
        device.properties().map_err(e)?.name,
        StagingConfig::default()
    );
    let max = *sizes.iter().max().unwrap();
    let n = max / 4;
    let pattern: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
    let mut back = vec![0u32; n];
    let mut pinned = PinnedBuffer::<u32>::from_slice(&device, &pattern).map_err(e)?;
    let mut dev = DeviceBuffer::<u32>::zeroed(&device, n).map_err(e)?;
    let base = StagingConfig {
        enabled: true,
        threshold_bytes: 0,
        register_bytes: usize::MAX,
        ..StagingConfig::default()
    };
    let mut grid = Vec::new();
    if ramp {
        for chunk_mib in [4, 8] {
            for buffers in [4, 6] {
                for ramp in [false, true] {
                    grid.push(StagingConfig {
                        chunk_bytes: chunk_mib * MIB,
                        buffers,
                        ramp,
                        ..base
                    });
                }
            }
        }
    } else {
        host_copy_rates(&pattern, &mut pinned, cores)?;
        for threads in [4, 8, 16] {
            for chunk_mib in [4, 8] {
                for buffers in [3, 4, 6] {
                    grid.push(StagingConfig {
                        threads,
                        chunk_bytes: chunk_mib * MIB,
                        buffers,
                        ..base
                    });
                }
            }
        }
    }
    for &bytes in sizes {
        let k = bytes / 4;
        for h2d in [true, false] {
            let name = if h2d { "H2D" } else { "D2H" };
            // Rounds interleave the configurations (each switch rebuilds the ring, untimed: one copy
            // after it), so a drift of the machine touches every configuration alike.
            let mut times = vec![Vec::with_capacity(ROUNDS); grid.len()];
            let mut limit = Vec::new();
            for _ in 0..ROUNDS {
                for (i, &cfg) in grid.iter().enumerate() {
                    staging::set_config(cfg);
                    time_copy(&mut dev, h2d, &pattern[..k], &mut back[..k])?;
                    times[i].push(gbps(
                        bytes,
                        time_copy(&mut dev, h2d, &pattern[..k], &mut back[..k])?,
                    ));
                }
                // The limit: the same bytes from (to) pinned memory, the ring off (a plain hipMemcpy).
                staging::set_config(StagingConfig::disabled());
                let ns = if h2d {
                    let src = pinned.as_slice().map_err(e)?;
                    time_copy(&mut dev, true, &src[..k], &mut back[..k])?
                } else {
                    let dst = pinned.as_mut_slice().map_err(e)?;
                    time_copy(&mut dev, false, &pattern[..k], &mut dst[..k])?
                };
                limit.push(gbps(bytes, ns));
            }
            let rows: Vec<_> = grid
                .iter()
                .copied()
                .zip(times.into_iter().map(Samples::new))
                .collect();
            if !h2d && back[..k] != pattern[..k] {
                return Err(format!("{name} of {bytes} bytes came back wrong"));
            }
            let limit = Samples::new(limit);
            println!(
                "\n{name} {} MiB, pinned limit {} GB/s; GB/s median (min-max) of {ROUNDS}",
                bytes / MIB,
                limit.show(1)
            );
            println!(
                "| threads | chunk MiB | buffers | ramp | GB/s | / pinned |\n|---:|---:|---:|---|---:|---:|"
            );
            for (cfg, s) in &rows {
                println!(
                    "| {} | {} | {} | {} | {} | {:.2} |",
                    cfg.threads,
                    cfg.chunk_bytes / MIB,
                    cfg.buffers,
                    if cfg.ramp { "on" } else { "off" },
                    s.show(1),
                    s.median() / limit.median()
                );
            }
            let (best, s) = rows
                .iter()
                .max_by(|a, b| a.1.median().total_cmp(&b.1.median()))
                .unwrap();
            println!(
                "best {name} {} MiB: {} threads, {} MiB chunks, {} buffers, ramp {}: {:.1} GB/s = {:.2} of pinned",
                bytes / MIB,
                best.threads,
                best.chunk_bytes / MIB,
                best.buffers,
                best.ramp,
                s.median(),
                s.median() / limit.median()
            );
        }
    }
    staging::set_config(StagingConfig::default());
    Ok(())
}
