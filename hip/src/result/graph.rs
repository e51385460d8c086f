//! Stream capture and graphs (`hipStreamBeginCapture`, `hipGraphInstantiate`, `hipGraphLaunch`, ...).
//!
//! On HIP's NVIDIA platform these are the one-line mappings onto the CUDA runtime that hip-sys adds
//! (`nvidia_graph.h`): HIP 5.2.3's and 5.7.1's NVIDIA headers define them only for nvcc.

use super::check;
use crate::error::{Error, FailedGraphNode, GraphUpdateFailure, Result};
use hip_sys as sys;

/// `hipStreamBeginCapture`: work queued on `stream` from now on is recorded into a graph, not run.
///
/// # Safety
/// `stream` is live and not the null stream.
pub unsafe fn stream_begin_capture(
    stream: sys::hipStream_t,
    mode: sys::hipStreamCaptureMode,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `stream` is live and not the null stream.
    check("hipStreamBeginCapture", unsafe {
        sys::hipStreamBeginCapture(stream, mode)
    })
}

/// `hipStreamEndCapture`: the graph recorded since [`stream_begin_capture`]. A capture invalidated by an
/// operation that cannot be captured fails here (`hipErrorStreamCaptureInvalidated`).
///
/// # Safety
/// `stream` is live and capturing.
pub unsafe fn stream_end_capture(stream: sys::hipStream_t) -> Result<sys::hipGraph_t> {
    let mut g = std::ptr::null_mut();
    // SAFETY: the caller's contract (`# Safety`): `stream` is live and capturing; `g` is a live local for
    // the graph.
    check("hipStreamEndCapture", unsafe {
        sys::hipStreamEndCapture(stream, &mut g)
    })?;
    Ok(g)
}

/// `hipStreamIsCapturing`: the stream's `hipStreamCaptureStatus`.
///
/// # Safety
/// `stream` is live (or null).
pub unsafe fn stream_is_capturing(stream: sys::hipStream_t) -> Result<sys::hipStreamCaptureStatus> {
    // SAFETY: hipStreamCaptureStatus is an integer type (bindgen's constants, on both platforms): all-zero
    // bits are a value.
    let mut status = unsafe { std::mem::zeroed() };
    // SAFETY: the caller's contract (`# Safety`): `stream` is live (or null); `status` is a live local HIP
    // writes to.
    check("hipStreamIsCapturing", unsafe {
        sys::hipStreamIsCapturing(stream, &mut status)
    })?;
    Ok(status)
}

/// `hipStreamGetCaptureInfo`: the stream's `hipStreamCaptureStatus` and its capture's id (unique in the
/// process; meaningful while a capture is active or invalidated).
///
/// # Safety
/// `stream` is live (or null).
pub unsafe fn stream_get_capture_info(
    stream: sys::hipStream_t,
) -> Result<(sys::hipStreamCaptureStatus, u64)> {
    // SAFETY: hipStreamCaptureStatus is an integer type (bindgen's constants, on both platforms): all-zero
    // bits are a value.
    let mut status = unsafe { std::mem::zeroed() };
    let mut id: std::os::raw::c_ulonglong = 0;
    // SAFETY: the caller's contract (`# Safety`): `stream` is live (or null); `status` and `id` are live
    // locals HIP writes to.
    check("hipStreamGetCaptureInfo", unsafe {
        sys::hipStreamGetCaptureInfo(stream, &mut status, &mut id)
    })?;
    Ok((status, id))
}

/// `hipThreadExchangeStreamCaptureMode`: set the calling thread's capture interaction mode to `mode` and
/// return the one it had. In `hipStreamCaptureModeRelaxed` the thread may make calls a capture in global
/// or thread-local mode would refuse (allocations, event queries), as a library does for its own
/// bookkeeping while the caller's stream is captured.
pub fn thread_exchange_capture_mode(
    mode: sys::hipStreamCaptureMode,
) -> Result<sys::hipStreamCaptureMode> {
    let mut m = mode;
    // SAFETY: `m` is a live local holding a valid mode; HIP writes the previous one back into it.
    check("hipThreadExchangeStreamCaptureMode", unsafe {
        sys::hipThreadExchangeStreamCaptureMode(&mut m)
    })?;
    Ok(m)
}

/// `hipGraphDestroy`.
///
/// # Safety
/// `graph` is live and not used afterwards (executable graphs made from it stay valid).
pub unsafe fn graph_destroy(graph: sys::hipGraph_t) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `graph` is live and not used afterwards.
    check("hipGraphDestroy", unsafe { sys::hipGraphDestroy(graph) })
}

