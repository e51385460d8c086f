//! Editing graphs: topology queries, node removal, edges added and removed, clones and host copy nodes
//! moved to other host buffers, run on the GPU (tests/gpu_graph_edits.rs) and under the shadow runtime
//! (tests/shadow_graph_edits.rs, which also asserts no race is reported).

use hip::prelude::*;
use hip::{Error, Event, GraphBuilder, GraphNodeKind as K, GraphPinnedBuffer};
use std::sync::Arc;

pub const N: usize = 1 << 16;

fn refused(err: Error, says: &str) {
    match &err {
        Error::InvalidArgument { .. } => assert!(err.to_string().contains(says), "{err}"),
        other => panic!("expected a refusal saying {says:?}, got {other:?}"),
    }
}

/// Every element of `v` is `want`; else the first that is not, named (not the whole vector).
fn assert_all(v: &[u32], want: u32, context: &str) {
    if let Some(i) = v.iter().position(|&x| x != want) {
        panic!(
            "{context}: element {i} of {} is {}, not {want}",
            v.len(),
            v[i]
        );
    }
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

/// fill -> (copy || host) -> join -> (child graph, event record): every kind, edges and root named;
/// a clone has the same shape with nodes of its own; a capture's graph is listed too. The built graph
/// then runs: its copy and its child's copy give the fill's value.
pub fn topology_names_every_node_edge_and_root(d: &Device) {
    let mut x = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut z = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut child = GraphBuilder::new(d).unwrap();
    child.copy(&[], &mut z, &y).unwrap();
    let child = child.build().unwrap();
    let mut b = GraphBuilder::new(d).unwrap();
    let fill = b.memset(&[], &mut x, 5u32).unwrap();
    let copy = b.copy(&[fill], &mut y, &x).unwrap();
    let (host, runs) = b.host(&[fill], || {}).unwrap();
    let join = b.empty(&[copy, host]).unwrap();
    let sub = b.child(&[join], &child).unwrap();
    let done = Arc::new(Event::new(d).unwrap());
    let rec = b.record_event(&[join], &done).unwrap();
    let graph = b.build().unwrap();

    let t = graph.topology().unwrap();
    assert_eq!(t.len(), 6);
    let at = |n| {
        t.position(&n)
            .expect("a built node is in its graph's topology")
    };
    let want = [
        (fill, K::Memset),
        (copy, K::Memcpy),
        (host, K::Host),
        (join, K::Empty),
        (sub, K::ChildGraph),
        (rec, K::EventRecord),
    ];
    for (node, kind) in want {
        assert_eq!(t.kinds()[at(node)], kind, "node {}", node.index());
        assert_eq!(t.count(kind), 1, "{kind:?}");
    }
    assert_eq!(t.count(K::Kernel), 0);
    assert_eq!(t.roots(), &[at(fill)]);
    let edges = sorted(vec![
        (at(fill), at(copy)),
        (at(fill), at(host)),
        (at(copy), at(join)),
        (at(host), at(join)),
        (at(join), at(sub)),
        (at(join), at(rec)),
    ]);
    assert_eq!(t.edges(), edges.as_slice());
    assert_eq!(t.dependencies(at(join)), sorted(vec![at(copy), at(host)]));
    assert_eq!(t.dependencies(at(fill)), Vec::<usize>::new());

    // A clone: the same kinds, as many edges and one root, none of them the builder's nodes.
    let copy_of = graph.try_clone().unwrap();
    let c = copy_of.topology().unwrap();
    assert_eq!(sorted(c.kinds().to_vec()), sorted(t.kinds().to_vec()));
    assert_eq!((c.edges().len(), c.roots().len()), (6, 1));
    assert_eq!(c.kinds()[c.roots()[0]], K::Memset);
    assert_eq!(c.position(&fill), None, "a clone's nodes are its own");
    assert_eq!(copy_of.tracked_allocations(), graph.tracked_allocations());

    // A capture's graph: a fill then a copy, one edge.
    let s = Stream::non_blocking(d).unwrap();
    let mut w = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let capture = s.begin_capture(CaptureMode::ThreadLocal).unwrap();
    capture.stream().fill_async(&mut w, 1).unwrap();
    capture.stream().copy_device_async(&w, &mut x).unwrap();
    let captured = capture.end().unwrap();
    let k = captured.topology().unwrap();
    assert_eq!(k.len(), 2);
    let (f, cp) = (k.roots()[0], k.edges()[0].1);
    assert_eq!((k.kinds()[f], k.kinds()[cp]), (K::Memset, K::Memcpy));
    assert_eq!(k.edges(), &[(f, cp)]);
    assert_eq!(k.position(&fill), None);

    // The built graph runs as its topology says.
    let mut exec = graph.instantiate().unwrap();
    exec.launch(&s).unwrap();
    assert_eq!(z.to_vec().unwrap(), vec![5; N]);
    done.synchronize().unwrap();
    assert_eq!(runs.runs(), 1);
}

/// A removed node neither runs nor orders the graph's launches by what it used; its handle is refused
/// afterwards as a dependency, for removal and in node updates.
pub fn a_removed_node_neither_runs_nor_orders(d: &Device, other: &Stream) {
    let a = Stream::non_blocking(d).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut w = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    a.fill_async(&mut x, 3).unwrap();
    let mut b = GraphBuilder::new(d).unwrap();
    let stray = b.memset(&[], &mut w, 7u32).unwrap();
    let copy = b.copy(&[stray], &mut y, &x).unwrap();
    assert_eq!(b.len(), 2);
    b.remove(stray).unwrap();
    assert_eq!(b.len(), 1);
    refused(
        b.remove(stray).unwrap_err(),
        "node 0 removed from this builder",
    );
    refused(
        b.empty(&[stray]).unwrap_err(),
        "node 0 removed from this builder",
    );
    let graph = b.build().unwrap();
    assert_eq!(graph.node_count().unwrap(), 1);
    assert_eq!(graph.tracked_allocations(), 2, "x and y, no longer w");
    let t = graph.topology().unwrap();
    assert_eq!(t.position(&stray), None);
    assert_eq!(t.roots(), &[t.position(&copy).unwrap()]);
    assert!(t.edges().is_empty(), "the removed node's edge went with it");

    let mut exec = graph.instantiate().unwrap();
    other.fill_async(&mut w, 9).unwrap(); // w is not the graph's: nothing orders the two
    exec.launch(&a).unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![3; N]);
    assert_eq!(
        w.to_vec().unwrap(),
        vec![9; N],
        "the removed fill never ran"
    );
    refused(
        exec.set_memset_node_params(&graph, stray, &mut w, 1u32)
            .unwrap_err(),
        "removed",
    );
    // The node that stayed still updates.
    let mut y2 = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    exec.set_copy_node_params(&graph, copy, &mut y2, &x)
        .unwrap();
    exec.launch(&a).unwrap();
    assert_eq!(y2.to_vec().unwrap(), vec![3; N]);
}

