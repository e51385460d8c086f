//! Streams: ordered queues of device work.

use crate::device::Device;
use crate::error::{Error, Result};
pub(crate) use crate::queue::lock;
pub(crate) use capture::CaptureLog;

mod capture;
mod info;
use crate::queue::Queue;
use crate::release::RawHandle;
use crate::result;
use hip_sys as sys;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The owner of a raw stream handle: destroys it (when owned) once the [`Stream`] and everything that
/// may still queue work on it are gone: a buffer freed in stream order
/// ([`DeviceBuffer::alloc_async`](crate::DeviceBuffer::alloc_async)) and every allocation that records
/// this stream as a user (the memory model may record a marker here, or wait on one, until that use is
/// known complete).
///
/// It also holds the stream's [`Queue`]: the labels, markers and knowledge of the memory model.
pub(crate) struct StreamHandle {
    pub(crate) raw: sys::hipStream_t,
    pub(crate) device: Device,
    owned: bool,
    /// Unique for the life of the process, unlike `raw`: HIP reuses a destroyed stream's handle address for
    /// the next stream, so an address cannot say which stream queued earlier work.
    pub(crate) id: u64,
    /// Labels, markers and what is known complete: the memory model's view of this stream.
    pub(crate) queue: Arc<Queue>,
    /// Set while a capture made by this crate records this stream's work (its own, or joined through an
    /// event): operations then go to `capture` instead of the memory model's live state.
    capturing: AtomicBool,
    capture: Mutex<Option<Arc<CaptureLog>>>,
    // The stream's operation gate is the queue's (`Queue::close_gate`): held by each operation from its
    // capture check to its last HIP call ([`StreamOp`]), and while a capture begins or ends on this
    // stream. So an operation is wholly live (ordered by the memory model) or wholly captured (recorded
    // in the capture), never checked as one and queued as the other because another thread began or
    // ended a capture in between; and operations on one stream get their labels in the order their HIP
    // calls are queued. One word with the queued label: taken by a compare-and-swap, opened (and the
    // holder's label published as queued) by one store; others spin briefly, then sleep (an operation
    // usually holds it for a few HIP calls, but a blocking synchronous copy holds it for the whole
    // copy). Re-entrant on the thread that holds it: an operation whose error path drops a buffer freed
    // on the same stream takes it again.
}

/// An operation in progress on a stream (see [`StreamHandle::begin_op`]): while it lives no capture begins
/// or ends on the stream, so what [`StreamOp::is_capturing`] answers holds for the HIP calls made under it.
/// Take it before the first check and keep it past the operation's last HIP call; never take a second one
/// for the same stream on the same thread while holding it.
pub(crate) struct StreamOp<'a> {
    handle: &'a Arc<StreamHandle>,
    /// Whether this operation took the gate (`false` inside another operation on the same thread: the
    /// outer one publishes and releases).
    owns_gate: bool,
    label: u64,
    /// Whether a use was stamped with `label`: the operation then records a marker when it ends.
    touched: Cell<bool>,
}

impl<'a> StreamOp<'a> {
    /// The stream the operation runs on.
    #[inline]
    pub(crate) fn handle(&self) -> &'a Arc<StreamHandle> {
        self.handle
    }

    /// Whether the operation is being captured (stable while `self` lives).
    #[inline]
    pub(crate) fn is_capturing(&self) -> bool {
        self.handle.is_capturing()
    }

    /// The capture recording the operation, if any (stable while `self` lives).
    pub(crate) fn capture_log(&self) -> Option<Arc<CaptureLog>> {
        self.handle.capture_log()
    }

    /// The operation's label: its position in the stream's queue.
    #[inline]
    pub(crate) fn label(&self) -> u64 {
        self.label
    }

    /// A use was stamped with this operation's label: record a marker after it (see [`Queue`]).
    #[inline]
    pub(crate) fn touch(&self) {
        self.touched.set(true);
    }

    /// The operation's work is complete (a synchronous call returned after it ran): the host knows it,
    /// and its label counts as queued though the gate stays closed until the operation ends.
    pub(crate) fn completed(&self) {
        self.handle.queue.mark_queued(self.label);
        self.handle.queue.complete_through(self.label);
    }
}

