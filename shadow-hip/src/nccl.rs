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
const OK: NcclResult = 0;
const INTERNAL: NcclResult = 3;
const INVALID_ARGUMENT: NcclResult = 4;
const INVALID_USAGE: NcclResult = 5;

/// `ncclUniqueId`: 128 opaque bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ncclUniqueId {
    internal: [c_char; 128],
}

/// `ncclComm_t`: an opaque pointer (here a handle number).
pub type ncclComm_t = *mut c_void;

/// RCCL 7.2.4's NCCL version (2.27.7).
const VERSION: c_int = 22707;

/// `ncclDataType_t` values: element sizes (0: not a type).
fn elem_size(dtype: c_int) -> usize {
    match dtype {
        0 | 1 | 10 | 11 => 1,
        6 | 9 => 2,
        2 | 3 | 7 => 4,
        4 | 5 | 8 => 8,
        _ => 0,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Coll {
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
struct Call {
    coll: Coll,
    comm: usize,
    clique: usize,
    rank: usize,
    nranks: usize,
    send: usize,
    recv: usize,
    count: usize,
    dtype: c_int,
    op: c_int,
    /// The root (broadcast, reduce) or the peer (send, recv).
    root: usize,
    stream: usize,
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

struct CommState {
    clique: usize,
    rank: usize,
    nranks: usize,
    device: i32,
}

#[derive(Default)]
struct Clique {
    /// Per rank: how many collectives it queued (the nth of every rank form one collective).
    next: Vec<u64>,
    /// Collectives not every rank has queued yet.
    open: HashMap<u64, Arc<Rendezvous>>,
}

#[derive(Default)]
struct State {
    comms: HashMap<usize, CommState>,
    cliques: HashMap<usize, Clique>,
    /// Cliques made by ncclCommInitRank, by their unique id: (clique, ranks joined).
    by_id: HashMap<Vec<u8>, (usize, Vec<bool>)>,
    ids: u64,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Taken after the runtime's lock, never before it.
fn state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut g = STATE.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(State::default))
}

/// One rank's part of a collective (or one communicator's send/recv calls of a group).
struct Part {
    calls: Vec<Call>,
    stream: usize,
    seq: u64,
    /// Its stream's clock when it was queued.
    queued: Clock,
    /// Its own completion: what its stream queues later is after it, the other parts' streams are not.
    pid: Pid,
}

#[derive(Default)]
struct RvState {
    parts: Vec<Option<Part>>,
    registered: usize,
    /// Per part, once its stream ran it: its description.
    arrived: Vec<Option<Arc<str>>>,
    n_arrived: usize,
    done: bool,
}

/// The parts of one collective (or of one group's send/recv calls of one clique) meet here.
struct Rendezvous {
    expected: usize,
    st: Mutex<RvState>,
    cv: Condvar,
}

impl Rendezvous {
    fn new(expected: usize) -> Arc<Rendezvous> {
        Arc::new(Rendezvous {
            expected,
            st: Mutex::new(RvState {
                parts: (0..expected).map(|_| None).collect(),
                arrived: vec![None; expected],
                ..RvState::default()
            }),
            cv: Condvar::new(),
        })
    }
}

/// How long a part waits for the others before it reports a collective some rank never queued.
const PATIENCE: Duration = Duration::from_secs(20);

/// A part's stream runs it: wait for every part, then (the last to come) compute and log.
fn arrive(rv: &Rendezvous, idx: usize, w: &Arc<str>) {
    let mut st = rv.st.lock().unwrap_or_else(|p| p.into_inner());
    st.arrived[idx] = Some(w.clone());
    st.n_arrived += 1;
    if st.n_arrived == rv.expected {
        complete(&st);
        st.done = true;
        rv.cv.notify_all();
        return;
    }
    let deadline = Instant::now() + PATIENCE;
    while !st.done {
        let now = Instant::now();
        if now >= deadline {
            detector::report(format!(
                "{w} waited {PATIENCE:?} for the other ranks' parts ({} of {} ran): a collective or \
                 send/recv not every rank queued (NCCL would hang)",
                st.n_arrived, rv.expected
            ));
            return;
        }
        st = rv
            .cv
            .wait_timeout(st, deadline - now)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
}

/// # Safety (of the reads and writes): the ranges were inside live allocations when queued; the
/// detector judges whether anything else touched them meanwhile.
fn read(p: usize, n: usize) -> Vec<u8> {
    // SAFETY: see above; the shadow never gives memory back to the system.
    unsafe { std::slice::from_raw_parts(p as *const u8, n) }.to_vec()
}

fn write(p: usize, data: &[u8]) {
    // SAFETY: as `read`.
    unsafe { std::ptr::copy(data.as_ptr(), p as *mut u8, data.len()) };
}

trait Elem: Copy + PartialOrd {
    const SIZE: usize;
    fn get(b: &[u8]) -> Self;
    fn put(self, out: &mut Vec<u8>);
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, n: usize) -> Self;
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn get(b: &[u8]) -> Self { <$t>::from_le_bytes(b.try_into().unwrap()) }
            fn put(self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_le_bytes()) }
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            fn div(self, n: usize) -> Self { self / (n as $t) }
        }
    )*};
}
int_elem!(i8, u8, i32, u32, i64, u64);

