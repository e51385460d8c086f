//! Stream memory operations: a [`StreamFlag`], a counter in device-visible pinned memory that streams
//! write (`hipStreamWriteValue64` / `32`) and wait on (`hipStreamWaitValue64` / `32`), and the host reads
//! and writes, with no event.
//!
//! A flag is 64-bit ([`StreamFlag::new`]) or 32-bit ([`StreamFlag::new_32bit`]:
//! `hipStreamWriteValue32`, `hipStreamWaitValue32`), and takes values up to `i64::MAX` or `i32::MAX`:
//! CUDA's "greater or equal" wait compares cyclically (`(int64_t)(*addr - value) >= 0`), so a wait for a
//! value more than half the range above the flag's would end at once, while the memory model would learn
//! an order the device never kept. Values past that are refused before HIP.
//!
//! The flag is a timeline: its values only grow. Every write, by a stream or the host, must be larger
//! than the one before ([`Error::InvalidArgument`] otherwise), and stream writes are ordered among
//! themselves by the memory model (a write waits for the previous writer, as writes to any buffer do), so
//! the value in memory never goes down. A wait for `value` ends at the first write of at least `value`;
//! when that write is already queued on a stream, the memory model learns the order it gives, as a wait
//! on an event teaches it: what the waiting stream does next needs no event wait for the writing stream's
//! work up to the write. A wait for a write not queued yet (a later stream write, or the host's) is
//! still a real wait on the device; it teaches nothing, and later uses of shared buffers are ordered by
//! the memory model's events as usual.
//!
//! Ownership: the flag's memory is freed when the last [`StreamFlag`] handle goes, after every stream
//! write to it has run and after every queued wait on it has ended (a wait that never ends keeps the
//! memory, which is then never freed, rather than freed under the wait).
//!
//! A device without 64-bit stream memory operations refuses [`StreamFlag::new`] with
//! [`Error::NotSupported`]: on AMD where it answers `hipDeviceAttributeCanUseStreamWaitValue` with 0, on
//! HIP's NVIDIA platform where CUDA answers `CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS` with 0
//! (HIP does not map the attribute there; built against CUDA 11 it is the v1 calls' attribute, off unless
//! the driver enables them).

use crate::device::Device;
use crate::error::{Error, Result};
use crate::event::same_device;
use crate::memory::tracking::{Access, Allocation, Release};
use crate::queue::Queue;
use crate::result;
use crate::result::stream_memop as memop;
use crate::stream::{lock, Stream, StreamHandle};
use hip_sys as sys;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// The writes a flag remembers, for what a wait can learn; older ones are forgotten (waits for their
/// values then learn nothing).
const HISTORY: usize = 64;

/// A 64- or 32-bit flag in pinned, device-mapped memory that streams write and wait on (see the
/// [module docs](self)). Cheap to clone: clones share the flag.
///
/// ```no_run
/// use hip::prelude::*;
/// use hip::StreamFlag;
///
/// let device = Device::get(0)?;
/// let (a, b) = (Stream::non_blocking(&device)?, Stream::non_blocking(&device)?);
/// let flag = StreamFlag::new(&device)?;
/// let mut x = DeviceBuffer::<u32>::zeroed(&device, 1 << 20)?;
/// let mut y = DeviceBuffer::<u32>::zeroed(&device, 1 << 20)?;
/// a.fill_async(&mut x, 7)?;
/// a.write_flag(&flag, 1)?; // after the fill
/// b.wait_flag(&flag, 1)?; // b's later work runs after a's write of 1...
/// b.copy_device_async(&x, &mut y)?; // ...so this copy needs no event wait for the fill
/// assert_eq!(y.to_vec()?, vec![7; 1 << 20]);
/// assert_eq!(flag.value(), 1);
/// # Ok::<(), hip::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct StreamFlag {
    inner: Arc<Inner>,
}

struct Inner {
    allocation: Arc<Allocation>,
    host: *mut u64,
    /// 64-bit (`hipStreamWriteValue64`), or 32-bit (`hipStreamWriteValue32`, the word at `host`).
    wide: bool,
    device_ptr: *mut c_void,
    history: Mutex<History>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamFlag")
            .field("host", &self.host)
            .field("bits", &if self.wide { 64 } else { 32 })
            .field("device", &self.allocation.device().ordinal())
            .finish()
    }
}

