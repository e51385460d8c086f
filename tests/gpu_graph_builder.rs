//! Graphs built node by node (`hip::GraphBuilder`) on a real device: diamond dependencies give the host's
//! values, an updated kernel node replays with its new arguments, a child graph runs inside its parent,
//! and another stream's work on the graph's buffers is ordered after a launch stuck behind a slow kernel.
//! Ports of hip-tests catch/unit/graph cases are marked "hip-tests:". Compiled only with `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use common::device;
use common::slow::Slow;
use hip::prelude::*;
use hip::{Error, GraphBuilder};

const N: usize = 1 << 16;
const KERNELS: &str = r#"
extern "C" __global__ void add(const unsigned int* a, const unsigned int* b, unsigned int* c,
                               unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void scale(unsigned int* x, unsigned int s, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
}
"#;

fn add_node(
    g: &mut GraphBuilder,
    deps: &[hip::GraphNode],
    f: &Function,
    a: &DeviceBuffer<u32>,
    b: &DeviceBuffer<u32>,
    c: &mut DeviceBuffer<u32>,
) -> hip::GraphNode {
    let n = c.len() as u32;
    // SAFETY: add(const unsigned*, const unsigned*, unsigned*, unsigned) reads a, b and writes c, [..n).
    unsafe {
        g.kernel(
            deps,
            f,
            &LaunchConfig::for_num_elems(n),
            LaunchArgs::new().arg(a).arg(b).arg_mut(c).arg(&n),
        )
        .unwrap()
    }
}

/// hip-tests: hipGraphAddKernelNode / hipGraphAddMemsetNode / hipGraphAddMemcpyNode1D functional
/// (vector add through a graph of memsets, a kernel and copies), as a diamond:
/// memset a, memset b -> copy a to a2 || add(a, b) -> c -> join -> add(a2, c) -> d.
#[test]
fn a_diamond_gives_the_hosts_values() {
    let d = device();
    let m = common::load(&d, KERNELS);
    let add = m.function("add").unwrap();
    let stream = Stream::new(&d).unwrap();
    let mut a = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut b = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut a2 = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut c = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut g = GraphBuilder::new(&d).unwrap();
    let ma = g.memset(&[], &mut a, 3u32).unwrap();
    let mb = g.memset(&[], &mut b, 4u32).unwrap();
    let left = g.copy(&[ma], &mut a2, &a).unwrap();
    let right = add_node(&mut g, &[ma, mb], &add, &a, &b, &mut c);
    let join = g.empty(&[left, right]).unwrap();
    add_node(&mut g, &[join], &add, &a2, &c, &mut out);
    let graph = g.build().unwrap();
    assert_eq!(graph.node_count().unwrap(), 6);
    assert_eq!(graph.kernel_node_count().unwrap(), 2);
    let mut exec = graph.instantiate().unwrap();
    for _ in 0..3 {
        exec.launch(&stream).unwrap();
    }
    assert_eq!(out.to_vec().unwrap(), vec![3 + (3 + 4); N]);
}

/// hip-tests: hipGraphExecKernelNodeSetParams functional (new arguments replayed) and negatives (a node
/// of another graph).
#[test]
fn an_updated_kernel_node_replays_its_new_arguments() {
    let d = device();
    let m = common::load(&d, KERNELS);
    let scale = m.function("scale").unwrap();
    let stream = Stream::new(&d).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let n = N as u32;
    let mut g = GraphBuilder::new(&d).unwrap();
    let fill = g.memset(&[], &mut x, 5u32).unwrap();
    // SAFETY: scale(unsigned*, unsigned, unsigned) scales x[..n] in place.
    let k = unsafe {
        g.kernel(
            &[fill],
            &scale,
            &LaunchConfig::for_num_elems(n),
            LaunchArgs::new().arg_mut(&mut x).arg(&2u32).arg(&n),
        )
        .unwrap()
    };
    let graph = g.build().unwrap();
    let mut exec = graph.instantiate().unwrap();
    exec.launch(&stream).unwrap();
    assert_eq!(x.to_vec().unwrap(), vec![10; N]);
    // The kernel now scales y by 3 (after the memset of x, which stays).
    stream.fill_async(&mut y, 7).unwrap();
    // SAFETY: as above, on y.
    unsafe {
        exec.set_kernel_node_params(
            &graph,
            k,
            &scale,
            &LaunchConfig::for_num_elems(n),
            LaunchArgs::new().arg_mut(&mut y).arg(&3u32).arg(&n),
        )
        .unwrap()
    };
    exec.launch(&stream).unwrap();
    assert_eq!(x.to_vec().unwrap(), vec![5; N]);
    assert_eq!(y.to_vec().unwrap(), vec![21; N]);
    // A memset node update, and a node of another builder refused.
    exec.set_memset_node_params(&graph, fill, &mut x, 9u32)
        .unwrap();
    exec.launch(&stream).unwrap();
    assert_eq!(x.to_vec().unwrap(), vec![9; N]);
    assert_eq!(y.to_vec().unwrap(), vec![63; N]);
    let mut other = GraphBuilder::new(&d).unwrap();
    let foreign = other.empty(&[]).unwrap();
    let other = other.build().unwrap();
    // SAFETY: refused before HIP.
    let err = unsafe {
        exec.set_kernel_node_params(
            &other,
            foreign,
            &scale,
            &LaunchConfig::for_num_elems(n),
            LaunchArgs::new().arg_mut(&mut y).arg(&3u32).arg(&n),
        )
    }
    .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err:?}");
    // hip-tests negative: a kernel node update of a memset node, refused naming the node (its type is
    // asked of HIP first).
    // SAFETY: refused before the update; nothing runs.
    let err = unsafe {
        exec.set_kernel_node_params(
            &graph,
            fill,
            &scale,
            &LaunchConfig::for_num_elems(n),
            LaunchArgs::new().arg_mut(&mut y).arg(&3u32).arg(&n),
        )
    }
    .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err:?}");
    assert!(err.to_string().contains("node 0 of the graph"), "{err}");
}