macro_rules! float_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn get(b: &[u8]) -> Self { <$t>::from_le_bytes(b.try_into().unwrap()) }
            fn put(self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_le_bytes()) }
            fn add(self, o: Self) -> Self { self + o }
            fn mul(self, o: Self) -> Self { self * o }
            fn div(self, n: usize) -> Self { self / (n as $t) }
        }
    )*};
}
float_elem!(f32, f64);

fn reduce_as<T: Elem>(inputs: &[&[u8]], op: c_int) -> Vec<u8> {
    let n = inputs[0].len() / T::SIZE;
    let mut out = Vec::with_capacity(inputs[0].len());
    for i in 0..n {
        let at = |b: &[u8]| T::get(&b[i * T::SIZE..(i + 1) * T::SIZE]);
        let mut a = at(inputs[0]);
        for x in &inputs[1..] {
            let b = at(x);
            a = match op {
                1 => a.mul(b),
                2 => {
                    if b > a {
                        b
                    } else {
                        a
                    }
                }
                3 => {
                    if b < a {
                        b
                    } else {
                        a
                    }
                }
                _ => a.add(b),
            };
        }
        if op == 4 {
            a = a.div(inputs.len());
        }
        a.put(&mut out);
    }
    out
}

/// Element-wise `op` over `inputs` (equal lengths) of `dtype`.
fn reduce(inputs: &[&[u8]], dtype: c_int, op: c_int) -> Vec<u8> {
    match dtype {
        0 => reduce_as::<i8>(inputs, op),
        1 => reduce_as::<u8>(inputs, op),
        2 => reduce_as::<i32>(inputs, op),
        3 => reduce_as::<u32>(inputs, op),
        4 => reduce_as::<i64>(inputs, op),
        5 => reduce_as::<u64>(inputs, op),
        7 => reduce_as::<f32>(inputs, op),
        8 => reduce_as::<f64>(inputs, op),
        _ => unreachable!("refused when called"),
    }
}

/// Every part ran: log each part's accesses (a part touches its own rank's buffers only) with its clock
/// when queued plus its completion, then compute. What its stream queues after it knows both (and,
/// through [`push_part`], every part's start); the other ranks' streams do not know its completion.
/// Not the clock it ran with: [`push_part`] may have joined another collective's start into it after
/// events recorded later on its stream took their clocks, which would then not cover it.
fn complete(st: &RvState) {
    let parts: Vec<&Part> = st.parts.iter().flatten().collect();
    for (i, p) in parts.iter().enumerate() {
        let what = st.arrived[i].as_ref().unwrap();
        let mut c = p.queued.clone();
        c.set(p.pid, 1);
        for call in &p.calls {
            for (a, n, k) in call.ranges() {
                memory::log(a, n, k, &c, what);
            }
        }
    }
    let calls: Vec<&Call> = parts.iter().flat_map(|p| &p.calls).collect();
    if calls.first().is_some_and(|c| c.coll.p2p()) {
        pair(&calls);
    } else {
        collective(&calls);
    }
}

