//! What the memory model knows about one stream's queue: positions, markers and completion.
//!
//! Every operation this crate queues on a stream gets a *label* when it begins (1, 2, 3, ... per stream,
//! in queue order: operations on one stream are serialized by its gate), and the stream publishes the
//! label of the last operation whose HIP calls are all queued (`queued`). A buffer's use is stamped with
//! its operation's label, so "the work up to this use" has a name. Three things turn a name into waiting
//! only for what is needed:
//!
//! - **Markers.** While two or more streams exist, each operation that touched tracked memory records a
//!   marker event right after its last HIP call (one event record per operation, from a small ring). A
//!   consumer on another stream waits on the first marker at or after the producer's label: it waits for
//!   the producing operation, not for work queued on the producer's stream later. Without a marker (one
//!   stream, or a ring that moved on) it records one now, covering everything queued so far: never
//!   shorter than needed.
//! - **Host knowledge** (`done`). A host synchronization (`Stream::synchronize`, `Device::synchronize`,
//!   an event waited for or found complete, a host wait of this crate, a synchronous copy to the host)
//!   tells which labels have completed; completed work is never waited for again, on the GPU or the host.
//! - **Stream knowledge** (`knows`). When stream B is made to wait for stream A up to label p (by this
//!   crate, or by the user's `Stream::wait_event`), B remembers it: B's later work needs no wait for A's
//!   work up to p. Completion travels along these waits: when B is known done past its wait, A is known
//!   done up to p.
//!
//! What this still over-waits: a consumer with no marker at or after its producer's label (one stream
//! alive, or a ring that moved on) waits for everything queued on the producer's stream so far.

use crate::device::Device;
use crate::error::Result;
use crate::release::RawHandle;
use crate::result;
use hip_sys as sys;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

mod gate;
use gate::Parking;

/// How an operation uses memory: a kernel's [`arg`](crate::LaunchArgs::arg) reads,
/// [`arg_mut`](crate::LaunchArgs::arg_mut) writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// The operation only reads the memory.
    Read,
    /// The operation may write the memory (and read it).
    Write,
}

/// The position of a use whose work is queued after its record (raw work after `track_use`, collectives
/// inside an RCCL group): whoever waits for it waits for everything queued on its stream at that moment.
pub(crate) const OPEN: u64 = u64::MAX;

/// Markers kept per stream: a consumer further behind than this falls back to the oldest one kept.
const MARKERS: usize = 16;

/// Lock a mutex, taking the data even if a thread panicked while holding it (the data here stays valid).
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A raw event handle owned by a stream's queue state (null: not created yet).
pub(crate) struct RawEvent(pub(crate) sys::hipEvent_t);

// SAFETY: the event handle is only passed to HIP event calls, which the runtime allows from any thread;
// it lives behind the `Markers` mutex, so only one thread at a time records it or creates it.
unsafe impl Send for RawEvent {}

/// The marker ring: events recorded after operations, each with the label it covers.
#[derive(Default)]
pub(crate) struct Markers {
    ring: Vec<(u64, RawEvent)>,
    next: usize,
    /// While a capture records the stream: the marker recorded when it began (no marker may be recorded
    /// during a capture: it would become a graph node), covering everything queued live before it.
    pub(crate) at_capture: Option<(sys::hipEvent_t, u64)>,
}

/// "Stream `id` is ordered after the other stream's work up to `pos`, from this stream's label `at` on."
struct Known {
    other: Weak<Queue>,
    id: u64,
    pos: u64,
    at: u64,
}

/// How many streams (other than null streams) exist: markers are recorded only with two or more, since
/// with one stream nothing but the host and the null stream's synchronous copies waits for it.
static LIVE_STREAMS: AtomicUsize = AtomicUsize::new(0);

/// Every queue of the process, for `Device::synchronize` (which completes all of a device's work).
static REGISTRY: Mutex<Vec<Weak<Queue>>> = Mutex::new(Vec::new());

