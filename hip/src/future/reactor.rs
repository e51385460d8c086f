//! The completion reactor ([`Wake::Reactor`](super::Wake::Reactor)): futures woken by one scanner thread
//! for the process, reading tickets that streams write into pinned memory.
//!
//! Each stream with futures has a *timeline*: an 8-byte slot in a pinned, device-mapped slab
//! (`hipHostMalloc`, mapped; coherent on AMD) and the last ticket handed out. A future's creation takes
//! the next ticket and queues `hipStreamWriteValue64(slot, ticket)` on the stream right after the work it
//! waits for (under the stream's operation gate, so a stream's tickets are written in the order they are
//! handed out, and the slot's value only grows). The scanner reads the slot of every timeline with
//! pending futures and fires, in one scan, every future whose ticket the slot has reached (many
//! completions per wake). Nothing but the write is queued on the stream, and no event is used.
//!
//! How the scanner waits (tunable by environment, read once, for measurements): it keeps, per timeline,
//! the shortest time from a future's creation to its completion seen recently (a lower bound: the scan
//! before the one that saw it), and expects each pending future no earlier than that. Until
//! `HIP_RS_REACTOR_MARGIN_US` (30) before the earliest expected completion it sleeps (its timer slack set
//! to 1 us on Linux); from then it spins for `HIP_RS_REACTOR_SPIN_US` (50) past it; then it backs off,
//! sleeping 5 us, 10 us, ... up to `HIP_RS_REACTOR_MAX_SLEEP_US` (50) between scans. A new future or a
//! completion restarts the back-off. With nothing pending it sleeps on a condition variable: no CPU.
//!
//! The executor's side ([`Watch`](super::signal::Watch)), on by default (`HIP_RS_REACTOR_LEAD_US`, 50;
//! `off` turns it off): from that many microseconds before a future's expected completion (at once for work expected sooner) to `HIP_RS_REACTOR_SPIN_US` after it, the future's own
//! polls read its slot and ask to be polled again at once, so the executor's thread
//! stays awake through the end of the wait (running its other tasks between polls) and resumes the task
//! as soon as the ticket shows, instead of sleeping until the scanner's wake: a parked thread's wake
//! costs 8-20 us on the machines measured, more than the wait's end. The scanner wakes a waiting
//! future's waker once when its window begins. Outside the window, and past it, polls keep the waker
//! as before: no CPU is spent on a wait that is far from its end.
//!
//! Errors: a stream in an error state never runs the write. Every `HIP_RS_REACTOR_CHECK_MS` (20) a
//! timeline with pending futures has its stream asked `hipStreamQuery`, only while the stream's
//! operation gate is free and no capture of this crate records it (a query would be illegal inside a
//! capture); an answer other than `hipSuccess` or `hipErrorNotReady` fires every pending future of the
//! timeline with it. The slot of such a timeline is never reused (its write may still come); the slot of
//! a timeline that saw every ticket written is reused by another stream after a second idle (its next
//! tickets continue from the value it holds). Slabs are kept for the life of the process.
//!
//! Where the device has no 64-bit stream memory operations, the scanner cannot start, a slab cannot be
//! allocated or the write is refused, [`watch`] answers `false` and the caller falls back to the
//! stream's waiting thread.

use super::signal::{Signal, Watch};
use crate::queue::lock;
use crate::release::defer;
use crate::result;
use crate::result::stream_memop as memop;
use crate::stream::StreamHandle;
use hip_sys as sys;
use std::collections::{HashMap, VecDeque};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Slots per slab (8 bytes each: one 4 KiB page).
const SLAB: usize = 512;
/// How long a timeline with nothing pending keeps its slot before the slot goes back to the free list.
const IDLE: Duration = Duration::from_secs(1);
/// Completion times a timeline remembers for its expectation.
const HISTORY: usize = 8;
/// The first back-off sleep.
const MIN_SLEEP: Duration = Duration::from_micros(5);

