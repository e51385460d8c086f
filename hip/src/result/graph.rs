//! Stream capture and graphs (`hipStreamBeginCapture`, `hipGraphInstantiate`, `hipGraphLaunch`, ...).
//!
//! On HIP's NVIDIA platform every call here is [`Error::NotSupported`]: HIP 5.2.3's
//! `nvidia_detail/nvidia_hip_runtime_api.h` declares the capture and graph wrappers only inside
//! `#ifdef __CUDACC__` (for nvcc), so a C compiler, and bindgen, never see them.

use super::check;
use crate::error::{Error, Result};
use hip_sys as sys;

/// Whether this build can capture and launch graphs: `false` on HIP's NVIDIA platform (see the module doc).
pub const SUPPORTED: bool = cfg!(not(hip_platform = "nvidia"));

fn supported() -> Result<()> {
    if SUPPORTED {
        Ok(())
    } else {
        Err(Error::NotSupported {
            what: "graphs and stream capture on HIP's NVIDIA platform",
            reason: "HIP 5.2.3's NVIDIA headers declare hipStreamBeginCapture and hipGraph* only for nvcc \
                     (#ifdef __CUDACC__), so the C bindings cannot reach them",
        })
    }
}

#[cfg(not(hip_platform = "nvidia"))]
use hip_sys as api;

/// Stand-ins with the AMD signatures, never called: every wrapper asks [`supported`] first.
#[cfg(hip_platform = "nvidia")]
#[allow(non_snake_case)]
mod api {
    use hip_sys as sys;
    const UNREACHABLE: sys::hipError_t = sys::hipErrorNotSupported;
    pub unsafe fn hipStreamBeginCapture(
        _: sys::hipStream_t,
        _: sys::hipStreamCaptureMode,
    ) -> sys::hipError_t {
        UNREACHABLE
    }
    pub unsafe fn hipStreamEndCapture(
        _: sys::hipStream_t,
        _: *mut sys::hipGraph_t,
    ) -> sys::hipError_t {
        UNREACHABLE
    }
    pub unsafe fn hipStreamIsCapturing(
        _: sys::hipStream_t,
        _: *mut sys::hipStreamCaptureStatus,
    ) -> sys::hipError_t {
        UNREACHABLE
    }
    pub unsafe fn hipGraphDestroy(_: sys::hipGraph_t) -> sys::hipError_t {
        UNREACHABLE
    }
    pub unsafe fn hipGraphInstantiate(
        _: *mut sys::hipGraphExec_t,
        _: sys::hipGraph_t,
        _: *mut sys::hipGraphNode_t,
        _: *mut std::ffi::c_char,
        _: usize,
    ) -> sys::hipError_t {
        UNREACHABLE
    }
    pub unsafe fn hipGraphLaunch(_: sys::hipGraphExec_t, _: sys::hipStream_t) -> sys::hipError_t {
        UNREACHABLE
    }
    pub unsafe fn hipGraphExecDestroy(_: sys::hipGraphExec_t) -> sys::hipError_t {
        UNREACHABLE
    }
}

/// `hipStreamBeginCapture`: work queued on `stream` from now on is recorded into a graph, not run.
///
/// # Safety
/// `stream` is live and not the null stream.
pub unsafe fn stream_begin_capture(
    stream: sys::hipStream_t,
    mode: sys::hipStreamCaptureMode,
) -> Result<()> {
    supported()?;
    check(
        "hipStreamBeginCapture",
        api::hipStreamBeginCapture(stream, mode),
    )
}

/// `hipStreamEndCapture`: the graph recorded since [`stream_begin_capture`]. A capture invalidated by an
/// operation that cannot be captured fails here (`hipErrorStreamCaptureInvalidated`).
///
/// # Safety
/// `stream` is live and capturing.
pub unsafe fn stream_end_capture(stream: sys::hipStream_t) -> Result<sys::hipGraph_t> {
    supported()?;
    let mut g = std::ptr::null_mut();
    check(
        "hipStreamEndCapture",
        api::hipStreamEndCapture(stream, &mut g),
    )?;
    Ok(g)
}

/// `hipStreamIsCapturing`: the stream's `hipStreamCaptureStatus`.
///
/// # Safety
/// `stream` is live (or null).
pub unsafe fn stream_is_capturing(stream: sys::hipStream_t) -> Result<sys::hipStreamCaptureStatus> {
    supported()?;
    let mut status = std::mem::zeroed();
    check(
        "hipStreamIsCapturing",
        api::hipStreamIsCapturing(stream, &mut status),
    )?;
    Ok(status)
}

/// `hipGraphDestroy`.
///
/// # Safety
/// `graph` is live and not used afterwards (executable graphs made from it stay valid).
pub unsafe fn graph_destroy(graph: sys::hipGraph_t) -> Result<()> {
    supported()?;
    check("hipGraphDestroy", api::hipGraphDestroy(graph))
}

/// `hipGraphInstantiate` (no error node or log asked for).
///
/// # Safety
/// `graph` is live.
pub unsafe fn graph_instantiate(graph: sys::hipGraph_t) -> Result<sys::hipGraphExec_t> {
    supported()?;
    let mut exec = std::ptr::null_mut();
    check(
        "hipGraphInstantiate",
        api::hipGraphInstantiate(
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
    supported()?;
    check("hipGraphLaunch", api::hipGraphLaunch(exec, stream))
}

/// `hipGraphExecDestroy`.
///
/// # Safety
/// `exec` is live and not used afterwards. Launches already queued keep running.
pub unsafe fn graph_exec_destroy(exec: sys::hipGraphExec_t) -> Result<()> {
    supported()?;
    check("hipGraphExecDestroy", api::hipGraphExecDestroy(exec))
}
