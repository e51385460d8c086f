//! Host functions queued on a stream: `hipLaunchHostFunc` (AMD) or `hipStreamAddCallback` (HIP 5.2.3's
//! NVIDIA headers have no `hipLaunchHostFunc`).

use super::check;
use crate::error::Result;
use hip_sys as sys;
use std::ffi::c_void;

/// The C signature HIP calls: one opaque pointer.
pub type HostFn = unsafe extern "C" fn(user_data: *mut c_void);

/// `hipLaunchHostFunc`: run `func(user_data)` on a runtime thread once the work queued on `stream` before
/// it is done; later work waits for it to return. On HIP's NVIDIA platform this is `hipStreamAddCallback`
/// (`cudaStreamAddCallback`) with a trampoline, since HIP 5.2.3 maps no `hipLaunchHostFunc` there.
///
/// # Safety
/// `stream` is live; `func` may be called once with `user_data` on another thread, never unwinds, and makes
/// no HIP call. When this returns an error `func` is never called.
pub unsafe fn launch_host_func(
    stream: sys::hipStream_t,
    func: HostFn,
    user_data: *mut c_void,
) -> Result<()> {
    #[cfg(not(hip_platform = "nvidia"))]
    {
        check(
            "hipLaunchHostFunc",
            sys::hipLaunchHostFunc(stream, Some(func), user_data),
        )
    }
    #[cfg(hip_platform = "nvidia")]
    {
        // The callback's user data must carry both the function and its data: box the pair.
        unsafe extern "C" fn trampoline(
            _stream: sys::hipStream_t,
            _status: sys::hipError_t,
            pair: *mut c_void,
        ) {
            let pair = Box::from_raw(pair as *mut (HostFn, *mut c_void));
            (pair.0)(pair.1);
        }
        let pair = Box::into_raw(Box::new((func, user_data))) as *mut c_void;
        let r = check(
            "hipStreamAddCallback",
            sys::hipStreamAddCallback(stream, Some(trampoline), pair, 0),
        );
        if r.is_err() {
            // Not queued: the trampoline never runs, so the pair is ours to free.
            drop(Box::from_raw(pair as *mut (HostFn, *mut c_void)));
        }
        r
    }
}