/// What the host knows complete on one stream: its own `Arc`, held by the [`Queue`] and by each event
/// last recorded there, so that an event found complete teaches it without upgrading the queue's `Weak`
/// (two read-modify-writes on the queue's count, on every completed query). A stream that is gone
/// leaves only this behind, which nothing reads.
#[derive(Debug, Default)]
pub(crate) struct Completion {
    /// Every operation labelled up to this has completed.
    done: AtomicU64,
    /// Whether the queue's `knows` ever held anything (set under its lock): a completion with nothing
    /// to pass on skips the lock. Knowledge missed this way would only make later work wait longer.
    knows_any: AtomicBool,
}

impl Completion {
    /// The work up to `pos` is complete: `true` if that is new and the queue waited for other streams,
    /// whose completion then follows ([`Queue::complete_implied`]).
    #[inline]
    pub(crate) fn learn(&self, pos: u64) -> bool {
        // Known already (a load, not a read-modify-write), or learnt now.
        !(pos == OPEN
            || self.done.load(Ordering::Acquire) >= pos
            || self.done.fetch_max(pos, Ordering::AcqRel) >= pos
            || !self.knows_any.load(Ordering::Acquire))
    }
}

/// One stream's queue state. Held (`Arc`) by its `StreamHandle`, and weakly by the knowledge of other
/// queues and the registry.
pub(crate) struct Queue {
    pub(crate) raw: sys::hipStream_t,
    pub(crate) device: Device,
    pub(crate) id: u64,
    null: bool,
    /// The last label handed out (by the gate's holder). Equal to the queued label while the gate is
    /// open.
    seq: AtomicU64,
    /// The stream's operation gate and the label of the last operation whose HIP calls are all queued,
    /// in one word: `queued << 1 | HELD`. An operation takes the gate with a compare-and-swap and, when it
    /// ends, opens it and publishes its label as queued with one store (see [`StreamOp`]).
    ///
    /// [`StreamOp`]: crate::stream::StreamOp
    state: AtomicU64,
    /// The token of the thread holding the gate (0 when open), written only by that thread: how a
    /// thread finds it holds the gate already (an operation inside another on the same stream).
    owner: AtomicU64,
    /// What the host knows complete, shared with the events recorded here (see [`Completion`]).
    pub(crate) completion: Arc<Completion>,
    pub(crate) markers: Mutex<Markers>,
    knows: Mutex<Vec<Known>>,
    /// Threads waiting for the gate to open, or for an operation of this stream to be queued
    /// ([`Queue::wait_queued`]): both follow a change of `state`.
    parking: Parking,
}

// SAFETY: `raw` is a stream handle, passed only to HIP calls, which accept a stream from any thread (HIP
// synchronises its stream objects internally); the rest is `Device`, atomics and mutexes.
unsafe impl Send for Queue {}
// SAFETY: as for Send: shared access reads `raw`, `device` and `id`, or goes through atomics and mutexes.
unsafe impl Sync for Queue {}

impl Queue {
    pub(crate) fn new(raw: sys::hipStream_t, device: &Device, id: u64) -> Arc<Queue> {
        let null = raw.is_null();
        if !null {
            LIVE_STREAMS.fetch_add(1, Ordering::Relaxed);
        }
        let q = Arc::new(Queue {
            raw,
            device: device.clone(),
            id,
            null,
            seq: AtomicU64::new(0),
            state: AtomicU64::new(0),
            owner: AtomicU64::new(0),
            completion: Arc::default(),
            markers: Mutex::new(Markers::default()),
            knows: Mutex::new(Vec::new()),
            parking: Parking::default(),
        });
        let mut all = lock(&REGISTRY);
        if all.len() >= 64 && all.len().is_power_of_two() {
            all.retain(|w| w.strong_count() > 0);
        }
        all.push(Arc::downgrade(&q));
        q
    }

    /// Whether the work up to `pos` is known complete.
    #[inline]
    pub(crate) fn is_done(&self, pos: u64) -> bool {
        pos != OPEN && self.completion.done.load(Ordering::Acquire) >= pos
    }

