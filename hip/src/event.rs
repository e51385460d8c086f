//! Events: markers in a stream's work, for ordering and timing.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::queue::{Completion, Queue};
use crate::release::RawHandle;
use crate::result;
use crate::stream::{lock, CaptureLog, Stream, StreamOp};
use hip_sys as sys;
use std::sync::{Arc, Mutex, Weak};

/// A HIP event: a point in a stream's queue, to wait for, to order another stream after, or to time.
///
/// Created without timing unless asked ([`Event::with_timing`]): timing events cost several times more
/// to record. Ordering buffers between streams needs no event (the memory model does it); events are for
/// timing, for waiting on the host for part of a queue, and for ordering work this crate cannot see.
///
/// ```no_run
/// use hip::prelude::*;
///
/// let device = Device::get(0)?;
/// let stream = Stream::new(&device)?;
/// let (start, end) = (Event::with_timing(&device)?, Event::with_timing(&device)?);
/// let mut x = DeviceBuffer::<u32>::zeroed(&device, 1 << 20)?;
/// start.record(&stream)?;
/// stream.fill_async(&mut x, 7)?;
/// end.record(&stream)?;
/// end.synchronize()?; // blocks until the fill is done
/// println!("fill: {:.3} ms", start.elapsed_ms(&end)?);
/// # Ok::<(), hip::Error>(())
/// ```
#[derive(Debug)]
pub struct Event {
    raw: sys::hipEvent_t,
    device: Device,
    timing: bool,
    /// Whether `record` has succeeded once (HIP answers "invalid resource handle" for elapsed time of an
    /// event never recorded).
    recorded: std::sync::atomic::AtomicBool,
    /// The capture this event was last recorded in, if it was recorded on a capturing stream: a stream
    /// that waits for it joins that capture.
    capture: Mutex<Option<Arc<CaptureLog>>>,
    in_capture: std::sync::atomic::AtomicBool,
    /// Where the last live record stands in its stream's queue (the memory model's label), for what a
    /// wait on the event or its completion teaches the memory model, with the record's generation. Held
    /// across `hipEventRecord` and the store, so a record and its position are one step.
    position: Mutex<Recorded>,
    /// `position`'s generation, stored under its lock with it: read without the lock before a HIP call
    /// on the event (a query), the lock taken after the call only when there is something to learn.
    generation: std::sync::atomic::AtomicU64,
    /// The stream that waits for this event to wake its futures (`Event::completion`), made on first use.
    waiter: std::sync::OnceLock<Stream>,
    /// A graph node records this event ([`GraphBuilder::record_event`](crate::GraphBuilder::record_event)):
    /// each replay records it again where this crate does not see, so from then on no record's position
    /// teaches the memory model anything (a wait or query may bind to a replay's record). Set once, under
    /// `position`'s lock, never cleared.
    replayed: std::sync::atomic::AtomicBool,
}

// SAFETY: a hipEvent_t is a handle to a runtime object that HIP synchronises internally, usable from any
// thread; the other fields are `Device`, plain data, atomics, mutexes (the capture log, the last live
// position, a `Weak<Queue>`) and the `OnceLock<Stream>` waiter, all Send + Sync.
unsafe impl Send for Event {}
// SAFETY: as for Send: `&Event` passes the handle to HIP calls (record, query, synchronize, waits) that
// HIP allows concurrently, and its own state is atomics, mutexes and a `OnceLock`.
unsafe impl Sync for Event {}

impl Event {
    /// A new event without timing (`hipEventDisableTiming`): the cheap kind, for ordering and waiting.
    ///
    /// # Errors
    ///
    /// What HIP returns for `hipEventCreateWithFlags`; [`Error::NoDevice`] where the device is gone.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream) -> hip::Result<()> {
    /// let done = Event::new(device)?;
    /// done.record(stream)?;
    /// done.synchronize()?; // what was queued on `stream` before the record is done
    /// # Ok(()) }
    /// ```
    pub fn new(device: &Device) -> Result<Event> {
        Self::with_flags(device, sys::hipEventDisableTiming)
    }

