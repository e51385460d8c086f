//! The state a future shares with the host function that wakes it.
//!
//! The host function runs on HIP's callback thread and may not call HIP: [`Signal::fire`] only stores
//! the status, takes the waker and wakes it, and hands what a dropped future left behind to the crate's
//! releasing thread. Everything else (the error's message, the memory model's knowledge, reading the
//! data) happens when the future is polled, on the executor's thread.

use crate::error::{Error, Result};
use crate::host_fn::{defer, in_host_fn, into_raw_with_status, queue_raw};
use crate::queue::lock;
use crate::result;
use hip_sys as sys;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// What a dropped future leaves for its host function to release once the work is done.
pub(crate) type Orphan = Box<dyn Send>;

/// One future's completion: set once by its host function.
#[derive(Default)]
pub(crate) struct Signal {
    /// Set (after `status`) when the host function ran: the fast check of a poll.
    fired: AtomicBool,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The status HIP passed the host function (`None`: not run yet).
    status: Option<sys::hipError_t>,
    /// The waker of the last poll, woken (and dropped) by [`Signal::fire`].
    waker: Option<Waker>,
    /// What the future held, if it was dropped before the host function ran.
    orphan: Option<Orphan>,
}

impl Signal {
    /// The host function ran with `status`: record it, release what a dropped future left (on the
    /// releasing thread when called inside a host function: dropping it may call HIP), and wake the
    /// future. Calls no HIP function.
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

    /// The future is dropped: keep `what` until the host function runs. Answers `what` back if it ran
    /// already (the work is done: the caller drops it now).
    fn abandon(&self, what: Orphan) -> Option<Orphan> {
        let mut inner = lock(&self.inner);
        inner.waker = None;
        if inner.status.is_some() {
            return Some(what);
        }
        inner.orphan = Some(what);
        None
    }

    /// Whether the host function has run.
    #[cfg(test)]
    pub(crate) fn fired(&self) -> bool {
        self.fired.load(Ordering::Acquire)
    }
}

/// A future's side of a queued host function: the signal, and what the future keeps alive until it
/// resolves (handed back by [`Pending::poll`], or to the signal when dropped before).
pub(crate) struct Pending<P: Send + 'static> {
    signal: Arc<Signal>,
    payload: Option<P>,
}

impl<P: Send + 'static> Pending<P> {
    /// Queue the host function that fires the signal on `stream`, keeping `payload` until it ran. On
    /// failure the payload comes back with the error, for the caller to drop once its stream operation
    /// has ended (dropping memory inside it could wait for the operation itself).
    ///
    /// # Safety
    /// `stream` is a live stream of the current device, or null (its null stream), and stays live until
    /// the host function ran (`payload` may hold it).
    pub(crate) unsafe fn queue(
        stream: sys::hipStream_t,
        payload: P,
    ) -> std::result::Result<Pending<P>, (Error, P)> {
        let signal = Arc::new(Signal::default());
        let fire = signal.clone();
        // SAFETY: the caller's contract; the closure calls no HIP function (`Signal::fire`).
        match unsafe { queue_raw(stream, into_raw_with_status(move |s| fire.fire(s))) } {
            Ok(_) => Ok(Pending {
                signal,
                payload: Some(payload),
            }),
            Err(e) => Err((e, payload)),
        }
    }

    /// A pending future whose signal the caller fires by hand (the tests' fake host function).
    #[cfg(test)]
    pub(crate) fn manual(payload: P) -> (Pending<P>, Arc<Signal>) {
        let signal = Arc::new(Signal::default());
        (
            Pending {
                signal: signal.clone(),
                payload: Some(payload),
            },
            signal,
        )
    }

    /// Ready once the host function ran: the stream's status as a `Result` and the payload (`None` if it
    /// was handed over by an earlier `Ready`).
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<(Result<()>, Option<P>)> {
        self.signal.poll_status(cx).map(|status| {
            (
                result::check("hipStreamAddCallback (the stream's status)", status),
                self.payload.take(),
            )
        })
    }
}

impl<P: Send + 'static> Drop for Pending<P> {
    fn drop(&mut self) {
        if let Some(payload) = self.payload.take() {
            // Dropped here (outside the lock) when the work is done already; else by the host function.
            drop(self.signal.abandon(Box::new(payload)));
        }
    }
}
