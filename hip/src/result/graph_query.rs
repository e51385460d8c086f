//! A graph's shape and its changes after the fact: edges, root nodes, removing a node, cloning
//! (`hipGraphGetEdges`, `hipGraphGetRootNodes`, `hipGraphDestroyNode`, `hipGraphClone`), and what a
//! node does (`hipGraphKernelNodeGetParams`, `hipGraphMemsetNodeGetParams`,
//! `hipGraphChildGraphNodeGetGraph`).
//!
//! On HIP's NVIDIA platform these are the mappings hip-sys adds in `nvidia_graph.h`.

use super::check;
use crate::error::Result;
use hip_sys as sys;

/// `hipGraphGetEdges`: every edge of `graph` as (from, to) node pairs.
///
/// # Safety
/// `graph` is live.
pub unsafe fn graph_edges(
    graph: sys::hipGraph_t,
) -> Result<Vec<(sys::hipGraphNode_t, sys::hipGraphNode_t)>> {
    let mut count = 0usize;
    // SAFETY: the caller's contract; null arrays ask for the count only, written to a live local.
    check("hipGraphGetEdges", unsafe {
        sys::hipGraphGetEdges(
            graph,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut count,
        )
    })?;
    if count == 0 {
        return Ok(Vec::new());
    }
    let mut from = vec![std::ptr::null_mut(); count];
    let mut to = vec![std::ptr::null_mut(); count];
    // SAFETY: the caller's contract; `from` and `to` have room for `count` handles each.
    check("hipGraphGetEdges", unsafe {
        sys::hipGraphGetEdges(graph, from.as_mut_ptr(), to.as_mut_ptr(), &mut count)
    })?;
    Ok(from.into_iter().zip(to).take(count).collect())
}

/// `hipGraphGetRootNodes`: the nodes of `graph` that depend on none.
///
/// # Safety
/// `graph` is live.
pub unsafe fn graph_root_nodes(graph: sys::hipGraph_t) -> Result<Vec<sys::hipGraphNode_t>> {
    let mut count = 0usize;
    // SAFETY: the caller's contract; a null array asks for the count only, written to a live local.
    check("hipGraphGetRootNodes", unsafe {
        sys::hipGraphGetRootNodes(graph, std::ptr::null_mut(), &mut count)
    })?;
    if count == 0 {
        return Ok(Vec::new());
    }
    let mut roots = vec![std::ptr::null_mut(); count];
    // SAFETY: the caller's contract; `roots` has room for `count` handles.
    check("hipGraphGetRootNodes", unsafe {
        sys::hipGraphGetRootNodes(graph, roots.as_mut_ptr(), &mut count)
    })?;
    roots.truncate(count);
    Ok(roots)
}

/// `hipGraphDestroyNode`: remove `node` and its edges from its graph.
///
/// # Safety
/// `node` is a live node of a live graph, not used afterwards.
pub unsafe fn graph_destroy_node(node: sys::hipGraphNode_t) -> Result<()> {
    // SAFETY: the caller's contract.
    check("hipGraphDestroyNode", unsafe {
        sys::hipGraphDestroyNode(node)
    })
}

/// `hipGraphClone`: a new graph with copies of `graph`'s nodes and edges.
///
/// # Safety
/// `graph` is live.
pub unsafe fn graph_clone(graph: sys::hipGraph_t) -> Result<sys::hipGraph_t> {
    let mut clone = std::ptr::null_mut();
    // SAFETY: the caller's contract; `clone` is a live local HIP writes the new graph to.
    check("hipGraphClone", unsafe {
        sys::hipGraphClone(&mut clone, graph)
    })?;
    Ok(clone)
}

/// `hipGraphAddDependencies` (`add` true) or `hipGraphRemoveDependencies`: the `edges` (node, node
/// that runs after it) of `graph`.
///
/// # Safety
/// `graph` is live and every node is one of its live nodes.
pub unsafe fn graph_edit_dependencies(
    graph: sys::hipGraph_t,
    edges: &[(sys::hipGraphNode_t, sys::hipGraphNode_t)],
    add: bool,
) -> Result<()> {
    let from: Vec<_> = edges.iter().map(|e| e.0).collect();
    let to: Vec<_> = edges.iter().map(|e| e.1).collect();
    if add {
        // SAFETY: the caller's contract; two live arrays of `edges.len()` handles each.
        check("hipGraphAddDependencies", unsafe {
            sys::hipGraphAddDependencies(graph, from.as_ptr(), to.as_ptr(), edges.len())
        })
    } else {
        // SAFETY: as above.
        check("hipGraphRemoveDependencies", unsafe {
            sys::hipGraphRemoveDependencies(graph, from.as_ptr(), to.as_ptr(), edges.len())
        })
    }
}

/// `hipGraphKernelNodeGetParams`: what kernel node `node` launches, and how.
///
/// # Safety
/// `node` is a live kernel node of a live graph (AMD's HIP reads it as one).
pub unsafe fn kernel_node_params(node: sys::hipGraphNode_t) -> Result<sys::hipKernelNodeParams> {
    // SAFETY: plain C data (dimensions, sizes, null pointers), all-zero valid.
    let mut p: sys::hipKernelNodeParams = unsafe { std::mem::zeroed() };
    // SAFETY: the caller's contract; `p` is a live local HIP writes to.
    check("hipGraphKernelNodeGetParams", unsafe {
        sys::hipGraphKernelNodeGetParams(node, &mut p)
    })?;
    Ok(p)
}

/// `hipGraphMemsetNodeGetParams`: what memset node `node` sets, and to what.
///
/// # Safety
/// `node` is a live memset node of a live graph (AMD's HIP reads it as one).
pub unsafe fn memset_node_params(node: sys::hipGraphNode_t) -> Result<sys::hipMemsetParams> {
    // SAFETY: plain C data, all-zero valid.
    let mut p: sys::hipMemsetParams = unsafe { std::mem::zeroed() };
    // SAFETY: the caller's contract; `p` is a live local HIP writes to.
    check("hipGraphMemsetNodeGetParams", unsafe {
        sys::hipGraphMemsetNodeGetParams(node, &mut p)
    })?;
    Ok(p)
}

/// `hipGraphChildGraphNodeGetGraph`: the graph child graph node `node` holds, which the node owns.
///
/// # Safety
/// `node` is a live child graph node of a live graph (AMD's HIP reads it as one).
pub unsafe fn child_graph_of(node: sys::hipGraphNode_t) -> Result<sys::hipGraph_t> {
    let mut g = std::ptr::null_mut();
    // SAFETY: the caller's contract; `g` is a live local HIP writes to.
    check("hipGraphChildGraphNodeGetGraph", unsafe {
        sys::hipGraphChildGraphNodeGetGraph(node, &mut g)
    })?;
    Ok(g)
}