/// The scanner's timings (see the module docs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tuning {
    /// How long before a future's expected completion its own polls start reading its slot
    /// (`HIP_RS_REACTOR_LEAD_US`, 50 us); `None` (`off`): they never do.
    pub(crate) lead: Option<Duration>,
    pub(crate) spin: Duration,
    pub(crate) margin: Duration,
    pub(crate) max_sleep: Duration,
    pub(crate) check: Duration,
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// The executor watch's lead from `HIP_RS_REACTOR_LEAD_US`: microseconds, `off` for none, 50 when unset
/// or unreadable (timed on an H100: the round trip 0.98x a blocked thread with it, 1.35x without; the
/// awaited 1 ms kernel 1.017x against 1.035x).
fn lead_from(value: Option<&str>) -> Option<Duration> {
    match value.map(str::trim) {
        Some("off") => None,
        v => Some(Duration::from_micros(
            v.and_then(|v| v.parse().ok()).unwrap_or(50),
        )),
    }
}

fn tuning() -> &'static Tuning {
    static T: OnceLock<Tuning> = OnceLock::new();
    T.get_or_init(|| Tuning {
        lead: lead_from(std::env::var("HIP_RS_REACTOR_LEAD_US").ok().as_deref()),
        spin: Duration::from_micros(env_or("HIP_RS_REACTOR_SPIN_US", 50)),
        margin: Duration::from_micros(env_or("HIP_RS_REACTOR_MARGIN_US", 30)),
        max_sleep: Duration::from_micros(env_or("HIP_RS_REACTOR_MAX_SLEEP_US", 50).max(1)),
        check: Duration::from_millis(env_or("HIP_RS_REACTOR_CHECK_MS", 20).max(1)),
    })
}

/// What the reactor did so far in this process (all counts since the start).
///
/// ```
/// let s = hip::future::reactor_stats();
/// assert!(s.fired <= s.watched);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReactorStats {
    /// Futures the reactor took (their stream writes a ticket).
    pub watched: u64,
    /// Futures created with [`Wake::Reactor`](super::Wake::Reactor) that went to the waiting thread
    /// instead (no stream memory operations, the write refused, no slab).
    pub fell_back: u64,
    /// Futures fired by the scanner (with `hipSuccess` or the stream's error).
    pub fired: u64,
    /// Futures fired with an error found by `hipStreamQuery`.
    pub failed: u64,
    /// Scans that fired at least one future (`fired / wakes`: completions per wake).
    pub wakes: u64,
}

/// The counts so far: which futures the reactor woke, and how many per scan.
///
/// ```
/// let before = hip::future::reactor_stats();
/// assert!(hip::future::reactor_stats().watched >= before.watched);
/// ```
pub fn reactor_stats() -> ReactorStats {
    lock(&reactor().state).stats
}

/// A slot: its host address (read by the scanner), its device address (written by streams) and the
/// value it holds once every write to it ran.
#[derive(Clone, Copy)]
struct Slot {
    host: usize,
    device: usize,
    value: u64,
}

impl Slot {
    fn read(&self) -> u64 {
        // SAFETY: `host` is an 8-byte aligned slot of a slab that is never freed; the host only reads it
        // atomically, and a device write replaces it whole.
        unsafe { AtomicU64::from_ptr(self.host as *mut u64) }.load(Ordering::Acquire)
    }
}

struct Entry {
    ticket: u64,
    created: Instant,
    signal: Arc<Signal>,
    /// When the future's own polls start reading the slot ([`Watch::from`]): the scanner wakes its waker
    /// then, once, and clears it. `None` with the watch off (or once woken).
    wake_early_at: Option<Instant>,
}

/// One stream's slot and pending futures, in ticket order.
struct Timeline {
    ordinal: usize,
    slot: Slot,
    /// The last ticket handed out (the slot reaches it once every write ran).
    issued: u64,
    pending: VecDeque<Entry>,
    /// The stream, kept alive (its handle valid for `hipStreamQuery`) while futures are pending.
    stream: Option<Arc<StreamHandle>>,
    /// Recent times from a future's creation to its completion (lower bounds).
    recent: VecDeque<Duration>,
    last_check: Instant,
    idle_since: Instant,
}

impl Timeline {
    /// The earliest a pending future may complete: its creation plus the shortest recent completion time.
    fn expected(&self) -> Option<Instant> {
        let head = self.pending.front()?;
        Some(head.created + self.recent.iter().min().copied().unwrap_or_default())
    }
}

