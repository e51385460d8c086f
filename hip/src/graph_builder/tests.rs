//! Unit tests (no GPU): what the builder refuses before any HIP call.

use super::*;
use crate::memory::tracking::Release;
use crate::memory::{Allocation, DeviceSliceMut};

/// A builder holding no HIP graph (never handed to HIP by these tests: each refusal comes first).
fn builder(ordinal: i32) -> GraphBuilder {
    GraphBuilder {
        raw: std::ptr::null_mut(),
        id: NEXT_BUILDER.fetch_add(1, Ordering::Relaxed),
        nodes: 0,
        device: Device::for_unit_tests(ordinal),
        kept: Vec::new(),
        uses: Vec::new(),
        removed: Vec::new(),
        edges: Vec::new(),
    }
}

fn alloc(ordinal: i32) -> Arc<Allocation> {
    Allocation::new(
        std::ptr::null_mut(),
        &Device::for_unit_tests(ordinal),
        Release::Nothing,
    )
}

fn foreign_node() -> GraphNode {
    let other = builder(0);
    GraphNode {
        raw: std::ptr::null_mut(),
        builder: other.id,
        index: 3,
    }
}

fn refused_as(err: Error, what: &str, says: &str) {
    match &err {
        Error::InvalidArgument { what: w, .. } => assert_eq!(*w, what, "{err}"),
        other => panic!("{what}: {other:?}"),
    }
    assert!(err.to_string().contains(says), "{err}");
}

#[test]
fn a_node_of_another_builder_is_refused_by_every_node_kind() {
    let mut b = builder(0);
    let n = foreign_node();
    let a = alloc(0);
    let mut dst = DeviceSliceMut::<u32>::new(p(0x1000), 16, &a);
    let a2 = alloc(0);
    let src = DeviceSliceMut::<u32>::new(p(0x2000), 16, &a2);
    let says = "node 3 of another graph builder";
    refused_as(b.empty(&[n]).unwrap_err(), "graph empty node", says);
    refused_as(b.host(&[n], || {}).unwrap_err(), "graph host node", says);
    refused_as(
        b.memset(&[n], &mut dst, 1u32).unwrap_err(),
        "graph memset node",
        says,
    );
    refused_as(
        b.copy(&[n], &mut dst, &src).unwrap_err(),
        "graph copy node",
        says,
    );
    assert!(b.is_empty());
    assert!(b.uses.is_empty() && b.kept.is_empty(), "nothing recorded");
}

#[test]
fn memory_of_another_device_is_refused() {
    let mut b = builder(0);
    let a = alloc(1);
    let mut other = DeviceSliceMut::<u32>::new(p(0x1000), 16, &a);
    let a0 = alloc(0);
    let mut own = DeviceSliceMut::<u32>::new(p(0x2000), 16, &a0);
    for err in [
        b.memset(&[], &mut other, 0u32).unwrap_err(),
        b.copy(&[], &mut own, &other).unwrap_err(),
        b.copy(&[], &mut other, &own).unwrap_err(),
    ] {
        assert!(
            matches!(
                err,
                Error::DeviceMismatch {
                    stream: 0,
                    other: 1,
                    ..
                }
            ),
            "{err:?}"
        );
    }
    assert!(b.uses.is_empty());
}

#[test]
fn host_visible_memory_and_wide_elements_and_other_lengths_are_refused() {
    let mut b = builder(0);
    let pinned = Allocation::host_visible(
        std::ptr::null_mut(),
        &Device::for_unit_tests(0),
        Release::Nothing,
    );
    let mut host = DeviceSliceMut::<u32>::new(p(0x1000), 16, &pinned);
    refused_as(
        b.memset(&[], &mut host, 0u32).unwrap_err(),
        "graph memset node",
        "pinned or managed",
    );
    let a = alloc(0);
    let mut wide = DeviceSliceMut::<u64>::new(p(0x1000), 16, &a);
    refused_as(
        b.memset(&[], &mut wide, 1u64).unwrap_err(),
        "graph memset node",
        "an element of 8 bytes",
    );
    let a1 = alloc(0);
    let a2 = alloc(0);
    let mut dst = DeviceSliceMut::<u32>::new(p(0x1000), 16, &a1);
    let src = DeviceSliceMut::<u32>::new(p(0x2000), 8, &a2);
    let err = b.copy(&[], &mut dst, &src).unwrap_err();
    assert!(err.to_string().contains("graph copy node"), "{err}");
    assert!(b.uses.is_empty());
}

