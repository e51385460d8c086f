//! What the memory model costs a launch: the `two` kernel (one buffer argument read, one written), on one
//! stream and alternating two streams, paired round by round with raw C++ making the same launches (no
//! ordering at all), raw hip-sys ordering each change of stream by hand with the two calls the safe launch
//! makes (the floor of any launch that keeps program order across streams with events) and, with the
//! `cudarc` feature, with cudarc's event-tracked launch. Same method as
//! `launch_cost.rs`: one batch per contender per round, order rotating, only the launch calls timed, a
//! synchronise after each batch (not timed); per-round differences averaged with 95% intervals.
use crate::baseline::{checked, Baseline};
use crate::stats::{mean, mean_ci};
use crate::{e, Kernels};
use hip::prelude::*;
use std::ffi::c_void;
use std::fmt::Write as _;
use std::time::Instant;

const BATCH: usize = 8;

#[derive(Clone, Copy, PartialEq)]
enum Who {
    Raw {
        alternate: bool,
    },
    Safe {
        alternate: bool,
    },
    /// Raw hip-sys alternating two streams, each launch after `hipEventRecord` on the other stream and
    /// `hipStreamWaitEvent` on its own: the safe alternating launch's HIP calls without its bookkeeping.
    RawOrdered,
    #[cfg(feature = "cudarc")]
    Cudarc {
        alternate: bool,
    },
}

impl Who {
    fn label(self) -> &'static str {
        match self {
            Who::Raw { alternate: false } => "raw C++, one stream",
            Who::Raw { alternate: true } => "raw C++, alternating",
            Who::Safe { alternate: false } => "safe, one stream",
            Who::Safe { alternate: true } => "safe, alternating",
            Who::RawOrdered => {
                "raw hip-sys, alternating, ordered by hand (record + wait per launch)"
            }
            #[cfg(feature = "cudarc")]
            Who::Cudarc { alternate: false } => "cudarc tracked, one stream",
            #[cfg(feature = "cudarc")]
            Who::Cudarc { alternate: true } => "cudarc tracked, alternating",
        }
    }

    fn alternate(self) -> bool {
        match self {
            Who::Raw { alternate } | Who::Safe { alternate } => alternate,
            Who::RawOrdered => true,
            #[cfg(feature = "cudarc")]
            Who::Cudarc { alternate } => alternate,
        }
    }
}

struct Sides<'a> {
    two: &'a Function,
    streams: [Stream; 2],
    /// The safe contenders' buffers: `[one stream, alternating]`, so that one contender's batch never
    /// starts with the other's change of stream.
    a: [DeviceBuffer<f32>; 2],
    b: [DeviceBuffer<f32>; 2],
    raw_ptrs: [hip::DevicePtr; 2],
    /// The hand-ordered contender's event (timing off, as the safe launch's markers).
    fence: Event,
    baseline: &'a Baseline,
    #[cfg(feature = "cudarc")]
    cudarc: crate::cudarc_side::Tracked,
}

impl Sides<'_> {
    fn run(&mut self, who: Who, n: usize) -> Result<(), String> {
        let cfg = LaunchConfig::new(1, 64);
        // The raw contenders' kernel parameters: pointers to a copy of the two device addresses.
        let mut addrs = self.raw_ptrs;
        let mut params = [
            std::ptr::addr_of_mut!(addrs[0]).cast::<c_void>(),
            std::ptr::addr_of_mut!(addrs[1]).cast::<c_void>(),
        ];
        match who {
            Who::Raw { alternate } => {
                let [s0, s1] = [
                    self.streams[0].raw(),
                    self.streams[usize::from(alternate)].raw(),
                ];
                // SAFETY: `two` takes two pointers, given as pointers to the device addresses.
                let rc = unsafe {
                    (self.baseline.launch_args)(
                        self.two.raw(),
                        n as i32,
                        64,
                        s0,
                        s1,
                        params.as_mut_ptr(),
                    )
                };
                checked("launch_args", rc as f64)?;
            }
            Who::Safe { alternate } => {
                let k = usize::from(alternate);
                for i in 0..n {
                    let s = &self.streams[if alternate { i & 1 } else { 0 }];
                    let mut args = LaunchArgs::new();
                    args.arg(&self.a[k]).arg_mut(&mut self.b[k]);
                    // SAFETY: `two(const float*, float*)` touches nothing.
                    unsafe { self.two.launch(s, &cfg, &mut args) }.map_err(e)?;
                }
            }
            Who::RawOrdered => {
                for i in 0..n {
                    let (s, other) = (self.streams[i & 1].raw(), self.streams[1 - (i & 1)].raw());
                    // SAFETY: live event and streams of this device (current); `two` takes two pointers,
                    // given as pointers to device addresses of live buffers; `params` outlives the call.
                    let rc = unsafe {
                        let mut rc = hip_sys::hipEventRecord(self.fence.raw(), other);
                        if rc == hip_sys::hipSuccess {
                            rc = hip_sys::hipStreamWaitEvent(s, self.fence.raw(), 0);
                        }
                        if rc == hip_sys::hipSuccess {
                            rc = hip_sys::hipModuleLaunchKernel(
                                self.two.raw(),
                                1,
                                1,
                                1,
                                64,
                                1,
                                1,
                                0,
                                s,
                                params.as_mut_ptr(),
                                std::ptr::null_mut(),
                            );
                        }
                        rc
                    };
                    if rc != hip_sys::hipSuccess {
                        return Err(format!("hand-ordered raw launch: HIP error {rc:?}"));
                    }
                }
            }
            #[cfg(feature = "cudarc")]
            Who::Cudarc { alternate } => self.cudarc.launch(n, alternate)?,
        }
        Ok(())
    }

    fn sync(&self) -> Result<(), String> {
        for s in &self.streams {
            s.synchronize().map_err(e)?;
        }
        #[cfg(feature = "cudarc")]
        self.cudarc.sync()?;
        Ok(())
    }
}

