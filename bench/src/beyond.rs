//! Where the safe crate aims past raw C++: staged pageable copies (the staging ring), host time per launch
//! in small batches, and graph replay of 100 small kernels.
use crate::baseline::{checked, Baseline};
use crate::stats::{ratio, Samples};
use crate::Kernels;
use hip::memory::staging::{self, StagingConfig};
use hip::prelude::*;
use hip::{CaptureMode, DeviceMemoryMut};
use std::ffi::c_void;
use std::fmt::Write as _;
use std::time::Instant;

fn e(e: hip::Error) -> String {
    e.to_string()
}

/// Median of `rounds` runs of `f` (ns).
fn samples(rounds: usize, mut f: impl FnMut() -> Result<f64, String>) -> Result<Samples, String> {
    Ok(Samples::new(
        (0..rounds).map(|_| f()).collect::<Result<_, _>>()?,
    ))
}

fn gbps(bytes: usize, ns: &Samples) -> Samples {
    ns.map(|t| bytes as f64 / t)
}

/// Staged pageable H2D / D2H (safe, ring on and off) against raw C++ `hipMemcpy` (cudaMemcpy underneath
/// on NVIDIA) from the same pageable memory, with the pinned rate as the limit. Results verified.
pub fn staged_copy_section(
    out: &mut String,
    verdicts: &mut Vec<String>,
    device: &Device,
    baseline: Option<&Baseline>,
    quick: bool,
) -> Result<(), String> {
    let sizes: &[usize] = if quick {
        &[16 << 20, 64 << 20]
    } else {
        &[16 << 20, 64 << 20, 256 << 20, 1 << 30]
    };
    let rounds = if quick { 3 } else { 7 };
    let max = *sizes.last().unwrap();
    let n = max / 4;
    let pattern: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
    let mut back = vec![0u32; n];
    let mut pinned = PinnedBuffer::<u32>::zeroed(device, n).map_err(e)?;
    let mut dev = DeviceBuffer::<u32>::zeroed(device, n).map_err(e)?;
    let cfg = staging::config();
    let on = StagingConfig {
        enabled: true,
        ..cfg
    };
    writeln!(out, "## Staged pageable copies\n").unwrap();
    writeln!(
        out,
        "Safe `copy_from_host` / `copy_to_host` from pageable memory through the staging ring ({} pinned \
         buffers of {} MiB, {} copy threads, threshold {} MiB), the same with the ring off, raw C++ \
         `hipMemcpy` from the same memory, and raw C++ from pinned memory (the limit). GB/s, median of {rounds}.\n",
        on.buffers,
        on.chunk_bytes >> 20,
        on.threads,
        on.threshold_bytes >> 20
    )
    .unwrap();
    writeln!(out, "| copy | MiB | staged (safe) | ring off (safe) | raw C++ | pinned C++ (limit) | staged / raw C++ |").unwrap();
    writeln!(out, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |").unwrap();
    for &bytes in sizes {
        let k = bytes / 4;
        for h2d in [true, false] {
            let mut safe_run = |cfg: StagingConfig| -> Result<f64, String> {
                staging::set_config(cfg);
                let mut v = dev.slice_mut(..k).map_err(e)?;
                let t = Instant::now();
                if h2d {
                    v.copy_from_host(&pattern[..k]).map_err(e)?;
                } else {
                    v.copy_to_host(&mut back[..k]).map_err(e)?;
                }
                Ok(t.elapsed().as_nanos() as f64)
            };
            let staged = samples(rounds, || safe_run(on))?;
            let plain = samples(rounds, || safe_run(StagingConfig::disabled()))?;
            staging::set_config(cfg);
            let code = if h2d { 0 } else { 1 };
            let (raw, limit) = match baseline {
                Some(b) => {
                    let d = dev.device_ptr();
                    let page = if h2d {
                        pattern.as_ptr() as *mut c_void
                    } else {
                        back.as_mut_ptr() as *mut c_void
                    };
                    let pin = pinned.as_mut_slice().map_err(e)?.as_mut_ptr() as *mut c_void;
                    let (dst, src) = if h2d { (d, page) } else { (page, d) };
                    let (pdst, psrc) = if h2d { (d, pin) } else { (pin, d) };
                    let raw = samples(rounds, || {
                        checked("copy", unsafe { (b.copy)(code, dst, src, bytes, 1) })
                    })?;
                    let lim = samples(rounds, || {
                        checked("copy", unsafe { (b.copy)(code, pdst, psrc, bytes, 1) })
                    })?;
                    (Some(raw), Some(lim))
                }
                None => (None, None),
            };
            let show =
                |s: &Option<Samples>| s.as_ref().map_or("-".into(), |s| gbps(bytes, s).show(1));
            let vs = raw.as_ref().map_or("-".into(), |r| ratio(r, &staged));
            let label = if h2d { "H2D" } else { "D2H" };
            writeln!(
                out,
                "| {label} | {} | {} | {} | {} | {} | {vs} |",
                bytes >> 20,
                gbps(bytes, &staged).show(1),
                gbps(bytes, &plain).show(1),
                show(&raw),
                show(&limit)
            )
            .unwrap();
            if let (Some(r), true) = (&raw, bytes >= 64 << 20) {
                let x = r.median() / staged.median();
                let (target, name) = if h2d { (2.0, "H2D") } else { (1.5, "D2H") };
                let met = if x >= target { "met" } else { "MISSED" };
                verdicts.push(format!(
                    "staged pageable {name} at {} MiB >= {target}x raw C++: {x:.2}x ({met})",
                    bytes >> 20
                ));
            }
        }
        // Verify: what went up through the ring comes back through it.
        staging::set_config(on);
        let mut v = dev.slice_mut(..k).map_err(e)?;
        v.copy_from_host(&pattern[..k]).map_err(e)?;
        back[..k].fill(0);
        v.copy_to_host(&mut back[..k]).map_err(e)?;
        staging::set_config(cfg);
        if back[..k] != pattern[..k] {
            return Err(format!("staged copy of {bytes} bytes came back wrong"));
        }
    }
    writeln!(out).unwrap();
    Ok(())
}

/// Host time of the launch calls only, in batches small enough that the queue never fills.
pub fn launch_batch_section(
    out: &mut String,
    verdicts: &mut Vec<String>,
    device: &Device,
    k: &Kernels,
    baseline: Option<&Baseline>,
    quick: bool,
) -> Result<(), String> {
    let stream = Stream::new(device).map_err(e)?;
    let batches = if quick { 200 } else { 2000 };
    let rounds = if quick { 3 } else { 9 };
    writeln!(out, "## Host time per launch (small batches)\n").unwrap();
    writeln!(out, "Empty kernel, one block of 64 threads; {batches} batches, the stream synchronised between batches (not timed): only the launch calls are timed. ns per launch, median of {rounds}.\n").unwrap();
    writeln!(out, "| batch | safe | raw C++ | safe - C++ |").unwrap();
    writeln!(out, "| ---: | ---: | ---: | ---: |").unwrap();
    for batch in [1usize, 8, 32] {
        let safe = samples(rounds, || {
            let mut ns = 0.0;
            let cfg = LaunchConfig::new(1, 64);
            for _ in 0..batches {
                let t = Instant::now();
                for _ in 0..batch {
                    let mut args = LaunchArgs::new();
                    unsafe { k.empty.launch(&stream, &cfg, &mut args).map_err(e)? };
                }
                ns += t.elapsed().as_nanos() as f64;
                stream.synchronize().map_err(e)?;
            }
            Ok(ns / (batches * batch) as f64)
        })?;
        let cpp = match baseline {
            Some(b) => Some(samples(rounds, || {
                let ns = checked("launch batches", unsafe {
                    (b.launch_batches)(k.empty.raw(), batches as i32, batch as i32, 64)
                })?;
                Ok(ns / (batches * batch) as f64)
            })?),
            None => None,
        };
        let diff = cpp.as_ref().map(|c| safe.median() - c.median());
        writeln!(
            out,
            "| {batch} | {} | {} | {} |",
            safe.show(0),
            cpp.as_ref().map_or("-".into(), |c| c.show(0)),
            diff.map_or("-".into(), |d| format!("{d:+.0}"))
        )
        .unwrap();
        if let (Some(d), 8) = (diff, batch) {
            let met = if d <= 50.0 { "met" } else { "MISSED" };
            verdicts.push(format!(
                "safe launch adds <= 50 ns host time over raw C++ (batches of 8): {d:+.0} ns ({met})"
            ));
        }
    }
    writeln!(out).unwrap();
    Ok(())
}

/// 100 empty kernels one by one vs one captured graph, replayed; per kernel, host + device (synchronised).
pub fn graph_section(
    out: &mut String,
    device: &Device,
    k: &Kernels,
    baseline: Option<&Baseline>,
    quick: bool,
) -> Result<(), String> {
    const KERNELS: usize = 100;
    let replays = if quick { 50 } else { 500 };
    let stream = Stream::new(device).map_err(e)?;
    let cfg = LaunchConfig::new(1, 64);
    writeln!(out, "## Graph replay of {KERNELS} small kernels\n").unwrap();
    let t = Instant::now();
    for _ in 0..replays {
        for _ in 0..KERNELS {
            let mut args = LaunchArgs::new();
            unsafe { k.empty.launch(&stream, &cfg, &mut args).map_err(e)? };
        }
        stream.synchronize().map_err(e)?;
    }
    let one_by_one = t.elapsed().as_nanos() as f64 / (replays * KERNELS) as f64;
    writeln!(out, "| contender | ns per kernel |").unwrap();
    writeln!(out, "| --- | ---: |").unwrap();
    writeln!(out, "| safe, one by one | {one_by_one:.0} |").unwrap();
    match capture(&stream, k, &cfg) {
        Ok(mut exec) => {
            exec.launch(&stream).map_err(e)?;
            stream.synchronize().map_err(e)?;
            let t = Instant::now();
            for _ in 0..replays {
                exec.launch(&stream).map_err(e)?;
                stream.synchronize().map_err(e)?;
            }
            let ns = t.elapsed().as_nanos() as f64 / (replays * KERNELS) as f64;
            writeln!(out, "| safe, graph replay | {ns:.0} |").unwrap();
        }
        Err(err) => writeln!(out, "| safe, graph replay | n/a: {err} |").unwrap(),
    }
    if let Some(b) = baseline {
        let mut obo = 0.0;
        let g = checked("graph replay", unsafe {
            (b.graph_replay)(k.empty.raw(), KERNELS as i32, replays as i32, 64, &mut obo)
        })?;
        writeln!(out, "| raw C++, one by one | {:.0} |", obo / KERNELS as f64).unwrap();
        writeln!(
            out,
            "| raw C++, graph replay ({}) | {:.0} |",
            if hip::PLATFORM == "nvidia" {
                "CUDA graph API"
            } else {
                "HIP graph API"
            },
            g / KERNELS as f64
        )
        .unwrap();
    }
    writeln!(out).unwrap();
    Ok(())
}

fn capture(stream: &Stream, k: &Kernels, cfg: &LaunchConfig) -> hip::Result<hip::GraphExec> {
    let mut cap = stream.begin_capture(CaptureMode::Global)?;
    for _ in 0..100 {
        let mut args = LaunchArgs::new();
        // SAFETY: `empty` takes no arguments and touches no memory.
        unsafe { cap.launch(&k.empty, cfg, &mut args)? };
    }
    cap.end()?.instantiate()
}
