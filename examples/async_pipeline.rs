//! An async server's GPU work: many concurrent requests over a few streams, each one an upload, a kernel
//! and a download, every step awaited (`hip::future`) instead of blocking a thread. Runs on tokio's
//! current-thread runtime (one thread serves every request) and on its multi-thread runtime with four
//! workers (as many threads as the blocking side), each with the futures' waiting threads and with the
//! completion reactor, interleaved in one process. As a server bounds the work it has in
//! flight, [`IN_FLIGHT`] tasks serve the requests, each reusing its own pinned upload buffer (allocating
//! pinned memory per request would cost more than the request). Every result is checked, and the same
//! requests are then served by one blocking thread per stream for comparison.
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
/// Requests in flight at once: tasks on the one executor thread, each serving every `IN_FLIGHT`th request.
const IN_FLIGHT: usize = 64;

/// A row of the table: its summary key, its name, and the executor and wake mechanism (`None`: the
/// blocking threads).
type Row<'a> = (
    &'a str,
    &'a str,
    Option<(&'a tokio::runtime::Runtime, Wake)>,
);

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

/// One request, every GPU step awaited; `pinned` is the serving task's upload buffer.
async fn serve(server: &Server, id: usize, pinned: &mut PinnedBuffer<f32>) -> Result<(), Report> {
    let stream = &server.streams[id % STREAMS];
    let x = input(id);
    pinned.as_mut_slice()?.copy_from_slice(&x);
    let mut dx = DeviceBuffer::<f32>::zeroed_async(stream, LEN)?;
    let mut dy = DeviceBuffer::<f32>::zeroed_async(stream, LEN)?;
    stream.copy_from_host_async(pinned, &mut dx)?;
    stream.completion().await?; // upload done: the pinned buffer may be reused
    launch(server, stream, &dx, &mut dy, id)?;
    stream.completion().await?; // kernel done
    let y = dy.to_vec_future(stream).await?; // download done
    check(id, &x, &y)
}

/// One of the [`IN_FLIGHT`] serving tasks: requests `first`, `first + IN_FLIGHT`, ... below `n`.
async fn serving_task(server: Arc<Server>, first: usize, n: usize) -> Result<(), Report> {
    let mut pinned = PinnedBuffer::zeroed(&server.device, LEN)?;
    for id in (first..n).step_by(IN_FLIGHT) {
        serve(&server, id, &mut pinned).await?;
    }
    Ok(())
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
    // Executors: tokio's current-thread runtime (one thread serves every request, as before) and its
    // multi-thread runtime with STREAMS workers: as many threads issuing HIP calls as the blocking side
    // has, the fair comparison (one executor thread issues every HIP call of 64 requests in flight, where
    // the blocking side has four).
    let one = tokio::runtime::Builder::new_current_thread().build()?;
    let many = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(STREAMS)
        .build()?;
    let run_async = |rt: &tokio::runtime::Runtime, wake: Wake, n: usize| -> Result<f64, Report> {
        set_wake(wake);
        let t = Instant::now();
        rt.block_on(async {
            let mut tasks = tokio::task::JoinSet::new();
            for first in 0..IN_FLIGHT.min(n) {
                tasks.spawn(serving_task(server.clone(), first, n));
            }
            while let Some(r) = tasks.join_next().await {
                r.map_err(|e| Report::msg(format!("a request task failed: {e}")))??;
            }
            Ok::<(), Report>(())
        })?;
        Ok(n as f64 / t.elapsed().as_secs_f64())
    };
    let run_blocking = || -> Result<f64, Report> {
        let t = Instant::now();
        std::thread::scope(|scope| -> Result<(), Report> {
            let workers: Vec<_> = (0..STREAMS)
                .map(|s| {
                    let server = &server;
                    scope.spawn(move || -> Result<(), Report> {
                        let mut pinned = PinnedBuffer::zeroed(&server.device, LEN)?;
                        let mut out = PinnedBuffer::zeroed(&server.device, LEN)?;
                        for id in (s..REQUESTS).step_by(STREAMS) {
                            serve_blocking(server, &server.streams[s], id, &mut pinned, &mut out)?;
                        }
                        Ok(())
                    })
                })
                .collect();
            for w in workers {
                w.join()
                    .map_err(|_| Report::msg("a blocking worker panicked"))??;
            }
            Ok(())
        })?;
        Ok(REQUESTS as f64 / t.elapsed().as_secs_f64())
    };
    let rows: [Row; 5] = [
        ("blocking", "4 blocking threads (one per stream)", None),
        (
            "one_thread",
            "1 executor thread, waiting threads",
            Some((&one, Wake::Thread)),
        ),
        (
            "one_reactor",
            "1 executor thread, reactor",
            Some((&one, Wake::Reactor)),
        ),
        (
            "four_thread",
            "4 executor workers, waiting threads",
            Some((&many, Wake::Thread)),
        ),
        (
            "four_reactor",
            "4 executor workers, reactor",
            Some((&many, Wake::Reactor)),
        ),
    ];
    for (_, _, how) in &rows {
        if let Some((rt, w)) = how {
            run_async(rt, *w, 100)?; // warm-up
        }
    }
    // Interleaved rounds, so drift hits every row alike; the median round per row.
    let rounds = 3;
    let mut rates = vec![Vec::new(); rows.len()];
    for _ in 0..rounds {
        for (i, (_, _, how)) in rows.iter().enumerate() {
            rates[i].push(match how {
                None => run_blocking()?,
                Some((rt, w)) => run_async(rt, *w, REQUESTS)?,
            });
        }
    }
    set_wake(Wake::Thread);
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let med: Vec<f64> = rates.iter_mut().map(median).collect();
    println!(
        "{REQUESTS} requests over {STREAMS} streams ({IN_FLIGHT} in flight), every result checked; \
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
