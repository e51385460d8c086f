//! Graphs built node by node (`hipGraphCreate`, `hipGraphAdd*Node`, `hipGraphExecKernelNodeSetParams`).
//!
//! On HIP's NVIDIA platform these are the mappings hip-sys adds in `nvidia_graph.h` (the kernel node
//! calls go through the driver API, which takes a module's `CUfunction`).

use super::check;
use crate::error::Result;
use hip_sys as sys;
use std::ffi::c_void;

/// `hipGraphCreate`: an empty graph.
pub fn graph_create() -> Result<sys::hipGraph_t> {
    let mut g = std::ptr::null_mut();
    // SAFETY: `g` is a live local HIP writes the new graph to; flags must be 0.
    check("hipGraphCreate", unsafe { sys::hipGraphCreate(&mut g, 0) })?;
    Ok(g)
}

/// `hipGraphAddKernelNode`.
///
/// # Safety
/// `graph` is live, `deps` are nodes of it, and `params` is a valid kernel launch (a live function,
/// `kernelParams` pointing at its arguments, which HIP copies before returning).
pub unsafe fn add_kernel_node(
    graph: sys::hipGraph_t,
    deps: &[sys::hipGraphNode_t],
    params: &sys::hipKernelNodeParams,
) -> Result<sys::hipGraphNode_t> {
    let mut n = std::ptr::null_mut();
    // SAFETY: the caller's contract; `n` is a live local, `deps` a live slice of its length.
    check("hipGraphAddKernelNode", unsafe {
        sys::hipGraphAddKernelNode(&mut n, graph, deps.as_ptr(), deps.len(), params)
    })?;
    Ok(n)
}

/// `hipGraphAddMemsetNode`.
///
/// # Safety
/// `graph` is live, `deps` are nodes of it, and `params` describes device memory the graph's launches
/// may write.
pub unsafe fn add_memset_node(
    graph: sys::hipGraph_t,
    deps: &[sys::hipGraphNode_t],
    params: &sys::hipMemsetParams,
) -> Result<sys::hipGraphNode_t> {
    let mut n = std::ptr::null_mut();
    // SAFETY: the caller's contract; `n` is a live local, `deps` a live slice of its length.
    check("hipGraphAddMemsetNode", unsafe {
        sys::hipGraphAddMemsetNode(&mut n, graph, deps.as_ptr(), deps.len(), params)
    })?;
    Ok(n)
}

/// `hipGraphAddMemcpyNode1D`.
///
/// # Safety
/// `graph` is live, `deps` are nodes of it, and `dst`/`src` are `bytes` of memory of the sides `kind`
/// names (device memory, or pinned host memory) that the graph's launches may write/read.
pub unsafe fn add_memcpy_node_1d(
    graph: sys::hipGraph_t,
    deps: &[sys::hipGraphNode_t],
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: sys::hipMemcpyKind,
) -> Result<sys::hipGraphNode_t> {
    let mut n = std::ptr::null_mut();
    // SAFETY: the caller's contract; `n` is a live local, `deps` a live slice of its length.
    check("hipGraphAddMemcpyNode1D", unsafe {
        sys::hipGraphAddMemcpyNode1D(
            &mut n,
            graph,
            deps.as_ptr(),
            deps.len(),
            dst,
            src,
            bytes,
            kind,
        )
    })?;
    Ok(n)
}

/// `hipGraphAddMemcpyNode`: a 2-D or 3-D copy between arrays and pitched memory.
///
/// # Safety
/// `graph` is live, `deps` are nodes of it, and `params` names memory (arrays, pitched pointers) that
/// holds the box it copies and that the graph's launches may read (source) and write (destination).
pub unsafe fn add_memcpy_node(
    graph: sys::hipGraph_t,
    deps: &[sys::hipGraphNode_t],
    params: &sys::hipMemcpy3DParms,
) -> Result<sys::hipGraphNode_t> {
    let mut n = std::ptr::null_mut();
    // SAFETY: the caller's contract; `n` is a live local, `deps` a live slice of its length, `params` a
    // live borrow HIP copies.
    check("hipGraphAddMemcpyNode", unsafe {
        sys::hipGraphAddMemcpyNode(&mut n, graph, deps.as_ptr(), deps.len(), params)
    })?;
    Ok(n)
}