#[test]
fn a_child_of_another_device_is_refused() {
    let mut b = builder(0);
    let child = Graph::from_parts(
        std::ptr::null_mut(),
        Device::for_unit_tests(1),
        Vec::new(),
        Vec::new(),
        0,
        Vec::new(),
    );
    refused_as(
        b.child(&[], &child).unwrap_err(),
        "graph child node",
        "device 1",
    );
    // The child holds no HIP graph: dropping it must not destroy one.
    std::mem::forget(child);
}

fn p(addr: usize) -> crate::memory::DevicePtr {
    addr as crate::memory::DevicePtr
}

#[test]
fn removal_refuses_foreign_and_removed_nodes_before_hip() {
    let mut b = builder(0);
    refused_as(
        b.remove(foreign_node()).unwrap_err(),
        "graph node removal",
        "node 3 of another graph builder",
    );
    // A node this builder removed (as `remove` records it): refused as a dependency and for removal.
    let gone = GraphNode {
        raw: std::ptr::null_mut(),
        builder: b.id,
        index: 0,
    };
    b.nodes = 1;
    b.removed.push(0);
    assert_eq!((b.len(), b.is_empty()), (0, true));
    refused_as(
        b.remove(gone).unwrap_err(),
        "graph node removal",
        "node 0 removed from this builder",
    );
    refused_as(
        b.empty(&[gone]).unwrap_err(),
        "graph empty node",
        "node 0 removed from this builder",
    );
    let a = alloc(0);
    let mut dst = DeviceSliceMut::<u32>::new(p(0x1000), 16, &a);
    refused_as(
        b.memset(&[gone], &mut dst, 1u32).unwrap_err(),
        "graph memset node",
        "removed",
    );
    assert!(b.uses.is_empty());
}

#[test]
fn dependency_edits_refuse_self_edges_repeats_cycles_and_missing_edges_before_hip() {
    let mut b = builder(0);
    let node = |index| GraphNode {
        raw: std::ptr::null_mut(),
        builder: b.id,
        index,
    };
    let (n0, n1, n2) = (node(0), node(1), node(2));
    // 0 -> 1 -> 2, as three nodes added one after another would record it.
    b.nodes = 3;
    b.edges = vec![(0, 1), (1, 2)];
    let add = "graph dependency to add";
    refused_as(
        b.add_dependency(n1, n1).unwrap_err(),
        add,
        "node 1 -> node 1",
    );
    refused_as(
        b.add_dependency(n0, n1).unwrap_err(),
        add,
        "node 0 -> node 1",
    );
    let err = b.add_dependency(n2, n0).unwrap_err();
    assert!(err.to_string().contains("cycle"), "{err}");
    refused_as(err, add, "node 2 -> node 0");
    refused_as(
        b.add_dependency(n1, n0).unwrap_err(),
        add,
        "node 1 -> node 0",
    );
    refused_as(
        b.add_dependency(foreign_node(), n0).unwrap_err(),
        add,
        "of another graph builder",
    );
    let remove = "graph dependency to remove";
    refused_as(
        b.remove_dependency(n0, n2).unwrap_err(),
        remove,
        "node 0 -> node 2",
    );
    b.removed.push(2);
    refused_as(
        b.remove_dependency(n1, n2).unwrap_err(),
        remove,
        "node 2 removed from this builder",
    );
    assert_eq!(b.edges, vec![(0, 1), (1, 2)], "nothing changed");
}
