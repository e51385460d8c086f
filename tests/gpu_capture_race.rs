//! Captures begun and ended by one thread while another thread queues work on the same stream: each
//! operation is either captured and kept by the graph, or queued live and ordered, never checked as one
//! and queued as the other. Compiled only with `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use hip::prelude::*;
use hip::{CaptureMode, Error, Graph};
use std::sync::atomic::{AtomicBool, Ordering};

use common::device;

/// Thread A fills `BUFFERS` distinct buffers on stream `s`, one fill each; thread B keeps beginning and
/// ending relaxed-mode captures on `s`. A fill captured into a graph is one memset node touching one
/// buffer, so every graph must keep exactly as many allocations as it has nodes: a fill whose capture
/// check said "live" but that HIP captured would be a node the graph does not keep (replayed after its
/// buffer is dropped, it writes freed memory). The fills that stayed live must have landed.
#[test]
fn operations_racing_a_capture_are_captured_and_kept_or_live() {
    const BUFFERS: usize = 3000;
    let d = device();
    let s = Stream::new(&d).unwrap();
    let mut bufs: Vec<DeviceBuffer<u32>> = (0..BUFFERS)
        .map(|_| DeviceBuffer::from_slice(&d, &[u32::MAX; 64]).unwrap())
        .collect();
    let done = AtomicBool::new(false);
    let graphs: Vec<Graph> = std::thread::scope(|scope| {
        let capturer = scope.spawn(|| {
            let mut graphs = Vec::new();
            while !done.load(Ordering::Acquire) {
                let capture = s.begin_capture(CaptureMode::Relaxed).unwrap();
                std::thread::sleep(std::time::Duration::from_micros(30));
                graphs.push(capture.end().unwrap());
                std::thread::sleep(std::time::Duration::from_micros(30));
            }
            graphs
        });
        for (i, b) in bufs.iter_mut().enumerate() {
            s.fill_async(b, i as u32).unwrap();
        }
        done.store(true, Ordering::Release);
        capturer.join().unwrap()
    });
    s.synchronize().unwrap();
    let mut captured = 0;
    for g in &graphs {
        let nodes = g.node_count().unwrap();
        assert_eq!(
            g.tracked_allocations(),
            nodes,
            "a graph of {nodes} fill nodes must keep one buffer per node"
        );
        captured += nodes;
    }
    assert!(
        captured > 0 && captured < BUFFERS,
        "the race was not exercised: {captured} of {BUFFERS} fills captured in {} captures",
        graphs.len()
    );
    // Live fills ran: each live buffer holds its index; a captured one still holds the sentinel until
    // its graph runs.
    let mut live = 0;
    for (i, b) in bufs.iter().enumerate() {
        let v = b.to_vec().unwrap();
        if v[0] != u32::MAX {
            assert!(v.iter().all(|&x| x == i as u32), "buffer {i}: {v:?}");
            live += 1;
        } else {
            assert!(v.iter().all(|&x| x == u32::MAX), "buffer {i}: {v:?}");
        }
    }
    assert_eq!(
        live + captured,
        BUFFERS,
        "every fill ran live or was captured"
    );
    // The graphs keep their buffers: replayed after the buffers are dropped, they write memory they own.
    drop(bufs);
    for g in &graphs {
        let mut exec = g.instantiate().unwrap();
        exec.launch(&s).unwrap();
    }
    s.synchronize().unwrap();
}

/// A stream joins a capture by waiting on an event recorded in it, but not once that capture has ended,
/// and not while it is in another capture: both are refused with a clear error, and the stream stays
/// live (its later work runs).
#[test]
fn joining_an_ended_capture_or_a_second_one_is_refused() {
    let d = device();
    let (s1, s2, s3) = (
        Stream::new(&d).unwrap(),
        Stream::new(&d).unwrap(),
        Stream::new(&d).unwrap(),
    );
    let capture = s1.begin_capture(CaptureMode::Global).unwrap();
    let inside = s1.record_event().unwrap();
    let other = s3.begin_capture(CaptureMode::Relaxed).unwrap();
    match s3.wait_event(&inside) {
        Err(Error::InvalidArgument { reason, .. }) => {
            assert!(reason.contains("another graph"), "{reason}")
        }
        r => panic!("joining a second capture: {r:?}"),
    }
    drop(other);
    drop(capture.end().unwrap());
    match s2.wait_event(&inside) {
        Err(Error::InvalidArgument { reason, .. }) => {
            assert!(reason.contains("has ended"), "{reason}")
        }
        r => panic!("joining an ended capture: {r:?}"),
    }
    assert!(!s2.is_capturing() && !s3.is_capturing());
    let mut x = DeviceBuffer::from_slice(&d, &[0u32; 16]).unwrap();
    s2.fill_async(&mut x, 7).unwrap();
    assert_eq!(x.to_vec().unwrap(), vec![7; 16]);
}