impl Drop for StreamOp<'_> {
    // Inline: what every operation ends with is a few stores and loads when no one waits.
    #[inline]
    fn drop(&mut self) {
        if !self.owns_gate {
            return;
        }
        let queue = &self.handle.queue;
        if self.touched.get() && Queue::markers_wanted() {
            queue.record_marker(self.label, self.handle.is_capturing());
        }
        // Publishes this operation's label as queued, with the gate.
        queue.open_gate();
    }
}

/// A token unique to the calling thread among live threads (never 0), for the gate: the address of a
/// thread-local (a constant-initialised one: reading it is one instruction).
#[inline]
fn thread_token() -> u64 {
    thread_local!(static TOKEN: u8 = const { 0 });
    TOKEN.with(|t| t as *const u8 as u64)
}
// SAFETY: `raw` is a stream handle, passed only to HIP calls, which accept a stream from any thread (HIP
// synchronises its stream objects internally); the rest is `Device` (Send + Sync), plain data, the
// `Queue` (Send + Sync), atomics and a mutex.
unsafe impl Send for StreamHandle {}
// SAFETY: as for Send: shared access only reads `raw`, `device`, `owned` and `id`, or goes through the
// `Queue` (whose gate word is taken by compare-and-swap with acquire ordering and released with a SeqCst
// store, so what one holder did under it is visible to the next), the `capturing` flag and the `capture`
// mutex. Nothing here is a `Cell`: no unsynchronised interior mutability.
unsafe impl Sync for StreamHandle {}

impl std::fmt::Debug for StreamHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamHandle")
            .field("raw", &self.raw)
            .field("device", &self.device.ordinal())
            .field("id", &self.id)
            .finish()
    }
}

impl StreamHandle {
    fn new(raw: sys::hipStream_t, device: &Device, owned: bool) -> Arc<StreamHandle> {
        let id = next_id();
        Arc::new(StreamHandle {
            raw,
            device: device.clone(),
            owned,
            id,
            queue: Queue::new(raw, device, id),
            capturing: AtomicBool::new(false),
            capture: Mutex::new(None),
        })
    }

    /// The handle of `device`'s null stream, for [`Device`]'s own cache.
    pub(crate) fn null(device: &Device) -> Arc<StreamHandle> {
        Self::new(std::ptr::null_mut(), device, false)
    }

    /// Whether a capture made by this crate records this stream now.
    #[inline]
    pub(crate) fn is_capturing(&self) -> bool {
        self.capturing.load(Ordering::Acquire)
    }

    /// Start an operation on this stream: see [`StreamOp`]. Waits while another thread's operation, or a
    /// capture's start or end, holds the gate.
    #[inline]
    pub(crate) fn begin_op(self: &Arc<Self>) -> StreamOp<'_> {
        if !self.queue.close_gate(thread_token()) {
            // Inside an operation of this thread on this stream: the same position in the queue (the
            // outer operation's label, the last one handed out, since this thread holds the gate).
            return StreamOp {
                handle: self,
                owns_gate: false,
                label: self.queue.last_label(),
                touched: Cell::new(false),
            };
        }
        StreamOp {
            handle: self,
            label: self.queue.next_label(),
            owns_gate: true,
            touched: Cell::new(false),
        }
    }

    /// The gate if it is free now (`None` when any thread, this one included, holds it): while the guard
    /// lives no operation is between its check and its HIP calls, and no capture of this crate begins or
    /// ends on the stream. For a thread that must not wait behind a long operation (the futures'
    /// reactor, which asks the stream for its error state only outside a capture).
    pub(crate) fn try_close_gate(&self) -> Option<GateGuard<'_>> {
        // `then`, not `then_some`: a guard made when the gate was not taken would open it on drop.
        self.queue
            .try_close_gate(thread_token())
            .then(|| GateGuard {
                handle: self,
                owned: true,
            })
    }

    /// Exclusive use of the gate: no operation is between its check and its HIP calls.
    fn close_gate(&self) -> GateGuard<'_> {
        let owned = self.queue.close_gate(thread_token());
        GateGuard {
            handle: self,
            owned,
        }
    }
}

/// The gate held by a capture's start or end, released on drop (unless it was held already).
pub(crate) struct GateGuard<'a> {
    handle: &'a StreamHandle,
    owned: bool,
}

