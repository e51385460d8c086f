//! How fast an awaited GPU operation wakes its task, and what waiting costs the CPU (issue 45), against a
//! thread blocked in `hipStreamSynchronize` and a thread polling `hipEventQuery`, all in this process.
//!
//! Each sample queues a short kernel and waits for it. The round trip (queue to resumed) is the kernel's
//! time plus the wake latency; the polling thread sees completion first, so "over polling" is each
//! method's wake latency beyond the fastest possible observer. CPU time is the whole process's
//! (`getrusage(RUSAGE_SELF)`: the streams' waiting threads count) per awaited operation of a longer
//! kernel. Requests per second of a pipeline: `cargo run --release --example async_pipeline`.
//!
//! Every future method runs twice, interleaved in the same process: with the waiting thread per stream
//! (`Wake::Thread`) and with the completion reactor (`Wake::Reactor`); lines starting `summary:` are what
//! `scripts/futures-runs.sh` collects over many processes (medians and spread).
//!
//! Two diagnostics say where a slow wake comes from: the same future polled in a loop by a thread that
//! never parks (only the stream's waiting thread sleeps and wakes), and a plain `std` control with no GPU
//! (the time from `Thread::unpark` to the parked thread running), this machine's cost of waking a
//! sleeping thread.
use hip::future::{reactor_stats, set_wake, Wake};
use hip::prelude::*;
use hip::Report;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

const SOURCE: &str = r#"
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
}
"#;

#[repr(C)]
#[derive(Default)]
struct Timeval {
    sec: i64,
    usec: i64,
}

#[repr(C)]
#[derive(Default)]
struct Rusage {
    utime: Timeval,
    stime: Timeval,
    rest: [i64; 14],
}

extern "C" {
    fn getrusage(who: i32, usage: *mut Rusage) -> i32;
}

/// CPU time (user + system) of the whole process so far.
fn cpu_time() -> Duration {
    let mut r = Rusage::default();
    // SAFETY: RUSAGE_SELF (0) and a pointer to a struct of Linux's `struct rusage` layout on 64-bit targets.
    let rc = unsafe { getrusage(0, &mut r) };
    assert_eq!(rc, 0, "getrusage");
    let t = |t: &Timeval| Duration::new(t.sec as u64, t.usec as u32 * 1000);
    t(&r.utime) + t(&r.stime)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Wait {
    Synchronize,
    EventPoll,
    StreamFuture,
    EventFuture,
    SpinPolledFuture,
    StreamReactor,
    EventReactor,
    SpinPolledReactor,
}

impl Wait {
    const ALL: [Wait; 8] = [
        Wait::Synchronize,
        Wait::EventPoll,
        Wait::StreamFuture,
        Wait::EventFuture,
        Wait::SpinPolledFuture,
        Wait::StreamReactor,
        Wait::EventReactor,
        Wait::SpinPolledReactor,
    ];
    fn name(self) -> &'static str {
        match self {
            Wait::Synchronize => "thread blocked in hipStreamSynchronize",
            Wait::EventPoll => "thread polling hipEventQuery",
            Wait::StreamFuture => "Stream::completion().await",
            Wait::EventFuture => "Event::completion().await",
            Wait::SpinPolledFuture => "Stream::completion() polled, never parked",
            Wait::StreamReactor => "Stream::completion().await, reactor",
            Wait::EventReactor => "Event::completion().await, reactor",
            Wait::SpinPolledReactor => "Stream::completion() never parked, reactor",
        }
    }

    /// The wake mechanism a future of this method is created with (`None`: not a future).
    fn wake(self) -> Option<Wake> {
        match self {
            Wait::Synchronize | Wait::EventPoll => None,
            Wait::StreamFuture | Wait::EventFuture | Wait::SpinPolledFuture => Some(Wake::Thread),
            _ => Some(Wake::Reactor),
        }
    }
}

/// Queue `spin(cycles)` on `stream` and wait for it the `how` way; the time from queueing to resumed.
fn once(
    rt: &tokio::runtime::Runtime,
    spin: &Function,
    stream: &Stream,
    event: &Event,
    cycles: i64,
    how: Wait,
) -> hip::Result<Duration> {
    let mut args = LaunchArgs::new();
    args.arg(&cycles);
    if let Some(w) = how.wake() {
        set_wake(w);
    }
    let t = Instant::now();
    // SAFETY: spin(long long) touches no memory.
    unsafe { spin.launch(stream, &LaunchConfig::for_num_elems(1), &mut args)? };
    match how {
        Wait::Synchronize => stream.synchronize()?,
        Wait::EventPoll => {
            event.record(stream)?;
            while !event.query()? {}
        }
        Wait::StreamFuture | Wait::StreamReactor => rt.block_on(stream.completion())?,
        Wait::EventFuture | Wait::EventReactor => {
            event.record(stream)?;
            rt.block_on(event.completion())?
        }
        Wait::SpinPolledFuture | Wait::SpinPolledReactor => {
            let mut future = std::pin::pin!(stream.completion());
            let mut cx = Context::from_waker(Waker::noop());
            loop {
                if let Poll::Ready(r) = future.as_mut().poll(&mut cx) {
                    break r?;
                }
                std::hint::spin_loop();
            }
        }
    }
    Ok(t.elapsed())
}

