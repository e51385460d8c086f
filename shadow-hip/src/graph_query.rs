//! A graph's shape and its changes after the fact: its nodes, their types, edges and roots
//! (`hipGraphGetNodes`, `hipGraphNodeGetType`, `hipGraphGetEdges`, `hipGraphGetRootNodes`), removing a
//! node (`hipGraphDestroyNode`), adding and removing edges (`hipGraphAddDependencies`,
//! `hipGraphRemoveDependencies`: a graph is replayed in a topological order, graph.rs) and cloning
//! (`hipGraphClone`), and what a kernel, memset or child graph node does (`hipGraphKernelNodeGetParams`,
//! `hipGraphMemsetNodeGetParams`, `hipGraphChildGraphNodeGetGraph`). A removed node stays in its graph's list as a tombstone (handles are
//! indices), of type [`REMOVED`]: listed nowhere, replayed as nothing.

use crate::graph::{graphs, node_handle, node_place, Node, REMOVED};
use crate::graph_params::NodeParams;
use crate::streams::{self, Action};
use crate::{Status, INVALID_VALUE, SUCCESS};
use hip_sys as sys;
use std::sync::Arc;

/// The live nodes of `graph`, or None for an unknown graph.
fn live(graph: usize) -> Option<Arc<Vec<Node>>> {
    graphs(|g| g.graphs.get(&graph).cloned())
}

