//! What a kernel or memset node does, as `hipGraphKernelNodeGetParams` and `hipGraphMemsetNodeGetParams`
//! report it: kept with the node when it is added (graph_nodes.rs) or captured (kernels.rs,
//! memory_api.rs). A kernel node reports no arguments (null `kernelParams`): the shadow keeps none.

use crate::graph::{graphs, NODE_SPAN};
use crate::{Status, INVALID_VALUE, SUCCESS};
use hip_sys as sys;

/// A node's parameters, as plain values (a node lives in a `static`).
#[derive(Clone, Copy)]
pub enum NodeParams {
    Kernel {
        func: usize,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
    },
    Memset {
        dst: usize,
        element_size: u32,
        value: u32,
        width: usize,
        height: usize,
        pitch: usize,
    },
}

impl NodeParams {
    pub fn kernel(func: usize, grid: sys::dim3, block: sys::dim3, shared: u32) -> Self {
        NodeParams::Kernel {
            func,
            grid: [grid.x, grid.y, grid.z],
            block: [block.x, block.y, block.z],
            shared,
        }
    }

    pub fn memset(p: &sys::hipMemsetParams) -> Self {
        NodeParams::Memset {
            dst: p.dst as usize,
            element_size: p.elementSize,
            value: p.value,
            width: p.width,
            height: p.height,
            pitch: p.pitch,
        }
    }

    /// A captured 1-D fill of `count` elements of `size` bytes.
    pub fn fill(dst: usize, value: u32, size: usize, count: usize) -> Self {
        NodeParams::Memset {
            dst,
            element_size: size as u32,
            value,
            width: count,
            height: 1,
            pitch: 0,
        }
    }
}

/// The parameters of the node `node` names, if it has any.
fn params_of(node: sys::hipGraphNode_t) -> Option<NodeParams> {
    let (graph, idx) = (
        node as usize / NODE_SPAN,
        (node as usize % NODE_SPAN).wrapping_sub(1),
    );
    graphs(|g| g.graphs.get(&graph)?.get(idx)?.params)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphKernelNodeGetParams(
    node: sys::hipGraphNode_t,
    out: *mut sys::hipKernelNodeParams,
) -> Status {
    let (
        Some(NodeParams::Kernel {
            func,
            grid,
            block,
            shared,
        }),
        Some(out),
    ) = (params_of(node), out.as_mut())
    else {
        return INVALID_VALUE;
    };
    let dim = |d: [u32; 3]| sys::dim3 {
        x: d[0],
        y: d[1],
        z: d[2],
    };
    out.func = func as *mut std::ffi::c_void;
    out.gridDim = dim(grid);
    out.blockDim = dim(block);
    out.sharedMemBytes = shared;
    out.kernelParams = std::ptr::null_mut();
    out.extra = std::ptr::null_mut();
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemsetNodeGetParams(
    node: sys::hipGraphNode_t,
    out: *mut sys::hipMemsetParams,
) -> Status {
    let (
        Some(NodeParams::Memset {
            dst,
            element_size,
            value,
            width,
            height,
            pitch,
        }),
        Some(out),
    ) = (params_of(node), out.as_mut())
    else {
        return INVALID_VALUE;
    };
    *out = sys::hipMemsetParams {
        dst: dst as *mut std::ffi::c_void,
        elementSize: element_size,
        height,
        pitch,
        value,
        width,
    };
    SUCCESS
}
