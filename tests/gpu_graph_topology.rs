//! A graph's topology (nodes, kinds, edges, roots), node removal and clones on a real device: the cases
//! of tests/common/graph_topology.rs, which tests/shadow_graph_topology.rs also runs under the shadow
//! runtime. Compiled only with `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use common::device;
use common::graph_topology as cases;
use hip::prelude::*;

#[test]
fn topology_names_every_node_edge_and_root() {
    cases::topology_names_every_node_edge_and_root(&device());
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
