//! The crate's own host cost per launch, per change of stream and per event record + query, measured on a
//! CPU: the `dynamic-loading` feature opens a HIP runtime that does nothing (bench/stub/hipstub.c, every
//! call returns success at once), so a safe operation's time over the same raw call through that library
//! is the crate's work alone, free of a driver's noise. The stub also counts each HIP call: how many an
//! operation makes (on a GPU each costs hundreds of ns) is part of the answer.
//!
//! `scripts/host-cost.sh` builds the stub and this program and runs it (HIP_RS_AMDHIP64 = the stub,
//! HIP_RS_HIPRTC = the real HIPRTC, which compiles the kernels for gfx90a). Arguments: `--quick` (fewer
//! rounds), `--spin CONTENDER SECONDS` (run one contender alone in a loop, for `perf record`).
//!
//! Method: contenders of one table run in rounds, one batch of [`BATCH`] operations each (order rotating),
//! each batch timed; per-round differences to the raw contender are averaged (mean ± 95% interval), as the
//! GPU sections of `hip-rs-bench` do (bench/src/launch_cost.rs).
#![cfg_attr(not(feature = "dynamic-loading"), allow(unused))]
#[path = "../host_atomics.rs"]
mod host_atomics;
#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;

use hip::prelude::*;
use hip::sys;
use std::ffi::c_void;
use std::time::Instant;

const KERNELS: &str = r#"
extern "C" __global__ void empty() {}
extern "C" __global__ void two(const float* a, float* b) {}
"#;

/// Operations per timed batch.
const BATCH: usize = 64;

struct Fixture {
    device: Device,
    empty: Function,
    two: Function,
    streams: [Stream; 2],
    a: [DeviceBuffer<f32>; 2],
    b: [DeviceBuffer<f32>; 2],
    event: Event,
    raw_event: Event,
    _module: Module,
}

/// The stub's call counters (its own exports: `hipstub_*`).
struct Counters {
    names: Vec<String>,
    calls: libloading::Symbol<'static, unsafe extern "C" fn(i32) -> u64>,
    reset: libloading::Symbol<'static, unsafe extern "C" fn()>,
}

