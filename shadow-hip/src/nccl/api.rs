//! The exported NCCL calls: communicators, groups, collectives, send and receive.

use super::rendezvous::*;
use super::*;

#[no_mangle]
pub unsafe extern "C" fn ncclGetVersion(v: *mut c_int) -> NcclResult {
    if v.is_null() {
        return INVALID_ARGUMENT;
    }
    *v = VERSION;
    OK
}

#[no_mangle]
pub unsafe extern "C" fn ncclGetUniqueId(id: *mut ncclUniqueId) -> NcclResult {
    if id.is_null() {
        return INVALID_ARGUMENT;
    }
    let n = state(|s| {
        s.ids += 1;
        s.ids
    });
    let mut internal = [0 as c_char; 128];
    for (d, b) in internal
        .iter_mut()
        .zip(b"hip-rs shadow\0".iter().chain(&n.to_le_bytes()))
    {
        *d = *b as c_char;
    }
    *id = ncclUniqueId { internal };
    OK
}

pub(crate) fn new_comm(
    s: &mut State,
    clique: usize,
    rank: usize,
    nranks: usize,
    device: i32,
) -> ncclComm_t {
    let h = streams::new_handle();
    s.comms.insert(
        h,
        CommState {
            clique,
            rank,
            nranks,
            device,
            nonblocking: false,
            busy: 0,
            joining: None,
        },
    );
    h as ncclComm_t
}