    /// Whether markers are recorded after operations: with two or more streams alive.
    pub(crate) fn markers_wanted() -> bool {
        LIVE_STREAMS.load(Ordering::Relaxed) >= 2
    }

    /// Record a marker covering the work up to `label` (just queued). Errors are dropped: without the
    /// marker a consumer records its own later, which only waits longer.
    pub(crate) fn record_marker(&self, label: u64, capturing: bool) {
        if capturing || self.null {
            return;
        }
        let mut m = lock(&self.markers);
        let _ = self.record_slot(&mut m, label);
    }

    /// Record the next ring slot now, as covering `label`.
    fn record_slot(&self, m: &mut Markers, label: u64) -> Result<sys::hipEvent_t> {
        self.device.bind()?;
        if m.ring.len() < MARKERS {
            let e = result::event_create(sys::hipEventDisableTiming)?;
            m.ring.push((0, RawEvent(e)));
            m.next = m.ring.len() - 1;
        }
        let i = m.next % m.ring.len();
        let event = m.ring[i].1 .0;
        // SAFETY: `event` is a live event created on this stream's device (destroyed only in Drop); `raw`
        // is this live stream, or null (a null stream): every caller reaches this queue through its
        // `StreamHandle` (an Arc the caller holds: the stream it operates on, or a user recorded in an
        // allocation), never through a `Weak` upgraded from the registry or another queue's knowledge,
        // so the handle that destroys `raw` is alive (or `from_raw`'s contract keeps it live). `bind`
        // made its device current. No record lands inside a capture made by this crate: operations skip
        // markers while capturing, and `event_covering` returns the marker taken when the capture began.
        unsafe { result::event_record(event, self.raw)? };
        m.ring[i].0 = label;
        m.next = (i + 1) % MARKERS;
        Ok(event)
    }

    /// An event that completes once the work up to `pos` has, and the label it covers: the first marker
    /// at or after `pos`, else one recorded now (covering everything queued so far). While the stream is
    /// captured: the marker recorded when the capture began.
    pub(crate) fn event_covering(&self, pos: u64) -> Result<(sys::hipEvent_t, u64)> {
        let mut m = lock(&self.markers);
        if let Some(at) = m.at_capture {
            return Ok(at);
        }
        if pos != OPEN {
            let best = m
                .ring
                .iter()
                .filter(|(l, e)| *l >= pos && !e.0.is_null())
                .min_by_key(|(l, _)| *l);
            if let Some((l, e)) = best {
                return Ok((e.0, *l));
            }
        }
        let q = self.queued();
        let e = self.record_slot(&mut m, q)?;
        Ok((e, q))
    }

    /// This stream, from its label `at` on, runs after `other`'s work up to `pos`.
    pub(crate) fn learn(&self, other: &Arc<Queue>, pos: u64, at: u64) {
        let mut knows = lock(&self.knows);
        Self::learn_in(&mut knows, other, pos, at);
        self.completion.knows_any.store(true, Ordering::Release);
    }

    fn learn_in(k: &mut Vec<Known>, other: &Arc<Queue>, pos: u64, at: u64) {
        match k.iter_mut().find(|k| k.id == other.id) {
            Some(e) if e.pos >= pos => {}
            Some(e) => {
                e.pos = pos;
                e.at = e.at.max(at);
            }
            None => {
                if k.len() >= 32 {
                    k.retain(|e| e.other.strong_count() > 0);
                }
                k.push(Known {
                    other: Arc::downgrade(other),
                    id: other.id,
                    pos,
                    at,
                });
            }
        }
    }

    /// The host knows the work up to `pos` is complete; so is whatever this stream waited for before it.
    #[inline]
    pub(crate) fn complete_through(&self, pos: u64) {
        if self.completion.learn(pos) {
            self.complete_implied(pos);
        }
    }

