//! An async server's GPU work: many concurrent requests over a few streams, each one an upload, a kernel
//! and a download, every step awaited (`hip::future`) instead of blocking a thread. Runs on tokio's
//! current-thread runtime (one thread serves every request), on its multi-thread runtime with four
//! workers (as many threads as the blocking side), each with the futures' waiting threads and with the
//! completion reactor, and on four current-thread runtimes, one thread per stream (a thread-per-core
//! server: each thread issues the calls of its own stream only, as each blocking thread does), all
//! interleaved in one process. As a server bounds the work it has in flight, `IN_FLIGHT` tasks (the first
//! argument, default 4) serve the requests, each reusing its own pinned upload and download buffers
//! (allocating pinned memory per request would cost more than the request), as the blocking threads do.
//! Every result is checked, and the same requests are served by one blocking thread per stream for
//! comparison.
use hip::future::{set_wake, Wake};
use hip::prelude::*;
use hip::Report;
use std::sync::Arc;
use std::time::Instant;

const SOURCE: &str = r#"
extern "C" __global__ void serve(const float* x, float* y, float id, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 2.0f + id;
}
"#;

const REQUESTS: usize = 2000;
const STREAMS: usize = 4;
const LEN: usize = 4096;
/// Requests in flight at once unless the first argument says otherwise: tasks, each serving every
/// `in_flight`th request. As many as the blocking side has (one per stream): the same concurrency. More
/// did not serve more on an H100 host (each request's GPU work is microseconds; the host's HIP calls
/// bound both sides): four executor threads, one per stream, with the reactor, served a median 1.00x of
/// four blocking threads with 4 in flight, 0.96x with 8, 0.92x with 16, 0.87x with 64, 0.78x with 128.
const IN_FLIGHT: usize = STREAMS;

/// How a row serves the requests.
enum How<'a> {
    /// One blocking thread per stream.
    Blocking,
    /// Tasks spawned on one tokio runtime, with this wake mechanism.
    Executor(&'a tokio::runtime::Runtime, Wake),
    /// One current-thread runtime per stream, on its own thread, serving that stream's requests.
    ThreadPerStream(Wake),
}

/// A row of the table: its summary key, its name, and how it serves.
type Row<'a> = (&'a str, &'a str, How<'a>);

/// What every request shares: the streams and the kernel.
struct Server {
    device: Device,
    streams: Vec<Stream>,
    kernel: Function,
}

fn input(id: usize) -> Vec<f32> {
    (0..LEN).map(|i| ((id * 31 + i) % 1000) as f32).collect()
}

fn check(id: usize, x: &[f32], y: &[f32]) -> Result<(), Report> {
    let bad = x.iter().zip(y).position(|(x, y)| *y != x * 2.0 + id as f32);
    match bad {
        None if y.len() == LEN => Ok(()),
        _ => Err(Report::msg(format!(
            "request {id}: wrong result at {bad:?}"
        ))),
    }
}

/// Launch `serve` on `stream`: `y = 2 x + id`.
fn launch(
    server: &Server,
    stream: &Stream,
    x: &DeviceBuffer<f32>,
    y: &mut DeviceBuffer<f32>,
    id: usize,
) -> hip::Result<()> {
    let (id, n) = (id as f32, LEN as u32);
    let mut args = LaunchArgs::new();
    args.arg(x).arg_mut(y).arg(&id).arg(&n);
    // SAFETY: serve(const float*, float*, float, unsigned) reads x[..n] and writes y[..n].
    unsafe {
        server
            .kernel
            .launch(stream, &LaunchConfig::for_num_elems(n), &mut args)
    }
}

/// One request, every GPU step awaited; `pinned` is the serving task's upload buffer, `out` its download
/// buffer (handed back by the download's future).
async fn serve(
    server: &Server,
    id: usize,
    pinned: &mut PinnedBuffer<f32>,
    out: PinnedBuffer<f32>,
) -> Result<PinnedBuffer<f32>, Report> {
    let stream = &server.streams[id % STREAMS];
    let x = input(id);
    pinned.as_mut_slice()?.copy_from_slice(&x);
    let mut dx = DeviceBuffer::<f32>::zeroed_async(stream, LEN)?;
    let mut dy = DeviceBuffer::<f32>::zeroed_async(stream, LEN)?;
    stream.copy_from_host_async(pinned, &mut dx)?;
    stream.completion().await?; // upload done: the pinned buffer may be reused
    launch(server, stream, &dx, &mut dy, id)?;
    stream.completion().await?; // kernel done
    let out = stream.copy_to_pinned_future(&dy, out).await?; // download done
    check(id, &x, out.as_slice()?)?;
    Ok(out)
}

