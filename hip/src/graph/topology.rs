//! What a graph is made of, as HIP reports it ([`Graph::topology`]), and a copy of a graph
//! ([`Graph::try_clone`]).

use super::Graph;
use crate::error::{Error, Result};
use crate::graph_builder::GraphNode;
use crate::result::{graph::graph_node_type, graph::graph_nodes, graph_query};
use hip_sys as sys;

/// What a graph node does (`hipGraphNodeType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum GraphNodeKind {
    /// A kernel launch.
    Kernel,
    /// A copy (1-, 2- or 3-D).
    Memcpy,
    /// A fill.
    Memset,
    /// A host function.
    Host,
    /// A child graph.
    ChildGraph,
    /// A node that does nothing (a join point).
    Empty,
    /// A wait for an event.
    WaitEvent,
    /// An event record.
    EventRecord,
    /// A type this crate does not name, as the runtime numbers it (its numbering differs between HIP
    /// 5.2.3, later HIP and the NVIDIA platform).
    Other(u32),
}

impl GraphNodeKind {
    /// The kind of a raw `hipGraphNodeType` of the HIP this crate was built with.
    ///
    /// ```
    /// use hip::GraphNodeKind;
    /// assert_eq!(GraphNodeKind::from_raw(hip::sys::hipGraphNodeTypeKernel), GraphNodeKind::Kernel);
    /// ```
    #[allow(clippy::unnecessary_cast)] // hipGraphNodeType is u32 on some platforms, i32 on others
    pub fn from_raw(raw: sys::hipGraphNodeType) -> GraphNodeKind {
        match raw {
            t if t == sys::hipGraphNodeTypeKernel => GraphNodeKind::Kernel,
            t if t == sys::hipGraphNodeTypeMemcpy => GraphNodeKind::Memcpy,
            t if t == sys::hipGraphNodeTypeMemset => GraphNodeKind::Memset,
            t if t == sys::hipGraphNodeTypeHost => GraphNodeKind::Host,
            t if t == sys::hipGraphNodeTypeGraph => GraphNodeKind::ChildGraph,
            t if t == sys::hipGraphNodeTypeEmpty => GraphNodeKind::Empty,
            t if t == sys::hipGraphNodeTypeWaitEvent => GraphNodeKind::WaitEvent,
            t if t == sys::hipGraphNodeTypeEventRecord => GraphNodeKind::EventRecord,
            t => GraphNodeKind::Other(t as u32),
        }
    }
}

/// A graph's nodes, their kinds and the edges between them ([`Graph::topology`]). Nodes are numbered
/// `0..len()` in the order `hipGraphGetNodes` gives them (an order HIP does not promise: find a built
/// node with [`position`](Self::position)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphTopology {
    /// The raw node handles, as addresses (a topology is a plain value, sent anywhere).
    handles: Vec<usize>,
    kinds: Vec<GraphNodeKind>,
    edges: Vec<(usize, usize)>,
    roots: Vec<usize>,
    /// The builder whose nodes these are (0: none's) and the ones it removed, for `position`.
    origin: u64,
    removed: Vec<usize>,
}

impl GraphTopology {
    /// How many nodes.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Each node's kind.
    pub fn kinds(&self) -> &[GraphNodeKind] {
        &self.kinds
    }

    /// How many nodes are of `kind`.
    pub fn count(&self, kind: GraphNodeKind) -> usize {
        self.kinds.iter().filter(|&&k| k == kind).count()
    }

    /// Every edge as (node, node that runs after it), sorted (`hipGraphGetEdges`).
    pub fn edges(&self) -> &[(usize, usize)] {
        &self.edges
    }

    /// The nodes that wait for no other, sorted (`hipGraphGetRootNodes`).
    pub fn roots(&self) -> &[usize] {
        &self.roots
    }

    /// The nodes `node` runs after, sorted.
    pub fn dependencies(&self, node: usize) -> Vec<usize> {
        self.edges
            .iter()
            .filter(|e| e.1 == node)
            .map(|e| e.0)
            .collect()
    }

    /// Where a node a [`GraphBuilder`](crate::GraphBuilder) added is in this topology: `None` for a
    /// node of another graph or one removed. The graph a builder builds holds the nodes it added;
    /// a clone or a captured graph holds others.
    pub fn position(&self, node: &GraphNode) -> Option<usize> {
        if node.builder() != self.origin || self.removed.contains(&node.index()) {
            // A removed node's handle may have been reused by HIP for another node.
            return None;
        }
        self.index_of(node.raw() as usize)
    }

