//! The waking contract of the futures without a GPU: the waiting thread is faked by firing the signal by
//! hand (from this thread, another thread, or inside the crate's real host-function trampoline).

use super::read::{PinnedCopy, ReadFuture};
use super::signal::{Pending, Settle, Signal};
use super::Completion;
use crate::host_fn::{into_raw_with_status, run_raw_with_status};
use hip_sys as sys;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

/// A waker that counts its wakes.
#[derive(Default)]
struct Count(AtomicUsize);
impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Records the name of the thread it is dropped on.
struct Tracked(Arc<Mutex<Vec<Option<String>>>>);
impl Drop for Tracked {
    fn drop(&mut self) {
        let name = std::thread::current().name().map(str::to_string);
        self.0.lock().unwrap().push(name);
    }
}

/// Records where it was settled, like `Tracked` where it was dropped; settled before dropped.
struct Settled(Arc<Mutex<Vec<&'static str>>>);
impl Settle for Settled {
    fn settle(&self) {
        self.0.lock().unwrap().push("settled");
    }
}
impl Drop for Settled {
    fn drop(&mut self) {
        self.0.lock().unwrap().push("dropped");
    }
}

impl Settle for Tracked {
    fn settle(&self) {}
}
impl Settle for u32 {
    fn settle(&self) {}
}
impl Settle for () {
    fn settle(&self) {}
}

/// Wait (10 s at most) until `drops` holds `n` entries.
fn released<T>(drops: &Mutex<Vec<T>>, n: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while drops.lock().unwrap().len() < n && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

fn poll<P: Settle>(p: &mut Pending<P>, w: &Arc<Count>) -> Poll<(crate::Result<()>, Option<P>)> {
    let waker = Waker::from(w.clone());
    p.poll(&mut Context::from_waker(&waker))
}

#[test]
fn pending_until_fired_then_woken_once_and_ready_with_the_payload() {
    let (mut p, signal) = Pending::manual(7u32);
    let w = Arc::new(Count::default());
    assert!(poll(&mut p, &w).is_pending());
    assert!(poll(&mut p, &w).is_pending()); // the same waker kept once
    assert_eq!(w.0.load(Ordering::SeqCst), 0);
    signal.fire(sys::hipSuccess);
    assert_eq!(w.0.load(Ordering::SeqCst), 1);
    match poll(&mut p, &w) {
        Poll::Ready((Ok(()), Some(7))) => {}
        other => panic!(
            "expected Ready(Ok, 7), got {:?}",
            other.map(|(r, p)| (r.is_ok(), p))
        ),
    }
    // Handed over once: a second Ready has no payload (the futures turn that into an error).
    assert!(matches!(poll(&mut p, &w), Poll::Ready((Ok(()), None))));
}

#[test]
fn fired_before_the_first_poll_is_ready_at_once() {
    let (mut p, signal) = Pending::manual(());
    signal.fire(sys::hipSuccess);
    assert!(signal.fired());
    let w = Arc::new(Count::default());
    assert!(poll(&mut p, &w).is_ready());
    assert_eq!(w.0.load(Ordering::SeqCst), 0);
}

#[test]
fn only_the_latest_waker_is_woken() {
    let (mut p, signal) = Pending::manual(());
    let (a, b) = (Arc::new(Count::default()), Arc::new(Count::default()));
    assert!(poll(&mut p, &a).is_pending());
    assert!(poll(&mut p, &b).is_pending()); // the task moved: b replaces a
    signal.fire(sys::hipSuccess);
    assert_eq!(a.0.load(Ordering::SeqCst), 0);
    assert_eq!(b.0.load(Ordering::SeqCst), 1);
}

#[test]
fn an_error_status_is_the_output_with_its_raw_code() {
    let (mut p, signal) = Pending::manual(());
    signal.fire(sys::hipError_t(719)); // hipErrorLaunchFailure: a stream in an error state
    let w = Arc::new(Count::default());
    match poll(&mut p, &w) {
        Poll::Ready((Err(crate::Error::Hip { code, call, .. }), Some(()))) => {
            assert_eq!(code.raw().0, 719);
            assert!(call.contains("hipEventSynchronize"), "{call}");
        }
        Poll::Ready((other, _)) => panic!("expected a HIP error 719, got {other:?}"),
        Poll::Pending => panic!("fired but pending"),
    }
}

#[test]
fn a_dropped_future_keeps_its_payload_until_the_work_is_done() {
    let drops = Arc::new(Mutex::new(Vec::new()));
    let (p, signal) = Pending::manual(Tracked(drops.clone()));
    drop(p);
    assert!(drops.lock().unwrap().is_empty(), "freed under queued work");
    signal.fire(sys::hipSuccess);
    released(&drops, 1);
    assert_eq!(
        drops.lock().unwrap().as_slice(),
        &[Some("hip-rs-release".to_string())],
        "not released exactly once, by the releasing thread"
    );

    // Dropped after the work is done: released at once, by the dropping thread.
    let drops = Arc::new(Mutex::new(Vec::new()));
    let (p, signal) = Pending::manual(Tracked(drops.clone()));
    signal.fire(sys::hipSuccess);
    drop(p);
    assert_eq!(drops.lock().unwrap().len(), 1);
}

#[test]
fn inside_a_host_function_the_payload_goes_to_the_releasing_thread() {
    let drops = Arc::new(Mutex::new(Vec::new()));
    let (p, signal) = Pending::manual(Tracked(drops.clone()));
    drop(p);
    // A signal fired inside a host function (the crate's trampoline, as HIP runs it): dropping the
    // payload there could call HIP, so the releasing thread does it.
    let fire = signal.clone();
    let (raw, _handle) = into_raw_with_status(move |s| fire.fire(s));
    // SAFETY: `raw` came from `into_raw_with_status` and is run once, here.
    unsafe { run_raw_with_status(raw, sys::hipSuccess) };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while drops.lock().unwrap().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(
        drops.lock().unwrap().as_slice(),
        &[Some("hip-rs-release".to_string())],
        "a payload dropped inside a host function must be released by the releasing thread"
    );
}

/// A minimal `block_on` over `join_all`: polls every unfinished future each time the thread is woken.
fn block_on_all<P: Settle>(mut pending: Vec<Pending<P>>) -> Vec<crate::Result<()>> {
    struct Unpark(std::thread::Thread, AtomicUsize);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.1.fetch_add(1, Ordering::SeqCst);
            self.0.unpark();
        }
    }
    let unpark = Arc::new(Unpark(std::thread::current(), AtomicUsize::new(0)));
    let waker = Waker::from(unpark.clone());
    let mut out: Vec<Option<crate::Result<()>>> = (0..pending.len()).map(|_| None).collect();
    let mut left = pending.len();
    while left > 0 {
        for (i, p) in pending.iter_mut().enumerate() {
            if out[i].is_none() {
                if let Poll::Ready((r, _)) = p.poll(&mut Context::from_waker(&waker)) {
                    out[i] = Some(r);
                    left -= 1;
                }
            }
        }
        if left > 0 {
            std::thread::park_timeout(std::time::Duration::from_secs(10));
        }
    }
    out.into_iter().map(Option::unwrap).collect()
}