// SAFETY: the raw pointers name pinned memory owned by `allocation` (freed only when `Inner` drops, after
// every use), read and written only atomically by the host; the rest is an Arc and a Mutex.
unsafe impl Send for Inner {}
// SAFETY: as for Send: every access through `&Inner` is an atomic load or store, or under the mutex.
unsafe impl Sync for Inner {}

/// The writes queued so far, in order (so in increasing value).
#[derive(Default)]
struct History {
    /// The largest value written or queued (the next write must exceed it).
    last: u64,
    /// Values at or below it may have been written by a write no longer listed (the host's, the initial
    /// 0, or one forgotten): a wait for them learns nothing.
    floor: u64,
    /// Stream writes after `floor`: value, queue and label of the write.
    writes: Vec<(u64, Weak<Queue>, u64)>,
    /// Streams with waits queued on the flag, and the label of the last: kept until the flag is dropped.
    waiters: Vec<(Arc<StreamHandle>, u64)>,
}

impl StreamFlag {
    /// A flag holding 0 on `device`, in pinned host memory mapped for the device (`hipHostMalloc`).
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] naming `hipStreamWaitValue64` where the device answers
    /// `hipDeviceAttributeCanUseStreamWaitValue` with 0; what HIP returns for making the device current,
    /// `hipHostMalloc` and `hipHostGetDevicePointer` (without a device: `hipErrorNoDevice` or
    /// `hipErrorInvalidDevice`, kept raw).
    pub fn new(device: &Device) -> Result<StreamFlag> {
        Self::with_width(device, true)
    }

    /// A 32-bit flag holding 0 on `device` (`hipStreamWriteValue32`, `hipStreamWaitValue32`): values up
    /// to `i32::MAX`, larger ones refused before HIP (see the [module docs](self)). Otherwise as
    /// [`new`](Self::new).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), naming `hipStreamWaitValue32`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, a: &Stream, b: &Stream) -> hip::Result<()> {
    /// let flag = hip::StreamFlag::new_32bit(device)?;
    /// a.write_flag(&flag, 1)?;
    /// b.wait_flag(&flag, 1)?;
    /// assert!(a.write_flag(&flag, 1 << 31).is_err()); // past i32::MAX
    /// # Ok(()) }
    /// ```
    pub fn new_32bit(device: &Device) -> Result<StreamFlag> {
        Self::with_width(device, false)
    }

    fn with_width(device: &Device, wide: bool) -> Result<StreamFlag> {
        let ordinal = device.ordinal() as i32;
        if let Ok(0) = memop::can_use_wait_value64(ordinal) {
            return Err(Error::NotSupported {
                what: if wide {
                    "hipStreamWaitValue64"
                } else {
                    "hipStreamWaitValue32"
                },
                reason: memop::NO_WAIT_VALUE,
            });
        }
        device.bind()?;
        #[cfg(hip_platform = "amd")]
        let flags = sys::hipHostMallocMapped | sys::hipHostMallocCoherent;
        #[cfg(not(hip_platform = "amd"))]
        let flags = sys::hipHostMallocMapped;
        let host = result::host_malloc(8, flags)?;
        let allocation = Allocation::host_visible(host, device, Release::HostFree);
        // SAFETY: `host` is 8 bytes of pinned memory just allocated (hipHostMalloc aligns far beyond 8),
        // owned by `allocation`; no stream knows it yet.
        unsafe { (host as *mut u64).write_volatile(0) };
        // SAFETY: `host` came from hipHostMalloc with hipHostMallocMapped and lives in `allocation`.
        let device_ptr = unsafe { memop::host_get_device_pointer(host) }?;
        Ok(StreamFlag {
            inner: Arc::new(Inner {
                allocation,
                host: host as *mut u64,
                wide,
                device_ptr,
                history: Mutex::new(History::default()),
            }),
        })
    }

    /// The value in memory now, read by the host (an atomic load; it may be behind writes still queued).
    pub fn value(&self) -> u64 {
        if !self.inner.wide {
            // SAFETY: as below, for the 32-bit word at the start of the 8 bytes.
            return u64::from(
                unsafe { AtomicU32::from_ptr(self.inner.host.cast()) }.load(Ordering::Acquire),
            );
        }
        // SAFETY: `host` is 8-byte aligned pinned memory owned by `allocation`, alive while `self` is;
        // every host access is atomic, and the device writes it whole.
        unsafe { AtomicU64::from_ptr(self.inner.host) }.load(Ordering::Acquire)
    }

    /// Whether it is a 64-bit flag ([`new`](Self::new)) rather than a 32-bit one
    /// ([`new_32bit`](Self::new_32bit)).
    pub fn is_64bit(&self) -> bool {
        self.inner.wide
    }

    /// The device address of the flag (for raw calls; a kernel writing it voids what waits learn: write
    /// it only through [`Stream::write_flag`] and [`StreamFlag::set`]).
    pub fn device_ptr(&self) -> *mut c_void {
        self.inner.device_ptr
    }

    /// The device the flag belongs to.
    pub fn device(&self) -> &Device {
        self.inner.allocation.device()
    }

    /// Write `value` from the host, after the stream writes queued so far have run (the host waits for
    /// them): a stream waiting for at most `value` is released.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `value` does not exceed the last value written or queued; what a
    /// host wait for the queued writes returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, flag: &hip::StreamFlag) -> hip::Result<()> {
    /// stream.wait_flag(flag, 1)?; // the stream holds here...
    /// flag.set(1)?; // ...until the host says so
    /// # Ok(()) }
    /// ```
    pub fn set(&self, value: u64) -> Result<()> {
        let mut h = lock(&self.inner.history);
        check_width(self.inner.wide, value)?;
        check_increasing(&h, value)?;
        self.inner.allocation.host_wait(Access::Write)?;
        if self.inner.wide {
            // SAFETY: as in `value`.
            unsafe { AtomicU64::from_ptr(self.inner.host) }.store(value, Ordering::Release);
        } else {
            // SAFETY: as in `value`; `value` fits 32 bits (checked).
            unsafe { AtomicU32::from_ptr(self.inner.host.cast()) }
                .store(value as u32, Ordering::Release);
        }
        h.host_write(value);
        Ok(())
    }
}

