//! Node updates of an executable graph made from a built graph (`hipGraphExec*NodeSetParams`).

use super::{device_of_memory, kernel_params, memset_params, not_host_visible, GraphNode};
use crate::error::{Error, Result};
use crate::graph::{merge_uses, ExecParts, Graph, GraphExec};
use crate::launch::{node::check_node_launch, LaunchArgs, LaunchConfig};
use crate::memory::{Access, DeviceCopy, DeviceMemory};
use crate::module::Function;
use crate::result;
use crate::texture::copy::params_3d;
use crate::texture::Volume;
use hip_sys as sys;
use std::sync::Arc;

/// Check that `node` of `graph` names a node of `exec` (instantiated from that builder's graph) of type
/// `ty` (asked of HIP, which may not check it itself before treating the node as one), make the device
/// current and, when the executable graph was launched since it was made or last updated, wait
/// for the device (queued launches may still use the old parameters), as [`GraphExec::update`] does.
fn prepare(
    what: &'static str,
    parts: &mut ExecParts<'_>,
    graph: &Graph,
    node: GraphNode,
    ty: sys::hipGraphNodeType,
) -> Result<()> {
    if parts.origin == 0 || graph.origin() != parts.origin || node.builder != parts.origin {
        return Err(Error::InvalidArgument {
            what,
            value: format!("node {}", node.index),
            reason: "the node, its graph and the executable graph must come from one GraphBuilder \
                     (the graph this executable graph was instantiated from)"
                .into(),
        });
    }
    if graph.removed(node.index) {
        return Err(Error::InvalidArgument {
            what,
            value: format!("node {}", node.index),
            reason: "the node was removed from the graph (GraphBuilder::remove)".into(),
        });
    }
    parts.device.bind()?;
    // SAFETY: `node` is a node of `graph` (same builder, checked), which is live while borrowed; its
    // calls are held off while HIP reads the node.
    let actual = graph.with_raw(|_| unsafe { result::graph::graph_node_type(node.raw) })?;
    if actual != ty {
        return Err(Error::InvalidArgument {
            what,
            value: format!("node {} of the graph", node.index),
            reason: format!("it is a node of HIP type {actual}, not {ty}"),
        });
    }
    if *parts.launched {
        result::device_synchronize()?;
        *parts.launched = false;
    }
    Ok(())
}

/// HIP's refusal of a node update, as [`Error::GraphUpdate`] naming the node (its place among `graph`'s
/// nodes); another error (from making the device current) as it is.
fn name_node(err: Error, graph: &Graph, node: GraphNode) -> Error {
    let Error::Hip { call, code, .. } = err else {
        return err;
    };
    // SAFETY: `node` is a node of `graph` (checked by `prepare`), which is live while borrowed; its
    // calls are held off while HIP lists the nodes.
    let at = graph.with_raw(|raw| unsafe { result::graph::failed_node(raw, node.raw) });
    result::graph::update_refused(call, code.raw(), None, at)
}

/// The new uses join the old (other nodes may still make those), and the new owners the kept ones.
fn join(parts: &mut ExecParts<'_>, uses: Vec<(Arc<crate::memory::Allocation>, Access)>) {
    let mut all: Vec<_> = parts.uses.iter().cloned().collect();
    all.extend(uses);
    *parts.uses = Arc::new(merge_uses(all));
}

