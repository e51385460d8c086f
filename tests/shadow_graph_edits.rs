//! Editing graphs (topology, node removal, edges, clones, host copy nodes moved to other host buffers) under
//! the shadow HIP runtime (scripts/shadow.sh): the
//! cases of tests/common/graph_edits.rs with no race reported, and the overlap a removal gives back:
//! the removed node's buffer, written on another stream, costs the graph's launch no wait (were the
//! node still replayed, the shadow would report the two unordered writes).
#![cfg(feature = "shadow")]

mod common;
mod shadow;

use common::graph_edits as cases;
use hip::prelude::*;
use hip::GraphBuilder;
use shadow::{assert_no_reports, report_text, reports, reset, waits};

#[test]
fn a_refused_update_names_the_node_it_failed_at() {
    cases::a_refused_update_names_the_node_it_failed_at(&Device::get(0).unwrap());
    assert_no_reports();
}

#[test]
fn topology_names_every_node_edge_and_root() {
    cases::topology_names_every_node_edge_and_root(&Device::get(0).unwrap());
    assert_no_reports();
}

#[test]
fn event_nodes_inside_a_child_graph_bind_at_each_launch() {
    cases::event_nodes_inside_a_child_graph_bind_at_each_launch(&Device::get(0).unwrap());
    assert_no_reports();
}

#[test]
fn a_memset_node_sets_host_memory() {
    let d = Device::get(0).unwrap();
    cases::a_memset_node_sets_host_memory(&d, &Stream::non_blocking(&d).unwrap());
    assert_no_reports();
}

#[test]
fn node_queries_report_what_each_node_does() {
    let d = Device::get(0).unwrap();
    let code = shadow::compile(
        cases::CONSUME,
        &[shadow::ShadowKernel("consume", b"rw\0", 100)],
    );
    let module = Module::load_data(&d, &code).unwrap();
    cases::node_queries_report_what_each_node_does(&d, &module.function("consume").unwrap());
    assert_no_reports();
}

#[test]
fn a_removed_node_neither_runs_nor_orders() {
    let d = Device::get(0).unwrap();
    cases::a_removed_node_neither_runs_nor_orders(&d, &Stream::non_blocking(&d).unwrap());
    assert_no_reports();
}

#[test]
fn a_clone_outlives_its_original() {
    let d = Device::get(0).unwrap();
    cases::a_clone_outlives_its_original(&d, &Stream::non_blocking(&d).unwrap());
    assert_no_reports();
}

#[test]
fn host_copy_nodes_move_to_other_host_buffers() {
    let d = Device::get(0).unwrap();
    cases::host_copy_nodes_move_to_other_host_buffers(&d, &Stream::non_blocking(&d).unwrap());
    assert_no_reports();
}

/// The launch waits for the other stream's write of the buffer the graph still uses, and not for its
/// write of the buffer only the removed node used.
#[test]
fn a_removal_gives_back_the_overlap() {
    let d = Device::get(0).unwrap();
    let (a, other) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let n = cases::N;
    let (mut kept, mut freed) = (
        DeviceBuffer::<u32>::zeroed(&d, n).unwrap(),
        DeviceBuffer::<u32>::zeroed(&d, n).unwrap(),
    );
    let mut b = GraphBuilder::new(&d).unwrap();
    b.memset(&[], &mut kept, 1u32).unwrap();
    let gone = b.memset(&[], &mut freed, 2u32).unwrap();
    b.remove(gone).unwrap();
    let mut exec = b.build().unwrap().instantiate().unwrap();
    // `kept`'s last writer becomes stream `a` (the zeroing on the null stream is waited for here), and
    // `freed`'s the other stream.
    a.fill_async(&mut kept, 0).unwrap();
    other.fill_async(&mut freed, 5).unwrap();
    let before = waits();
    exec.launch(&a).unwrap();
    assert_eq!(
        waits(),
        before,
        "the launch waited for a buffer it no longer uses"
    );
    other.fill_async(&mut kept, 6).unwrap(); // after the launch (the memory model orders it)
    let before = waits();
    exec.launch(&a).unwrap();
    assert_eq!(
        waits(),
        before + 1,
        "the launch must wait for the other stream's write of `kept`"
    );
    assert_eq!(kept.to_vec().unwrap(), vec![1; n]);
    assert_eq!(freed.to_vec().unwrap(), vec![5; n]);
    assert_no_reports();
}

/// The edges order the graph's nodes in the shadow's replay too: with the fill -> copy edge added from a
/// node added later, no race; with an edge removed, the replay of the two nodes it ordered is reported
/// as a race (the shadow replays a graph's nodes by their edges, not by their addition order).
#[test]
fn edges_added_after_the_fact_order_their_nodes() {
    let d = Device::get(0).unwrap();
    let s = Stream::non_blocking(&d).unwrap();
    let (unordered, y) = cases::edges_added_after_the_fact_order_their_nodes(&d, &s);
    assert_no_reports();
    let mut exec = unordered.instantiate().unwrap();
    exec.launch(&s).unwrap();
    s.synchronize().unwrap();
    let n = reports();
    let text = report_text();
    reset();
    assert!(
        n > 0,
        "the unordered fill and copy of one graph were not reported"
    );
    assert!(text.contains("graph node"), "{text}");
    drop((exec, y));
}
