//! Stream capture and graphs (`hipStreamBeginCapture`, `hipGraphInstantiate`, `hipGraphLaunch`, ...).

use super::check;
use crate::error::Result;
use hip_sys as sys;

/// `hipStreamBeginCapture`: work queued on `stream` from now on is recorded into a graph, not run.
///
/// # Safety
/// `stream` is live and not the null stream.
pub unsafe fn stream_begin_capture(
    stream: sys::hipStream_t,
    mode: sys::hipStreamCaptureMode,
) -> Result<()> {
    check(
        "hipStreamBeginCapture",
        sys::hipStreamBeginCapture(stream, mode),
    )
}

/// `hipStreamEndCapture`: the graph recorded since [`stream_begin_capture`]. A capture invalidated by an
/// operation that cannot be captured fails here (`hipErrorStreamCaptureInvalidated`).
///
/// # Safety
/// `stream` is live and capturing.
pub unsafe fn stream_end_capture(stream: sys::hipStream_t) -> Result<sys::hipGraph_t> {
    let mut g = std::ptr::null_mut();
    check(
        "hipStreamEndCapture",
        sys::hipStreamEndCapture(stream, &mut g),
    )?;
    Ok(g)
}

/// `hipStreamIsCapturing`: the stream's `hipStreamCaptureStatus`.
///
/// # Safety
/// `stream` is live (or null).
pub unsafe fn stream_is_capturing(stream: sys::hipStream_t) -> Result<sys::hipStreamCaptureStatus> {
    let mut status = std::mem::zeroed();
    check(
        "hipStreamIsCapturing",
        sys::hipStreamIsCapturing(stream, &mut status),
    )?;
    Ok(status)
}

/// `hipGraphDestroy`.
///
/// # Safety
/// `graph` is live and not used afterwards (executable graphs made from it stay valid).
pub unsafe fn graph_destroy(graph: sys::hipGraph_t) -> Result<()> {
    check("hipGraphDestroy", sys::hipGraphDestroy(graph))
}

/// `hipGraphInstantiate` (no error node or log asked for).
///
/// # Safety
/// `graph` is live.
pub unsafe fn graph_instantiate(graph: sys::hipGraph_t) -> Result<sys::hipGraphExec_t> {
    let mut exec = std::ptr::null_mut();
    check(
        "hipGraphInstantiate",
        sys::hipGraphInstantiate(
            &mut exec,
            graph,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        ),
    )?;
    Ok(exec)
}

/// `hipGraphLaunch`.
///
/// # Safety
/// Both handles are live, and all memory the graph's nodes touch stays valid until the launch completes.
pub unsafe fn graph_launch(exec: sys::hipGraphExec_t, stream: sys::hipStream_t) -> Result<()> {
    check("hipGraphLaunch", sys::hipGraphLaunch(exec, stream))
}

/// `hipGraphExecDestroy`.
///
/// # Safety
/// `exec` is live and not used afterwards. Launches already queued keep running.
pub unsafe fn graph_exec_destroy(exec: sys::hipGraphExec_t) -> Result<()> {
    check("hipGraphExecDestroy", sys::hipGraphExecDestroy(exec))
}
