//! Streams as host queues: each stream is a FIFO worked by its own thread, each operation after a seeded
//! random delay. Also the calling host thread's clock, and the one lock and condition variable every wait
//! of the shadow uses.

use crate::clock::{new_pid, Clock, Pid};
use crate::state::Capture;
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What an operation does when its stream runs it: `(its clock, its description)`. Replayable (graphs).
pub type Action = Arc<dyn Fn(&Clock, &Arc<str>) + Send + Sync>;

pub struct Op {
    pub seq: u64,
    /// `(stream, seq)`: runs only once that stream has completed `seq`.
    pub deps: Vec<(usize, u64)>,
    pub clock: Clock,
    pub what: Arc<str>,
    pub action: Action,
}

pub struct StreamState {
    pub pid: Pid,
    pub device: i32,
    pub non_blocking: bool,
    pub queue: VecDeque<Op>,
    pub queued: u64,
    pub done: u64,
    /// The clock of everything queued so far (the last operation's).
    pub clock: Clock,
    pub capture: Option<Capture>,
    pub destroyed: bool,
    /// Set by `hip_rs_shadow_fail_stream`: the stream stopped as a device fault stops it (nothing more
    /// runs) and `hipStreamQuery` answers this code.
    pub failed: Option<crate::Status>,
}

#[derive(Default)]
pub struct Rt {
    pub streams: HashMap<usize, StreamState>,
    /// What any host thread learned through a HIP synchronization, and the clocks of completed host
    /// functions, joined: every host thread knows it (see `host`).
    pub released: Clock,
    pub events: HashMap<usize, crate::state::EventState>,
    /// hipStreamWaitEvent calls seen (the mutation `HIP_RS_SHADOW_DROP_WAITS` counts them).
    pub waits: usize,
    /// Of those, waits whose record was already ordered before the waiting stream's next operation
    /// (by stream order, the queueing thread or earlier waits): they ordered nothing new.
    pub redundant_waits: usize,
    /// `hipStreamWriteValue*` queued, per address: value and the write's clock, in queue order.
    pub value_writes: HashMap<usize, Vec<(u64, Clock)>>,
    /// Streams created with a priority other than 0.
    pub priorities: HashMap<usize, i32>,
}

static RT: Mutex<Option<Rt>> = Mutex::new(None);
pub static CV: Condvar = Condvar::new();
static NEXT_HANDLE: AtomicUsize = AtomicUsize::new(1);

/// A fresh non-null handle value (streams, events, graphs, modules, functions).
pub fn new_handle() -> usize {
    NEXT_HANDLE.fetch_add(1, Ordering::Relaxed) << 4
}

/// The runtime's state, for a HIP call (every exported call that touches streams, events, memory or
/// graphs takes it). A call made by a host function while it runs is reported: HIP forbids it (the
/// runtime may deadlock, and a call that waits for the device waits for the function itself).
pub fn lock() -> MutexGuard<'static, Option<Rt>> {
    if IN_HOST_FN.with(|f| f.get()) {
        crate::detector::report(format!(
            "a HIP call inside a host function (on {:?}): host functions must not call HIP",
            std::thread::current().name().unwrap_or("a stream's thread")
        ));
    }
    RT.lock().unwrap_or_else(|p| p.into_inner())
}

thread_local! {
    /// Set while this thread runs a host function's callback.
    static IN_HOST_FN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run a host function's callback with [`lock`]'s check on.
pub fn as_host_fn(run: impl FnOnce()) {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            IN_HOST_FN.with(|f| f.set(false));
        }
    }
    IN_HOST_FN.with(|f| f.set(true));
    let _reset = Reset;
    run();
}

pub fn rt<'a>(g: &'a mut MutexGuard<'static, Option<Rt>>) -> &'a mut Rt {
    let rt = g.get_or_insert_with(Rt::default);
    for d in 0..crate::state::count() {
        if let std::collections::hash_map::Entry::Vacant(e) = rt.streams.entry(null_of(d)) {
            e.insert(new_stream_state(false, d));
            spawn_worker(null_of(d));
        }
    }
    rt
}