/// A serving task: requests `first`, `first + step`, ... below `n`.
async fn serving_task(
    server: Arc<Server>,
    first: usize,
    step: usize,
    n: usize,
) -> Result<(), Report> {
    let mut pinned = PinnedBuffer::zeroed(&server.device, LEN)?;
    let mut out = PinnedBuffer::zeroed(&server.device, LEN)?;
    for id in (first..n).step_by(step) {
        out = serve(&server, id, &mut pinned, out).await?;
    }
    Ok(())
}

/// Spawn `serving_task(first, step)` for each `(first, step)` on the current runtime and wait for all.
async fn serve_all(
    server: &Arc<Server>,
    tasks: impl Iterator<Item = (usize, usize)>,
    n: usize,
) -> Result<(), Report> {
    let mut set = tokio::task::JoinSet::new();
    for (first, step) in tasks {
        set.spawn(serving_task(server.clone(), first, step, n));
    }
    while let Some(r) = set.join_next().await {
        r.map_err(|e| Report::msg(format!("a request task failed: {e}")))??;
    }
    Ok(())
}

/// Run `body(s)` on a scoped thread per stream `s` and join them all.
fn on_each_stream(
    what: &str,
    body: impl Fn(usize) -> Result<(), Report> + Sync,
) -> Result<(), Report> {
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..STREAMS)
            .map(|s| {
                let body = &body;
                scope.spawn(move || body(s))
            })
            .collect();
        for t in threads {
            t.join()
                .map_err(|_| Report::msg(format!("a {what} thread panicked")))??;
        }
        Ok(())
    })
}

/// Serve requests `0..n` with `in_flight` tasks spawned on `rt`.
fn serve_on(
    rt: &tokio::runtime::Runtime,
    server: &Arc<Server>,
    in_flight: usize,
    n: usize,
) -> Result<(), Report> {
    let tasks = (0..in_flight.min(n)).map(|first| (first, in_flight));
    rt.block_on(serve_all(server, tasks, n))
}

/// Serve requests `0..n` on one thread per stream, each with a current-thread runtime running
/// `in_flight / STREAMS` tasks (at least one) over that stream's requests only.
fn serve_thread_per_stream(server: &Arc<Server>, in_flight: usize, n: usize) -> Result<(), Report> {
    let per_stream = (in_flight / STREAMS).max(1);
    let step = STREAMS * per_stream;
    on_each_stream("serving", |s| {
        // Task k serves requests s + STREAMS * (k + per_stream * j): stream s's only.
        let tasks = (0..per_stream)
            .map(|k| (s + STREAMS * k, step))
            .filter(|&(first, _)| first < n);
        let rt = tokio::runtime::Builder::new_current_thread().build()?;
        rt.block_on(serve_all(server, tasks, n))
    })
}

/// The same request on a thread that blocks at each step (its pinned buffers reused, as the async
/// requests reuse theirs).
fn serve_blocking(
    server: &Server,
    stream: &Stream,
    id: usize,
    pinned: &mut PinnedBuffer<f32>,
    out: &mut PinnedBuffer<f32>,
) -> Result<(), Report> {
    let x = input(id);
    let mut dx = DeviceBuffer::<f32>::zeroed_async(stream, LEN)?;
    let mut dy = DeviceBuffer::<f32>::zeroed_async(stream, LEN)?;
    pinned.as_mut_slice()?.copy_from_slice(&x);
    stream.copy_from_host_async(pinned, &mut dx)?;
    stream.synchronize()?;
    launch(server, stream, &dx, &mut dy, id)?;
    stream.synchronize()?;
    stream.copy_to_host_async(&dy, out)?;
    stream.synchronize()?;
    check(id, &x, out.as_slice()?)
}

