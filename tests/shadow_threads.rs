//! Threads, futures and host functions under the shadow HIP runtime: futures dropped before they
//! resolve (reads, pinned copies, event completions), buffers dropped inside host functions, the staging ring from two threads, a graph launched
//! on one thread while another reads what it writes, one stream shared by two threads, streams dropped
//! with work queued, HIP objects dropped inside host functions (which must call no HIP there). Each checks
//! its values and that the shadow reported nothing. (An event re-recorded while another thread waits on
//! it: tests/shadow_event_race.rs.)
#![cfg(feature = "shadow")]

mod shadow;

use hip::prelude::*;
use shadow::assert_no_reports;
use std::sync::{Arc, Mutex};

const N: usize = 4096;
const ROUNDS: u32 = 24;

fn device() -> Device {
    Device::get(0).expect("the shadow runtime's device 0")
}

#[test]
fn futures_dropped_before_they_resolve() {
    let d = device();
    let a = Stream::non_blocking(&d).unwrap();
    let b = Stream::non_blocking(&d).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    for round in 0..ROUNDS {
        let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        a.fill_async(&mut x, round).unwrap();
        drop(x.to_vec_future(&a)); // the copy is queued; nobody waits for it
        drop(a.completion());
        b.fill_async(&mut x, round + 100).unwrap(); // a write after the dropped read, on another stream
        let v = rt.block_on(x.to_vec_future(&b)).unwrap();
        assert_eq!(v, vec![round + 100; N]);
        drop(x.to_vec_future(&b));
        drop(x); // freed with a dropped read still queued
    }
    assert_no_reports();
}

/// A copy into pinned memory whose future is dropped (the future owns the pinned buffer), and an event's
/// completion future dropped while the event is re-recorded.
#[test]
fn pinned_copies_and_event_completions_dropped() {
    let d = device();
    let a = Stream::non_blocking(&d).unwrap();
    let b = Stream::non_blocking(&d).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let e = Event::new(&d).unwrap();
    for round in 0..ROUNDS {
        let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        a.fill_async(&mut x, round).unwrap();
        let pinned = PinnedBuffer::<u32>::zeroed(&d, N).unwrap();
        drop(b.copy_to_pinned_future(&x, pinned)); // frees the pinned buffer under the copy
        e.record(&a).unwrap();
        drop(e.completion());
        a.fill_async(&mut x, round + 1).unwrap();
        e.record(&b).unwrap();
        let back = rt
            .block_on(b.copy_to_pinned_future(&x, PinnedBuffer::zeroed(&d, N).unwrap()))
            .unwrap();
        let s = back.as_slice().unwrap();
        shadow::host_access(s, false);
        assert_eq!(s, &vec![round + 1; N][..]);
        rt.block_on(e.completion()).unwrap();
    }
    assert_no_reports();
}

#[test]
fn buffers_dropped_inside_host_functions() {
    let d = device();
    let a = Stream::non_blocking(&d).unwrap();
    let b = Stream::non_blocking(&d).unwrap();
    for round in 0..ROUNDS {
        let x = DeviceBuffer::from_slice(&d, &vec![round; N]).unwrap();
        let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        b.copy_device_async(&x, &mut y).unwrap();
        let h = a.launch_host_fn(move || drop(x)).unwrap(); // still read by B
        assert_eq!(y.to_vec().unwrap(), vec![round; N]);
        drop(h);
    }
    d.synchronize().unwrap();
    assert_no_reports();
}

/// Issue 54, hole 7: HIP objects dropped inside a host function (a launched graph holding the last owner
/// of a buffer, its graph, a stream, an event, a stream-ordered buffer, a module) call no HIP there: the
/// shadow reports any HIP call a host function makes. Before the fix the graph's drop synchronized the
/// device and the event and stream destroyed themselves from the callback.
#[test]
fn hip_objects_dropped_inside_host_functions_call_no_hip_there() {
    let d = device();
    let a = Stream::non_blocking(&d).unwrap();
    let g = Stream::non_blocking(&d).unwrap();
    for round in 0..4u32 {
        let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        let graph = {
            let cap = g.begin_capture(hip::CaptureMode::ThreadLocal).unwrap();
            g.fill_async(&mut x, round + 1).unwrap();
            cap.end().unwrap()
        };
        let mut exec = graph.instantiate().unwrap();
        exec.launch(&g).unwrap();
        let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        a.copy_device_async(&x, &mut y).unwrap();
        drop(x); // the graph and the copy hold it now
        let other = Stream::non_blocking(&d).unwrap();
        let event = other.record_event().unwrap();
        let pool = DeviceBuffer::<u32>::zeroed_async(&other, N).unwrap();
        let h = a
            .launch_host_fn(move || {
                drop(exec);
                drop(graph);
                drop(event);
                drop(pool);
                drop(other);
            })
            .unwrap();
        a.synchronize().unwrap();
        assert_eq!(h.state(), hip::HostFnState::Done);
        assert_eq!(y.to_vec().unwrap(), vec![round + 1; N]);
    }
    d.synchronize().unwrap();
    assert_no_reports();
}

