//! The GPU benchmarks: the safe `hip` API against raw `hip-sys`, a raw C++ HIP baseline (the same calls,
//! loaded from `bench/baseline/baseline.cpp` built as a shared library) and, with the `cudarc` feature,
//! cudarc driving CUDA directly. All contenders run in one process on one device, interleaved round by
//! round (the order rotates each round), with warm-up outside the timings and results verified.
//!
//! `hip-rs-bench [--baseline lib.so] [--csv copies.csv] [--link-gbps N] [--arch ARCH] [--quick] [--launch-only]
//! [--compile-only] [--staged-only]` (`--launch-only`: the launch-cost, memory-model, paired event and graph
//! sections alone, for iterating on the host path; `--compile-only`: the compile-time section alone;
//! `--staged-only`: the staged pageable copies alone)
//!
//! Prints markdown: launch overhead, copy bandwidth, HIPRTC compile time, event cost, stream overlap, and
//! whether the targets are met. Without a GPU it runs the compile-time section only. `scripts/bench.sh`
//! builds everything and runs it on the GPU machine.
mod baseline;
mod beyond;
mod compile;
mod copies;
#[cfg(feature = "cudarc")]
mod cudarc_side;
mod events;
mod host_atomics;
mod launch;
mod launch_cost;
mod ordering;
mod stats;
mod streams;

use baseline::Baseline;
use hip::prelude::*;
use stats::{beats_by_more_than_spread, ratio, Rng, Samples};
use std::fmt::Write as _;
use std::process::ExitCode;

/// The kernels every contender launches, compiled once with HIPRTC for the device.
const KERNELS: &str = r#"
extern "C" __global__ void empty() {}

extern "C" __global__ void two(const float* a, float* b) {}

extern "C" __global__ void eight(const float* a, const float* b, const float* c, float* d,
                                 float alpha, float beta, unsigned int n, unsigned int stride) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[i * stride] = alpha * a[i * stride] + beta * b[i * stride] + c[i * stride];
}

extern "C" __global__ void work(float* x, unsigned int n, unsigned int iterations) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        for (unsigned int k = 0; k < iterations; ++k) v = v * 0.999f + 0.001f;
        x[i] = v;
    }
}
"#;
const VECTOR_ADD: &str = include_str!("../kernels/vector_add.hip");
const LARGE: &str = include_str!("../kernels/large.hip");

/// A hip error as the benchmark's error text.
pub fn e(e: hip::Error) -> String {
    e.to_string()
}

impl Kernels {
    /// The compiled kernels as PTX text for cudarc: HIPRTC's PTX ends in a NUL, which cudarc adds itself.
    #[cfg(feature = "cudarc")]
    pub fn ptx_text(&self) -> Result<String, String> {
        let text = self
            .ptx_or_elf
            .strip_suffix(&[0])
            .unwrap_or(&self.ptx_or_elf);
        String::from_utf8(text.to_vec()).map_err(|_| "cudarc needs PTX (NVIDIA)".to_string())
    }
}

pub struct Kernels {
    pub ptx_or_elf: Vec<u8>,
    pub empty: Function,
    pub two: Function,
    pub eight: Function,
    pub work: Function,
    _module: Module,
}

#[derive(Default)]
struct Options {
    baseline: Option<String>,
    csv: Option<String>,
    link_gbps: Option<f64>,
    arch: Option<String>,
    quick: bool,
    launch_only: bool,
    compile_only: bool,
    staged_only: bool,
}