pub(crate) fn new_clique(s: &mut State, nranks: usize) -> usize {
    let q = streams::new_handle();
    s.cliques.insert(
        q,
        Clique {
            next: vec![0; nranks],
            open: HashMap::new(),
        },
    );
    q
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommInitAll(
    comms: *mut ncclComm_t,
    n: c_int,
    devlist: *const c_int,
) -> NcclResult {
    if comms.is_null() || n <= 0 {
        return INVALID_ARGUMENT;
    }
    let n = n as usize;
    let devices: Vec<i32> = if devlist.is_null() {
        (0..n as i32).collect()
    } else {
        std::slice::from_raw_parts(devlist, n).to_vec()
    };
    if devices
        .iter()
        .any(|d| !(0..crate::state::count()).contains(d))
    {
        return INVALID_ARGUMENT;
    }
    state(|s| {
        let q = new_clique(s, n);
        for (r, d) in devices.iter().enumerate() {
            *comms.add(r) = new_comm(s, q, r, n, *d);
        }
    });
    OK
}

/// Joins the clique of `id` on the current device. Does not wait for the other ranks.
#[no_mangle]
pub unsafe extern "C" fn ncclCommInitRank(
    comm: *mut ncclComm_t,
    nranks: c_int,
    id: ncclUniqueId,
    rank: c_int,
) -> NcclResult {
    if comm.is_null() || nranks <= 0 || !(0..nranks).contains(&rank) {
        return INVALID_ARGUMENT;
    }
    let (n, r) = (nranks as usize, rank as usize);
    let key: Vec<u8> = id.internal.iter().map(|&c| c as u8).collect();
    let device = crate::state::current();
    state(|s| {
        let (q, joined) = match s.by_id.get(&key) {
            Some((q, joined)) => (*q, joined.clone()),
            None => {
                let q = new_clique(s, n);
                s.by_id.insert(key.clone(), (q, vec![false; n]));
                (q, vec![false; n])
            }
        };
        if joined.len() != n || joined[r] {
            return INVALID_ARGUMENT;
        }
        s.by_id.get_mut(&key).unwrap().1[r] = true;
        *comm = new_comm(s, q, r, n, device);
        OK
    })
}

/// `ncclConfig_t`'s first fields (NCCL 2.14: size, magic, version, blocking).
#[repr(C)]
pub struct ConfigPrefix {
    size: usize,
    magic: u32,
    version: u32,
    blocking: c_int,
}

/// `ncclCommInitRank` with a configuration: checks the magic and `blocking` (0 or 1) as NCCL does. A
/// non-blocking one answers `ncclInProgress`, and stays in progress (`ncclCommGetAsyncError`) until every
/// rank of the clique joined.
#[no_mangle]
pub unsafe extern "C" fn ncclCommInitRankConfig(
    comm: *mut ncclComm_t,
    nranks: c_int,
    id: ncclUniqueId,
    rank: c_int,
    config: *const ConfigPrefix,
) -> NcclResult {
    let blocking = if config.is_null() {
        1
    } else {
        let c = &*config;
        if c.size < std::mem::size_of::<ConfigPrefix>() || c.magic != 0xcafe_beef {
            return INVALID_ARGUMENT;
        }
        c.blocking
    };
    if blocking != 0 && blocking != 1 {
        return INVALID_ARGUMENT;
    }
    let r = ncclCommInitRank(comm, nranks, id, rank);
    if r != OK || blocking == 1 {
        return r;
    }
    let key: Vec<u8> = id.internal.iter().map(|&c| c as u8).collect();
    state(|s| {
        if let Some(c) = s.comms.get_mut(&(*comm as usize)) {
            c.nonblocking = true;
            c.joining = Some(key);
        }
    });
    IN_PROGRESS
}

/// Inside a group, destroying a communicator a pending call of the group uses is a report (NCCL would
/// use it after its end).
pub(crate) fn destroy(comm: ncclComm_t, call: &str) -> NcclResult {
    let h = comm as usize;
    let pending = GROUP.with_borrow(|(_, p)| p.iter().filter(|c| c.comm == h).count());
    if pending > 0 {
        detector::report(format!(
            "{call} of a communicator with {pending} calls of the open group not queued yet (NCCL \
             queues them at ncclGroupEnd, on a destroyed communicator)"
        ));
    }
    match state(|s| s.comms.remove(&h)) {
        Some(_) => OK,
        None => INVALID_ARGUMENT,
    }
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommDestroy(comm: ncclComm_t) -> NcclResult {
    destroy(comm, "ncclCommDestroy")
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommAbort(comm: ncclComm_t) -> NcclResult {
    destroy(comm, "ncclCommAbort")
}

pub(crate) fn with_comm(
    comm: ncclComm_t,
    f: impl FnOnce(&CommState) -> c_int,
    out: *mut c_int,
) -> NcclResult {
    if out.is_null() {
        return INVALID_ARGUMENT;
    }
    match state(|s| s.comms.get(&(comm as usize)).map(f)) {
        Some(v) => {
            // SAFETY: a non-null out-pointer (the caller's contract).
            unsafe { *out = v };
            OK
        }
        None => INVALID_ARGUMENT,
    }
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommCount(comm: ncclComm_t, n: *mut c_int) -> NcclResult {
    with_comm(comm, |c| c.nranks as c_int, n)
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommCuDevice(comm: ncclComm_t, d: *mut c_int) -> NcclResult {
    with_comm(comm, |c| c.device, d)
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommUserRank(comm: ncclComm_t, r: *mut c_int) -> NcclResult {
    with_comm(comm, |c| c.rank as c_int, r)
}

#[no_mangle]
pub unsafe extern "C" fn ncclCommGetAsyncError(comm: ncclComm_t, e: *mut c_int) -> NcclResult {
    let in_progress = state(|s| {
        let joined = |key: &Vec<u8>| s.by_id.get(key).is_some_and(|(_, j)| j.iter().all(|&j| j));
        let Some(c) = s.comms.get(&(comm as usize)) else {
            return false;
        };
        let still_joining = c.joining.as_ref().is_some_and(|k| !joined(k));
        let c = s.comms.get_mut(&(comm as usize)).unwrap();
        if !still_joining {
            c.joining = None;
        }
        if c.busy > 0 {
            c.busy -= 1;
            return true;
        }
        still_joining
    });
    with_comm(comm, |_| if in_progress { IN_PROGRESS } else { OK }, e)
}

#[no_mangle]
pub extern "C" fn ncclGetErrorString(code: NcclResult) -> *const c_char {
    let s: &'static [u8] = match code {
        0 => b"no error\0",
        1 => b"unhandled cuda error\0",
        2 => b"unhandled system error\0",
        3 => b"internal error\0",
        4 => b"invalid argument\0",
        5 => b"invalid usage\0",
        6 => b"remote process exited or there was a network error\0",
        7 => b"NCCL operation in progress\0",
        _ => b"unknown result code\0",
    };
    s.as_ptr().cast()
}

#[no_mangle]
pub extern "C" fn ncclGetLastError(_comm: ncclComm_t) -> *const c_char {
    c"".as_ptr()
}

#[no_mangle]
pub extern "C" fn ncclGroupStart() -> NcclResult {
    GROUP.with_borrow_mut(|(depth, _)| *depth += 1);
    OK
}

/// Outside a group: ncclInvalidUsage. The outermost end queues the group's calls, in their order.
#[no_mangle]
pub extern "C" fn ncclGroupEnd() -> NcclResult {
    let calls = GROUP.with_borrow_mut(|(depth, pending)| {
        if *depth == 0 {
            return None;
        }
        *depth -= 1;
        Some(if *depth == 0 {
            std::mem::take(pending)
        } else {
            Vec::new()
        })
    });
    let Some(calls) = calls else {
        return INVALID_USAGE;
    };
    let dead = state(|s| {
        calls
            .iter()
            .filter(|c| !s.comms.contains_key(&c.comm))
            .count()
    });
    if dead > 0 {
        // Reported when destroyed.
        return INTERNAL;
    }
    if calls.is_empty() {
        return OK;
    }
    let comms: Vec<usize> = calls.iter().map(|c| c.comm).collect();
    let r = launch(calls);
    let mut answer = r;
    for comm in comms {
        if in_progress_after(comm, r) == IN_PROGRESS {
            answer = IN_PROGRESS;
        }
    }
    answer
}

#[no_mangle]
pub unsafe extern "C" fn ncclAllReduce(
    send: *const c_void,
    recv: *mut c_void,
    count: usize,
    dtype: c_int,
    op: c_int,
    comm: ncclComm_t,
    stream: *mut c_void,
) -> NcclResult {
    enqueue(
        Coll::AllReduce,
        send,
        recv,
        count,
        dtype,
        op,
        0,
        comm,
        stream,
    )
}

#[no_mangle]
pub unsafe extern "C" fn ncclBroadcast(
    send: *const c_void,
    recv: *mut c_void,
    count: usize,
    dtype: c_int,
    root: c_int,
    comm: ncclComm_t,
    stream: *mut c_void,
) -> NcclResult {
    enqueue(
        Coll::Broadcast,
        send,
        recv,
        count,
        dtype,
        0,
        root,
        comm,
        stream,
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn ncclReduce(
    send: *const c_void,
    recv: *mut c_void,
    count: usize,
    dtype: c_int,
    op: c_int,
    root: c_int,
    comm: ncclComm_t,
    stream: *mut c_void,
) -> NcclResult {
    enqueue(
        Coll::Reduce,
        send,
        recv,
        count,
        dtype,
        op,
        root,
        comm,
        stream,
    )
}

#[no_mangle]
pub unsafe extern "C" fn ncclAllGather(
    send: *const c_void,
    recv: *mut c_void,
    count: usize,
    dtype: c_int,
    comm: ncclComm_t,
    stream: *mut c_void,
) -> NcclResult {
    enqueue(
        Coll::AllGather,
        send,
        recv,
        count,
        dtype,
        0,
        0,
        comm,
        stream,
    )
}

#[no_mangle]
pub unsafe extern "C" fn ncclReduceScatter(
    send: *const c_void,
    recv: *mut c_void,
    count: usize,
    dtype: c_int,
    op: c_int,
    comm: ncclComm_t,
    stream: *mut c_void,
) -> NcclResult {
    enqueue(
        Coll::ReduceScatter,
        send,
        recv,
        count,
        dtype,
        op,
        0,
        comm,
        stream,
    )
}

#[no_mangle]
pub unsafe extern "C" fn ncclSend(
    send: *const c_void,
    count: usize,
    dtype: c_int,
    peer: c_int,
    comm: ncclComm_t,
    stream: *mut c_void,
) -> NcclResult {
    enqueue(
        Coll::Send,
        send,
        std::ptr::null_mut(),
        count,
        dtype,
        0,
        peer,
        comm,
        stream,
    )
}

#[no_mangle]
pub unsafe extern "C" fn ncclRecv(
    recv: *mut c_void,
    count: usize,
    dtype: c_int,
    peer: c_int,
    comm: ncclComm_t,
    stream: *mut c_void,
) -> NcclResult {
    enqueue(
        Coll::Recv,
        std::ptr::null(),
        recv,
        count,
        dtype,
        0,
        peer,
        comm,
        stream,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<T: Elem>(v: &[T]) -> Vec<u8> {
        let mut out = Vec::new();
        for x in v {
            x.put(&mut out);
        }
        out
    }

    /// The reductions the collectives compute, per type and operator (ncclSum 0, Prod 1, Max 2, Min 3,
    /// Avg 4; ncclInt32 2, ncclUint32 3, ncclFloat32 7).
    #[test]
    fn reductions() {
        let (a, b) = (bytes(&[1i32, -5, 7]), bytes(&[2i32, 3, -9]));
        assert_eq!(reduce(&[&a, &b], 2, 0), bytes(&[3i32, -2, -2]));
        assert_eq!(reduce(&[&a, &b], 2, 1), bytes(&[2i32, -15, -63]));
        assert_eq!(reduce(&[&a, &b], 2, 2), bytes(&[2i32, 3, 7]));
        assert_eq!(reduce(&[&a, &b], 2, 3), bytes(&[1i32, -5, -9]));
        let (x, y) = (bytes(&[u32::MAX, 4]), bytes(&[2u32, 8]));
        assert_eq!(reduce(&[&x, &y], 3, 0), bytes(&[1u32, 12]), "wrapping sum");
        assert_eq!(reduce(&[&x, &y], 3, 4), bytes(&[0u32, 6]), "average");
        let (f, g) = (bytes(&[1.5f32, -2.0]), bytes(&[0.25f32, 4.0]));
        assert_eq!(reduce(&[&f, &g], 7, 0), bytes(&[1.75f32, 2.0]));
        assert_eq!(reduce(&[&f, &g], 7, 4), bytes(&[0.875f32, 1.0]));
        assert_eq!(reduce(&[&f], 7, 0), f, "one rank: a copy");
    }
}
