//! All-reduce and peer-copy cost over two GPUs, 1 KiB up, through `hip::rccl` /
//! `Stream::copy_peer_async` against raw NCCL / RCCL and raw `hipMemcpyPeerAsync` called from this same
//! process on the same communicators, streams and buffers: the paired method of issue 42.
//!
//! ```text
//! rccl [--max-bytes N] [--baseline PATH/TO/nccl_bench] [--explain]
//! ```
//!
//! Method: per size, rounds of one batch through the safe API and one batch of raw calls, the order
//! alternating each round (safe first on even rounds), each batch timed on the host from its first call
//! to both streams synchronized. An all-reduce iteration is one group holding an in-place f32 sum per
//! device (`ncclCommInitAll`, one process). The figure is the ratio of raw time to safe time per round
//! (> 1: the safe side is faster), mean and 95% interval over the rounds, so drift between rounds (clocks,
//! the other GPU) cancels within each pair. Bus bandwidth = bytes / time x 2(n-1)/n = bytes / time for
//! n = 2 (nccl-tests' definition). `--baseline` also runs the raw C program (bench/baseline/nccl_bench.c)
//! as a separate process and prints its times, unpaired, for comparison with earlier runs. `--explain`
//! adds, up to 1 MiB, two more pairings with raw NCCL: raw calls inside `hip::rccl::group` (the group's
//! own cost) and the safe calls on untracked buffers (everything but the memory model).
#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;
use hip::prelude::*;
use hip::rccl::rccl_sys as nccl;
use hip::rccl::{group, Comm, NcclType, ReduceOp};
use hip_sys as sys;
use std::collections::BTreeMap;
use std::process::Command;
use std::time::Instant;

/// Iterations per batch and rounds per size.
fn shape(bytes: usize) -> (usize, usize) {
    if bytes <= 1 << 20 {
        (100, 40)
    } else if bytes <= 64 << 20 {
        (20, 20)
    } else {
        (5, 10)
    }
}

/// One size's paired rounds: the safe and raw seconds per iteration, each round.
struct Pairs {
    safe: Vec<f64>,
    raw: Vec<f64>,
}

impl Pairs {
    /// Mean and 95% half-interval of raw / safe per round.
    fn ratio(&self) -> (f64, f64) {
        let r: Vec<f64> = self
            .raw
            .iter()
            .zip(&self.safe)
            .map(|(r, s)| r / s)
            .collect();
        stats::mean_ci(&r)
    }
}

/// Run `rounds` pairs of `safe` and `raw` batches (each returns seconds per iteration), alternating
/// which goes first, after one warm-up of each.
fn paired(
    rounds: usize,
    mut safe: impl FnMut() -> Result<f64, String>,
    mut raw: impl FnMut() -> Result<f64, String>,
) -> Result<Pairs, String> {
    safe()?;
    raw()?;
    let mut p = Pairs {
        safe: Vec::with_capacity(rounds),
        raw: Vec::with_capacity(rounds),
    };
    for round in 0..rounds {
        if round % 2 == 0 {
            p.safe.push(safe()?);
            p.raw.push(raw()?);
        } else {
            p.raw.push(raw()?);
            p.safe.push(safe()?);
        }
    }
    Ok(p)
}

fn nccl_check(call: &str, r: nccl::ncclResult_t) -> Result<(), String> {
    if r == nccl::ncclResult_t::ncclSuccess {
        Ok(())
    } else {
        Err(format!("{call} failed: {r:?}"))
    }
}

fn hip_check(call: &str, r: sys::hipError_t) -> Result<(), String> {
    if r == sys::hipSuccess {
        Ok(())
    } else {
        Err(format!("{call} failed: {r:?}"))
    }
}

fn raw_sync(streams: &[Stream]) -> Result<(), String> {
    for s in streams {
        // SAFETY: a live stream of this process.
        hip_check("hipStreamSynchronize", unsafe {
            sys::hipStreamSynchronize(s.raw())
        })?;
    }
    Ok(())
}

struct Results {
    all_reduce: BTreeMap<usize, Pairs>,
    peer: BTreeMap<usize, Pairs>,
    /// `--explain`: per size up to 1 MiB, raw NCCL inside `hip::rccl::group`, and the safe calls on
    /// untracked buffers, each paired with raw NCCL.
    explained: Vec<(usize, Pairs, Pairs)>,
}

/// What one all-reduce batch needs: the communicators and streams of both ranks.
struct Ranks {
    comms: Vec<Comm>,
    streams: [Stream; 2],
}

fn err(e: hip::Error) -> String {
    e.to_string()
}