    /// [`complete_through`](Self::complete_through) for the streams this one waited for by `pos`, once
    /// [`Completion::learn`] said there are some: out of line, so that the look every completion makes
    /// stays short.
    #[inline(never)]
    pub(crate) fn complete_implied(&self, pos: u64) {
        let implied: Vec<(Arc<Queue>, u64)> = lock(&self.knows)
            .iter()
            .filter(|k| k.at <= pos)
            .filter_map(|k| k.other.upgrade().map(|o| (o, k.pos)))
            .collect();
        for (other, p) in implied {
            other.complete_through(p);
        }
    }

    /// Make this stream wait (on the GPU) for `other`'s work up to `pos`, unless that is complete or
    /// already waited for; this stream's operation `at` is the first after the wait.
    pub(crate) fn wait_for(&self, other: &Arc<Queue>, pos: u64, at: u64) -> Result<()> {
        if other.id == self.id || other.is_done(pos) {
            return Ok(());
        }
        // Held through the wait: only this stream's operations (serialized by its gate) add to it.
        let mut knows = lock(&self.knows);
        let known = knows.iter().find(|k| k.id == other.id).map_or(0, |k| k.pos);
        if pos != OPEN && known >= pos {
            return Ok(());
        }
        let (event, covered) = other.event_covering(pos)?;
        self.device.bind()?;
        // SAFETY: `self.raw` is live (reached through its handle, as in `record_slot`) and `bind` made its
        // device current; `event` is a live event owned by `other`, whose Arc the caller holds, so it is
        // not destroyed during the call (HIP accepts an event of another device, as for a peer copy). A
        // ring slot re-recorded by another thread after `event_covering` returned only covers more work.
        unsafe { result::stream_wait_event(self.raw, event)? };
        Self::learn_in(&mut knows, other, covered, at);
        self.completion.knows_any.store(true, Ordering::Release);
        Ok(())
    }

    /// Block the host until this stream's work up to `pos` is complete.
    pub(crate) fn host_wait_for(&self, pos: u64) -> Result<()> {
        if self.is_done(pos) {
            return Ok(());
        }
        self.wait_queued(pos);
        let (event, covered) = self.event_covering(pos)?;
        // SAFETY: `event` is a live event owned by this queue (destroyed only in Drop, which cannot run
        // while `&self` is borrowed). A slot re-recorded by another thread meanwhile only waits longer.
        unsafe { result::event_synchronize(event)? };
        self.complete_through(covered);
        Ok(())
    }

    /// The device's queues with their queued labels now: after a device-wide synchronization,
    /// [`complete`](DeviceSnapshot::complete) marks all of that work complete.
    pub(crate) fn snapshot(ordinal: Option<usize>) -> DeviceSnapshot {
        let all = lock(&REGISTRY)
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|q| ordinal.is_none_or(|o| q.device.ordinal() == o))
            .map(|q| {
                let l = q.queued();
                (q, l)
            })
            .collect();
        DeviceSnapshot(all)
    }
}

/// The queues of a device (or of all devices) and their queued labels at one moment.
pub(crate) struct DeviceSnapshot(Vec<(Arc<Queue>, u64)>);

impl DeviceSnapshot {
    /// The device(s) were synchronized after the snapshot: all that work is complete.
    pub(crate) fn complete(self) {
        for (q, l) in self.0 {
            q.complete_through(l);
        }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        if !self.null {
            LIVE_STREAMS.fetch_sub(1, Ordering::Relaxed);
        }
        let m = self.markers.get_mut().unwrap_or_else(|e| e.into_inner());
        let events: Vec<RawHandle<_>> = m.ring.drain(..).map(|(_, e)| RawHandle(e.0)).collect();
        if events.is_empty() {
            return;
        }
        let device = self.device.clone();
        // Inside a host function (no HIP call allowed there) on the releasing thread.
        crate::release::now_or_later(move || {
            let _ = device.bind();
            for e in events {
                // SAFETY: created by `record_slot` and reachable by no one else now (every user of the
                // queue held an Arc of it). Waits queued on it may still be pending: HIP (like CUDA)
                // allows destroying such an event and releases it once they complete.
                let _ = unsafe { result::event_destroy(e.get()) };
            }
        });
    }
}

