//! What a kernel or memset node does, as `hipGraphKernelNodeGetParams` and `hipGraphMemsetNodeGetParams`
//! report it (graph_query.rs): kept with the node when it is added (graph_nodes.rs) or captured
//! (kernels.rs, memory_api.rs). A kernel node reports no arguments (null `kernelParams`): the shadow
//! keeps none.

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