/// A clone keeps what its original kept and runs after the original is gone; node updates through
/// the builder's nodes are refused on it (they name the original's nodes), whole-graph updates work.
pub fn a_clone_outlives_its_original(d: &Device, other: &Stream) {
    let s = Stream::non_blocking(d).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut b = GraphBuilder::new(d).unwrap();
    let fill = b.memset(&[], &mut x, 11u32).unwrap();
    b.copy(&[fill], &mut y, &x).unwrap();
    let graph = b.build().unwrap();
    let clone = graph.try_clone().unwrap();
    drop(graph);
    let mut exec = clone.instantiate().unwrap();
    exec.launch(&s).unwrap();
    // Another stream reads what the clone's launch wrote: ordered after it by the memory model.
    let mut out = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    other.copy_device_async(&y, &mut out).unwrap();
    assert_eq!(out.to_vec().unwrap(), vec![11; N]);
    refused(
        exec.set_memset_node_params(&clone, fill, &mut x, 1u32)
            .unwrap_err(),
        "one GraphBuilder",
    );
    let again = clone.try_clone().unwrap();
    exec.update(&again).unwrap();
    exec.launch(&s).unwrap();
    other.fill_async(&mut y, 0).unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![0; N]);
}

/// Host copy nodes updated to other `GraphPinnedBuffer`s: the next launch uploads the new input and
/// downloads into the new output (the old ones untouched), the new buffers' host borrows are checked
/// against launches, another stream's read of the device buffer is ordered after the launch, and
/// mismatched lengths and device memory where host memory goes are refused before HIP.
pub fn host_copy_nodes_move_to_other_host_buffers(d: &Device, other: &Stream) {
    let s = Stream::non_blocking(d).unwrap();
    let (in1, in2) = (
        GraphPinnedBuffer::from_slice(d, &vec![1u32; N]).unwrap(),
        GraphPinnedBuffer::from_slice(d, &vec![2u32; N]).unwrap(),
    );
    let (out1, out2) = (
        GraphPinnedBuffer::<u32>::zeroed(d, N).unwrap(),
        GraphPinnedBuffer::<u32>::zeroed(d, N).unwrap(),
    );
    let mut x = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut b = GraphBuilder::new(d).unwrap();
    let up = b.copy_from_host(&[], &mut x, &in1).unwrap();
    let down = b.copy_to_host(&[up], &out1, &x).unwrap();
    let graph = b.build().unwrap();
    let mut exec = graph.instantiate().unwrap();
    exec.launch(&s).unwrap();
    assert_eq!(*out1.borrow().unwrap(), vec![1; N]);

    let short = GraphPinnedBuffer::<u32>::zeroed(d, N - 1).unwrap();
    for (err, what) in [
        (
            exec.set_copy_from_host_node_params(&graph, up, &mut x, &short)
                .unwrap_err(),
            "graph copy node from the host, update",
        ),
        (
            exec.set_copy_to_host_node_params(&graph, down, &short, &x)
                .unwrap_err(),
            "graph copy node to the host, update",
        ),
    ] {
        assert!(
            matches!(err, Error::LengthMismatch { what: w, expected, actual }
                if w == what && expected.min(actual) == N - 1 && expected.max(actual) == N),
            "{err:?}"
        );
    }
    exec.set_copy_from_host_node_params(&graph, up, &mut x, &in2)
        .unwrap();
    exec.set_copy_to_host_node_params(&graph, down, &out2, &x)
        .unwrap();
    {
        // The new input's mutable borrow holds launches off, as the builder's buffers' do.
        let mut held = in2.borrow_mut().unwrap();
        held[0] = 3;
        refused(exec.launch(&s).unwrap_err(), "borrow");
    }
    exec.launch(&s).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    other.copy_device_async(&x, &mut y).unwrap(); // after the launch's upload
    let mut want = vec![2; N];
    want[0] = 3;
    assert_eq!(*out2.borrow().unwrap(), want);
    assert_eq!(y.to_vec().unwrap(), want);
    assert_eq!(
        *out1.borrow().unwrap(),
        vec![1; N],
        "the old output is no longer written"
    );
}