/// The key of device `d`'s null stream (handles of other streams are multiples of 16 from 16).
pub fn null_of(d: i32) -> usize {
    1 + d as usize
}

/// Whether `sid` is a null stream's key.
pub fn is_null(sid: usize) -> bool {
    sid < 16
}

/// The key of the stream a handle names: 0 is the calling thread's current device's null stream.
pub fn key(handle: usize) -> usize {
    if handle == 0 {
        null_of(crate::state::current())
    } else {
        handle
    }
}

pub fn wait<'a>(g: MutexGuard<'a, Option<Rt>>) -> MutexGuard<'a, Option<Rt>> {
    CV.wait_timeout(g, Duration::from_millis(50))
        .unwrap_or_else(|p| p.into_inner())
        .0
}

fn new_stream_state(non_blocking: bool, device: i32) -> StreamState {
    StreamState {
        pid: new_pid(),
        device,
        non_blocking,
        queue: VecDeque::new(),
        queued: 0,
        done: 0,
        clock: Clock::default(),
        capture: None,
        destroyed: false,
        failed: None,
    }
}

/// A host thread (or a stream worker running a host function): its participant id and clock.
pub struct Host {
    pub pid: Pid,
    pub clock: Clock,
    pub name: String,
}

thread_local! {
    static HOST: RefCell<Option<Host>> = const { RefCell::new(None) };
}

/// Run `f` with the calling thread's host state. Every entry first joins what any host thread learned
/// through a HIP synchronization and what completed host functions saw: host threads pass that knowledge
/// to each other through primitives the shadow does not see (the `hip` crate's futures complete on a
/// waiter thread that called hipEventSynchronize; host functions wake waiting threads). This is sound
/// for the run at hand (that work did complete before the call) but not for other schedules.
pub fn host<R>(released: &Clock, f: impl FnOnce(&mut Host) -> R) -> R {
    HOST.with(|h| {
        let mut h = h.borrow_mut();
        let h = h.get_or_insert_with(|| {
            let pid = new_pid();
            let mut clock = Clock::default();
            clock.tick(pid);
            let t = std::thread::current();
            Host {
                pid,
                clock,
                name: format!("thread {pid} ({})", t.name().unwrap_or("unnamed")),
            }
        });
        h.clock.join(released);
        f(h)
    })
}

fn set_host(state: Option<Host>) -> Option<Host> {
    HOST.with(|h| std::mem::replace(&mut *h.borrow_mut(), state))
}

/// The host thread's clock now, then a tick (its later actions are after this point).
pub fn host_now(rt: &Rt) -> (Clock, String) {
    host(&rt.released, |h| {
        let c = h.clock.clone();
        h.clock.tick(h.pid);
        (c, h.name.clone())
    })
}

/// The host thread's clock now (no tick).
pub fn host_peek(rt: &Rt) -> Clock {
    host(&rt.released, |h| h.clock.clone())
}

/// The host thread learns `c` (it waited for what `c` covers); so does every host thread after it.
pub fn host_join(rt: &mut Rt, c: &Clock) {
    rt.released.join(c);
    host(&rt.released, |h| h.clock.join(c));
}

/// The host thread alone learns `c` (an allocator's order).
pub fn host_join_local(rt: &Rt, c: &Clock) {
    host(&rt.released, |h| h.clock.join(c));
}

pub fn stream_name(sid: usize) -> String {
    if is_null(sid) {
        format!("the null stream of device {}", sid - 1)
    } else {
        format!("stream {sid:#x}")
    }
}

