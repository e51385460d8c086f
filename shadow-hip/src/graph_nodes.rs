//! Graphs built node by node (`hipGraphCreate`, `hipGraphAdd*Node`) and node updates of executable
//! graphs (`hipGraphExec*NodeSetParams`): each node does what the queued operation of its kind does,
//! and replays like a captured one (graph.rs).

use crate::graph::{
    add_node, create, nodes_of, set_exec_child, set_exec_node, update_node, EventNode,
};
use crate::graph_params::NodeParams;
use crate::kernels::kernel_action;
use crate::memory::{self, Shape};
use crate::streams::Action;
use crate::{Status, INVALID_VALUE, SUCCESS};
use hip_sys as sys;
use std::ffi::c_void;
use std::sync::Arc;

/// The dependencies HIP is handed (`count` handles at `deps`, which may be null when `count` is 0).
///
/// # Safety
/// `deps` points at `count` handles unless null.
unsafe fn deps<'a>(
    deps: *const sys::hipGraphNode_t,
    count: usize,
) -> Option<&'a [sys::hipGraphNode_t]> {
    if count == 0 {
        Some(&[])
    } else if deps.is_null() {
        None
    } else {
        Some(std::slice::from_raw_parts(deps, count))
    }
}

/// Add the node and write its handle to `out`.
///
/// # Safety
/// `out` is null or writable; `d`/`n` as for [`deps`].
unsafe fn add(
    out: *mut sys::hipGraphNode_t,
    graph: sys::hipGraph_t,
    d: *const sys::hipGraphNode_t,
    n: usize,
    ty: sys::hipGraphNodeType,
    call: String,
    action: Action,
) -> Status {
    add_event(out, graph, d, n, ty, call, action, None)
}

