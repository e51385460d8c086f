//! A stream's operation gate and its queued label, in one word of the [`Queue`], and where threads wait
//! for either ([`Parking`]).
//!
//! The gate is held by each operation from its capture check to its last HIP call, and while a capture
//! begins or ends on the stream (`stream.rs`). An operation takes it with a compare-and-swap and opens
//! it with one SeqCst store that also publishes its label as queued: what the memory model's
//! `in_flight`/`wait_queued` read. While the gate is open the last label handed out (`seq`) is the
//! queued label.

use super::{lock, Queue, OPEN};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The bit of `Queue::state` set while a thread holds the stream's gate.
const HELD: u64 = 1;

/// Where threads wait for another thread's short-lived state to change (a stream's gate to open, an
/// operation to be queued): they spin a little, then sleep until woken. The holder may hold on for long
/// (a blocking synchronous copy, a staged copy of gigabytes), and waiters must not burn a core each
/// meanwhile. Waking costs the holder one load when nobody sleeps.
#[derive(Default)]
pub(crate) struct Parking {
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: std::sync::Condvar,
}

/// Yields before a waiter sleeps: a few HIP calls' time, the usual hold.
const SPINS: u32 = 64;

impl Parking {
    /// Return once `ready()` answers `true`: spinning (yielding) [`SPINS`] times, then sleeping until
    /// [`wake_all`](Self::wake_all) (or a millisecond, whichever is first: a missed wake costs at most
    /// that). `ready` must become `true` only through a change followed by `wake_all`.
    pub(crate) fn wait_until(&self, mut ready: impl FnMut() -> bool) {
        for _ in 0..SPINS {
            if ready() {
                return;
            }
            std::thread::yield_now();
        }
        loop {
            let guard = lock(&self.lock);
            // Counted before the last look (both SeqCst, as in `wake_all`): a holder that changes the
            // state after this look sees the sleeper and wakes it, under the lock held until the wait.
            self.sleepers.fetch_add(1, Ordering::SeqCst);
            if ready() {
                self.sleepers.fetch_sub(1, Ordering::SeqCst);
                return;
            }
            let _ = self
                .wake
                .wait_timeout(guard, std::time::Duration::from_millis(1));
            self.sleepers.fetch_sub(1, Ordering::SeqCst);
            if ready() {
                return;
            }
        }
    }

    /// The state changed (call right after the change, made with a SeqCst store: a sleeper counted after
    /// it sees the change, and one counted before it is seen here): wake every sleeper. One load when
    /// none sleeps (an x86 SeqCst store is one `xchg`, no fence).
    #[inline]
    pub(crate) fn wake_all(&self) {
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            self.wake_sleepers();
        }
    }

    /// [`wake_all`](Self::wake_all) when a thread sleeps: out of line, so that the look every operation
    /// makes stays a load and a branch.
    #[cold]
    #[inline(never)]
    fn wake_sleepers(&self) {
        let _guard = lock(&self.lock);
        self.wake.notify_all();
    }
}

impl Queue {
    /// The next label (call with the stream's gate held: labels follow queue order).
    pub(crate) fn next_label(&self) -> u64 {
        let l = self.seq.load(Ordering::Relaxed) + 1;
        self.seq.store(l, Ordering::Relaxed);
        l
    }

    /// The last label handed out: the label of the operation holding the gate, if any.
    pub(crate) fn last_label(&self) -> u64 {
        self.seq.load(Ordering::Relaxed)
    }

    /// Take the gate for thread `me` (a token unique among live threads, never 0): `true` once taken,
    /// `false` if `me` holds it already. Waits (spinning, then sleeping) while another thread holds it.
    #[inline]
    pub(crate) fn close_gate(&self, me: u64) -> bool {
        if !self.try_close_gate(me) {
            return self.close_gate_contended(me);
        }
        true
    }

    /// [`close_gate`](Self::close_gate) when the first look found it held: by `me` (an operation inside
    /// another on this thread), or by another thread, whose release this waits for.
    #[cold]
    #[inline(never)]
    fn close_gate_contended(&self, me: u64) -> bool {
        // Only this thread writes its own token, and clears it before it opens the gate.
        if self.owner.load(Ordering::Relaxed) == me {
            return false;
        }
        // SeqCst looks and swap: with the sleeper count's SeqCst increment and `open_gate`'s SeqCst store
        // and load, either a look sees the gate open or the opener sees the sleeper (no lost wake).
        self.parking.wait_until(|| {
            let s = self.state.load(Ordering::SeqCst);
            s & HELD == 0
                && self
                    .state
                    .compare_exchange(s, s | HELD, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
        });
        self.owner.store(me, Ordering::Relaxed);
        true
    }

    /// Take the gate for thread `me` if it is open now: `false` when any thread, `me` included, holds
    /// it.
    #[inline]
    pub(crate) fn try_close_gate(&self, me: u64) -> bool {
        let s = self.state.load(Ordering::Relaxed);
        if s & HELD != 0
            || self
                .state
                .compare_exchange(s, s | HELD, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
        {
            return false;
        }
        self.owner.store(me, Ordering::Relaxed);
        true
    }

    /// Open the gate (by its holder), publishing the last label handed out as queued, and wake the
    /// threads waiting for either.
    #[inline]
    pub(crate) fn open_gate(&self) {
        self.owner.store(0, Ordering::Relaxed);
        self.state
            .store(self.seq.load(Ordering::Relaxed) << 1, Ordering::SeqCst);
        self.parking.wake_all();
    }

    /// The operation labelled `label` has queued its last HIP call, and the gate stays closed (by the
    /// holder: an operation whose work completed before it ends).
    pub(crate) fn mark_queued(&self, label: u64) {
        self.state.store(label << 1 | HELD, Ordering::SeqCst);
        self.parking.wake_all();
    }

    /// The label of the last operation fully queued.
    pub(crate) fn queued(&self) -> u64 {
        self.state.load(Ordering::Acquire) >> 1
    }

    /// Whether a use at `pos` is still being queued by another thread (its operation began, its HIP calls
    /// are not all queued yet): no event can cover it yet.
    pub(crate) fn in_flight(&self, pos: u64) -> bool {
        pos != OPEN && self.queued() < pos
    }

    /// Block until the operation labelled `pos` is queued (spinning briefly, then sleeping: the
    /// operation may be a long synchronous copy). Only reachable when another thread is between an
    /// operation's record and its HIP call; such an operation never waits for this thread.
    pub(crate) fn wait_queued(&self, pos: u64) {
        // A SeqCst look, paired with the SeqCst stores of `open_gate` and `mark_queued` (see
        // `Parking::wake_all`).
        self.parking
            .wait_until(|| pos == OPEN || self.state.load(Ordering::SeqCst) >> 1 >= pos);
    }
}