impl Drop for GateGuard<'_> {
    fn drop(&mut self) {
        if self.owned {
            self.handle.queue.open_gate();
        }
    }
}

impl Drop for StreamHandle {
    fn drop(&mut self) {
        // Destroying a stream with queued work is allowed: HIP finishes the work first. An error here
        // has nowhere to go and must not panic. The queue's markers go with the queue.
        if !self.owned {
            return;
        }
        let (raw, device) = (RawHandle(self.raw), self.device.clone());
        // Inside a host function (no HIP call allowed there) on the releasing thread.
        crate::release::now_or_later(move || {
            let _ = device.bind();
            // SAFETY: the stream was created by `Stream::create` and destroyed only here, once; no Arc of
            // its handle is left, so nothing can queue on it again. Work still queued on it completes
            // (hipStreamDestroy does not cancel it).
            let _ = unsafe { result::stream_destroy(raw.get()) };
        });
    }
}

/// A HIP stream on one device: a queue of GPU work that runs in order.
///
/// Work queued on one stream runs in the order it was queued; work on different streams may overlap.
/// Every operation of this crate that takes a stream returns once the work is queued; the `_async` names
/// say so. The stream is the receiver or the first argument (`rccl`'s collectives alone keep NCCL's
/// order, the stream last). Safe code still sees program order across
/// streams: each operation first makes its stream wait, on the GPU, for the work of other streams that
/// conflicts with it on the same memory (the memory model, in the crate root and [`crate::memory`]).
/// So two streams may share a buffer with no event or synchronize of your own, and work that touches
/// different memory overlaps.
///
/// Created streams are destroyed on drop, after the work queued on them is done (the drop does not block
/// the thread: a releasing thread waits); the default stream and streams wrapped with
/// [`Stream::from_raw`] are not owned and are left alone. `Send + Sync`.
///
/// ```no_run
/// use hip::prelude::*;
///
/// let device = Device::get(0)?;
/// let (a, b) = (Stream::new(&device)?, Stream::non_blocking(&device)?);
/// let host = PinnedBuffer::from_slice(&device, &[1u32, 2, 3, 4])?;
/// let mut x = DeviceBuffer::<u32>::zeroed(&device, 4)?;
/// let mut y = DeviceBuffer::<u32>::zeroed(&device, 4)?;
/// a.copy_from_host_async(&host, &mut x)?; // queued on `a`
/// b.copy_device_async(&x, &mut y)?; // `b` waits for the copy on `a` (it reads x): no event needed
/// b.synchronize()?;
/// assert_eq!(y.to_vec()?, [1, 2, 3, 4]);
/// # Ok::<(), hip::Error>(())
/// ```
#[derive(Debug)]
pub struct Stream {
    raw: sys::hipStream_t,
    device: Device,
    /// Shared with what must outlive the stream's handle (a buffer freed in stream order, an allocation
    /// last used here): the handle is destroyed when the last clone goes.
    handle: Arc<StreamHandle>,
}

/// A process-wide unique stream id (a u64 counter cannot wrap in practice: 2^64 creations).
fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

// SAFETY: a hipStream_t is a handle to a runtime object that HIP synchronises internally: the API may be
// called on one stream from several threads. The other fields are `Device` and `Arc<StreamHandle>`, both
// Send + Sync; the handle (and the raw stream, when owned) is destroyed only when the last Arc goes,
// whichever thread that is.
unsafe impl Send for Stream {}
// SAFETY: as for Send; `&Stream` exposes only the handle value and HIP calls on it.
unsafe impl Sync for Stream {}

impl Stream {
    /// A new blocking stream (synchronises with the default stream) of default priority
    /// (`hipStreamCreateWithPriority`).
    ///
    /// # Errors
    ///
    /// What HIP returns for the creation (out of resources); [`Error::NoDevice`] where the device is gone.
    ///
    /// ```no_run
    /// let device = hip::Device::get(0)?;
    /// let stream = hip::Stream::new(&device)?;
    /// stream.synchronize()?; // nothing queued yet: returns at once
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn new(device: &Device) -> Result<Stream> {
        Self::create(device, sys::hipStreamDefault, 0)
    }