pub fn section(
    out: &mut String,
    verdicts: &mut Vec<String>,
    device: &Device,
    k: &Kernels,
    baseline: Option<&Baseline>,
    quick: bool,
) -> Result<(), String> {
    writeln!(out, "## The memory model's cost per launch\n").unwrap();
    let Some(baseline) = baseline else {
        writeln!(
            out,
            "Needs the C++ baseline (scripts/bench.sh builds it).\n"
        )
        .unwrap();
        return Ok(());
    };
    let buf = || DeviceBuffer::<f32>::zeroed(device, 64).map_err(e);
    let (a, b) = ([buf()?, buf()?], [buf()?, buf()?]);
    let mut sides = Sides {
        two: &k.two,
        streams: [
            Stream::non_blocking(device).map_err(e)?,
            Stream::non_blocking(device).map_err(e)?,
        ],
        raw_ptrs: [a[0].device_ptr(), b[0].device_ptr()],
        fence: Event::with_flags(device, hip_sys::hipEventDisableTiming).map_err(e)?,
        a,
        b,
        baseline,
        #[cfg(feature = "cudarc")]
        cudarc: crate::cudarc_side::Tracked::new(device.ordinal(), k.ptx_text()?)?,
    };
    #[cfg_attr(not(feature = "cudarc"), allow(unused_mut))]
    let mut who = vec![
        Who::Raw { alternate: false },
        Who::Safe { alternate: false },
        Who::Raw { alternate: true },
        Who::Safe { alternate: true },
        Who::RawOrdered,
    ];
    #[cfg(feature = "cudarc")]
    who.extend([
        Who::Cudarc { alternate: false },
        Who::Cudarc { alternate: true },
    ]);
    for &w in &who {
        sides.run(w, 200)?;
        sides.sync()?;
    }
    let rounds = if quick { 300 } else { 20_000 };
    let mut diffs = vec![Vec::with_capacity(rounds); who.len()];
    let mut raw_ns = [Vec::with_capacity(rounds), Vec::with_capacity(rounds)];
    for i in 0..rounds {
        let mut ns = vec![0.0f64; who.len()];
        for turn in 0..who.len() {
            let w = (i + turn) % who.len();
            let t = Instant::now();
            sides.run(who[w], BATCH)?;
            ns[w] = t.elapsed().as_nanos() as f64 / BATCH as f64;
            sides.sync()?;
        }
        // Each contender against raw C++ making the same launches on the same streams (one or two).
        for (w, &c) in who.iter().enumerate() {
            let raw = if c.alternate() { 2 } else { 0 };
            diffs[w].push(ns[w] - ns[raw]);
        }
        raw_ns[0].push(ns[0]);
        raw_ns[1].push(ns[2]);
    }
    writeln!(
        out,
        "Kernel `two(const float* a, float* b)` (one block of 64 threads; `a` passed with `arg`, `b` with \
         `arg_mut`), batches of {BATCH}, {rounds} rounds, two non-blocking streams. Alternating, every launch \
         changes the stream of both buffers: the safe launch then orders itself after the other stream \
         (one fence event recorded there and one `hipStreamWaitEvent`) for `b`; `a` is only read and needs \
         nothing once both streams read it. Raw C++ orders nothing; raw hip-sys ordered by hand makes the \
         safe launch's two ordering calls before every launch. ns per launch over raw C++ on the same \
         streams, mean ± 95% interval:\n"
    )
    .unwrap();
    writeln!(out, "| contender | ns per launch over raw C++ |").unwrap();
    writeln!(out, "|---|---:|").unwrap();
    writeln!(
        out,
        "| raw C++, one stream (absolute) | {:.0} |",
        mean(&raw_ns[0])
    )
    .unwrap();
    writeln!(
        out,
        "| raw C++, alternating (absolute) | {:.0} |",
        mean(&raw_ns[1])
    )
    .unwrap();
    for (w, &c) in who.iter().enumerate() {
        if matches!(c, Who::Raw { .. }) {
            continue;
        }
        let (m, ci) = mean_ci(&diffs[w]);
        writeln!(out, "| {} | {m:+.1} ± {ci:.1} |", c.label()).unwrap();
        match c {
            Who::Safe { alternate: false } => {
                let verdict = if m + ci <= 50.0 { "met" } else if m - ci > 50.0 { "MISSED" } else { "not resolved" };
                verdicts.push(format!(
                    "safe launch with two buffer arguments on one stream adds <= 50 ns over raw C++: \
                     {m:+.1} ± {ci:.1} ns ({verdict})"
                ));
            }
            Who::Safe { alternate: true } => verdicts.push(format!(
                "memory model, alternating two streams: {m:+.1} ± {ci:.1} ns per launch over raw C++ \
                 (one fence record + one stream wait per change of stream)"
            )),
            Who::RawOrdered => verdicts.push(format!(
                "raw hip-sys ordering each change of stream by hand (hipEventRecord + hipStreamWaitEvent): \
                 {m:+.1} ± {ci:.1} ns per launch over raw C++ (the floor of the safe alternating row)"
            )),
            #[cfg(feature = "cudarc")]
            Who::Cudarc { alternate } => verdicts.push(format!(
                "cudarc 0.19 with event tracking, {}: {m:+.1} ± {ci:.1} ns per launch over raw C++",
                if alternate { "alternating two streams" } else { "one stream" }
            )),
            Who::Raw { .. } => {}
        }
    }
    writeln!(out).unwrap();
    sync_copy_pairs(out, verdicts, device, baseline, quick)
}