/// The control without a GPU: a thread parks; after `gap` (so it is asleep) this thread unparks it and
/// the time until it runs again is one sample (it stamps the time, this thread spins for the stamp).
fn unpark_latency(samples: usize, gap: Duration) -> Vec<Duration> {
    let stamp: Arc<Mutex<Option<Instant>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let (s, st) = (stamp.clone(), stop.clone());
    let sleeper = std::thread::spawn(move || {
        while !st.load(Ordering::Acquire) {
            std::thread::park();
            *s.lock().unwrap() = Some(Instant::now());
        }
    });
    let mut out = Vec::with_capacity(samples);
    for _ in 0..samples {
        *stamp.lock().unwrap() = None;
        std::thread::sleep(gap);
        let t = Instant::now();
        sleeper.thread().unpark();
        let woke = loop {
            if let Some(w) = *stamp.lock().unwrap() {
                break w;
            }
            std::hint::spin_loop();
        };
        out.push(woke.saturating_duration_since(t));
    }
    stop.store(true, Ordering::Release);
    sleeper.thread().unpark();
    sleeper.join().unwrap();
    out
}

fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p) as usize]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() -> Result<(), Report> {
    let Some(device) =
        Device::first_usable(|why| println!("{why}\nthe futures benchmark needs one"))?
    else {
        return Ok(());
    };
    println!("device: {}", device.properties()?.name);
    let module = Module::load_data(&device, ProgramBuilder::new(SOURCE).compile()?.code())?;
    let spin = module.function("spin")?;
    let stream = Stream::non_blocking(&device)?;
    let event = Event::new(&device)?;
    let rt = tokio::runtime::Builder::new_current_thread().build()?;
    let samples: usize = std::env::var("HIP_RS_BENCH_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);

    // Wake latency: a short kernel (about 10 us), interleaved methods so drift hits all alike.
    let short = 20_000i64;
    for how in Wait::ALL {
        for _ in 0..50 {
            once(&rt, &spin, &stream, &event, short, how)?; // warm-up (the event's waiter stream too)
        }
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); Wait::ALL.len()];
    for _ in 0..samples {
        for (i, how) in Wait::ALL.into_iter().enumerate() {
            times[i].push(once(&rt, &spin, &stream, &event, short, how)?);
        }
    }
    let medians: Vec<Duration> = times.iter_mut().map(|t| percentile(t, 0.5)).collect();
    let poll = medians[1];
    println!("\nwake latency: queue a ~10 us kernel, wait, resume ({samples} samples each, us)");
    println!(
        "{:<42} {:>8} {:>8} {:>8} {:>12}",
        "method", "median", "p90", "p99", "over polling"
    );
    for (i, how) in Wait::ALL.into_iter().enumerate() {
        let t = &mut times[i];
        println!(
            "{:<42} {:>8.1} {:>8.1} {:>8.1} {:>12.1}",
            how.name(),
            us(medians[i]),
            us(percentile(t, 0.9)),
            us(percentile(t, 0.99)),
            us(medians[i].saturating_sub(poll))
        );
    }
    let ratio = |i: usize| medians[i].as_secs_f64() / medians[0].as_secs_f64();
    println!("summary: round_trip_ratio_thread {:.3}", ratio(2));
    println!("summary: round_trip_ratio_reactor {:.3}", ratio(5));
    println!("summary: event_round_trip_ratio_thread {:.3}", ratio(3));
    println!("summary: event_round_trip_ratio_reactor {:.3}", ratio(6));
    let blocked = medians[0].saturating_sub(poll);
    let future = medians[2].saturating_sub(poll);
    println!(
        "Stream::completion round trip / blocked thread's: {:.2}x; wake latency beyond polling: {:.1} us \
         (future) vs {:.1} us (blocked thread)",
        medians[2].as_secs_f64() / medians[0].as_secs_f64(),
        us(future),
        us(blocked)
    );
    let mut unpark = unpark_latency(samples / 4, Duration::from_micros(200));
    println!(
        "control, no GPU: a parked std thread runs {:.1} us (median; p90 {:.1}) after its unpark; the \
         future never parked: {:.1} us beyond polling",
        us(percentile(&mut unpark, 0.5)),
        us(percentile(&mut unpark, 0.9)),
        us(medians[4].saturating_sub(poll))
    );

    // CPU time per awaited operation: a ~1 ms kernel, the whole process's CPU time.
    let long = 2_000_000i64;
    let ops = (samples / 10).max(50);
    println!("\nCPU time per awaited ~1 ms kernel ({ops} each; whole process, getrusage)");
    println!("{:<42} {:>12} {:>12}", "method", "wall us/op", "CPU us/op");
    // Interleaved in four blocks per method, so drift hits all alike.
    let mut wall = [Duration::ZERO; Wait::ALL.len()];
    let mut cpu = [Duration::ZERO; Wait::ALL.len()];
    let block = ops.div_ceil(4);
    for _ in 0..4 {
        for (i, how) in Wait::ALL.into_iter().enumerate() {
            let (c0, t0) = (cpu_time(), Instant::now());
            for _ in 0..block {
                once(&rt, &spin, &stream, &event, long, how)?;
            }
            cpu[i] += cpu_time() - c0;
            wall[i] += t0.elapsed();
        }
    }
    let n = (4 * block) as f64;
    for (i, how) in Wait::ALL.into_iter().enumerate() {
        println!(
            "{:<42} {:>12.1} {:>12.1}",
            how.name(),
            us(wall[i]) / n,
            us(cpu[i]) / n
        );
    }
    let w = |i: usize| wall[i].as_secs_f64() / wall[0].as_secs_f64();
    println!("summary: long_wall_ratio_thread {:.4}", w(2));
    println!("summary: long_wall_ratio_reactor {:.4}", w(5));
    println!("summary: long_cpu_us_thread {:.1}", us(cpu[2]) / n);
    println!("summary: long_cpu_us_reactor {:.1}", us(cpu[5]) / n);
    let s = reactor_stats();
    println!(
        "reactor: {} futures watched, {} fell back to the waiting thread, {} fired in {} wakes",
        s.watched, s.fell_back, s.fired, s.wakes
    );
    set_wake(Wake::Thread);
    Ok(())
}