/// One collective: one call per rank, in rank order.
fn collective(calls: &[&Call]) {
    let c0 = calls[0];
    if let Some(c) = calls.iter().find(|c| {
        (c.coll, c.count, c.dtype, c.op, c.root) != (c0.coll, c0.count, c0.dtype, c0.op, c0.root)
    }) {
        detector::report(format!(
            "mismatched collective across ranks: rank {} called {:?}, rank {} {:?} (NCCL would \
             misbehave or hang)",
            c0.rank, c0, c.rank, c
        ));
        return;
    }
    let inputs: Vec<Vec<u8>> = calls
        .iter()
        .map(|c| c.send_bytes().map_or(Vec::new(), |n| read(c.send, n)))
        .collect();
    let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    let block = c0.count * c0.size();
    match c0.coll {
        Coll::AllReduce => {
            let r = reduce(&refs, c0.dtype, c0.op);
            for c in calls {
                write(c.recv, &r);
            }
        }
        Coll::Reduce => write(calls[c0.root].recv, &reduce(&refs, c0.dtype, c0.op)),
        Coll::Broadcast => {
            for c in calls {
                write(c.recv, &inputs[c0.root]);
            }
        }
        Coll::AllGather => {
            let all = inputs.concat();
            for c in calls {
                write(c.recv, &all);
            }
        }
        Coll::ReduceScatter => {
            for (r, c) in calls.iter().enumerate() {
                let blocks: Vec<&[u8]> = refs
                    .iter()
                    .map(|i| &i[r * block..(r + 1) * block])
                    .collect();
                write(c.recv, &reduce(&blocks, c0.dtype, c0.op));
            }
        }
        Coll::Send | Coll::Recv => unreachable!(),
    }
}

/// The send/recv calls of one group of one clique: the kth send from a to b pairs with the kth receive
/// of b from a.
fn pair(calls: &[&Call]) {
    let mut sends: HashMap<(usize, usize), Vec<&Call>> = HashMap::new();
    let mut recvs: HashMap<(usize, usize), Vec<&Call>> = HashMap::new();
    for c in calls {
        match c.coll {
            Coll::Send => sends.entry((c.rank, c.root)).or_default().push(c),
            _ => recvs.entry((c.root, c.rank)).or_default().push(c),
        }
    }
    let mut data = Vec::new();
    for (key, ss) in &sends {
        let rs = recvs.remove(key).unwrap_or_default();
        if rs.len() != ss.len() {
            detector::report(format!(
                "rank {} sends {} times to rank {} in a group, which receives {} times from it (NCCL \
                 would hang)",
                key.0,
                ss.len(),
                key.1,
                rs.len()
            ));
        }
        for (s, r) in ss.iter().zip(&rs) {
            if s.count * s.size() != r.count * r.size() {
                detector::report(format!(
                    "ncclSend of {} bytes from rank {} met ncclRecv of {} bytes on rank {}",
                    s.count * s.size(),
                    key.0,
                    r.count * r.size(),
                    key.1
                ));
                continue;
            }
            data.push((r.recv, read(s.send, s.count * s.size())));
        }
    }
    for (key, rs) in recvs {
        detector::report(format!(
            "rank {} receives {} times from rank {} in a group, which sends nothing to it (NCCL would \
             hang)",
            key.1,
            rs.len(),
            key.0
        ));
    }
    // Every send read its buffer before any receive writes (a rank may send and receive one buffer).
    for (dst, bytes) in data {
        write(dst, &bytes);
    }
}