#[derive(Default)]
struct State {
    timelines: HashMap<u64, Timeline>,
    /// Slots that saw every write to them, per device ordinal.
    free: HashMap<usize, Vec<Slot>>,
    /// Per device ordinal: whether the reactor can serve it (stream memory operations, a slab).
    usable: HashMap<usize, bool>,
    started: bool,
    /// The scanner could not be started: every future goes to the waiting threads.
    broken: bool,
    pending: usize,
    /// Bumped by every new future (the scanner restarts its back-off when it changes).
    submissions: u64,
    /// The scanner sleeps on the condition variable (a new future notifies it).
    asleep: bool,
    stats: ReactorStats,
}

struct Reactor {
    state: Mutex<State>,
    ready: Condvar,
}

fn reactor() -> &'static Reactor {
    static R: OnceLock<Reactor> = OnceLock::new();
    R.get_or_init(|| Reactor {
        state: Mutex::new(State::default()),
        ready: Condvar::new(),
    })
}

/// Whether device `ordinal` supports 64-bit stream writes (asked once).
fn usable(st: &mut State, ordinal: usize) -> bool {
    *st.usable
        .entry(ordinal)
        .or_insert_with(|| matches!(memop::can_use_wait_value64(ordinal as i32), Ok(v) if v != 0))
}

/// A free slot of the device `handle` belongs to (its device current), allocating a slab if none is left.
fn take_slot(st: &mut State, handle: &StreamHandle) -> Option<Slot> {
    let ordinal = handle.device.ordinal();
    if let Some(s) = st.free.get_mut(&ordinal).and_then(Vec::pop) {
        return Some(s);
    }
    #[cfg(hip_platform = "amd")]
    let flags = sys::hipHostMallocMapped | sys::hipHostMallocCoherent;
    #[cfg(not(hip_platform = "amd"))]
    let flags = sys::hipHostMallocMapped;
    let host = match result::host_malloc(SLAB * 8, flags) {
        Ok(p) => p,
        Err(_) => {
            st.usable.insert(ordinal, false);
            return None;
        }
    };
    // SAFETY: `host` is SLAB * 8 bytes of pinned memory just allocated (aligned far beyond 8); no stream
    // knows it yet.
    unsafe { std::ptr::write_bytes(host.cast::<u8>(), 0, SLAB * 8) };
    // SAFETY: `host` came from hipHostMalloc with hipHostMallocMapped, and is never freed.
    let device = match unsafe { memop::host_get_device_pointer(host) } {
        Ok(d) => d,
        Err(_) => {
            // SAFETY: allocated above, known to no stream.
            let _ = unsafe { result::host_free(host) };
            st.usable.insert(ordinal, false);
            return None;
        }
    };
    let free = st.free.entry(ordinal).or_default();
    for i in (1..SLAB).rev() {
        free.push(Slot {
            host: host as usize + 8 * i,
            device: device as usize + 8 * i,
            value: 0,
        });
    }
    Some(Slot {
        host: host as usize,
        device: device as usize,
        value: 0,
    })
}

fn start(st: &mut State) -> bool {
    if !st.started && !st.broken {
        let spawned = std::thread::Builder::new()
            .name("hip-rs-reactor".into())
            .spawn(|| scan_loop(reactor()));
        st.started = spawned.is_ok();
        st.broken = !st.started;
    }
    st.started
}

