//! Stream capture and graphs: operations queued on a capturing stream are recorded as nodes (not run),
//! other streams join a capture through events recorded in it, and a launch replays the nodes on the
//! launch stream in their dependency order, each with the launch's clock joined with its dependencies'.
//! Graphs built node by node (graph_nodes.rs) add their nodes here in addition order, which is
//! topological (a dependency exists before its dependents), and replay the same way.
//! Event record and wait nodes bind to their event at each launch, as HIP's do, inside child graphs too
//! (a launch replays a child graph node's nodes in its place). Not modelled: capture of host functions.

use crate::clock::{new_pid, Clock};
use crate::state::Capture;
use crate::streams::{self, lock, rt, Action, Rt};
use crate::{Status, INVALID_HANDLE, INVALID_VALUE, SUCCESS};
use hip_sys as sys;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Clone)]
pub struct Node {
    pub(crate) deps: Vec<usize>,
    pub(crate) ty: sys::hipGraphNodeType,
    pub(crate) call: String,
    pub(crate) action: Action,
    /// An event record or wait node's event: bound at each launch (graph_nodes.rs).
    pub(crate) event: Option<EventNode>,
    /// A child graph node's copy of its child's nodes, put in its place at each launch ([`flatten`]).
    pub(crate) child: Option<Arc<Vec<Node>>>,
    /// What a kernel or memset node does, as `hipGraph*NodeGetParams` report it (graph_params.rs).
    pub(crate) params: Option<crate::graph_params::NodeParams>,
}

/// What an event node does with its event at each launch.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum EventNode {
    /// The event's record becomes this node (`hipGraphAddEventRecordNode`).
    Record(usize),
    /// The nodes after this one wait for the event's record current at the launch
    /// (`hipGraphAddEventWaitNode`).
    Wait(usize),
}

#[derive(Default)]
pub(crate) struct Graphs {
    pub(crate) graphs: HashMap<usize, Arc<Vec<Node>>>,
    /// The graph handle each queried child graph node gives (`hipGraphChildGraphNodeGetGraph`,
    /// graph_query.rs): node handle -> graph handle, owned by the node.
    pub(crate) children: HashMap<usize, usize>,
    building: HashMap<usize, Vec<Node>>,
    execs: HashMap<usize, Exec>,
}

/// An executable graph: its nodes as instantiated or updated (a node handle's index is its place), and
/// the same with each child graph node's nodes in its place ([`flatten`]), which each launch replays.
struct Exec {
    nodes: Arc<Vec<Node>>,
    flat: Arc<Vec<Node>>,
}

impl Exec {
    fn new(nodes: Arc<Vec<Node>>) -> Exec {
        let flat = Arc::new(flatten(&nodes));
        Exec { nodes, flat }
    }
}

static GRAPHS: Mutex<Option<Graphs>> = Mutex::new(None);

/// Never held while taking the runtime's lock (the order is runtime, then graphs).
pub(crate) fn graphs<R>(f: impl FnOnce(&mut Graphs) -> R) -> R {
    let mut g = GRAPHS.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Graphs::default))
}

/// Queue on `sid`, or record a node if it is capturing.
pub fn submit(rt: &mut Rt, sid: usize, call: &str, ty: sys::hipGraphNodeType, action: Action) {
    submit_with(rt, sid, call, ty, action, None)
}

/// [`submit`], a captured node reporting `params` (`hipGraph*NodeGetParams`).
pub fn submit_with(
    rt: &mut Rt,
    sid: usize,
    call: &str,
    ty: sys::hipGraphNodeType,
    action: Action,
    params: Option<crate::graph_params::NodeParams>,
) {
    if let Some(cap) = rt.streams.get_mut(&sid).and_then(|s| s.capture.as_mut()) {
        let idx = graphs(|g| {
            let nodes = g.building.entry(cap.graph).or_default();
            nodes.push(Node {
                deps: cap.frontier.clone(),
                ty,
                call: call.to_string(),
                action,
                event: None,
                child: None,
                params,
            });
            nodes.len() - 1
        });
        cap.frontier = vec![idx];
        return;
    }
    streams::push(rt, sid, call, Vec::new(), &Clock::default(), action);
}

