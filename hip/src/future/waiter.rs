//! Waking futures from events: one waiting thread per stream that has pending futures.
//!
//! A future's creation records an event right after the work it waits for and hands it, with the
//! future's [`Signal`], to its stream's waiting thread (started on the stream's first future, ended
//! after a second with nothing pending). The thread takes the stream's events in the order they were
//! recorded (they complete in that order), polls each with `hipEventQuery` for up to [`SPIN`], then
//! blocks in `hipEventSynchronize` (the events are made with `hipEventBlockingSync`: the thread sleeps
//! in the driver, it does not spin), and fires the signal with the status. Nothing but the event is
//! queued in the stream (a host function, the first design, held the stream until HIP's callback thread
//! ran it, about 40 us after the work on an H200), and the thread is an ordinary one: it may call HIP, so
//! a dropped future's memory is released there directly.

use super::signal::Signal;
use crate::device::Device;
use crate::error::Result;
use crate::queue::lock;
use crate::result;
use hip_sys as sys;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long the waiting thread polls an event before it blocks: short waits wake in about a
/// microsecond, long ones cost this much CPU and then none (measured by `examples/futures_bench.rs`).
const SPIN: Duration = Duration::from_micros(50);

/// How long a waiting thread stays with nothing pending before it ends.
const IDLE: Duration = Duration::from_secs(1);

/// Events kept for reuse per device; more are destroyed when they come back.
const POOL: usize = 256;

/// A recorded event and the future it wakes.
struct Entry {
    event: RawEvent,
    signal: Arc<Signal>,
}

/// An event handle of the pool (`hipEventBlockingSync | hipEventDisableTiming`).
struct RawEvent(sys::hipEvent_t);

// SAFETY: an event handle is only passed to HIP's event calls, which any thread may make; each is owned
// by one entry or the pool at a time.
unsafe impl Send for RawEvent {}

/// One stream's waiting thread: its pending entries, in record order.
#[derive(Default)]
struct Waiter {
    pending: Mutex<VecDeque<Entry>>,
    ready: Condvar,
}

/// A waiting thread's key: the stream handle's address and the device ordinal.
type Key = (usize, usize);

/// The waiting threads by key; a thread removes its entry, under this lock, before it ends.
fn waiters() -> &'static Mutex<HashMap<Key, Arc<Waiter>>> {
    static W: OnceLock<Mutex<HashMap<Key, Arc<Waiter>>>> = OnceLock::new();
    W.get_or_init(Default::default)
}

/// The event pools by device ordinal.
fn pools() -> &'static Mutex<HashMap<usize, Vec<RawEvent>>> {
    static P: OnceLock<Mutex<HashMap<usize, Vec<RawEvent>>>> = OnceLock::new();
    P.get_or_init(Default::default)
}

fn take_event(device: &Device) -> Result<RawEvent> {
    if let Some(e) = lock(pools()).get_mut(&device.ordinal()).and_then(Vec::pop) {
        return Ok(e);
    }
    result::event_create(sys::hipEventBlockingSync | sys::hipEventDisableTiming).map(RawEvent)
}

fn give_back(device: &Device, event: RawEvent) {
    let mut pools = lock(pools());
    let pool = pools.entry(device.ordinal()).or_default();
    if pool.len() < POOL {
        pool.push(event);
    } else {
        drop(pools);
        // SAFETY: an event of the pool, done with (synchronized), destroyed once.
        let _ = unsafe { result::event_destroy(event.0) };
    }
}

/// Record an event on `stream` (of `device`, current) after the work queued so far, and fire `signal`
/// with the status once it is complete.
///
/// # Safety
/// `stream` is a live stream of `device`, or null (its null stream), and stays live until the signal
/// fired.
pub(crate) unsafe fn watch(
    stream: sys::hipStream_t,
    device: &Device,
    signal: Arc<Signal>,
) -> Result<()> {
    let event = take_event(device)?;
    // SAFETY: a live event of this device; the caller's stream is live and its device current.
    if let Err(e) = unsafe { result::event_record(event.0, stream) } {
        give_back(device, event);
        return Err(e);
    }
    let key = (stream as usize, device.ordinal());
    let mut map = lock(waiters());
    let waiter = match map.get(&key) {
        Some(w) => w.clone(),
        None => {
            let w = Arc::new(Waiter::default());
            let (thread_waiter, thread_device) = (w.clone(), device.clone());
            let started = std::thread::Builder::new()
                .name("hip-rs-futures".into())
                .spawn(move || wait_loop(key, &thread_waiter, &thread_device));
            if started.is_err() {
                drop(map);
                // No thread for it: wait for the recorded event here, so the future resolves when
                // polled.
                // SAFETY: a live event of this device.
                let status = unsafe { sys::hipEventSynchronize(event.0) };
                give_back(device, event);
                signal.fire(status);
                return Ok(());
            }
            map.insert(key, w.clone());
            w
        }
    };
    lock(&waiter.pending).push_back(Entry { event, signal });
    drop(map);
    waiter.ready.notify_one();
    Ok(())
}

/// A stream's waiting thread: each entry in turn, until nothing came for [`IDLE`].
fn wait_loop(key: Key, waiter: &Waiter, device: &Device) {
    // Event calls do not need the device current; binding it keeps HIP's per-thread state on it.
    let _ = device.bind();
    loop {
        let Some(entry) = next(key, waiter) else {
            return;
        };
        let status = wait(&entry.event);
        give_back(device, entry.event);
        // A waker that panics must not end the thread: the stream's later futures would never wake.
        let signal = entry.signal;
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || signal.fire(status)));
    }
}

/// The next entry, or `None` once the waiter was idle for [`IDLE`] and removed itself.
fn next(key: Key, waiter: &Waiter) -> Option<Entry> {
    loop {
        let mut pending = lock(&waiter.pending);
        if let Some(e) = pending.pop_front() {
            return Some(e);
        }
        let (mut pending, timeout) = waiter
            .ready
            .wait_timeout(pending, IDLE)
            .unwrap_or_else(|e| e.into_inner());
        if let Some(e) = pending.pop_front() {
            return Some(e);
        }
        if timeout.timed_out() {
            // In lock order (the map, then the queue): a producer holds the map while it pushes, so
            // once removed no entry can come.
            drop(pending);
            let mut map = lock(waiters());
            if lock(&waiter.pending).is_empty() {
                map.remove(&key);
                return None;
            }
        }
    }
}

/// Poll `event` for up to [`SPIN`], then block on it; its status.
fn wait(event: &RawEvent) -> sys::hipError_t {
    let start = Instant::now();
    while start.elapsed() < SPIN {
        // SAFETY: a live event (owned by the entry being waited for).
        match unsafe { sys::hipEventQuery(event.0) } {
            sys::hipErrorNotReady => std::hint::spin_loop(),
            status => return status,
        }
    }
    // SAFETY: as above.
    unsafe { sys::hipEventSynchronize(event.0) }
}