/// `hipGraphInstantiate` (no error node or log asked for).
///
/// # Safety
/// `graph` is live.
pub unsafe fn graph_instantiate(graph: sys::hipGraph_t) -> Result<sys::hipGraphExec_t> {
    let mut exec = std::ptr::null_mut();
    // SAFETY: the caller's contract (`# Safety`): `graph` is live; `exec` is a live local for the handle,
    // and no error node or log is asked for (null, 0).
    check("hipGraphInstantiate", unsafe {
        sys::hipGraphInstantiate(
            &mut exec,
            graph,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    })?;
    Ok(exec)
}

/// `hipGraphInstantiateWithFlags`.
///
/// # Safety
/// `graph` is live and not used by another thread during the call.
pub unsafe fn graph_instantiate_with_flags(
    graph: sys::hipGraph_t,
    flags: u64,
) -> Result<sys::hipGraphExec_t> {
    let mut exec = std::ptr::null_mut();
    // SAFETY: the caller's contract (`# Safety`): `graph` is live and no other thread uses it during the
    // call; `exec` is a live local for the handle.
    check("hipGraphInstantiateWithFlags", unsafe {
        sys::hipGraphInstantiateWithFlags(&mut exec, graph, flags as _)
    })?;
    Ok(exec)
}

/// `hipGraphLaunch`.
///
/// # Safety
/// Both handles are live, and all memory the graph's nodes touch stays valid until the launch completes.
pub unsafe fn graph_launch(exec: sys::hipGraphExec_t, stream: sys::hipStream_t) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): both handles are live, and the memory the graph's nodes
    // touch stays valid until the launch completes.
    check("hipGraphLaunch", unsafe {
        sys::hipGraphLaunch(exec, stream)
    })
}

/// `hipGraphExecDestroy`.
///
/// # Safety
/// `exec` is live and not used afterwards. Launches already queued keep running.
pub unsafe fn graph_exec_destroy(exec: sys::hipGraphExec_t) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `exec` is live and not used afterwards.
    check("hipGraphExecDestroy", unsafe {
        sys::hipGraphExecDestroy(exec)
    })
}

/// `hipGraphExecUpdate`: give `exec` the parameters of `graph`, which must have the same topology. A
/// refusal is [`Error::GraphUpdate`] with HIP's update result (topology, node type, function or
/// parameters changed, not supported) and the node of `graph` it failed at.
///
/// # Safety
/// Both handles are live; all memory `graph`'s nodes touch stays valid until every later launch completes.
pub unsafe fn graph_exec_update(exec: sys::hipGraphExec_t, graph: sys::hipGraph_t) -> Result<()> {
    let mut error_node = std::ptr::null_mut();
    // SAFETY: hipGraphExecUpdateResult is an integer type (bindgen's constants, on both platforms):
    // all-zero bits are a value.
    let mut outcome: sys::hipGraphExecUpdateResult = unsafe { std::mem::zeroed() };
    // SAFETY: the caller's contract (`# Safety`): both handles are live and `graph`'s nodes touch memory
    // valid for every later launch; `error_node` and `outcome` are live locals HIP writes to.
    let code = unsafe { sys::hipGraphExecUpdate(exec, graph, &mut error_node, &mut outcome) };
    if code == sys::hipSuccess {
        return Ok(());
    }
    let node = if error_node.is_null() {
        None
    } else {
        // SAFETY: `graph` is live (the caller's contract) and `error_node` is what HIP named.
        unsafe { failed_node(graph, error_node) }
    };
    Err(update_refused(
        "hipGraphExecUpdate",
        code,
        Some((outcome as i64, update_result_name(outcome))),
        node,
    ))
}