/// Queue `calls` (made in this order) on their streams: what ncclGroupEnd does, or one call outside a
/// group.
fn launch(calls: Vec<Call>) -> NcclResult {
    let mut g = lock();
    let rt = rt(&mut g);
    let mut result = OK;
    // Send/recv calls: one operation per (communicator, stream), one rendezvous per clique.
    let mut fused: Vec<((usize, usize), Vec<Call>)> = Vec::new();
    for c in calls.iter().filter(|c| c.coll.p2p()) {
        match fused.iter_mut().find(|(k, _)| *k == (c.comm, c.stream)) {
            Some((_, v)) => v.push(*c),
            None => fused.push(((c.comm, c.stream), vec![*c])),
        }
    }
    let mut p2p_rv: HashMap<usize, (Arc<Rendezvous>, usize)> = HashMap::new();
    for (_, v) in &fused {
        let n = fused
            .iter()
            .filter(|(_, w)| w[0].clique == v[0].clique)
            .count();
        p2p_rv
            .entry(v[0].clique)
            .or_insert_with(|| (Rendezvous::new(n), 0));
    }
    let mut pushed = vec![false; fused.len()];
    for c in &calls {
        if !live(c) {
            result = INVALID_ARGUMENT;
            continue;
        }
        if c.coll.p2p() {
            let i = fused
                .iter()
                .position(|(k, _)| *k == (c.comm, c.stream))
                .unwrap();
            if pushed[i] {
                continue;
            }
            pushed[i] = true;
            let (rv, next) = p2p_rv.get_mut(&c.clique).unwrap();
            let idx = *next;
            *next += 1;
            let name = if fused[i].1.len() == 1 {
                c.coll.name().to_string()
            } else {
                format!("{} send/recv calls of a group", fused[i].1.len())
            };
            push_part(rt, rv, idx, fused[i].1.clone(), &name);
        } else {
            let rv = state(|s| {
                let q = s.cliques.get_mut(&c.clique).unwrap();
                let n = q.next[c.rank];
                q.next[c.rank] += 1;
                q.open
                    .entry(n)
                    .or_insert_with(|| Rendezvous::new(c.nranks))
                    .clone()
            });
            if push_part(rt, &rv, c.rank, vec![*c], c.coll.name()) {
                state(|s| {
                    let q = s.cliques.get_mut(&c.clique).unwrap();
                    q.open.retain(|_, r| !Arc::ptr_eq(r, &rv));
                });
            }
        }
    }
    result
}

/// Whether every range of `c` is inside a live allocation now (else a report: memory freed before the
/// call was queued, e.g. inside the group that made it).
fn live(c: &Call) -> bool {
    for (a, n, _) in c.ranges() {
        let ok = memory::live_block(a).is_some_and(|(base, len)| a + n <= base + len);
        if !ok {
            detector::report(format!(
                "{} on rank {} queued on [{a:#x}, {:#x}) ({n} bytes), which is not inside a live \
                 allocation of the shadow (freed before the call was queued, e.g. inside its group?)",
                c.coll.name(),
                c.rank,
                a + n
            ));
            return false;
        }
    }
    true
}

