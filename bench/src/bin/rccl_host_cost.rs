//! What `hip::rccl` adds on the host per collective call, measured on one GPU: a one-rank communicator,
//! whose in-place all-reduce NCCL / RCCL answers without touching the device, so a call is nothing but
//! host work, the library's and the safe layer's. Issue 42's two-GPU figure (small all-reduces at
//! 0.967x-0.980x of raw NCCL) mixes that host work with the devices'; this isolates it.
//!
//! ```text
//! rccl_host_cost [--rounds N] [--iters N]
//! ```
//!
//! Per variant, rounds of one batch through it and one batch of raw NCCL (ncclGroupStart, ncclAllReduce,
//! ncclGroupEnd), the order alternating; each batch `iters` iterations timed on the host, the stream
//! synchronized at its end. The figure is the safe batch's time per iteration minus the raw one's, mean
//! and 95% interval over the rounds, in ns. Variants: the safe call inside `hip::rccl::group` (what the
//! two-GPU benchmark times), the same on an untracked buffer (everything but the memory model), raw calls
//! inside `hip::rccl::group` (the group's own cost), and the safe call outside any group (which binds
//! the communicator's device).
#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;
use hip::prelude::*;
use hip::rccl::rccl_sys as nccl;
use hip::rccl::{group, Comm, NcclType, ReduceOp};
use std::time::Instant;

const COUNT: usize = 256; // 1 KiB of f32

fn nccl_check(call: &str, r: nccl::ncclResult_t) -> Result<(), String> {
    if r == nccl::ncclResult_t::ncclSuccess {
        Ok(())
    } else {
        Err(format!("{call} failed: {r:?}"))
    }
}

fn err(e: hip::Error) -> String {
    e.to_string()
}

/// One in-place all-reduce through NCCL directly.
fn raw_call(comm: &Comm, ptr: hip::DevicePtr, stream: &Stream) -> Result<(), String> {
    // SAFETY: `ptr` holds COUNT f32 on the communicator's device and outlives the batch; the stream is
    // live and synchronized at the end of every batch.
    nccl_check("ncclAllReduce", unsafe {
        nccl::ncclAllReduce(
            ptr,
            ptr,
            COUNT,
            <f32 as NcclType>::DATA_TYPE,
            ReduceOp::Sum.raw(),
            comm.raw(),
            stream.raw() as _,
        )
    })
}

#[derive(Clone, Copy)]
enum Variant {
    Raw,
    SafeInGroup,
    SafeUntracked,
    RawInSafeGroup,
    SafeOutsideGroup,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Raw => "raw NCCL in ncclGroupStart/End",
            Variant::SafeInGroup => "safe all_reduce_in_place in group()",
            Variant::SafeUntracked => "the same, buffer untracked",
            Variant::RawInSafeGroup => "raw NCCL call in group()",
            Variant::SafeOutsideGroup => "safe all_reduce_in_place, no group",
        }
    }
}

/// Seconds per iteration of `iters` calls the `v` way.
fn batch(
    v: Variant,
    comm: &Comm,
    buf: &mut DeviceBuffer<f32>,
    stream: &Stream,
    iters: usize,
) -> Result<f64, String> {
    let ptr = buf.device_ptr();
    let t0 = Instant::now();
    for _ in 0..iters {
        match v {
            Variant::Raw => {
                // SAFETY: no arguments; the group brackets the call.
                nccl_check("ncclGroupStart", unsafe { nccl::ncclGroupStart() })?;
                raw_call(comm, ptr, stream)?;
                // SAFETY: as ncclGroupStart.
                nccl_check("ncclGroupEnd", unsafe { nccl::ncclGroupEnd() })?;
            }
            Variant::SafeInGroup | Variant::SafeUntracked => {
                group(|| comm.all_reduce_in_place(buf, ReduceOp::Sum, stream)).map_err(err)?
            }
            Variant::RawInSafeGroup => group(|| Ok(raw_call(comm, ptr, stream))).map_err(err)??,
            Variant::SafeOutsideGroup => comm
                .all_reduce_in_place(buf, ReduceOp::Sum, stream)
                .map_err(err)?,
        }
    }
    stream.synchronize().map_err(err)?;
    Ok(t0.elapsed().as_secs_f64() / iters as f64)
}

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn run(rounds: usize, iters: usize) -> Result<(), String> {
    let device = Device::get(0).map_err(err)?;
    let comm = Comm::init_all(std::slice::from_ref(&device))
        .map_err(err)?
        .pop()
        .ok_or("no communicator")?;
    let stream = Stream::new(&device).map_err(err)?;
    let mut buf = DeviceBuffer::<f32>::zeroed(&device, COUNT).map_err(err)?;
    let (major, minor, patch) = hip::rccl::version().map_err(err)?;
    println!(
        "{} {major}.{minor}.{patch}, {} (one rank), 1 KiB in-place f32 sum; {rounds} rounds of {iters} \
         iterations, each paired with raw NCCL, order alternating\n",
        hip::rccl::LIBRARY,
        device.properties().map_err(err)?.name
    );
    println!(
        "| variant | ns per iteration | raw NCCL, ns per iteration | over raw, ns, mean ± 95% |"
    );
    println!("| --- | ---: | ---: | ---: |");
    for v in [
        Variant::SafeInGroup,
        Variant::SafeUntracked,
        Variant::RawInSafeGroup,
        Variant::SafeOutsideGroup,
    ] {
        let untracked = matches!(v, Variant::SafeUntracked);
        // SAFETY: every use of the buffer is on `stream`, synchronized after each batch.
        unsafe { buf.set_untracked(untracked) };
        batch(v, &comm, &mut buf, &stream, iters)?; // warm-up
        batch(Variant::Raw, &comm, &mut buf, &stream, iters)?;
        let (mut mine, mut raws, mut deltas) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..rounds {
            let (s, r) = if round % 2 == 0 {
                let s = batch(v, &comm, &mut buf, &stream, iters)?;
                (s, batch(Variant::Raw, &comm, &mut buf, &stream, iters)?)
            } else {
                let r = batch(Variant::Raw, &comm, &mut buf, &stream, iters)?;
                (batch(v, &comm, &mut buf, &stream, iters)?, r)
            };
            mine.push(s * 1e9);
            raws.push(r * 1e9);
            deltas.push((s - r) * 1e9);
        }
        // SAFETY: as above.
        unsafe { buf.set_untracked(false) };
        let (mean, half) = stats::mean_ci(&deltas);
        println!(
            "| {} | {:.1} | {:.1} | {:+.1} ± {:.1} |",
            v.name(),
            stats::median(&mine),
            stats::median(&raws),
            mean,
            half
        );
    }
    comm.async_error().map_err(err)?;
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Err(e) = run(arg(&args, "--rounds", 40), arg(&args, "--iters", 2000)) {
        eprintln!("rccl_host_cost failed: {e}");
        std::process::exit(1);
    }
}
