//! Edges added or removed after the nodes they join ([`GraphBuilder::add_dependency`],
//! [`GraphBuilder::remove_dependency`]).

use super::{GraphBuilder, GraphNode};
use crate::error::{Error, Result};
use crate::result::graph_query::graph_edit_dependencies;

impl GraphBuilder {
    /// Make `to` run after `from` too (`hipGraphAddDependencies`), as if `from` had been among its
    /// dependencies when it was added. What runs in which order inside a graph is the graph's own
    /// business: the memory model orders each launch as a whole, whatever its edges.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a node of another builder or a removed one, `from` and `to` being
    /// one node, an edge that is there already, or one that would close a cycle (`from` already runs
    /// after `to`: a graph with a cycle cannot run); what making the device current and
    /// `hipGraphAddDependencies` return.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, x: &mut DeviceBuffer<u32>, y: &mut DeviceBuffer<u32>) -> hip::Result<()> {
    /// let mut b = hip::GraphBuilder::new(device)?;
    /// let fill_x = b.memset(&[], x, 1u32)?;
    /// let fill_y = b.memset(&[], y, 2u32)?;
    /// b.add_dependency(fill_x, fill_y)?; // y's fill now waits for x's
    /// assert!(b.add_dependency(fill_y, fill_x).is_err()); // a cycle
    /// # Ok(()) }
    /// ```
    pub fn add_dependency(&mut self, from: GraphNode, to: GraphNode) -> Result<()> {
        const WHAT: &str = "graph dependency to add";
        self.live(WHAT, &from)?;
        self.live(WHAT, &to)?;
        let refuse = |reason: &str| {
            Err(Error::InvalidArgument {
                what: WHAT,
                value: format!("node {} -> node {}", from.index, to.index),
                reason: reason.into(),
            })
        };
        if from.index == to.index {
            return refuse("a node cannot run after itself");
        }
        if self.edges.contains(&(from.index, to.index)) {
            return refuse("the edge is there already");
        }
        if self.runs_after(from.index, to.index) {
            return refuse("it would close a cycle: the first node already runs after the second");
        }
        self.device.bind()?;
        // SAFETY: `self.raw` is live until build/Drop; both nodes are its live nodes (checked).
        unsafe { graph_edit_dependencies(self.raw, &[(from.raw, to.raw)], true)? };
        self.edges.push((from.index, to.index));
        Ok(())
    }

    /// Let `to` no longer wait for `from` (`hipGraphRemoveDependencies`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a node of another builder or a removed one, or no such edge;
    /// what making the device current and `hipGraphRemoveDependencies` return.
    ///
    /// ```no_run
    /// # fn f(b: &mut hip::GraphBuilder, first: hip::GraphNode, then: hip::GraphNode) -> hip::Result<()> {
    /// b.remove_dependency(first, then)?; // `then` may now run beside `first`
    /// # Ok(()) }
    /// ```
    pub fn remove_dependency(&mut self, from: GraphNode, to: GraphNode) -> Result<()> {
        const WHAT: &str = "graph dependency to remove";
        self.live(WHAT, &from)?;
        self.live(WHAT, &to)?;
        let Some(at) = self.edges.iter().position(|&e| e == (from.index, to.index)) else {
            return Err(Error::InvalidArgument {
                what: WHAT,
                value: format!("node {} -> node {}", from.index, to.index),
                reason: "there is no such edge".into(),
            });
        };
        self.device.bind()?;
        // SAFETY: as in add_dependency; the edge exists (checked).
        unsafe { graph_edit_dependencies(self.raw, &[(from.raw, to.raw)], false)? };
        self.edges.swap_remove(at);
        Ok(())
    }

    /// Whether node `later` runs after node `earlier` through the edges (a path from `earlier`).
    fn runs_after(&self, later: usize, earlier: usize) -> bool {
        let mut seen = vec![false; self.nodes];
        let mut stack = vec![earlier];
        while let Some(n) = stack.pop() {
            if n == later {
                return true;
            }
            if std::mem::replace(&mut seen[n], true) {
                continue;
            }
            stack.extend(self.edges.iter().filter(|e| e.0 == n).map(|e| e.1));
        }
        false
    }
}