/// Queue an operation on `sid` (not capturing): its clock is the stream's joined with the host thread's
/// (and `extra`); a null stream's legacy order joins every blocking stream of its device both ways.
pub fn push(
    rt: &mut Rt,
    sid: usize,
    call: &str,
    mut deps: Vec<(usize, u64)>,
    extra: &Clock,
    action: Action,
) -> (u64, Clock) {
    let (hclock, hname) = host_now(rt);
    let mut clock = hclock;
    clock.join(extra);
    let s = &rt.streams[&sid];
    let (non_blocking, device) = (s.non_blocking, s.device);
    let mut legacy = Clock::default();
    if is_null(sid) {
        for (&o, st) in rt.streams.iter() {
            if !is_null(o) && !st.non_blocking && st.device == device {
                deps.push((o, st.queued));
                legacy.join(&st.clock);
            }
        }
    } else if !non_blocking {
        let n = &rt.streams[&null_of(device)];
        deps.push((null_of(device), n.queued));
        legacy.join(&n.clock);
    }
    clock.join(&legacy);
    let s = rt.streams.get_mut(&sid).unwrap();
    clock.join(&s.clock);
    let seq = s.queued + 1;
    clock.set(s.pid, seq);
    s.clock = clock.clone();
    s.queued = seq;
    let what: Arc<str> = format!("{call} on {} (queued by {hname})", stream_name(sid)).into();
    trace(&format!("queue #{seq} {what} deps {deps:?}"));
    s.queue.push_back(Op {
        seq,
        deps,
        clock: clock.clone(),
        what,
        action,
    });
    CV.notify_all();
    (seq, clock)
}

/// Queue an operation with a given clock (a replayed graph node), run once each of `deps` (`(stream,
/// seq)`: an event wait node's record) completed: stream order for running, the given clock for the
/// detector. Its sequence number on `sid`.
pub fn push_with_clock(
    rt: &mut Rt,
    sid: usize,
    what: Arc<str>,
    deps: Vec<(usize, u64)>,
    clock: Clock,
    action: Action,
) -> u64 {
    let s = rt.streams.get_mut(&sid).unwrap();
    s.queued += 1;
    s.clock.join(&clock);
    let seq = s.queued;
    s.queue.push_back(Op {
        seq,
        deps,
        clock,
        what,
        action,
    });
    CV.notify_all();
    seq
}

/// `HIP_RS_SHADOW_TRACE=1`: every queued operation and host wait on stderr.
pub fn trace(line: &str) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var("HIP_RS_SHADOW_TRACE").is_ok_and(|v| v == "1")) {
        eprintln!("hip-rs shadow trace: {line}");
    }
}

/// Block the host until stream `sid` has completed `seq`.
pub fn wait_done(
    mut g: MutexGuard<'static, Option<Rt>>,
    sid: usize,
    seq: u64,
) -> MutexGuard<'static, Option<Rt>> {
    loop {
        let rt = rt(&mut g);
        match rt.streams.get(&sid) {
            Some(s) if s.done < seq && s.failed.is_none() => g = wait(g),
            _ => return g,
        }
    }
}

/// The code of a failed stream (`hip_rs_shadow_fail_stream`) that will never complete `seq`.
pub fn failed_before(rt: &Rt, sid: usize, seq: u64) -> Option<crate::Status> {
    rt.streams
        .get(&sid)
        .filter(|s| s.done < seq)
        .and_then(|s| s.failed)
}

static SEED: AtomicU64 = AtomicU64::new(0);

fn seed() -> u64 {
    let s = SEED.load(Ordering::Relaxed);
    if s != 0 {
        return s;
    }
    let s = std::env::var("HIP_RS_SHADOW_SEED")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(1)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        | 1;
    SEED.store(s, Ordering::Relaxed);
    s
}

/// A seeded random pause of the calling host thread after some calls (hipEventRecord,
/// hipStreamWaitEvent): it widens the window between a HIP call and the caller's bookkeeping about it,
/// so another thread's calls land inside it on some seeds. `HIP_RS_SHADOW_HOST_DELAY=0` turns it off.
pub fn host_delay() {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if !*ON.get_or_init(|| std::env::var("HIP_RS_SHADOW_HOST_DELAY").map_or(true, |v| v != "0")) {
        return;
    }
    thread_local! {
        static RNG: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }
    let r = RNG.with(|c| {
        let mut x = c.get();
        if x == 0 {
            x = (seed() ^ u64::from(new_pid()).wrapping_mul(0xA24B_AED4_963E_E407)) | 1;
        }
        next(&mut x);
        c.set(x);
        x
    });
    if r & 1 == 0 {
        std::thread::sleep(Duration::from_micros((r >> 8) % 300));
    }
}