impl Counters {
    fn open() -> Result<Counters, String> {
        let path = std::env::var("HIP_RS_AMDHIP64")
            .map_err(|_| "HIP_RS_AMDHIP64 must name the stub (scripts/host-cost.sh sets it)")?;
        // SAFETY: the stub's initialisers do nothing; the library stays loaded for the process (leaked).
        let lib: &'static libloading::Library = Box::leak(Box::new(
            unsafe { libloading::Library::new(&path) }.map_err(|e| format!("{path}: {e}"))?,
        ));
        let missing = |e: libloading::Error| format!("{path} is not the host-cost stub: {e}");
        // SAFETY: the stub's exports, with these C signatures (bench/stub/hipstub.c).
        unsafe {
            let count: libloading::Symbol<unsafe extern "C" fn() -> i32> =
                lib.get(b"hipstub_entry_points\0").map_err(missing)?;
            let name: libloading::Symbol<unsafe extern "C" fn(i32) -> *const std::ffi::c_char> =
                lib.get(b"hipstub_name\0").map_err(missing)?;
            let names = (0..count())
                .map(|i| {
                    std::ffi::CStr::from_ptr(name(i))
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            Ok(Counters {
                names,
                calls: lib.get(b"hipstub_calls\0").map_err(missing)?,
                reset: lib.get(b"hipstub_reset\0").map_err(missing)?,
            })
        }
    }

    /// The HIP calls `ops` operations made, per operation: "hipModuleLaunchKernel 1, hipEventRecord 0.5".
    fn per_op(
        &self,
        ops: usize,
        run: impl FnOnce() -> Result<(), String>,
    ) -> Result<String, String> {
        // SAFETY: plain calls of the stub's exports (thread-local counters).
        unsafe { (self.reset)() };
        run()?;
        let mut out = Vec::new();
        for (i, name) in self.names.iter().enumerate() {
            // SAFETY: as above.
            let n = unsafe { (self.calls)(i as i32) };
            if n > 0 {
                let per = n as f64 / ops as f64;
                out.push(format!("{name} {}", trim(per)));
            }
        }
        Ok(if out.is_empty() {
            "none".into()
        } else {
            out.join(", ")
        })
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn e(err: hip::Error) -> String {
    err.to_string()
}

fn check(call: &str, rc: sys::hipError_t) -> Result<(), String> {
    if rc == sys::hipSuccess {
        Ok(())
    } else {
        Err(format!("{call} failed: {rc:?}"))
    }
}

impl Fixture {
    fn new() -> Result<Fixture, String> {
        let device = Device::get(0).map_err(e)?;
        let code = hip::rtc::ProgramBuilder::new(KERNELS)
            .name("host_cost.hip")
            .arch("gfx90a")
            .no_cache()
            .compile()
            .map_err(e)?
            .into_code();
        let module = Module::load_data(&device, &code).map_err(e)?;
        let buf = || DeviceBuffer::<f32>::zeroed(&device, 64).map_err(e);
        let f = Fixture {
            empty: module.function("empty").map_err(e)?,
            two: module.function("two").map_err(e)?,
            streams: [
                Stream::non_blocking(&device).map_err(e)?,
                Stream::non_blocking(&device).map_err(e)?,
            ],
            a: [buf()?, buf()?],
            b: [buf()?, buf()?],
            event: Event::new(&device).map_err(e)?,
            raw_event: Event::new(&device).map_err(e)?,
            device,
            _module: module,
        };
        if f.empty.signature().is_none() || f.two.signature().is_none() {
            return Err("the kernels carry no signature: the launch check would not run".into());
        }
        Ok(f)
    }
}

/// A table's row: contender, median and mean (± 95%) difference to the first, user-space instructions
/// and HIP calls per operation.
type Row = (String, f64, f64, f64, String, String);

/// User-space instructions this thread retires per operation (`perf_event_open`; the stub's included),
/// the least of 5 runs of 50 batches: unlike time, the same from run to run and machine load. "-" where
/// the kernel refuses the counter.
fn instructions_per_op(mut run: impl FnMut(usize) -> Result<(), String>) -> Result<String, String> {
    use perf_event::events::Hardware;
    let Ok(mut counter) = perf_event::Builder::new(Hardware::INSTRUCTIONS)
        .exclude_kernel(true)
        .exclude_hv(true)
        .build()
    else {
        return Ok("-".into());
    };
    let ops = BATCH * 50;
    let mut best = u64::MAX;
    for _ in 0..5 {
        let io = |err: std::io::Error| format!("perf counter: {err}");
        counter.reset().map_err(io)?;
        counter.enable().map_err(io)?;
        let ran = run(ops);
        counter.disable().map_err(io)?;
        ran?;
        best = best.min(counter.read().map_err(io)?);
    }
    Ok(format!("{:.0}", best as f64 / ops as f64))
}

/// One contender: a name and `n` operations.
type Run<'a> = Box<dyn FnMut(&mut Fixture, usize) -> Result<(), String> + 'a>;

fn launch_raw(
    f: &Fixture,
    func: &Function,
    s: &Stream,
    params: *mut *mut c_void,
) -> Result<(), String> {
    // SAFETY: stub handles (the stub reads nothing); `params` is null or points at live argument slots.
    let rc = unsafe {
        sys::hipModuleLaunchKernel(
            func.raw(),
            1,
            1,
            1,
            64,
            1,
            1,
            0,
            s.raw(),
            params,
            std::ptr::null_mut(),
        )
    };
    let _ = f;
    check("hipModuleLaunchKernel", rc)
}

fn empty_contenders<'a>() -> Vec<(&'static str, Run<'a>)> {
    vec![
        (
            "raw hip-sys",
            Box::new(|f: &mut Fixture, n| {
                for _ in 0..n {
                    launch_raw(f, &f.empty, &f.streams[0], std::ptr::null_mut())?;
                }
                Ok(())
            }),
        ),
        (
            "+ Device::bind",
            Box::new(|f: &mut Fixture, n| {
                for _ in 0..n {
                    f.empty.module().device().bind().map_err(e)?;
                    launch_raw(f, &f.empty, &f.streams[0], std::ptr::null_mut())?;
                }
                Ok(())
            }),
        ),
        (
            "+ bind + LaunchArgs check",
            Box::new(|f: &mut Fixture, n| {
                for _ in 0..n {
                    f.empty.module().device().bind().map_err(e)?;
                    let args = LaunchArgs::new();
                    std::hint::black_box(&args)
                        .check_against(&f.empty)
                        .map_err(e)?;
                    launch_raw(f, &f.empty, &f.streams[0], std::ptr::null_mut())?;
                }
                Ok(())
            }),
        ),
        (
            "safe Function::launch",
            Box::new(|f: &mut Fixture, n| {
                let cfg = LaunchConfig::new(1, 64);
                for _ in 0..n {
                    let mut args = LaunchArgs::new();
                    // SAFETY: `empty` takes no parameters (the stub runs nothing).
                    unsafe { f.empty.launch(&f.streams[0], &cfg, &mut args) }.map_err(e)?;
                }
                Ok(())
            }),
        ),
    ]
}

/// Two buffers (`a` read, `b` written), on one stream or alternating two (every launch changes the stream
/// of both buffers). Raw C-style launches order nothing.
fn two_contenders<'a>(alternate: bool) -> Vec<(&'static str, Run<'a>)> {
    let k = usize::from(alternate);
    vec![
        (
            if alternate {
                "raw hip-sys, alternating"
            } else {
                "raw hip-sys, one stream"
            },
            Box::new(move |f: &mut Fixture, n| {
                let mut ptrs = [f.a[k].device_ptr(), f.b[k].device_ptr()];
                let mut params = [
                    std::ptr::addr_of_mut!(ptrs[0]).cast::<c_void>(),
                    std::ptr::addr_of_mut!(ptrs[1]).cast::<c_void>(),
                ];
                for i in 0..n {
                    let s = &f.streams[if alternate { i & 1 } else { 0 }];
                    launch_raw(f, &f.two, s, params.as_mut_ptr())?;
                }
                Ok(())
            }),
        ),
        (
            if alternate {
                "safe, alternating"
            } else {
                "safe, one stream"
            },
            Box::new(move |f: &mut Fixture, n| {
                let cfg = LaunchConfig::new(1, 64);
                for i in 0..n {
                    let s = &f.streams[if alternate { i & 1 } else { 0 }];
                    let mut args = LaunchArgs::new();
                    args.arg(&f.a[k]).arg_mut(&mut f.b[k]);
                    // SAFETY: `two(const float*, float*)` (the stub runs nothing).
                    unsafe { f.two.launch(s, &cfg, &mut args) }.map_err(e)?;
                }
                Ok(())
            }),
        ),
    ]
}

