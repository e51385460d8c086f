//! Copy nodes between device memory and the host, and memset nodes of host memory: through a
//! [`GraphPinnedBuffer`], whose host borrows graph launches check at run time (`memory::host_lease`).

use super::{device_of_memory, memset_params_at, not_host_visible, GraphBuilder, GraphNode};
use crate::error::Result;
use crate::memory::{check_len, Access, DeviceCopy, DeviceMemory, GraphPinnedBuffer};
use crate::result;
use hip_sys as sys;

impl GraphBuilder {
    /// Add a copy of `src` (pinned host memory the host fills between launches) into `dst` after
    /// `deps` (`hipGraphAddMemcpyNode1D`, host to device): a read of `src` and a write of `dst` for the
    /// memory model. A launch is refused while the host holds a mutable borrow of `src`
    /// ([`GraphPinnedBuffer::borrow_mut`]); such a borrow waits for the launches queued before it.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a dependency of another builder or
    /// pinned or managed memory as `dst`; [`Error::LengthMismatch`](crate::Error::LengthMismatch) for
    /// lengths that differ; [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) for memory of
    /// another device; what `hipGraphAddMemcpyNode1D` returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(b: &mut hip::GraphBuilder, x: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// let input = hip::GraphPinnedBuffer::<f32>::zeroed(b.device(), x.len())?;
    /// let up = b.copy_from_host(&[], x, &input)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_from_host<T: DeviceCopy, D: DeviceMemory<T>>(
        &mut self,
        deps: &[GraphNode],
        dst: &mut D,
        src: &GraphPinnedBuffer<T>,
    ) -> Result<GraphNode> {
        const WHAT: &str = "graph copy node from the host";
        let raw_deps = self.deps(WHAT, deps)?;
        check_len(WHAT, dst.len(), src.len())?;
        device_of_memory(WHAT, &self.device, dst.device())?;
        device_of_memory(WHAT, &self.device, src.device())?;
        not_host_visible(WHAT, dst.allocation())?;
        self.device.bind()?;
        // SAFETY: `self.raw` is live, `raw_deps` are its nodes (checked); `dst` is `byte_len()` bytes of
        // this device's memory and `src` as many bytes of pinned host memory (equal lengths checked),
        // both kept alive by the graph (below). The host writes `src` only through a borrow the lease
        // counts, which no launch overlaps.
        let raw = unsafe {
            result::graph_build::add_memcpy_node_1d(
                self.raw,
                &raw_deps,
                dst.device_ptr(),
                src.host_ptr().cast_const().cast(),
                dst.byte_len(),
                sys::hipMemcpyHostToDevice,
            )?
        };
        self.record_use(src.allocation(), Access::Read);
        self.record_use(dst.allocation(), Access::Write);
        Ok(self.added(raw, deps))
    }

    /// Add a copy of `src` into `dst` (pinned host memory the host reads between launches) after `deps`
    /// (`hipGraphAddMemcpyNode1D`, device to host): a read of `src` and a write of `dst` for the memory
    /// model. A launch is refused while the host holds any borrow of `dst`
    /// ([`GraphPinnedBuffer::borrow`]); a borrow waits for the launches queued before it.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a dependency of another builder or
    /// pinned or managed memory as `src`; [`Error::LengthMismatch`](crate::Error::LengthMismatch) for
    /// lengths that differ; [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) for memory of
    /// another device; what `hipGraphAddMemcpyNode1D` returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(b: &mut hip::GraphBuilder, x: &DeviceBuffer<f32>) -> hip::Result<()> {
    /// let output = hip::GraphPinnedBuffer::<f32>::zeroed(b.device(), x.len())?;
    /// let down = b.copy_to_host(&[], &output, x)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_to_host<T: DeviceCopy, S: DeviceMemory<T>>(
        &mut self,
        deps: &[GraphNode],
        dst: &GraphPinnedBuffer<T>,
        src: &S,
    ) -> Result<GraphNode> {
        const WHAT: &str = "graph copy node to the host";
        let raw_deps = self.deps(WHAT, deps)?;
        check_len(WHAT, dst.len(), src.len())?;
        device_of_memory(WHAT, &self.device, src.device())?;
        device_of_memory(WHAT, &self.device, dst.device())?;
        not_host_visible(WHAT, src.allocation())?;
        self.device.bind()?;
        // SAFETY: as in copy_from_host, the other way: the host reads or writes `dst` only through a
        // borrow the lease counts, which no launch overlaps, and which waits for the launches before it.
        let raw = unsafe {
            result::graph_build::add_memcpy_node_1d(
                self.raw,
                &raw_deps,
                dst.host_ptr().cast(),
                src.device_ptr(),
                src.byte_len(),
                sys::hipMemcpyDeviceToHost,
            )?
        };
        self.record_use(src.allocation(), Access::Read);
        self.record_use(dst.allocation(), Access::Write);
        Ok(self.added(raw, deps))
    }

    /// Add a fill of every element of `dst` (pinned host memory the host reads between launches) with
    /// `value` after `deps` (`hipGraphAddMemsetNode` through the memory's device mapping): a write of
    /// `dst` for the memory model. `T` is 1, 2 or 4 bytes wide. A launch is refused while the host holds
    /// any borrow of `dst` ([`GraphPinnedBuffer::borrow`]); a borrow waits for the launches queued
    /// before it.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a dependency of another builder or
    /// an element of another width; [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) for memory
    /// of another device; what `hipGraphAddMemsetNode` returns.
    ///
    /// ```no_run
    /// # fn f(b: &mut hip::GraphBuilder) -> hip::Result<()> {
    /// let flags = hip::GraphPinnedBuffer::<u32>::zeroed(b.device(), 256)?;
    /// let clear = b.memset_host(&[], &flags, 0u32)?;
    /// # Ok(()) }
    /// ```
    pub fn memset_host<T: DeviceCopy>(
        &mut self,
        deps: &[GraphNode],
        dst: &GraphPinnedBuffer<T>,
        value: T,
    ) -> Result<GraphNode> {
        const WHAT: &str = "graph memset node of host memory";
        let raw_deps = self.deps(WHAT, deps)?;
        device_of_memory(WHAT, &self.device, dst.device())?;
        let params = memset_params_at(WHAT, dst.host_ptr().cast(), dst.len(), value)?;
        self.device.bind()?;
        // SAFETY: `self.raw` is live, `raw_deps` are its nodes (checked); `params` covers exactly `dst`'s
        // elements, pinned host memory mapped on this device (checked), which HIP and CUDA set through
        // that mapping and which the graph keeps alive (below). The host reads or writes it only
        // through a borrow the lease counts, which no launch overlaps.
        let raw = unsafe { result::graph_build::add_memset_node(self.raw, &raw_deps, &params)? };
        self.record_use(dst.allocation(), Access::Write);
        Ok(self.added(raw, deps))
    }
}