/// [`Error::GraphUpdate`] for HIP's refusal `code` of `call`: a whole-graph update's result (`Some`), or a
/// node update's (`None`); `node`, the node it failed at. A code the crate reports as another error
/// ([`Error::NoDevice`]) stays that error.
pub fn update_refused(
    call: &'static str,
    code: sys::hipError_t,
    result: Option<(i64, &'static str)>,
    node: Option<FailedGraphNode>,
) -> Error {
    match Error::from_hip(call, code) {
        Error::Hip {
            call,
            code,
            message,
        } => Error::GraphUpdate {
            call,
            code,
            failure: Box::new(GraphUpdateFailure {
                message,
                update_result: result.map(|r| r.0),
                meaning: result.map_or("", |r| r.1),
                node,
                whole_graph: result.is_some(),
            }),
        },
        other => other,
    }
}

/// Where `node` is among `graph`'s nodes (in `hipGraphGetNodes`' order) and what kind it is; `None` if
/// it is not one of them (or the graph's nodes cannot be listed).
///
/// # Safety
/// `graph` is live; `node` is a node HIP named (of `graph` or of an executable graph's).
pub unsafe fn failed_node(
    graph: sys::hipGraph_t,
    node: sys::hipGraphNode_t,
) -> Option<FailedGraphNode> {
    // SAFETY: the caller's contract: `graph` is live.
    let nodes = unsafe { graph_nodes(graph) }.ok()?;
    let index = nodes.iter().position(|&n| n == node)?;
    // SAFETY: `node` is a live node of the live `graph` (found among its nodes).
    let kind = unsafe { graph_node_type(node) }.map_or("a node", node_type_name);
    Some(FailedGraphNode {
        index,
        count: nodes.len(),
        kind,
    })
}

/// "a kernel node" and so on, for a `hipGraphNodeType`.
pub fn node_type_name(t: sys::hipGraphNodeType) -> &'static str {
    match t {
        sys::hipGraphNodeTypeKernel => "a kernel node",
        sys::hipGraphNodeTypeMemcpy => "a copy node",
        sys::hipGraphNodeTypeMemset => "a memset node",
        sys::hipGraphNodeTypeHost => "a host node",
        sys::hipGraphNodeTypeGraph => "a child graph node",
        sys::hipGraphNodeTypeEmpty => "an empty node",
        sys::hipGraphNodeTypeWaitEvent => "an event wait node",
        sys::hipGraphNodeTypeEventRecord => "an event record node",
        _ => "a node of another type",
    }
}

/// What a `hipGraphExecUpdateResult` means.
pub fn update_result_name(value: sys::hipGraphExecUpdateResult) -> &'static str {
    match value {
        sys::hipGraphExecUpdateSuccess => "success",
        sys::hipGraphExecUpdateError => {
            "the update failed for a reason HIP does not name (hipGraphExecUpdateError)"
        }
        sys::hipGraphExecUpdateErrorTopologyChanged => {
            "the graph's topology changed (hipGraphExecUpdateErrorTopologyChanged)"
        }
        sys::hipGraphExecUpdateErrorNodeTypeChanged => {
            "a node's type changed (hipGraphExecUpdateErrorNodeTypeChanged)"
        }
        sys::hipGraphExecUpdateErrorFunctionChanged => {
            "a kernel node's function changed (hipGraphExecUpdateErrorFunctionChanged)"
        }
        sys::hipGraphExecUpdateErrorParametersChanged => {
            "a node's parameters changed in a way HIP cannot update \
             (hipGraphExecUpdateErrorParametersChanged)"
        }
        sys::hipGraphExecUpdateErrorNotSupported => {
            "the update is not supported for a node (hipGraphExecUpdateErrorNotSupported)"
        }
        sys::hipGraphExecUpdateErrorUnsupportedFunctionChange => {
            "a kernel node's function changed in an unsupported way \
             (hipGraphExecUpdateErrorUnsupportedFunctionChange)"
        }
        _ => "an update result this crate does not know",
    }
}

/// `hipGraphGetNodes`: every node of `graph`.
///
/// # Safety
/// `graph` is live.
pub unsafe fn graph_nodes(graph: sys::hipGraph_t) -> Result<Vec<sys::hipGraphNode_t>> {
    let mut count = 0usize;
    // SAFETY: the caller's contract (`# Safety`): `graph` is live; `count` is a live local, and `nodes`
    // (when given) has room for `count` handles.
    check("hipGraphGetNodes", unsafe {
        sys::hipGraphGetNodes(graph, std::ptr::null_mut(), &mut count)
    })?;
    if count == 0 {
        // Asking again for no nodes is an error on CUDA (an empty capture's graph): there is nothing to get.
        return Ok(Vec::new());
    }
    let mut nodes = vec![std::ptr::null_mut(); count];
    // SAFETY: the caller's contract (`# Safety`): `graph` is live; `count` is a live local, and `nodes`
    // (when given) has room for `count` handles.
    check("hipGraphGetNodes", unsafe {
        sys::hipGraphGetNodes(graph, nodes.as_mut_ptr(), &mut count)
    })?;
    nodes.truncate(count);
    Ok(nodes)
}

/// `hipGraphNodeGetType`.
///
/// # Safety
/// `node` is a live node of a live graph.
pub unsafe fn graph_node_type(node: sys::hipGraphNode_t) -> Result<sys::hipGraphNodeType> {
    // SAFETY: hipGraphNodeType is an integer type (bindgen's constants, on both platforms): all-zero bits
    // are a value.
    let mut t = unsafe { std::mem::zeroed() };
    // SAFETY: the caller's contract (`# Safety`): `node` is a live node of a live graph; `t` is a live
    // local HIP writes to.
    check("hipGraphNodeGetType", unsafe {
        sys::hipGraphNodeGetType(node, &mut t)
    })?;
    Ok(t)
}