/// [`add`] with an event node's event.
///
/// # Safety
/// As [`add`].
#[allow(clippy::too_many_arguments)]
unsafe fn add_event(
    out: *mut sys::hipGraphNode_t,
    graph: sys::hipGraph_t,
    d: *const sys::hipGraphNode_t,
    n: usize,
    ty: sys::hipGraphNodeType,
    call: String,
    action: Action,
    event: Option<EventNode>,
) -> Status {
    let (Some(d), false) = (deps(d, n), out.is_null()) else {
        return INVALID_VALUE;
    };
    match add_node(graph as usize, d, ty, call, action, event) {
        Ok(node) => {
            *out = node;
            SUCCESS
        }
        Err(code) => code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphCreate(out: *mut sys::hipGraph_t, flags: u32) -> Status {
    if out.is_null() || flags != 0 {
        return INVALID_VALUE;
    }
    *out = create() as sys::hipGraph_t;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddEmptyNode(
    out: *mut sys::hipGraphNode_t,
    graph: sys::hipGraph_t,
    d: *const sys::hipGraphNode_t,
    n: usize,
) -> Status {
    let noop: Action = Arc::new(|_: &crate::clock::Clock, _: &Arc<str>| {});
    add(
        out,
        graph,
        d,
        n,
        sys::hipGraphNodeTypeEmpty,
        "hipGraphAddEmptyNode".into(),
        noop,
    )
}

/// A memset node's action, or None for parameters HIP refuses (2-D memsets are not modelled).
fn memset_action(p: &sys::hipMemsetParams) -> Option<Action> {
    let size = p.elementSize as usize;
    (matches!(size, 1 | 2 | 4) && p.height <= 1)
        .then(|| memory::fill_action(p.dst as usize, p.value, size, p.width))
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemsetNode(
    out: *mut sys::hipGraphNode_t,
    graph: sys::hipGraph_t,
    d: *const sys::hipGraphNode_t,
    n: usize,
    params: *const sys::hipMemsetParams,
) -> Status {
    let Some((p, act)) = params.as_ref().and_then(|p| Some((p, memset_action(p)?))) else {
        return INVALID_VALUE;
    };
    let call = "hipGraphAddMemsetNode".into();
    let status = add(out, graph, d, n, sys::hipGraphNodeTypeMemset, call, act);
    if status == SUCCESS {
        update_node(graph as usize, *out, |node| {
            node.params = Some(NodeParams::memset(p))
        });
    }
    status
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemcpyNode1D(
    out: *mut sys::hipGraphNode_t,
    graph: sys::hipGraph_t,
    d: *const sys::hipGraphNode_t,
    n: usize,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    _kind: u32,
) -> Status {
    let act = memory::shaped_copy_action(Shape::linear(dst as usize, src as usize, count));
    add(
        out,
        graph,
        d,
        n,
        sys::hipGraphNodeTypeMemcpy,
        "hipGraphAddMemcpyNode1D".into(),
        act,
    )
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemcpyNode(
    out: *mut sys::hipGraphNode_t,
    graph: sys::hipGraph_t,
    d: *const sys::hipGraphNode_t,
    n: usize,
    params: *const sys::hipMemcpy3DParms,
) -> Status {
    let Some(shapes) = params.as_ref().and_then(|p| crate::texture::shapes_3d(p)) else {
        return INVALID_VALUE;
    };
    let act = crate::texture::copy_action(shapes);
    add(
        out,
        graph,
        d,
        n,
        sys::hipGraphNodeTypeMemcpy,
        "hipGraphAddMemcpyNode".into(),
        act,
    )
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddKernelNode(
    out: *mut sys::hipGraphNode_t,
    graph: sys::hipGraph_t,
    d: *const sys::hipGraphNode_t,
    n: usize,
    params: *const sys::hipKernelNodeParams,
) -> Status {
    let Some(p) = params.as_ref() else {
        return INVALID_VALUE;
    };
    let Some((name, act)) = kernel_action(p.func as sys::hipFunction_t, p.kernelParams) else {
        return sys::hipErrorInvalidDeviceFunction;
    };
    let call = format!("hipGraphAddKernelNode({name})");
    let status = add(out, graph, d, n, sys::hipGraphNodeTypeKernel, call, act);
    if status == SUCCESS {
        update_node(graph as usize, *out, |node| {
            node.params = Some(NodeParams::kernel(
                p.func as usize,
                p.gridDim,
                p.blockDim,
                p.sharedMemBytes,
            ))
        });
    }
    status
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddHostNode(
    out: *mut sys::hipGraphNode_t,
    graph: sys::hipGraph_t,
    d: *const sys::hipGraphNode_t,
    n: usize,
    params: *const sys::hipHostNodeParams,
) -> Status {
    let Some((Some(f), user)) = params.as_ref().map(|p| (p.fn_, p.userData as usize)) else {
        return INVALID_VALUE;
    };
    // SAFETY: HIP's contract for a host node: `f` may be called with its user data at every replay, on
    // a worker thread (the node runs as a host function: HIP calls from it are reported).
    let act: Action = Arc::new(move |_: &crate::clock::Clock, _: &Arc<str>| {
        crate::streams::as_host_fn(|| unsafe { f(user as *mut c_void) })
    });
    add(
        out,
        graph,
        d,
        n,
        sys::hipGraphNodeTypeHost,
        "hipGraphAddHostNode".into(),
        act,
    )
}

/// An event record or wait node on `event`, which must exist.
///
/// # Safety
/// As [`add`].
unsafe fn add_event_node(
    out: *mut sys::hipGraphNode_t,
    graph: sys::hipGraph_t,
    d: *const sys::hipGraphNode_t,
    n: usize,
    event: sys::hipEvent_t,
    wait: bool,
) -> Status {
    let e = event as usize;
    let known = {
        let mut g = crate::streams::lock();
        crate::streams::rt(&mut g).events.contains_key(&e)
    };
    if !known {
        return crate::INVALID_HANDLE;
    }
    // What the node does is decided at each launch (graph.rs binds it to the event then).
    let noop: Action = Arc::new(|_: &crate::clock::Clock, _: &Arc<str>| {});
    let (ty, call, ev) = if wait {
        let t = sys::hipGraphNodeTypeWaitEvent;
        (t, "hipGraphAddEventWaitNode", EventNode::Wait(e))
    } else {
        let t = sys::hipGraphNodeTypeEventRecord;
        (t, "hipGraphAddEventRecordNode", EventNode::Record(e))
    };
    add_event(out, graph, d, n, ty, call.into(), noop, Some(ev))
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddEventRecordNode(
    out: *mut sys::hipGraphNode_t,
    graph: sys::hipGraph_t,
    d: *const sys::hipGraphNode_t,
    n: usize,
    event: sys::hipEvent_t,
) -> Status {
    add_event_node(out, graph, d, n, event, false)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddEventWaitNode(
    out: *mut sys::hipGraphNode_t,
    graph: sys::hipGraph_t,
    d: *const sys::hipGraphNode_t,
    n: usize,
    event: sys::hipEvent_t,
) -> Status {
    add_event_node(out, graph, d, n, event, true)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddChildGraphNode(
    out: *mut sys::hipGraphNode_t,
    graph: sys::hipGraph_t,
    d: *const sys::hipGraphNode_t,
    n: usize,
    child: sys::hipGraph_t,
) -> Status {
    // A copy of the child's nodes as they are now, as HIP's, replayed in its place (graph::flatten).
    let Some(nodes) = nodes_of(child as usize).filter(|_| child != graph) else {
        return INVALID_VALUE;
    };
    let noop: Action = Arc::new(|_: &crate::clock::Clock, _: &Arc<str>| {});
    let call = "hipGraphAddChildGraphNode".into();
    let status = add(out, graph, d, n, sys::hipGraphNodeTypeGraph, call, noop);
    if status == SUCCESS {
        update_node(graph as usize, *out, |node| node.child = Some(nodes));
    }
    status
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecKernelNodeSetParams(
    exec: sys::hipGraphExec_t,
    node: sys::hipGraphNode_t,
    params: *const sys::hipKernelNodeParams,
) -> Status {
    let Some(p) = params.as_ref() else {
        return INVALID_VALUE;
    };
    let Some((name, act)) = kernel_action(p.func as sys::hipFunction_t, p.kernelParams) else {
        return sys::hipErrorInvalidDeviceFunction;
    };
    let call = format!("hipGraphExecKernelNodeSetParams({name})");
    set_exec_node(exec as usize, node, sys::hipGraphNodeTypeKernel, call, act)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecMemsetNodeSetParams(
    exec: sys::hipGraphExec_t,
    node: sys::hipGraphNode_t,
    params: *const sys::hipMemsetParams,
) -> Status {
    let Some(act) = params.as_ref().and_then(memset_action) else {
        return INVALID_VALUE;
    };
    let call = "hipGraphExecMemsetNodeSetParams".to_string();
    set_exec_node(exec as usize, node, sys::hipGraphNodeTypeMemset, call, act)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecMemcpyNodeSetParams1D(
    exec: sys::hipGraphExec_t,
    node: sys::hipGraphNode_t,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    _kind: u32,
) -> Status {
    let act = memory::shaped_copy_action(Shape::linear(dst as usize, src as usize, count));
    let call = "hipGraphExecMemcpyNodeSetParams1D".to_string();
    set_exec_node(exec as usize, node, sys::hipGraphNodeTypeMemcpy, call, act)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecMemcpyNodeSetParams(
    exec: sys::hipGraphExec_t,
    node: sys::hipGraphNode_t,
    params: *mut sys::hipMemcpy3DParms,
) -> Status {
    let Some(shapes) = params.as_ref().and_then(|p| crate::texture::shapes_3d(p)) else {
        return INVALID_VALUE;
    };
    let act = crate::texture::copy_action(shapes);
    let call = "hipGraphExecMemcpyNodeSetParams".to_string();
    set_exec_node(exec as usize, node, sys::hipGraphNodeTypeMemcpy, call, act)
}

/// The child node's replay becomes a copy of `child`'s nodes as they are now (HIP also requires the same
/// topology as the node's old child graph: not checked here).
#[no_mangle]
pub unsafe extern "C" fn hipGraphExecChildGraphNodeSetParams(
    exec: sys::hipGraphExec_t,
    node: sys::hipGraphNode_t,
    child: sys::hipGraph_t,
) -> Status {
    let Some(nodes) = nodes_of(child as usize) else {
        return INVALID_VALUE;
    };
    let call = "hipGraphExecChildGraphNodeSetParams".to_string();
    set_exec_child(exec as usize, node, call, nodes)
}