/// Synchronous device-to-device copies, safe `copy_from_device` against raw C++ `hipMemcpy`, paired: each
/// round times one batch of each (order alternating) and keeps their ratio; the mean ratio with its 95%
/// interval resolves what medians of separate samples cannot at the sizes where one copy's time varies
/// by 2x from batch to batch.
fn sync_copy_pairs(
    out: &mut String,
    verdicts: &mut Vec<String>,
    device: &Device,
    baseline: &Baseline,
    quick: bool,
) -> Result<(), String> {
    let max = 16usize << 20;
    let src = DeviceBuffer::<u8>::zeroed(device, max).map_err(e)?;
    let mut dst = DeviceBuffer::<u8>::zeroed(device, max).map_err(e)?;
    let (s_ptr, d_ptr) = (src.device_ptr(), dst.device_ptr());
    writeln!(
        out,
        "Synchronous device-to-device copies, paired: per round one batch of safe `copy_from_device` and          one of raw C++ `hipMemcpy` (each followed by a device synchronise inside its timing, order          alternating), ratio of raw time to safe time per round (> 1: safe faster), mean ± 95% interval:\n"
    )
    .unwrap();
    writeln!(
        out,
        "| size | copies per batch | rounds | safe speed / raw C++ |"
    )
    .unwrap();
    writeln!(out, "|---:|---:|---:|---:|").unwrap();
    let mut worst = f64::INFINITY;
    for bytes in [
        4usize << 10,
        16 << 10,
        64 << 10,
        256 << 10,
        1 << 20,
        4 << 20,
        16 << 20,
    ] {
        let reps = ((16usize << 20) / bytes).clamp(4, 256);
        let rounds = if quick { 20 } else { 400 };
        let mut ratios = Vec::with_capacity(rounds);
        let (src_view, mut dst_view) = (
            src.slice(..bytes).map_err(e)?,
            dst.slice_mut(..bytes).map_err(e)?,
        );
        for i in 0..rounds {
            let mut ns = [0.0; 2];
            for turn in 0..2 {
                let who = (i + turn) % 2;
                if who == 0 {
                    let t = Instant::now();
                    for _ in 0..reps {
                        dst_view.copy_from_device(&src_view).map_err(e)?;
                    }
                    device.synchronize().map_err(e)?;
                    ns[0] = t.elapsed().as_nanos() as f64;
                } else {
                    // SAFETY: both are device allocations of at least `bytes` bytes.
                    ns[1] = checked("copy", unsafe {
                        (baseline.copy)(2, d_ptr, s_ptr, bytes, reps as i32)
                    })?;
                }
            }
            ratios.push(ns[1] / ns[0]);
        }
        let (m, ci) = mean_ci(&ratios);
        worst = worst.min(m - ci);
        writeln!(
            out,
            "| {} KiB | {reps} | {rounds} | {m:.3} ± {ci:.3} |",
            bytes >> 10
        )
        .unwrap();
    }
    writeln!(out).unwrap();
    verdicts.push(format!(
        "{} paired synchronous D2D, 4 KiB to 16 MiB: the lowest lower bound (95%) of safe / raw C++ is {worst:.3}x \
         (target >= 0.95x)",
        if worst >= 0.95 { "MET" } else { "MISS" }
    ));
    Ok(())
}
