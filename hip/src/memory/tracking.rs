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
use crate::error::Result;
use crate::result;
use crate::stream::{lock, StreamHandle};
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
    /// The streams that stream `s` must wait for before an `access`, each once.
    pub(crate) fn conflicts(&self, s: u64, access: Access) -> Vec<S> {
        let writer = self.writer.iter().filter(|w| w.key() != s);
        match access {
            Access::Read if self.readers.iter().any(|r| r.key() == s) => Vec::new(),
            Access::Read => writer.cloned().collect(),
            Access::Write => {
                let readers = self.readers.iter().filter(|r| r.key() != s);
                let mut all: Vec<S> = Vec::new();
                for c in writer.chain(readers) {
                    if !all.iter().any(|a| a.key() == c.key()) {
                        all.push(c.clone());
                    }
                }
                all
            }
        }
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
    /// The id of the stream that is the only user (writer and readers), 0 if none or several.
    sole: AtomicU64,
    /// Set by [`DeviceBuffer::set_untracked`](crate::DeviceBuffer::set_untracked): the caller orders
    /// every use.
    untracked: AtomicBool,
    users: Mutex<Users<Arc<StreamHandle>>>,
    release: Release,
}

// SAFETY: the address is only passed to HIP calls; the mutable state is behind atomics and a mutex.
unsafe impl Send for Allocation {}
// SAFETY: as above.
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
        let release = if ptr.is_null() {
            Release::Nothing
        } else {
            release
        };
        Arc::new(Allocation {
            ptr,
            device: device.clone(),
            sole: AtomicU64::new(0),
            untracked: AtomicBool::new(false),
            users: Mutex::new(Users::default()),
            release,
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
    /// its launches and keeps the memory alive).
    #[inline]
    pub(crate) fn use_on(
        self: &Arc<Self>,
        handle: &Arc<StreamHandle>,
        access: Access,
    ) -> Result<()> {
        if handle.is_capturing() {
            if let Some(log) = handle.capture_log() {
                log.record(self, access);
                return Ok(());
            }
        }
        if self.sole.load(Ordering::Acquire) == handle.id || self.untracked.load(Ordering::Relaxed)
        {
            return Ok(());
        }
        self.use_on_slow(handle, access)
    }

    #[cold]
    fn use_on_slow(&self, handle: &Arc<StreamHandle>, access: Access) -> Result<()> {
        let mut users = lock(&self.users);
        for other in users.conflicts(handle.id, access) {
            let fence = other.fence()?;
            handle.device.bind()?;
            // SAFETY: a live stream (its handle is held) of the current device, and a live event (owned
            // by `other`, which is held).
            unsafe { result::stream_wait_event(handle.raw, fence)? };
        }
        users.record(handle, access);
        self.sole.store(users.sole(), Ordering::Release);
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
            // SAFETY: a live event (owned by `other`, which is held).
            unsafe { result::event_synchronize(fence)? };
        }
        users.host_done(access);
        self.sole.store(users.sole(), Ordering::Release);
        Ok(())
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
                    // SAFETY: live stream and event, as in use_on_slow.
                    unsafe { result::stream_wait_event(f.raw, fence)? };
                }
                // SAFETY: a live event.
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
                    // SAFETY: hipMalloc'd (or hipMallocManaged) memory, no longer used by any stream.
                    let _ = unsafe { result::free(self.ptr) };
                }
            }
            Release::HostFree => {
                if self.wait_for_all_users(None).is_ok() && self.device.bind().is_ok() {
                    // SAFETY: hipHostMalloc'd memory, no longer used by any stream.
                    let _ = unsafe { result::host_free(self.ptr) };
                }
            }
            Release::FreeAsync(stream) => {
                // In stream order where possible; a capturing stream would record the free into its
                // graph, so then (and if anything fails) the host waits and frees.
                if !stream.is_capturing()
                    && self.wait_for_all_users(Some(&stream)).is_ok()
                    && stream.device.bind().is_ok()
                    // SAFETY: pool memory; `stream` now waits for every other stream using it, and its
                    // own work is ordered before the free.
                    && unsafe { result::pool::free_async(self.ptr, stream.raw) }.is_ok()
                {
                    return;
                }
                let idle = self.wait_for_all_users(None).and_then(|()| {
                    // SAFETY: a live event of the held stream.
                    unsafe { result::event_synchronize(stream.fence()?) }
                });
                if idle.is_ok() && stream.device.bind().is_ok() {
                    // SAFETY: pool memory no stream uses any more; hipFree accepts it.
                    let _ = unsafe { result::free(self.ptr) };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct S(u64);
    impl StreamKey for S {
        fn key(&self) -> u64 {
            self.0
        }
    }
    fn keys(v: Vec<S>) -> Vec<u64> {
        v.into_iter().map(|s| s.0).collect()
    }
    use Access::*;

    /// Apply one operation as `use_on` does: the waits it needs, then the new state.
    fn op(u: &mut Users<S>, s: u64, a: Access) -> Vec<u64> {
        let w = keys(u.conflicts(s, a));
        u.record(&S(s), a);
        w
    }

    #[test]
    fn one_stream_never_waits_and_is_the_sole_user() {
        let mut u = Users::default();
        assert_eq!(u.sole(), 0);
        for a in [Write, Read, Read, Write, Read] {
            assert!(op(&mut u, 7, a).is_empty());
            assert_eq!(u.sole(), 7);
        }
    }

    #[test]
    fn read_after_write_waits_for_the_writer_once() {
        let mut u = Users::default();
        op(&mut u, 1, Write);
        assert_eq!(op(&mut u, 2, Read), [1]);
        assert_eq!(u.sole(), 0);
        // Stream 2 is ordered after the write now: reading again needs nothing.
        assert!(op(&mut u, 2, Read).is_empty());
        // A third reader waits for the writer only, not for the other reader.
        assert_eq!(op(&mut u, 3, Read), [1]);
        assert!(op(&mut u, 1, Read).is_empty());
    }

    #[test]
    fn write_after_reads_waits_for_every_reader_and_the_writer() {
        let mut u = Users::default();
        op(&mut u, 1, Write);
        op(&mut u, 2, Read);
        op(&mut u, 3, Read);
        let mut w = op(&mut u, 4, Write);
        w.sort();
        assert_eq!(w, [1, 2, 3]);
        assert_eq!(u.sole(), 4);
        // The writer's own stream never waits for itself, but does for the other readers.
        op(&mut u, 5, Read);
        assert_eq!(op(&mut u, 4, Write), [5]);
    }

    #[test]
    fn write_after_write_waits_and_reads_after_reads_do_not() {
        let mut u = Users::default();
        op(&mut u, 1, Write);
        assert_eq!(op(&mut u, 2, Write), [1]);
        assert_eq!(op(&mut u, 1, Write), [2]);
        let mut r = Users::default();
        op(&mut r, 1, Read);
        assert!(op(&mut r, 2, Read).is_empty());
        assert_eq!(r.sole(), 0);
        let mut w = op(&mut r, 3, Write);
        w.sort();
        assert_eq!(w, [1, 2]);
    }

    #[test]
    fn a_reader_that_also_writes_is_listed_once() {
        let mut u = Users::default();
        op(&mut u, 1, Write);
        op(&mut u, 2, Read);
        op(&mut u, 1, Read);
        assert_eq!(keys(u.all()), [1, 2]);
        assert_eq!(op(&mut u, 3, Write), [1, 2]);
    }

    fn snapshot(u: &Users<S>) -> (Option<u64>, Vec<u64>) {
        (u.writer.as_ref().map(|w| w.0), keys(u.readers.clone()))
    }

    /// The fast path skips `conflicts` and `record` when `sole()` names the stream: that is only right
    /// if, then, there is nothing to wait for and nothing to record. Checked over random operation
    /// sequences on a few streams, host accesses included.
    #[test]
    fn the_sole_stream_never_waits_and_never_changes_the_state() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut fast = 0;
        for _ in 0..200 {
            let mut u = Users::default();
            for _ in 0..50 {
                let r = next();
                let s = 1 + r % 3;
                let a = if r >> 8 & 1 == 0 { Read } else { Write };
                if (r >> 9) % 8 == 0 {
                    u.host_done(a);
                    continue;
                }
                if u.sole() == s {
                    fast += 1;
                    let before = snapshot(&u);
                    assert!(u.conflicts(s, a).is_empty(), "{before:?} {s} {a:?}");
                    u.record(&S(s), a);
                    assert_eq!(snapshot(&u), before, "stream {s} {a:?}");
                } else {
                    op(&mut u, s, a);
                }
            }
        }
        assert!(fast > 1000, "the fast path was taken {fast} times");
    }

    #[test]
    fn a_reader_alone_is_not_the_sole_user_because_its_write_must_be_recorded() {
        let mut u = Users::default();
        op(&mut u, 1, Write);
        u.host_done(Read); // the write is over: no writer, no readers
        op(&mut u, 2, Read);
        assert_eq!(u.sole(), 0);
        assert!(op(&mut u, 2, Write).is_empty());
        assert_eq!(u.sole(), 2);
        assert_eq!(op(&mut u, 3, Read), [2]);
    }

    #[test]
    fn an_allocation_of_no_memory_frees_nothing_and_says_what_it_is() {
        // A null address means nothing was allocated: whatever release was asked, nothing is freed (the
        // drop at the end of this test must not reach HIP, which has no device here).
        let a = Allocation::new(
            std::ptr::null_mut(),
            &Device::for_unit_tests(3),
            Release::Free,
        );
        assert!(matches!(a.release, Release::Nothing));
        assert!(!a.is_stream_ordered());
        assert_eq!(a.device().ordinal(), 3);
        assert_eq!(format!("{a:?}"), "Allocation { ptr: 0x0, device: 3 }");
    }

    #[test]
    fn host_reads_wait_for_the_writer_and_host_writes_for_all() {
        let mut u = Users::default();
        op(&mut u, 1, Write);
        op(&mut u, 2, Read);
        assert_eq!(keys(u.host_conflicts(Read)), [1]);
        u.host_done(Read);
        // The writer is done; the reader may still run.
        assert!(u.host_conflicts(Read).is_empty());
        assert_eq!(keys(u.host_conflicts(Write)), [2]);
        assert!(op(&mut u, 3, Read).is_empty());
        u.host_done(Write);
        assert!(u.all().is_empty());
        assert_eq!(u.sole(), 0);
    }
}
