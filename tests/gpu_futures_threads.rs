//! Futures (issue 45) as a server would use them: many threads, each with its own executor, awaiting
//! work on shared streams; a future created on one thread and awaited on another; a stream dropped while
//! its futures are pending; and a process that exits with futures pending (the waiting threads are
//! still inside the runtime when it is torn down).
#![cfg(feature = "gpu")]

mod common;

use common::child::run_test_in_child;
use common::{device, load, runtime, slow_fill, ORDERING_KERNELS};
use hip::prelude::*;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// Poll `f` once with a waker that does nothing: whether it was ready.
fn poll_once<F: Future + Unpin>(f: &mut F) -> bool {
    let mut cx = Context::from_waker(Waker::noop());
    matches!(std::pin::Pin::new(f).poll(&mut cx), Poll::Ready(_))
}

#[test]
fn eight_threads_each_with_an_executor_share_four_streams_and_every_value_is_right() {
    const THREADS: u32 = 8;
    const ROUNDS: u32 = 100;
    let device = device();
    let module = Arc::new(load(&device, ORDERING_KERNELS));
    let streams: Arc<Vec<Stream>> = Arc::new(
        (0..4)
            .map(|_| Stream::non_blocking(&device).unwrap())
            .collect(),
    );
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (device, module, streams) = (device.clone(), module.clone(), streams.clone());
            std::thread::spawn(move || {
                let rt = runtime();
                for r in 0..ROUNDS {
                    let stream = &streams[((t + r) % 4) as usize];
                    let value = t * 1_000_000 + r;
                    let mut x = DeviceBuffer::<u32>::zeroed(&device, 4096).unwrap();
                    slow_fill(&module, stream, &mut x, value, 20_000);
                    // Every other round awaits the stream first, then reads on another stream: the
                    // memory model orders that read after the fill.
                    let got = if r % 2 == 0 {
                        rt.block_on(stream.completion()).unwrap();
                        let other = &streams[((t + r + 1) % 4) as usize];
                        rt.block_on(x.to_vec_future(other)).unwrap()
                    } else {
                        rt.block_on(x.to_vec_future(stream)).unwrap()
                    };
                    assert!(
                        got.iter().all(|&v| v == value),
                        "thread {t} round {r}: {:?}",
                        &got[..4]
                    );
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
}

#[test]
fn a_future_created_on_one_thread_resolves_on_another() {
    let device = device();
    let module = load(&device, ORDERING_KERNELS);
    let stream = Stream::non_blocking(&device).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(&device, 1 << 16).unwrap();
    slow_fill(&module, &stream, &mut x, 41, 20_000_000);
    let read = x.to_vec_future(&stream);
    let done = stream.completion();
    let got = std::thread::spawn(move || {
        let rt = runtime();
        rt.block_on(done).unwrap();
        rt.block_on(read).unwrap()
    })
    .join()
    .unwrap();
    assert!(got.iter().all(|&v| v == 41), "{:?}", &got[..4]);
}

#[test]
fn futures_outlive_their_stream_and_buffer_and_resolve_right() {
    let device = device();
    let module = load(&device, ORDERING_KERNELS);
    let stream = Stream::non_blocking(&device).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(&device, 1 << 16).unwrap();
    slow_fill(&module, &stream, &mut x, 17, 50_000_000);
    let read = x.to_vec_future(&stream);
    let pinned = PinnedBuffer::<u32>::zeroed(&device, x.len()).unwrap();
    let pinned_read = stream.copy_to_pinned_future(&x, pinned);
    let done = stream.completion();
    // The user's handles go first: the futures keep what the queued work needs.
    drop(x);
    drop(stream);
    let rt = runtime();
    rt.block_on(done).unwrap();
    assert!(rt.block_on(read).unwrap().iter().all(|&v| v == 17));
    let pinned = rt.block_on(pinned_read).unwrap();
    assert!(pinned.as_slice().unwrap().iter().all(|&v| v == 17));
}

#[test]
fn a_process_that_exits_with_futures_pending_exits_cleanly() {
    // The exit happens in a child process of this test binary.
    if std::env::var_os("HIP_RS_FUTURES_EXIT_CHILD").is_some() {
        exit_child();
        return;
    }
    let child = run_test_in_child(
        "a_process_that_exits_with_futures_pending_exits_cleanly",
        "HIP_RS_FUTURES_EXIT_CHILD",
        Duration::from_secs(60),
    );
    let out = child.stdout;
    let status = child
        .status
        .expect("the child hung at exit with futures pending");
    assert!(status.success(), "the child's exit failed: {status:?}");
    assert!(out.contains("pending at exit: 3"), "{out}");
    assert!(
        out.contains("still running at exit: true"),
        "the kernel ended before the exit: make it slower for this GPU\n{out}"
    );
}

fn exit_child() {
    let device = device();
    let module = load(&device, ORDERING_KERNELS);
    let stream = Stream::non_blocking(&device).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(&device, 1 << 16).unwrap();
    // Allocated first: pinned allocation may wait for the device on the NVIDIA platform.
    let pinned = PinnedBuffer::<u32>::zeroed(&device, x.len()).unwrap();
    // About a second of spinning: the futures are still pending when the process exits.
    slow_fill(&module, &stream, &mut x, 3, 2_000_000_000);
    let mut read = x.to_vec_future(&stream);
    let mut done = stream.completion();
    let mut pinned_read = stream.copy_to_pinned_future(&x, pinned);
    let pending = [
        poll_once(&mut read),
        poll_once(&mut done),
        poll_once(&mut pinned_read),
    ]
    .iter()
    .filter(|&&ready| !ready)
    .count();
    println!("pending at exit: {pending}");
    // One forgotten, two dropped (what they hold waits in their waiting thread), the buffer and the
    // stream forgotten: the test harness exits the process next, the kernel still running.
    std::mem::forget(read);
    drop(done);
    drop(pinned_read);
    std::mem::forget(x);
    println!("still running at exit: {}", !stream.query().unwrap());
    std::mem::forget(stream);
}

#[test]
fn a_host_write_after_a_pending_read_waits_for_the_read() {
    let device = device();
    let module = load(&device, ORDERING_KERNELS);
    let stream = Stream::non_blocking(&device).unwrap();
    let rt = runtime();
    for round in 0..3u32 {
        let mut x = DeviceBuffer::<u32>::zeroed(&device, 1 << 16).unwrap();
        slow_fill(&module, &stream, &mut x, 50 + round, 20_000_000);
        let read = x.to_vec_future(&stream);
        // The host overwrites the buffer while the read is queued behind the slow fill: the memory
        // model makes the write wait for the read, so the read sees the fill, never the new values.
        x.copy_from_host(&vec![9u32; x.len()]).unwrap();
        let got = rt.block_on(read).unwrap();
        assert!(
            got.iter().all(|&v| v == 50 + round),
            "round {round}: the read saw {:?}",
            &got[..4]
        );
        assert_eq!(x.to_vec().unwrap(), vec![9u32; x.len()]);
    }
}

#[test]
fn an_event_completion_follows_the_record_it_saw_not_a_later_one() {
    let device = device();
    let module = load(&device, ORDERING_KERNELS);
    let (a, b) = (
        Stream::non_blocking(&device).unwrap(),
        Stream::non_blocking(&device).unwrap(),
    );
    let rt = runtime();
    let mut x = DeviceBuffer::<u32>::zeroed(&device, 256).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&device, 256).unwrap();
    let event = Event::new(&device).unwrap();
    slow_fill(&module, &a, &mut x, 1, 2_000_000);
    event.record(&a).unwrap();
    let first = event.completion();
    // Recorded again after a far slower kernel on another stream: the future still waits for the
    // first record only.
    slow_fill(&module, &b, &mut y, 2, 2_000_000_000);
    event.record(&b).unwrap();
    rt.block_on(first).unwrap();
    assert!(
        !b.query().unwrap(),
        "the completion waited for the later record (or the slow kernel is too fast for this GPU)"
    );
    assert_eq!(x.to_vec().unwrap(), vec![1u32; 256]);
    rt.block_on(event.completion()).unwrap();
    assert!(b.query().unwrap());
    assert_eq!(y.to_vec().unwrap(), vec![2u32; 256]);
}
