//! The state a future shares with the waiting thread that wakes it (`future::waiter`).
//!
//! [`Signal::fire`] stores the status, takes the waker and wakes it, and hands what a dropped future left
//! behind to the crate's releasing thread, which first tells the memory model the work is complete and
//! then drops it (the drop may free memory, which can wait for other streams or the device: never on the
//! waiting thread, whose later futures would wait behind it). Everything else (the error's message, the
//! memory model's knowledge, reading the data) happens when the future is polled, on the executor's
//! thread.

use crate::error::Result;
use crate::queue::lock;
use crate::release::defer;
use crate::result;
use hip_sys as sys;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// What a dropped future leaves to be released once the work is done, given the wait's status.
pub(crate) type Orphan = Box<dyn FnOnce(sys::hipError_t) + Send>;

/// What a future keeps until it resolves: it can tell the memory model that the work its event follows is
/// complete (when a dropped future's event completes, before what it kept is released).
pub(crate) trait Settle: Send + 'static {
    /// The event completed with `hipSuccess`: the work it follows is complete.
    fn settle(&self);
}

/// One future's completion: set once by its stream's waiting thread or the reactor's scanner.
#[derive(Default)]
pub(crate) struct Signal {
    /// Set (after `status`) when the event was waited for: the fast check of a poll.
    fired: AtomicBool,
    inner: Mutex<Inner>,
    /// For a future the reactor watches: where its completion shows, which the future's own polls read
    /// near the expected completion.
    watch: OnceLock<Watch>,
}

/// Where a reactor future's completion shows (future::reactor): the pinned slot its stream writes the
/// ticket into once the work before it is done, and the window around the expected completion in which
/// the future's polls read the slot themselves and ask to be polled again at once, so the executor's
/// thread stays awake (running its other tasks between polls) instead of sleeping until the scanner's
/// wake, whose thread switch costs more than the wait near the end.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Watch {
    /// The slot's host address: 8 aligned bytes of a pinned slab that is never freed.
    pub(crate) slot: usize,
    pub(crate) ticket: u64,
    /// From when to when the polls keep the executor awake.
    pub(crate) from: Instant,
    pub(crate) until: Instant,
}

impl Watch {
    /// The stream wrote the ticket (or a later one): the work before it completed without error (a
    /// stream in an error state runs no further write).
    fn reached(&self) -> bool {
        // SAFETY: `slot` is an 8-byte aligned slot of a slab that is never freed, which the host only
        // reads atomically and a device write replaces whole (as the scanner reads it).
        unsafe { AtomicU64::from_ptr(self.slot as *mut u64) }.load(Ordering::Acquire) >= self.ticket
    }
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
    /// The wait ended with `status`: record it, hand what a dropped future left to the releasing thread
    /// (which settles the work and drops it: never here, so the caller, a stream's waiting thread, goes
    /// on to its next future at once), and wake the future.
    pub(crate) fn fire(&self, status: sys::hipError_t) {
        let (waker, orphan) = {
            let mut inner = lock(&self.inner);
            inner.status = Some(status);
            self.fired.store(true, Ordering::Release);
            (inner.waker.take(), inner.orphan.take())
        };
        if let Some(orphan) = orphan {
            defer(Box::new(move || orphan(status)));
        }
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Watch `w` from now on (once; a second call changes nothing).
    pub(crate) fn set_watch(&self, w: Watch) {
        let _ = self.watch.set(w);
    }

    /// Wake the last poll's waker now, without firing: the expected completion is near, and the next
    /// poll keeps the executor awake ([`Watch`]).
    pub(crate) fn wake_early(&self) {
        let waker = lock(&self.inner).waker.take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// The status once fired; until then the waker of `cx` is kept (replacing one that would not wake
    /// the same task) and `Pending` is answered. A watched signal answers `hipSuccess` as soon as its
    /// slot shows the ticket, and within its window asks to be polled again at once instead of keeping
    /// the waker.
    fn poll_status(&self, cx: &mut Context<'_>) -> Poll<sys::hipError_t> {
        if self.fired.load(Ordering::Acquire) {
            if let Some(status) = lock(&self.inner).status {
                return Poll::Ready(status);
            }
        }
        if let Some(w) = self.watch.get() {
            if w.reached() {
                return Poll::Ready(sys::hipSuccess);
            }
            let now = Instant::now();
            if now >= w.from && now < w.until {
                cx.waker().wake_by_ref();
                return Poll::Pending;
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

    /// The future is dropped: keep `what` until the wait ends. Answers `what` back with the status if it
    /// ended already (the work is done: the caller releases it now).
    fn abandon(&self, what: Orphan) -> Option<(Orphan, sys::hipError_t)> {
        let mut inner = lock(&self.inner);
        inner.waker = None;
        if let Some(status) = inner.status {
            return Some((what, status));
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
pub(crate) struct Pending<P: Settle> {
    signal: Arc<Signal>,
    payload: Option<P>,
}

impl<P: Settle> Pending<P> {
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

impl<P: Settle> Drop for Pending<P> {
    fn drop(&mut self) {
        if let Some(payload) = self.payload.take() {
            let orphan: Orphan = Box::new(move |status| {
                if status == sys::hipSuccess {
                    payload.settle();
                }
                drop(payload);
            });
            // Released here (outside the lock) when the work is done already; else by the releasing
            // thread once it is.
            if let Some((orphan, status)) = self.signal.abandon(orphan) {
                orphan(status);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;
    use std::time::Duration;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A watched signal: outside its window a poll keeps the waker (the scanner wakes it early, once);
    /// inside it the poll asks to be polled again at once; once the slot shows the ticket the poll is
    /// ready with success before the scanner fires anything.
    #[test]
    fn a_watched_signal_reads_its_slot_in_its_window() {
        let slot = Box::new(AtomicU64::new(4));
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let now = Instant::now();
        let later = Signal::default();
        later.set_watch(Watch {
            slot: slot.as_ptr() as usize,
            ticket: 5,
            from: now + Duration::from_secs(60),
            until: now + Duration::from_secs(61),
        });
        assert!(later.poll_status(&mut cx).is_pending());
        assert_eq!(count.0.load(Ordering::SeqCst), 0, "not woken: waiting");
        later.wake_early();
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "woken early");
        later.wake_early();
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "the waker was taken");

        let near = Signal::default();
        near.set_watch(Watch {
            slot: slot.as_ptr() as usize,
            ticket: 5,
            from: now,
            until: now + Duration::from_secs(60),
        });
        assert!(near.poll_status(&mut cx).is_pending());
        assert_eq!(count.0.load(Ordering::SeqCst), 2, "polled again at once");
        slot.store(5, Ordering::Release);
        assert_eq!(near.poll_status(&mut cx), Poll::Ready(sys::hipSuccess));
        assert!(!near.fired(), "ready from the slot, before any fire");
        assert_eq!(later.poll_status(&mut cx), Poll::Ready(sys::hipSuccess));
    }
}