/// Queue a ticket write on `handle`'s stream after the work queued so far, and fire `signal` once the
/// scanner reads it (or with the stream's error). `false` when the reactor cannot serve this stream
/// (see the module docs): the caller then hands `signal` to the waiting thread.
///
/// # Safety
/// The caller holds the stream's operation gate (a `StreamOp`, not capturing), so tickets are written in
/// the order they are handed out; the stream's device is current.
pub(crate) unsafe fn watch(handle: &Arc<StreamHandle>, signal: &Arc<Signal>) -> bool {
    let r = reactor();
    let mut st = lock(&r.state);
    let ordinal = handle.device.ordinal();
    if !usable(&mut st, ordinal) || !start(&mut st) {
        st.stats.fell_back += 1;
        return false;
    }
    if !st.timelines.contains_key(&handle.id) {
        let Some(slot) = take_slot(&mut st, handle) else {
            st.stats.fell_back += 1;
            return false;
        };
        let now = Instant::now();
        st.timelines.insert(
            handle.id,
            Timeline {
                ordinal,
                slot,
                issued: slot.value,
                pending: VecDeque::new(),
                stream: None,
                recent: VecDeque::new(),
                last_check: now,
                idle_since: now,
            },
        );
    }
    let Some(tl) = st.timelines.get_mut(&handle.id) else {
        return false;
    };
    let ticket = tl.issued + 1;
    // SAFETY: the stream is live (the caller's handle) and its device current; the slot is 8-byte aligned
    // mapped pinned memory of that device, never freed. Written under the reactor's lock and the stream's
    // gate: no other ticket of this timeline is handed out or written meanwhile.
    let written =
        unsafe { memop::write_value64(handle.raw, tl.slot.device as *mut c_void, ticket) };
    if written.is_err() {
        st.stats.fell_back += 1;
        return false;
    }
    tl.issued = ticket;
    let now = Instant::now();
    if tl.pending.is_empty() {
        tl.last_check = now;
    }
    // Expected no earlier than the shortest recent completion time after now (at once with no history).
    let t = tuning();
    let expected = now + tl.recent.iter().min().copied().unwrap_or_default();
    let from = match t.lead {
        Some(lead) => {
            let from = expected.checked_sub(lead).unwrap_or(now).max(now);
            signal.set_watch(Watch {
                slot: tl.slot.host,
                ticket,
                from,
                until: expected + t.spin,
            });
            Some(from)
        }
        None => None,
    };
    tl.pending.push_back(Entry {
        ticket,
        created: now,
        signal: signal.clone(),
        wake_early_at: from,
    });
    if tl.stream.is_none() {
        tl.stream = Some(handle.clone());
    }
    st.pending += 1;
    st.submissions += 1;
    st.stats.watched += 1;
    let wake = st.asleep;
    drop(st);
    if wake {
        r.ready.notify_one();
    }
    true
}

/// Drop a stream handle the reactor kept; the last one goes on the releasing thread (destroying a stream
/// may wait for its work: never on the scanner, which every future waits for).
fn release(stream: Arc<StreamHandle>) {
    if Arc::strong_count(&stream) == 1 {
        defer(Box::new(move || drop(stream)));
    }
}

/// What one scan found: futures to fire, to wake early, and streams to ask for their state.
#[derive(Default)]
struct Scan {
    fired: Vec<(Arc<Signal>, sys::hipError_t)>,
    early: Vec<Arc<Signal>>,
    released: Vec<Arc<StreamHandle>>,
    checks: Vec<(u64, Arc<StreamHandle>)>,
    expected: Option<Instant>,
}