/// Write `items` to `out` (room for `*count`) and how many were written to `*count`; with `out`
/// null, only how many there are.
///
/// # Safety
/// `count` is writable; `out` is null or has room for `*count` items.
unsafe fn answer<T: Copy>(items: &[T], out: *mut T, count: *mut usize) -> Status {
    if count.is_null() {
        return INVALID_VALUE;
    }
    if out.is_null() {
        *count = items.len();
        return SUCCESS;
    }
    let k = items.len().min(*count);
    std::ptr::copy_nonoverlapping(items.as_ptr(), out, k);
    *count = k;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphGetNodes(
    graph: sys::hipGraph_t,
    nodes: *mut sys::hipGraphNode_t,
    count: *mut usize,
) -> Status {
    let Some(all) = live(graph as usize) else {
        return INVALID_VALUE;
    };
    let handles: Vec<_> = (0..all.len())
        .filter(|&i| all[i].ty != REMOVED)
        .map(|i| node_handle(graph as usize, i))
        .collect();
    answer(&handles, nodes, count)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphGetRootNodes(
    graph: sys::hipGraph_t,
    roots: *mut sys::hipGraphNode_t,
    count: *mut usize,
) -> Status {
    let Some(all) = live(graph as usize) else {
        return INVALID_VALUE;
    };
    let handles: Vec<_> = (0..all.len())
        .filter(|&i| all[i].ty != REMOVED && all[i].deps.is_empty())
        .map(|i| node_handle(graph as usize, i))
        .collect();
    answer(&handles, roots, count)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphGetEdges(
    graph: sys::hipGraph_t,
    from: *mut sys::hipGraphNode_t,
    to: *mut sys::hipGraphNode_t,
    count: *mut usize,
) -> Status {
    let Some(all) = live(graph as usize) else {
        return INVALID_VALUE;
    };
    let g = graph as usize;
    let edges: Vec<_> = (0..all.len())
        .flat_map(|j| {
            all[j]
                .deps
                .iter()
                .map(move |&d| (node_handle(g, d), node_handle(g, j)))
        })
        .collect();
    if from.is_null() != to.is_null() {
        return INVALID_VALUE;
    }
    let froms: Vec<_> = edges.iter().map(|e| e.0).collect();
    let tos: Vec<_> = edges.iter().map(|e| e.1).collect();
    if from.is_null() || count.is_null() {
        return answer(&froms, from, count);
    }
    let room = *count;
    let code = answer(&froms, from, count);
    *count = room;
    if code == SUCCESS {
        answer(&tos, to, count)
    } else {
        code
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphNodeGetType(
    node: sys::hipGraphNode_t,
    ty: *mut sys::hipGraphNodeType,
) -> Status {
    let (graph, idx) = node_place(node);
    match live(graph).and_then(|v| v.get(idx).map(|n| n.ty)) {
        Some(t) if t != REMOVED && !ty.is_null() => {
            *ty = t;
            SUCCESS
        }
        _ => INVALID_VALUE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphDestroyNode(node: sys::hipGraphNode_t) -> Status {
    let (graph, idx) = node_place(node);
    graphs(|g| {
        let Some(nodes) = g.graphs.get_mut(&graph) else {
            return INVALID_VALUE;
        };
        if nodes.get(idx).is_none_or(|n| n.ty == REMOVED) {
            return INVALID_VALUE;
        }
        let nodes = Arc::make_mut(nodes);
        let noop: Action = Arc::new(|_: &crate::clock::Clock, _: &Arc<str>| {});
        nodes[idx] = Node {
            deps: Vec::new(),
            ty: REMOVED,
            call: "a removed node (hipGraphDestroyNode)".into(),
            action: noop,
            event: None,
            child: None,
            params: None,
        };
        for n in nodes.iter_mut() {
            n.deps.retain(|&d| d != idx);
        }
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphClone(
    out: *mut sys::hipGraph_t,
    graph: sys::hipGraph_t,
) -> Status {
    if out.is_null() {
        return INVALID_VALUE;
    }
    let Some(nodes) = live(graph as usize) else {
        return INVALID_VALUE;
    };
    // The same nodes: a node's handle is its graph's handle and its index, so the copy's are its own.
    let h = streams::new_handle();
    graphs(|g| g.graphs.insert(h, Arc::new(nodes.to_vec())));
    *out = h as sys::hipGraph_t;
    SUCCESS
}

/// Add (`add`) or remove the edges `from[i]` -> `to[i]` of `graph`, all or none.
///
/// # Safety
/// `from` and `to` point at `n` handles each unless `n` is 0.
unsafe fn edit_edges(
    graph: sys::hipGraph_t,
    from: *const sys::hipGraphNode_t,
    to: *const sys::hipGraphNode_t,
    n: usize,
    add: bool,
) -> Status {
    if n > 0 && (from.is_null() || to.is_null()) {
        return INVALID_VALUE;
    }
    let g = graph as usize;
    graphs(|gs| {
        let Some(nodes) = gs.graphs.get_mut(&g) else {
            return INVALID_VALUE;
        };
        let mut edited = (**nodes).clone();
        for i in 0..n {
            let ((fg, f), (tg, t)) = (node_place(*from.add(i)), node_place(*to.add(i)));
            let live = |x: usize| edited.get(x).is_some_and(|node| node.ty != REMOVED);
            if fg != g || tg != g || f == t || !live(f) || !live(t) {
                return INVALID_VALUE;
            }
            let deps = &mut edited[t].deps;
            match (add, deps.iter().position(|&d| d == f)) {
                (true, None) => deps.push(f),
                (false, Some(at)) => {
                    deps.remove(at);
                }
                // An edge already there, or none to remove.
                _ => return INVALID_VALUE,
            }
        }
        *nodes = Arc::new(edited);
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddDependencies(
    graph: sys::hipGraph_t,
    from: *const sys::hipGraphNode_t,
    to: *const sys::hipGraphNode_t,
    n: usize,
) -> Status {
    edit_edges(graph, from, to, n, true)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphRemoveDependencies(
    graph: sys::hipGraph_t,
    from: *const sys::hipGraphNode_t,
    to: *const sys::hipGraphNode_t,
    n: usize,
) -> Status {
    edit_edges(graph, from, to, n, false)
}

/// The parameters of the node `node` names, if it has any.
fn params_of(node: sys::hipGraphNode_t) -> Option<NodeParams> {
    let (graph, idx) = node_place(node);
    graphs(|g| g.graphs.get(&graph)?.get(idx)?.params)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphKernelNodeGetParams(
    node: sys::hipGraphNode_t,
    out: *mut sys::hipKernelNodeParams,
) -> Status {
    let (
        Some(NodeParams::Kernel {
            func,
            grid,
            block,
            shared,
        }),
        Some(out),
    ) = (params_of(node), out.as_mut())
    else {
        return INVALID_VALUE;
    };
    let dim = |d: [u32; 3]| sys::dim3 {
        x: d[0],
        y: d[1],
        z: d[2],
    };
    out.func = func as *mut std::ffi::c_void;
    out.gridDim = dim(grid);
    out.blockDim = dim(block);
    out.sharedMemBytes = shared;
    out.kernelParams = std::ptr::null_mut();
    out.extra = std::ptr::null_mut();
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemsetNodeGetParams(
    node: sys::hipGraphNode_t,
    out: *mut sys::hipMemsetParams,
) -> Status {
    let (
        Some(NodeParams::Memset {
            dst,
            element_size,
            value,
            width,
            height,
            pitch,
        }),
        Some(out),
    ) = (params_of(node), out.as_mut())
    else {
        return INVALID_VALUE;
    };
    *out = sys::hipMemsetParams {
        dst: dst as *mut std::ffi::c_void,
        elementSize: element_size,
        height,
        pitch,
        value,
        width,
    };
    SUCCESS
}

/// The child's nodes as a graph of their own, one handle per node (made at the first query).
#[no_mangle]
pub unsafe extern "C" fn hipGraphChildGraphNodeGetGraph(
    node: sys::hipGraphNode_t,
    out: *mut sys::hipGraph_t,
) -> Status {
    let Some(out) = out.as_mut() else {
        return INVALID_VALUE;
    };
    let (graph, idx) = node_place(node);
    let found = graphs(|g| {
        let child = g.graphs.get(&graph)?.get(idx)?.child.clone()?;
        if let Some(&h) = g.children.get(&(node as usize)) {
            return Some(h);
        }
        let h = streams::new_handle();
        g.graphs.insert(h, child);
        g.children.insert(node as usize, h);
        Some(h)
    });
    match found {
        Some(h) => {
            *out = h as sys::hipGraph_t;
            SUCCESS
        }
        None => INVALID_VALUE,
    }
}
