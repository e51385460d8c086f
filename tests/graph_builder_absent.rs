//! Graphs built node by node on a machine without a device: each call answers the runtime's own error,
//! naming the call (the builder's refusals before HIP are unit tests in hip/src/graph_builder/tests.rs).
use hip::result::graph_build as raw;
use hip::result::graph_query as query;
use hip::Device;

/// A host node's function, never run (no node is ever added).
unsafe extern "C" fn never(_: *mut std::ffi::c_void) {}

#[test]
fn graph_calls_name_themselves_without_a_device() {
    if Device::count().is_ok() {
        return; // a device (or the shadow runtime): tests/gpu_graph_builder.rs, tests/shadow_graph_builder.rs
    }
    let err = raw::graph_create().unwrap_err();
    assert!(err.to_string().contains("hipGraphCreate"), "{err}");
    use std::ptr::{null, null_mut as nul};
    // SAFETY: no device exists, so the runtime answers before it looks at the (null) graph; a runtime
    // that looks first refuses a null graph as an invalid value.
    let answers = unsafe {
        [
            (
                raw::add_empty_node(nul(), &[]).err(),
                "hipGraphAddEmptyNode",
            ),
            (
                raw::add_memset_node(nul(), &[], &std::mem::zeroed()).err(),
                "hipGraphAddMemsetNode",
            ),
            (
                raw::add_memcpy_node_1d(
                    nul(),
                    &[],
                    nul(),
                    null(),
                    0,
                    hip::sys::hipMemcpyHostToDevice,
                )
                .err(),
                "hipGraphAddMemcpyNode1D",
            ),
            (
                raw::add_memcpy_node(nul(), &[], &Default::default()).err(),
                "hipGraphAddMemcpyNode",
            ),
            (
                raw::add_child_graph_node(nul(), &[], nul()).err(),
                "hipGraphAddChildGraphNode",
            ),
            (
                raw::add_kernel_node(nul(), &[], &std::mem::zeroed()).err(),
                "hipGraphAddKernelNode",
            ),
            (
                raw::add_host_node(nul(), &[], never, nul()).err(),
                "hipGraphAddHostNode",
            ),
            (
                raw::add_event_record_node(nul(), &[], nul()).err(),
                "hipGraphAddEventRecordNode",
            ),
            (
                raw::add_event_wait_node(nul(), &[], nul()).err(),
                "hipGraphAddEventWaitNode",
            ),
            (
                raw::exec_kernel_node_set_params(nul(), nul(), &std::mem::zeroed()).err(),
                "hipGraphExecKernelNodeSetParams",
            ),
            (
                raw::exec_memset_node_set_params(nul(), nul(), &std::mem::zeroed()).err(),
                "hipGraphExecMemsetNodeSetParams",
            ),
            (
                raw::exec_memcpy_node_set_params_1d(
                    nul(),
                    nul(),
                    nul(),
                    null(),
                    0,
                    hip::sys::hipMemcpyHostToDevice,
                )
                .err(),
                "hipGraphExecMemcpyNodeSetParams1D",
            ),
            (
                raw::exec_memcpy_node_set_params(nul(), nul(), &Default::default()).err(),
                "hipGraphExecMemcpyNodeSetParams",
            ),
            (
                raw::exec_child_graph_node_set_params(nul(), nul(), nul()).err(),
                "hipGraphExecChildGraphNodeSetParams",
            ),
            (query::graph_edges(nul()).err(), "hipGraphGetEdges"),
            (query::graph_root_nodes(nul()).err(), "hipGraphGetRootNodes"),
            (
                query::graph_destroy_node(nul()).err(),
                "hipGraphDestroyNode",
            ),
            (query::graph_clone(nul()).err(), "hipGraphClone"),
            (
                query::kernel_node_params(nul()).err(),
                "hipGraphKernelNodeGetParams",
            ),
            (
                query::memset_node_params(nul()).err(),
                "hipGraphMemsetNodeGetParams",
            ),
            (
                query::child_graph_of(nul()).err(),
                "hipGraphChildGraphNodeGetGraph",
            ),
        ]
    };
    for (err, call) in answers {
        let err = err.unwrap_or_else(|| panic!("{call} succeeded without a device"));
        assert!(err.to_string().contains(call), "{err}");
        let name = err.hip_code().and_then(|c| c.name());
        assert!(
            matches!(
                name,
                Some("hipErrorInvalidDevice" | "hipErrorNoDevice" | "hipErrorInvalidValue")
            ),
            "{call}: {err}"
        );
        eprintln!("{call}: {name:?}");
    }
}

/// `hipStreamGetCaptureInfo` of the null stream without a device: the runtime's error, naming the call.
#[test]
fn capture_info_names_itself_without_a_device() {
    if Device::count().is_ok() {
        return; // a device (or the shadow runtime): tests/gpu_graphs.rs, tests/shadow_graph_builder.rs
    }
    // SAFETY: the null stream; no device exists, so the runtime answers before any stream is used.
    let r = unsafe { hip::result::graph::stream_get_capture_info(std::ptr::null_mut()) };
    let err = r.map(|(s, id)| (s as u64, id)).unwrap_err();
    assert!(err.to_string().contains("hipStreamGetCaptureInfo"), "{err}");
    let name = err.hip_code().and_then(|c| c.name());
    // Measured: HIP 5.2.3 answers hipErrorInvalidDevice, 5.7.1, 6.4.3 and 7.2.4 hipErrorNoDevice.
    // The runtime's version, not the headers': a dynamic-loading build runs against newer libraries.
    let version = hip::runtime_version().unwrap();
    let want = if version / 100_000 == 502 {
        "hipErrorInvalidDevice"
    } else {
        "hipErrorNoDevice"
    };
    assert_eq!(name, Some(want), "HIP {version}: {err}");
}