/// Device-wide synchronization lives here, beside the knowledge it gives the memory model: `device.rs`
/// stays below the queues.
impl Device {
    /// Wait for all work on this device (`hipDeviceSynchronize`). The memory model learns that everything
    /// queued on the device's streams before the call is complete, and never waits for it again.
    pub fn synchronize(&self) -> Result<()> {
        let snapshot = Queue::snapshot(Some(self.ordinal()));
        self.bind()?;
        result::device_synchronize()?;
        snapshot.complete();
        Ok(())
    }

    /// Wait for all work on every device (`hipDeviceSynchronize` on each), then make the calling thread's
    /// current device what it was. For memory any device may be using (managed memory). Like
    /// [`Device::synchronize`], it teaches the memory model that all of it is complete.
    pub fn synchronize_all() -> Result<()> {
        let snapshot = Queue::snapshot(None);
        let current = result::get_device()?;
        let count = result::device_count()?;
        let mut outcome = Ok(());
        for ordinal in 0..count {
            outcome = result::set_device(ordinal).and_then(|()| result::device_synchronize());
            if outcome.is_err() {
                break;
            }
        }
        let restored = result::set_device(current);
        if outcome.is_ok() {
            snapshot.complete();
        }
        outcome.and(restored)
    }
}

#[cfg(test)]
mod tests {
    use super::Parking;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// CPU time of the calling thread (POSIX; the Windows build's unit tests, run under Wine, have no
    /// such clock and leave the CPU-time test out).
    #[cfg(unix)]
    fn thread_cpu() -> Duration {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid out-pointer for clock_gettime.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        assert_eq!(rc, 0);
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }

    #[test]
    #[cfg(unix)]
    fn a_waiter_sleeps_while_the_holder_holds_and_wakes_when_it_lets_go() {
        // Issue 54, hole 8: the stream gate was a yield loop, so threads waiting behind a blocking copy
        // spun at full CPU for the whole copy.
        let parking = Arc::new(Parking::default());
        let open = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (p, o) = (parking.clone(), open.clone());
        let waiter = std::thread::spawn(move || {
            let (cpu, wall) = (thread_cpu(), Instant::now());
            p.wait_until(|| o.load(Ordering::SeqCst));
            (thread_cpu() - cpu, wall.elapsed())
        });
        std::thread::sleep(Duration::from_millis(300));
        let let_go = Instant::now();
        open.store(true, Ordering::SeqCst);
        parking.wake_all();
        let (cpu, wall) = waiter.join().unwrap();
        let woke_after = let_go.elapsed();
        assert!(
            wall >= Duration::from_millis(290),
            "returned before the holder let go: {wall:?}"
        );
        assert!(
            cpu < Duration::from_millis(60),
            "the waiter burnt {cpu:?} of CPU in {wall:?} of waiting"
        );
        assert!(
            woke_after < Duration::from_millis(200),
            "woke {woke_after:?} late"
        );
    }

    #[test]
    fn a_lock_built_on_it_excludes_and_loses_no_wake() {
        // The gate's pattern: a word taken by compare-and-swap, released by a SeqCst store + wake_all.
        let parking = Arc::new(Parking::default());
        let word = Arc::new(AtomicU64::new(0));
        let inside = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (1..=4u64)
            .map(|me| {
                let (parking, word, inside) = (parking.clone(), word.clone(), inside.clone());
                std::thread::spawn(move || {
                    for i in 0..2000 {
                        parking.wait_until(|| {
                            word.compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
                                .is_ok()
                        });
                        let n = inside.load(Ordering::Relaxed);
                        if i % 100 == 0 {
                            std::thread::sleep(Duration::from_micros(200));
                        }
                        inside.store(n + 1, Ordering::Relaxed);
                        word.store(0, Ordering::SeqCst);
                        parking.wake_all();
                    }
                })
            })
            .collect();
        let start = Instant::now();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(inside.load(Ordering::Relaxed), 8000, "two holders at once");
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{:?}",
            start.elapsed()
        );
    }
}