    /// A new non-blocking stream: work on it does not wait for the default stream
    /// (`hipStreamNonBlocking`), of default priority.
    ///
    /// # Errors
    ///
    /// As [`Stream::new`]: [`Error::Hip`] with what HIP returns for making the device current and for
    /// the creation (out of resources).
    ///
    /// ```no_run
    /// let device = hip::Device::get(0)?;
    /// let stream = hip::Stream::non_blocking(&device)?;
    /// assert!(!stream.is_default());
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn non_blocking(device: &Device) -> Result<Stream> {
        Self::create(device, sys::hipStreamNonBlocking, 0)
    }

    /// A new stream with a priority from [`Stream::priority_range`] (lower numbers are higher priority),
    /// blocking or not. A priority outside the range is [`Error::InvalidArgument`] naming the range (HIP
    /// would clamp it silently).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a priority outside [`Stream::priority_range`]; what HIP returns for
    /// the range query and the creation.
    ///
    /// ```no_run
    /// let device = hip::Device::get(0)?;
    /// let (_least, greatest) = hip::Stream::priority_range(&device)?;
    /// let urgent = hip::Stream::with_priority(&device, greatest, true)?; // non-blocking
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn with_priority(device: &Device, priority: i32, non_blocking: bool) -> Result<Stream> {
        let (least, greatest) = Self::priority_range(device)?;
        if priority < greatest.min(least) || priority > greatest.max(least) {
            return Err(Error::InvalidArgument {
                what: "stream priority",
                value: priority.to_string(),
                reason: format!(
                    "device {} takes priorities from {least} (least) to {greatest} (greatest)",
                    device.ordinal()
                ),
            });
        }
        let flags = if non_blocking {
            sys::hipStreamNonBlocking
        } else {
            sys::hipStreamDefault
        };
        Self::create(device, flags, priority)
    }

    /// The device's stream priorities as `(least, greatest)`; the greatest priority is the smallest number
    /// (`hipDeviceGetStreamPriorityRange`).
    ///
    /// # Errors
    ///
    /// What HIP returns for making the device current and for the query ([`Error::Hip`]).
    ///
    /// ```no_run
    /// let device = hip::Device::get(0)?;
    /// let (least, greatest) = hip::Stream::priority_range(&device)?;
    /// println!("priorities {greatest} (first) to {least}");
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn priority_range(device: &Device) -> Result<(i32, i32)> {
        device.bind()?;
        result::stream_priority_range()
    }

    fn create(device: &Device, flags: u32, priority: i32) -> Result<Stream> {
        device.bind()?;
        let raw = result::stream_create(flags, priority)?;
        Ok(Stream {
            raw,
            device: device.clone(),
            handle: StreamHandle::new(raw, device, true),
        })
    }

    /// The device's null stream, sharing one handle (one identity for the memory model) per [`Device`].
    pub(crate) fn default_for(device: &Device) -> Stream {
        Stream {
            raw: std::ptr::null_mut(),
            device: device.clone(),
            handle: device.null_stream(),
        }
    }

    /// Wrap a stream created elsewhere, without taking ownership: dropping the wrapper leaves it alone.
    ///
    /// # Safety
    /// `raw` is a live stream of `device` (or null, the default stream), and it stays live as long as the
    /// wrapper and as long as any memory used through the wrapper is tracked with it as its last user:
    /// the memory model may record an event on `raw` until that memory is used on another stream, waited
    /// for by the host, or dropped. It is not being captured by a capture made
    /// outside this crate.
    pub unsafe fn from_raw(device: &Device, raw: sys::hipStream_t) -> Stream {
        Stream {
            raw,
            device: device.clone(),
            handle: StreamHandle::new(raw, device, false),
        }
    }

    /// The raw handle, for calls this crate does not wrap. It stays owned by this `Stream`.
    pub fn raw(&self) -> sys::hipStream_t {
        self.raw
    }

    /// The device this stream belongs to.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// This wrapper's id, unique in the process: never shared with another `Stream`, even one that gets the
    /// same raw handle after this one is destroyed (two wrappers of one raw stream have two ids).
    pub fn id(&self) -> u64 {
        self.handle.id
    }

    /// Whether this is the device's default (null) stream.
    pub fn is_default(&self) -> bool {
        self.raw.is_null()
    }