/// `hipGraphAddEmptyNode`.
///
/// # Safety
/// `graph` is live and `deps` are nodes of it.
pub unsafe fn add_empty_node(
    graph: sys::hipGraph_t,
    deps: &[sys::hipGraphNode_t],
) -> Result<sys::hipGraphNode_t> {
    let mut n = std::ptr::null_mut();
    // SAFETY: the caller's contract; `n` is a live local, `deps` a live slice of its length.
    check("hipGraphAddEmptyNode", unsafe {
        sys::hipGraphAddEmptyNode(&mut n, graph, deps.as_ptr(), deps.len())
    })?;
    Ok(n)
}

/// `hipGraphAddChildGraphNode`: a copy of `child` becomes one node of `graph`.
///
/// # Safety
/// `graph` and `child` are live and distinct, and `deps` are nodes of `graph`.
pub unsafe fn add_child_graph_node(
    graph: sys::hipGraph_t,
    deps: &[sys::hipGraphNode_t],
    child: sys::hipGraph_t,
) -> Result<sys::hipGraphNode_t> {
    let mut n = std::ptr::null_mut();
    // SAFETY: the caller's contract; `n` is a live local, `deps` a live slice of its length.
    check("hipGraphAddChildGraphNode", unsafe {
        sys::hipGraphAddChildGraphNode(&mut n, graph, deps.as_ptr(), deps.len(), child)
    })?;
    Ok(n)
}

/// `hipGraphAddHostNode`: `f(user_data)` runs on a runtime thread each time the node runs.
///
/// # Safety
/// `graph` is live and `deps` are its nodes; `f` may be called with `user_data` from any thread at every
/// launch of every executable graph made from `graph`, so `user_data` stays valid (and `f` sound to call
/// with it, concurrently too) until the last of them is destroyed and done.
pub unsafe fn add_host_node(
    graph: sys::hipGraph_t,
    deps: &[sys::hipGraphNode_t],
    f: unsafe extern "C" fn(*mut std::ffi::c_void),
    user_data: *mut std::ffi::c_void,
) -> Result<sys::hipGraphNode_t> {
    let mut n = std::ptr::null_mut();
    let params = sys::hipHostNodeParams {
        fn_: Some(f),
        userData: user_data,
    };
    // SAFETY: the caller's contract; `n` and `params` are live locals, `deps` a live slice of its length.
    check("hipGraphAddHostNode", unsafe {
        sys::hipGraphAddHostNode(&mut n, graph, deps.as_ptr(), deps.len(), &params)
    })?;
    Ok(n)
}

/// `hipGraphAddEventRecordNode`: each run of the node records `event`.
///
/// # Safety
/// `graph` is live and `deps` are its nodes; `event` stays live until the last executable graph made
/// from `graph` is destroyed and done.
pub unsafe fn add_event_record_node(
    graph: sys::hipGraph_t,
    deps: &[sys::hipGraphNode_t],
    event: sys::hipEvent_t,
) -> Result<sys::hipGraphNode_t> {
    let mut n = std::ptr::null_mut();
    // SAFETY: the caller's contract; `n` is a live local, `deps` a live slice of its length.
    check("hipGraphAddEventRecordNode", unsafe {
        sys::hipGraphAddEventRecordNode(&mut n, graph, deps.as_ptr(), deps.len(), event)
    })?;
    Ok(n)
}

/// `hipGraphAddEventWaitNode`: the nodes after it wait for `event`'s record current when the graph runs.
///
/// # Safety
/// As [`add_event_record_node`].
pub unsafe fn add_event_wait_node(
    graph: sys::hipGraph_t,
    deps: &[sys::hipGraphNode_t],
    event: sys::hipEvent_t,
) -> Result<sys::hipGraphNode_t> {
    let mut n = std::ptr::null_mut();
    // SAFETY: the caller's contract; `n` is a live local, `deps` a live slice of its length.
    check("hipGraphAddEventWaitNode", unsafe {
        sys::hipGraphAddEventWaitNode(&mut n, graph, deps.as_ptr(), deps.len(), event)
    })?;
    Ok(n)
}

