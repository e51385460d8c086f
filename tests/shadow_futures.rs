//! The futures under the shadow HIP runtime (scripts/shadow.sh), with both wake mechanisms
//! (`hip::future::Wake::Thread`, the waiting thread per stream, and `Wake::Reactor`, stream ticket writes
//! read by one scanner thread): values right, futures on several streams and events, dropped futures
//! (their memory freed only after the work, nothing reported), captures refused, thousands pending at
//! once; the reactor's own counts say it woke them (no silent fall-back); a stream stopped as by a device
//! fault resolves the reactor's pending futures with its error (the shadow's `hip_rs_shadow_fail_stream`;
//! the waiting thread's error path needs events that fail, which only a GPU gives:
//! tests/gpu_futures.rs).
#![cfg(feature = "shadow")]

mod shadow;

use hip::future::{reactor_stats, set_wake, Wake};
use hip::prelude::*;
use hip::CaptureMode;
use shadow::assert_no_reports;
use std::sync::Mutex;

const N: usize = 4096;
const ROUNDS: u32 = 12;

/// The wake mechanism is process-wide: one test at a time here.
static ONE: Mutex<()> = Mutex::new(());

fn device() -> Device {
    Device::get(0).expect("the shadow runtime's device 0")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

fn both(mut f: impl FnMut(Wake)) {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    for w in [Wake::Thread, Wake::Reactor] {
        set_wake(w);
        let before = reactor_stats();
        f(w);
        let after = reactor_stats();
        match w {
            Wake::Thread => assert_eq!(after.watched, before.watched, "the reactor took a future"),
            Wake::Reactor => {
                assert!(after.watched > before.watched, "the reactor took no future");
                assert_eq!(after.fell_back, before.fell_back, "fell back to the thread");
            }
        }
    }
    set_wake(Wake::Thread);
}

#[test]
fn reads_completions_and_event_completions_on_three_streams() {
    both(|w| {
        let d = device();
        let rt = runtime();
        let s: Vec<Stream> = (0..3).map(|_| Stream::non_blocking(&d).unwrap()).collect();
        for round in 0..ROUNDS {
            let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
            s[0].fill_async(&mut x, round).unwrap();
            let read = x.to_vec_future(&s[1]); // ordered after the fill by the memory model
            let e = s[0].record_event().unwrap();
            let done = e.completion();
            let pinned = s[2].copy_to_pinned_future(&x, PinnedBuffer::zeroed(&d, N).unwrap());
            let (v, p, ()) = rt.block_on(async {
                let p = pinned.await.unwrap();
                (read.await.unwrap(), p, done.await.unwrap())
            });
            assert_eq!(v, vec![round; N], "{w:?}");
            let ps = p.as_slice().unwrap();
            shadow::host_access(ps, false);
            assert_eq!(ps, &vec![round; N][..], "{w:?}");
            rt.block_on(s[0].completion()).unwrap();
        }
    });
    assert_no_reports();
}

#[test]
fn dropped_futures_free_nothing_under_work() {
    both(|_| {
        let d = device();
        let rt = runtime();
        let (a, b) = (
            Stream::non_blocking(&d).unwrap(),
            Stream::non_blocking(&d).unwrap(),
        );
        for round in 0..ROUNDS {
            let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
            a.fill_async(&mut x, round).unwrap();
            drop(x.to_vec_future(&a));
            drop(b.copy_to_pinned_future(&x, PinnedBuffer::zeroed(&d, N).unwrap()));
            drop(a.completion());
            b.fill_async(&mut x, round + 7).unwrap();
            assert_eq!(
                rt.block_on(x.to_vec_future(&b)).unwrap(),
                vec![round + 7; N]
            );
            drop(x.to_vec_future(&b));
            drop(x); // freed with dropped reads queued
        }
        // A stream dropped with its futures pending: the futures keep it.
        let c = Stream::non_blocking(&d).unwrap();
        let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        c.fill_async(&mut y, 3).unwrap();
        let f = y.to_vec_future(&c);
        drop(c);
        assert_eq!(rt.block_on(f).unwrap(), vec![3; N]);
    });
    assert_no_reports();
}

#[test]
fn a_thousand_pending_at_once_all_resolve_right() {
    both(|w| {
        let d = device();
        let rt = runtime();
        let streams: Vec<Stream> = (0..4).map(|_| Stream::non_blocking(&d).unwrap()).collect();
        let mut bufs = Vec::new();
        for (i, s) in streams.iter().enumerate() {
            let mut x = DeviceBuffer::<u32>::zeroed(&d, 64).unwrap();
            s.fill_async(&mut x, i as u32).unwrap();
            bufs.push(x);
        }
        let futures: Vec<_> = (0..1000)
            .map(|i| bufs[i % 4].to_vec_future(&streams[i % 4]))
            .collect();
        let all = rt.block_on(async {
            let mut out = Vec::new();
            for f in futures {
                out.push(f.await.unwrap());
            }
            out
        });
        for (i, v) in all.iter().enumerate() {
            assert_eq!(v, &vec![(i % 4) as u32; 64], "{w:?} future {i}");
        }
    });
    assert_no_reports();
}

#[test]
fn futures_on_a_capturing_stream_are_refused() {
    both(|w| {
        let d = device();
        let rt = runtime();
        let s = Stream::non_blocking(&d).unwrap();
        let mut x = DeviceBuffer::<u32>::zeroed(&d, 64).unwrap();
        // One future outside the capture, so the reactor's count moves.
        rt.block_on(s.completion()).unwrap();
        let capture = s.begin_capture(CaptureMode::ThreadLocal).unwrap();
        s.memset_async(&mut x, 1).unwrap();
        let e = rt.block_on(s.completion()).unwrap_err();
        assert_eq!(e.status(), Status::InvalidArgument, "{w:?}: {e}");
        assert!(e.to_string().contains("captur"), "{e}");
        let graph = capture.end().unwrap();
        graph.instantiate().unwrap().launch(&s).unwrap();
        assert_eq!(
            rt.block_on(x.to_vec_future(&s)).unwrap(),
            vec![0x0101_0101; 64]
        );
    });
    assert_no_reports();
}

/// Stop `s` as a device fault would (the shadow's own call): `hipStreamQuery` answers `code`.
fn fail_stream(s: &Stream, code: u32) {
    type F = unsafe extern "C" fn(*mut std::ffi::c_void, u32) -> bool;
    let path = std::env::var("HIP_RS_AMDHIP64").unwrap();
    // SAFETY: the shadow runtime the hip crate opened already; `bool hip_rs_shadow_fail_stream(
    // hipStream_t, hipError_t)` with a live stream.
    unsafe {
        let lib = libloading::Library::new(&path).unwrap();
        let f = lib.get::<F>(b"hip_rs_shadow_fail_stream\0").unwrap();
        assert!(f(s.raw().cast(), code));
    }
}

#[test]
fn the_reactor_resolves_futures_of_a_failed_stream_with_its_error() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    set_wake(Wake::Reactor);
    let d = device();
    let rt = runtime();
    let s = Stream::non_blocking(&d).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(&d, 64).unwrap();
    rt.block_on(s.completion()).unwrap();
    let before = reactor_stats();
    fail_stream(&s, 700); // hipErrorIllegalAddress, as a faulting kernel leaves it
    s.fill_async(&mut x, 1).unwrap(); // never runs
    let done = s.completion();
    let read = x.to_vec_future(&s);
    let (done, read) = rt.block_on(async { (done.await, read.await) });
    set_wake(Wake::Thread);
    for e in [done.unwrap_err(), read.unwrap_err()] {
        assert_eq!(e.hip_code().map(|c| c.0), Some(700), "{e}");
    }
    let after = reactor_stats();
    assert_eq!(after.failed - before.failed, 2, "{after:?}");
    // The stream and buffer stay behind work that never runs: a free would wait forever.
    std::mem::forget(x);
    std::mem::forget(s);
    assert_no_reports();
}