    /// A new event that records timestamps, for [`Event::elapsed_ms`] (`hipEventDefault`).
    ///
    /// # Errors
    ///
    /// As [`Event::new`]: [`Error::Hip`] with what HIP returns for making the device current and for
    /// `hipEventCreateWithFlags`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream, x: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// let (start, end) = (Event::with_timing(device)?, Event::with_timing(device)?);
    /// start.record(stream)?;
    /// stream.fill_async(x, 0.5)?;
    /// end.record(stream)?;
    /// end.synchronize()?;
    /// println!("{:.3} ms", start.elapsed_ms(&end)?);
    /// # Ok(()) }
    /// ```
    pub fn with_timing(device: &Device) -> Result<Event> {
        Self::with_flags(device, sys::hipEventDefault)
    }

    /// A new event with raw `hipEvent*` flags (`hipEventBlockingSync`, `hipEventDisableTiming`, ...).
    /// Timing is on unless the flags hold `hipEventDisableTiming`.
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for
    /// `hipEventCreateWithFlags` (`hipErrorInvalidValue` for flags it does not know).
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// use hip::sys;
    /// // A host wait on this event sleeps instead of spinning.
    /// let flags = sys::hipEventBlockingSync | sys::hipEventDisableTiming;
    /// let event = hip::Event::with_flags(device, flags)?;
    /// assert!(!event.has_timing());
    /// # Ok(()) }
    /// ```
    pub fn with_flags(device: &Device, flags: u32) -> Result<Event> {
        device.bind()?;
        let raw = result::event_create(flags)?;
        Ok(Self::from_raw(device, raw, flags))
    }