/// hip-tests: hipGraphAddChildGraphNode functional (a child graph of a memset and a copy inside a
/// parent whose kernel depends on it).
#[test]
fn a_child_graph_runs_inside_its_parent() {
    let d = device();
    let m = common::load(&d, KERNELS);
    let add = m.function("add").unwrap();
    let stream = Stream::new(&d).unwrap();
    let mut a = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut b = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut c = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut child = GraphBuilder::new(&d).unwrap();
    let fill = child.memset(&[], &mut a, 11u32).unwrap();
    child.copy(&[fill], &mut b, &a).unwrap();
    let child = child.build().unwrap();
    let mut g = GraphBuilder::new(&d).unwrap();
    let sub = g.child(&[], &child).unwrap();
    drop(child); // the parent holds a copy, and keeps the child's buffers
    add_node(&mut g, &[sub], &add, &a, &b, &mut c);
    let graph = g.build().unwrap();
    assert_eq!(graph.node_count().unwrap(), 2);
    assert_eq!(graph.tracked_allocations(), 3);
    let mut exec = graph.instantiate().unwrap();
    exec.launch(&stream).unwrap();
    assert_eq!(c.to_vec().unwrap(), vec![22; N]);
    // hip-tests: hipGraphExecChildGraphNodeSetParams functional: a child of the same topology with
    // another value; the parent's kernel then adds 5 + 5.
    let mut child2 = GraphBuilder::new(&d).unwrap();
    let fill = child2.memset(&[], &mut a, 5u32).unwrap();
    child2.copy(&[fill], &mut b, &a).unwrap();
    let child2 = child2.build().unwrap();
    exec.set_child_graph_node_params(&graph, sub, &child2)
        .unwrap();
    exec.launch(&stream).unwrap();
    assert_eq!(c.to_vec().unwrap(), vec![10; N]);
    // Another topology (one node, not two): HIP refuses, naming the node; the graph still runs.
    let mut other = GraphBuilder::new(&d).unwrap();
    other.memset(&[], &mut a, 1u32).unwrap();
    let other = other.build().unwrap();
    let e = exec
        .set_child_graph_node_params(&graph, sub, &other)
        .unwrap_err();
    eprintln!("child of another topology: {e}");
    let hip::Error::GraphUpdate { failure, .. } = &e else {
        panic!("not a graph update refusal: {e:?}");
    };
    // A node update reports no update result; the node is the child graph node, first of the two.
    assert_eq!(failure.update_result, None);
    assert_eq!(
        failure.node,
        Some(hip::FailedGraphNode {
            index: 0,
            count: 2,
            kind: "a child graph node"
        })
    );
    assert!(
        e.to_string()
            .contains("at node 0 of 2 of the graph (a child graph node)"),
        "{e}"
    );
    exec.launch(&stream).unwrap();
    assert_eq!(c.to_vec().unwrap(), vec![10; N]);
}

/// Another stream's copy of a built graph's output waits for the launch, stuck behind a slow kernel on
/// the launch stream (no event of the test's own orders them: the memory model does).
#[test]
fn another_stream_is_ordered_after_a_launch_behind_a_slow_kernel() {
    let d = device();
    let slow = Slow::new(&d);
    let (s1, s2) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut g = GraphBuilder::new(&d).unwrap();
    let fill = g.memset(&[], &mut x, 0u32).unwrap();
    g.copy(&[fill], &mut y, &x).unwrap();
    let graph = g.build().unwrap();
    let mut exec = graph.instantiate().unwrap();
    let mut gate = DeviceBuffer::<f32>::zeroed(&d, 1024).unwrap();
    for round in 1..=4u32 {
        s2.fill_async(&mut y, round).unwrap(); // y is not 0 before the launch
        slow.fill(&s1, &mut gate, 1.0); // the launch queues behind it
        exec.launch(&s1).unwrap();
        s2.copy_device_async(&y, &mut out).unwrap(); // must wait for the graph's write of y
        assert_eq!(out.to_vec().unwrap(), vec![0; N], "round {round}");
    }
}