/// How much each section does; `--quick` shrinks it for a smoke run.
pub struct Plan {
    pub rounds: usize,
    pub launches: usize,
    pub copy_samples: usize,
    pub max_copy_bytes: usize,
    pub compile_runs: usize,
    pub event_reps: usize,
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("hip-rs-bench: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&opts) {
        Ok(report) => {
            print!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hip-rs-bench failed: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--baseline" => o.baseline = Some(value()?),
            "--csv" => o.csv = Some(value()?),
            "--link-gbps" => {
                let v = value()?;
                o.link_gbps = Some(
                    v.parse()
                        .map_err(|_| format!("--link-gbps {v}: not a number"))?,
                )
            }
            "--arch" => o.arch = Some(value()?),
            "--quick" => o.quick = true,
            "--launch-only" => o.launch_only = true,
            "--compile-only" => o.compile_only = true,
            "--staged-only" => o.staged_only = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(o)
}

fn run(opts: &Options) -> Result<String, String> {
    let plan = if opts.quick {
        Plan {
            rounds: 3,
            launches: 10_000,
            copy_samples: 3,
            max_copy_bytes: 64 << 20,
            compile_runs: 3,
            event_reps: 10_000,
        }
    } else {
        Plan {
            rounds: 9,
            launches: 100_000,
            copy_samples: 9,
            max_copy_bytes: 1 << 30,
            compile_runs: 21,
            event_reps: 100_000,
        }
    };
    let baseline = opts.baseline.as_deref().map(Baseline::load).transpose()?;
    let mut out = String::new();
    let device = match Device::count() {
        Ok(n) if n > 0 => Some(Device::get(0).map_err(e)?),
        _ => None,
    };
    writeln!(
        out,
        "platform {}, HIP runtime {:?}, HIPRTC {:?}",
        hip::PLATFORM,
        hip::runtime_version().ok(),
        hip::rtc::version().ok()
    )
    .unwrap();
    let arch = match (&opts.arch, &device) {
        (Some(a), _) => a.clone(),
        (None, Some(d)) => d.arch_name().map_err(e)?,
        (None, None) if hip::PLATFORM == "amd" => "gfx90a".into(),
        (None, None) => "compute_90".into(),
    };
    match &device {
        Some(d) => {
            let p = d.properties().map_err(e)?;
            writeln!(
                out,
                "device 0: {} ({arch}), {} compute units",
                p.name, p.compute_units
            )
            .unwrap();
        }
        None => writeln!(out, "no HIP device: compile-time section only, for {arch}").unwrap(),
    }
    writeln!(out).unwrap();

    let mut verdicts = Vec::new();
    if let (Some(device), Some(b)) = (&device, &baseline) {
        b.init(device.ordinal())?;
    }
    if let (Some(device), true) = (&device, opts.staged_only) {
        beyond::staged_copy_section(
            &mut out,
            &mut verdicts,
            device,
            baseline.as_ref(),
            opts.quick,
        )?;
    } else if let (Some(device), true) = (&device, opts.launch_only) {
        let kernels = compile_kernels(device, &arch).map_err(e)?;
        let (b, q) = (baseline.as_ref(), opts.quick);
        host_atomics::section(&mut out);
        launch_cost::section(&mut out, &mut verdicts, device, &kernels, b, q)?;
        ordering::section(&mut out, &mut verdicts, device, &kernels, b, q)?;
        events::section(&mut out, &mut verdicts, device, b, q)?;
        beyond::graph_section(&mut out, &mut verdicts, device, &kernels, b, q)?;
    } else if let (Some(device), false) = (&device, opts.compile_only) {
        let kernels = compile_kernels(device, &arch).map_err(e)?;
        launch_section(
            &mut out,
            &mut verdicts,
            device,
            &kernels,
            baseline.as_ref(),
            &plan,
        )?;
        copy_section(
            &mut out,
            &mut verdicts,
            device,
            baseline.as_ref(),
            &plan,
            opts,
        )?;
        streams::event_section(&mut out, &mut verdicts, device, baseline.as_ref(), &plan)?;
        streams::overlap_section(&mut out, device, &kernels, baseline.as_ref(), &plan)?;
        let (b, q) = (baseline.as_ref(), opts.quick);
        beyond::staged_copy_section(&mut out, &mut verdicts, device, b, q)?;
        host_atomics::section(&mut out);
        launch_cost::section(&mut out, &mut verdicts, device, &kernels, b, q)?;
        ordering::section(&mut out, &mut verdicts, device, &kernels, b, q)?;
        events::section(&mut out, &mut verdicts, device, b, q)?;
        beyond::graph_section(&mut out, &mut verdicts, device, &kernels, b, q)?;
    }
    if !opts.launch_only && !opts.staged_only {
        compile::section(&mut out, &mut verdicts, baseline.as_ref(), &arch, &plan)?;
    }

    writeln!(out, "## Targets\n").unwrap();
    for v in &verdicts {
        writeln!(out, "- {v}").unwrap();
    }
    if baseline.is_none() {
        writeln!(
            out,
            "- no C++ baseline loaded (--baseline): ratios against raw C++ not measured"
        )
        .unwrap();
    }
    Ok(out)
}

fn compile_kernels(device: &Device, arch: &str) -> hip::Result<Kernels> {
    let code = ProgramBuilder::new(KERNELS)
        .name("bench.hip")
        .arch(arch)
        .no_cache()
        .compile()?
        .into_code();
    let module = Module::load_data(device, &code)?;
    Ok(Kernels {
        empty: module.function("empty")?,
        two: module.function("two")?,
        eight: module.function("eight")?,
        work: module.function("work")?,
        ptx_or_elf: code,
        _module: module,
    })
}

/// Round-robin over contenders, rotating the order each round; returns each contender's samples.
pub fn interleave<const N: usize>(
    rounds: usize,
    mut run: impl FnMut(usize) -> Result<f64, String>,
    present: [bool; N],
) -> Result<[Option<Samples>; N], String> {
    let mut values: [Vec<f64>; N] = std::array::from_fn(|_| Vec::new());
    for r in 0..rounds {
        for k in 0..N {
            let c = (r + k) % N;
            if present[c] {
                values[c].push(run(c)?);
            }
        }
    }
    Ok(values.map(|v| (!v.is_empty()).then(|| Samples::new(v))))
}

fn launch_section(
    out: &mut String,
    verdicts: &mut Vec<String>,
    device: &Device,
    k: &Kernels,
    baseline: Option<&Baseline>,
    plan: &Plan,
) -> Result<(), String> {
    let stream = Stream::new(device).map_err(e)?;
    let mut rng = Rng::new(7);
    let mut host: [Vec<f32>; 3] = std::array::from_fn(|_| vec![0.0; launch::THREADS as usize]);
    for h in &mut host {
        rng.fill_f32(h);
    }
    let host_refs = [&host[0][..], &host[1][..], &host[2][..]];
    let mut eight = launch::EightArgs::new(device, host_refs).map_err(e)?;
    #[cfg(feature = "cudarc")]
    let mut cudarc = Some(cudarc_side::Cudarc::new(
        device.ordinal(),
        k.ptx_text()?,
        host_refs,
        (eight.alpha, eight.beta, eight.n, eight.stride),
    )?);
    #[cfg(not(feature = "cudarc"))]
    let cudarc: Option<()> = None;
    let present = [true, true, baseline.is_some(), cudarc.is_some()];
    let names = [
        "hip (safe)",
        "hip-sys (raw Rust)",
        "C++ (raw HIP)",
        "cudarc",
    ];

    writeln!(out, "## Kernel launch overhead\n").unwrap();
    writeln!(out, "Host time per asynchronous launch (1 block of {} threads) over {} launches, then one stream synchronise; median (min-max) of {} rounds, contenders interleaved.\n", launch::THREADS, plan.launches, plan.rounds).unwrap();
    writeln!(out, "| kernel | contender | ns per launch | / safe | safe / this | beats safe by more than its own spread? |").unwrap();
    writeln!(out, "|---|---|---:|---:|---:|---|").unwrap();
    for kernel in ["empty", "8 arguments"] {
        let mut one = |c: usize, launches: usize| -> Result<f64, String> {
            match (kernel, c) {
                ("empty", 0) => launch::safe_empty(k, &stream, launches).map_err(e),
                ("empty", 1) => launch::raw_empty(k, &stream, launches).map_err(e),
                ("empty", 2) => launch::cpp_empty(baseline.unwrap(), k, launches),
                (_, 0) => launch::safe_eight(k, &stream, &mut eight, launches).map_err(e),
                (_, 1) => launch::raw_eight(k, &stream, &mut eight, launches).map_err(e),
                (_, 2) => launch::cpp_eight(baseline.unwrap(), k, &eight, launches),
                #[cfg(feature = "cudarc")]
                ("empty", _) => cudarc.as_ref().unwrap().launch_empty(launches),
                #[cfg(feature = "cudarc")]
                _ => cudarc.as_mut().unwrap().launch_eight(launches),
                #[cfg(not(feature = "cudarc"))]
                _ => unreachable!("cudarc is not built in"),
            }
        };
        // Warm-up: every contender's path once, outside the timings.
        for (c, _) in present.iter().enumerate().filter(|(_, here)| **here) {
            one(c, plan.launches / 10)?;
        }
        let samples = interleave(plan.rounds, |c| one(c, plan.launches), present)?;
        let samples = samples.map(|s| s.map(|s| s.map(|ns| ns / plan.launches as f64)));
        let safe = samples[0].clone().unwrap();
        for (c, s) in samples.iter().enumerate() {
            let Some(s) = s else { continue };
            let beats = c > 0 && beats_by_more_than_spread(s, &safe);
            writeln!(
                out,
                "| {kernel} | {} | {} | {} | {} | {} |",
                names[c],
                s.show(0),
                ratio(s, &safe),
                ratio(&safe, s),
                if c == 0 {
                    "-"
                } else if beats {
                    "**yes**"
                } else {
                    "no"
                }
            )
            .unwrap();
            if beats {
                verdicts.push(format!("MISS launch ({kernel}): {} beats the safe API by {:.0} ns, more than its spread {:.0} ns", names[c], safe.median() - s.median(), s.spread()));
            }
        }
        if kernel == "8 arguments" {
            // The signature check inside each safe launch above, timed alone in the same run.
            let check = launch::check_eight(k, &mut eight, plan.launches).map_err(e)?;
            writeln!(
                out,
                "| {kernel} | of which the signature check | {check:.1} | {:.3} | - | - |",
                check / safe.median()
            )
            .unwrap();
        }
        if let Some(cpp) = &samples[2] {
            let r = safe.median() / cpp.median();
            verdicts.push(format!(
                "{} launch ({kernel}): safe / raw C++ = {r:.3}x (target <= 1.03x)",
                if r <= 1.03 { "MET" } else { "MISS" }
            ));
        }
    }
    // Verify the 8-argument kernel's output from the safe, raw and C++ paths (they share `d`).
    let expected = eight.expected(host_refs);
    let got = eight.d.to_vec().map_err(e)?;
    // The device may fuse the multiply-adds: compare to a few ulps, not bit for bit.
    let close = |got: &[f32]| {
        got.iter()
            .zip(&expected)
            .all(|(g, w)| (g - w).abs() <= 1e-5 * w.abs().max(1.0))
    };
    if !close(&got) {
        return Err(format!(
            "8-argument kernel output wrong: {:?} != {:?}",
            &got[..4],
            &expected[..4]
        ));
    }
    #[cfg(feature = "cudarc")]
    if !close(&cudarc.as_ref().unwrap().output()?) {
        return Err("cudarc: 8-argument kernel output wrong".into());
    }
    writeln!(
        out,
        "\nOutputs of the 8-argument kernel checked against the host's computation.\n"
    )
    .unwrap();
    Ok(())
}

fn copy_section(
    out: &mut String,
    verdicts: &mut Vec<String>,
    device: &Device,
    baseline: Option<&Baseline>,
    plan: &Plan,
    opts: &Options,
) -> Result<(), String> {
    use copies::{Buffers, Kind};
    let max = plan.max_copy_bytes;
    let mut pageable = vec![0u32; max / 4];
    Rng::new(11).fill_u32(&mut pageable);
    let mut buf = Buffers {
        pinned: PinnedBuffer::from_slice(device, &pageable).map_err(e)?,
        dev_a: DeviceBuffer::zeroed(device, max / 4).map_err(e)?,
        dev_b: DeviceBuffer::zeroed(device, max / 4).map_err(e)?,
        pageable,
    };
    let sizes: Vec<usize> = std::iter::successors(Some(4usize << 10), |s| Some(s * 4))
        .take_while(|s| *s <= max)
        .collect();
    let mut rows = Vec::new(); // (kind, bytes, safe GB/s, C++ GB/s)
    for kind in Kind::ALL {
        for &bytes in &sizes {
            let mut one = |c: usize| -> Result<f64, String> {
                let ns = if c == 0 {
                    copies::safe(device, &mut buf, kind, bytes).map_err(e)?
                } else {
                    copies::cpp(baseline.unwrap(), &mut buf, kind, bytes)?
                };
                Ok(bytes as f64 / ns) // bytes per ns = GB/s
            };
            one(0)?;
            if baseline.is_some() {
                one(1)?;
            }
            let [safe, cpp] = interleave(plan.copy_samples, &mut one, [true, baseline.is_some()])?;
            rows.push((kind, bytes, safe.unwrap(), cpp));
        }
        // Data check: after the host->device copies, the device holds the host's random data.
        if kind == Kind::HostToDevicePinned {
            let back = buf.dev_a.to_vec().map_err(e)?;
            if back != buf.pageable {
                return Err("copy check: device data differs from the host's".into());
            }
        }
    }
    let d2d_peak = rows
        .iter()
        .filter(|r| r.0 == Kind::DeviceToDevice)
        .flat_map(|r| [Some(r.2.max()), r.3.as_ref().map(|s| s.max())])
        .flatten()
        .fold(0.0, f64::max);
    writeln!(out, "## Copy bandwidth\n").unwrap();
    writeln!(out, "Synchronous copies (`hipMemcpy`; safe: `copy_from_host` / `copy_to_host` / `copy_from_device`) of one size repeated to move about 64 MiB (at least 4 copies), then a device synchronise; GB/s = 10^9 bytes/s, median (min-max) of {} samples. Peak D2D measured here: {d2d_peak:.1} GB/s (bytes copied, each read once and written once). Host link: {}.\n", plan.copy_samples, opts.link_gbps.map(|g| format!("{g:.1} GB/s theoretical per direction")).unwrap_or("not given".into())).unwrap();
    writeln!(
        out,
        "| copy | size | safe GB/s | C++ GB/s | safe / C++ | safe, fraction of peak |"
    )
    .unwrap();
    writeln!(out, "|---|---:|---:|---:|---:|---:|").unwrap();
    let mut worst_large: Option<(f64, String)> = None;
    let mut worst_any: Option<(f64, String)> = None;
    let mut csv = String::from("kind,bytes,contender,median_gbps,min_gbps,max_gbps\n");
    for (kind, bytes, safe, cpp) in &rows {
        let frac = match (kind.crosses_host_link(), opts.link_gbps) {
            (true, Some(g)) => format!("{:.0}% of link", 100.0 * safe.median() / g),
            (true, None) => "-".into(),
            (false, _) => format!("{:.0}% of D2D peak", 100.0 * safe.median() / d2d_peak),
        };
        let (cpp_s, r) = match cpp {
            Some(c) => (c.show(2), ratio(safe, c)),
            None => ("-".into(), "-".into()),
        };
        writeln!(
            out,
            "| {} | {} | {} | {cpp_s} | {r} | {frac} |",
            kind.label(),
            size(*bytes),
            safe.show(2)
        )
        .unwrap();
        for (who, s) in [("safe", Some(safe)), ("C++", cpp.as_ref())] {
            if let Some(s) = s {
                writeln!(
                    csv,
                    "{},{bytes},{who},{:.4},{:.4},{:.4}",
                    kind.label(),
                    s.median(),
                    s.min(),
                    s.max()
                )
                .unwrap();
            }
        }
        if let Some(c) = cpp {
            let r = safe.median() / c.median();
            if worst_any.as_ref().is_none_or(|w| r < w.0) {
                worst_any = Some((r, format!("{} {}", kind.label(), size(*bytes))));
            }
        }
        if let (Some(c), true) = (cpp, *bytes >= 64 << 20) {
            let r = safe.median() / c.median();
            if worst_large.as_ref().is_none_or(|w| r < w.0) {
                worst_large = Some((r, format!("{} {}", kind.label(), size(*bytes))));
            }
            if c.median() - safe.median() > c.spread() {
                verdicts.push(format!("MISS copies: C++ beats safe at {} {} by {:.2} GB/s, more than its spread {:.2}", kind.label(), size(*bytes), c.median() - safe.median(), c.spread()));
            }
        }
    }
    if let Some((r, at)) = worst_large {
        verdicts.push(format!(
            "{} copies >= 64 MiB: lowest safe / raw C++ = {r:.3}x at {at} (target >= 0.98x)",
            if r >= 0.98 { "MET" } else { "MISS" }
        ));
    }
    if let Some((r, at)) = worst_any {
        verdicts.push(format!(
            "{} synchronous copies at every size (4 KiB up): lowest safe / raw C++ = {r:.3}x at {at} \
             (target >= 0.95x)",
            if r >= 0.95 { "MET" } else { "MISS" }
        ));
    }
    if let Some(path) = &opts.csv {
        std::fs::write(path, csv).map_err(|err| format!("writing {path}: {err}"))?;
    }
    writeln!(out).unwrap();
    Ok(())
}

fn size(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b => format!("{} KiB", b >> 10),
    }
}