fn event_contenders<'a>() -> Vec<(&'static str, Run<'a>)> {
    vec![
        (
            "raw hip-sys record + query",
            Box::new(|f: &mut Fixture, n| {
                for _ in 0..n {
                    // SAFETY: a live event and stream of the stub.
                    unsafe {
                        check(
                            "hipEventRecord",
                            sys::hipEventRecord(f.raw_event.raw(), f.streams[0].raw()),
                        )?;
                        let q = sys::hipEventQuery(f.raw_event.raw());
                        if q != sys::hipSuccess && q != sys::hipErrorNotReady {
                            check("hipEventQuery", q)?;
                        }
                    }
                }
                Ok(())
            }),
        ),
        (
            "safe Event::record + query",
            Box::new(|f: &mut Fixture, n| {
                for _ in 0..n {
                    f.event.record(&f.streams[0]).map_err(e)?;
                    std::hint::black_box(f.event.query().map_err(e)?);
                }
                Ok(())
            }),
        ),
    ]
}

/// Rounds of one batch per contender, order rotating; prints the table (ns per operation, differences to
/// the first contender per round) and the HIP calls each makes per operation.
fn table(
    title: &str,
    f: &mut Fixture,
    counters: &Counters,
    mut contenders: Vec<(&'static str, Run<'_>)>,
    rounds: usize,
) -> Result<Vec<Row>, String> {
    println!("### {title}\n");
    println!(
        "| contender | ns per operation (median) | over the first: median (mean ± 95%) | instructions per \
         operation | HIP calls per operation |"
    );
    println!("| --- | ---: | ---: | ---: | --- |");
    let n = contenders.len();
    for (_, run) in contenders.iter_mut() {
        run(f, BATCH * 20)?;
    }
    let mut ns = vec![Vec::with_capacity(rounds); n];
    let mut diffs = vec![Vec::with_capacity(rounds); n];
    for r in 0..rounds {
        let mut this = vec![0.0; n];
        for turn in 0..n {
            let c = (r + turn) % n;
            let t = Instant::now();
            (contenders[c].1)(f, BATCH)?;
            this[c] = t.elapsed().as_nanos() as f64 / BATCH as f64;
        }
        for c in 0..n {
            ns[c].push(this[c]);
            diffs[c].push(this[c] - this[0]);
        }
    }
    let mut rows = Vec::new();
    for (c, (name, run)) in contenders.iter_mut().enumerate() {
        let calls = counters.per_op(BATCH * 4, || run(f, BATCH * 4))?;
        let instructions = instructions_per_op(|n| run(f, n))?;
        let (m, ci) = stats::mean_ci(&diffs[c]);
        let med = stats::median(&diffs[c]);
        let over = if c == 0 {
            "-".to_string()
        } else {
            format!("{med:+.1} ({m:+.1} ± {ci:.1})")
        };
        println!(
            "| {name} | {:.1} | {over} | {instructions} | {calls} |",
            stats::median(&ns[c])
        );
        rows.push((name.to_string(), med, m, ci, instructions, calls));
    }
    println!();
    Ok(rows)
}