/// hip-tests: hipGraphAddEventWaitNode / hipGraphAddEventRecordNode / hipGraphAddHostNode functional.
/// A wait node holds the graph's host node and record back until a spin on another stream (work the
/// memory model does not see: it touches no memory) records the awaited event; a graph without the wait
/// runs while the spin still does (nothing serialized the user did not order). Each replay runs the host
/// closure once, after its dependency.
#[test]
fn event_nodes_order_work_the_memory_model_cannot_see_and_host_nodes_run_each_replay() {
    use common::slow::SPIN_CYCLES;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;
    let d = device();
    let slow = Slow::new(&d);
    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let ready = Arc::new(Event::new(&d).unwrap());
    let done = Arc::new(Event::new(&d).unwrap());
    let ran = Arc::new(AtomicU32::new(0));
    let mut g = GraphBuilder::new(&d).unwrap();
    let wait = g.wait_event(&[], &ready).unwrap();
    let r = ran.clone();
    let (host, runs) = g
        .host(&[wait], move || {
            r.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    g.record_event(&[host], &done).unwrap();
    let mut exec = g.build().unwrap().instantiate().unwrap();
    for round in 1..=3u32 {
        slow.spin(&a, 5 * SPIN_CYCLES); // about 100 ms
        ready.record(&a).unwrap();
        exec.launch(&b).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(
            !done.query().unwrap(),
            "round {round}: the graph ran past its wait node"
        );
        assert_eq!(ran.load(Ordering::SeqCst), round - 1, "round {round}");
        done.synchronize().unwrap();
        assert!(
            ready.query().unwrap(),
            "round {round}: done before the awaited spin"
        );
        assert_eq!(ran.load(Ordering::SeqCst), round, "round {round}");
    }
    assert_eq!((runs.runs(), runs.panics()), (3, 0));

    // Without the wait node: the graph is done while the spin on `a` still runs.
    let free_done = Arc::new(Event::new(&d).unwrap());
    let mut g = GraphBuilder::new(&d).unwrap();
    let r = ran.clone();
    let (host, _) = g
        .host(&[], move || {
            r.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    g.record_event(&[host], &free_done).unwrap();
    let mut free = g.build().unwrap().instantiate().unwrap();
    slow.spin(&a, 5 * SPIN_CYCLES);
    ready.record(&a).unwrap();
    free.launch(&b).unwrap();
    free_done.synchronize().unwrap();
    assert!(
        !ready.query().unwrap(),
        "the graph without a wait waited for the spin"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 4);
    a.synchronize().unwrap();
}

/// Timing events recorded only by a graph's record nodes give their elapsed time once the graph ran
/// (a host node between them sleeps 30 ms).
#[test]
fn events_recorded_by_graph_nodes_time_the_nodes_between_them() {
    use std::sync::Arc;
    let d = device();
    let s = Stream::new(&d).unwrap();
    let (start, end) = (
        Arc::new(Event::with_timing(&d).unwrap()),
        Arc::new(Event::with_timing(&d).unwrap()),
    );
    let mut g = GraphBuilder::new(&d).unwrap();
    let first = g.record_event(&[], &start).unwrap();
    let (nap, _) = g
        .host(&[first], || {
            std::thread::sleep(std::time::Duration::from_millis(30))
        })
        .unwrap();
    g.record_event(&[nap], &end).unwrap();
    let mut exec = g.build().unwrap().instantiate().unwrap();
    exec.launch(&s).unwrap();
    s.synchronize().unwrap();
    let ms = start.elapsed_ms(&end).unwrap();
    assert!((25.0..1000.0).contains(&ms), "{ms} ms");
}

/// A host node's panic is caught and counted; the nodes after it still run, and the graph's closures are
/// dropped once its last executable graph is dropped.
#[test]
fn a_panicking_host_node_is_counted_and_the_graph_goes_on() {
    use std::sync::Arc;
    let d = device();
    let s = Stream::new(&d).unwrap();
    let owned = Arc::new(());
    let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut g = GraphBuilder::new(&d).unwrap();
    let fill = g.memset(&[], &mut x, 7u32).unwrap();
    let o = owned.clone();
    let (boom, runs) = g
        .host(&[fill], move || {
            let _keep = &o;
            panic!("host node says no");
        })
        .unwrap();
    g.copy(&[boom], &mut y, &x).unwrap();
    let mut exec = g.build().unwrap().instantiate().unwrap();
    exec.launch(&s).unwrap();
    exec.launch(&s).unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![7; N]);
    assert_eq!((runs.runs(), runs.panics()), (2, 2));
    assert_eq!(runs.last_panic().as_deref(), Some("host node says no"));
    drop(exec);
    assert_eq!(
        common::wait_sole_owner(&owned, std::time::Duration::from_secs(5)),
        1,
        "the graph still holds its closure"
    );
}

/// Copies between the host and the device inside a graph, through `GraphPinnedBuffer`s: each replay
/// uploads what the host wrote, scales it and downloads it, behind a slow fill the launch queues after;
/// the host's borrows wait for the launches before them (a read of the output sees this replay's values,
/// a write of the input never changes what a queued replay uploads), and a launch while a borrow
/// conflicts is refused, with the graph then launching again once it is dropped.
#[test]
fn graph_copies_to_and_from_the_host_wait_for_and_refuse_the_hosts_borrows() {
    let d = device();
    let m = common::load(&d, KERNELS);
    let scale = m.function("scale").unwrap();
    let slow = Slow::new(&d);
    let (s1, s2) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let input = hip::GraphPinnedBuffer::<u32>::zeroed(&d, N).unwrap();
    let output = hip::GraphPinnedBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut g = GraphBuilder::new(&d).unwrap();
    let up = g.copy_from_host(&[], &mut x, &input).unwrap();
    let n = N as u32;
    // SAFETY: scale(unsigned*, unsigned, unsigned) scales x[..n] in place.
    let k = unsafe {
        g.kernel(
            &[up],
            &scale,
            &LaunchConfig::for_num_elems(n),
            LaunchArgs::new().arg_mut(&mut x).arg(&3u32).arg(&n),
        )
        .unwrap()
    };
    g.copy_to_host(&[k], &output, &x).unwrap();
    let mut exec = g.build().unwrap().instantiate().unwrap();
    let mut gate = DeviceBuffer::<f32>::zeroed(&d, 1024).unwrap();
    for round in 1..=6u32 {
        let s = if round % 2 == 0 { &s1 } else { &s2 };
        input.borrow_mut().unwrap().fill(round);
        slow.fill(s, &mut gate, 1.0); // the launch queues behind it
        exec.launch(s).unwrap();
        // Written while the launch still waits behind the slow fill: it waits for the upload first.
        input.borrow_mut().unwrap().fill(1000);
        let out = output.borrow().unwrap();
        assert_eq!(out[0], 3 * round, "round {round}");
        assert!(out.iter().all(|&v| v == 3 * round), "round {round}");
        let err = exec.launch(s).unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument { .. })
                && err.to_string().contains("graph writes"),
            "{err}"
        );
        drop(out);
    }
    // A host reader of the input does not hold back a graph that only reads it.
    input.borrow_mut().unwrap().fill(5);
    let reading = input.borrow().unwrap();
    exec.launch(&s1).unwrap();
    assert!(input.borrow_mut().is_err());
    drop(reading);
    assert!(output.borrow().unwrap().iter().all(|&v| v == 15));
    // The graph keeps the memory: the host's handles may go first.
    let kept = output.clone();
    drop((input, output));
    exec.launch(&s2).unwrap();
    assert!(kept.borrow().unwrap().iter().all(|&v| v == 15));
}

/// The same copies recorded by a capture (`Capture::copy_from_host` / `copy_to_host`), with the kernel
/// between them: each replay scales what the host wrote, and the host reads it after the replay.
#[test]
fn captured_copies_to_and_from_the_host_replay_the_hosts_new_values() {
    let d = device();
    let m = common::load(&d, KERNELS);
    let scale = m.function("scale").unwrap();
    let s = Stream::non_blocking(&d).unwrap();
    let input = hip::GraphPinnedBuffer::<u32>::zeroed(&d, N).unwrap();
    let output = hip::GraphPinnedBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut capture = s.begin_capture(CaptureMode::ThreadLocal).unwrap();
    capture.copy_from_host(&input, &mut x).unwrap();
    let n = N as u32;
    // SAFETY: scale(unsigned*, unsigned, unsigned) scales x[..n] in place.
    unsafe {
        capture
            .launch(
                &scale,
                &LaunchConfig::for_num_elems(n),
                LaunchArgs::new().arg_mut(&mut x).arg(&5u32).arg(&n),
            )
            .unwrap()
    };
    capture.copy_to_host(&x, &output).unwrap();
    let mut exec = capture.end().unwrap().instantiate().unwrap();
    for round in 1..=4u32 {
        input.borrow_mut().unwrap().fill(round);
        exec.launch(&s).unwrap();
        assert!(
            output.borrow().unwrap().iter().all(|&v| v == 5 * round),
            "round {round}"
        );
    }
}