impl GraphExec {
    /// Give kernel node `node` of `graph` (the built graph this executable graph was instantiated from)
    /// a new launch (`hipGraphExecKernelNodeSetParams`), checked as [`Function::launch`] checks one.
    /// Later launches run it; the executable graph then also keeps `function` and the crate's buffers
    /// in `args`, and orders its launches by them too (the node's old buffers stay: kept and ordered
    /// until the executable graph goes). When this executable graph was launched since it was made or
    /// last updated, the update first waits for its device, as [`update`](GraphExec::update) does.
    ///
    /// # Safety
    ///
    /// As [`GraphBuilder::kernel`](super::GraphBuilder::kernel), for every later launch.
    ///
    /// # Errors
    ///
    /// Nothing changed when refused: [`Error::InvalidArgument`] for a node, graph or executable graph not
    /// all of one builder; the launch checks' errors; HIP's refusal (such as another function where HIP
    /// cannot change it), as [`Error::GraphUpdate`] naming the node.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(exec: &mut hip::GraphExec, graph: &hip::Graph, node: hip::GraphNode, k: &Function,
    /// #      y: &mut DeviceBuffer<f32>, stream: &Stream) -> hip::Result<()> {
    /// let n = y.len() as u32;
    /// // SAFETY: `k(float* x, unsigned n)` writes x[..n] only.
    /// unsafe {
    ///     exec.set_kernel_node_params(graph, node, k, &LaunchConfig::for_num_elems(n),
    ///         LaunchArgs::new().arg_mut(y).arg(&n))?;
    /// }
    /// exec.launch(stream)?; // the node now writes `y`
    /// # Ok(()) }
    /// ```
    pub unsafe fn set_kernel_node_params(
        &mut self,
        graph: &Graph,
        node: GraphNode,
        function: &Function,
        config: &LaunchConfig,
        args: &mut LaunchArgs<'_>,
    ) -> Result<()> {
        const WHAT: &str = "graph kernel node update";
        let mut parts = self.parts_mut();
        check_node_launch(WHAT, function, parts.device, config, args)?;
        prepare(WHAT, &mut parts, graph, node, sys::hipGraphNodeTypeKernel)?;
        let params = kernel_params(function, config, args);
        // SAFETY: the executable graph is live and was instantiated from `graph`'s builder, whose live
        // graph holds `node` (checked); launches queued before were waited for. `params` is checked as a
        // launch; what it touches is kept below, the rest is the caller's contract.
        graph
            .with_raw(|_| {
                // SAFETY: as said above, with `graph`'s calls held off.
                unsafe {
                    result::graph_build::exec_kernel_node_set_params(parts.raw, node.raw, &params)
                }
            })
            .map_err(|e| name_node(e, graph, node))?;
        let mut kept: Vec<_> = parts.kept.iter().cloned().collect();
        kept.push(Arc::new(function.clone()));
        kept.extend(args.kept_alive());
        *parts.kept = Arc::new(kept);
        join(&mut parts, args.tracked_uses());
        Ok(())
    }

    /// Make memset node `node` of `graph` fill `dst` with `value` instead
    /// (`hipGraphExecMemsetNodeSetParams`); `dst` is then kept and ordered like the graph's other memory.
    /// Waits for the device first when launched since made or last updated.
    ///
    /// # Errors
    ///
    /// As [`GraphBuilder::memset`](super::GraphBuilder::memset), [`Error::InvalidArgument`] for a node,
    /// graph or executable graph not all of one builder, and HIP's refusal ([`Error::GraphUpdate`])
    /// naming the node.
    ///
    /// ```no_run
    /// # fn f(exec: &mut hip::GraphExec, graph: &hip::Graph, node: hip::GraphNode,
    /// #      y: &mut hip::DeviceBuffer<u32>) -> hip::Result<()> {
    /// exec.set_memset_node_params(graph, node, y, 7u32)?;
    /// # Ok(()) }
    /// ```
    pub fn set_memset_node_params<T: DeviceCopy, M: DeviceMemory<T>>(
        &mut self,
        graph: &Graph,
        node: GraphNode,
        dst: &mut M,
        value: T,
    ) -> Result<()> {
        const WHAT: &str = "graph memset node update";
        let mut parts = self.parts_mut();
        device_of_memory(WHAT, parts.device, dst.device())?;
        not_host_visible(WHAT, dst.allocation())?;
        let params = memset_params(WHAT, dst, value)?;
        prepare(WHAT, &mut parts, graph, node, sys::hipGraphNodeTypeMemset)?;
        // SAFETY: as in set_kernel_node_params; `params` covers exactly `dst`, this device's memory
        // (checked), kept below.
        graph
            .with_raw(|_| {
                // SAFETY: as said above, with `graph`'s calls held off.
                unsafe {
                    result::graph_build::exec_memset_node_set_params(parts.raw, node.raw, &params)
                }
            })
            .map_err(|e| name_node(e, graph, node))?;
        join(&mut parts, vec![(dst.allocation().clone(), Access::Write)]);
        Ok(())
    }