/// Start the thread that works stream `sid`.
pub fn spawn_worker(sid: usize) {
    let mut rng = seed() ^ (sid as u64).wrapping_mul(0xD134_2543_DE82_EF95) | 1;
    std::thread::Builder::new()
        .name(format!("shadow-{}", stream_name(sid)))
        .spawn(move || worker(sid, &mut rng))
        .expect("spawn a stream worker");
}

fn next(rng: &mut u64) -> u64 {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    *rng
}

fn worker(sid: usize, rng: &mut u64) {
    // This thread's identity while it runs a host function.
    let host_pid = new_pid();
    let mut g = lock();
    loop {
        let state = rt(&mut g);
        let s = &state.streams[&sid];
        let ready = match s.queue.front() {
            None if s.destroyed => {
                state.streams.remove(&sid);
                CV.notify_all();
                return;
            }
            None => false,
            Some(_) if s.failed.is_some() => false,
            Some(front) => front
                .deps
                .iter()
                .all(|(d, seq)| state.streams.get(d).is_none_or(|o| o.done >= *seq)),
        };
        if !ready {
            g = wait(g);
            continue;
        }
        let op = state
            .streams
            .get_mut(&sid)
            .unwrap()
            .queue
            .pop_front()
            .unwrap();
        drop(g);
        // Mostly short delays, now and then a long one: enough to reorder what nothing orders.
        let r = next(rng);
        let us = match r % 8 {
            0 => 0,
            7 => 500 + (r >> 8) % 1500,
            _ => (r >> 8) % 200,
        };
        std::thread::sleep(Duration::from_micros(us));
        // Host functions run here with the operation's clock as this thread's host clock.
        let mut clock = op.clock.clone();
        clock.tick(host_pid);
        let previous = set_host(Some(Host {
            pid: host_pid,
            clock,
            name: format!("a host function on {}", stream_name(sid)),
        }));
        (op.action)(&op.clock, &op.what);
        set_host(previous);
        g = lock();
        let state = rt(&mut g);
        state.streams.get_mut(&sid).unwrap().done = op.seq;
        CV.notify_all();
    }
}

/// Create a stream; returns its handle.
pub fn create(non_blocking: bool) -> usize {
    let h = new_handle();
    let mut g = lock();
    let device = crate::state::current();
    rt(&mut g)
        .streams
        .insert(h, new_stream_state(non_blocking, device));
    drop(g);
    spawn_worker(h);
    h
}

/// Every stream's (id, queued, clock): of `device` (else all), blocking ones only (a null stream's
/// legacy set) or all.
pub fn snapshot(rt: &Rt, device: Option<i32>, only_blocking: bool) -> Vec<(usize, u64, Clock)> {
    rt.streams
        .iter()
        .filter(|(_, s)| !only_blocking || !s.non_blocking)
        .filter(|(_, s)| device.is_none_or(|d| s.device == d))
        .map(|(&id, s)| (id, s.queued, s.clock.clone()))
        .collect()
}

/// Host waits for each `(stream, seq)` and learns their clocks.
pub fn host_wait_all(
    mut g: MutexGuard<'static, Option<Rt>>,
    targets: Vec<(usize, u64, Clock)>,
) -> MutexGuard<'static, Option<Rt>> {
    for (id, seq, _) in &targets {
        trace(&format!("host waits for {} up to #{seq}", stream_name(*id)));
        g = wait_done(g, *id, *seq);
    }
    let rt = rt(&mut g);
    for (_, _, c) in &targets {
        host_join(rt, c);
    }
    g
}

/// A record's operation, which notes when it ran (for `hipEventElapsedTime`), and that time.
pub fn stamp() -> (Action, Arc<Mutex<Option<Instant>>>) {
    let time = Arc::new(Mutex::new(None));
    let t = time.clone();
    let act: Action = Arc::new(move |_: &Clock, _: &Arc<str>| {
        *t.lock().unwrap() = Some(Instant::now());
    });
    (act, time)
}