impl History {
    /// The stream write that releases a wait for `value`, if it is known: values only grow and stream
    /// writes run in queue order, so it is the first listed write of at least `value`, unless an unlisted
    /// one (the host's, a forgotten one, the initial 0) may reach it first (`value <= floor`).
    fn releaser(&self, value: u64) -> Option<(&Weak<Queue>, u64)> {
        if value <= self.floor {
            return None;
        }
        let (_, queue, pos) = self.writes.iter().find(|(v, _, _)| *v >= value)?;
        Some((queue, *pos))
    }

    /// A stream write of `value` at `pos` of `queue` was queued.
    fn push(&mut self, value: u64, queue: Weak<Queue>, pos: u64) {
        self.last = value;
        if self.writes.len() >= HISTORY {
            self.floor = self.writes.remove(0).0;
        }
        self.writes.push((value, queue, pos));
    }

    /// The host wrote `value`.
    fn host_write(&mut self, value: u64) {
        self.last = value;
        self.floor = value;
        self.writes.clear();
    }
}

/// The largest value a flag takes: `i64::MAX` (64-bit) or `i32::MAX` (32-bit).
fn max_value(wide: bool) -> u64 {
    if wide {
        i64::MAX as u64
    } else {
        i32::MAX as u64
    }
}

/// Refuse a value past the flag's range. CUDA's "greater or equal" wait is a cyclic comparison
/// (`(int64_t)(*addr - value) >= 0`, `int32_t` for 32 bits): a wait for a value more than half the
/// range above the flag's would end at once, while the memory model learns that the waiting stream runs
/// after the write of that value. Within the signed range of the width, every value the flag holds and
/// every value waited for compare as numbers do.
fn check_width(wide: bool, value: u64) -> Result<()> {
    if value <= max_value(wide) {
        return Ok(());
    }
    Err(Error::InvalidArgument {
        what: "stream flag value",
        value: value.to_string(),
        reason: format!(
            "a {}-bit flag takes values up to {} (a wait compares values cyclically, as CUDA's \
             stream wait does, so half the range is all it can order)",
            if wide { 64 } else { 32 },
            max_value(wide)
        ),
    })
}

fn check_increasing(h: &History, value: u64) -> Result<()> {
    if value > h.last {
        return Ok(());
    }
    Err(Error::InvalidArgument {
        what: "stream flag value",
        value: value.to_string(),
        reason: format!(
            "a flag's values only grow: it already holds or is queued to hold {}",
            h.last
        ),
    })
}