fn main() -> Result<(), Report> {
    let Some(device) = Device::first_usable(|why| println!("{why}\nthe async pipeline needs one"))?
    else {
        return Ok(());
    };
    let module = Module::load_data(&device, ProgramBuilder::new(SOURCE).compile()?.code())?;
    let server = Arc::new(Server {
        streams: (0..STREAMS)
            .map(|_| Stream::non_blocking(&device))
            .collect::<hip::Result<_>>()?,
        kernel: module.function("serve")?,
        device,
    });
    let in_flight = match std::env::args().nth(1) {
        None => IN_FLIGHT,
        Some(a) => match a.parse::<usize>() {
            Ok(v) if v > 0 => v,
            _ => {
                return Err(Report::msg(format!(
                    "in flight: `{a}` is not a positive count"
                )))
            }
        },
    };
    // Executors: tokio's current-thread runtime (one thread serves every request, as before) and its
    // multi-thread runtime with STREAMS workers: as many threads issuing HIP calls as the blocking side
    // has (one executor thread issues every HIP call of the requests in flight, where the blocking side
    // has four). The workers share the streams; the thread-per-stream rows do not.
    let one = tokio::runtime::Builder::new_current_thread().build()?;
    let many = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(STREAMS)
        .build()?;
    let run_blocking = |n: usize| {
        on_each_stream("blocking worker", |s| {
            let mut pinned = PinnedBuffer::zeroed(&server.device, LEN)?;
            let mut out = PinnedBuffer::zeroed(&server.device, LEN)?;
            for id in (s..n).step_by(STREAMS) {
                serve_blocking(&server, &server.streams[s], id, &mut pinned, &mut out)?;
            }
            Ok(())
        })
    };
    // Requests per second of `n` requests served as `how` says.
    let run = |how: &How, n: usize| -> Result<f64, Report> {
        let t = Instant::now();
        match how {
            How::Blocking => run_blocking(n)?,
            How::Executor(rt, wake) => {
                set_wake(*wake);
                serve_on(rt, &server, in_flight, n)?
            }
            How::ThreadPerStream(wake) => {
                set_wake(*wake);
                serve_thread_per_stream(&server, in_flight, n)?
            }
        }
        Ok(n as f64 / t.elapsed().as_secs_f64())
    };
    let rows: [Row; 7] = [
        (
            "blocking",
            "4 blocking threads (one per stream)",
            How::Blocking,
        ),
        (
            "one_thread",
            "1 executor thread, waiting threads",
            How::Executor(&one, Wake::Thread),
        ),
        (
            "one_reactor",
            "1 executor thread, reactor",
            How::Executor(&one, Wake::Reactor),
        ),
        (
            "four_thread",
            "4 executor workers, waiting threads",
            How::Executor(&many, Wake::Thread),
        ),
        (
            "four_reactor",
            "4 executor workers, reactor",
            How::Executor(&many, Wake::Reactor),
        ),
        (
            "per_stream_thread",
            "4 executor threads, one per stream, waiting threads",
            How::ThreadPerStream(Wake::Thread),
        ),
        (
            "per_stream_reactor",
            "4 executor threads, one per stream, reactor",
            How::ThreadPerStream(Wake::Reactor),
        ),
    ];
    for (_, _, how) in &rows {
        run(how, 100)?; // warm-up
    }
    // Interleaved rounds, so drift hits every row alike; the median round per row.
    let rounds = 3;
    let mut rates = vec![Vec::new(); rows.len()];
    for _ in 0..rounds {
        for (i, (_, _, how)) in rows.iter().enumerate() {
            rates[i].push(run(how, REQUESTS)?);
        }
    }
    set_wake(Wake::Thread);
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let med: Vec<f64> = rates.iter_mut().map(median).collect();
    println!(
        "{REQUESTS} requests over {STREAMS} streams ({in_flight} in flight), every result checked; \
         median of {rounds} interleaved rounds, requests/s:"
    );
    for (i, (key, name, _)) in rows.iter().enumerate() {
        println!(
            "{name:<42} {:>9.0}  ({:.2}x blocking)",
            med[i],
            med[i] / med[0]
        );
        if i > 0 {
            println!("summary: pipeline_ratio_{key} {:.3}", med[i] / med[0]);
        }
    }
    Ok(())
}