fn spin(f: &mut Fixture, which: &str, seconds: f64) -> Result<(), String> {
    let mut all: Vec<(&'static str, Run<'_>)> = empty_contenders();
    all.extend(two_contenders(false));
    all.extend(two_contenders(true));
    all.extend(event_contenders());
    let names: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
    let (_, run) = all
        .iter_mut()
        .find(|(n, _)| *n == which)
        .ok_or_else(|| format!("no contender {which:?}; one of {names:?}"))?;
    let t = Instant::now();
    let mut ops = 0usize;
    while t.elapsed().as_secs_f64() < seconds {
        run(f, 10_000)?;
        ops += 10_000;
    }
    println!(
        "{which}: {ops} operations, {:.1} ns each",
        t.elapsed().as_nanos() as f64 / ops as f64
    );
    Ok(())
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("host_cost: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let counters = Counters::open()?;
    let mut f = Fixture::new()?;
    if let Some(i) = args.iter().position(|a| a == "--spin") {
        let which = args.get(i + 1).ok_or("--spin CONTENDER SECONDS")?;
        let secs = args
            .get(i + 2)
            .and_then(|s| s.parse().ok())
            .ok_or("--spin CONTENDER SECONDS")?;
        return spin(&mut f, which, secs);
    }
    let rounds = if args.iter().any(|a| a == "--quick") {
        2000
    } else {
        20_000
    };
    println!(
        "## Host cost on the CPU stub (no GPU: every HIP call returns at once)\n\n{} (`{}`), device: {}; \
         batches of {BATCH} operations, {rounds} rounds, contenders interleaved.\n",
        std::env::var("HIP_RS_AMDHIP64").unwrap_or_default(),
        hip::PLATFORM,
        f.device.properties().map_err(e)?.name,
    );
    let mut summary = Vec::new();
    let rows = table(
        "Empty launch, one stream",
        &mut f,
        &counters,
        empty_contenders(),
        rounds,
    )?;
    summary.push(("empty launch", rows.last().cloned().unwrap()));
    let rows = table(
        "Two buffers, one stream",
        &mut f,
        &counters,
        two_contenders(false),
        rounds,
    )?;
    summary.push(("two buffers, one stream", rows[1].clone()));
    let rows = table(
        "Two buffers, every launch changing stream (two streams)",
        &mut f,
        &counters,
        two_contenders(true),
        rounds,
    )?;
    summary.push(("two buffers, alternating streams", rows[1].clone()));
    let rows = table(
        "Event record + query, one stream",
        &mut f,
        &counters,
        event_contenders(),
        rounds,
    )?;
    summary.push(("event record + query", rows[1].clone()));
    println!("### Safe over raw, CPU stub (ns per operation: median of the rounds' differences, mean ± 95%)\n");
    println!(
        "| operation | safe - raw, ns | safe, instructions (raw's in its table) | HIP calls of the safe operation |\n\
         | --- | ---: | ---: | --- |"
    );
    for (what, (_, med, m, ci, instructions, calls)) in summary {
        println!("| {what} | {med:+.1} ({m:+.1} ± {ci:.1}) | {instructions} | {calls} |");
    }
    let mut atomics = String::new();
    host_atomics::section(&mut atomics);
    print!("\n#{atomics}");
    Ok(())
}
