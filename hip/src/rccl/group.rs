//! RCCL groups: [`group`], and what a group keeps until `ncclGroupEnd` has queued its calls (the memory
//! they use, and communicators dropped inside it).

use super::result;
use crate::device::Device;
use crate::error::Result;
use crate::memory::Allocation;
use rccl_sys as sys;
use std::sync::Arc;

/// Whether this thread is inside [`group`].
pub(super) fn in_group() -> bool {
    DEPTH.get() > 0
}

/// Keep `alloc` until the outermost group of this thread ends (a call of the group uses it). Called
/// inside a group only.
pub(super) fn keep(alloc: &Arc<Allocation>) {
    KEEP.with_borrow_mut(|kept| kept.push(Arc::clone(alloc)));
}

/// Note that a call of the group runs on the non-blocking communicator `raw`: if `ncclGroupEnd` answers
/// `ncclInProgress`, the group waits for each noted communicator before it lets go of the memory.
pub(super) fn note_nonblocking(raw: sys::ncclComm_t) {
    NONBLOCKING.with_borrow_mut(|comms| {
        if !comms.contains(&raw) {
            comms.push(raw);
        }
    });
}

/// `ncclGroupEnd`, then, when it answered `ncclInProgress`, the wait for every non-blocking communicator
/// the group used: the group's calls are queued when this returns.
fn end_group() -> Result<()> {
    let end = result::group_end();
    let comms = NONBLOCKING.with_borrow_mut(std::mem::take);
    let in_progress = matches!(end, Ok(true));
    let mut r = end.map(|_| ());
    if in_progress {
        for raw in comms {
            // SAFETY: noted by a call of this group, made on a live communicator; one dropped inside the
            // group is destroyed only after this (`defer_destroy`, handled by `Exit`).
            r = r.and(unsafe { result::settle("ncclGroupEnd", raw) });
        }
    }
    r
}

/// Inside a group: hand the communicator `raw` (of `device`) to the group, which destroys it after
/// `ncclGroupEnd` (calls on it may not be queued yet), and answer `true`. Outside one: `false`.
pub(super) fn defer_destroy(raw: sys::ncclComm_t, device: &Device) -> bool {
    if !in_group() {
        return false;
    }
    COMMS.with_borrow_mut(|comms| comms.push((raw, device.clone())));
    true
}

/// Run `f` between `ncclGroupStart` and `ncclGroupEnd`: the calls it queues are launched together when it
/// returns. Needed when one thread queues the parts of a collective for several devices, for matching
/// sends and receives, and for [`Comm::new`](super::Comm::new) of several ranks in one thread (NCCL / RCCL >= 2.14: see
/// there). `ncclGroupEnd` runs even if `f` fails or panics; `f`'s error comes first.
///
/// The calls are queued on their streams only when the outermost group ends, but ordered by the memory
/// model when they are made. The memory they use is kept alive until then (a buffer dropped inside `f` is
/// freed only after the call that used it), and so are communicators dropped inside `f` (destroyed after
/// `ncclGroupEnd`). Until the group ends, any other use of a buffer one of its calls uses (an operation
/// on any stream, a host access, `track_use`, a group call on another stream) is refused with
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming the buffer: nothing can be ordered after a call that is not queued
/// yet. [`Comm::new`](super::Comm::new) and [`Comm::init_all`](super::Comm::init_all) inside a group are refused with libraries older than 2.14.
///
/// An early return is not an undo. If `f` fails (or returns through `?`) after queueing some ranks'
/// part of a collective and before the others, `ncclGroupEnd` still launches the parts queued: an
/// incomplete collective, whose missing ranks never join, so the streams of the parts launched wait
/// forever (NCCL cannot withdraw a call once made). Check everything that can fail before the first
/// call of the group, or, when `group` returns such an error, [`Comm::abort`](super::Comm::abort) the
/// communicators involved.
pub fn group<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    result::group_start()?;
    DEPTH.set(DEPTH.get() + 1);
    let mut exit = Exit { ended: false };
    let r = f();
    let end = end_group();
    exit.ended = true;
    // After ncclGroupEnd queued the calls: a kept allocation freed now waits for them.
    drop(exit);
    let r = r?;
    end?;
    Ok(r)
}

/// Leaves one level of [`group`] however `f` ends. If `f` panicked, ncclGroupEnd is called here (the
/// thread is not left inside NCCL's group, where its later calls would never be launched). When the
/// outermost group ends its calls are queued: their memory may be used again, and freed (after them),
/// and the communicators dropped inside it are destroyed. Nested groups are queued with the outermost one,
/// so what they keep stays until then.
struct Exit {
    ended: bool,
}

impl Drop for Exit {
    fn drop(&mut self) {
        if !self.ended {
            let _ = end_group();
        }
        let depth = DEPTH.get() - 1;
        DEPTH.set(depth);
        if depth > 0 {
            return;
        }
        // Taken out first: dropping an allocation may free memory, which must not find the list borrowed.
        let mut kept = KEEP.with_borrow_mut(std::mem::take);
        for alloc in &kept {
            alloc.group_done();
        }
        kept.clear();
        // The emptied list serves the next group of this thread: no allocation per group.
        KEEP.with_borrow_mut(|k| {
            if k.capacity() == 0 {
                *k = kept;
            }
        });
        for (raw, device) in COMMS.with_borrow_mut(std::mem::take) {
            let _ = device.bind();
            // SAFETY: `raw` came from a `Comm` dropped inside the group, which handed it over instead of
            // destroying it: live, and destroyed only here, once, after ncclGroupEnd queued the calls
            // made on it.
            let _ = unsafe { result::comm_destroy(raw) };
        }
    }
}

thread_local! {
    /// How many [`group`]s this thread is inside.
    static DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// While `group` runs on this thread: the allocations its calls use, kept until ncclGroupEnd.
    static KEEP: std::cell::RefCell<Vec<Arc<Allocation>>> = const { std::cell::RefCell::new(Vec::new()) };
    /// While `group` runs on this thread: communicators dropped inside it, destroyed when it ends.
    static COMMS: std::cell::RefCell<Vec<(sys::ncclComm_t, Device)>> =
        const { std::cell::RefCell::new(Vec::new()) };
    /// While `group` runs on this thread: the non-blocking communicators its calls use.
    static NONBLOCKING: std::cell::RefCell<Vec<sys::ncclComm_t>> =
        const { std::cell::RefCell::new(Vec::new()) };
}