/// An edge added from a node added later to one added earlier orders them (the copy reads what the
/// fill wrote); the reverse edge is refused as a cycle; a removed edge is gone from the topology. Returns
/// the graph whose edge was removed (its fill and copy no longer ordered) and the copy's destination.
pub fn edges_added_after_the_fact_order_their_nodes(
    d: &Device,
    s: &Stream,
) -> (hip::Graph, DeviceBuffer<u32>) {
    let mut x = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut b = GraphBuilder::new(d).unwrap();
    let copy = b.copy(&[], &mut y, &x).unwrap(); // node 0, no dependency yet
    let fill = b.memset(&[], &mut x, 6u32).unwrap(); // node 1
    b.add_dependency(fill, copy).unwrap();
    let err = b.add_dependency(copy, fill).unwrap_err();
    assert!(err.to_string().contains("cycle"), "{err}");
    refused(b.add_dependency(fill, copy).unwrap_err(), "already");
    let graph = b.build().unwrap();
    let t = graph.topology().unwrap();
    let (f, c) = (t.position(&fill).unwrap(), t.position(&copy).unwrap());
    assert_eq!((t.edges(), t.roots()), (&[(f, c)][..], &[f][..]));
    let mut exec = graph.instantiate().unwrap();
    exec.launch(s).unwrap();
    assert_eq!(
        y.to_vec().unwrap(),
        vec![6; N],
        "the copy ran after the fill"
    );

    let mut x2 = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut y2 = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut b = GraphBuilder::new(d).unwrap();
    let fill = b.memset(&[], &mut x2, 7u32).unwrap();
    let copy = b.copy(&[fill], &mut y2, &x2).unwrap();
    refused(b.remove_dependency(copy, fill).unwrap_err(), "no such edge");
    b.remove_dependency(fill, copy).unwrap();
    let unordered = b.build().unwrap();
    let t = unordered.topology().unwrap();
    assert!(t.edges().is_empty() && t.roots().len() == 2, "{t:?}");
    (unordered, y2)
}

