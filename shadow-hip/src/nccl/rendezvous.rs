//! A collective's parts meeting across the ranks' streams, the host-side reductions and copies, and
//! the queueing of a group's calls at its end.

use super::*;

/// One rank's part of a collective (or one communicator's send/recv calls of a group).
pub(crate) struct Part {
    pub(crate) calls: Vec<Call>,
    pub(crate) stream: usize,
    pub(crate) seq: u64,
    /// Its stream's clock when it was queued.
    pub(crate) queued: Clock,
    /// Its own completion: what its stream queues later is after it, the other parts' streams are not.
    pub(crate) pid: Pid,
}

#[derive(Default)]
pub(crate) struct RvState {
    pub(crate) parts: Vec<Option<Part>>,
    pub(crate) registered: usize,
    /// Per part, once its stream ran it: its description.
    pub(crate) arrived: Vec<Option<Arc<str>>>,
    pub(crate) n_arrived: usize,
    pub(crate) done: bool,
}

/// The parts of one collective (or of one group's send/recv calls of one clique) meet here.
pub(crate) struct Rendezvous {
    pub(crate) expected: usize,
    pub(crate) st: Mutex<RvState>,
    pub(crate) cv: Condvar,
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
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// A part's stream runs it: wait for every part, then (the last to come) compute and log.
pub(crate) fn arrive(rv: &Rendezvous, idx: usize, w: &Arc<str>) {
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
pub(crate) fn read(p: usize, n: usize) -> Vec<u8> {
    // SAFETY: see above; the shadow never gives memory back to the system.
    unsafe { std::slice::from_raw_parts(p as *const u8, n) }.to_vec()
}

pub(crate) fn write(p: usize, data: &[u8]) {
    // SAFETY: as `read`.
    unsafe { std::ptr::copy(data.as_ptr(), p as *mut u8, data.len()) };
}

pub(crate) trait Elem: Copy + PartialOrd {
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

pub(crate) fn reduce_as<T: Elem>(inputs: &[&[u8]], op: c_int) -> Vec<u8> {
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
pub(crate) fn reduce(inputs: &[&[u8]], dtype: c_int, op: c_int) -> Vec<u8> {
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
pub(crate) fn complete(st: &RvState) {
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
pub(crate) fn collective(calls: &[&Call]) {
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
pub(crate) fn pair(calls: &[&Call]) {
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
pub(crate) fn launch(calls: Vec<Call>) -> NcclResult {
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
pub(crate) fn live(c: &Call) -> bool {
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
pub(crate) fn push_part(
    rt: &mut Rt,
    rv: &Arc<Rendezvous>,
    idx: usize,
    calls: Vec<Call>,
    name: &str,
) -> bool {
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
    pub(crate) static GROUP: RefCell<(usize, Vec<Call>)> = const { RefCell::new((0, Vec::new())) };
}

/// Check a call and queue it now (outside a group) or at the outermost ncclGroupEnd.
#[allow(clippy::too_many_arguments)]
pub(crate) fn enqueue(
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
    check_not_busy(comm as usize, coll.name());
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
        in_progress_after(comm as usize, launch(vec![call]))
    }
}
