//! The memory model: who may still touch an allocation, and up to which point of each stream's queue.
//!
//! Every allocation the crate hands out is one [`Allocation`], shared (`Arc`) by the buffer that owns it,
//! its views (by reference), and every graph that captured work on it. It remembers which streams may
//! still use it and where: the last write (stream and label, see [`crate::queue`]) and the reads since.
//! Every safe operation that touches the memory on a stream asks it first ([`Allocation::use_on`]):
//!
//! - read after write: the stream waits for the writer's stream up to the write;
//! - write after read or write: the stream waits for every reader's and the writer's stream up to their
//!   uses;
//! - read after read: nothing; work known complete, or already waited for: nothing.
//!
//! A wait is one `hipStreamWaitEvent` on a marker of the other stream (see [`crate::queue`]). While an
//! allocation stays on one stream nothing is waited for: the fast path is one load and one
//! compare-and-swap of a packed (stream, label) word. Synchronous host accesses block on the same markers
//! ([`Allocation::host_wait`]), and freeing waits for every stream still using the memory.
//!
//! Uses are recorded before the operation's HIP calls are queued (under the stream's gate). Another thread
//! that finds a conflicting use whose operation is still being queued waits until it is
//! ([`Queue::wait_queued`]) before taking a marker: no pending use is lost, and since every operation
//! takes its allocations in address order, no two operations wait for each other.
//!
//! Costs: an operation on memory that stays on its one stream takes the fast path above; the first use
//! by another stream takes the lock, and one `hipStreamWaitEvent` per conflicting stream.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::queue::{Queue, OPEN};
use crate::stream::{lock, StreamHandle, StreamOp};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::host_lease::HostLease;
pub use super::users::Access;
use super::users::{try_stamp, StreamKey, Users};

impl StreamKey for Arc<StreamHandle> {
    fn key(&self) -> u64 {
        self.id
    }
}

/// What an allocation keeps alive until its memory is freed (a memory pool of one's own), type-erased so
/// that this file needs nothing from the pool's.
pub(crate) type Keep = Arc<dyn std::any::Any + Send + Sync>;