/// Event nodes inside a child graph bind at each launch of the parent, as its own do: the child waits
/// for an event recorded on another stream after a 2 ms host function (which no buffer orders), records
/// a timing event before and after its host node, and the parent's host node after the child sees the
/// round the child saw. An update to another such child replays the new one.
pub fn event_nodes_inside_a_child_graph_bind_at_each_launch(d: &Device) {
    use std::sync::atomic::{AtomicU32, Ordering};
    let (a, b) = (
        Stream::non_blocking(d).unwrap(),
        Stream::non_blocking(d).unwrap(),
    );
    let ready = Arc::new(Event::new(d).unwrap());
    let (start, done) = (
        Arc::new(Event::with_timing(d).unwrap()),
        Arc::new(Event::with_timing(d).unwrap()),
    );
    let produced = Arc::new(AtomicU32::new(0));
    let seen = Arc::new(AtomicU32::new(0));
    let after = Arc::new(AtomicU32::new(0));
    // wait(ready) -> record(start) -> host: seen = produced (+ offset) -> record(done)
    let child = |offset: u32| {
        let mut c = GraphBuilder::new(d).unwrap();
        let wait = c.wait_event(&[], &ready).unwrap();
        let first = c.record_event(&[wait], &start).unwrap();
        let (p, s) = (produced.clone(), seen.clone());
        let (consume, _) = c
            .host(&[first], move || {
                s.store(p.load(Ordering::SeqCst) + offset, Ordering::SeqCst)
            })
            .unwrap();
        c.record_event(&[consume], &done).unwrap();
        c.build().unwrap()
    };
    let mut g = GraphBuilder::new(d).unwrap();
    let sub = g.child(&[], &child(0)).unwrap();
    let (s, t) = (seen.clone(), after.clone());
    g.host(&[sub], move || {
        t.store(s.load(Ordering::SeqCst), Ordering::SeqCst)
    })
    .unwrap();
    let graph = g.build().unwrap();
    let mut exec = graph.instantiate().unwrap();
    let newer = child(1000);
    for round in 1..=4u32 {
        if round == 3 {
            exec.set_child_graph_node_params(&graph, sub, &newer)
                .unwrap();
        }
        let p = produced.clone();
        a.launch_host_fn(move || {
            std::thread::sleep(std::time::Duration::from_millis(2));
            p.store(round, Ordering::SeqCst);
        })
        .unwrap();
        ready.record(&a).unwrap();
        exec.launch(&b).unwrap();
        b.synchronize().unwrap();
        let want = if round >= 3 { round + 1000 } else { round };
        assert_eq!(seen.load(Ordering::SeqCst), want, "round {round}");
        assert_eq!(after.load(Ordering::SeqCst), want, "round {round}");
        assert!(
            done.query().unwrap(),
            "round {round}: the child's record node ran"
        );
        assert!(start.elapsed_ms(&done).unwrap() >= 0.0, "round {round}");
    }
}