    /// Make copy node `node` of `graph` copy `src` into `dst` instead
    /// (`hipGraphExecMemcpyNodeSetParams1D`); both are then kept and ordered like the graph's other
    /// memory. Waits for the device first when launched since made or last updated.
    ///
    /// # Errors
    ///
    /// As [`GraphBuilder::copy`](super::GraphBuilder::copy), [`Error::InvalidArgument`] for a node, graph
    /// or executable graph not all of one builder, and HIP's refusal ([`Error::GraphUpdate`]) naming the
    /// node.
    ///
    /// ```no_run
    /// # fn f(exec: &mut hip::GraphExec, graph: &hip::Graph, node: hip::GraphNode,
    /// #      y: &mut hip::DeviceBuffer<u32>, x: &hip::DeviceBuffer<u32>) -> hip::Result<()> {
    /// exec.set_copy_node_params(graph, node, y, x)?;
    /// # Ok(()) }
    /// ```
    pub fn set_copy_node_params<T: DeviceCopy, D: DeviceMemory<T>, S: DeviceMemory<T>>(
        &mut self,
        graph: &Graph,
        node: GraphNode,
        dst: &mut D,
        src: &S,
    ) -> Result<()> {
        const WHAT: &str = "graph copy node update";
        let mut parts = self.parts_mut();
        crate::memory::check_len(WHAT, dst.len(), src.len())?;
        device_of_memory(WHAT, parts.device, dst.device())?;
        device_of_memory(WHAT, parts.device, src.device())?;
        not_host_visible(WHAT, dst.allocation())?;
        not_host_visible(WHAT, src.allocation())?;
        let copy = Copy1d {
            dst: dst.device_ptr(),
            src: src.device_ptr(),
            bytes: src.byte_len(),
            kind: sys::hipMemcpyDeviceToDevice,
        };
        // SAFETY: `dst` and `src` are `byte_len()` bytes of this device's memory (checked), and
        // `&mut dst` and `&src` cannot be the same memory.
        unsafe {
            copy.update(
                WHAT,
                &mut parts,
                graph,
                node,
                [src.allocation(), dst.allocation()],
            )
        }
    }
}

/// A 1-D copy node's new parameters.
pub(super) struct Copy1d {
    pub(super) dst: *mut std::ffi::c_void,
    pub(super) src: *const std::ffi::c_void,
    pub(super) bytes: usize,
    pub(super) kind: sys::hipMemcpyKind,
}

impl Copy1d {
    /// Make copy node `node` of `graph` this copy (`hipGraphExecMemcpyNodeSetParams1D`), after
    /// [`prepare`], and join `[source, destination]` to the executable graph's uses (a read and a write).
    ///
    /// # Safety
    /// `self.src` and `self.dst` are `bytes` bytes of the memory of the allocations `[src, dst]`, of the
    /// kinds `kind` says; the host reaches any of it only through borrows the memory model orders.
    pub(super) unsafe fn update(
        &self,
        what: &'static str,
        parts: &mut ExecParts<'_>,
        graph: &Graph,
        node: GraphNode,
        [src, dst]: [&Arc<crate::memory::Allocation>; 2],
    ) -> Result<()> {
        prepare(what, parts, graph, node, sys::hipGraphNodeTypeMemcpy)?;
        graph
            .with_raw(|_| {
                // SAFETY: as in set_kernel_node_params (`prepare` checked the node and waited for
                // launches queued before), with `graph`'s calls held off; the memory is the caller's
                // contract, and kept and ordered for every later launch (below).
                unsafe {
                    result::graph_build::exec_memcpy_node_set_params_1d(
                        parts.raw, node.raw, self.dst, self.src, self.bytes, self.kind,
                    )
                }
            })
            .map_err(|e| name_node(e, graph, node))?;
        join(
            parts,
            vec![(src.clone(), Access::Read), (dst.clone(), Access::Write)],
        );
        Ok(())
    }
}

impl GraphExec {
    /// Make 3-D copy node `node` of `graph` copy an `extent` box from `src` at `src_at` into `dst` at
    /// `dst_at` instead (`hipGraphExecMemcpyNodeSetParams`), checked as
    /// [`GraphBuilder::copy_3d`](super::GraphBuilder::copy_3d) checks a new node; both are then kept and
    /// ordered like the graph's other memory. Waits for the device first when launched since made or
    /// last updated.
    ///
    /// # Errors
    ///
    /// As [`GraphBuilder::copy_3d`](super::GraphBuilder::copy_3d) (an empty box too: a copy node cannot
    /// become an empty one), [`Error::InvalidArgument`] for a node, graph or executable graph not all of
    /// one builder or a node that is not a copy node, and HIP's refusal ([`Error::GraphUpdate`]) naming
    /// the node. On HIP's NVIDIA platform CUDA updates only copy nodes whose old and new operands are both 1-dimensional
    /// (`cudaGraphExecMemcpyNodeSetParams`): a 3-D copy node's update is refused there with
    /// `hipErrorInvalidValue` (measured on an H100, CUDA 12.9), the executable graph unchanged: build
    /// and instantiate the graph anew there.
    ///
    /// ```no_run
    /// # use hip::memory::PitchedBuffer;
    /// # use hip::texture::Array;
    /// # fn f(exec: &mut hip::GraphExec, graph: &hip::Graph, node: hip::GraphNode,
    /// #      v: &PitchedBuffer<f32>, a: &mut Array<f32>) -> hip::Result<()> {
    /// exec.set_copy_3d_node_params(graph, node, v, [0; 3], a, [0; 3], [8, 8, 2])?;
    /// # Ok(()) }
    /// ```
    #[allow(clippy::too_many_arguments)] // the builder's copy_3d parameters, after the graph and node
    pub fn set_copy_3d_node_params<T: DeviceCopy>(
        &mut self,
        graph: &Graph,
        node: GraphNode,
        src: &impl Volume<T>,
        src_at: [usize; 3],
        dst: &mut impl Volume<T>,
        dst_at: [usize; 3],
        extent: [usize; 3],
    ) -> Result<()> {
        const NAMES: [&str; 3] = [
            "graph 3-D copy node update",
            "graph 3-D copy node update source",
            "graph 3-D copy node update destination",
        ];
        let mut parts = self.parts_mut();
        let params = params_3d(NAMES, parts.device, src, src_at, &*dst, dst_at, extent)?;
        let Some(params) = params else {
            return Err(Error::InvalidArgument {
                what: NAMES[0],
                value: format!("an empty box {extent:?}"),
                reason: "a copy node cannot become an empty one: copy at least one element".into(),
            });
        };
        prepare(
            NAMES[0],
            &mut parts,
            graph,
            node,
            sys::hipGraphNodeTypeMemcpy,
        )?;
        // SAFETY: as in set_kernel_node_params; both sides hold the box (checked) on this device, kept
        // below; `&src` and `&mut dst` cannot be one allocation.
        graph
            .with_raw(|_| {
                // SAFETY: as said above, with `graph`'s calls held off.
                unsafe {
                    result::graph_build::exec_memcpy_node_set_params(parts.raw, node.raw, &params)
                }
            })
            .map_err(|e| name_node(e, graph, node))?;
        join(
            &mut parts,
            vec![
                (src.allocation().clone(), Access::Read),
                (dst.allocation().clone(), Access::Write),
            ],
        );
        Ok(())
    }
}

