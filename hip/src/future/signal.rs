//! The state a future shares with the waiting thread that wakes it (`future::waiter`).
//!
//! [`Signal::fire`] stores the status, takes the waker and wakes it, and releases what a dropped future
//! left behind (on the crate's releasing thread if it is ever called inside a HIP host function, which
//! may not call HIP). Everything else (the error's message, the memory model's knowledge, reading the
//! data) happens when the future is polled, on the executor's thread.

use crate::error::Result;
use crate::host_fn::{defer, in_host_fn};
use crate::queue::lock;
use crate::result;
use hip_sys as sys;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// What a dropped future leaves for its waiting thread to release once the work is done.
pub(crate) type Orphan = Box<dyn Send>;

/// One future's completion: set once by its stream's waiting thread.
#[derive(Default)]
pub(crate) struct Signal {
    /// Set (after `status`) when the event was waited for: the fast check of a poll.
    fired: AtomicBool,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The status of the wait (`None`: not done yet).
    status: Option<sys::hipError_t>,
    /// The waker of the last poll, woken (and dropped) by [`Signal::fire`].
    waker: Option<Waker>,
    /// What the future held, if it was dropped before the wait ended.
    orphan: Option<Orphan>,
}

impl Signal {
    /// The wait ended with `status`: record it, release what a dropped future left (on the releasing
    /// thread if called inside a HIP host function: dropping it may call HIP), and wake the future.
    pub(crate) fn fire(&self, status: sys::hipError_t) {
        let (waker, orphan) = {
            let mut inner = lock(&self.inner);
            inner.status = Some(status);
            self.fired.store(true, Ordering::Release);
            (inner.waker.take(), inner.orphan.take())
        };
        if let Some(orphan) = orphan {
            if in_host_fn() {
                defer(Box::new(move || drop(orphan)));
            } else {
                drop(orphan);
            }
        }
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// The status once fired; until then the waker of `cx` is kept (replacing one that would not wake
    /// the same task) and `Pending` is answered.
    fn poll_status(&self, cx: &mut Context<'_>) -> Poll<sys::hipError_t> {
        if self.fired.load(Ordering::Acquire) {
            if let Some(status) = lock(&self.inner).status {
                return Poll::Ready(status);
            }
        }
        let mut inner = lock(&self.inner);
        if let Some(status) = inner.status {
            return Poll::Ready(status);
        }
        match &inner.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => inner.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// The future is dropped: keep `what` until the wait ends. Answers `what` back if it ended already
    /// (the work is done: the caller drops it now).
    fn abandon(&self, what: Orphan) -> Option<Orphan> {
        let mut inner = lock(&self.inner);
        inner.waker = None;
        if inner.status.is_some() {
            return Some(what);
        }
        inner.orphan = Some(what);
        None
    }

    /// Whether the signal fired.
    #[cfg(test)]
    pub(crate) fn fired(&self) -> bool {
        self.fired.load(Ordering::Acquire)
    }
}

/// A future's side of its waited-for event: the signal, and what the future keeps alive until it
/// resolves (handed back by [`Pending::poll`], or to the signal when dropped before).
pub(crate) struct Pending<P: Send + 'static> {
    signal: Arc<Signal>,
    payload: Option<P>,
}

impl<P: Send + 'static> Pending<P> {
    /// A pending future kept alive by `payload` until `signal` fires (or, dropped before, kept by the
    /// signal until then). The caller has arranged for `signal` to fire (`future::waiter::watch`, or a
    /// test by hand).
    pub(crate) fn new(signal: Arc<Signal>, payload: P) -> Pending<P> {
        Pending {
            signal,
            payload: Some(payload),
        }
    }

    /// A pending future whose signal the caller fires by hand (the tests' fake wait).
    #[cfg(test)]
    pub(crate) fn manual(payload: P) -> (Pending<P>, Arc<Signal>) {
        let signal = Arc::new(Signal::default());
        (Pending::new(signal.clone(), payload), signal)
    }

    /// Ready once the wait ended: the stream's status as a `Result` and the payload (`None` if it was
    /// handed over by an earlier `Ready`).
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<(Result<()>, Option<P>)> {
        self.signal.poll_status(cx).map(|status| {
            (
                result::check("hipEventSynchronize (the stream's status)", status),
                self.payload.take(),
            )
        })
    }
}

impl<P: Send + 'static> Drop for Pending<P> {
    fn drop(&mut self) {
        if let Some(payload) = self.payload.take() {
            // Dropped here (outside the lock) when the work is done already; else by the waiting thread.
            drop(self.signal.abandon(Box::new(payload)));
        }
    }
}