/// Read every pending timeline's slot; fire what it reached.
fn scan(st: &mut State, now: Instant, last_scan: Instant, check: Duration) -> Scan {
    let mut out = Scan::default();
    for (&id, tl) in st.timelines.iter_mut() {
        if tl.pending.is_empty() {
            continue;
        }
        let value = tl.slot.read();
        while let Some(e) = tl.pending.front() {
            if e.ticket > value {
                break;
            }
            // Completed after the previous scan (or after its creation, if later): a lower bound.
            let took = last_scan.max(e.created) - e.created;
            if tl.recent.len() == HISTORY {
                tl.recent.pop_front();
            }
            tl.recent.push_back(took);
            let e = tl.pending.pop_front().expect("front exists");
            out.fired.push((e.signal, sys::hipSuccess));
        }
        if tl.pending.is_empty() {
            tl.slot.value = value;
            tl.idle_since = now;
            out.released.extend(tl.stream.take());
            continue;
        }
        for e in tl.pending.iter_mut() {
            if e.wake_early_at.is_some_and(|at| now >= at) {
                e.wake_early_at = None;
                out.early.push(e.signal.clone());
            }
        }
        if now - tl.last_check >= check {
            tl.last_check = now;
            if let Some(s) = &tl.stream {
                out.checks.push((id, s.clone()));
            }
        }
        out.expected = match (out.expected, tl.expected()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    st.pending -= out.fired.len();
    out
}

/// Ask the stream of timeline `id` whether it is in an error state; if so, fail its pending futures.
fn check(r: &Reactor, id: u64, stream: Arc<StreamHandle>) {
    let status = match stream.try_close_gate() {
        Some(_gate) if !stream.is_capturing() => {
            let _ = stream.device.bind();
            // SAFETY: a live stream (its handle is held), not captured by this crate (checked under its
            // gate, held through the call).
            unsafe { sys::hipStreamQuery(stream.raw) }
        }
        _ => sys::hipErrorNotReady,
    };
    if status != sys::hipSuccess && status != sys::hipErrorNotReady {
        let mut st = lock(&r.state);
        // The slot of a failed timeline is not reused: its write may still come.
        if let Some(mut tl) = st.timelines.remove(&id) {
            let n = tl.pending.len();
            st.pending -= n;
            st.stats.fired += n as u64;
            st.stats.failed += n as u64;
            drop(st);
            for e in tl.pending.drain(..) {
                fire(e.signal, status);
            }
            if let Some(s) = tl.stream.take() {
                release(s);
            }
        }
    }
    release(stream);
}

fn fire(signal: Arc<Signal>, status: sys::hipError_t) {
    // A waker that panics must not end the scanner: every later future would never wake.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || signal.fire(status)));
}

/// Sleep up to `d` on the condition variable (a new future cuts it short).
fn nap<'a>(r: &'a Reactor, mut st: MutexGuard<'a, State>, d: Duration) -> MutexGuard<'a, State> {
    st.asleep = true;
    let (mut st, _) = r
        .ready
        .wait_timeout(st, d)
        .unwrap_or_else(|e| e.into_inner());
    st.asleep = false;
    st
}

/// Timelines idle for [`IDLE`] give their slot back.
fn retire_idle(st: &mut State, now: Instant) {
    let idle: Vec<u64> = st
        .timelines
        .iter()
        .filter(|(_, t)| t.pending.is_empty() && now - t.idle_since >= IDLE)
        .map(|(&id, _)| id)
        .collect();
    for id in idle {
        if let Some(t) = st.timelines.remove(&id) {
            st.free.entry(t.ordinal).or_default().push(t.slot);
        }
    }
}

/// Set this thread's timer slack to 1 us, so its short sleeps end on time (Linux's default is 50 us).
fn precise_sleeps() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and changes only this thread's timer slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong);
    }
}