    /// Block the calling thread until all work queued on this stream is done (`hipStreamSynchronize`).
    /// Rarely needed for correctness: reads of this crate already wait for the writers they read (the
    /// memory model). In async code, await [`Stream::completion`] instead of blocking a thread.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] while a [`Capture`](crate::graph::Capture) records the stream (HIP
    /// would invalidate the capture); otherwise an error of the queued work (a kernel that faulted is
    /// reported here, as HIP reports it: the device is then unusable).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, x: &mut DeviceBuffer<u32>) -> hip::Result<()> {
    /// stream.fill_async(x, 1)?;
    /// stream.synchronize()?; // the fill is done
    /// # Ok(()) }
    /// ```
    pub fn synchronize(&self) -> Result<()> {
        self.refuse_while_capturing("synchronize")?;
        let queued = self.handle.queue.queued();
        self.device.bind()?;
        // SAFETY: `self.raw` is live while `self` is (owned through `handle`, or kept live by
        // `from_raw`'s contract), or null for the default stream; its device is current.
        unsafe { result::stream_synchronize(self.raw) }?;
        // Completed work is never waited for again (docs/MEMORY_MODEL.md).
        self.handle.queue.complete_through(queued);
        Ok(())
    }

    /// Whether all work queued so far is done, without blocking. Refused while capturing, like
    /// [`Stream::synchronize`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] while a [`Capture`](crate::graph::Capture) records the stream; otherwise
    /// what HIP returns for `hipStreamQuery` other than "not ready" (`false`): an error of the queued
    /// work.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, x: &mut DeviceBuffer<u32>) -> hip::Result<()> {
    /// stream.fill_async(x, 1)?;
    /// while !stream.query()? {
    ///     std::thread::yield_now(); // other host work here
    /// }
    /// # Ok(()) }
    /// ```
    pub fn query(&self) -> Result<bool> {
        self.refuse_while_capturing("query")?;
        let queued = self.handle.queue.queued();
        self.device.bind()?;
        // SAFETY: as in `synchronize`.
        let done = unsafe { result::stream_query(self.raw) }?;
        if done {
            self.handle.queue.complete_through(queued);
        }
        Ok(done)
    }
}

impl Stream {
    /// A `Stream` sharing `handle` (a library handle's stream, for work it queues itself).
    #[cfg_attr(not(feature = "rand"), allow(dead_code))]
    pub(crate) fn from_handle(handle: &Arc<StreamHandle>) -> Stream {
        Stream {
            raw: handle.raw,
            device: handle.device.clone(),
            handle: Arc::clone(handle),
        }
    }

    pub(crate) fn handle(&self) -> &Arc<StreamHandle> {
        &self.handle
    }

    /// Start an operation on this stream (see [`StreamOp`]).
    #[inline]
    pub(crate) fn begin_op(&self) -> StreamOp<'_> {
        self.handle.begin_op()
    }

    /// Whether a [`Capture`](crate::graph::Capture) made by this crate is recording this stream now (its
    /// own, or one this stream joined by waiting on an event recorded in it).
    pub fn is_capturing(&self) -> bool {
        self.handle.is_capturing()
    }

    fn refuse_while_capturing(&self, op: &'static str) -> Result<()> {
        if self.is_capturing() {
            return Err(Error::InvalidArgument {
                what: "operation on a capturing stream",
                value: op.to_string(),
                reason: format!(
                    "stream {} is being captured into a graph; a {op} cannot be captured (it would \
                     invalidate the capture): end the capture first",
                    self.id()
                ),
            });
        }
        Ok(())
    }
}

/// The null stream, here beside [`Stream`] so that `device.rs` stays below streams.
impl Device {
    /// The device's default (null) stream.
    pub fn default_stream(&self) -> Stream {
        Stream::default_for(self)
    }

    /// The handle of this device's null stream, one per ordinal in the process (every `Device` of an
    /// ordinal shares it), so the memory model sees the synchronous operations of all of them as one
    /// stream. Kept for the life of the process.
    pub(crate) fn null_stream(&self) -> Arc<StreamHandle> {
        static NULL: Mutex<Vec<Option<Arc<StreamHandle>>>> = Mutex::new(Vec::new());
        let mut table = lock(&NULL);
        let i = self.ordinal();
        if table.len() <= i {
            table.resize(i + 1, None);
        }
        table[i]
            .get_or_insert_with(|| StreamHandle::null(self))
            .clone()
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