/// One allocation: its address, its device, how it is freed, and who may still use it.
///
/// Shared by its owner ([`DeviceBuffer`](crate::DeviceBuffer), [`PinnedBuffer`](crate::PinnedBuffer),
/// [`ManagedBuffer`](crate::ManagedBuffer)), borrowed by their views, and kept by every graph that
/// captured an operation on it: the memory is freed when the last of these goes, after every stream still
/// using it is done with it. Opaque: it is public only so that [`KernelArg`](crate::KernelArg) can name
/// it.
// The fields a tracked use reads on its fast path (`sole`, `reader`, `device`, `ptr`, `untracked`,
// `shared`) come first, in one cache line: `repr(C)` keeps them in that order and the alignment starts
// the allocation on a line of its own, after the `Arc`'s counts, which that path does not touch (a unit
// test in tracking_tests.rs pins it).
#[repr(C, align(64))]
pub struct Allocation {
    /// The fast path for writes: [`Users::sole`] packed with its write label (0: none). A write by that
    /// stream moves the label forward (compare-and-swap) and needs nothing else; the slow path takes the
    /// word (swap to 0) and folds the label into `users` before changing anything.
    sole: AtomicU64,
    /// The fast path for reads: a stream whose reads need no wait ([`Users::reads_free`]) packed with its
    /// last read label (0: none); folded like `sole`.
    reader: AtomicU64,
    device: Device,
    ptr: *mut c_void,
    /// Set by [`DeviceBuffer::set_untracked`](crate::DeviceBuffer::set_untracked): the caller orders
    /// every use.
    untracked: AtomicBool,
    /// Whether a stream other than `first_stream` has used the memory.
    shared: AtomicBool,
    /// The first stream (not a null stream) that used the memory (0: none yet): with `shared`, the
    /// markers policy (see [`Allocation::wants_marker`]).
    first_stream: AtomicU64,
    /// Calls of an RCCL group that use the memory and are not queued yet (NCCL queues them when the
    /// group ends): any other use meanwhile is refused ([`Allocation::use_in_group`]).
    group_calls: AtomicUsize,
    users: Mutex<Users<Arc<StreamHandle>>>,
    release: Release,
    /// Host-visible memory (pinned, managed): the host may hold a slice of it, which a graph replay would
    /// not be borrow-checked against, so captured operations refuse it.
    host_visible: bool,
    /// Set once when the memory becomes a `GraphPinnedBuffer`'s: the host's borrows, which graph
    /// launches check ([`HostLease`]).
    lease: OnceLock<Arc<HostLease>>,
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
            first_stream: AtomicU64::new(0),
            shared: AtomicBool::new(false),
            group_calls: AtomicUsize::new(0),
            users: Mutex::new(Users::default()),
            release,
            host_visible,
            lease: OnceLock::new(),
        })
    }

    /// The device the memory belongs to.
    pub(crate) fn device(&self) -> &Device {
        &self.device
    }

    /// Whether another process may open this memory (`hipIpcGetMemHandle`): only `hipMalloc` device
    /// memory, not pool, pinned, managed or itself opened memory, nor an empty buffer.
    pub(crate) fn is_exportable(&self) -> bool {
        matches!(self.release, Release::Free) && !self.host_visible
    }

    /// Whether the host reads and writes it directly (pinned or managed memory), which graphs refuse.
    pub(crate) fn is_host_visible(&self) -> bool {
        self.host_visible
    }

    /// The host borrows graph launches check (a `GraphPinnedBuffer`'s memory), if any.
    pub(crate) fn lease(&self) -> Option<&HostLease> {
        self.lease.get().map(|l| &**l)
    }

    /// Make this host-visible memory a `GraphPinnedBuffer`'s: its host accesses go through the lease
    /// from now on, and graph nodes may use it.
    pub(crate) fn start_lease(&self) -> Arc<HostLease> {
        self.lease.get_or_init(Default::default).clone()
    }

    /// Whether the memory goes back with `hipFreeAsync` (it came from a memory pool).
    pub(crate) fn is_stream_ordered(&self) -> bool {
        matches!(self.release, Release::FreeAsync(..))
    }

    /// Whether other devices reach this memory only by a grant of its own (a pool's
    /// `hipMemPoolSetAccess`, a mapping's `hipMemSetAccess`), never by peer access: pool memory and
    /// virtual-memory mappings ([`GrowableBuffer`](crate::GrowableBuffer)).
    pub(crate) fn access_is_granted_per_allocation(&self) -> bool {
        matches!(self.release, Release::FreeAsync(..) | Release::Unmap(_))
    }

    /// Whether this is an array (`hipMallocArray`, `hipMalloc3DArray`): reached only through copies,
    /// texture and surface objects of its own device, never by another device's kernels.
    pub(crate) fn is_array(&self) -> bool {
        matches!(
            self.release,
            Release::FreeArray | Release::FreeMipmappedArray
        )
    }

    /// The raw handle or address the allocation was made with (an array's `hipArray_t`).
    pub(crate) fn raw_ptr(&self) -> *mut c_void {
        self.ptr
    }

    /// Order an operation on `stream` that makes `access` to this memory after the conflicting work
    /// queued earlier on other streams (up to the conflicting uses, not later work), and record the
    /// operation as a user at its label. Call it before queueing the operation, with the operation's
    /// HIP calls made before `op` is dropped. On a stream being captured, the use is recorded in the
    /// capture instead (the graph orders its launches and keeps the memory alive); host-visible memory
    /// (pinned, managed) is refused there ([`Error::InvalidArgument`]): a replay needs no borrow of the
    /// buffer, so it could write memory the host holds a slice of.
    ///
    /// An operation touching several allocations calls this in address order ([`by_address`]).
    #[inline]
    pub(crate) fn use_on(self: &Arc<Self>, op: &StreamOp<'_>, access: Access) -> Result<()> {
        if op.is_capturing() {
            if let Some(recorded) = self.use_in_capture(op, access) {
                return recorded;
            }
        }
        if self.untracked.load(Ordering::Relaxed) {
            return Ok(());
        }
        let id = op.handle().id;
        let word = match access {
            Access::Write => &self.sole,
            Access::Read => &self.reader,
        };
        if try_stamp(word, id, op.label()) {
            if self.shared.load(Ordering::Relaxed) {
                op.touch();
            }
            return Ok(());
        }
        self.use_on_slow(op.handle(), op.label(), access)?;
        if self.wants_marker(op.handle()) {
            op.touch();
        }
        Ok(())
    }

    /// Whether an operation on `stream` that used this memory on the slow path should leave a marker (a
    /// consumer on another stream then waits for exactly that operation): when another stream uses or
    /// used the memory, or on the memory's first use by a stream. Memory that stays on its one stream
    /// costs no marker after that first use (see [`crate::queue`]).
    fn wants_marker(&self, stream: &StreamHandle) -> bool {
        if stream.raw.is_null() || self.shared.load(Ordering::Relaxed) {
            return !stream.raw.is_null();
        }
        match self
            .first_stream
            .compare_exchange(0, stream.id, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => true,
            Err(first) if first == stream.id => false,
            Err(_) => {
                self.shared.store(true, Ordering::Relaxed);
                true
            }
        }
    }

    /// Like [`use_on`](Self::use_on), for work queued on the stream after `op` ends (raw work after
    /// `track_use`, a collective queued at the end of an RCCL group): the use is recorded [`OPEN`], so
    /// whoever waits for it waits for everything queued on the stream by then.
    pub(crate) fn use_on_open(self: &Arc<Self>, op: &StreamOp<'_>, access: Access) -> Result<()> {
        if op.is_capturing() {
            if let Some(recorded) = self.use_in_capture(op, access) {
                return recorded;
            }
        }
        if self.untracked.load(Ordering::Relaxed) {
            return Ok(());
        }
        self.use_on_slow(op.handle(), OPEN, access)
    }

    /// A call of an RCCL group (queued by NCCL when the outermost group ends) makes `access` on `op`'s
    /// stream: recorded open, and counted until [`group_done`](Self::group_done). Meanwhile every other
    /// use is refused, and so is a group call on another stream: nothing could be ordered after a call
    /// that is not queued yet.
    #[cfg_attr(not(feature = "rccl"), allow(dead_code))]
    pub(crate) fn use_in_group(self: &Arc<Self>, op: &StreamOp<'_>, access: Access) -> Result<()> {
        if self.group_calls.load(Ordering::Acquire) > 0 {
            let users = self.settled();
            let other = users
                .all()
                .into_iter()
                .find(|(s, pos)| *pos == OPEN && s.id != op.handle().id);
            self.publish(&users, None);
            if let Some((s, _)) = other {
                return Err(self.refuse_in_group(&format!(
                    "a call of the group on stream {} (this call is on stream {})",
                    s.id,
                    op.handle().id
                )));
            }
        }
        self.group_calls.fetch_add(1, Ordering::AcqRel);
        let recorded = if op.is_capturing() {
            self.use_in_capture(op, access).unwrap_or(Ok(()))
        } else if self.untracked.load(Ordering::Relaxed) {
            Ok(())
        } else {
            self.use_on_slow_unchecked(op.handle(), OPEN, access)
        };
        if recorded.is_err() {
            self.group_calls.fetch_sub(1, Ordering::AcqRel);
        }
        recorded
    }

    /// The group whose call used the memory has ended (its calls are queued).
    #[cfg_attr(not(feature = "rccl"), allow(dead_code))]
    pub(crate) fn group_done(&self) {
        self.group_calls.fetch_sub(1, Ordering::AcqRel);
    }

    /// The refusal of a use of memory a pending group call uses.
    #[cold]
    fn refuse_in_group(&self, use_: &str) -> Error {
        Error::InvalidArgument {
            what: "use of memory inside an RCCL group",
            value: format!("{use_}, on the buffer at {:?}", self.ptr),
            reason: "a collective or send/recv of the group that is still open uses this buffer, and NCCL \
                     queues it only when the group ends: use the buffer after rccl::group returns"
                .into(),
        }
    }

    /// [`use_on`](Self::use_on) while a capture made by this crate records `op`: the use is logged for the
    /// graph (`None`: no such capture, the stream is used as outside one). Out of line: the hot path of
    /// every operation stays short.
    #[cold]
    #[inline(never)]
    fn use_in_capture(self: &Arc<Self>, op: &StreamOp<'_>, access: Access) -> Option<Result<()>> {
        let log = op.capture_log()?;
        // A GraphPinnedBuffer's memory (with a lease) is borrow-checked against launches at run time.
        if self.host_visible && self.lease.get().is_none() {
            return Some(Err(Error::InvalidArgument {
                what: "memory used by a captured operation",
                value: "pinned or managed host-visible memory".into(),
                reason: "a graph replay is not borrow-checked against the host's slices of it; \
                         capture copies through device buffers and copy to or from the host outside \
                         the graph"
                    .into(),
            }));
        }
        log.record(self.clone(), access);
        Some(Ok(()))
    }

    /// Lock `users` with the fast-path words folded in and the uses known complete dropped.
    fn settled(&self) -> std::sync::MutexGuard<'_, Users<Arc<StreamHandle>>> {
        let mut users = lock(&self.users);
        users.fold(&self.sole, &self.reader);
        users.forget_done(|s, pos| s.queue.is_done(pos));
        users
    }

    /// Publish the fast-path words for `users` as they now stand; `reader` is the stream that just used
    /// the memory (its reads may be free).
    fn publish(&self, users: &Users<Arc<StreamHandle>>, reader: Option<u64>) {
        // While a call of an RCCL group uses the memory no fast path may exist: every other use (the
        // group's own stream included) must reach the slow path, which refuses it. `use_in_group` counts
        // the call before it records (and so before it publishes).
        let (sole, reader) = if self.group_calls.load(Ordering::Acquire) > 0 {
            (0, 0)
        } else {
            users.words(reader)
        };
        self.sole.store(sole, Ordering::Release);
        self.reader.store(reader, Ordering::Release);
    }

    #[cold]
    fn use_on_slow(&self, handle: &Arc<StreamHandle>, label: u64, access: Access) -> Result<()> {
        if self.group_calls.load(Ordering::Acquire) > 0 {
            return Err(self.refuse_in_group(&format!("an operation on stream {}", handle.id)));
        }
        self.use_on_slow_unchecked(handle, label, access)
    }

    fn use_on_slow_unchecked(
        &self,
        handle: &Arc<StreamHandle>,
        label: u64,
        access: Access,
    ) -> Result<()> {
        loop {
            let mut users = self.settled();
            // One pass: wait for each conflicting use, unless another thread is still queueing it.
            let waited = users.for_each_conflict(handle.id, access, |other, pos| {
                if other.queue.in_flight(pos) {
                    return Err(Conflict::Queueing(other.queue.clone(), pos));
                }
                handle
                    .queue
                    .wait_for(&other.queue, pos, label)
                    .map_err(Conflict::Failed)
            });
            match waited {
                Ok(()) => {
                    users.record(handle, label, access);
                    self.publish(&users, Some(handle.id));
                    return Ok(());
                }
                // Let it finish, without holding the lock, then look again. What this stream waited
                // for before it stays waited for: each was a conflicting use, and the stream's gate
                // (held by the caller) lets nothing of its own in between.
                Err(Conflict::Queueing(queue, pos)) => {
                    self.publish(&users, None);
                    drop(users);
                    queue.wait_queued(pos);
                }
                Err(Conflict::Failed(e)) => {
                    self.publish(&users, Some(handle.id));
                    return Err(e);
                }
            }
        }
    }

    /// Block the host until the work that conflicts with a host `access` (a read waits for the writer, a
    /// write for everyone) is done. Refused inside a host function ([`crate::host_fn`]): the work it
    /// would wait for may be queued behind the function itself.
    pub(crate) fn host_wait(&self, access: Access) -> Result<()> {
        if self.untracked.load(Ordering::Relaxed) {
            return Ok(());
        }
        if self.group_calls.load(Ordering::Acquire) > 0 {
            return Err(self.refuse_in_group("a host access"));
        }
        loop {
            let mut users = self.settled();
            let conflicts = users.host_conflicts(access);
            if !conflicts.is_empty() && crate::host_fn::in_host_fn() {
                self.publish(&users, None);
                return Err(crate::host_fn::refuse_wait());
            }
            if let Some((s, pos)) = conflicts.iter().find(|(s, pos)| s.queue.in_flight(*pos)) {
                let (queue, pos) = (s.queue.clone(), *pos);
                self.publish(&users, None);
                drop(users);
                queue.wait_queued(pos);
                continue;
            }
            let mut waited = Ok(());
            for (other, pos) in &conflicts {
                waited = other.queue.host_wait_for(*pos);
                if waited.is_err() {
                    break;
                }
            }
            if waited.is_ok() {
                users.host_done(access);
            }
            self.publish(&users, None);
            return waited;
        }
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
            Release::FreeAsync(..)
            | Release::HostFree
            | Release::IpcClose
            | Release::Unmap(_)
            | Release::FreeArray
            | Release::FreeMipmappedArray
            | Release::Unregister { .. } => Err(Error::InvalidArgument {
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
        let users = self.settled().all();
        for (other, pos) in users {
            match free_on {
                Some(f) if other.id == f.id => {}
                Some(f) => {
                    let op = f.begin_op();
                    f.queue.wait_for(&other.queue, pos, op.label())?;
                }
                None => other.queue.host_wait_for(pos)?,
            }
        }
        Ok(())
    }
}

/// Order one operation on two allocations (a copy's source and destination), in address order.
pub(crate) fn use_both(
    op: &StreamOp<'_>,
    (a, access_a): (&Arc<Allocation>, Access),
    (b, access_b): (&Arc<Allocation>, Access),
) -> Result<()> {
    if Arc::as_ptr(a) <= Arc::as_ptr(b) {
        a.use_on(op, access_a)?;
        b.use_on(op, access_b)
    } else {
        b.use_on(op, access_b)?;
        a.use_on(op, access_a)
    }
}

/// Why [`Allocation::use_on`]'s pass over the conflicting uses stopped.
enum Conflict {
    /// Another thread is still queueing the use (its queue, the use's label).
    Queueing(Arc<Queue>, u64),
    /// Waiting for it failed.
    Failed(Error),
}

/// Sort an operation's allocations by address, the order every operation takes them in: two operations
/// that each wait for a use the other is still queueing cannot both be waiting (see the module doc).
#[cfg_attr(
    not(any(
        feature = "blas",
        feature = "blaslt",
        feature = "solver",
        feature = "sparse",
        feature = "fft",
        feature = "rccl"
    )),
    allow(dead_code)
)]
pub(crate) fn by_address<T>(uses: &mut [(&Arc<Allocation>, T)]) {
    /// Up to this many uses (an operation's operands) take the insertion sort.
    const FEW: usize = 8;
    let key = |u: &(&Arc<Allocation>, T)| Arc::as_ptr(u.0) as usize;
    if uses.len() > FEW {
        return uses.sort_unstable_by_key(key);
    }
    // An operation's few operands: an insertion sort, inlined, without the general sort's setup.
    for i in 1..uses.len() {
        let mut j = i;
        while j > 0 && key(&uses[j - 1]) > key(&uses[j]) {
            uses.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// Record each of an operation's `uses` on `op` ([`Allocation::use_on`]), in address order
/// ([`by_address`]). Up to [`INLINE_USES`] uses are sorted on the stack: a library call's handful of
/// operands allocates nothing.
#[cfg(any(
    feature = "blas",
    feature = "solver",
    feature = "sparse",
    feature = "blaslt"
))]
#[inline]
pub(crate) fn use_by_address<'a>(
    op: &StreamOp<'_>,
    uses: impl IntoIterator<Item = (&'a Arc<Allocation>, Access)>,
) -> Result<()> {
    let mut uses = uses.into_iter();
    let Some(first) = uses.next() else {
        return Ok(());
    };
    let (mut inline, mut len, mut spilled) = ([first; INLINE_USES], 1, Vec::new());
    for u in uses {
        if len < INLINE_USES {
            inline[len] = u;
            len += 1;
        } else {
            if spilled.is_empty() {
                spilled.extend_from_slice(&inline);
            }
            spilled.push(u);
        }
    }
    let sorted = if spilled.is_empty() {
        &mut inline[..len]
    } else {
        &mut spilled[..]
    };
    by_address(sorted);
    for &(allocation, access) in sorted.iter() {
        allocation.use_on(op, access)?;
    }
    Ok(())
}

/// The uses [`use_by_address`] sorts without allocating.
#[cfg(any(
    feature = "blas",
    feature = "solver",
    feature = "sparse",
    feature = "blaslt"
))]
const INLINE_USES: usize = 8;

#[path = "allocation_release.rs"]
mod release;
pub(crate) use release::Release;

#[cfg(test)]
#[path = "tracking_tests.rs"]
mod tests;
