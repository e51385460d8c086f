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
    GROUP_KEEP.with(|k| k.borrow().is_some())
}

/// Keep `alloc` until the outermost group of this thread ends (a call of the group uses it).
pub(super) fn keep(alloc: &Arc<Allocation>) {
    GROUP_KEEP.with(|k| {
        if let Some(kept) = k.borrow_mut().as_mut() {
            kept.push(Arc::clone(alloc));
        }
    });
}

/// Inside a group: hand the communicator `raw` (of `device`) to the group, which destroys it after
/// `ncclGroupEnd` (calls on it may not be queued yet), and answer `true`. Outside one: `false`.
pub(super) fn defer_destroy(raw: sys::ncclComm_t, device: &Device) -> bool {
    GROUP_COMMS.with(|c| match c.borrow_mut().as_mut() {
        Some(list) => {
            list.push((raw, device.clone()));
            true
        }
        None => false,
    })
}

/// Run `f` between `ncclGroupStart` and `ncclGroupEnd`: the calls it queues are launched together when it
/// returns. Needed when one thread queues the parts of a collective for several devices, for matching
/// sends and receives, and for [`Comm::new`](super::Comm::new) of several ranks in one thread (NCCL / RCCL >= 2.14: see
/// there). `ncclGroupEnd` runs even if `f` fails; `f`'s error comes first.
///
/// The calls are queued on their streams only when the outermost group ends, but ordered by the memory
/// model when they are made. The memory they use is kept alive until then (a buffer dropped inside `f` is
/// freed only after the call that used it), and so are communicators dropped inside `f` (destroyed after
/// `ncclGroupEnd`). Until the group ends, any other use of a buffer one of its calls uses (an operation
/// on any stream, a host access, `track_use`, a group call on another stream) is refused with
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming the buffer: nothing can be ordered after a call that is not queued
/// yet. [`Comm::new`](super::Comm::new) and [`Comm::init_all`](super::Comm::init_all) inside a group are refused with libraries older than 2.14.
pub fn group<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    /// Puts back the enclosing group's list (or none) however `f` ends, and hands this group's list to it
    /// when nested (nested groups are queued with the outermost one).
    struct Restore(Option<Option<Vec<Arc<Allocation>>>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take().unwrap_or(None);
            let outermost = outer.is_none();
            let inner = GROUP_KEEP.with(|k| std::mem::replace(&mut *k.borrow_mut(), outer));
            if !outermost {
                GROUP_KEEP.with(|k| {
                    if let (Some(outer), Some(inner)) = (k.borrow_mut().as_mut(), inner) {
                        outer.extend(inner);
                    }
                });
                return;
            }
            // The outermost group ended: its calls are queued. Their memory may be used again, and freed
            // (after them, now that they are queued), and the communicators dropped inside go.
            let mut inner = inner.unwrap_or_default();
            for alloc in inner.drain(..) {
                alloc.group_done();
            }
            // The emptied list serves the next group of this thread: no allocation per group.
            GROUP_SPARE.set(inner);
            let comms = GROUP_COMMS
                .with(|c| c.borrow_mut().take())
                .unwrap_or_default();
            for (raw, device) in comms {
                let _ = device.bind();
                // SAFETY: `raw` came from a `Comm` dropped inside the group, which handed it over instead
                // of destroying it: live, and destroyed only here, once, after ncclGroupEnd queued the
                // calls made on it.
                let _ = unsafe { result::comm_destroy(raw) };
            }
        }
    }
    let outer = GROUP_KEEP.with(|k| k.borrow_mut().replace(GROUP_SPARE.take()));
    GROUP_COMMS.with(|c| {
        c.borrow_mut().get_or_insert_with(Vec::new);
    });
    let restore = Restore(Some(outer));
    result::group_start()?;
    let r = f();
    let end = result::group_end();
    // Dropped after ncclGroupEnd queued the calls: a kept allocation freed now waits for them.
    drop(restore);
    let r = r?;
    end?;
    Ok(r)
}

thread_local! {
    /// While `group` runs on this thread: the allocations its calls use, kept until ncclGroupEnd.
    static GROUP_KEEP: std::cell::RefCell<Option<Vec<Arc<Allocation>>>> =
        const { std::cell::RefCell::new(None) };
    /// The emptied `GROUP_KEEP` list of this thread's last outermost group, for the next one.
    static GROUP_SPARE: std::cell::Cell<Vec<Arc<Allocation>>> =
        const { std::cell::Cell::new(Vec::new()) };
    /// While `group` runs on this thread: communicators dropped inside it, destroyed when it ends.
    static GROUP_COMMS: std::cell::RefCell<Option<Vec<(sys::ncclComm_t, Device)>>> =
        const { std::cell::RefCell::new(None) };
}
