//! The memory model: who may still touch an allocation.
//!
//! Every allocation the crate hands out is one [`Allocation`], shared (`Arc`) by the buffer that owns it,
//! its views (by reference), and every graph that captured work on it. It remembers which streams may
//! still use it: the last stream that wrote it, and the streams that read it since. Every safe operation
//! that touches the memory on a stream asks it first ([`Allocation::use_on`]):
//!
//! - read after write: the stream waits for the last writer's stream;
//! - write after read or write: the stream waits for every reader's and the writer's stream;
//! - read after read: nothing.
//!
//! A wait is one fence event recorded on the other stream (covering all the work queued there so far)
//! and one `hipStreamWaitEvent` on this one. While an allocation stays on one stream nothing is recorded
//! or waited for: the fast path is two atomic loads. Synchronous host accesses block on the same fences
//! ([`Allocation::host_wait`]), and freeing waits for every stream still using the memory.
//!
//! The rules a user relies on, and the costs, are in `docs/MEMORY_MODEL.md`.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::result;
use crate::stream::{lock, StreamHandle, StreamOp};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How an operation uses memory: a kernel's [`arg`](crate::LaunchArgs::arg) reads,
/// [`arg_mut`](crate::LaunchArgs::arg_mut) writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// The operation only reads the memory.
    Read,
    /// The operation may write the memory (and read it).
    Write,
}

/// Something the memory model can tell apart from other streams by a process-unique id.
pub(crate) trait StreamKey: Clone {
    fn key(&self) -> u64;
}

impl StreamKey for Arc<StreamHandle> {
    fn key(&self) -> u64 {
        self.id
    }
}

/// The streams that may still use an allocation: the last writer, and the readers since that write.
///
/// A stream is in `readers` only after it was ordered after `writer` (or when there was none), and the
/// readers are cleared at every write: so a stream listed as a reader needs no further wait to read.
#[derive(Debug)]
pub(crate) struct Users<S> {
    writer: Option<S>,
    readers: Vec<S>,
}

impl<S> Default for Users<S> {
    fn default() -> Self {
        Users {
            writer: None,
            readers: Vec::new(),
        }
    }
}

