//! What `graph_builder` needs of [`Graph`] and [`GraphExec`]: a graph from its parts, and the parts of
//! an executable graph its node updates change.

use super::{merge_uses, Graph, GraphExec, Kept, Uses};
use crate::device::Device;
use crate::stream::lock;
use hip_sys as sys;
use std::sync::Arc;

impl Graph {
    /// A graph built node by node (`graph_builder`): `raw` is owned from now on.
    pub(crate) fn from_parts(
        raw: sys::hipGraph_t,
        device: Device,
        kept: Kept,
        uses: Uses,
        origin: u64,
        removed: Vec<usize>,
    ) -> Graph {
        Graph {
            raw,
            calls: std::sync::Mutex::new(()),
            device,
            kept: Arc::new(kept),
            uses: Arc::new(merge_uses(uses)),
            origin,
            removed,
        }
    }

    /// The GraphBuilder that built it; 0 for a capture.
    pub(crate) fn origin(&self) -> u64 {
        self.origin
    }

    /// Whether the builder that built it removed its node `index`.
    pub(crate) fn removed(&self, index: usize) -> bool {
        self.removed.contains(&index)
    }

    /// The device, what the graph keeps alive and the allocations it uses (for a child graph node).
    pub(crate) fn parts(&self) -> (&Device, &Arc<Kept>, &Arc<Uses>) {
        (&self.device, &self.kept, &self.uses)
    }

    /// Hold the graph's calls off while `f` uses the raw handle.
    pub(crate) fn with_raw<R>(&self, f: impl FnOnce(sys::hipGraph_t) -> R) -> R {
        let _serialised = lock(&self.calls);
        f(self.raw)
    }
}

impl GraphExec {
    /// For node updates (`graph_builder`): the handle, device, what it keeps and uses, whether launched
    /// since made or last updated, and the builder it came from.
    pub(crate) fn parts_mut(&mut self) -> ExecParts<'_> {
        ExecParts {
            raw: self.raw,
            device: &self.device,
            kept: &mut self.kept,
            uses: &mut self.uses,
            launched: &mut self.launched,
            origin: self.origin,
        }
    }
}

/// [`GraphExec::parts_mut`].
pub(crate) struct ExecParts<'a> {
    pub(crate) raw: sys::hipGraphExec_t,
    pub(crate) device: &'a Device,
    pub(crate) kept: &'a mut Arc<Kept>,
    pub(crate) uses: &'a mut Arc<Uses>,
    pub(crate) launched: &'a mut bool,
    pub(crate) origin: u64,
}
