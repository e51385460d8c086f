//! Stress on a real device: 8 threads, each with its own streams, for a fixed number of rounds doing random
//! allocations, async copies through pinned buffers, kernel launches, cross-stream event waits, memsets, and
//! stream and buffer drops in random order; every result is verified. Seeded: a failure reproduces.
//! Compiled only with `--features gpu`; meant to run also under `compute-sanitizer --tool memcheck` and
//! `--tool synccheck` (see docs/RELIABILITY.md).
#![cfg(feature = "gpu")]
mod common;
use common::rng::Rng;

use hip::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

const THREADS: usize = 8;
/// Rounds per thread; `HIP_RS_STRESS_ROUNDS` overrides (the sanitizers are slow).
const ROUNDS: usize = 400;
const STREAMS_PER_THREAD: usize = 3;

const KERNELS: &str = r#"
extern "C" __global__ void add(unsigned int* x, unsigned int by, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += by;
}
"#;

/// Device data in flight: what it must hold once all its queued work is done, and the event after which
/// it is (so work on another stream can wait for it).
struct Job {
    dev: DeviceBuffer<u32>,
    expected: Vec<u32>,
    last: Event,
    /// Pinned results queued but not yet checked, with what each must read.
    results: Vec<(PinnedBuffer<u32>, Vec<u32>)>,
}

/// A pinned buffer holding each element's complement of `want`: whatever a copy into it leaves unwritten
/// differs from what it must read (a zeroed buffer would already hold a memset's zeros).
fn sentinel(d: &Device, want: &[u32]) -> PinnedBuffer<u32> {
    let complement: Vec<u32> = want.iter().map(|v| !v).collect();
    PinnedBuffer::from_slice(d, &complement).unwrap()
}

struct Counts {
    checked: AtomicUsize,
    launches: AtomicUsize,
    copies: AtomicUsize,
    stream_drops: AtomicUsize,
}

