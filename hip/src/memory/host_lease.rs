//! Host borrows of pinned memory that graphs copy to and from ([`GraphPinnedBuffer`]): the run-time
//! borrow check that stands in for the compile-time one.
//!
//! A stream copy of a [`PinnedBuffer`](crate::PinnedBuffer) needs a borrow of it, which a slice the host
//! holds excludes; a graph launch needs none, so captures and graph nodes refuse ordinary pinned memory.
//! A [`GraphPinnedBuffer`]'s allocation carries a [`HostLease`] instead: the host's borrows are counted
//! in it, and a graph launch holds the lease of each such allocation it uses from before it records its
//! uses until it is queued, refusing to launch while the host holds a borrow that conflicts (a read
//! conflicts with a write). A host borrow takes the lease (refused while another host borrow
//! conflicts), then waits for the queued work that conflicts with it ([`Allocation::host_wait`]): a
//! launch queued before the borrow was recorded before it and is waited for; one after it is refused.
//!
//! Locks: a launch takes the leases in address order (its uses are sorted) before anything else; a host
//! borrow holds a lease only to count itself, waiting for nothing under it. So no two threads wait for
//! each other.
//!
//! [`GraphPinnedBuffer`]: crate::memory::GraphPinnedBuffer
//! [`Allocation::host_wait`]: super::tracking::Allocation

use super::users::Access;
use crate::error::{Error, Result};
use crate::queue::lock;
use std::sync::{Mutex, MutexGuard};

/// The host's borrows of one allocation that graphs also use.
#[derive(Debug, Default)]
pub(crate) struct HostLease {
    borrows: Mutex<Borrows>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Borrows {
    readers: usize,
    writer: bool,
}

impl Borrows {
    /// Whether an `access` (by the host or a graph) may begin while these borrows are held.
    fn allows(&self, access: Access) -> bool {
        match access {
            Access::Read => !self.writer,
            Access::Write => !self.writer && self.readers == 0,
        }
    }

    fn describe(&self) -> String {
        if self.writer {
            "borrowed mutably by the host (a GraphPinnedRefMut is alive)".into()
        } else {
            format!(
                "borrowed by the host ({} GraphPinnedRef alive)",
                self.readers
            )
        }
    }
}

impl HostLease {
    /// Count a host borrow making `access`, unless a host borrow that conflicts is held.
    pub(crate) fn begin(&self, access: Access) -> Result<()> {
        let mut b = lock(&self.borrows);
        if !b.allows(access) {
            return Err(Error::InvalidArgument {
                what: match access {
                    Access::Read => "GraphPinnedBuffer::borrow",
                    Access::Write => "GraphPinnedBuffer::borrow_mut",
                },
                value: format!("a buffer {}", b.describe()),
                reason:
                    "one mutable borrow or any number of shared ones at a time: drop the other \
                         borrow first"
                        .into(),
            });
        }
        match access {
            Access::Read => b.readers += 1,
            Access::Write => b.writer = true,
        }
        Ok(())
    }

    /// A host borrow counted by [`begin`](Self::begin) ended.
    pub(crate) fn end(&self, access: Access) {
        let mut b = lock(&self.borrows);
        match access {
            Access::Read => b.readers = b.readers.saturating_sub(1),
            Access::Write => b.writer = false,
        }
    }

    /// Hold the lease for a graph launch making `access`: refused while a host borrow conflicts.
    fn for_launch(&self, access: Access) -> Result<MutexGuard<'_, Borrows>> {
        let b = lock(&self.borrows);
        if b.allows(access) {
            Ok(b)
        } else {
            Err(Error::InvalidArgument {
                what: "graph launch",
                value: format!(
                    "a GraphPinnedBuffer the graph {} while it is {}",
                    match access {
                        Access::Read => "reads",
                        Access::Write => "writes",
                    },
                    b.describe()
                ),
                reason: "a replay would change or read memory the host holds a slice of: drop the \
                         borrow before launching"
                    .into(),
            })
        }
    }
}

