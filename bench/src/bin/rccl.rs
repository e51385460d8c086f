//! All-reduce bus bandwidth over two GPUs, 1 KiB to 1 GiB, through `hip::rccl` against a raw C program
//! calling NCCL / RCCL (bench/baseline/nccl_bench.c) with the same sizes, iteration counts and timing in the
//! same run; then peer-copy bandwidth (`Stream::copy_peer_async` against raw `hipMemcpyPeerAsync`).
//!
//! ```text
//! rccl --baseline PATH/TO/nccl_bench [--max-bytes N]
//! ```
//!
//! Prints markdown tables. Method (both sides): one process drives both devices (`ncclCommInitAll`); each
//! iteration is one group holding an in-place f32 sum all-reduce per device; the time is wall clock over
//! `iters` iterations then a synchronise of both streams, after one warm-up round, the median of 5 rounds.
//! Bus bandwidth = bytes / time x 2(n-1)/n, which is bytes / time for n = 2 (nccl-tests' definition).
use hip::prelude::*;
use hip::rccl::{group, Comm, ReduceOp};
use std::collections::BTreeMap;
use std::process::Command;
use std::time::Instant;

fn iterations(bytes: usize) -> usize {
    if bytes <= 1 << 20 {
        200
    } else if bytes <= 64 << 20 {
        50
    } else {
        20
    }
}

fn median5(mut f: impl FnMut() -> hip::Result<f64>) -> hip::Result<f64> {
    f()?; // warm-up
    let mut reps = Vec::with_capacity(5);
    for _ in 0..5 {
        reps.push(f()?);
    }
    reps.sort_by(|a, b| a.total_cmp(b));
    Ok(reps[2])
}

struct Results {
    all_reduce: BTreeMap<usize, f64>,
    peer: BTreeMap<usize, f64>,
}

fn safe_side(max_bytes: usize) -> hip::Result<Results> {
    let devices = [Device::get(0)?, Device::get(1)?];
    let comms = Comm::init_all(&devices)?;
    let streams = [Stream::new(&devices[0])?, Stream::new(&devices[1])?];
    let n = max_bytes / 4;
    let mut bufs = [
        DeviceBuffer::<f32>::zeroed(&devices[0], n)?,
        DeviceBuffer::<f32>::zeroed(&devices[1], n)?,
    ];
    let mut all_reduce = BTreeMap::new();
    let mut bytes = 1024;
    while bytes <= max_bytes {
        let count = bytes / 4;
        let iters = iterations(bytes);
        let t = median5(|| {
            let [b0, b1] = &mut bufs;
            let mut views = [b0.slice_mut(..count)?, b1.slice_mut(..count)?];
            let t0 = Instant::now();
            for _ in 0..iters {
                group(|| {
                    for r in 0..2 {
                        comms[r].all_reduce_in_place(&mut views[r], ReduceOp::Sum, &streams[r])?;
                    }
                    Ok(())
                })?;
            }
            for s in &streams {
                s.synchronize()?;
            }
            Ok(t0.elapsed().as_secs_f64() / iters as f64)
        })?;
        all_reduce.insert(bytes, t);
        bytes *= 4;
    }
    for c in &comms {
        c.async_error()?;
    }
    devices[1].ensure_peer_access(&devices[0])?;
    devices[0].ensure_peer_access(&devices[1])?;
    let mut peer = BTreeMap::new();
    let mut bytes = 64 * 1024;
    while bytes <= max_bytes {
        let count = bytes / 4;
        let iters = iterations(bytes);
        let t = median5(|| {
            let [b0, b1] = &mut bufs;
            let src = b0.slice(..count)?;
            let mut dst = b1.slice_mut(..count)?;
            let t0 = Instant::now();
            for _ in 0..iters {
                streams[1].copy_peer_async(&src, &mut dst)?;
            }
            streams[1].synchronize()?;
            Ok(t0.elapsed().as_secs_f64() / iters as f64)
        })?;
        peer.insert(bytes, t);
        bytes *= 16;
    }
    Ok(Results { all_reduce, peer })
}

fn raw_side(program: &str, max_bytes: usize) -> Result<Results, String> {
    let out = Command::new(program)
        .arg(max_bytes.to_string())
        .output()
        .map_err(|e| format!("running {program}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{program} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let mut r = Results {
        all_reduce: BTreeMap::new(),
        peer: BTreeMap::new(),
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [kind, bytes, secs] = f[..] {
            let (Ok(b), Ok(s)) = (bytes.parse(), secs.parse()) else {
                continue;
            };
            match kind {
                "allreduce" => r.all_reduce.insert(b, s),
                "peer" => r.peer.insert(b, s),
                _ => None,
            };
        }
    }
    Ok(r)
}

fn size(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b => format!("{} KiB", b >> 10),
    }
}

fn table(title: &str, safe: &BTreeMap<usize, f64>, raw: &BTreeMap<usize, f64>) {
    println!("\n{title}\n");
    println!("| size | hip::rccl time (us) | hip::rccl GB/s | raw C time (us) | raw C GB/s | safe / raw bandwidth |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    for (&bytes, &t) in safe {
        let Some(&r) = raw.get(&bytes) else { continue };
        let (bw, rbw) = (bytes as f64 / t / 1e9, bytes as f64 / r / 1e9);
        println!(
            "| {} | {:.1} | {:.2} | {:.1} | {:.2} | {:.3}x |",
            size(bytes),
            t * 1e6,
            bw,
            r * 1e6,
            rbw,
            bw / rbw
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let Some(baseline) = arg("--baseline") else {
        eprintln!("usage: rccl --baseline PATH/TO/nccl_bench [--max-bytes N]");
        std::process::exit(2);
    };
    let max_bytes: usize = arg("--max-bytes")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1 << 30);
    let (major, minor, patch) = hip::rccl::version().unwrap_or((0, 0, 0));
    let safe = match safe_side(max_bytes) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("hip::rccl side failed: {e}");
            std::process::exit(1);
        }
    };
    let raw = match raw_side(&baseline, max_bytes) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let names: Vec<String> = (0..2)
        .filter_map(|i| Device::get(i).ok()?.properties().ok().map(|p| p.name))
        .collect();
    println!(
        "{} {major}.{minor}.{patch}, devices: {}; busbw = algbw for 2 ranks; median of 5 rounds",
        hip::rccl::LIBRARY,
        names.join(", ")
    );
    table(
        "All-reduce (f32 sum, in place, 2 GPUs, one process): bus bandwidth",
        &safe.all_reduce,
        &raw.all_reduce,
    );
    table(
        "Peer copy device 0 -> device 1 (peer access on): Stream::copy_peer_async vs hipMemcpyPeerAsync",
        &safe.peer,
        &raw.peer,
    );
}