#[test]
fn staging_ring_from_two_threads() {
    let d = device();
    let n = (20 << 20) / 4;
    let results = Arc::new(Mutex::new(Vec::new()));
    std::thread::scope(|t| {
        for k in 0..2u32 {
            let (d, results) = (&d, results.clone());
            t.spawn(move || {
                let host: Vec<u32> = (0..n as u32).map(|i| i ^ (k << 30)).collect();
                let x = DeviceBuffer::from_slice(d, &host).unwrap();
                results.lock().unwrap().push(x.to_vec().unwrap() == host);
            });
        }
    });
    assert_eq!(*results.lock().unwrap(), vec![true, true]);
    assert_no_reports();
}

/// A graph that writes `x` launched on A by one thread while another reads `x` on B: a launch writes
/// without a borrow, so only the crate's tracking orders the two.
#[test]
fn graph_launches_and_reads_on_two_threads() {
    let d = device();
    let a = Stream::non_blocking(&d).unwrap();
    let b = Stream::non_blocking(&d).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let graph = {
        let cap = a.begin_capture(hip::CaptureMode::ThreadLocal).unwrap();
        a.fill_async(&mut x, 8).unwrap();
        cap.end().unwrap()
    };
    let x = Arc::new(x);
    let mut exec = graph.instantiate().unwrap();
    std::thread::scope(|t| {
        t.spawn(|| {
            for _ in 0..ROUNDS {
                exec.launch(&a).unwrap();
            }
        });
        t.spawn(|| {
            for _ in 0..ROUNDS {
                let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
                b.copy_device_async(&*x, &mut y).unwrap();
                let v = y.to_vec().unwrap();
                assert!(v == vec![0; N] || v == vec![8; N]);
            }
        });
    });
    drop(exec);
    drop(graph);
    assert_eq!(x.to_vec().unwrap(), vec![8; N]);
    assert_no_reports();
}

/// One stream shared by two threads, each writing its own buffer and reading the other's.
#[test]
fn one_stream_two_threads() {
    let d = device();
    let s = Stream::non_blocking(&d).unwrap();
    let other = Stream::non_blocking(&d).unwrap();
    let bufs = [
        Mutex::new(DeviceBuffer::<u32>::zeroed(&d, N).unwrap()),
        Mutex::new(DeviceBuffer::<u32>::zeroed(&d, N).unwrap()),
    ];
    std::thread::scope(|t| {
        for k in 0..2usize {
            let (d, s, other, bufs) = (&d, &s, &other, &bufs);
            t.spawn(move || {
                for round in 0..ROUNDS {
                    s.fill_async(&mut *bufs[k].lock().unwrap(), round).unwrap();
                    let mut y = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
                    other
                        .copy_device_async(&*bufs[1 - k].lock().unwrap(), &mut y)
                        .unwrap();
                    drop(y);
                }
            });
        }
    });
    for b in &bufs {
        assert_eq!(b.lock().unwrap().to_vec().unwrap(), vec![ROUNDS - 1; N]);
    }
    assert_no_reports();
}

/// Streams dropped with work queued on them, then the buffers that work uses read and dropped.
#[test]
fn streams_dropped_with_work_queued() {
    let d = device();
    for round in 0..ROUNDS {
        let c = Stream::non_blocking(&d).unwrap();
        let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        c.fill_async(&mut x, round).unwrap();
        c.copy_device_async(&x, &mut y).unwrap();
        drop(c);
        let e = Stream::non_blocking(&d).unwrap();
        let mut z = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        e.copy_device_async(&y, &mut z).unwrap();
        drop(x); // written by the dropped stream
        drop(e);
        assert_eq!(z.to_vec().unwrap(), vec![round; N]);
    }
    assert_no_reports();
}
