//! Where the safe crate aims past raw C++: staged pageable copies (the staging ring) and graph replay of
//! 100 small kernels (the launch's own host cost: launch_cost.rs).
use crate::baseline::{checked, Baseline};
use crate::stats::{ratio, Samples};
use crate::{e, Kernels};
use hip::memory::staging::{self, StagingConfig};
use hip::prelude::*;
use hip::{CaptureMode, DeviceMemoryMut};
use std::ffi::c_void;
use std::fmt::Write as _;
use std::time::Instant;

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
        &[1 << 20, 16 << 20, 64 << 20]
    } else {
        &[1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30]
    };
    let rounds = if quick { 3 } else { 7 };
    let max = *sizes.last().unwrap();
    let n = max / 4;
    let pattern: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
    let mut back = vec![0u32; n];
    let mut pinned = PinnedBuffer::<u32>::zeroed(device, n).map_err(e)?;
    let mut dev = DeviceBuffer::<u32>::zeroed(device, n).map_err(e)?;
    let cfg = staging::config();
    // The ring at every size (threshold 0), and the registered pages at every size (issue 56); the
    // configuration a program gets by default is the "default" column.
    let on = StagingConfig {
        enabled: true,
        threshold_bytes: 0,
        register_bytes: usize::MAX,
        ..cfg
    };
    let reg = StagingConfig {
        register_bytes: 0,
        ..on
    };
    writeln!(out, "## Staged pageable copies\n").unwrap();
    writeln!(
        out,
        "Safe `copy_from_host` / `copy_to_host` from pageable memory through the staging ring ({} pinned \
         buffers of {} MiB, {} copy threads, at every size here), through the user's pages registered for \
         the copy (`hipHostRegister`, issue 56), the default configuration (threshold {} MiB, registering \
         {}), the ring off, raw C++ `hipMemcpy` from the same memory, and raw C++ from pinned memory (the \
         limit). GB/s, median of {rounds}, the columns interleaved.\n",
        on.buffers,
        on.chunk_bytes >> 20,
        on.threads,
        cfg.threshold_bytes >> 20,
        if cfg.register_bytes == usize::MAX {
            "off".to_string()
        } else {
            format!("from {} MiB", cfg.register_bytes >> 20)
        }
    )
    .unwrap();
    writeln!(out, "| copy | MiB | staged (safe) | registered (safe) | default (safe) | ring off (safe) | raw C++ | pinned C++ (limit) | staged / raw C++ | registered / raw C++ | best / pinned |").unwrap();
    writeln!(
        out,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    )
    .unwrap();
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
            let (mut st, mut rg, mut df, mut pl) = (vec![], vec![], vec![], vec![]);
            for _ in 0..rounds {
                st.push(safe_run(on)?);
                rg.push(safe_run(reg)?);
                df.push(safe_run(cfg)?);
                pl.push(safe_run(StagingConfig::disabled())?);
            }
            let (staged, registered) = (Samples::new(st), Samples::new(rg));
            let (default, plain) = (Samples::new(df), Samples::new(pl));
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
            let vr = raw.as_ref().map_or("-".into(), |r| ratio(r, &registered));
            let best = staged.median().min(registered.median());
            let of_pinned = limit
                .as_ref()
                .map_or("-".into(), |l| format!("{:.0}%", 100.0 * l.median() / best));
            let label = if h2d { "H2D" } else { "D2H" };
            writeln!(
                out,
                "| {label} | {} | {} | {} | {} | {} | {} | {} | {vs} | {vr} | {of_pinned} |",
                bytes >> 20,
                gbps(bytes, &staged).show(1),
                gbps(bytes, &registered).show(1),
                gbps(bytes, &default).show(1),
                gbps(bytes, &plain).show(1),
                show(&raw),
                show(&limit)
            )
            .unwrap();
            if let (Some(r), Some(l), true) = (&raw, &limit, bytes >= 64 << 20) {
                let x = l.median() / best;
                let met = if x >= 0.7 { "met" } else { "MISSED" };
                verdicts.push(format!(
                    "best pageable {label} at {} MiB >= 70% of pinned: {:.0}% ({met}); default / raw C++ {:.2}x",
                    bytes >> 20,
                    100.0 * x,
                    r.median() / default.median()
                ));
            }
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