/// Queue part `idx` of `rv` on its stream. When it is the last part queued, the streams of every part
/// learn the join of the parts' clocks (their later operations run after every part started); returns
/// whether it was the last.
fn push_part(rt: &mut Rt, rv: &Arc<Rendezvous>, idx: usize, calls: Vec<Call>, name: &str) -> bool {
    let stream = calls[0].stream;
    let pid = new_pid();
    let r = rv.clone();
    let act: Action = Arc::new(move |_: &Clock, w: &Arc<str>| arrive(&r, idx, w));
    let (seq, queued) = streams::push(rt, stream, name, Vec::new(), &Clock::default(), act);
    rt.streams.get_mut(&stream).unwrap().clock.set(pid, 1);
    let mut st = rv.st.lock().unwrap_or_else(|p| p.into_inner());
    st.parts[idx] = Some(Part {
        calls,
        stream,
        seq,
        queued,
        pid,
    });
    st.registered += 1;
    if st.registered < rv.expected {
        return false;
    }
    let mut joined = Clock::default();
    for p in st.parts.iter().flatten() {
        joined.join(&p.queued);
    }
    for p in st.parts.iter().flatten() {
        let mut c = joined.clone();
        c.set(p.pid, 1);
        let s = rt.streams.get_mut(&p.stream).unwrap();
        s.clock.join(&c);
        for op in s.queue.iter_mut().filter(|op| op.seq > p.seq) {
            op.clock.join(&c);
        }
    }
    true
}

thread_local! {
    /// This thread's ncclGroupStart depth and the calls made inside, queued at the outermost end.
    static GROUP: RefCell<(usize, Vec<Call>)> = const { RefCell::new((0, Vec::new())) };
}

/// Check a call and queue it now (outside a group) or at the outermost ncclGroupEnd.
#[allow(clippy::too_many_arguments)]
fn enqueue(
    coll: Coll,
    send: *const c_void,
    recv: *mut c_void,
    count: usize,
    dtype: c_int,
    op: c_int,
    root: c_int,
    comm: ncclComm_t,
    stream: *mut c_void,
) -> NcclResult {
    let Some((clique, rank, nranks, device)) = state(|s| {
        s.comms
            .get(&(comm as usize))
            .map(|c| (c.clique, c.rank, c.nranks, c.device))
    }) else {
        return INVALID_ARGUMENT;
    };
    if elem_size(dtype) == 0
        || (coll.reduces() && (!(0..=4).contains(&op) || matches!(dtype, 6 | 9..)))
        || ((coll.p2p() || matches!(coll, Coll::Broadcast | Coll::Reduce))
            && !(0..nranks as c_int).contains(&root))
    {
        // Reductions of the 16- and 8-bit floats are not modelled.
        return INVALID_ARGUMENT;
    }
    let stream = if stream.is_null() {
        streams::null_of(device)
    } else {
        stream as usize
    };
    {
        let mut g = lock();
        match rt(&mut g).streams.get(&stream) {
            Some(s) if s.capture.is_none() => {}
            // Capture of NCCL calls is not modelled.
            Some(_) => return INVALID_USAGE,
            None => return INVALID_ARGUMENT,
        }
    }
    let call = Call {
        coll,
        comm: comm as usize,
        clique,
        rank,
        nranks,
        send: send as usize,
        recv: recv as usize,
        count,
        dtype,
        op,
        root: root.max(0) as usize,
        stream,
    };
    if !live(&call) {
        return INVALID_ARGUMENT;
    }
    let queued_later = GROUP.with_borrow_mut(|(depth, pending)| {
        if *depth > 0 {
            pending.push(call);
        }
        *depth > 0
    });
    if queued_later {
        OK
    } else {
        launch(vec![call])
    }
}

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

fn new_comm(s: &mut State, clique: usize, rank: usize, nranks: usize, device: i32) -> ncclComm_t {
    let h = streams::new_handle();
    s.comms.insert(
        h,
        CommState {
            clique,
            rank,
            nranks,
            device,
        },
    );
    h as ncclComm_t
}

fn new_clique(s: &mut State, nranks: usize) -> usize {
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

/// Inside a group, destroying a communicator a pending call of the group uses is a report (NCCL would
/// use it after its end).
fn destroy(comm: ncclComm_t, call: &str) -> NcclResult {
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

fn with_comm(comm: ncclComm_t, f: impl FnOnce(&CommState) -> c_int, out: *mut c_int) -> NcclResult {
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
    with_comm(comm, |_| OK, e)
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
        OK
    } else {
        launch(calls)
    }
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
