//! What one node of a graph does, as HIP reports it: a kernel node's launch configuration
//! ([`Graph::kernel_node_config`]), a memset node's destination and value
//! ([`Graph::memset_node_params`]) and a child graph node's graph ([`Graph::child_graph_topology`]).
//! Nodes are named by their place in [`Graph::topology`].

use super::topology::topology_of;
use super::{Graph, GraphNodeKind, GraphTopology};
use crate::error::{Error, Result};
use crate::launch::{Dim3, LaunchConfig};
use crate::result::{graph::graph_node_type, graph::graph_nodes, graph_query};
use hip_sys as sys;

/// What a memset node sets ([`Graph::memset_node_params`]): `height` rows of `width` elements of
/// `element_size` bytes, `pitch` bytes apart, from `address`, each set to the low `element_size` bytes
/// of `value`. An address, not a pointer: it says where, and gives no access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemsetNodeParams {
    /// The first element's device address.
    pub address: usize,
    /// Bytes per element: 1, 2 or 4.
    pub element_size: u32,
    /// The value, in its low `element_size` bytes.
    pub value: u32,
    /// Elements per row.
    pub width: usize,
    /// Rows (1 for a 1-D memset).
    pub height: usize,
    /// Bytes from one row to the next (HIP reports 0 or the row's size for a 1-D memset).
    pub pitch: usize,
}

impl Graph {
    /// The grid, block and dynamic shared memory of kernel node `node` (its place in
    /// [`topology`](Graph::topology)), built or captured (`hipGraphKernelNodeGetParams`). An executable
    /// graph's node updates do not change it: they change the executable graph, not this one.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a `node` past the graph's nodes or not a kernel node (naming its
    /// kind); [`Error::Hip`] with what HIP returns for making the device current and for the calls.
    ///
    /// ```no_run
    /// # fn f(graph: &hip::Graph) -> hip::Result<()> {
    /// use hip::GraphNodeKind;
    /// let t = graph.topology()?;
    /// for node in (0..t.len()).filter(|&i| t.kinds()[i] == GraphNodeKind::Kernel) {
    ///     let c = graph.kernel_node_config(node)?;
    ///     println!("node {node}: {} blocks of {} threads", c.grid.volume(), c.block.volume());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn kernel_node_config(&self, node: usize) -> Result<LaunchConfig> {
        let p = self.with_node(
            "graph kernel node query",
            node,
            GraphNodeKind::Kernel,
            |n| {
                // SAFETY: `n` is a live kernel node of this live graph (checked by with_node).
                unsafe { graph_query::kernel_node_params(n) }
            },
        )?;
        let dim = |d: sys::dim3| Dim3 {
            x: d.x,
            y: d.y,
            z: d.z,
        };
        Ok(LaunchConfig {
            grid: dim(p.gridDim),
            block: dim(p.blockDim),
            shared_mem_bytes: p.sharedMemBytes,
        })
    }

    /// What memset node `node` (its place in [`topology`](Graph::topology)) sets, built or captured
    /// (`hipGraphMemsetNodeGetParams`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a `node` past the graph's nodes or not a memset node (naming its
    /// kind); [`Error::Hip`] with what HIP returns for making the device current and for the calls.
    ///
    /// ```no_run
    /// # fn f(graph: &hip::Graph) -> hip::Result<()> {
    /// let p = graph.memset_node_params(0)?;
    /// println!("{} x {} elements of {} bytes set to {:#x}", p.height, p.width, p.element_size, p.value);
    /// # Ok(()) }
    /// ```
    pub fn memset_node_params(&self, node: usize) -> Result<MemsetNodeParams> {
        let p = self.with_node(
            "graph memset node query",
            node,
            GraphNodeKind::Memset,
            |n| {
                // SAFETY: `n` is a live memset node of this live graph (checked by with_node).
                unsafe { graph_query::memset_node_params(n) }
            },
        )?;
        Ok(MemsetNodeParams {
            address: p.dst as usize,
            element_size: p.elementSize,
            value: p.value,
            width: p.width,
            height: p.height,
            pitch: p.pitch,
        })
    }

    /// The topology of the graph child graph node `node` (its place in [`topology`](Graph::topology))
    /// runs: HIP's copy, made when the node was added or last updated in this graph
    /// (`hipGraphChildGraphNodeGetGraph`). Its nodes are HIP's copies, which no builder's node names.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a `node` past the graph's nodes or not a child graph node (naming
    /// its kind); [`Error::Hip`] with what HIP returns for making the device current and for the calls.
    ///
    /// ```no_run
    /// # fn f(graph: &hip::Graph) -> hip::Result<()> {
    /// use hip::GraphNodeKind;
    /// let t = graph.topology()?;
    /// if let Some(node) = t.kinds().iter().position(|&k| k == GraphNodeKind::ChildGraph) {
    ///     println!("the child graph has {} nodes", graph.child_graph_topology(node)?.len());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn child_graph_topology(&self, node: usize) -> Result<GraphTopology> {
        const WHAT: &str = "graph child graph node query";
        self.with_node(WHAT, node, GraphNodeKind::ChildGraph, |n| {
            // SAFETY: `n` is a live child graph node of this live graph (checked by with_node), whose
            // calls are held off while `with_node` runs: the child it owns lives and stays as it is.
            unsafe {
                let child = graph_query::child_graph_of(n)?;
                topology_of(child, 0, Vec::new())
            }
        })
    }

    /// `f` of node `node` (in `hipGraphGetNodes`' order), refused unless it is of `kind`: AMD's HIP 5
    /// reads a node of another kind as the kind the call asks for, unchecked (later versions refuse it).
    fn with_node<R>(
        &self,
        what: &'static str,
        node: usize,
        kind: GraphNodeKind,
        f: impl FnOnce(sys::hipGraphNode_t) -> Result<R>,
    ) -> Result<R> {
        self.device.bind()?;
        self.with_raw(|raw| {
            // SAFETY: `raw` is live while `self` is, and its calls are held off (`with_raw`).
            let nodes = unsafe { graph_nodes(raw)? };
            let Some(&n) = nodes.get(node) else {
                return Err(Error::InvalidArgument {
                    what,
                    value: format!("node {node}"),
                    reason: format!("the graph has {} nodes", nodes.len()),
                });
            };
            // SAFETY: `n` is one of the nodes HIP just listed for the live graph.
            let found = GraphNodeKind::from_raw(unsafe { graph_node_type(n)? });
            if found != kind {
                return Err(Error::InvalidArgument {
                    what,
                    value: format!("node {node}, a {found:?} node"),
                    reason: format!("this asks a {kind:?} node"),
                });
            }
            f(n)
        })
    }
}