/// The leases a graph launch holds until it is queued: one per lease of `leases` (those of the leased
/// allocations among its uses), taken in the order given (address order for
/// a graph's merged uses; a repeat of the lease just taken is skipped rather than locked twice). Empty
/// (no allocation) for a graph without [`GraphPinnedBuffer`](crate::memory::GraphPinnedBuffer)s.
pub(crate) fn hold_for_launch<'a>(
    leases: impl IntoIterator<Item = (&'a HostLease, Access)>,
) -> Result<Vec<MutexGuard<'a, Borrows>>> {
    let mut held = Vec::new();
    let mut last: Option<&HostLease> = None;
    for (lease, access) in leases {
        if last.is_some_and(|l| std::ptr::eq(l, lease)) {
            continue;
        }
        held.push(lease.for_launch(access)?);
        last = Some(lease);
    }
    Ok(held)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn host_borrows_exclude_each_other_as_references_do() {
        let lease = HostLease::default();
        lease.begin(Access::Read).unwrap();
        lease.begin(Access::Read).unwrap();
        let err = lease.begin(Access::Write).unwrap_err().to_string();
        assert!(
            err.contains("borrow_mut") && err.contains("2 GraphPinnedRef"),
            "{err}"
        );
        lease.end(Access::Read);
        assert!(lease.begin(Access::Write).is_err());
        lease.end(Access::Read);
        lease.begin(Access::Write).unwrap();
        let err = lease.begin(Access::Read).unwrap_err().to_string();
        assert!(
            err.contains("GraphPinnedBuffer::borrow") && err.contains("mutably"),
            "{err}"
        );
        assert!(lease.begin(Access::Write).is_err());
        lease.end(Access::Write);
        lease.begin(Access::Read).unwrap();
    }

    #[test]
    fn a_launch_is_refused_while_a_host_borrow_conflicts_with_its_access() {
        let lease = HostLease::default();
        // No borrow: both launches may go.
        assert!(lease.for_launch(Access::Read).is_ok());
        assert!(lease.for_launch(Access::Write).is_ok());
        // A host reader: a graph may read too, not write.
        lease.begin(Access::Read).unwrap();
        assert!(lease.for_launch(Access::Read).is_ok());
        let err = lease.for_launch(Access::Write).unwrap_err().to_string();
        assert!(
            err.contains("graph writes") && err.contains("1 GraphPinnedRef"),
            "{err}"
        );
        lease.end(Access::Read);
        // A host writer: neither.
        lease.begin(Access::Write).unwrap();
        let err = lease.for_launch(Access::Read).unwrap_err().to_string();
        assert!(
            err.contains("graph reads") && err.contains("mutably"),
            "{err}"
        );
        assert!(lease.for_launch(Access::Write).is_err());
        lease.end(Access::Write);
        assert!(lease.for_launch(Access::Write).is_ok());
    }

    #[test]
    fn a_launch_holds_each_lease_once() {
        let (input, output) = (HostLease::default(), HostLease::default());
        let leases = [
            (&input, Access::Read),
            (&input, Access::Read),
            (&output, Access::Write),
        ];
        // Every lease free: one guard per lease, the repeated one taken once.
        assert_eq!(hold_for_launch(leases).unwrap().len(), 2);
        assert_eq!(hold_for_launch([]).unwrap().len(), 0);
        // A host reader of the input lets the graph (which only reads it) go; one of the output does not.
        input.begin(Access::Read).unwrap();
        assert_eq!(hold_for_launch(leases).unwrap().len(), 2);
        output.begin(Access::Read).unwrap();
        let err = hold_for_launch(leases).unwrap_err().to_string();
        assert!(err.contains("graph writes"), "{err}");
        output.end(Access::Read);
        input.end(Access::Read);
        input.begin(Access::Write).unwrap();
        let err = hold_for_launch(leases).unwrap_err().to_string();
        assert!(err.contains("graph reads"), "{err}");
    }

    #[test]
    fn a_host_borrow_waits_for_a_launch_holding_the_lease() {
        // The launch holds the lease while it records and queues; a borrow begun meanwhile counts itself
        // only after the launch let go (and then waits for the launch's recorded use: not modelled here).
        let lease = Arc::new(HostLease::default());
        let held = lease.for_launch(Access::Write).unwrap();
        let l2 = lease.clone();
        let t = std::thread::spawn(move || l2.begin(Access::Write));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(
            !t.is_finished(),
            "the borrow must not begin while a launch holds the lease"
        );
        drop(held);
        t.join().unwrap().unwrap();
        assert!(lease.for_launch(Access::Read).is_err());
    }
}