/// Refuse a flag operation on a stream a capture records.
fn refuse_in_capture(what: &'static str) -> Error {
    Error::InvalidArgument {
        what: "operation on a capturing stream",
        value: what.into(),
        reason: "stream memory operations are not captured by this crate: queue them outside the \
                 capture"
            .into(),
    }
}

impl Stream {
    /// Queue a write of `value` to `flag` (`hipStreamWriteValue64`): it happens after the work queued on
    /// this stream so far (with a memory barrier), and after the flag's earlier stream writes.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `value` does not exceed the flag's last value written or queued, or
    /// on a stream being captured; [`Error::DeviceMismatch`] for a flag of another device; what HIP
    /// returns for `hipStreamWriteValue64`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, flag: &hip::StreamFlag) -> hip::Result<()> {
    /// stream.write_flag(flag, 1)?;
    /// stream.synchronize()?;
    /// assert_eq!(flag.value(), 1);
    /// # Ok(()) }
    /// ```
    pub fn write_flag(&self, flag: &StreamFlag, value: u64) -> Result<()> {
        same_device("write_flag", self.device(), flag.device())?;
        let inner = &flag.inner;
        let mut h = lock(&inner.history);
        check_width(inner.wide, value)?;
        check_increasing(&h, value)?;
        let op = self.begin_op();
        if op.is_capturing() {
            return Err(refuse_in_capture("write_flag"));
        }
        // Orders this write after the flag's earlier stream writes, and keeps the memory until it ran.
        inner.allocation.use_on(&op, Access::Write)?;
        self.device().bind()?;
        // SAFETY: this live stream (its device current); `device_ptr` is the flag's 8-byte aligned mapped
        // memory, kept allocated until this write ran (recorded just above as the memory's writer).
        unsafe {
            if inner.wide {
                memop::write_value64(self.raw(), inner.device_ptr, value)
            } else {
                // `value` fits 32 bits (checked).
                memop::write_value32(self.raw(), inner.device_ptr, value as u32)
            }
        }?;
        h.push(value, Arc::downgrade(&self.handle().queue), op.label());
        Ok(())
    }

    /// Make work queued on this stream from now on wait until `flag` holds at least `value`
    /// (`hipStreamWaitValue64`, `hipStreamWaitValueGte`). Where the write that first reaches `value` is
    /// already queued on a stream, the memory model learns this stream now runs after that stream's work
    /// up to the write (as [`Stream::wait_event`] teaches it).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] on a stream being captured; [`Error::DeviceMismatch`] for a flag of
    /// another device; what HIP returns for `hipStreamWaitValue64`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(a: &Stream, b: &Stream, flag: &hip::StreamFlag) -> hip::Result<()> {
    /// a.write_flag(flag, 5)?;
    /// b.wait_flag(flag, 5)?; // b continues once a's write of 5 ran
    /// # Ok(()) }
    /// ```
    pub fn wait_flag(&self, flag: &StreamFlag, value: u64) -> Result<()> {
        same_device("wait_flag", self.device(), flag.device())?;
        let inner = &flag.inner;
        check_width(inner.wide, value)?;
        let mut h = lock(&inner.history);
        let op = self.begin_op();
        if op.is_capturing() {
            return Err(refuse_in_capture("wait_flag"));
        }
        self.device().bind()?;
        // SAFETY: this live stream (its device current); `device_ptr` is the flag's 8-byte aligned mapped
        // memory, kept allocated until this wait ended (`waiters`, below, holds it past the flag's drop).
        unsafe {
            if inner.wide {
                memop::wait_value64(self.raw(), inner.device_ptr, value, memop::WAIT_GTE)
            } else {
                // `value` fits 32 bits (checked).
                memop::wait_value32(self.raw(), inner.device_ptr, value as u32, memop::WAIT_GTE)
            }
        }?;
        let label = op.label();
        match h.waiters.iter_mut().find(|(s, _)| s.id == self.handle().id) {
            Some(w) => w.1 = label,
            None => h.waiters.push((self.handle().clone(), label)),
        }
        if let Some((queue, pos)) = h.releaser(value) {
            if let Some(queue) = queue.upgrade() {
                self.handle().queue.learn(&queue, pos, label);
            }
        }
        Ok(())
    }
}