    /// Own `raw`, a live event of `device` made with `flags`, destroyed on drop (`hipEventDestroy`).
    pub(crate) fn from_raw(device: &Device, raw: sys::hipEvent_t, flags: u32) -> Event {
        Event {
            raw,
            device: device.clone(),
            timing: flags & sys::hipEventDisableTiming == 0,
            recorded: std::sync::atomic::AtomicBool::new(false),
            capture: Mutex::new(None),
            in_capture: std::sync::atomic::AtomicBool::new(false),
            position: Mutex::new(Recorded::default()),
            generation: std::sync::atomic::AtomicU64::new(0),
            waiter: std::sync::OnceLock::new(),
            replayed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The device the event belongs to.
    pub(crate) fn device(&self) -> &Device {
        &self.device
    }

    /// The raw handle. It stays owned by this `Event`.
    pub fn raw(&self) -> sys::hipEvent_t {
        self.raw
    }

    /// Whether this event records timestamps.
    pub fn has_timing(&self) -> bool {
        self.timing
    }

    /// Record the event on `stream`: it completes when all work queued there so far does. The stream must
    /// be on the event's device, which is made current for the call.
    ///
    /// # Errors
    ///
    /// [`Error::DeviceMismatch`] for a stream of another device, and what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, x: &mut DeviceBuffer<u8>, event: &Event) -> hip::Result<()> {
    /// stream.fill_async(x, 0)?;
    /// event.record(stream)?; // completes once the fill does
    /// # Ok(()) }
    /// ```
    pub fn record(&self, stream: &Stream) -> Result<()> {
        same_device("Event::record", stream.device(), &self.device)?;
        // Held to the end: the capture state read below is the one the record was made in.
        let op = stream.begin_op();
        self.device.bind()?;
        // Held across the record: a wait, query or synchronize that snapshots the position before its
        // HIP call and finds the same generation after it bound to this very record (see `Recorded`).
        let mut position = lock(&self.position);
        // SAFETY: `self.raw` is live until Drop; `stream.raw()` is live while `stream` is borrowed (or null,
        // the device's default stream); both belong to the event's device (checked above), which `bind`
        // made current.
        unsafe { result::event_record(self.raw, stream.raw()) }?;
        position.generation += 1;
        position.learnt = false;
        if op.is_capturing() || self.replayed.load(std::sync::atomic::Ordering::Relaxed) {
            position.at = None;
        } else {
            let queue = &stream.handle().queue;
            match &mut position.at {
                // Recorded on the same stream as last time: the same queue (a `Weak` keeps its
                // allocation, so no other queue can have its address), only the label moves.
                Some(at) if std::ptr::eq(at.queue.as_ptr(), Arc::as_ptr(queue)) => {
                    at.label = op.label();
                }
                at => {
                    *at = Some(RecordedAt {
                        queue: Arc::downgrade(queue),
                        completion: queue.completion.clone(),
                        label: op.label(),
                    })
                }
            }
        }
        self.generation
            .store(position.generation, std::sync::atomic::Ordering::Release);
        drop(position);
        // Only a record on a capturing stream (or the first one after) touches the capture slot: plain
        // records stay as cheap as HIP's.
        if op.is_capturing() || self.in_capture.load(std::sync::atomic::Ordering::Relaxed) {
            self.note_capture(op);
        }
        self.recorded
            .store(true, std::sync::atomic::Ordering::Release);
        Ok(())
    }

    /// Keep the capture `op` records in (if any) as this event's: a record in a capture, or the first
    /// one after. Out of line: plain records never come here.
    #[cold]
    #[inline(never)]
    fn note_capture(&self, op: StreamOp<'_>) {
        let log = op.capture_log();
        self.in_capture
            .store(log.is_some(), std::sync::atomic::Ordering::Relaxed);
        let old = std::mem::replace(&mut *lock(&self.capture), log);
        // The old capture's log may hold the last owners of buffers, whose frees begin operations on
        // their streams (this one among them): never while `op` is held.
        drop(op);
        drop(old);
    }

    /// From now on a graph replay may record this event: forget the last live record's position and
    /// never keep another (see `replayed`). A wait, query or synchronize that took its snapshot before
    /// this finds another generation and learns nothing.
    /// It also counts as recorded for [`Event::elapsed_ms`] from now on: a replay records it where this
    /// crate does not see it (before the first one, HIP answers for the unrecorded event).
    pub(crate) fn mark_replayed(&self) {
        let mut position = lock(&self.position);
        self.replayed
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.recorded
            .store(true, std::sync::atomic::Ordering::Release);
        position.generation += 1;
        position.learnt = false;
        position.at = None;
        self.generation
            .store(position.generation, std::sync::atomic::Ordering::Release);
    }

    /// The capture this event was recorded in, if any.
    pub(crate) fn capture_log(&self) -> Option<Arc<CaptureLog>> {
        if !self.in_capture.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        lock(&self.capture).clone()
    }

    /// The generation of the last record, and its queue and label if it was live and the queue is
    /// still alive. Take it before a HIP call on the event, and use the position only if
    /// [`is_generation`](Self::is_generation) still answers `true` after the call.
    pub(crate) fn position(&self) -> (u64, Option<(Arc<Queue>, u64)>) {
        let p = lock(&self.position);
        let at =
            p.at.as_ref()
                .and_then(|at| Some((at.queue.upgrade()?, at.label)));
        (p.generation, at)
    }

    /// Whether the last record is still the one of `generation`: no record began or ended since. A
    /// record holds the lock across its HIP call, so a HIP call on the event made between a
    /// [`position`](Self::position) and a `true` answer here bound to that record.
    pub(crate) fn is_generation(&self, generation: u64) -> bool {
        lock(&self.position).generation == generation
    }

    /// The stream that waits for this event for `Event::completion`: a non-blocking stream of the event's
    /// device, made on the first call and kept with the event.
    pub(crate) fn waiter(&self) -> Result<&Stream> {
        if let Some(s) = self.waiter.get() {
            return Ok(s);
        }
        let s = Stream::non_blocking(&self.device)?;
        Ok(self.waiter.get_or_init(|| s))
    }

    /// A HIP call made after reading `generation` from the mirror (a query or synchronize) found the
    /// event complete: the record of that generation is, and the memory model never waits for its work
    /// again. Nothing is learnt if the event was recorded again meanwhile: the call may have seen the
    /// newer record, which says nothing of the older one's stream. The position is looked up now, under
    /// the lock: a record holds it from its HIP call to the generation's update, so finding the same
    /// generation means the call saw this record (see `Recorded`). Once learnt, later calls for the same
    /// record learn nothing new and stop at the lock. The stream's [`Completion`] learns it without the
    /// queue (no upgrade of its `Weak`); the queue itself is looked up only when it has other streams'
    /// completion to pass on.
    fn completed_since(&self, generation: u64) {
        let mut p = lock(&self.position);
        if p.generation != generation || p.learnt {
            return;
        }
        p.learnt = true;
        let Some(at) = &p.at else {
            return;
        };
        if at.completion.learn(at.label) {
            let (queue, label) = (at.queue.upgrade(), at.label);
            drop(p);
            if let Some(queue) = queue {
                queue.complete_implied(label);
            }
        }
    }

    /// Whether the recorded work is done, without blocking (`hipEventQuery`). An event never recorded
    /// counts as done.
    ///
    /// # Errors
    ///
    /// What HIP returns for `hipEventQuery` other than "not ready" (`false`): an error of the work the
    /// event waits for.
    ///
    /// ```no_run
    /// # fn f(event: &hip::Event) -> hip::Result<()> {
    /// if !event.query()? {
    ///     println!("still running");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn query(&self) -> Result<bool> {
        // Before the HIP call: see `Recorded` (the mirror is stored under the lock with the generation).
        let generation = self.generation.load(std::sync::atomic::Ordering::Acquire);
        // SAFETY: `self.raw` is live until Drop (created in `with_flags`, destroyed only there).
        let done = unsafe { result::event_query(self.raw) }?;
        if done {
            self.completed_since(generation);
        }
        Ok(done)
    }

    /// Block until the recorded work is done.
    ///
    /// # Errors
    ///
    /// What HIP returns for the wait: an error of the work it waited for.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, x: &mut DeviceBuffer<u32>) -> hip::Result<()> {
    /// stream.fill_async(x, 3)?;
    /// let filled = stream.record_event()?;
    /// filled.synchronize()?; // blocks until the fill is done, not the work queued after it
    /// # Ok(()) }
    /// ```
    pub fn synchronize(&self) -> Result<()> {
        // As in `query`: the generation before the HIP call, the position after it.
        let generation = self.generation.load(std::sync::atomic::Ordering::Acquire);
        // SAFETY: as in `query`.
        unsafe { result::event_synchronize(self.raw) }?;
        self.completed_since(generation);
        Ok(())
    }

    /// Milliseconds from `self` (recorded first) to `end`. Both need timing
    /// ([`Error::TimingDisabled`]), both must have been recorded ([`Error::EventNotRecorded`]) and have
    /// completed (HIP's `hipErrorNotReady` otherwise).
    ///
    /// # Errors
    ///
    /// [`Error::TimingDisabled`] unless both events were created with timing, [`Error::EventNotRecorded`]
    /// unless both were recorded (live, or given to a graph's [`record_event`](crate::GraphBuilder::record_event)
    /// node: HIP answers for one whose graph has not run yet), and what HIP returns (`hipErrorNotReady`
    /// while one has not completed).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream, x: &mut DeviceBuffer<u32>) -> hip::Result<()> {
    /// let (start, end) = (Event::with_timing(device)?, Event::with_timing(device)?);
    /// start.record(stream)?;
    /// stream.fill_async(x, 1)?;
    /// end.record(stream)?;
    /// end.synchronize()?; // both complete: the time can be read
    /// let ms = start.elapsed_ms(&end)?;
    /// # Ok(()) }
    /// ```
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        if !self.timing || !end.timing {
            return Err(Error::TimingDisabled);
        }
        for (event, which) in [(self, "start"), (end, "end")] {
            if !event.recorded.load(std::sync::atomic::Ordering::Acquire) {
                return Err(Error::EventNotRecorded { which });
            }
        }
        // SAFETY: both handles are live until their events drop, and both borrows outlive the call.
        unsafe { result::event_elapsed_time(self.raw, end.raw) }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        let (raw, device) = (RawHandle(self.raw), self.device.clone());
        // Inside a host function (no HIP call allowed there) on the releasing thread.
        crate::release::now_or_later(move || {
            let _ = device.bind();
            // SAFETY: the event was created in `with_flags` (or opened, `ForeignEvent::open`: an opened
            // event is destroyed the same way) and is destroyed only here, once, so `raw`
            // is live and this crate never uses it again. Waits queued on it may still be pending: HIP
            // allows destroying such an event (it is released once they complete).
            let _ = unsafe { result::event_destroy(raw.get()) };
        });
    }
}