    fn index_of(&self, handle: usize) -> Option<usize> {
        self.handles.iter().position(|&h| h == handle)
    }
}

impl Graph {
    /// The graph's nodes, their kinds and its edges (`hipGraphGetNodes`, `hipGraphNodeGetType`,
    /// `hipGraphGetEdges`, `hipGraphGetRootNodes`).
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for those calls;
    /// [`Error::InvalidArgument`] if HIP names an edge or root that is not among the graph's nodes.
    ///
    /// ```no_run
    /// # fn f(graph: &hip::Graph) -> hip::Result<()> {
    /// use hip::GraphNodeKind;
    /// let t = graph.topology()?;
    /// println!("{} nodes, {} kernels, {} edges", t.len(), t.count(GraphNodeKind::Kernel), t.edges().len());
    /// # Ok(()) }
    /// ```
    pub fn topology(&self) -> Result<GraphTopology> {
        self.device.bind()?;
        self.with_raw(|raw| {
            // SAFETY: `raw` is live while `self` is, and its calls are held off (`with_raw`).
            unsafe { topology_of(raw, self.origin, self.removed.clone()) }
        })
    }

    /// A copy of the graph (`hipGraphClone`): the same nodes and edges in a graph of its own, which keeps
    /// alive and is ordered by everything this one keeps and uses. Its nodes are new ones, so the nodes a
    /// [`GraphBuilder`](crate::GraphBuilder) returned do not name them: an executable graph made from the
    /// copy takes whole-graph [`update`](crate::GraphExec::update)s, not node updates.
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for `hipGraphClone`.
    ///
    /// ```no_run
    /// # fn f(graph: &hip::Graph, stream: &hip::Stream) -> hip::Result<()> {
    /// let copy = graph.try_clone()?;
    /// drop(copy.instantiate()?);
    /// # Ok(()) }
    /// ```
    pub fn try_clone(&self) -> Result<Graph> {
        self.device.bind()?;
        // SAFETY: `raw` is live while `self` is, and its calls are held off (`with_raw`).
        let raw = self.with_raw(|raw| unsafe { graph_query::graph_clone(raw) })?;
        Ok(Graph {
            raw,
            calls: std::sync::Mutex::new(()),
            device: self.device.clone(),
            kept: self.kept.clone(),
            uses: self.uses.clone(),
            // Not the builder's: its node handles name this graph's nodes, not the copy's.
            origin: 0,
            removed: Vec::new(),
        })
    }
}

/// The topology of the live graph `raw`, whose nodes a builder `origin` (0: none) made, less `removed`.
///
/// # Safety
/// `raw` is live and nothing changes it meanwhile.
pub(super) unsafe fn topology_of(
    raw: sys::hipGraph_t,
    origin: u64,
    removed: Vec<usize>,
) -> Result<GraphTopology> {
    // SAFETY: the caller's contract; the nodes are the ones HIP just listed for it.
    let nodes = unsafe { graph_nodes(raw)? };
    let mut kinds = Vec::with_capacity(nodes.len());
    for &n in &nodes {
        // SAFETY: as above.
        kinds.push(GraphNodeKind::from_raw(unsafe { graph_node_type(n)? }));
    }
    let mut t = GraphTopology {
        handles: nodes.iter().map(|&n| n as usize).collect(),
        kinds,
        edges: Vec::new(),
        roots: Vec::new(),
        origin,
        removed,
    };
    // SAFETY: as above.
    for (from, to) in unsafe { graph_query::graph_edges(raw)? } {
        let e = (
            t.known(from, "an edge's node")?,
            t.known(to, "an edge's node")?,
        );
        t.edges.push(e);
    }
    // SAFETY: as above.
    for r in unsafe { graph_query::graph_root_nodes(raw)? } {
        let r = t.known(r, "a root node")?;
        t.roots.push(r);
    }
    t.edges.sort_unstable();
    t.roots.sort_unstable();
    Ok(t)
}

impl GraphTopology {
    fn known(&self, node: sys::hipGraphNode_t, what: &'static str) -> Result<usize> {
        self.index_of(node as usize)
            .ok_or_else(|| Error::InvalidArgument {
                what: "graph topology",
                value: format!("{what} {node:?}"),
                reason: "HIP named a node hipGraphGetNodes did not list".into(),
            })
    }
}