/// 100 empty kernels one by one vs one captured graph, replayed; per kernel, host + device (synchronised).
/// Then what changing the graph's arguments costs: a new capture + update against a new instantiation.
pub fn graph_section(
    out: &mut String,
    verdicts: &mut Vec<String>,
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
    writeln!(out, "Empty kernel, one block of 64 threads; {replays} rounds, each synchronised; ns per kernel, host + device.\n").unwrap();
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
    let mut exec = capture(&stream, k, &cfg)
        .map_err(e)?
        .instantiate()
        .map_err(e)?;
    exec.launch(&stream).map_err(e)?;
    stream.synchronize().map_err(e)?;
    let t = Instant::now();
    for _ in 0..replays {
        exec.launch(&stream).map_err(e)?;
        stream.synchronize().map_err(e)?;
    }
    let safe_graph = t.elapsed().as_nanos() as f64 / (replays * KERNELS) as f64;
    writeln!(out, "| safe, graph replay | {safe_graph:.0} |").unwrap();
    if let Some(b) = baseline {
        let mut obo = 0.0;
        let g = checked("graph replay", unsafe {
            (b.graph_replay)(k.empty.raw(), KERNELS as i32, replays as i32, 64, &mut obo)
        })? / KERNELS as f64;
        writeln!(out, "| raw C++, one by one | {:.0} |", obo / KERNELS as f64).unwrap();
        let api = if hip::PLATFORM == "nvidia" {
            "CUDA graph API"
        } else {
            "HIP graph API"
        };
        writeln!(out, "| raw C++, graph replay ({api}) | {g:.0} |").unwrap();
        verdicts.push(format!(
            "graph replay: safe {safe_graph:.0} ns per kernel vs {one_by_one:.0} one by one ({:.2}x faster); \
             safe / raw C++ graph replay = {:.3}x",
            one_by_one / safe_graph,
            safe_graph / g
        ));
    }
    writeln!(out).unwrap();
    // Changing arguments: capture again and update, or capture again and instantiate.
    let rounds = if quick { 20 } else { 200 };
    let mut update_ns = Vec::new();
    let mut instantiate_ns = Vec::new();
    for _ in 0..rounds {
        let graph = capture(&stream, k, &cfg).map_err(e)?;
        let t = Instant::now();
        exec.update(&graph).map_err(e)?;
        update_ns.push(t.elapsed().as_nanos() as f64);
        let t = Instant::now();
        let fresh = graph.instantiate().map_err(e)?;
        instantiate_ns.push(t.elapsed().as_nanos() as f64);
        drop(fresh);
    }
    let (u, i) = (Samples::new(update_ns), Samples::new(instantiate_ns));
    writeln!(out, "Changing a {KERNELS}-kernel graph's arguments after a new capture, median (min-max) of {rounds}, us:\n").unwrap();
    writeln!(out, "| `GraphExec::update` | `Graph::instantiate` | instantiate / update |\n| ---: | ---: | ---: |").unwrap();
    writeln!(
        out,
        "| {} | {} | {} |\n",
        u.map(|x| x / 1e3).show(1),
        i.map(|x| x / 1e3).show(1),
        ratio(&i, &u)
    )
    .unwrap();
    built_graph_rows(out, verdicts, device, k, baseline, quick)
}

