//! 2-D and 3-D copy nodes between arrays and pitched memory (`hipGraphAddMemcpyNode`), checked as
//! [`Stream::copy_3d_async`](crate::Stream::copy_3d_async) checks its copies.

use super::{GraphBuilder, GraphNode};
use crate::error::Result;
use crate::memory::{Access, DeviceCopy};
use crate::result;
use crate::texture::copy::params_3d;
use crate::texture::Volume;

impl GraphBuilder {
    /// Add a copy of an `extent` (elements: width, height, depth) box from `src` at `src_at` into `dst`
    /// at `dst_at`, after `deps` (`hipGraphAddMemcpyNode`). Each side is an
    /// [`Array`](crate::texture::Array) or a [`PitchedBuffer`](crate::memory::PitchedBuffer) of the
    /// graph's device (1-D and 2-D ones have one slice, and one row); every position plus the extent is
    /// checked against that side's extent. A read of `src` and a write of `dst` for the memory model. An
    /// empty box adds an empty node (nothing to copy), so the dependencies still hold.
    ///
    /// # Errors
    ///
    /// Before HIP is called: [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a dependency
    /// of another builder or naming the side and axis of a box past its extent (or sizes that overflow);
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) for memory of another device. Then what
    /// `hipGraphAddMemcpyNode` returns.
    ///
    /// ```no_run
    /// # fn f(b: &mut hip::GraphBuilder) -> hip::Result<()> {
    /// use hip::memory::PitchedBuffer;
    /// use hip::texture::{Array, ArrayFlags, Extent};
    /// let v = PitchedBuffer::<f32>::zeroed_3d(b.device(), 33, 17, 5)?;
    /// let mut a = Array::<f32>::zeroed(b.device(), Extent::new(33, 17, 5), ArrayFlags::DEFAULT)?;
    /// let copy = b.copy_3d(&[], &v, [0; 3], &mut a, [0; 3], [33, 17, 5])?;
    /// # Ok(()) }
    /// ```
    pub fn copy_3d<T: DeviceCopy>(
        &mut self,
        deps: &[GraphNode],
        src: &impl Volume<T>,
        src_at: [usize; 3],
        dst: &mut impl Volume<T>,
        dst_at: [usize; 3],
        extent: [usize; 3],
    ) -> Result<GraphNode> {
        const NAMES: [&str; 3] = [
            "graph 3-D copy node",
            "graph 3-D copy node source",
            "graph 3-D copy node destination",
        ];
        let raw_deps = self.deps(NAMES[0], deps)?;
        let params = params_3d(NAMES, &self.device, src, src_at, &*dst, dst_at, extent)?;
        let Some(params) = params else {
            return self.empty(deps);
        };
        self.device.bind()?;
        // SAFETY: `self.raw` is live, `raw_deps` are its nodes (checked); both sides hold the box
        // (params_3d checked it against each side's extent) and are this device's memory (checked),
        // kept alive by the graph (below); `&src` and `&mut dst` cannot be one allocation.
        let raw = unsafe { result::graph_build::add_memcpy_node(self.raw, &raw_deps, &params)? };
        self.record_use(src.allocation(), Access::Read);
        self.record_use(dst.allocation(), Access::Write);
        Ok(self.added(raw, deps))
    }
}