/// An event's last record: how many records were made (the generation), and where the last live one
/// stands (its queue and label; `None` if it was recorded inside a capture, or never).
///
/// `Event::record` holds the lock across `hipEventRecord` and the update. A caller that takes
/// (generation, position) before its own HIP call on the event (a wait, query or synchronize) and finds
/// the same generation after it knows its call saw that record: a record that began before the snapshot
/// ended before it, and one that began after the snapshot and before the HIP call changed the generation
/// before the check. So the memory model learns only orders the GPU gives.
#[derive(Debug, Default)]
struct Recorded {
    generation: u64,
    at: Option<RecordedAt>,
    /// The memory model already learnt that this record completed ([`Event::query`]).
    learnt: bool,
}

/// Where a live record stands: its stream's queue (weakly: the event does not keep a stream's state
/// alive), that queue's [`Completion`] (what a completed query teaches), and the record's label.
#[derive(Debug)]
struct RecordedAt {
    queue: Weak<Queue>,
    completion: Arc<Completion>,
    label: u64,
}

/// Refuse work whose stream and memory (or event) are on different devices.
#[inline]
pub(crate) fn same_device(what: &'static str, stream: &Device, other: &Device) -> Result<()> {
    if stream.ordinal() == other.ordinal() {
        Ok(())
    } else {
        Err(device_mismatch(what, stream, other))
    }
}

