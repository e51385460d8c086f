//! Node updates of host copy nodes: a copy to or from the host made to use other
//! [`GraphPinnedBuffer`]s (`hipGraphExecMemcpyNodeSetParams1D`).

use super::exec::Copy1d;
use super::{device_of_memory, not_host_visible, GraphNode};
use crate::error::Result;
use crate::graph::{Graph, GraphExec};
use crate::memory::{check_len, DeviceCopy, DeviceMemory, GraphPinnedBuffer};
use hip_sys as sys;

impl GraphExec {
    /// Make copy node `node` of `graph` copy `src` (pinned host memory) into `dst` instead
    /// (`hipGraphExecMemcpyNodeSetParams1D`, host to device), checked as
    /// [`GraphBuilder::copy_from_host`](super::GraphBuilder::copy_from_host) checks a new node. Both
    /// are then kept and ordered like the graph's other memory, and `src`'s host borrows are checked
    /// against this graph's launches from then on. Waits for the device first when launched since made
    /// or last updated.
    ///
    /// # Errors
    ///
    /// As [`GraphBuilder::copy_from_host`](super::GraphBuilder::copy_from_host),
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a node, graph or executable graph
    /// not all of one builder, a removed node or one that is not a copy node, and HIP's refusal
    /// ([`Error::GraphUpdate`](crate::Error::GraphUpdate)) naming the node.
    ///
    /// ```no_run
    /// # fn f(exec: &mut hip::GraphExec, graph: &hip::Graph, node: hip::GraphNode,
    /// #      device: &hip::Device, x: &mut hip::DeviceBuffer<f32>) -> hip::Result<()> {
    /// let next = hip::GraphPinnedBuffer::<f32>::zeroed(device, x.len())?;
    /// exec.set_copy_from_host_node_params(graph, node, x, &next)?;
    /// # Ok(()) }
    /// ```
    pub fn set_copy_from_host_node_params<T: DeviceCopy, D: DeviceMemory<T>>(
        &mut self,
        graph: &Graph,
        node: GraphNode,
        dst: &mut D,
        src: &GraphPinnedBuffer<T>,
    ) -> Result<()> {
        const WHAT: &str = "graph copy node from the host, update";
        let mut parts = self.parts_mut();
        check_len(WHAT, dst.len(), src.len())?;
        device_of_memory(WHAT, parts.device, dst.device())?;
        device_of_memory(WHAT, parts.device, src.device())?;
        not_host_visible(WHAT, dst.allocation())?;
        let copy = Copy1d {
            dst: dst.device_ptr(),
            src: src.host_ptr().cast_const().cast(),
            bytes: dst.byte_len(),
            kind: sys::hipMemcpyHostToDevice,
        };
        // SAFETY: `dst` is `byte_len()` bytes of this device's memory and `src` as many bytes of pinned
        // host memory (checked), which the host writes only through a borrow its lease counts and no
        // launch overlaps (its uses joined by `update`).
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

    /// Make copy node `node` of `graph` copy `src` into `dst` (pinned host memory) instead
    /// (`hipGraphExecMemcpyNodeSetParams1D`, device to host), checked as
    /// [`GraphBuilder::copy_to_host`](super::GraphBuilder::copy_to_host) checks a new node. Both are
    /// then kept and ordered like the graph's other memory, and `dst`'s host borrows are checked
    /// against this graph's launches from then on. Waits for the device first when launched since made
    /// or last updated.
    ///
    /// # Errors
    ///
    /// As [`GraphBuilder::copy_to_host`](super::GraphBuilder::copy_to_host),
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a node, graph or executable graph
    /// not all of one builder, a removed node or one that is not a copy node, and HIP's refusal
    /// ([`Error::GraphUpdate`](crate::Error::GraphUpdate)) naming the node.
    ///
    /// ```no_run
    /// # fn f(exec: &mut hip::GraphExec, graph: &hip::Graph, node: hip::GraphNode,
    /// #      device: &hip::Device, x: &hip::DeviceBuffer<f32>) -> hip::Result<()> {
    /// let next = hip::GraphPinnedBuffer::<f32>::zeroed(device, x.len())?;
    /// exec.set_copy_to_host_node_params(graph, node, &next, x)?;
    /// # Ok(()) }
    /// ```
    pub fn set_copy_to_host_node_params<T: DeviceCopy, S: DeviceMemory<T>>(
        &mut self,
        graph: &Graph,
        node: GraphNode,
        dst: &GraphPinnedBuffer<T>,
        src: &S,
    ) -> Result<()> {
        const WHAT: &str = "graph copy node to the host, update";
        let mut parts = self.parts_mut();
        check_len(WHAT, dst.len(), src.len())?;
        device_of_memory(WHAT, parts.device, src.device())?;
        device_of_memory(WHAT, parts.device, dst.device())?;
        not_host_visible(WHAT, src.allocation())?;
        let copy = Copy1d {
            dst: dst.host_ptr().cast(),
            src: src.device_ptr(),
            bytes: src.byte_len(),
            kind: sys::hipMemcpyDeviceToHost,
        };
        // SAFETY: as in set_copy_from_host_node_params, the other way: the host reads or writes `dst`
        // only through a borrow its lease counts, which no launch overlaps and which waits for the
        // launches before it.
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
