//! Taking a node back out of a graph under construction ([`GraphBuilder::remove`]).

use super::{GraphBuilder, GraphNode};
use crate::error::Result;
use crate::result::graph_query::graph_destroy_node;

impl GraphBuilder {
    /// Remove `node` and its edges (`hipGraphDestroyNode`): the nodes after it no longer wait for it,
    /// and the graph's launches are no longer ordered by the buffers only it used. What it keeps (a
    /// kernel's module, a host closure, an event) stays kept until the graph goes, as HIP may still
    /// hold it. Its handle names no node from now on: as a dependency or in a node update it is refused.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a node of another builder or one
    /// already removed; what making the device current and `hipGraphDestroyNode` return (the node is
    /// then still there).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, x: &mut DeviceBuffer<u32>) -> hip::Result<()> {
    /// let mut b = hip::GraphBuilder::new(device)?;
    /// let fill = b.memset(&[], x, 7u32)?;
    /// let join = b.empty(&[fill])?;
    /// b.remove(fill)?; // the graph no longer writes x
    /// assert_eq!(b.len(), 1);
    /// let graph = b.build()?;
    /// assert_eq!((graph.node_count()?, graph.tracked_allocations()), (1, 0));
    /// # Ok(()) }
    /// ```
    pub fn remove(&mut self, node: GraphNode) -> Result<()> {
        self.live("graph node removal", &node)?;
        self.device.bind()?;
        // SAFETY: `node` is a node of `self.raw` (same builder, checked) not removed yet (checked), and
        // `self.raw` is live until build/Drop; its handle is never handed to HIP again (`live`).
        unsafe { graph_destroy_node(node.raw)? };
        self.removed.push(node.index);
        self.uses.retain(|(owner, _, _)| *owner != node.index);
        self.edges
            .retain(|&(from, to)| from != node.index && to != node.index);
        Ok(())
    }
}