/// Seconds per iteration of `iters` groups of two in-place all-reduces of `count` f32 through the safe
/// API, both streams synchronized at the end.
fn safe_all_reduce(
    r: &Ranks,
    bufs: &mut [DeviceBuffer<f32>; 2],
    count: usize,
    iters: usize,
) -> Result<f64, String> {
    let [b0, b1] = bufs;
    let mut views = [
        b0.slice_mut(..count).map_err(err)?,
        b1.slice_mut(..count).map_err(err)?,
    ];
    let t0 = Instant::now();
    for _ in 0..iters {
        group(|| {
            for (k, view) in views.iter_mut().enumerate() {
                r.comms[k].all_reduce_in_place(view, ReduceOp::Sum, &r.streams[k])?;
            }
            Ok(())
        })
        .map_err(err)?;
    }
    for s in &r.streams {
        s.synchronize().map_err(err)?;
    }
    Ok(t0.elapsed().as_secs_f64() / iters as f64)
}

/// The same through NCCL directly (`in_safe_group`: inside `hip::rccl::group` instead of
/// ncclGroupStart/End, to see what the group alone costs).
fn raw_all_reduce(
    r: &Ranks,
    ptrs: [hip::DevicePtr; 2],
    count: usize,
    iters: usize,
    in_safe_group: bool,
) -> Result<f64, String> {
    let calls = || -> Result<(), String> {
        for (k, &ptr) in ptrs.iter().enumerate() {
            // SAFETY: each buffer holds at least `count` f32 on its communicator's device and lives until
            // the end of `run`; both streams are synchronized below before anything else uses them.
            nccl_check("ncclAllReduce", unsafe {
                nccl::ncclAllReduce(
                    ptr,
                    ptr,
                    count,
                    <f32 as NcclType>::DATA_TYPE,
                    ReduceOp::Sum.raw(),
                    r.comms[k].raw(),
                    r.streams[k].raw() as _,
                )
            })?;
        }
        Ok(())
    };
    let t0 = Instant::now();
    for _ in 0..iters {
        if in_safe_group {
            group(|| Ok(calls())).map_err(err)??;
        } else {
            // SAFETY: no arguments; the group brackets the two calls above.
            nccl_check("ncclGroupStart", unsafe { nccl::ncclGroupStart() })?;
            calls()?;
            // SAFETY: as ncclGroupStart.
            nccl_check("ncclGroupEnd", unsafe { nccl::ncclGroupEnd() })?;
        }
    }
    raw_sync(&r.streams)?;
    Ok(t0.elapsed().as_secs_f64() / iters as f64)
}

fn run(max_bytes: usize, explain: bool) -> Result<Results, String> {
    let e = err;
    let devices = [Device::get(0).map_err(e)?, Device::get(1).map_err(e)?];
    let r = Ranks {
        comms: Comm::init_all(&devices).map_err(e)?,
        streams: [
            Stream::new(&devices[0]).map_err(e)?,
            Stream::new(&devices[1]).map_err(e)?,
        ],
    };
    let (comms, streams) = (&r.comms, &r.streams);
    let n = max_bytes / 4;
    let mut bufs = [
        DeviceBuffer::<f32>::zeroed(&devices[0], n).map_err(e)?,
        DeviceBuffer::<f32>::zeroed(&devices[1], n).map_err(e)?,
    ];
    let ptrs = [bufs[0].device_ptr(), bufs[1].device_ptr()];
    let mut all_reduce = BTreeMap::new();
    let mut explained = Vec::new();
    let mut bytes = 1024;
    while bytes <= max_bytes {
        let count = bytes / 4;
        let (iters, rounds) = shape(bytes);
        let raw = || raw_all_reduce(&r, ptrs, count, iters, false);
        let pairs = paired(rounds, || safe_all_reduce(&r, &mut bufs, count, iters), raw)?;
        all_reduce.insert(bytes, pairs);
        if explain && bytes <= 1 << 20 {
            let group_only = paired(rounds, || raw_all_reduce(&r, ptrs, count, iters, true), raw)?;
            for b in &mut bufs {
                // SAFETY: every use of the buffers is on their one stream, synchronized after each batch.
                unsafe { b.set_untracked(true) };
            }
            let untracked = paired(rounds, || safe_all_reduce(&r, &mut bufs, count, iters), raw)?;
            for b in &mut bufs {
                // SAFETY: as above.
                unsafe { b.set_untracked(false) };
            }
            explained.push((bytes, group_only, untracked));
        }
        bytes *= 4;
    }
    for c in comms {
        c.async_error().map_err(e)?;
    }
    devices[1].ensure_peer_access(&devices[0]).map_err(e)?;
    devices[0].ensure_peer_access(&devices[1]).map_err(e)?;
    let mut peer = BTreeMap::new();
    let mut bytes = 1024;
    while bytes <= max_bytes {
        let count = bytes / 4;
        let (iters, rounds) = shape(bytes);
        let safe = || -> Result<f64, String> {
            let [b0, b1] = &mut bufs;
            let src = b0.slice(..count).map_err(e)?;
            let mut dst = b1.slice_mut(..count).map_err(e)?;
            let t0 = Instant::now();
            for _ in 0..iters {
                streams[1].copy_peer_async(&src, &mut dst).map_err(e)?;
            }
            streams[1].synchronize().map_err(e)?;
            Ok(t0.elapsed().as_secs_f64() / iters as f64)
        };
        let raw = || -> Result<f64, String> {
            let t0 = Instant::now();
            for _ in 0..iters {
                // SAFETY: both buffers hold at least `bytes` on their devices and live until the end of
                // `run`; the stream is synchronized below.
                hip_check("hipMemcpyPeerAsync", unsafe {
                    sys::hipMemcpyPeerAsync(ptrs[1], 1, ptrs[0], 0, bytes, streams[1].raw())
                })?;
            }
            raw_sync(&streams[1..])?;
            Ok(t0.elapsed().as_secs_f64() / iters as f64)
        };
        peer.insert(bytes, paired(rounds, safe, raw)?);
        bytes *= 4;
    }
    Ok(Results {
        all_reduce,
        peer,
        explained,
    })
}