/// A memset node of pinned host memory (`GraphBuilder::memset_host`): each launch sets every element,
/// a copy node after it uploads the value set (ordered by the edge), the host's borrow waits for the
/// launch and a held borrow refuses the next launch; elements of 8 bytes are refused before HIP.
pub fn a_memset_node_sets_host_memory(d: &Device, other: &Stream) {
    let s = Stream::non_blocking(d).unwrap();
    let flags = GraphPinnedBuffer::from_slice(d, &vec![1u32; N]).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut b = GraphBuilder::new(d).unwrap();
    let set = b.memset_host(&[], &flags, 7u32).unwrap();
    b.copy_from_host(&[set], &mut x, &flags).unwrap();
    let wide = GraphPinnedBuffer::<u64>::zeroed(d, 4).unwrap();
    refused(b.memset_host(&[], &wide, 1u64).unwrap_err(), "8 bytes");
    let mut exec = b.build().unwrap().instantiate().unwrap();
    for round in 0..3u32 {
        exec.launch(&s).unwrap();
        assert_all(&flags.borrow().unwrap(), 7, &format!("round {round}, host"));
        let mut y = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
        other.copy_device_async(&x, &mut y).unwrap(); // after the launch's upload
        assert_all(&y.to_vec().unwrap(), 7, &format!("round {round}, uploaded"));
        flags.borrow_mut().unwrap().fill(round);
    }
    let held = flags.borrow().unwrap();
    refused(exec.launch(&s).unwrap_err(), "borrow");
    assert_all(&held, 2, "after the refused launch");
}