impl Drop for Inner {
    /// The memory goes once every queued wait on it ended: each waiting stream is recorded as a reader
    /// after its last wait, and a host function queued there holds the memory until then (a stream being captured, or one refusing the function,
    /// keeps it forever: leaked, never freed under a wait).
    fn drop(&mut self) {
        let waiters = std::mem::take(&mut lock(&self.history).waiters);
        for (stream, label) in waiters {
            if stream.queue.is_done(label) {
                continue;
            }
            let keep = self.allocation.clone();
            let op = stream.begin_op();
            // The waiting stream becomes a reader of the memory from here (after its waits), so the
            // free, made by whoever drops the last owner, waits for it like for any user; the host
            // function makes that drop happen only once the stream got there (never blocking on a wait
            // that might not end).
            if op.is_capturing()
                || self.allocation.use_on(&op, Access::Read).is_err()
                || stream.device.bind().is_err()
            {
                std::mem::forget(keep);
                continue;
            }
            // SAFETY: `stream.raw` is live (its handle is held) and not captured by this crate (checked
            // under `op`, held through the call); its device is current.
            let queued = unsafe {
                crate::host_fn::queue_raw(stream.raw, crate::host_fn::into_raw(move || drop(keep)))
            };
            if queued.is_err() {
                // The closure (and its clone) was reclaimed and dropped: keep the memory another way.
                std::mem::forget(self.allocation.clone());
            }
            drop(op);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positions(h: &History, value: u64) -> Option<u64> {
        h.releaser(value).map(|(_, pos)| pos)
    }

    #[test]
    fn a_wait_is_released_by_the_first_write_reaching_its_value() {
        let mut h = History::default();
        assert_eq!(positions(&h, 0), None, "the initial 0 satisfies it");
        assert_eq!(positions(&h, 1), None, "no write queued yet");
        h.push(2, Weak::new(), 10);
        h.push(5, Weak::new(), 11);
        h.push(9, Weak::new(), 12);
        assert_eq!(positions(&h, 1), Some(10));
        assert_eq!(positions(&h, 2), Some(10));
        assert_eq!(positions(&h, 3), Some(11));
        assert_eq!(positions(&h, 9), Some(12));
        assert_eq!(positions(&h, 10), None, "a later write, not queued yet");
        assert!(check_increasing(&h, 9).is_err() && check_increasing(&h, 10).is_ok());
    }

    #[test]
    fn host_writes_and_forgotten_writes_teach_nothing() {
        let mut h = History::default();
        h.push(1, Weak::new(), 1);
        h.host_write(4);
        assert_eq!((h.last, h.floor), (4, 4));
        assert_eq!(positions(&h, 1), None, "the host's 4 may release it");
        assert_eq!(positions(&h, 4), None);
        for i in 0..(HISTORY as u64 + 3) {
            h.push(5 + i, Weak::new(), 100 + i);
        }
        assert_eq!(h.writes.len(), HISTORY);
        assert_eq!(h.floor, 7, "writes of 5, 6, 7 forgotten");
        assert_eq!(positions(&h, 7), None);
        assert_eq!(positions(&h, 8), Some(103));
        let e = check_increasing(&h, 7).unwrap_err();
        assert!(e.to_string().contains("only grow"), "{e}");
    }

    #[test]
    fn values_past_half_a_flags_range_are_refused() {
        assert!(check_width(false, i32::MAX as u64).is_ok());
        let e = check_width(false, i32::MAX as u64 + 1).unwrap_err();
        assert!(
            e.to_string()
                .contains("32-bit flag takes values up to 2147483647"),
            "{e}"
        );
        assert!(check_width(true, i64::MAX as u64).is_ok());
        let e = check_width(true, i64::MAX as u64 + 1).unwrap_err();
        assert!(e.to_string().contains("64-bit flag"), "{e}");
        assert!(check_width(true, u64::MAX).is_err());
    }

    #[test]
    fn a_flag_without_a_device_is_an_error_naming_a_call() {
        // Device 0 of a machine without a GPU (or out of range on one with): never a panic.
        let e = StreamFlag::new(&Device::for_unit_tests(4096)).unwrap_err();
        assert!(
            e.hip_code().is_some()
                || matches!(e, Error::NoDevice { .. } | Error::LibraryNotFound { .. }),
            "{e}"
        );
        assert!(e.to_string().contains("hip"), "{e}");
    }
}
