//! Streams: ordered queues of device work.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::result;
use hip_sys as sys;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The owner of a raw stream handle: destroys it (when owned) once the [`Stream`] and everything that
/// queues work on it in its own `Drop` (see [`DeviceBuffer::alloc_async`](crate::DeviceBuffer::alloc_async))
/// are gone.
#[derive(Debug)]
pub(crate) struct StreamHandle {
    pub(crate) raw: sys::hipStream_t,
    pub(crate) device: Device,
    owned: bool,
}

// SAFETY: as for Stream below.
unsafe impl Send for StreamHandle {}
unsafe impl Sync for StreamHandle {}

impl StreamHandle {
    fn new(raw: sys::hipStream_t, device: &Device, owned: bool) -> Arc<StreamHandle> {
        Arc::new(StreamHandle {
            raw,
            device: device.clone(),
            owned,
        })
    }
}

impl Drop for StreamHandle {
    fn drop(&mut self) {
        if self.owned {
            // Destroying a stream with queued work is allowed: HIP finishes the work first. An error here
            // has nowhere to go and must not panic.
            let _ = self.device.bind();
            let _ = unsafe { result::stream_destroy(self.raw) };
        }
    }
}

/// A HIP stream on one device.
///
/// Created streams are destroyed on drop; the default stream and streams wrapped with
/// [`Stream::from_raw`] are not owned and are left alone.
#[derive(Debug)]
pub struct Stream {
    raw: sys::hipStream_t,
    device: Device,
    /// Shared with what must outlive the stream's handle (a buffer freed in stream order holds a clone):
    /// the handle is destroyed when the last clone goes.
    handle: Arc<StreamHandle>,
    /// Set while a [`Capture`](crate::graph::Capture) records this stream's work.
    pub(crate) capturing: AtomicBool,
    /// Unique for the life of the process, unlike `raw`: HIP reuses a destroyed stream's handle address for
    /// the next stream, so an address cannot say which stream queued earlier work.
    id: u64,
}

/// A process-wide unique stream id (a u64 counter cannot wrap in practice: 2^64 creations).
fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

// SAFETY: a hipStream_t is a handle to a runtime object that HIP synchronises internally; the API may be
// called on one stream from several threads.
unsafe impl Send for Stream {}
unsafe impl Sync for Stream {}

impl Stream {
    /// A new blocking stream (synchronises with the default stream) of default priority.
    pub fn new(device: &Device) -> Result<Stream> {
        Self::create(device, sys::hipStreamDefault, 0)
    }

    /// A new non-blocking stream: work on it does not wait for the default stream.
    pub fn non_blocking(device: &Device) -> Result<Stream> {
        Self::create(device, sys::hipStreamNonBlocking, 0)
    }

    /// A new stream with a priority from [`Stream::priority_range`] (lower numbers are higher priority),
    /// blocking or not. A priority outside the range is [`Error::InvalidArgument`] naming the range (HIP
    /// would clamp it silently).
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

    /// The device's stream priorities as `(least, greatest)`; the greatest priority is the smallest number.
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
            capturing: AtomicBool::new(false),
            id: next_id(),
        })
    }

    pub(crate) fn default_for(device: &Device) -> Stream {
        Stream {
            raw: std::ptr::null_mut(),
            device: device.clone(),
            handle: StreamHandle::new(std::ptr::null_mut(), device, false),
            capturing: AtomicBool::new(false),
            id: next_id(),
        }
    }

    /// Wrap a stream created elsewhere, without taking ownership: dropping the wrapper leaves it alone.
    ///
    /// # Safety
    /// `raw` is a live stream of `device` (or null, the default stream) and outlives the wrapper.
    pub unsafe fn from_raw(device: &Device, raw: sys::hipStream_t) -> Stream {
        Stream {
            raw,
            device: device.clone(),
            handle: StreamHandle::new(raw, device, false),
            capturing: AtomicBool::new(false),
            id: next_id(),
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
        self.id
    }

    /// Whether this is the device's default (null) stream.
    pub fn is_default(&self) -> bool {
        self.raw.is_null()
    }

    /// Block until all work queued on this stream is done. While a [`Capture`](crate::graph::Capture) records
    /// the stream this is [`Error::InvalidArgument`] (HIP would invalidate the capture).
    pub fn synchronize(&self) -> Result<()> {
        self.refuse_while_capturing("synchronize")?;
        self.device.bind()?;
        unsafe { result::stream_synchronize(self.raw) }
    }

    /// Whether all work queued so far is done, without blocking. Refused while capturing, like
    /// [`Stream::synchronize`].
    pub fn query(&self) -> Result<bool> {
        self.refuse_while_capturing("query")?;
        self.device.bind()?;
        unsafe { result::stream_query(self.raw) }
    }

    /// Make work queued on this stream from now on wait until `event` completes. The event may belong to
    /// another device; the stream's device is made current for the call.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.device.bind()?;
        unsafe { result::stream_wait_event(self.raw, event.raw()) }
    }

    /// Record a fresh event on this stream: it completes when the work queued so far does.
    pub fn record_event(&self) -> Result<Event> {
        let event = Event::new(&self.device)?;
        event.record(self)?;
        Ok(event)
    }
}

impl Stream {
    pub(crate) fn handle(&self) -> &Arc<StreamHandle> {
        &self.handle
    }

    /// Whether a [`Capture`](crate::graph::Capture) made by this crate is recording this stream now.
    pub fn is_capturing(&self) -> bool {
        self.capturing.load(Ordering::Acquire)
    }

    fn refuse_while_capturing(&self, op: &'static str) -> Result<()> {
        if self.is_capturing() {
            return Err(Error::InvalidArgument {
                what: "operation on a capturing stream",
                value: op.to_string(),
                reason: format!(
                    "stream {} is being captured into a graph; a {op} cannot be captured (it would \
                     invalidate the capture): end the capture first",
                    self.id
                ),
            });
        }
        Ok(())
    }
}