fn worker(thread: usize, d: &Device, add: &Function, rounds: usize, counts: &Counts) {
    let mut rng = Rng(0x57_2e55 + thread as u64);
    let mut streams: Vec<Stream> = (0..STREAMS_PER_THREAD)
        .map(|_| Stream::non_blocking(d).unwrap())
        .collect();
    let mut jobs: Vec<Job> = Vec::new();
    let check = |pinned: &PinnedBuffer<u32>, want: &[u32], what: &str| {
        let got = pinned.as_slice().unwrap();
        assert_eq!(got.len(), want.len(), "thread {thread} {what}");
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
            panic!(
                "thread {thread} {what}: element {i} is {} not {}",
                got[i], want[i]
            );
        }
        counts.checked.fetch_add(1, Ordering::Relaxed);
    };
    for round in 0..rounds {
        let s = rng.below(streams.len());
        match rng.below(7) {
            // A new job: random data up, one kernel, a copy back.
            0 | 1 if jobs.len() < 12 => {
                let n = [0, 1, 255, 256, 257, 4096, 65_536 + 3][rng.below(7)];
                let data: Vec<u32> = (0..n).map(|_| rng.next() as u32 >> 1).collect();
                let src = PinnedBuffer::from_slice(d, &data).unwrap();
                let mut dev = DeviceBuffer::<u32>::zeroed(d, n).unwrap();
                let stream = &streams[s];
                stream.copy_from_host_async(&src, &mut dev).unwrap();
                drop(src); // waits for its copy, never frees under it
                let by = rng.next() as u32 & 0xffff;
                let expected: Vec<u32> = data.iter().map(|v| v.wrapping_add(by)).collect();
                launch_add(add, stream, &mut dev, by, counts);
                let mut dst = sentinel(d, &expected);
                stream.copy_to_host_async(&dev, &mut dst).unwrap();
                counts.copies.fetch_add(2, Ordering::Relaxed);
                let last = stream.record_event().unwrap();
                jobs.push(Job {
                    dev,
                    expected: expected.clone(),
                    last,
                    results: vec![(dst, expected)],
                });
            }
            // More work on a job from another stream, ordered after its last event.
            2 if !jobs.is_empty() => {
                let j = rng.below(jobs.len());
                let job = &mut jobs[j];
                let stream = &streams[s];
                stream.wait_event(&job.last).unwrap();
                if rng.below(3) == 0 {
                    let byte = rng.next() as u8;
                    stream.memset_async(&mut job.dev, byte).unwrap();
                    job.expected
                        .iter_mut()
                        .for_each(|v| *v = u32::from_ne_bytes([byte; 4]));
                } else {
                    let by = rng.next() as u32 & 0xff;
                    launch_add(add, stream, &mut job.dev, by, counts);
                    job.expected
                        .iter_mut()
                        .for_each(|v| *v = v.wrapping_add(by));
                }
                let mut dst = sentinel(d, &job.expected);
                stream.copy_to_host_async(&job.dev, &mut dst).unwrap();
                counts.copies.fetch_add(1, Ordering::Relaxed);
                job.results.push((dst, job.expected.clone()));
                job.last = stream.record_event().unwrap();
            }
            // Check a job's results, in random order, and maybe drop it.
            3 if !jobs.is_empty() => {
                let j = rng.below(jobs.len());
                let results = std::mem::take(&mut jobs[j].results);
                let mut order: Vec<usize> = (0..results.len()).collect();
                for k in (1..order.len()).rev() {
                    order.swap(k, rng.below(k + 1));
                }
                let mut results: Vec<Option<_>> = results.into_iter().map(Some).collect();
                for k in order {
                    let (pinned, want) = results[k].take().unwrap();
                    check(&pinned, &want, &format!("round {round} job result"));
                }
                if rng.below(2) == 0 {
                    let job = jobs.swap_remove(j);
                    drop(job); // device memory freed by hipFree, which waits for queued work
                }
            }
            // Drop a stream with work possibly still queued on it, and make a new one.
            4 => {
                streams[s] = Stream::non_blocking(d).unwrap();
                counts.stream_drops.fetch_add(1, Ordering::Relaxed);
            }
            // Drop a job with results unchecked: pinned buffers wait for their copies before freeing.
            5 if !jobs.is_empty() => {
                let j = rng.below(jobs.len());
                jobs.swap_remove(j);
            }
            _ => {
                // A device-to-device copy on a stream ordered after a job, checked at once.
                if let Some(job) = jobs.last() {
                    let stream = &streams[s];
                    stream.wait_event(&job.last).unwrap();
                    let not_yet: Vec<u32> = job.expected.iter().map(|v| !v).collect();
                    let mut copy = DeviceBuffer::from_slice(d, &not_yet).unwrap();
                    stream.copy_device_async(&job.dev, &mut copy).unwrap();
                    let mut dst = sentinel(d, &job.expected);
                    stream.copy_to_host_async(&copy, &mut dst).unwrap();
                    counts.copies.fetch_add(2, Ordering::Relaxed);
                    check(&dst, &job.expected, &format!("round {round} device copy"));
                }
            }
        }
    }
    for job in jobs {
        for (pinned, want) in &job.results {
            check(pinned, want, "final");
        }
        let mut dst = sentinel(d, &job.expected);
        streams[0].wait_event(&job.last).unwrap();
        streams[0].copy_to_host_async(&job.dev, &mut dst).unwrap();
        check(&dst, &job.expected, "final state");
    }
}

fn launch_add(add: &Function, s: &Stream, dev: &mut DeviceBuffer<u32>, by: u32, counts: &Counts) {
    let n = dev.len() as u32;
    if n == 0 {
        return;
    }
    let mut args = LaunchArgs::new();
    args.arg_mut(dev).arg(&by).arg(&n);
    unsafe { add.launch(s, &LaunchConfig::for_num_elems(n), &mut args) }.unwrap();
    counts.launches.fetch_add(1, Ordering::Relaxed);
}

#[test]
fn eight_threads_of_random_streams_copies_launches_and_drops_all_verified() {
    let d = Device::get(0).expect("--features gpu needs a HIP device");
    let code = ProgramBuilder::new(KERNELS).compile().unwrap();
    let module = Module::load_data(&d, code.code()).unwrap();
    let add = module.function("add").unwrap();
    drop(module); // the function keeps it loaded
    let rounds = std::env::var("HIP_RS_STRESS_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ROUNDS);
    let counts = Counts {
        checked: AtomicUsize::new(0),
        launches: AtomicUsize::new(0),
        copies: AtomicUsize::new(0),
        stream_drops: AtomicUsize::new(0),
    };
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let (d, add, counts) = (d.clone(), add.clone(), &counts);
            scope.spawn(move || worker(t, &d, &add, rounds, counts));
        }
    });
    d.synchronize().unwrap();
    let checked = counts.checked.load(Ordering::Relaxed);
    println!(
        "stress: {THREADS} threads x {rounds} rounds: {checked} results verified, {} launches, {} async copies, {} streams dropped",
        counts.launches.load(Ordering::Relaxed),
        counts.copies.load(Ordering::Relaxed),
        counts.stream_drops.load(Ordering::Relaxed),
    );
    assert!(
        checked >= THREADS * rounds / 10,
        "too few results checked: {checked}"
    );
}
