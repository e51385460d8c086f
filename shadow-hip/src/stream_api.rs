//! The stream calls: create, destroy, synchronize, query, host functions.

use crate::clock::Clock;
use crate::streams::{self, host_join, lock, rt, Action};
use crate::{Status, INVALID_HANDLE, INVALID_VALUE, NOT_READY, SUCCESS};
use hip_sys as sys;
use std::ffi::{c_int, c_void};
use std::sync::Arc;

#[no_mangle]
pub unsafe extern "C" fn hipStreamCreateWithFlags(s: *mut sys::hipStream_t, flags: u32) -> Status {
    if s.is_null() {
        return INVALID_VALUE;
    }
    *s = streams::create(flags & sys::hipStreamNonBlocking != 0) as sys::hipStream_t;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamCreate(s: *mut sys::hipStream_t) -> Status {
    hipStreamCreateWithFlags(s, 0)
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamCreateWithPriority(
    s: *mut sys::hipStream_t,
    flags: u32,
    priority: c_int,
) -> Status {
    let r = hipStreamCreateWithFlags(s, flags);
    if r == SUCCESS && priority != 0 {
        let mut g = lock();
        rt(&mut g).priorities.insert(*s as usize, priority);
    }
    r
}

/// Returns at once; the stream's worker completes what is queued, then ends. The host learns nothing.
#[no_mangle]
pub unsafe extern "C" fn hipStreamDestroy(s: sys::hipStream_t) -> Status {
    let sid = streams::key(s as usize);
    let mut g = lock();
    match rt(&mut g).streams.get_mut(&sid) {
        Some(st) if !streams::is_null(sid) && !st.destroyed => {
            st.destroyed = true;
            streams::CV.notify_all();
            SUCCESS
        }
        _ => INVALID_HANDLE,
    }
}

/// Waits for what is queued on the stream now (the null stream: also every blocking stream, which its
/// legacy order waits for).
#[no_mangle]
pub unsafe extern "C" fn hipStreamSynchronize(s: sys::hipStream_t) -> Status {
    let sid = streams::key(s as usize);
    let mut g = lock();
    let rt = rt(&mut g);
    let Some(st) = rt.streams.get(&sid) else {
        return INVALID_HANDLE;
    };
    let targets = if streams::is_null(sid) {
        streams::snapshot(rt, Some(st.device), true)
    } else {
        vec![(sid, st.queued, st.clock.clone())]
    };
    if let Some(code) = targets
        .iter()
        .find_map(|(id, seq, _)| streams::failed_before(rt, *id, *seq))
    {
        return code;
    }
    drop(streams::host_wait_all(g, targets));
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamQuery(s: sys::hipStream_t) -> Status {
    let mut g = lock();
    let rt = rt(&mut g);
    let Some(st) = rt.streams.get(&(streams::key(s as usize))) else {
        return INVALID_HANDLE;
    };
    if let Some(code) = st.failed {
        return code;
    }
    if st.done < st.queued {
        return NOT_READY;
    }
    let c = st.clock.clone();
    host_join(rt, &c);
    SUCCESS
}

struct UserData(usize);

fn host_fn(
    s: sys::hipStream_t,
    call: &str,
    run: Box<dyn Fn(sys::hipStream_t) + Send + Sync>,
) -> Status {
    let sid = streams::key(s as usize);
    let mut g = lock();
    let rt = rt(&mut g);
    if !rt.streams.contains_key(&sid) {
        return INVALID_HANDLE;
    }
    let act: Action = Arc::new(move |c: &Clock, _: &Arc<str>| {
        streams::as_host_fn(|| run(sid as sys::hipStream_t));
        // What the function unblocked (through primitives the shadow does not see) follows it.
        let mut g = lock();
        rt_released(&mut g, c);
    });
    crate::graph::submit(rt, sid, call, sys::hipGraphNodeTypeHost, act);
    SUCCESS
}

fn rt_released(g: &mut std::sync::MutexGuard<'static, Option<streams::Rt>>, c: &Clock) {
    rt(g).released.join(c);
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamAddCallback(
    s: sys::hipStream_t,
    cb: sys::hipStreamCallback_t,
    user: *mut c_void,
    _flags: u32,
) -> Status {
    let Some(cb) = cb else {
        return INVALID_VALUE;
    };
    let user = UserData(user as usize);
    // SAFETY: HIP's contract: the callback may be called with its user data once, from another thread.
    host_fn(
        s,
        "hipStreamAddCallback",
        Box::new(move |s| unsafe { cb(s, SUCCESS, user.0 as *mut c_void) }),
    )
}

#[no_mangle]
pub unsafe extern "C" fn hipLaunchHostFunc(
    s: sys::hipStream_t,
    f: sys::hipHostFn_t,
    user: *mut c_void,
) -> Status {
    let Some(f) = f else {
        return INVALID_VALUE;
    };
    let user = UserData(user as usize);
    // SAFETY: as hipStreamAddCallback.
    host_fn(
        s,
        "hipLaunchHostFunc",
        Box::new(move |_| unsafe { f(user.0 as *mut c_void) }),
    )
}
