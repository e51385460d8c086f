//! Each RCCL / NCCL call once, returning [`Result`], owning nothing (the `result` layer for
//! [`crate::rccl`]). Every function names the C call it wraps; see NCCL's API reference
//! (<https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/api.html>), which RCCL follows.

use super::poll::{poll_until, Backoff};
use crate::error::{Error, NcclErrorCode, Result};
use rccl_sys as sys;
use std::ffi::{c_int, c_void, CStr};
use std::time::Duration;

/// The error for `code` returned by `call`, with the library's message (and the communicator's last error
/// detail where `comm` is given).
pub(crate) fn error(call: &'static str, code: sys::ncclResult_t, comm: sys::ncclComm_t) -> Error {
    let text = |p: *const std::ffi::c_char| {
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: non-null (checked); both callers below pass a NUL-terminated string the library
            // keeps at least until its next call on this thread, and it is copied out at once.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    // SAFETY: ncclGetErrorString takes any value and returns a static string (or null).
    let mut message = text(unsafe { sys::ncclGetErrorString(code) });
    // SAFETY: ncclGetLastError accepts a null communicator (callers pass null or a live one) and returns
    // a string it owns (or null).
    let last = text(unsafe { sys::ncclGetLastError(comm) });
    if !last.is_empty() && !message.contains(&last) {
        message = format!("{message} ({last})");
    }
    Error::Nccl {
        call,
        code: NcclErrorCode(code.0),
        message,
    }
}

fn check(call: &'static str, code: sys::ncclResult_t) -> Result<()> {
    check_comm(call, code, std::ptr::null_mut())
}

/// `code` of `call` as a `Result`. A non-blocking communicator's `ncclInProgress` (the call goes on in the
/// background) is waited out here ([`settle`]): whatever the call was given must be in NCCL's hands when
/// this returns, so that the memory model may release or reuse it.
fn check_comm(call: &'static str, code: sys::ncclResult_t, comm: sys::ncclComm_t) -> Result<()> {
    if code == sys::ncclResult_t::ncclSuccess {
        Ok(())
    } else if code == sys::ncclResult_t::ncclInProgress && !comm.is_null() {
        // SAFETY: every caller passes a live communicator (or null, handled above).
        unsafe { settle(call, comm) }
    } else {
        Err(error(call, code, comm))
    }
}

/// Wait until the non-blocking communicator `comm` has finished the call it answered `ncclInProgress` to
/// (`ncclCommGetAsyncError` leaves `ncclInProgress`), with pauses of 1 us growing to 100 us: the calls
/// that answer so (an enqueue, a group's launch, an initialization) take microseconds to milliseconds.
/// The call's own error (named `call`) if it failed.
///
/// # Safety
/// `comm` is a live communicator.
pub(crate) unsafe fn settle(call: &'static str, comm: sys::ncclComm_t) -> Result<()> {
    let backoff = Backoff {
        first: Duration::from_micros(1),
        cap: Duration::from_micros(100),
        limit: None,
    };
    poll_until(backoff, || {
        let mut state = sys::ncclResult_t::ncclSuccess;
        // SAFETY: `comm` is a live communicator (every caller's contract); `state` is a live local.
        let code = unsafe { sys::ncclCommGetAsyncError(comm, &mut state) };
        if code != sys::ncclResult_t::ncclSuccess {
            return Err(error("ncclCommGetAsyncError", code, comm));
        }
        match state {
            sys::ncclResult_t::ncclSuccess => Ok(true),
            sys::ncclResult_t::ncclInProgress => Ok(false),
            failed => Err(error(call, failed, comm)),
        }
    })
}

/// `ncclGetVersion`: the library's version as `major * 10000 + minor * 100 + patch` (NCCL >= 2.9).
pub fn version() -> Result<i32> {
    let mut v = 0;
    // SAFETY: an out-pointer to a live local `i32`.
    check("ncclGetVersion", unsafe { sys::ncclGetVersion(&mut v) })?;
    Ok(v)
}

/// `ncclGetUniqueId`: a fresh id for a new clique (call on rank 0 only).
pub fn get_unique_id() -> Result<sys::ncclUniqueId> {
    let mut id = sys::ncclUniqueId::default();
    // SAFETY: an out-pointer to a live local `ncclUniqueId`, which NCCL fills.
    check("ncclGetUniqueId", unsafe { sys::ncclGetUniqueId(&mut id) })?;
    Ok(id)
}

/// `ncclCommInitAll`: one communicator per device of `devices`, in this process.
pub fn comm_init_all(devices: &[i32]) -> Result<Vec<sys::ncclComm_t>> {
    let mut comms = vec![std::ptr::null_mut(); devices.len()];
    let n = i32::try_from(devices.len()).map_err(|_| Error::InvalidArgument {
        what: "device count",
        value: devices.len().to_string(),
        reason: "more devices than an int holds".into(),
    })?;
    // SAFETY: `comms` has `n` writable slots and `devices` `n` ordinals, both live for the call. NCCL
    // >= 2.14 writes every slot before returning. Older NCCL and RCCL, when this runs inside an
    // ncclGroupStart/End of the caller, write the slots only at that group's end, after this Vec was
    // handed back and consumed: `Comm::init_all` must not be called inside `rccl::group` with them.
    check("ncclCommInitAll", unsafe {
        sys::ncclCommInitAll(comms.as_mut_ptr(), n, devices.as_ptr())
    })?;
    Ok(comms)
}

/// `ncclCommInitRank` on the current device.
pub fn comm_init_rank(nranks: i32, id: sys::ncclUniqueId, rank: i32) -> Result<sys::ncclComm_t> {
    let mut comm = std::ptr::null_mut();
    // SAFETY: an out-pointer to a live local handle and plain values. NCCL >= 2.14 writes it before
    // returning, also inside a group. Older NCCL and RCCL, inside ncclGroupStart/End, keep the pointer
    // and write it at ncclGroupEnd, after this frame is gone (and return null here): `Comm::new` must not
    // be called inside `rccl::group` with them.
    check("ncclCommInitRank", unsafe {
        sys::ncclCommInitRank(&mut comm, nranks, id, rank)
    })?;
    Ok(comm)
}

/// `ncclCommDestroy`.
///
/// # Safety
/// `comm` is a live communicator, not used again.
pub unsafe fn comm_destroy(comm: sys::ncclComm_t) -> Result<()> {
    // SAFETY: the caller's contract: `comm` is live and not used again.
    check("ncclCommDestroy", unsafe { sys::ncclCommDestroy(comm) })
}

/// `ncclCommAbort`: stop the communicator's queued operations and free it.
///
/// # Safety
/// `comm` is a live communicator, not used again.
pub unsafe fn comm_abort(comm: sys::ncclComm_t) -> Result<()> {
    // SAFETY: the caller's contract: `comm` is live and not used again.
    check("ncclCommAbort", unsafe { sys::ncclCommAbort(comm) })
}

/// `ncclCommGetAsyncError`: the communicator's asynchronous error state, as a raw code.
///
/// # Safety
/// `comm` is a live communicator.
pub unsafe fn comm_get_async_error(comm: sys::ncclComm_t) -> Result<sys::ncclResult_t> {
    let mut state = sys::ncclResult_t::ncclSuccess;
    check_comm(
        "ncclCommGetAsyncError",
        // SAFETY: `comm` is live (the caller's contract); `state` is a live local.
        unsafe { sys::ncclCommGetAsyncError(comm, &mut state) },
        comm,
    )?;
    Ok(state)
}

/// `ncclGroupStart`.
pub fn group_start() -> Result<()> {
    // SAFETY: no arguments; it only opens a group on this thread.
    check("ncclGroupStart", unsafe { sys::ncclGroupStart() })
}

/// `ncclGroupEnd`: `Ok(true)` when it answered `ncclInProgress` (a group with non-blocking communicators
/// goes on in the background: [`settle`] each of them).
pub fn group_end() -> Result<bool> {
    // SAFETY: no arguments. It queues the calls made since the matching ncclGroupStart, with the pointers
    // they were given: those must still be valid now (see `rccl::group`).
    let code = unsafe { sys::ncclGroupEnd() };
    if code == sys::ncclResult_t::ncclInProgress {
        return Ok(true);
    }
    check("ncclGroupEnd", code).map(|()| false)
}

/// The arguments every collective takes after its buffers.
#[derive(Clone, Copy)]
pub struct Call {
    /// Elements per rank as the C function counts them.
    pub count: usize,
    /// The element type.
    pub dtype: sys::ncclDataType_t,
    /// The communicator.
    pub comm: sys::ncclComm_t,
    /// The stream (`hipStream_t`).
    pub stream: sys::hipStream_t,
}

/// `ncclAllReduce`.
///
/// # Safety
/// `send` and `recv` are device memory of `c.count` elements on the communicator's device, live until the
/// work queued on `c.stream` is done (inside ncclGroupStart/End it is queued at ncclGroupEnd); `c.comm`
/// and `c.stream` are live.
pub unsafe fn all_reduce(
    send: *const c_void,
    recv: *mut c_void,
    op: sys::ncclRedOp_t,
    c: Call,
) -> Result<()> {
    check_comm(
        "ncclAllReduce",
        // SAFETY: the caller's contract is ncclAllReduce's: both buffers hold `c.count` elements of
        // `c.dtype` on the communicator's device and stay valid until the queued work is done.
        unsafe { sys::ncclAllReduce(send, recv, c.count, c.dtype, op, c.comm, c.stream) },
        c.comm,
    )
}

/// `ncclBroadcast`.
///
/// # Safety
/// As [`all_reduce`]; `send` is read on the root only.
pub unsafe fn broadcast(send: *const c_void, recv: *mut c_void, root: i32, c: Call) -> Result<()> {
    check_comm(
        "ncclBroadcast",
        // SAFETY: the caller's contract, as in all_reduce.
        unsafe { sys::ncclBroadcast(send, recv, c.count, c.dtype, root, c.comm, c.stream) },
        c.comm,
    )
}

/// `ncclReduce`.
///
/// # Safety
/// As [`all_reduce`]; `recv` is written on the root only.
pub unsafe fn reduce(
    send: *const c_void,
    recv: *mut c_void,
    op: sys::ncclRedOp_t,
    root: i32,
    c: Call,
) -> Result<()> {
    check_comm(
        "ncclReduce",
        // SAFETY: the caller's contract, as in all_reduce.
        unsafe { sys::ncclReduce(send, recv, c.count, c.dtype, op, root, c.comm, c.stream) },
        c.comm,
    )
}

/// `ncclAllGather`: `c.count` elements sent, `c.count * nranks` received.
///
/// # Safety
/// As [`all_reduce`], with `recv` of `c.count * nranks` elements.
pub unsafe fn all_gather(send: *const c_void, recv: *mut c_void, c: Call) -> Result<()> {
    check_comm(
        "ncclAllGather",
        // SAFETY: the caller's contract: `recv` holds `c.count * nranks` elements, the rest as in
        // all_reduce.
        unsafe { sys::ncclAllGather(send, recv, c.count, c.dtype, c.comm, c.stream) },
        c.comm,
    )
}

/// `ncclReduceScatter`: `c.count * nranks` elements sent, `c.count` received.
///
/// # Safety
/// As [`all_reduce`], with `send` of `c.count * nranks` elements.
pub unsafe fn reduce_scatter(
    send: *const c_void,
    recv: *mut c_void,
    op: sys::ncclRedOp_t,
    c: Call,
) -> Result<()> {
    check_comm(
        "ncclReduceScatter",
        // SAFETY: the caller's contract: `send` holds `c.count * nranks` elements, the rest as in
        // all_reduce.
        unsafe { sys::ncclReduceScatter(send, recv, c.count, c.dtype, op, c.comm, c.stream) },
        c.comm,
    )
}

/// `ncclSend` to `peer`.
///
/// # Safety
/// As [`all_reduce`] for `buf`.
pub unsafe fn send(buf: *const c_void, peer: i32, c: Call) -> Result<()> {
    check_comm(
        "ncclSend",
        // SAFETY: the caller's contract, as in all_reduce, for `buf`.
        unsafe { sys::ncclSend(buf, c.count, c.dtype, peer, c.comm, c.stream) },
        c.comm,
    )
}

/// `ncclRecv` from `peer`.
///
/// # Safety
/// As [`all_reduce`] for `buf`.
pub unsafe fn recv(buf: *mut c_void, peer: i32, c: Call) -> Result<()> {
    check_comm(
        "ncclRecv",
        // SAFETY: the caller's contract, as in all_reduce, for `buf`.
        unsafe { sys::ncclRecv(buf, c.count, c.dtype, peer, c.comm, c.stream) },
        c.comm,
    )
}

/// `ncclCommCount`: the number of ranks.
///
/// # Safety
/// `comm` is a live communicator.
pub unsafe fn comm_count(comm: sys::ncclComm_t) -> Result<i32> {
    let mut n = 0;
    check_comm(
        "ncclCommCount",
        // SAFETY: `comm` is live (the caller's contract); `n` is a live local.
        unsafe { sys::ncclCommCount(comm, &mut n) },
        comm,
    )?;
    Ok(n)
}

/// `ncclCommUserRank`: this communicator's rank.
///
/// # Safety
/// `comm` is a live communicator.
pub unsafe fn comm_user_rank(comm: sys::ncclComm_t) -> Result<i32> {
    let mut r = 0;
    check_comm(
        "ncclCommUserRank",
        // SAFETY: `comm` is live (the caller's contract); `r` is a live local.
        unsafe { sys::ncclCommUserRank(comm, &mut r) },
        comm,
    )?;
    Ok(r)
}

/// `ncclCommSplit`'s C signature, with the `ncclConfig_t*` (absent from older headers) as a void pointer:
/// only null is passed (the new communicator takes its parent's configuration).
type CommSplitFn = unsafe extern "C" fn(
    sys::ncclComm_t,
    std::ffi::c_int,
    std::ffi::c_int,
    *mut sys::ncclComm_t,
    *mut c_void,
) -> sys::ncclResult_t;

/// `ncclCommSplit` as the loaded library exports it (NCCL >= 2.18, RCCL >= 5.7), looked up at run time
/// so that builds against older headers and libraries work and answer `None`.
fn comm_split_fn() -> Option<CommSplitFn> {
    #[cfg(unix)]
    {
        // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only searches the loaded objects.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"ncclCommSplit".as_ptr()) };
        // SAFETY: a non-null `ncclCommSplit` of a library with NCCL's API has exactly this signature
        // (NCCL's and RCCL's rccl.h/nccl.h, 2.18 on).
        (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, CommSplitFn>(p) })
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// `ncclCommSplit(comm, color, key, &new, NULL)`: `Ok(None)` where the library lacks the call; the new
/// handle is null for a rank that passed `NCCL_SPLIT_NOCOLOR`.
///
/// # Safety
/// `comm` is a live communicator, on the current device.
pub unsafe fn comm_split(
    comm: sys::ncclComm_t,
    color: i32,
    key: i32,
) -> Result<Option<sys::ncclComm_t>> {
    let Some(split) = comm_split_fn() else {
        return Ok(None);
    };
    let mut new = std::ptr::null_mut();
    check_comm(
        "ncclCommSplit",
        // SAFETY: `comm` is live (the caller's contract), `new` a live local the library writes, and a
        // null config is documented to mean "the parent's".
        unsafe { split(comm, color, key, &mut new, std::ptr::null_mut()) },
        comm,
    )?;
    Ok(Some(new))
}

/// `NCCL_CONFIG_UNDEF_INT`: a configuration field left to the library (its default, or its environment
/// variable).
pub const CONFIG_UNDEF_INT: c_int = c_int::MIN;

/// The first fields of `ncclConfig_t`, as NCCL 2.17 defined them (and every later version keeps them, in
/// this order). The library copies `size` bytes over its own `NCCL_CONFIG_INITIALIZER` values and reads
/// only the fields of `version`, so the fields added later keep their defaults: this prefix works with
/// every header and library from 2.17 on (2.14 to 2.16 read `blocking` only).
#[repr(C)]
#[derive(Debug)]
pub struct RawConfig {
    /// `sizeof` this struct.
    pub size: usize,
    /// `0xcafebeef`, which the library checks.
    pub magic: u32,
    /// `NCCL_VERSION(2, 17, 0)`: the fields below are this version's.
    pub version: u32,
    /// 1: calls return when done; 0: they may return `ncclInProgress` and go on in the background.
    pub blocking: c_int,
    /// `cgaClusterSize` (NVIDIA Hopper on).
    pub cga_cluster_size: c_int,
    /// `minCTAs`.
    pub min_ctas: c_int,
    /// `maxCTAs`.
    pub max_ctas: c_int,
    /// `netName`: the network plugin to use, or null.
    pub net_name: *const std::ffi::c_char,
}

impl RawConfig {
    /// Every field left to the library, with `blocking` given (the library insists on 0 or 1).
    pub fn new(blocking: bool) -> RawConfig {
        RawConfig {
            size: std::mem::size_of::<RawConfig>(),
            magic: 0xcafe_beef,
            version: 21700,
            blocking: c_int::from(blocking),
            cga_cluster_size: CONFIG_UNDEF_INT,
            min_ctas: CONFIG_UNDEF_INT,
            max_ctas: CONFIG_UNDEF_INT,
            net_name: std::ptr::null(),
        }
    }
}

/// `ncclCommInitRankConfig`'s C signature, with our own prefix of `ncclConfig_t` (see [`RawConfig`]).
type CommInitRankConfigFn = unsafe extern "C" fn(
    *mut sys::ncclComm_t,
    c_int,
    sys::ncclUniqueId,
    c_int,
    *mut RawConfig,
) -> sys::ncclResult_t;

/// `ncclCommInitRankConfig` as the loaded library exports it (NCCL and RCCL >= 2.14), looked up at run
/// time like `ncclCommSplit`.
fn comm_init_rank_config_fn() -> Option<CommInitRankConfigFn> {
    #[cfg(unix)]
    {
        // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only searches the loaded objects.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"ncclCommInitRankConfig".as_ptr()) };
        // SAFETY: a non-null `ncclCommInitRankConfig` of a library with NCCL's API has this signature
        // (nccl.h / rccl.h 2.14 on); its config pointer reads `size` bytes of a struct starting like
        // `RawConfig`.
        (!p.is_null())
            .then(|| unsafe { std::mem::transmute::<*mut c_void, CommInitRankConfigFn>(p) })
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// `ncclCommInitRankConfig` on the current device: `Ok(None)` where the library lacks the call, else the
/// new handle and whether its initialization goes on in the background (`ncclInProgress`, non-blocking
/// configurations only). On failure a handle the library left is aborted.
pub fn comm_init_rank_config(
    nranks: i32,
    id: sys::ncclUniqueId,
    rank: i32,
    config: &mut RawConfig,
) -> Result<Option<(sys::ncclComm_t, bool)>> {
    let Some(init) = comm_init_rank_config_fn() else {
        return Ok(None);
    };
    let mut comm = std::ptr::null_mut();
    // SAFETY: an out-pointer to a live local handle, plain values and a live, initialised config that
    // outlives the call (the library copies it). Callers make sure this runs outside any group.
    let code = unsafe { init(&mut comm, nranks, id, rank, config) };
    if code == sys::ncclResult_t::ncclSuccess {
        return Ok(Some((comm, false)));
    }
    if code == sys::ncclResult_t::ncclInProgress && !comm.is_null() {
        return Ok(Some((comm, true)));
    }
    let e = error("ncclCommInitRankConfig", code, comm);
    if !comm.is_null() {
        // SAFETY: the handle the failed call left, live and not used again.
        let _ = unsafe { sys::ncclCommAbort(comm) };
    }
    Err(e)
}