#[test]
fn ten_thousand_fired_from_another_thread_all_complete_on_one_thread() {
    let (pending, signals): (Vec<_>, Vec<Arc<Signal>>) =
        (0..10_000u32).map(Pending::manual).unzip();
    let firer = std::thread::spawn(move || {
        for (i, s) in signals.iter().enumerate().rev() {
            s.fire(if i == 4242 {
                sys::hipError_t(719)
            } else {
                sys::hipSuccess
            });
        }
    });
    let results = block_on_all(pending);
    firer.join().unwrap();
    assert_eq!(results.len(), 10_000);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r.is_err(), i == 4242, "future {i}: {r:?}");
    }
}

#[test]
fn the_futures_are_send_and_static() {
    fn send_static<T: Send + 'static>() {}
    send_static::<Completion>();
    send_static::<ReadFuture<f32>>();
    send_static::<ReadFuture<[u8; 3]>>();
    send_static::<PinnedCopy<u64>>();
}

#[test]
fn the_waiting_thread_never_waits_for_a_dropped_futures_release() {
    // Issue 54, hole 6: a dropped future's payload may hold the last owner of a buffer, whose free waits
    // for streams (and hipFree for the device). Released on the waiting thread, it held back the
    // stream's next future for that long. `fire` (what the waiting thread calls) must return at once.
    struct Slow(Arc<Mutex<Vec<&'static str>>>);
    impl Settle for Slow {
        fn settle(&self) {}
    }
    impl Drop for Slow {
        fn drop(&mut self) {
            std::thread::sleep(std::time::Duration::from_millis(500));
            self.0.lock().unwrap().push("freed");
        }
    }
    let log = Arc::new(Mutex::new(Vec::new()));
    let (p, signal) = Pending::manual(Slow(log.clone()));
    drop(p);
    let start = std::time::Instant::now();
    signal.fire(sys::hipSuccess);
    let fired_in = start.elapsed();
    assert!(
        fired_in < std::time::Duration::from_millis(250),
        "fire waited {fired_in:?} for the dropped future's release"
    );
    released(&log, 1);
    assert_eq!(log.lock().unwrap().as_slice(), &["freed"]);
}

#[test]
fn a_dropped_future_settles_its_work_before_releasing_it_and_only_on_success() {
    // The release may free memory whose last use is the work the event followed: the memory model must
    // know that work complete first, or the free waits for it again (on a busy device, for long).
    let log = Arc::new(Mutex::new(Vec::new()));
    let (p, signal) = Pending::manual(Settled(log.clone()));
    drop(p);
    signal.fire(sys::hipSuccess);
    released(&log, 2);
    assert_eq!(log.lock().unwrap().as_slice(), &["settled", "dropped"]);

    // A failed wait teaches nothing: the payload is released, the work not called complete.
    let log = Arc::new(Mutex::new(Vec::new()));
    let (p, signal) = Pending::manual(Settled(log.clone()));
    drop(p);
    signal.fire(sys::hipError_t(719));
    released(&log, 1);
    assert_eq!(log.lock().unwrap().as_slice(), &["dropped"]);

    // Dropped after the wait ended: settled and released by the dropping thread, at once.
    let log = Arc::new(Mutex::new(Vec::new()));
    let (p, signal) = Pending::manual(Settled(log.clone()));
    signal.fire(sys::hipSuccess);
    drop(p);
    assert_eq!(log.lock().unwrap().as_slice(), &["settled", "dropped"]);
}