/// Seconds per operation, by size in bytes.
type Times = BTreeMap<usize, f64>;

/// The raw C program's seconds per all-reduce and per peer copy, by size (unpaired, its own process).
fn c_baseline(program: &str, max_bytes: usize) -> Result<(Times, Times), String> {
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
    let (mut ar, mut peer) = (BTreeMap::new(), BTreeMap::new());
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [kind, bytes, secs] = f[..] {
            let (Ok(b), Ok(s)) = (bytes.parse::<usize>(), secs.parse::<f64>()) else {
                continue;
            };
            match kind {
                "allreduce" => ar.insert(b, s),
                "peer" => peer.insert(b, s),
                _ => None,
            };
        }
    }
    Ok((ar, peer))
}

fn size(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b => format!("{} KiB", b >> 10),
    }
}

fn table(title: &str, pairs: &BTreeMap<usize, Pairs>, c: Option<&BTreeMap<usize, f64>>) {
    println!("\n{title}\n");
    println!(
        "| size | rounds | safe time (us) | raw time (us) | safe GB/s | raw / safe time, mean ± 95% | raw C, own process (us) |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (&bytes, p) in pairs {
        let (s, r) = (stats::median(&p.safe), stats::median(&p.raw));
        let (mean, half) = p.ratio();
        let c = c
            .and_then(|c| c.get(&bytes))
            .map_or("-".to_string(), |t| format!("{:.1}", t * 1e6));
        println!(
            "| {} | {} | {:.1} | {:.1} | {:.2} | {:.3}x ± {:.3} | {c} |",
            size(bytes),
            p.safe.len(),
            s * 1e6,
            r * 1e6,
            bytes as f64 / s / 1e9,
            mean,
            half
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
    let max_bytes: usize = arg("--max-bytes")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1 << 30);
    let (major, minor, patch) = hip::rccl::version().unwrap_or((0, 0, 0));
    let explain = args.iter().any(|a| a == "--explain");
    let results = match run(max_bytes, explain) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("rccl benchmark failed: {e}");
            std::process::exit(1);
        }
    };
    let c = match arg("--baseline").map(|p| c_baseline(&p, max_bytes)) {
        Some(Err(e)) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
        Some(Ok(c)) => Some(c),
        None => None,
    };
    let names: Vec<String> = (0..2)
        .filter_map(|i| Device::get(i).ok()?.properties().ok().map(|p| p.name))
        .collect();
    println!(
        "{} {major}.{minor}.{patch}, devices: {}; paired rounds in one process (raw = NCCL / hipMemcpyPeerAsync called directly); times are medians",
        hip::rccl::LIBRARY,
        names.join(", ")
    );
    table(
        "All-reduce (f32 sum, in place, 2 GPUs, one group per iteration)",
        &results.all_reduce,
        c.as_ref().map(|c| &c.0),
    );
    table(
        "Peer copy device 0 -> device 1 (peer access on): Stream::copy_peer_async vs hipMemcpyPeerAsync",
        &results.peer,
        c.as_ref().map(|c| &c.1),
    );
    if !results.explained.is_empty() {
        println!("\nWhere the all-reduce's cost goes (`--explain`): raw / contender time per round, mean ± 95%\n");
        println!("| size | raw NCCL inside hip::rccl::group | safe calls, buffers untracked |");
        println!("| ---: | ---: | ---: |");
        for (bytes, g, u) in &results.explained {
            let ((gm, gh), (um, uh)) = (g.ratio(), u.ratio());
            println!(
                "| {} | {gm:.3}x ± {gh:.3} | {um:.3}x ± {uh:.3} |",
                size(*bytes)
            );
        }
    }
}
