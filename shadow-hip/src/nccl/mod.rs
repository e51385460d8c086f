//! The NCCL API of RCCL (`librccl.so.1`): communicators of any rank count in this process, over the
//! shadow's devices. A collective is one operation per rank, queued on that rank's stream; it reads the
//! send buffer and writes the receive buffer (ranges from count and element size). A rank's part blocks
//! its stream until every rank's part runs (a cross-stream rendezvous); then the result is computed on
//! the host-backed memory, and the parts complete together: each part's accesses (of its own rank's
//! buffers) are logged with its clock plus its own completion, and what its stream queues after it is
//! ordered after that and after the join of every part's clock (every part started). Calls made inside ncclGroupStart/ncclGroupEnd are queued only at the
//! outermost ncclGroupEnd, as NCCL does; the send/recv calls of one group on one communicator and stream
//! are one operation, paired with their peers' within the group.
#![allow(non_camel_case_types)]

mod api;
mod rendezvous;

use rendezvous::Rendezvous;

use crate::clock::{new_pid, Clock, Pid};
use crate::detector::{self, Kind};
use crate::memory;
use crate::streams::{self, lock, rt, Action, Rt};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// `ncclResult_t`.
pub type NcclResult = c_int;
pub(crate) const OK: NcclResult = 0;
pub(crate) const INTERNAL: NcclResult = 3;
pub(crate) const INVALID_ARGUMENT: NcclResult = 4;
pub(crate) const INVALID_USAGE: NcclResult = 5;
/// `ncclInProgress`: a non-blocking communicator's call goes on in the background.
pub(crate) const IN_PROGRESS: NcclResult = 7;

/// `ncclUniqueId`: 128 opaque bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ncclUniqueId {
    pub(crate) internal: [c_char; 128],
}

/// `ncclComm_t`: an opaque pointer (here a handle number).
pub type ncclComm_t = *mut c_void;

/// RCCL 7.2.4's NCCL version (2.27.7).
pub(crate) const VERSION: c_int = 22707;

/// `ncclDataType_t` values: element sizes (0: not a type).
pub(crate) fn elem_size(dtype: c_int) -> usize {
    match dtype {
        0 | 1 | 10 | 11 => 1,
        6 | 9 => 2,
        2 | 3 | 7 => 4,
        4 | 5 | 8 => 8,
        _ => 0,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Coll {
    AllReduce,
    Broadcast,
    Reduce,
    AllGather,
    ReduceScatter,
    Send,
    Recv,
}

impl Coll {
    fn name(self) -> &'static str {
        match self {
            Coll::AllReduce => "ncclAllReduce",
            Coll::Broadcast => "ncclBroadcast",
            Coll::Reduce => "ncclReduce",
            Coll::AllGather => "ncclAllGather",
            Coll::ReduceScatter => "ncclReduceScatter",
            Coll::Send => "ncclSend",
            Coll::Recv => "ncclRecv",
        }
    }

    fn p2p(self) -> bool {
        matches!(self, Coll::Send | Coll::Recv)
    }

    fn reduces(self) -> bool {
        matches!(self, Coll::AllReduce | Coll::Reduce | Coll::ReduceScatter)
    }
}

/// One call as made: its communicator's clique, rank and size, buffers and arguments.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Call {
    pub(crate) coll: Coll,
    pub(crate) comm: usize,
    pub(crate) clique: usize,
    pub(crate) rank: usize,
    pub(crate) nranks: usize,
    pub(crate) send: usize,
    pub(crate) recv: usize,
    pub(crate) count: usize,
    pub(crate) dtype: c_int,
    pub(crate) op: c_int,
    /// The root (broadcast, reduce) or the peer (send, recv).
    pub(crate) root: usize,
    pub(crate) stream: usize,
}

impl Call {
    fn size(&self) -> usize {
        elem_size(self.dtype)
    }

    /// The bytes read from `send` (None: not read on this rank).
    fn send_bytes(&self) -> Option<usize> {
        let n = self.count * self.size();
        match self.coll {
            Coll::AllReduce | Coll::Reduce | Coll::AllGather | Coll::Send => Some(n),
            Coll::Broadcast => (self.rank == self.root).then_some(n),
            Coll::ReduceScatter => Some(n * self.nranks),
            Coll::Recv => None,
        }
    }

    /// The bytes written to `recv` (None: not written on this rank).
    fn recv_bytes(&self) -> Option<usize> {
        let n = self.count * self.size();
        match self.coll {
            Coll::AllReduce | Coll::Broadcast | Coll::ReduceScatter | Coll::Recv => Some(n),
            Coll::Reduce => (self.rank == self.root).then_some(n),
            Coll::AllGather => Some(n * self.nranks),
            Coll::Send => None,
        }
    }

    /// Every range this call touches: (address, bytes, kind).
    fn ranges(&self) -> Vec<(usize, usize, Kind)> {
        let mut v = Vec::new();
        if let Some(n) = self.send_bytes() {
            v.push((self.send, n, Kind::Read));
        }
        if let Some(n) = self.recv_bytes() {
            v.push((self.recv, n, Kind::Write));
        }
        v
    }
}

pub(crate) struct CommState {
    pub(crate) clique: usize,
    pub(crate) rank: usize,
    pub(crate) nranks: usize,
    pub(crate) device: i32,
    /// Made by `ncclCommInitRankConfig` with `blocking = 0`: calls answer `ncclInProgress`.
    pub(crate) nonblocking: bool,
    /// How many more `ncclCommGetAsyncError` calls answer `ncclInProgress` for the last call.
    pub(crate) busy: u32,
    /// A non-blocking initialization: the unique id's key, in progress until every rank joined.
    pub(crate) joining: Option<Vec<u8>>,
}

#[derive(Default)]
pub(crate) struct Clique {
    /// Per rank: how many collectives it queued (the nth of every rank form one collective).
    pub(crate) next: Vec<u64>,
    /// Collectives not every rank has queued yet.
    pub(crate) open: HashMap<u64, Arc<Rendezvous>>,
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) comms: HashMap<usize, CommState>,
    pub(crate) cliques: HashMap<usize, Clique>,
    /// Cliques made by ncclCommInitRank, by their unique id: (clique, ranks joined).
    pub(crate) by_id: HashMap<Vec<u8>, (usize, Vec<bool>)>,
    pub(crate) ids: u64,
}

pub(crate) static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Taken after the runtime's lock, never before it.
pub(crate) fn state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut g = STATE.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(State::default))
}

/// After a call on `comm` succeeded: a non-blocking communicator answers `ncclInProgress` for it, and
/// `ncclCommGetAsyncError` does twice more.
pub(crate) fn in_progress_after(comm: usize, r: NcclResult) -> NcclResult {
    if r != OK {
        return r;
    }
    state(|s| match s.comms.get_mut(&comm) {
        Some(c) if c.nonblocking => {
            c.busy = 2;
            IN_PROGRESS
        }
        _ => OK,
    })
}

/// Before a call on `comm`: one on a non-blocking communicator whose last call is still in progress is a
/// report (NCCL requires the caller to wait it out first).
pub(crate) fn check_not_busy(comm: usize, call: &str) {
    let busy = state(|s| {
        s.comms
            .get(&comm)
            .is_some_and(|c| c.busy > 0 || c.joining.is_some())
    });
    if busy {
        detector::report(format!(
            "{call} on a non-blocking communicator whose last call is still in progress (its \
             ncclInProgress was not waited out with ncclCommGetAsyncError)"
        ));
    }
}
