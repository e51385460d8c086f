//! Editing graphs on a real device: topology (nodes, kinds, edges, roots), node removal, edges added and
//! removed, clones and host
//! copy nodes moved to other host buffers: the cases
//! of tests/common/graph_edits.rs, which tests/shadow_graph_edits.rs also runs under the shadow
//! runtime. Compiled only with `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use common::device;
use common::graph_edits as cases;
use hip::prelude::*;

#[test]
fn a_refused_update_names_the_node_it_failed_at() {
    cases::a_refused_update_names_the_node_it_failed_at(&device());
}

#[test]
fn topology_names_every_node_edge_and_root() {
    cases::topology_names_every_node_edge_and_root(&device());
}

#[test]
fn event_nodes_inside_a_child_graph_bind_at_each_launch() {
    cases::event_nodes_inside_a_child_graph_bind_at_each_launch(&device());
}

#[test]
fn a_memset_node_sets_host_memory() {
    let d = device();
    cases::a_memset_node_sets_host_memory(&d, &Stream::non_blocking(&d).unwrap());
}

#[test]
fn node_queries_report_what_each_node_does() {
    let d = device();
    let module = common::load(&d, cases::CONSUME);
    cases::node_queries_report_what_each_node_does(&d, &module.function("consume").unwrap());
}

#[test]
fn a_removed_node_neither_runs_nor_orders() {
    let d = device();
    cases::a_removed_node_neither_runs_nor_orders(&d, &Stream::non_blocking(&d).unwrap());
}

#[test]
fn a_clone_outlives_its_original() {
    let d = device();
    cases::a_clone_outlives_its_original(&d, &Stream::non_blocking(&d).unwrap());
}

#[test]
fn host_copy_nodes_move_to_other_host_buffers() {
    let d = device();
    cases::host_copy_nodes_move_to_other_host_buffers(&d, &Stream::non_blocking(&d).unwrap());
}

#[test]
fn edges_added_after_the_fact_order_their_nodes() {
    let d = device();
    // The graph whose edge was removed is not launched: its fill and copy would race.
    let _ =
        cases::edges_added_after_the_fact_order_their_nodes(&d, &Stream::non_blocking(&d).unwrap());
}
