//! The memory calls: allocation, frees (a free is a write of the whole allocation for the detector),
//! copies and fills, pools.

use crate::clock::Clock;
use crate::detector::Kind;
use crate::memory::{self, find, MemKind, Shape};
use crate::streams::{self, host_join_local, host_now, lock, rt, Action};
use crate::{Status, INVALID_HANDLE, INVALID_VALUE, SUCCESS};
use hip_sys as sys;
use std::ffi::{c_int, c_void};
use std::sync::Arc;

unsafe fn alloc_host_ordered(p: *mut *mut c_void, n: usize, kind: MemKind, flags: u32) -> Status {
    if p.is_null() {
        return INVALID_VALUE;
    }
    let mut g = lock();
    let rt = rt(&mut g);
    let (ptr, freed) = memory::alloc(rt, n, kind, flags, None);
    host_join_local(rt, &freed);
    *p = ptr as *mut c_void;
    SUCCESS
}

unsafe fn free_host_ordered(p: *mut c_void, kinds: &[MemKind], call: &str) -> Status {
    if p.is_null() {
        return SUCCESS;
    }
    let mut g = lock();
    let rt = rt(&mut g);
    let (c, name) = host_now(rt);
    let what: Arc<str> = format!("{call} by {name}").into();
    let block = find(p as usize);
    match memory::free(p as usize, kinds, &c, &what, None) {
        Some(()) => {
            // The address may come back: what was written there by stream memory operations is forgotten.
            if let Some((base, len, _, _)) = block {
                rt.value_writes
                    .retain(|a, _| !(base..base + len.max(1)).contains(a));
            }
            SUCCESS
        }
        None => INVALID_VALUE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipMalloc(p: *mut *mut c_void, n: usize) -> Status {
    alloc_host_ordered(p, n, MemKind::Device, 0)
}

#[no_mangle]
pub unsafe extern "C" fn hipMallocManaged(p: *mut *mut c_void, n: usize, flags: u32) -> Status {
    alloc_host_ordered(p, n, MemKind::Managed, flags)
}

#[no_mangle]
pub unsafe extern "C" fn hipHostMalloc(p: *mut *mut c_void, n: usize, flags: u32) -> Status {
    alloc_host_ordered(p, n, MemKind::Pinned, flags)
}

/// Not a device synchronization here: everything still using the memory must be ordered before it.
#[no_mangle]
pub unsafe extern "C" fn hipFree(p: *mut c_void) -> Status {
    free_host_ordered(p, &[MemKind::Device, MemKind::Managed], "hipFree")
}

#[no_mangle]
pub unsafe extern "C" fn hipHostFree(p: *mut c_void) -> Status {
    free_host_ordered(p, &[MemKind::Pinned], "hipHostFree")
}

fn capturing(rt: &streams::Rt, sid: usize) -> Option<bool> {
    rt.streams.get(&sid).map(|s| s.capture.is_some())
}

#[no_mangle]
pub unsafe extern "C" fn hipMallocAsync(
    p: *mut *mut c_void,
    n: usize,
    s: sys::hipStream_t,
) -> Status {
    malloc_async(p, n, s, None)
}

#[no_mangle]
pub unsafe extern "C" fn hipMallocFromPoolAsync(
    p: *mut *mut c_void,
    n: usize,
    pool: sys::hipMemPool_t,
    s: sys::hipStream_t,
) -> Status {
    malloc_async(p, n, s, Some(pool as usize))
}

/// `hipMallocAsync` from the stream's device's current pool, or from `pool`
/// (`hipMallocFromPoolAsync`), which must be live and of that device.
unsafe fn malloc_async(
    p: *mut *mut c_void,
    n: usize,
    s: sys::hipStream_t,
    pool: Option<usize>,
) -> Status {
    let sid = streams::key(s as usize);
    let mut g = lock();
    let rt = rt(&mut g);
    match capturing(rt, sid) {
        None => return INVALID_HANDLE,
        Some(true) => return sys::hipErrorNotSupported,
        Some(false) => {}
    }
    if p.is_null() {
        return INVALID_VALUE;
    }
    let device = rt.streams.get(&sid).map_or(0, |s| s.device);
    let Some(pool) = crate::pools::pool_for(device, pool) else {
        return INVALID_VALUE;
    };
    let (ptr, freed) = memory::alloc(rt, n, MemKind::Device, 0, Some(sid));
    crate::pools::allocated(pool, ptr, n as u64);
    let noop: Action = Arc::new(|_: &Clock, _: &Arc<str>| {});
    streams::push(rt, sid, "hipMallocAsync", Vec::new(), &freed, noop);
    *p = ptr as *mut c_void;
    SUCCESS
}

/// The free happens at its place in the stream: its clock is the operation's.
#[no_mangle]
pub unsafe extern "C" fn hipFreeAsync(p: *mut c_void, s: sys::hipStream_t) -> Status {
    let sid = streams::key(s as usize);
    let mut g = lock();
    let rt = rt(&mut g);
    match capturing(rt, sid) {
        None => return INVALID_HANDLE,
        Some(true) => return sys::hipErrorNotSupported,
        Some(false) => {}
    }
    if let Some(status) = crate::pool_share::free_import(rt, p as usize, sid) {
        return status;
    }
    if !memory::is_live_base(p as usize) {
        return INVALID_VALUE;
    }
    let noop: Action = Arc::new(|_: &Clock, _: &Arc<str>| {});
    let (seq, clock) = streams::push(rt, sid, "hipFreeAsync", Vec::new(), &Clock::default(), noop);
    let what: Arc<str> = format!("hipFreeAsync on {}", streams::stream_name(sid)).into();
    memory::free(
        p as usize,
        &[MemKind::Device],
        &clock,
        &what,
        Some((sid, seq)),
    );
    crate::pools::freed(p as usize);
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    _kind: u32,
) -> Status {
    let shape = memory::Shape::linear(dst as usize, src as usize, n);
    memory::sync_copy(shape, "hipMemcpy")
}

unsafe fn copy_async(shape: Shape, sid: usize, call: &str) -> Status {
    let mut g = lock();
    let rt = rt(&mut g);
    let Some(cap) = capturing(rt, sid) else {
        return INVALID_HANDLE;
    };
    if !cap && find(shape.dst).is_none() && memory::is_device(shape.src) {
        // To pageable memory: as ROCm, synchronous for the host.
        drop(g);
        return memory::to_host(sid, shape, call);
    }
    if !cap && find(shape.src).is_none() && memory::is_device(shape.dst) {
        // From pageable memory: the host side is read now, as a synchronous copy's.
        let bytes = shape.read();
        let act: Action = Arc::new(move |c: &Clock, w: &Arc<str>| {
            memory::log(shape.dst, shape.dst_span(), Kind::Write, c, w);
            shape.write(&bytes);
        });
        streams::push(rt, sid, call, Vec::new(), &Clock::default(), act);
        return SUCCESS;
    }
    let act = memory::shaped_copy_action(shape);
    crate::graph::submit(rt, sid, call, sys::hipGraphNodeTypeMemcpy, act);
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    _kind: u32,
    s: sys::hipStream_t,
) -> Status {
    let shape = Shape::linear(dst as usize, src as usize, n);
    copy_async(shape, streams::key(s as usize), "hipMemcpyAsync")
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyPeerAsync(
    dst: *mut c_void,
    _dst_device: c_int,
    src: *const c_void,
    _src_device: c_int,
    n: usize,
    s: sys::hipStream_t,
) -> Status {
    let shape = Shape::linear(dst as usize, src as usize, n);
    copy_async(shape, streams::key(s as usize), "hipMemcpyPeerAsync")
}

fn shape_2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
) -> Option<Shape> {
    (width <= dpitch && width <= spitch).then_some(Shape {
        dst: dst as usize,
        dpitch,
        src: src as usize,
        spitch,
        width,
        height,
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2D(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    _kind: u32,
) -> Status {
    match shape_2d(dst, dpitch, src, spitch, width, height) {
        Some(shape) => memory::sync_copy(shape, "hipMemcpy2D"),
        None => INVALID_VALUE,
    }
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    _kind: u32,
    s: sys::hipStream_t,
) -> Status {
    match shape_2d(dst, dpitch, src, spitch, width, height) {
        Some(shape) => copy_async(shape, streams::key(s as usize), "hipMemcpy2DAsync"),
        None => INVALID_VALUE,
    }
}

unsafe fn fill(
    dst: *mut c_void,
    value: u32,
    size: usize,
    count: usize,
    sid: usize,
    call: &str,
) -> Status {
    let mut g = lock();
    let rt = rt(&mut g);
    if capturing(rt, sid).is_none() {
        return INVALID_HANDLE;
    }
    let act = memory::fill_action(dst as usize, value, size, count);
    let params = crate::graph_params::NodeParams::fill(dst as usize, value, size, count);
    crate::graph::submit_with(
        rt,
        sid,
        call,
        sys::hipGraphNodeTypeMemset,
        act,
        Some(params),
    );
    SUCCESS
}

/// May return before it ran (queued on the null stream), as HIP's.
#[no_mangle]
pub unsafe extern "C" fn hipMemset(dst: *mut c_void, value: c_int, n: usize) -> Status {
    fill(dst, value as u32 & 0xff, 1, n, streams::key(0), "hipMemset")
}

#[no_mangle]
pub unsafe extern "C" fn hipMemsetAsync(
    dst: *mut c_void,
    value: c_int,
    n: usize,
    s: sys::hipStream_t,
) -> Status {
    fill(
        dst,
        value as u32 & 0xff,
        1,
        n,
        streams::key(s as usize),
        "hipMemsetAsync",
    )
}

/// Queue a 2-D or 3-D memset (`memory::fill_rows_action`) on `sid`.
fn fill_rows(
    sid: usize,
    call: &str,
    act: impl FnOnce() -> Option<crate::streams::Action>,
) -> Status {
    let mut g = lock();
    let rt = rt(&mut g);
    if capturing(rt, sid).is_none() {
        return INVALID_HANDLE;
    }
    let Some(act) = act() else {
        return crate::INVALID_VALUE;
    };
    crate::graph::submit(rt, sid, call, sys::hipGraphNodeTypeMemset, act);
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipMemset2DAsync(
    dst: *mut c_void,
    pitch: usize,
    value: c_int,
    width: usize,
    height: usize,
    s: sys::hipStream_t,
) -> Status {
    fill_rows(streams::key(s as usize), "hipMemset2DAsync", || {
        (width <= pitch || height <= 1).then(|| {
            memory::fill_rows_action(dst as usize, pitch, value as u8, [width, height, 1], height)
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemset3DAsync(
    p: sys::hipPitchedPtr,
    value: c_int,
    e: sys::hipExtent,
    s: sys::hipStream_t,
) -> Status {
    fill_rows(streams::key(s as usize), "hipMemset3DAsync", || {
        (e.width <= p.pitch && e.height <= p.ysize).then(|| {
            memory::fill_rows_action(
                p.ptr as usize,
                p.pitch,
                value as u8,
                [e.width, e.height, e.depth],
                p.ysize,
            )
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemsetD16Async(
    dst: *mut c_void,
    value: u16,
    count: usize,
    s: sys::hipStream_t,
) -> Status {
    fill(
        dst,
        u32::from(value),
        2,
        count,
        streams::key(s as usize),
        "hipMemsetD16Async",
    )
}

#[no_mangle]
pub unsafe extern "C" fn hipMemsetD32Async(
    dst: *mut c_void,
    value: c_int,
    count: usize,
    s: sys::hipStream_t,
) -> Status {
    fill(
        dst,
        value as u32,
        4,
        count,
        streams::key(s as usize),
        "hipMemsetD32Async",
    )
}

#[no_mangle]
pub unsafe extern "C" fn hipHostGetFlags(flags: *mut u32, p: *mut c_void) -> Status {
    match find(p as usize) {
        Some((_, _, MemKind::Pinned, f)) if !flags.is_null() => {
            *flags = f & !memory::REGISTERED;
            SUCCESS
        }
        _ => INVALID_VALUE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipPointerGetAttribute(
    data: *mut c_void,
    attr: sys::hipPointer_attribute,
    p: sys::hipDeviceptr_t,
) -> Status {
    if attr != sys::HIP_POINTER_ATTRIBUTE_IS_MANAGED || data.is_null() {
        return sys::hipErrorNotSupported;
    }
    let managed = matches!(find(p as usize), Some((_, _, MemKind::Managed, _)));
    *(data as *mut u64) = u64::from(managed);
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPrefetchAsync(
    p: *const c_void,
    n: usize,
    _device: c_int,
    s: sys::hipStream_t,
) -> Status {
    let (p, sid) = (p as usize, streams::key(s as usize));
    let act: Action = Arc::new(move |c: &Clock, w: &Arc<str>| memory::log(p, n, Kind::Read, c, w));
    let mut g = lock();
    let rt = rt(&mut g);
    if capturing(rt, sid).is_none() {
        return INVALID_HANDLE;
    }
    crate::graph::submit(
        rt,
        sid,
        "hipMemPrefetchAsync",
        sys::hipGraphNodeTypeEmpty,
        act,
    );
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipMemAdvise(
    _p: *const c_void,
    _n: usize,
    _advice: u32,
    _device: c_int,
) -> Status {
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamAttachMemAsync(
    _s: sys::hipStream_t,
    _p: *mut c_void,
    _n: usize,
    _flags: u32,
) -> Status {
    SUCCESS
}

/// Successful `hipHostRegister` calls so far (`hip_rs_shadow_registrations`).
pub static REGISTRATIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Page-locks the caller's memory: from now on a pinned block of the shadow (copies of it are logged).
#[no_mangle]
pub unsafe extern "C" fn hipHostRegister(p: *mut c_void, n: usize, flags: u32) -> Status {
    if p.is_null() || n == 0 {
        return INVALID_VALUE;
    }
    let _g = lock();
    if memory::register(p as usize, n, flags | memory::REGISTERED) {
        REGISTRATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        SUCCESS
    } else {
        sys::hipErrorHostMemoryAlreadyRegistered
    }
}

/// The end of a registration, checked like a free: every copy of the memory must be ordered before it.
#[no_mangle]
pub unsafe extern "C" fn hipHostUnregister(p: *mut c_void) -> Status {
    let mut g = lock();
    let rt = rt(&mut g);
    let (c, name) = host_now(rt);
    let what: Arc<str> = format!("hipHostUnregister by {name}").into();
    if memory::unregister(p as usize, &c, &what) {
        SUCCESS
    } else {
        sys::hipErrorHostMemoryNotRegistered
    }
}