/// A kernel `consume(const unsigned* x, unsigned* y, unsigned n)` (`y[i] = x[i]` for `i < n`), for
/// [`node_queries_report_what_each_node_does`].
pub const CONSUME: &str = r#"
extern "C" __global__ void consume(const unsigned int* x, unsigned int* y, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
"#;

/// `Graph::kernel_node_config` and `memset_node_params` of built and of captured nodes (`consume`:
/// [`CONSUME`]): the configuration and the destination, width and value given, a node of the other
/// kind and a node past the end refused, naming what they are; an executable graph's node update
/// leaves the graph's node as it was.
pub fn node_queries_report_what_each_node_does(d: &Device, consume: &hip::Function) {
    use hip::prelude::LaunchArgs;
    let mut x = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let n = N as u32;
    let config = LaunchConfig {
        grid: (n / 256, 2).into(),
        block: (128, 2).into(),
        shared_mem_bytes: 64,
    };
    let mut b = GraphBuilder::new(d).unwrap();
    let fill = b.memset(&[], &mut x, 0xabcd_1234u32).unwrap();
    // SAFETY: consume reads x[..n] and writes y[..n] (the grid's y copies write the same values).
    let kernel = unsafe {
        b.kernel(
            &[fill],
            consume,
            &config,
            LaunchArgs::new().arg(&x).arg_mut(&mut y).arg(&n),
        )
    }
    .unwrap();
    // A child graph: a fill of z, then a copy of z into w.
    let mut z = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut w = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut c = GraphBuilder::new(d).unwrap();
    let cf = c.memset(&[], &mut z, 3u32).unwrap();
    c.copy(&[cf], &mut w, &z).unwrap();
    let sub = b.child(&[kernel], &c.build().unwrap()).unwrap();
    let graph = b.build().unwrap();
    let t = graph.topology().unwrap();
    let (f, k) = (t.position(&fill).unwrap(), t.position(&kernel).unwrap());
    let inner = graph
        .child_graph_topology(t.position(&sub).unwrap())
        .unwrap();
    assert_eq!(inner.len(), 2);
    assert_eq!((inner.count(K::Memset), inner.count(K::Memcpy)), (1, 1));
    let (m, cp) = (
        inner.kinds().iter().position(|&x| x == K::Memset).unwrap(),
        inner.kinds().iter().position(|&x| x == K::Memcpy).unwrap(),
    );
    assert_eq!((inner.edges(), inner.roots()), (&[(m, cp)][..], &[m][..]));
    refused(graph.child_graph_topology(k).unwrap_err(), "Kernel node");
    let want = hip::MemsetNodeParams {
        address: x.device_ptr() as usize,
        element_size: 4,
        value: 0xabcd_1234,
        width: N,
        height: 1,
        pitch: 0,
    };
    let got = graph.memset_node_params(f).unwrap();
    assert!(got.pitch == 0 || got.pitch == N * 4, "{got:?}");
    assert_eq!(hip::MemsetNodeParams { pitch: 0, ..got }, want);
    assert_eq!(graph.kernel_node_config(k).unwrap(), config);
    refused(graph.memset_node_params(k).unwrap_err(), "Kernel node");
    refused(graph.kernel_node_config(f).unwrap_err(), "Memset node");
    refused(graph.kernel_node_config(t.len()).unwrap_err(), "3 nodes");

    let mut exec = graph.instantiate().unwrap();
    let other = LaunchConfig::for_num_elems(n);
    // SAFETY: as above, with one thread per element.
    unsafe {
        exec.set_kernel_node_params(
            &graph,
            kernel,
            consume,
            &other,
            LaunchArgs::new().arg(&x).arg_mut(&mut y).arg(&n),
        )
    }
    .unwrap();
    assert_eq!(
        graph.kernel_node_config(k).unwrap(),
        config,
        "the graph's node as built"
    );

    let s = Stream::non_blocking(d).unwrap();
    let capture = s.begin_capture(hip::CaptureMode::ThreadLocal).unwrap();
    capture.stream().fill_async(&mut y, 5u32).unwrap();
    // SAFETY: as above.
    unsafe {
        consume.launch(
            capture.stream(),
            &config,
            LaunchArgs::new().arg(&y).arg_mut(&mut x).arg(&n),
        )
    }
    .unwrap();
    let captured = capture.end().unwrap();
    let t = captured.topology().unwrap();
    let at = |kind| t.kinds().iter().position(|&x| x == kind).unwrap();
    let got = captured.memset_node_params(at(K::Memset)).unwrap();
    assert_eq!(
        (
            got.address,
            got.element_size,
            got.value,
            got.width,
            got.height
        ),
        (y.device_ptr() as usize, 4, 5, N, 1)
    );
    assert_eq!(captured.kernel_node_config(at(K::Kernel)).unwrap(), config);
}

/// hip-tests: hipGraphExecUpdate negative (a node's type changed): the new graph's second node is a copy
/// where the instantiated one had a memset. The refusal is `Error::GraphUpdate` naming the update result
/// and the new graph's node it failed at (as fields and in its message), and the executable graph still
/// replays its old nodes.
pub fn a_refused_update_names_the_node_it_failed_at(d: &Device) {
    let s = Stream::new(d).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let w = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let mut g = GraphBuilder::new(d).unwrap();
    let first = g.memset(&[], &mut x, 3).unwrap();
    g.memset(&[first], &mut y, 4).unwrap();
    let mut exec = g.build().unwrap().instantiate().unwrap();
    let mut g = GraphBuilder::new(d).unwrap();
    let first = g.memset(&[], &mut x, 5).unwrap();
    g.copy(&[first], &mut y, &w).unwrap();
    let other = g.build().unwrap();
    let e = exec.update(&other).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("update result 3")
            && text.contains("at node 1 of 2 of the new graph (a copy node)"),
        "{text}"
    );
    let Error::GraphUpdate { code, failure, .. } = &e else {
        panic!("not a graph update refusal: {e:?}");
    };
    assert_eq!(code.0, hip::sys::hipErrorGraphExecUpdateFailure.0);
    assert_eq!(failure.update_result, Some(3));
    assert_eq!(
        failure.node,
        Some(hip::FailedGraphNode {
            index: 1,
            count: 2,
            kind: "a copy node"
        })
    );
    exec.launch(&s).unwrap();
    assert_all(
        &y.to_vec().unwrap(),
        4,
        "the refused update left the old memset",
    );
}