/// Stream `sid` waits on an event recorded in a capture: it joins that capture.
pub fn join_capture(rt: &mut Rt, sid: usize, cap: &Capture) {
    let s = rt.streams.get_mut(&sid).unwrap();
    match &mut s.capture {
        Some(c) if c.graph == cap.graph => {
            for n in &cap.frontier {
                if !c.frontier.contains(n) {
                    c.frontier.push(*n);
                }
            }
        }
        _ => s.capture = Some(cap.clone()),
    }
}

thread_local! {
    static MODE: Cell<u32> = const { Cell::new(0) };
}

#[no_mangle]
pub unsafe extern "C" fn hipThreadExchangeStreamCaptureMode(mode: *mut u32) -> Status {
    if mode.is_null() {
        return INVALID_VALUE;
    }
    *mode = MODE.with(|m| m.replace(*mode));
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamBeginCapture(s: sys::hipStream_t, _mode: u32) -> Status {
    let sid = streams::key(s as usize);
    let mut g = lock();
    let rt = rt(&mut g);
    match rt.streams.get_mut(&sid) {
        Some(st) if !streams::is_null(sid) && st.capture.is_none() => {
            let graph = streams::new_handle();
            graphs(|g| g.building.insert(graph, Vec::new()));
            st.capture = Some(Capture {
                graph,
                frontier: Vec::new(),
            });
            SUCCESS
        }
        Some(_) => sys::hipErrorIllegalState,
        None => INVALID_HANDLE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamEndCapture(
    s: sys::hipStream_t,
    out: *mut sys::hipGraph_t,
) -> Status {
    let sid = streams::key(s as usize);
    let mut g = lock();
    let rt = rt(&mut g);
    let Some(cap) = rt.streams.get(&sid).and_then(|st| st.capture.clone()) else {
        return sys::hipErrorIllegalState;
    };
    for st in rt.streams.values_mut() {
        if st.capture.as_ref().is_some_and(|c| c.graph == cap.graph) {
            st.capture = None;
        }
    }
    graphs(|g| {
        let nodes = g.building.remove(&cap.graph).unwrap_or_default();
        g.graphs.insert(cap.graph, Arc::new(nodes));
    });
    if !out.is_null() {
        *out = cap.graph as sys::hipGraph_t;
    }
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamIsCapturing(
    s: sys::hipStream_t,
    status: *mut sys::hipStreamCaptureStatus,
) -> Status {
    let mut g = lock();
    let rt = rt(&mut g);
    let Some(st) = rt.streams.get(&(streams::key(s as usize))) else {
        return INVALID_HANDLE;
    };
    if !status.is_null() {
        *status = u32::from(st.capture.is_some());
    }
    SUCCESS
}

/// The capture's id is the graph it builds (unique while it lives); the shadow never invalidates one.
#[no_mangle]
pub unsafe extern "C" fn hipStreamGetCaptureInfo(
    s: sys::hipStream_t,
    status: *mut sys::hipStreamCaptureStatus,
    id: *mut std::os::raw::c_ulonglong,
) -> Status {
    let mut g = lock();
    let rt = rt(&mut g);
    let Some(st) = rt.streams.get(&(streams::key(s as usize))) else {
        return INVALID_HANDLE;
    };
    if status.is_null() {
        return INVALID_VALUE;
    }
    *status = u32::from(st.capture.is_some());
    if !id.is_null() {
        *id = st.capture.as_ref().map_or(0, |c| c.graph as u64);
    }
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphDestroy(graph: sys::hipGraph_t) -> Status {
    match graphs(|g| g.graphs.remove(&(graph as usize))) {
        Some(_) => SUCCESS,
        None => INVALID_VALUE,
    }
}

fn instantiate(exec: *mut sys::hipGraphExec_t, graph: sys::hipGraph_t) -> Status {
    if exec.is_null() {
        return INVALID_VALUE;
    }
    let Some(nodes) = graphs(|g| g.graphs.get(&(graph as usize)).cloned()) else {
        return INVALID_VALUE;
    };
    if topological(&nodes).is_none() {
        eprintln!("hip-rs shadow: hipGraphInstantiate of a graph with a cycle");
        return INVALID_VALUE;
    }
    let h = streams::new_handle();
    graphs(|g| g.execs.insert(h, Exec::new(nodes)));
    // SAFETY: checked non-null; the caller's out-parameter.
    unsafe { *exec = h as sys::hipGraphExec_t };
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphInstantiate(
    exec: *mut sys::hipGraphExec_t,
    graph: sys::hipGraph_t,
    _error_node: *mut sys::hipGraphNode_t,
    _log: *mut std::os::raw::c_char,
    _log_len: usize,
) -> Status {
    instantiate(exec, graph)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphInstantiateWithFlags(
    exec: *mut sys::hipGraphExec_t,
    graph: sys::hipGraph_t,
    _flags: u64,
) -> Status {
    instantiate(exec, graph)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecDestroy(exec: sys::hipGraphExec_t) -> Status {
    match graphs(|g| g.execs.remove(&(exec as usize))) {
        Some(_) => SUCCESS,
        None => INVALID_VALUE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecUpdate(
    exec: sys::hipGraphExec_t,
    graph: sys::hipGraph_t,
    error_node: *mut sys::hipGraphNode_t,
    result: *mut sys::hipGraphExecUpdateResult,
) -> Status {
    // As AMD's: the node counts first (topology changed, no node named), then node by node, naming
    // the new graph's first node whose type or dependencies differ.
    let outcome = graphs(|g| {
        let new = g.graphs.get(&(graph as usize))?.clone();
        let old = &g.execs.get(&(exec as usize))?.nodes;
        if old.len() != new.len() {
            return Some(Err((sys::hipGraphExecUpdateErrorTopologyChanged, None)));
        }
        let differs = old
            .iter()
            .zip(new.iter())
            .enumerate()
            .find_map(|(i, (a, b))| {
                let node = node_handle(graph as usize, i) as usize;
                if a.ty != b.ty {
                    Some((sys::hipGraphExecUpdateErrorNodeTypeChanged, Some(node)))
                } else {
                    (a.deps != b.deps)
                        .then_some((sys::hipGraphExecUpdateErrorTopologyChanged, Some(node)))
                }
            });
        if let Some(d) = differs {
            return Some(Err(d));
        }
        g.execs.insert(exec as usize, Exec::new(new));
        Some(Ok(()))
    });
    let (code, r, node) = match outcome {
        None => (INVALID_VALUE, sys::hipGraphExecUpdateError, None),
        Some(Ok(())) => (SUCCESS, sys::hipGraphExecUpdateSuccess, None),
        Some(Err((r, node))) => (sys::hipErrorGraphExecUpdateFailure, r, node),
    };
    if !error_node.is_null() {
        *error_node = node.map_or(std::ptr::null_mut(), |n| n as sys::hipGraphNode_t);
    }
    if !result.is_null() {
        *result = r;
    }
    code
}

/// An order of `nodes` in which each comes after its dependencies (addition order is one until
/// `hipGraphAddDependencies` joins a node to a later one), or None for a cycle.
pub(crate) fn topological(nodes: &[Node]) -> Option<Vec<usize>> {
    let mut waiting: Vec<usize> = nodes.iter().map(|n| n.deps.len()).collect();
    let mut ready: Vec<usize> = (0..nodes.len())
        .rev()
        .filter(|&i| waiting[i] == 0)
        .collect();
    let mut order = Vec::with_capacity(nodes.len());
    while let Some(i) = ready.pop() {
        order.push(i);
        for (j, n) in nodes.iter().enumerate().rev() {
            for _ in n.deps.iter().filter(|&&d| d == i) {
                waiting[j] -= 1;
                if waiting[j] == 0 {
                    ready.push(j);
                }
            }
        }
    }
    (order.len() == nodes.len()).then_some(order)
}

/// A node's handle is its graph's handle times this, plus its index plus one.
const NODE_SPAN: usize = 1 << 16;

/// The handle of node `idx` of `graph`.
pub(crate) fn node_handle(graph: usize, idx: usize) -> sys::hipGraphNode_t {
    (graph * NODE_SPAN + idx + 1) as sys::hipGraphNode_t
}

/// The (graph, index) a node handle names (an index past any graph's nodes for a null handle).
pub(crate) fn node_place(node: sys::hipGraphNode_t) -> (usize, usize) {
    (
        node as usize / NODE_SPAN,
        (node as usize % NODE_SPAN).wrapping_sub(1),
    )
}

/// The type a removed node keeps (`hipGraphDestroyNode`, graph_query.rs): listed nowhere, a dependency
/// of none, replayed as nothing.
pub(crate) const REMOVED: sys::hipGraphNodeType = sys::hipGraphNodeType::MAX;

/// An empty graph (`hipGraphCreate`).
pub fn create() -> usize {
    let h = streams::new_handle();
    graphs(|g| g.graphs.insert(h, Arc::new(Vec::new())));
    h
}

/// Add a node after `deps` (handles from this graph's earlier additions): its handle, or the status
/// HIP answers for an unknown graph or dependency.
pub fn add_node(
    graph: usize,
    deps: &[sys::hipGraphNode_t],
    ty: sys::hipGraphNodeType,
    call: String,
    action: Action,
    event: Option<EventNode>,
) -> Result<sys::hipGraphNode_t, Status> {
    graphs(|g| {
        let nodes = g.graphs.get_mut(&graph).ok_or(INVALID_VALUE)?;
        let mut idx = Vec::with_capacity(deps.len());
        for &d in deps {
            let (dg, di) = node_place(d);
            if dg != graph || nodes.get(di).is_none_or(|n| n.ty == REMOVED) {
                return Err(INVALID_VALUE);
            }
            idx.push(di);
        }
        let nodes = Arc::make_mut(nodes);
        nodes.push(Node {
            deps: idx,
            ty,
            call,
            action,
            event,
            child: None,
            params: None,
        });
        Ok(node_handle(graph, nodes.len() - 1))
    })
}

/// The nodes of `graph` (for a child graph node, which replays them in order within one node).
pub fn nodes_of(graph: usize) -> Option<Arc<Vec<Node>>> {
    graphs(|g| g.graphs.get(&graph).cloned())
}

/// `nodes` with each child graph node's nodes in its place, recursively, so that a child's event nodes
/// bind at each launch as the parent's own do: the child's nodes come after the child node's
/// dependencies (its roots take them), and the child node becomes an empty node after all of its nodes,
/// on which the parent's nodes that depended on it now depend. Each child node's nodes are named after
/// it ("(child node j of ...)").
pub(crate) fn flatten(nodes: &[Node]) -> Vec<Node> {
    let inner: Vec<Vec<Node>> = nodes
        .iter()
        .map(|n| n.child.as_deref().map_or_else(Vec::new, |c| flatten(c)))
        .collect();
    // Where node i's own (last) place is: after its child's nodes.
    let mut at = Vec::with_capacity(nodes.len());
    let mut next = 0;
    for kids in &inner {
        next += kids.len();
        at.push(next);
        next += 1;
    }
    let mut out = Vec::with_capacity(next);
    for (n, kids) in nodes.iter().zip(inner) {
        let start = out.len();
        let outer: Vec<usize> = n.deps.iter().map(|&d| at[d]).collect();
        for (j, k) in kids.iter().enumerate() {
            let deps = if k.deps.is_empty() {
                outer.clone()
            } else {
                k.deps.iter().map(|&d| start + d).collect()
            };
            out.push(Node {
                deps,
                call: format!("{} (child node {j} of {})", k.call, n.call),
                child: None,
                ..k.clone()
            });
        }
        let deps = if kids.is_empty() {
            outer
        } else {
            (start..start + kids.len()).collect()
        };
        out.push(Node {
            deps,
            child: None,
            ..n.clone()
        });
    }
    out
}

/// Change node `node` of `graph` (just added): a child graph node's nodes, a node's parameters.
pub fn update_node(graph: usize, node: sys::hipGraphNode_t, update: impl FnOnce(&mut Node)) {
    let (_, idx) = node_place(node);
    graphs(|g| {
        if let Some(n) = g
            .graphs
            .get_mut(&graph)
            .and_then(|nodes| Arc::make_mut(nodes).get_mut(idx))
        {
            update(n);
        }
    })
}

/// Give node `node` of executable graph `exec` a new action (`hipGraphExec*NodeSetParams`); the node
/// must be of type `ty`.
pub fn set_exec_node(
    exec: usize,
    node: sys::hipGraphNode_t,
    ty: sys::hipGraphNodeType,
    call: String,
    action: Action,
) -> Status {
    update_exec_node(exec, node, ty, |n| {
        n.call = call;
        n.action = action;
    })
}

/// Make child graph node `node` of executable graph `exec` replay `child`'s nodes
/// (`hipGraphExecChildGraphNodeSetParams`).
pub fn set_exec_child(
    exec: usize,
    node: sys::hipGraphNode_t,
    call: String,
    child: Arc<Vec<Node>>,
) -> Status {
    update_exec_node(exec, node, sys::hipGraphNodeTypeGraph, |n| {
        n.call = call;
        n.child = Some(child);
    })
}

/// Change node `node` of executable graph `exec`, which must be of type `ty`.
fn update_exec_node(
    exec: usize,
    node: sys::hipGraphNode_t,
    ty: sys::hipGraphNodeType,
    update: impl FnOnce(&mut Node),
) -> Status {
    let (_, idx) = node_place(node);
    graphs(|g| {
        let Some(e) = g.execs.get_mut(&exec) else {
            return INVALID_VALUE;
        };
        match Arc::make_mut(&mut e.nodes).get_mut(idx) {
            Some(n) if n.ty == ty => {
                update(n);
                e.flat = Arc::new(flatten(&e.nodes));
                SUCCESS
            }
            _ => INVALID_VALUE,
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphLaunch(exec: sys::hipGraphExec_t, s: sys::hipStream_t) -> Status {
    let sid = streams::key(s as usize);
    let Some(nodes) = graphs(|g| g.execs.get(&(exec as usize)).map(|e| e.flat.clone())) else {
        return INVALID_VALUE;
    };
    let mut g = lock();
    let rt = rt(&mut g);
    if !rt.streams.contains_key(&sid) {
        return INVALID_HANDLE;
    }
    let noop: Action = Arc::new(|_: &Clock, _: &Arc<str>| {});
    let (_, base) = streams::push(
        rt,
        sid,
        "hipGraphLaunch",
        Vec::new(),
        &Clock::default(),
        noop,
    );
    let Some(order) = topological(&nodes) else {
        return INVALID_VALUE;
    };
    let mut clocks: Vec<Clock> = vec![Clock::default(); nodes.len()];
    for i in order {
        let n = &nodes[i];
        let mut c = base.clone();
        for &d in &n.deps {
            c.join(&clocks[d]);
        }
        // A wait node: after the event's record current now (none: waits for nothing).
        let mut deps = Vec::new();
        if let Some(EventNode::Wait(e)) = n.event {
            if let Some(rec) = rt.events.get(&e).and_then(|ev| ev.record.as_ref()) {
                c.join(&rec.clock);
                deps.push((rec.stream, rec.seq));
            }
        }
        c.tick(new_pid());
        let what: Arc<str> = format!(
            "{} (graph node {i}, replayed by hipGraphLaunch on {})",
            n.call,
            streams::stream_name(sid)
        )
        .into();
        // A record node: a fresh timed record at each launch.
        let (action, recorded) = match n.event {
            Some(EventNode::Record(e)) => {
                let (action, time) = streams::stamp();
                (action, Some((e, time)))
            }
            _ => (n.action.clone(), None),
        };
        let seq = streams::push_with_clock(rt, sid, what, deps, c.clone(), action);
        if let Some((e, time)) = recorded {
            // The event's record is this replay's node from now on (a query, synchronize or wait binds
            // to it), as HIP's.
            if let Some(ev) = rt.events.get_mut(&e) {
                ev.captured = None;
                ev.record = Some(crate::state::Record {
                    stream: sid,
                    seq,
                    clock: c.clone(),
                    time,
                });
            }
        }
        clocks[i] = c;
    }
    SUCCESS
}