/// `hipGraphExecKernelNodeSetParams`: later launches of `exec` run `node` with `params`.
///
/// # Safety
/// `exec` is live and was instantiated from the live graph holding `node`; no launch of `exec` still
/// queued needs the old arguments' memory freed by this; `params` is a valid launch (as for
/// [`add_kernel_node`]) for every later launch.
pub unsafe fn exec_kernel_node_set_params(
    exec: sys::hipGraphExec_t,
    node: sys::hipGraphNode_t,
    params: &sys::hipKernelNodeParams,
) -> Result<()> {
    // SAFETY: the caller's contract.
    check("hipGraphExecKernelNodeSetParams", unsafe {
        sys::hipGraphExecKernelNodeSetParams(exec, node, params)
    })
}

/// `hipGraphExecMemsetNodeSetParams`.
///
/// # Safety
/// As [`exec_kernel_node_set_params`], `params` describing device memory every later launch may write.
pub unsafe fn exec_memset_node_set_params(
    exec: sys::hipGraphExec_t,
    node: sys::hipGraphNode_t,
    params: &sys::hipMemsetParams,
) -> Result<()> {
    // SAFETY: the caller's contract.
    check("hipGraphExecMemsetNodeSetParams", unsafe {
        sys::hipGraphExecMemsetNodeSetParams(exec, node, params)
    })
}

/// `hipGraphExecChildGraphNodeSetParams`: a child graph node runs a copy of `child` instead (the same
/// topology as its old child graph, or HIP refuses).
///
/// # Safety
/// `exec` is live and was instantiated from the graph holding `node`, a child graph node; `child` is a
/// live graph no other thread changes during the call, whose nodes' memory outlives every later launch,
/// and no launch queued before may still use the old child's memory unless it stays alive.
pub unsafe fn exec_child_graph_node_set_params(
    exec: sys::hipGraphExec_t,
    node: sys::hipGraphNode_t,
    child: sys::hipGraph_t,
) -> Result<()> {
    // SAFETY: the caller's contract.
    check("hipGraphExecChildGraphNodeSetParams", unsafe {
        sys::hipGraphExecChildGraphNodeSetParams(exec, node, child)
    })
}

/// `hipGraphExecMemcpyNodeSetParams`: a 2-D or 3-D copy node's new parameters.
///
/// # Safety
/// `exec` is live and was instantiated from the graph holding `node`, a copy node; `params` is as
/// [`add_memcpy_node`]'s, and no launch queued before may still use the old parameters' memory unless
/// it stays alive.
pub unsafe fn exec_memcpy_node_set_params(
    exec: sys::hipGraphExec_t,
    node: sys::hipGraphNode_t,
    params: &sys::hipMemcpy3DParms,
) -> Result<()> {
    let mut p = *params;
    // SAFETY: the caller's contract; `p` is a live local copy (HIP's signature takes a mutable pointer
    // but only reads it).
    check("hipGraphExecMemcpyNodeSetParams", unsafe {
        sys::hipGraphExecMemcpyNodeSetParams(exec, node, &mut p)
    })
}

/// `hipGraphExecMemcpyNodeSetParams1D`, in the direction `kind` says.
///
/// # Safety
/// As [`exec_kernel_node_set_params`], `dst`/`src` being `bytes` of memory of the kinds `kind` says
/// that every later launch may write/read.
pub unsafe fn exec_memcpy_node_set_params_1d(
    exec: sys::hipGraphExec_t,
    node: sys::hipGraphNode_t,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: sys::hipMemcpyKind,
) -> Result<()> {
    // SAFETY: the caller's contract.
    check("hipGraphExecMemcpyNodeSetParams1D", unsafe {
        sys::hipGraphExecMemcpyNodeSetParams1D(exec, node, dst, src, bytes, kind)
    })
}