impl<S: StreamKey> Users<S> {
    /// Call `wait` once for each stream that stream `s` must wait for before an `access`, without
    /// allocating (the change-of-stream path). Stops at the first error.
    pub(crate) fn for_each_conflict(
        &self,
        s: u64,
        access: Access,
        mut wait: impl FnMut(&S) -> Result<()>,
    ) -> Result<()> {
        let writer = self.writer.as_ref().filter(|w| w.key() != s);
        match access {
            Access::Read => {
                if self.readers.iter().any(|r| r.key() == s) {
                    return Ok(());
                }
                writer.map_or(Ok(()), wait)
            }
            Access::Write => {
                if let Some(w) = writer {
                    wait(w)?;
                }
                // `record` keeps the readers distinct and never lists the writer among them.
                let writer_key = self.writer.as_ref().map(|w| w.key());
                for r in &self.readers {
                    if r.key() != s && Some(r.key()) != writer_key {
                        wait(r)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// The streams that stream `s` must wait for before an `access`, each once.
    #[cfg(test)]
    pub(crate) fn conflicts(&self, s: u64, access: Access) -> Vec<S> {
        let mut all = Vec::new();
        let _ = self.for_each_conflict(s, access, |c| {
            all.push(c.clone());
            Ok(())
        });
        all
    }

    /// Record that `s`, now ordered after its conflicts, makes `access`.
    pub(crate) fn record(&mut self, s: &S, access: Access) {
        match access {
            Access::Read => {
                let k = s.key();
                let is_writer = self.writer.as_ref().is_some_and(|w| w.key() == k);
                if !is_writer && !self.readers.iter().any(|r| r.key() == k) {
                    self.readers.push(s.clone());
                }
            }
            Access::Write => {
                self.writer = Some(s.clone());
                self.readers.clear();
            }
        }
    }

    /// The streams the host must wait for before an `access` of its own.
    pub(crate) fn host_conflicts(&self, access: Access) -> Vec<S> {
        match access {
            Access::Read => self.writer.iter().cloned().collect(),
            Access::Write => self.all(),
        }
    }

    /// The host waited for its conflicts: those uses are over.
    pub(crate) fn host_done(&mut self, access: Access) {
        self.writer = None;
        if access == Access::Write {
            self.readers.clear();
        }
    }

    /// Whether a read by stream `s` needs no wait and changes nothing: `s` wrote last or already reads
    /// (the read fast path, for memory one stream keeps reading after another wrote it).
    pub(crate) fn reads_free(&self, s: u64) -> bool {
        self.writer.as_ref().is_some_and(|w| w.key() == s)
            || self.readers.iter().any(|r| r.key() == s)
    }

    /// Every stream that may still use the allocation, each once.
    pub(crate) fn all(&self) -> Vec<S> {
        let mut all: Vec<S> = Vec::new();
        for c in self.writer.iter().chain(&self.readers) {
            if !all.iter().any(|a| a.key() == c.key()) {
                all.push(c.clone());
            }
        }
        all
    }

    /// The stream for which reads and writes need no wait and change nothing (the use fast path): the
    /// last writer, when no other stream read since. 0 if there is none.
    pub(crate) fn sole(&self) -> u64 {
        let Some(writer) = self.writer.as_ref().map(|w| w.key()) else {
            return 0;
        };
        if self.readers.iter().all(|r| r.key() == writer) {
            writer
        } else {
            0
        }
    }
}

/// How an allocation's memory goes back when the last owner drops it.
pub(crate) enum Release {
    /// Nothing to free (no bytes were allocated).
    Nothing,
    /// `hipFree`.
    Free,
    /// `hipFreeAsync` on this stream, after it waited for every other stream still using the memory.
    FreeAsync(Arc<StreamHandle>),
    /// `hipHostFree` (pinned host memory).
    HostFree,
}

/// One allocation: its address, its device, how it is freed, and who may still use it.
///
/// Shared by its owner ([`DeviceBuffer`](crate::DeviceBuffer), [`PinnedBuffer`](crate::PinnedBuffer),
/// [`ManagedBuffer`](crate::ManagedBuffer)), borrowed by their views, and kept by every graph that
/// captured an operation on it: the memory is freed when the last of these goes, after every stream still
/// using it is done with it. Opaque: it is public only so that [`KernelArg`](crate::KernelArg) can name
/// it.
pub struct Allocation {
    ptr: *mut c_void,
    device: Device,
    /// [`Users::sole`] as of the last change: the stream whose uses need no wait and change nothing.
    sole: AtomicU64,
    /// A stream whose reads need no wait and change nothing ([`Users::reads_free`]) as of the last change by
    /// it; 0 if none. Cleared by every change that could make it wrong (another stream's use stores its
    /// own, a host wait stores 0).
    reader: AtomicU64,
    /// Set by [`DeviceBuffer::set_untracked`](crate::DeviceBuffer::set_untracked): the caller orders
    /// every use.
    untracked: AtomicBool,
    users: Mutex<Users<Arc<StreamHandle>>>,
    release: Release,
    /// Host-visible memory (pinned, managed): the host may hold a slice of it, which a graph replay would
    /// not be borrow-checked against, so captured operations refuse it.
    host_visible: bool,
}

// SAFETY: `ptr` is never dereferenced here, only passed to HIP calls (and the owner's own accessors),
// which accept it from any thread; the other fields are Send + Sync (`Device`, atomics, a mutex, and
// `Release`'s `Arc<StreamHandle>`).
unsafe impl Send for Allocation {}
// SAFETY: as for Send: shared access reads `ptr` and `device`, or goes through the atomics and the mutex.
unsafe impl Sync for Allocation {}

impl std::fmt::Debug for Allocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Allocation")
            .field("ptr", &self.ptr)
            .field("device", &self.device.ordinal())
            .finish()
    }
}

impl Allocation {
    pub(crate) fn new(ptr: *mut c_void, device: &Device, release: Release) -> Arc<Allocation> {
        Self::with_visibility(ptr, device, release, false)
    }

    /// An allocation the host can read and write directly (pinned or managed memory).
    pub(crate) fn host_visible(
        ptr: *mut c_void,
        device: &Device,
        release: Release,
    ) -> Arc<Allocation> {
        Self::with_visibility(ptr, device, release, true)
    }

    fn with_visibility(
        ptr: *mut c_void,
        device: &Device,
        release: Release,
        host_visible: bool,
    ) -> Arc<Allocation> {
        let release = if ptr.is_null() {
            Release::Nothing
        } else {
            release
        };
        Arc::new(Allocation {
            ptr,
            device: device.clone(),
            sole: AtomicU64::new(0),
            reader: AtomicU64::new(0),
            untracked: AtomicBool::new(false),
            users: Mutex::new(Users::default()),
            release,
            host_visible,
        })
    }

    /// The device the memory belongs to.
    pub(crate) fn device(&self) -> &Device {
        &self.device
    }

    /// Whether the memory goes back with `hipFreeAsync` (it came from a memory pool).
    pub(crate) fn is_stream_ordered(&self) -> bool {
        matches!(self.release, Release::FreeAsync(_))
    }

    /// Order an operation on `stream` that makes `access` to this memory after the conflicting work
    /// queued earlier on other streams, and record `stream` as a user. Call it before queueing the
    /// operation. On a stream being captured, the use is recorded in the capture instead (the graph orders
    /// its launches and keeps the memory alive); host-visible memory (pinned, managed) is refused there
    /// ([`Error::InvalidArgument`]): a replay needs no borrow of the buffer, so it could write memory the
    /// host holds a slice of.
    ///
    /// `op` is the operation in progress on the stream: the caller queues the operation before dropping
    /// it, so it is captured exactly when `use_on` saw a capture.
    #[inline]
    pub(crate) fn use_on(self: &Arc<Self>, op: &StreamOp<'_>, access: Access) -> Result<()> {
        let handle = op.handle();
        if op.is_capturing() {
            if let Some(recorded) = self.use_in_capture(op, access) {
                return recorded;
            }
        }
        let id = handle.id;
        // Free when this stream is the sole user, or a free reader and this is a read, or the memory is
        // untracked: each term below is 0 exactly then. One branch, not three: the three fields sit on one
        // cache line, and after a library call's own host work (a GEMM's) every branch here is a cold one.
        let sole = self.sole.load(Ordering::Acquire) ^ id;
        let reader = (self.reader.load(Ordering::Acquire) ^ id) | u64::from(access != Access::Read);
        let tracked = u64::from(!self.untracked.load(Ordering::Relaxed));
        if sole.min(reader).min(tracked) == 0 {
            return Ok(());
        }
        self.use_on_slow(handle, access)
    }

    /// [`use_on`](Self::use_on) while a capture made by this crate records `op`: the use is logged for the
    /// graph (`None`: no such capture, the stream is used as outside one). Out of line: the hot path of
    /// every operation stays short.
    #[cold]
    #[inline(never)]
    fn use_in_capture(self: &Arc<Self>, op: &StreamOp<'_>, access: Access) -> Option<Result<()>> {
        let log = op.capture_log()?;
        if self.host_visible {
            return Some(Err(Error::InvalidArgument {
                what: "memory used by a captured operation",
                value: "pinned or managed host-visible memory".into(),
                reason: "a graph replay is not borrow-checked against the host's slices of it; \
                         capture copies through device buffers and copy to or from the host outside \
                         the graph"
                    .into(),
            }));
        }
        log.record(self, access);
        Some(Ok(()))
    }

    #[cold]
    fn use_on_slow(&self, handle: &Arc<StreamHandle>, access: Access) -> Result<()> {
        let mut users = lock(&self.users);
        users.for_each_conflict(handle.id, access, |other| {
            let fence = other.fence()?;
            handle.device.bind()?;
            // SAFETY: `handle.raw` is live while its `Arc<StreamHandle>` is held (by the caller), and `bind`
            // made its device current; `fence` is a live event owned by `other`, held in `users` (HIP
            // accepts an event of another device, as for a peer copy).
            unsafe { result::stream_wait_event(handle.raw, fence) }
        })?;
        users.record(handle, access);
        self.sole.store(users.sole(), Ordering::Release);
        let reader = if users.reads_free(handle.id) {
            handle.id
        } else {
            0
        };
        self.reader.store(reader, Ordering::Release);
        Ok(())
    }

    /// Block the host until the work that conflicts with a host `access` (a read waits for the writer, a
    /// write for everyone) is done.
    pub(crate) fn host_wait(&self, access: Access) -> Result<()> {
        if self.untracked.load(Ordering::Relaxed) {
            return Ok(());
        }
        let mut users = lock(&self.users);
        for other in users.host_conflicts(access) {
            let fence = other.fence()?;
            // SAFETY: `fence` is a live event owned by `other`, whose handle `users` holds (and the lock
            // keeps it there) through the call.
            unsafe { result::event_synchronize(fence)? };
        }
        users.host_done(access);
        self.sole.store(users.sole(), Ordering::Release);
        self.reader.store(0, Ordering::Release);
        Ok(())
    }

    /// Hand the memory to the caller (`DeviceBuffer::into_raw`): wait (host) for every stream still using
    /// it, then never free it. Only `hipMalloc` memory (or none) can be handed over; `what_else` names the
    /// other kinds in the refusal.
    pub(crate) fn release_to_caller(&mut self) -> Result<()> {
        match self.release {
            Release::Nothing => Ok(()),
            Release::Free => {
                self.wait_for_all_users(None)?;
                self.release = Release::Nothing;
                Ok(())
            }
            Release::FreeAsync(_) | Release::HostFree => Err(Error::InvalidArgument {
                what: "buffer to release as a raw allocation",
                value: "stream-ordered (memory pool) memory".into(),
                reason:
                    "only hipMalloc memory can be handed over (it is freed with hipFree); copy a \
                         pool buffer into one from DeviceBuffer::zeroed first"
                        .into(),
            }),
        }
    }

    /// Stop (or resume) tracking; see [`DeviceBuffer::set_untracked`](crate::DeviceBuffer::set_untracked).
    pub(crate) fn set_untracked(&self, untracked: bool) {
        self.untracked.store(untracked, Ordering::Relaxed);
    }

    /// Before freeing: make `free_on` (or, without it, the host) wait for every stream still using the
    /// memory. `Err` when a wait failed: the memory must then not be freed.
    fn wait_for_all_users(&mut self, free_on: Option<&Arc<StreamHandle>>) -> Result<()> {
        let users = self
            .users
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .all();
        for other in users {
            match free_on {
                Some(f) if other.id == f.id => {}
                Some(f) => {
                    let fence = other.fence()?;
                    f.device.bind()?;
                    // SAFETY: as in use_on_slow: `f` (the free stream, held by `release`) is live and its
                    // device current; `fence` is owned by `other`, held in this local list.
                    unsafe { result::stream_wait_event(f.raw, fence)? };
                }
                // SAFETY: the fence is a live event owned by `other`, held in this local list.
                None => unsafe { result::event_synchronize(other.fence()?)? },
            }
        }
        Ok(())
    }
}

impl Drop for Allocation {
    /// Free the memory once no stream can still use it. If waiting fails (a broken device), the memory is
    /// leaked: never freed under work that may still run.
    fn drop(&mut self) {
        match std::mem::replace(&mut self.release, Release::Nothing) {
            Release::Nothing => {}
            Release::Free => {
                if self.wait_for_all_users(None).is_ok() && self.device.bind().is_ok() {
                    // SAFETY: memory from hipMalloc or hipMallocManaged (the only allocations made with
                    // `Release::Free`), freed once (`release` is `Nothing` from now on). The host waited for
                    // every stream recorded as a user, and the last owner is gone, so no new use can be
                    // queued; uses made while untracked are the caller's to have ordered
                    // (`set_untracked`'s contract), and hipFree waits for the device's work as well.
                    let _ = unsafe { result::free(self.ptr) };
                }
            }
            Release::HostFree => {
                if self.wait_for_all_users(None).is_ok() && self.device.bind().is_ok() {
                    // SAFETY: memory from hipHostMalloc (`PinnedBuffer`, the only `Release::HostFree`), freed
                    // once; the host waited for every stream recorded as a user and the last owner (with
                    // every host slice borrowed from it) is gone.
                    let _ = unsafe { result::host_free(self.ptr) };
                }
            }
            Release::FreeAsync(stream) => {
                // In stream order where possible; a capturing stream would record the free into its
                // graph, so then (and if anything fails) the host waits and frees.
                let op = stream.begin_op();
                if !op.is_capturing()
                    && self.wait_for_all_users(Some(&stream)).is_ok()
                    && stream.device.bind().is_ok()
                    // SAFETY: memory from hipMallocAsync on `stream` (the only `Release::FreeAsync`), freed
                    // once; `stream` (live: held by `release`, its device current) now waits for every
                    // other stream recorded as a user and runs its own earlier work first, and with the last
                    // owner gone nothing can be queued after the free. It was not capturing, so the free is
                    // not recorded into a graph.
                    && unsafe { result::pool::free_async(self.ptr, stream.raw) }.is_ok()
                {
                    return;
                }
                drop(op);
                let idle = self.wait_for_all_users(None).and_then(|()| {
                    // SAFETY: the fence is a live event owned by `stream`, which `release` held.
                    unsafe { result::event_synchronize(stream.fence()?) }
                });
                let null = stream.device.null_stream();
                let op = null.begin_op();
                if idle.is_ok() && !op.is_capturing() && stream.device.bind().is_ok() {
                    // SAFETY: the host waited for every user and for `stream` itself, so no queued work uses
                    // the memory; it is freed once, in the order of the device's null stream (never captured
                    // by this crate), as pool memory must be (hipFree would leave HIP 5.2.3's pool a dangling
                    // entry). If this fails too the memory is leaked, never freed under work.
                    let _ = unsafe { result::pool::free_async(self.ptr, null.raw) };
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "tracking_tests.rs"]
mod tests;
