//! Host functions queued on a stream (`hipStreamAddCallback`), and host nodes recorded into a capture
//! (`hipLaunchHostFunc`).
//!
//! `hipLaunchHostFunc` would be the modern call for both, but HIP 5.2.3's header declares it while its
//! `libamdhip64.so.5` does not export it (a link fails with an undefined symbol), and HIP's NVIDIA headers
//! map it only for nvcc (the crate's `nvidia_graph.h` maps it for C). `hipStreamAddCallback` exists in
//! every HIP on both platforms, so live host functions use it; a capture records only
//! `hipLaunchHostFunc` as a host node (HIP before 7.0 runs a captured `hipStreamAddCallback` live), so
//! capture needs it: `cfg(hip_launch_host_func)`, set by the build script where it links.

use super::check;
use crate::error::Result;
use hip_sys as sys;
use std::ffi::c_void;

/// The C signature HIP calls: the stream, its status, and one opaque pointer.
pub type StreamCallback =
    unsafe extern "C" fn(stream: sys::hipStream_t, status: sys::hipError_t, user_data: *mut c_void);

/// `hipStreamAddCallback`: run `callback(stream, status, user_data)` on a runtime thread once the work
/// queued on `stream` before it is done; work queued later waits until it returns.
///
/// # Safety
/// `stream` is live; `callback` may be called once with `user_data` on another thread and never unwinds.
/// It should make no HIP call: the runtime may deadlock (HIP) or answer an error (CUDA), neither of them
/// memory unsafety. When this returns an error `callback` is never called.
pub unsafe fn stream_add_callback(
    stream: sys::hipStream_t,
    callback: StreamCallback,
    user_data: *mut c_void,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `stream` is live and `callback` may be called once with
    // `user_data` on another thread, never unwinding; flags 0 is the only value HIP takes.
    check("hipStreamAddCallback", unsafe {
        sys::hipStreamAddCallback(stream, Some(callback), user_data, 0)
    })
}

/// `hipLaunchHostFunc` on a stream being captured: records a host node calling `f(user_data)` at every
/// replay of the graph.
///
/// # Safety
/// `stream` is live and being captured; `f` may be called with `user_data` any number of times, on
/// runtime threads, possibly at once, for as long as an executable graph made from the capture lives, and
/// never unwinds. When this returns an error `f` is never called.
#[cfg(hip_launch_host_func)]
pub unsafe fn launch_host_func(
    stream: sys::hipStream_t,
    f: unsafe extern "C" fn(*mut c_void),
    user_data: *mut c_void,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`).
    check("hipLaunchHostFunc", unsafe {
        sys::hipLaunchHostFunc(stream, Some(f), user_data)
    })
}