/// Issue 57's rows: the same 100 launches as a graph built node by node (`GraphBuilder`, a chain of kernel
/// nodes: the topology a capture makes), replayed against raw C++'s captured graph in alternating rounds;
/// then changing one node (`GraphExec::set_kernel_node_params`) against instantiating the graph again.
fn built_graph_rows(
    out: &mut String,
    verdicts: &mut Vec<String>,
    device: &Device,
    k: &Kernels,
    baseline: Option<&Baseline>,
    quick: bool,
) -> Result<(), String> {
    const KERNELS: usize = 100;
    let (rounds, replays) = if quick { (3, 20) } else { (9, 100) };
    let stream = Stream::new(device).map_err(e)?;
    let cfg = LaunchConfig::new(1, 64);
    let mut builder = hip::GraphBuilder::new(device).map_err(e)?;
    let mut last: Option<hip::GraphNode> = None;
    let mut nodes = Vec::with_capacity(KERNELS);
    for _ in 0..KERNELS {
        let deps: Vec<_> = last.into_iter().collect();
        // SAFETY: `empty` takes no arguments and touches no memory.
        let node =
            unsafe { builder.kernel(&deps, &k.empty, &cfg, &mut LaunchArgs::new()) }.map_err(e)?;
        nodes.push(node);
        last = Some(node);
    }
    let graph = builder.build().map_err(e)?;
    let mut exec = graph.instantiate().map_err(e)?;
    exec.launch(&stream).map_err(e)?;
    stream.synchronize().map_err(e)?;
    let (mut safe, mut raw) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..replays {
            exec.launch(&stream).map_err(e)?;
            stream.synchronize().map_err(e)?;
        }
        safe.push(t.elapsed().as_nanos() as f64 / (replays * KERNELS) as f64);
        if let Some(b) = baseline {
            let mut obo = 0.0;
            let g = checked("graph replay", unsafe {
                (b.graph_replay)(k.empty.raw(), KERNELS as i32, replays as i32, 64, &mut obo)
            })?;
            raw.push(g / KERNELS as f64);
        }
    }
    let safe = Samples::new(safe);
    writeln!(out, "A graph of the same {KERNELS} launches built node by node (`GraphBuilder`, a chain), {rounds} rounds of {replays} replays alternating with raw C++'s captured graph; ns per kernel, median (min-max):\n").unwrap();
    writeln!(
        out,
        "| safe, built graph | raw C++, captured graph | safe / raw |\n| ---: | ---: | ---: |"
    )
    .unwrap();
    if raw.is_empty() {
        writeln!(out, "| {} | - | - |\n", safe.show(0)).unwrap();
    } else {
        let raw = Samples::new(raw);
        writeln!(
            out,
            "| {} | {} | {} |\n",
            safe.show(0),
            raw.show(0),
            ratio(&safe, &raw)
        )
        .unwrap();
        verdicts.push(format!(
            "built graph replay (issue 57): safe {:.0} ns per kernel, raw C++ captured {:.0}: raw / safe = {:.3}x of raw speed",
            safe.median(),
            raw.median(),
            raw.median() / safe.median()
        ));
    }
    // One node changed (the 50th: a new configuration, the same kernel) against a new instantiation.
    let updates = if quick { 20 } else { 200 };
    let (mut update_ns, mut instantiate_ns) = (Vec::new(), Vec::new());
    for i in 0..updates {
        let cfg = LaunchConfig::new(1, if i % 2 == 0 { 32 } else { 64 });
        let t = Instant::now();
        // SAFETY: as above; `empty` runs with any block size.
        unsafe {
            exec.set_kernel_node_params(
                &graph,
                nodes[KERNELS / 2],
                &k.empty,
                &cfg,
                &mut LaunchArgs::new(),
            )
        }
        .map_err(e)?;
        update_ns.push(t.elapsed().as_nanos() as f64);
        let t = Instant::now();
        let fresh = graph.instantiate().map_err(e)?;
        instantiate_ns.push(t.elapsed().as_nanos() as f64);
        drop(fresh);
    }
    exec.launch(&stream).map_err(e)?;
    stream.synchronize().map_err(e)?;
    let (u, i) = (Samples::new(update_ns), Samples::new(instantiate_ns));
    writeln!(
        out,
        "Changing one kernel node of the built graph, median (min-max) of {updates}, us:\n"
    )
    .unwrap();
    writeln!(out, "| `GraphExec::set_kernel_node_params` | `Graph::instantiate` | instantiate / update |\n| ---: | ---: | ---: |").unwrap();
    writeln!(
        out,
        "| {} | {} | {} |\n",
        u.map(|x| x / 1e3).show(1),
        i.map(|x| x / 1e3).show(2),
        ratio(&i, &u)
    )
    .unwrap();
    Ok(())
}

/// 100 empty launches captured on `stream`.
fn capture(stream: &Stream, k: &Kernels, cfg: &LaunchConfig) -> hip::Result<hip::Graph> {
    let mut cap = stream.begin_capture(CaptureMode::Global)?;
    for _ in 0..100 {
        let mut args = LaunchArgs::new();
        // SAFETY: `empty` takes no arguments and touches no memory.
        unsafe { cap.launch(&k.empty, cfg, &mut args)? };
    }
    cap.end()
}