impl GraphExec {
    /// Make child graph node `node` of `graph` run a copy of `child` instead
    /// (`hipGraphExecChildGraphNodeSetParams`): the same topology as the node's child graph, other
    /// parameters (buffers, values, kernels' arguments). Later launches run it; the executable graph then
    /// also keeps what `child` keeps and orders its launches by what `child` uses. Waits for the device
    /// first when launched since made or last updated.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a node, graph or executable graph not all of one builder, a node
    /// that is not a child graph node, a `child` of another device, or `graph` itself as `child`; HIP's
    /// refusal (another topology) as [`Error::GraphUpdate`] naming the node.
    ///
    /// ```no_run
    /// # fn f(exec: &mut hip::GraphExec, graph: &hip::Graph, node: hip::GraphNode,
    /// #      new_child: &hip::Graph, stream: &hip::Stream) -> hip::Result<()> {
    /// exec.set_child_graph_node_params(graph, node, new_child)?;
    /// exec.launch(stream)?; // the node now runs `new_child`'s copy
    /// # Ok(()) }
    /// ```
    pub fn set_child_graph_node_params(
        &mut self,
        graph: &Graph,
        node: GraphNode,
        child: &Graph,
    ) -> Result<()> {
        const WHAT: &str = "graph child node update";
        let mut parts = self.parts_mut();
        let (device, kept, uses) = child.parts();
        if std::ptr::eq(graph, child) {
            return Err(Error::InvalidArgument {
                what: WHAT,
                value: "the node's own graph".into(),
                reason: "a graph cannot be its own child: give another graph".into(),
            });
        }
        if device.ordinal() != parts.device.ordinal() {
            return Err(Error::InvalidArgument {
                what: WHAT,
                value: format!("a graph of device {}", device.ordinal()),
                reason: format!("this graph belongs to device {}", parts.device.ordinal()),
            });
        }
        prepare(WHAT, &mut parts, graph, node, sys::hipGraphNodeTypeGraph)?;
        // Both graphs' calls held off, taken in address order (another thread may update with the two
        // the other way round).
        let (first, second) = if (graph as *const Graph) < (child as *const Graph) {
            (graph, child)
        } else {
            (child, graph)
        };
        first
            .with_raw(|_| {
                second.with_raw(|_| {
                    // SAFETY: the executable graph is live and was instantiated from `graph`'s builder,
                    // whose live graph holds `node` (checked, a child graph node); `child` is live and
                    // distinct from `graph` (checked), both graphs' calls held off here, and what its
                    // nodes touch is kept below; launches queued before were waited for.
                    unsafe {
                        result::graph_build::exec_child_graph_node_set_params(
                            parts.raw,
                            node.raw,
                            child.raw(),
                        )
                    }
                })
            })
            .map_err(|e| name_node(e, graph, node))?;
        let mut all_kept: Vec<_> = parts.kept.iter().cloned().collect();
        all_kept.push(kept.clone());
        *parts.kept = Arc::new(all_kept);
        join(&mut parts, uses.iter().cloned().collect());
        Ok(())
    }
}