/// The scanner: scan, fire, then spin, back off or sleep (see the module docs).
fn scan_loop(r: &'static Reactor) {
    precise_sleeps();
    let t = *tuning();
    let mut backoff = MIN_SLEEP;
    let mut last_scan = Instant::now();
    let mut seen = 0;
    loop {
        let mut st = lock(&r.state);
        while st.pending == 0 {
            let now = Instant::now();
            retire_idle(&mut st, now);
            st.asleep = true;
            st = if st.timelines.is_empty() {
                r.ready.wait(st).unwrap_or_else(|e| e.into_inner())
            } else {
                r.ready
                    .wait_timeout(st, IDLE)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            };
            st.asleep = false;
            last_scan = Instant::now();
        }
        let now = Instant::now();
        let found = scan(&mut st, now, last_scan, t.check);
        last_scan = now;
        let n = found.fired.len() as u64;
        if n > 0 {
            st.stats.fired += n;
            st.stats.wakes += 1;
        }
        let fresh = st.submissions != seen;
        seen = st.submissions;
        if n > 0 || fresh {
            backoff = MIN_SLEEP;
        }
        drop(st);
        for (signal, status) in found.fired {
            fire(signal, status);
        }
        for signal in found.early {
            // A waker that panics must not end the scanner (as in `fire`).
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| signal.wake_early()));
        }
        found.released.into_iter().for_each(release);
        for (id, stream) in found.checks {
            check(r, id, stream);
        }
        let Some(expected) = found.expected else {
            continue;
        };
        let now = Instant::now();
        if now + t.margin < expected {
            // Asleep until shortly before the earliest expected completion (a new future wakes it).
            let d = (expected - t.margin - now).min(t.check);
            let st = nap(r, lock(&r.state), d);
            drop(st);
        } else if now < expected + t.spin {
            for _ in 0..64 {
                std::hint::spin_loop();
            }
        } else {
            let st = nap(r, lock(&r.state), backoff);
            drop(st);
            backoff = (backoff * 2).min(t.max_sleep);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeline_expects_its_head_no_earlier_than_its_fastest_recent_completion() {
        let t0 = Instant::now();
        let mut tl = Timeline {
            ordinal: 0,
            slot: Slot {
                host: 0,
                device: 0,
                value: 0,
            },
            issued: 0,
            pending: VecDeque::new(),
            stream: None,
            recent: VecDeque::new(),
            last_check: t0,
            idle_since: t0,
        };
        assert_eq!(tl.expected(), None, "nothing pending");
        tl.pending.push_back(Entry {
            ticket: 1,
            created: t0,
            signal: Arc::new(Signal::default()),
            wake_early_at: None,
        });
        assert_eq!(tl.expected(), Some(t0), "no history: expected at once");
        tl.recent
            .extend([Duration::from_micros(900), Duration::from_micros(700)]);
        assert_eq!(tl.expected(), Some(t0 + Duration::from_micros(700)));
    }

    #[test]
    fn the_scan_fires_every_future_its_slot_reached_and_keeps_the_rest() {
        let mut word = 0u64;
        let t0 = Instant::now();
        let mut st = State::default();
        let signals: Vec<_> = (0..4).map(|_| Arc::new(Signal::default())).collect();
        st.timelines.insert(
            7,
            Timeline {
                ordinal: 0,
                slot: Slot {
                    host: &mut word as *mut u64 as usize,
                    device: 0,
                    value: 0,
                },
                issued: 4,
                pending: (0..4)
                    .map(|i| Entry {
                        ticket: i + 1,
                        created: t0,
                        signal: signals[i as usize].clone(),
                        // Only the last is near its expected completion at the first scan.
                        wake_early_at: Some(if i == 3 {
                            t0
                        } else {
                            t0 + Duration::from_secs(9)
                        }),
                    })
                    .collect(),
                stream: None,
                recent: VecDeque::new(),
                last_check: t0,
                idle_since: t0,
            },
        );
        st.pending = 4;
        let later = t0 + Duration::from_millis(1);
        let s = scan(&mut st, later, t0, Duration::from_secs(1));
        assert!(s.fired.is_empty());
        assert!(
            s.early.len() == 1 && Arc::ptr_eq(&s.early[0], &signals[3]),
            "the one whose window began is woken early"
        );
        assert!(
            scan(&mut st, later, t0, Duration::from_secs(1))
                .early
                .is_empty(),
            "once"
        );
        // SAFETY: a live local, written while no scan reads it.
        unsafe { std::ptr::write_volatile(&mut word, 3) };
        let s = scan(&mut st, later, t0, Duration::from_secs(1));
        assert_eq!(s.fired.len(), 3, "three tickets reached in one scan");
        assert_eq!(st.pending, 1);
        assert!(s.expected.is_some(), "the fourth is still expected");
        let tl = &st.timelines[&7];
        assert_eq!(tl.recent.len(), 3);
        assert!(s.checks.is_empty(), "no stream kept: nothing to ask");
        // SAFETY: as above.
        unsafe { std::ptr::write_volatile(&mut word, 4) };
        let s = scan(&mut st, later, later, Duration::from_secs(1));
        assert_eq!((s.fired.len(), st.pending), (1, 0));
        assert_eq!(
            st.timelines[&7].slot.value, 4,
            "the slot's value, for reuse"
        );
        retire_idle(&mut st, later + IDLE);
        assert!(
            st.timelines.is_empty() && st.free[&0].len() == 1,
            "slot reused"
        );
        drop(signals);
    }

    #[test]
    fn the_executor_watch_is_on_by_default_and_off_when_asked() {
        let us = |n| Some(Duration::from_micros(n));
        assert_eq!(lead_from(None), us(50));
        assert_eq!(lead_from(Some("80")), us(80));
        assert_eq!(lead_from(Some(" 0 ")), us(0));
        assert_eq!(lead_from(Some("off")), None);
        assert_eq!(lead_from(Some("fast")), us(50), "unreadable: the default");
    }
}