#[cold]
#[inline(never)]
fn device_mismatch(what: &'static str, stream: &Device, other: &Device) -> Error {
    Error::DeviceMismatch {
        what,
        stream: stream.ordinal(),
        other: other.ordinal(),
    }
}

/// Ordering streams by events: here, beside [`Event`], so that `stream.rs` stays below events.
impl Stream {
    /// Make work queued on this stream from now on wait until `event` completes. The event may belong to
    /// another device; the stream's device is made current for the call.
    ///
    /// An event recorded on a stream being captured makes this stream join that capture (HIP's fork
    /// pattern): its later work is recorded into the same graph until the capture ends, and must be joined
    /// back (an event recorded here, waited for by the capturing stream) before [`Capture::end`](crate::Capture::end).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an event recorded in a capture that has ended, or in another capture
    /// than the one recording this stream; otherwise [`Error::Hip`] with what HIP returns for making the
    /// device current and for `hipStreamWaitEvent`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(a: &Stream, b: &Stream) -> hip::Result<()> {
    /// // Work this crate cannot see (raw calls, kernels writing through raw pointers) queued on `a`...
    /// let ready = a.record_event()?;
    /// b.wait_event(&ready)?; // ...comes before what is queued on `b` from now on
    /// # Ok(()) }
    /// ```
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.device().bind()?;
        // SAFETY: this live stream (as in `synchronize`) of the current device, and `event`, live while
        // borrowed; HIP accepts an event of another device.
        let wait = || unsafe { result::stream_wait_event(self.raw(), event.raw()) };
        match event.capture_log() {
            Some(log) => self.handle().join_capture(&log, wait),
            None => {
                let op = self.begin_op();
                let (generation, position) = event.position();
                wait()?;
                // The memory model learns the order: this stream's later work needs no wait for the
                // event's stream up to the event. Only if no record came between the snapshot and the
                // wait: HIP binds the wait to the record current when it is queued, which is then the
                // snapshot's (a record racing on another thread teaches nothing, and later uses wait).
                if let (false, Some((queue, pos))) = (op.is_capturing(), position) {
                    if event.is_generation(generation) {
                        self.handle().queue.learn(&queue, pos, op.label());
                    }
                }
                Ok(())
            }
        }
    }

    /// Record a fresh event on this stream: it completes when the work queued so far does. The event has
    /// no timing ([`Event::new`]).
    ///
    /// # Errors
    ///
    /// What [`Event::new`] and [`Event::record`] return: [`Error::Hip`] with what HIP returns for the
    /// creation and the record.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, x: &mut DeviceBuffer<u32>) -> hip::Result<()> {
    /// stream.fill_async(x, 9)?;
    /// let filled = stream.record_event()?;
    /// filled.synchronize()?;
    /// # Ok(()) }
    /// ```
    pub fn record_event(&self) -> Result<Event> {
        let event = Event::new(self.device())?;
        event.record(self)?;
        Ok(event)
    }
}
