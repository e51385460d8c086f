//! Graphs built node by node: [`GraphBuilder`] -> [`Graph`] -> [`GraphExec`](crate::GraphExec).
//!
//! A [`GraphBuilder`] (`hipGraphCreate`) adds kernel, memset, device-to-device copy, 3-D copy (arrays
//! and pitched memory), copies to and from the host (through a
//! [`GraphPinnedBuffer`](crate::GraphPinnedBuffer)), empty, child graph, host (a
//! Rust closure the graph owns) and event record and wait nodes, each after the nodes it depends
//! on, and [`build`](GraphBuilder::build)s the same [`Graph`] a stream capture makes: it is instantiated, launched and updated the same way, and each launch is
//! ordered by the memory model like one operation making every access its nodes make. As with captures
//! (see [`crate::graph`]), the graph keeps alive every buffer its nodes use and every kernel's
//! [`Function`] (its module), until the last executable graph made from it is dropped and done.
//!
//! ```no_run
//! use hip::prelude::*;
//! use hip::GraphBuilder;
//!
//! # fn f(device: &Device, stream: &Stream, scale: &Function) -> hip::Result<()> {
//! let mut x = DeviceBuffer::<f32>::zeroed(device, 1024)?;
//! let mut y = DeviceBuffer::<f32>::zeroed(device, 1024)?;
//! let n = x.len() as u32;
//! let mut builder = GraphBuilder::new(device)?;
//! let fill = builder.memset(&[], &mut x, 1.0f32)?;
//! // SAFETY: `scale(float* x, float s, unsigned n)` writes x[..n] only.
//! let k = unsafe {
//!     builder.kernel(
//!         &[fill],
//!         scale,
//!         &LaunchConfig::for_num_elems(n),
//!         LaunchArgs::new().arg_mut(&mut x).arg(&2.0f32).arg(&n),
//!     )?
//! };
//! builder.copy(&[k], &mut y, &x)?;
//! let mut exec = builder.build()?.instantiate()?;
//! exec.launch(stream)?;
//! assert!(y.to_vec()?.iter().all(|&v| v == 2.0)); // waits for the launch, which writes y
//! # Ok(()) }
//! ```

use crate::device::Device;
use crate::error::{Error, Result};
use crate::graph::{Graph, Kept};
use crate::launch::{node::check_node_launch, LaunchArgs, LaunchConfig};
use crate::memory::{Access, Allocation, DeviceCopy, DeviceMemory};
use crate::module::Function;
use crate::result;
use hip_sys as sys;
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

static NEXT_BUILDER: AtomicU64 = AtomicU64::new(1);

/// A node of a graph under construction, to name as a dependency of later nodes of the same
/// [`GraphBuilder`] (a node of another builder is refused).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphNode {
    raw: sys::hipGraphNode_t,
    builder: u64,
    index: usize,
}

// SAFETY: a node handle is a value naming a node; every call that uses it goes through its builder
// (`&mut GraphBuilder`), which checks the node belongs to it.
unsafe impl Send for GraphNode {}
// SAFETY: as for Send: `&GraphNode` makes no HIP call.
unsafe impl Sync for GraphNode {}

impl GraphNode {
    /// The raw node handle (valid while the builder, then its graph, lives).
    pub fn raw(&self) -> sys::hipGraphNode_t {
        self.raw
    }

    /// Its place in addition order (0 for the builder's first node).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The builder that added it.
    pub(crate) fn builder(&self) -> u64 {
        self.builder
    }
}

/// A graph under construction (`hipGraphCreate`): add nodes, then [`build`](Self::build) the [`Graph`].
/// Dropping it destroys the graph.
pub struct GraphBuilder {
    raw: sys::hipGraph_t,
    id: u64,
    nodes: usize,
    device: Device,
    kept: Kept,
    /// Each access a node makes, with the node's index: a removed node's go with it.
    uses: Vec<(usize, Arc<Allocation>, Access)>,
    /// The indices of the removed nodes.
    removed: Vec<usize>,
    /// Every edge as (node, node that runs after it), by index: for refusing a cycle.
    edges: Vec<(usize, usize)>,
}

// SAFETY: every HIP call on `raw` takes `&mut self` (or `self`), so none overlap; the other fields are
// Send + Sync.
unsafe impl Send for GraphBuilder {}
// SAFETY: `&GraphBuilder` makes no HIP call.
unsafe impl Sync for GraphBuilder {}

impl std::fmt::Debug for GraphBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphBuilder")
            .field("raw", &self.raw)
            .field("device", &self.device.ordinal())
            .field("nodes", &self.nodes)
            .finish()
    }
}

fn device_of_memory(what: &'static str, graph: &Device, memory: &Device) -> Result<()> {
    if graph.ordinal() != memory.ordinal() {
        return Err(Error::DeviceMismatch {
            what,
            stream: graph.ordinal(),
            other: memory.ordinal(),
        });
    }
    Ok(())
}

fn not_host_visible(what: &'static str, alloc: &crate::memory::Allocation) -> Result<()> {
    if alloc.is_host_visible() {
        return Err(Error::InvalidArgument {
            what,
            value: "pinned or managed memory".into(),
            reason: "a graph node needs device memory: a launch needs no borrow of host-visible \
                     memory, so it could change memory the host holds a slice of"
                .into(),
        });
    }
    Ok(())
}

impl GraphBuilder {
    /// An empty graph of `device` (`hipGraphCreate`).
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for `hipGraphCreate`.
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// let builder = hip::GraphBuilder::new(device)?;
    /// assert_eq!(builder.build()?.node_count()?, 0);
    /// # Ok(()) }
    /// ```
    pub fn new(device: &Device) -> Result<GraphBuilder> {
        device.bind()?;
        let raw = result::graph_build::graph_create()?;
        Ok(GraphBuilder {
            raw,
            id: NEXT_BUILDER.fetch_add(1, Ordering::Relaxed),
            nodes: 0,
            device: device.clone(),
            kept: Vec::new(),
            uses: Vec::new(),
            removed: Vec::new(),
            edges: Vec::new(),
        })
    }

    /// The device the graph belongs to.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// How many nodes the graph holds: those added less those [`remove`](Self::remove)d.
    pub fn len(&self) -> usize {
        self.nodes - self.removed.len()
    }

    /// Whether the graph holds no node.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Move an owner into the graph, as [`Capture::keep`](crate::Capture::keep) does: it lives until the
    /// last executable graph made from it is dropped and done.
    pub fn keep<T: Any + Send + Sync>(&mut self, owner: Arc<T>) -> &mut Self {
        self.kept.push(owner);
        self
    }

    /// The raw handles of `deps`, refusing a node of another builder or a removed one.
    fn deps(&self, what: &'static str, deps: &[GraphNode]) -> Result<Vec<sys::hipGraphNode_t>> {
        deps.iter()
            .map(|d| self.live(what, d).map(|()| d.raw))
            .collect()
    }

    /// Refuse a node of another builder or one removed (its handle names no node any more).
    fn live(&self, what: &'static str, node: &GraphNode) -> Result<()> {
        let problem = if node.builder != self.id {
            "of another graph builder"
        } else if self.removed.contains(&node.index) {
            "removed from this builder"
        } else {
            return Ok(());
        };
        Err(Error::InvalidArgument {
            what,
            value: format!("node {} {problem}", node.index),
            reason: "the node must be one this builder added and still holds".into(),
        })
    }

    /// Record that the node being added (the next index) makes `access` of `alloc`.
    fn record_use(&mut self, alloc: &Arc<Allocation>, access: Access) {
        self.uses.push((self.nodes, alloc.clone(), access));
    }

    /// The node HIP just added after `deps` (already checked by `deps()`).
    fn added(&mut self, raw: sys::hipGraphNode_t, deps: &[GraphNode]) -> GraphNode {
        let node = GraphNode {
            raw,
            builder: self.id,
            index: self.nodes,
        };
        for d in deps {
            if !self.edges.contains(&(d.index, node.index)) {
                self.edges.push((d.index, node.index));
            }
        }
        self.nodes += 1;
        node
    }

    /// Add a kernel launch run after `deps` (`hipGraphAddKernelNode`). Checked as
    /// [`Function::launch`] checks a launch; the graph keeps a clone of `function` (its module stays
    /// loaded) and the crate's buffers in `args`, whose accesses (read with [`LaunchArgs::arg`], write
    /// with [`LaunchArgs::arg_mut`]) order the graph's launches.
    ///
    /// # Safety
    ///
    /// As [`Capture::launch`](crate::Capture::launch): [`Function::launch`]'s contract for every launch
    /// of every executable graph made from this builder, with the arguments' current values.
    ///
    /// # Errors
    ///
    /// Nothing added when refused: [`Error::InvalidArgument`] for a dependency of another builder or
    /// pinned or managed memory among the arguments, [`Error::InvalidLaunch`] for a configuration the
    /// device cannot run or a function of another device, [`Error::ArgumentMismatch`],
    /// [`Error::DeviceMismatch`], [`Error::TooManyArguments`], and what `hipGraphAddKernelNode` returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(b: &mut hip::GraphBuilder, k: &Function, x: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// let n = x.len() as u32;
    /// // SAFETY: `k(float* x, unsigned n)` writes x[..n] only.
    /// let node = unsafe {
    ///     b.kernel(&[], k, &LaunchConfig::for_num_elems(n), LaunchArgs::new().arg_mut(x).arg(&n))?
    /// };
    /// # Ok(()) }
    /// ```
    pub unsafe fn kernel(
        &mut self,
        deps: &[GraphNode],
        function: &Function,
        config: &LaunchConfig,
        args: &mut LaunchArgs<'_>,
    ) -> Result<GraphNode> {
        const WHAT: &str = "graph kernel node";
        let raw_deps = self.deps(WHAT, deps)?;
        check_node_launch(WHAT, function, &self.device, config, args)?;
        self.device.bind()?;
        let params = kernel_params(function, config, args);
        // SAFETY: `self.raw` is live until build/Drop; `raw_deps` are its nodes (checked by builder id).
        // `params` names a live function of this device (checked) with `args.len()` argument pointers,
        // each borrowed for the call (KernelArg's contract); HIP copies them. The configuration and the
        // arguments' devices were checked; the graph keeps the function and the tracked buffers (below);
        // what the kernel does beyond them is the caller's contract.
        let raw = unsafe { result::graph_build::add_kernel_node(self.raw, &raw_deps, &params)? };
        self.kept.push(Arc::new(function.clone()));
        self.kept.extend(args.kept_alive());
        for (alloc, access) in args.tracked_uses() {
            self.record_use(&alloc, access);
        }
        Ok(self.added(raw, deps))
    }

    /// Add a fill of every element of `dst` with `value` after `deps` (`hipGraphAddMemsetNode`): a
    /// write of `dst` for the memory model. `T` is 1, 2 or 4 bytes wide (HIP's memset element sizes).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a dependency of another builder, an element of another width, or
    /// pinned or managed memory; [`Error::DeviceMismatch`] for memory of another device; what
    /// `hipGraphAddMemsetNode` returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(b: &mut hip::GraphBuilder, x: &mut DeviceBuffer<u32>) -> hip::Result<()> {
    /// let zero = b.memset(&[], x, 0u32)?;
    /// # Ok(()) }
    /// ```
    pub fn memset<T: DeviceCopy, M: DeviceMemory<T>>(
        &mut self,
        deps: &[GraphNode],
        dst: &mut M,
        value: T,
    ) -> Result<GraphNode> {
        const WHAT: &str = "graph memset node";
        let raw_deps = self.deps(WHAT, deps)?;
        device_of_memory(WHAT, &self.device, dst.device())?;
        not_host_visible(WHAT, dst.allocation())?;
        let params = memset_params(WHAT, dst, value)?;
        self.device.bind()?;
        // SAFETY: `self.raw` is live, `raw_deps` are its nodes (checked); `params` covers exactly `dst`'s
        // elements, device memory of this device (checked), which the graph keeps alive (below).
        let raw = unsafe { result::graph_build::add_memset_node(self.raw, &raw_deps, &params)? };
        self.record_use(dst.allocation(), Access::Write);
        Ok(self.added(raw, deps))
    }

    /// Add a copy of `src` into `dst`, device to device, after `deps` (`hipGraphAddMemcpyNode1D`): a
    /// read of `src` and a write of `dst` for the memory model.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a dependency of another builder or pinned or managed memory;
    /// [`Error::LengthMismatch`] for lengths that differ; [`Error::DeviceMismatch`] for memory of another
    /// device; what `hipGraphAddMemcpyNode1D` returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(b: &mut hip::GraphBuilder, y: &mut DeviceBuffer<f32>, x: &DeviceBuffer<f32>) -> hip::Result<()> {
    /// let copy = b.copy(&[], y, x)?;
    /// # Ok(()) }
    /// ```
    pub fn copy<T: DeviceCopy, D: DeviceMemory<T>, S: DeviceMemory<T>>(
        &mut self,
        deps: &[GraphNode],
        dst: &mut D,
        src: &S,
    ) -> Result<GraphNode> {
        const WHAT: &str = "graph copy node";
        let raw_deps = self.deps(WHAT, deps)?;
        crate::memory::check_len(WHAT, dst.len(), src.len())?;
        device_of_memory(WHAT, &self.device, dst.device())?;
        device_of_memory(WHAT, &self.device, src.device())?;
        not_host_visible(WHAT, dst.allocation())?;
        not_host_visible(WHAT, src.allocation())?;
        self.device.bind()?;
        // SAFETY: `self.raw` is live, `raw_deps` are its nodes (checked); `dst` and `src` are
        // `byte_len()` bytes of this device's memory (checked) that the graph keeps alive (below);
        // `&mut dst` and `&src` cannot be the same memory.
        let raw = unsafe {
            result::graph_build::add_memcpy_node_1d(
                self.raw,
                &raw_deps,
                dst.device_ptr(),
                src.device_ptr(),
                src.byte_len(),
                sys::hipMemcpyDeviceToDevice,
            )?
        };
        self.record_use(src.allocation(), Access::Read);
        self.record_use(dst.allocation(), Access::Write);
        Ok(self.added(raw, deps))
    }

    /// Add a node that does nothing, after `deps` (`hipGraphAddEmptyNode`): a join point.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a dependency of another builder; what `hipGraphAddEmptyNode`
    /// returns.
    ///
    /// ```no_run
    /// # fn f(b: &mut hip::GraphBuilder, l: hip::GraphNode, r: hip::GraphNode) -> hip::Result<()> {
    /// let join = b.empty(&[l, r])?;
    /// # Ok(()) }
    /// ```
    pub fn empty(&mut self, deps: &[GraphNode]) -> Result<GraphNode> {
        let raw_deps = self.deps("graph empty node", deps)?;
        self.device.bind()?;
        // SAFETY: `self.raw` is live and `raw_deps` are its nodes (checked).
        let raw = unsafe { result::graph_build::add_empty_node(self.raw, &raw_deps)? };
        Ok(self.added(raw, deps))
    }

    /// Add a copy of `child` as one node run after `deps` (`hipGraphAddChildGraphNode`); the graph keeps
    /// what `child` keeps and is ordered by what it uses.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a dependency of another builder or a graph of another device; what
    /// `hipGraphAddChildGraphNode` returns.
    ///
    /// ```no_run
    /// # fn f(b: &mut hip::GraphBuilder, child: &hip::Graph) -> hip::Result<()> {
    /// let sub = b.child(&[], child)?;
    /// # Ok(()) }
    /// ```
    pub fn child(&mut self, deps: &[GraphNode], child: &Graph) -> Result<GraphNode> {
        const WHAT: &str = "graph child node";
        let raw_deps = self.deps(WHAT, deps)?;
        let (device, kept, uses) = child.parts();
        if device.ordinal() != self.device.ordinal() {
            return Err(Error::InvalidArgument {
                what: WHAT,
                value: format!("a graph of device {}", device.ordinal()),
                reason: format!("this graph belongs to device {}", self.device.ordinal()),
            });
        }
        self.device.bind()?;
        // SAFETY: both graphs are live (the child's calls are held off while HIP copies it) and
        // distinct (the child is a built `Graph`, this one is not built yet); `raw_deps` are nodes of
        // `self.raw` (checked). The copy refers to what the child keeps, which this graph keeps (below).
        let raw = child.with_raw(|c| {
            // SAFETY: as said above.
            unsafe { result::graph_build::add_child_graph_node(self.raw, &raw_deps, c) }
        })?;
        self.kept.push(kept.clone());
        for (alloc, access) in uses.iter() {
            self.record_use(alloc, *access);
        }
        Ok(self.added(raw, deps))
    }

    /// The graph, holding what its nodes use: instantiate and launch it as a captured one.
    ///
    /// # Errors
    ///
    /// None today; a `Result` so that checks may be added.
    ///
    /// ```no_run
    /// # fn f(b: hip::GraphBuilder, stream: &hip::Stream) -> hip::Result<()> {
    /// let mut exec = b.build()?.instantiate()?;
    /// exec.launch(stream)?;
    /// # Ok(()) }
    /// ```
    pub fn build(mut self) -> Result<Graph> {
        Ok(self.take())
    }

    fn take(&mut self) -> Graph {
        let raw = std::mem::replace(&mut self.raw, std::ptr::null_mut());
        Graph::from_parts(
            raw,
            self.device.clone(),
            std::mem::take(&mut self.kept),
            self.uses
                .drain(..)
                .map(|(_, a, access)| (a, access))
                .collect(),
            self.id,
            std::mem::take(&mut self.removed),
        )
    }
}

impl Drop for GraphBuilder {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // The Graph's Drop destroys it (deferred when inside a host function).
            drop(self.take());
        }
    }
}

/// HIP's memset parameters filling `dst` with `value`, whose width must be 1, 2 or 4 bytes.
fn memset_params<T: DeviceCopy, M: DeviceMemory<T>>(
    what: &'static str,
    dst: &M,
    value: T,
) -> Result<sys::hipMemsetParams> {
    memset_params_at(what, dst.device_ptr(), dst.len(), value)
}

/// HIP's memset parameters filling the `len` elements of `T` at `dst` with `value`, whose width must be
/// 1, 2 or 4 bytes.
fn memset_params_at<T: DeviceCopy>(
    what: &'static str,
    dst: *mut std::ffi::c_void,
    len: usize,
    value: T,
) -> Result<sys::hipMemsetParams> {
    let size = std::mem::size_of::<T>();
    if !matches!(size, 1 | 2 | 4) {
        return Err(Error::InvalidArgument {
            what,
            value: format!("an element of {size} bytes"),
            reason: "HIP's memset nodes set elements of 1, 2 or 4 bytes".into(),
        });
    }
    let mut b = [0u8; 4];
    // SAFETY: `value` is a DeviceCopy of `size` <= 4 initialised bytes (no padding), copied into the
    // first `size` bytes of `b`.
    unsafe {
        std::ptr::copy_nonoverlapping((&value as *const T).cast::<u8>(), b.as_mut_ptr(), size)
    };
    Ok(sys::hipMemsetParams {
        dst,
        elementSize: size as u32, // 1, 2 or 4
        height: 1,
        pitch: 0,
        value: u32::from_ne_bytes(b),
        width: len,
    })
}

/// HIP's kernel node parameters for `function` with `config` and `args` (pointers into `args`).
fn kernel_params(
    function: &Function,
    config: &LaunchConfig,
    args: &mut LaunchArgs<'_>,
) -> sys::hipKernelNodeParams {
    let (g, b) = (config.grid, config.block);
    sys::hipKernelNodeParams {
        blockDim: sys::dim3 {
            x: b.x,
            y: b.y,
            z: b.z,
        },
        extra: std::ptr::null_mut(),
        func: function.raw() as *mut std::ffi::c_void,
        gridDim: sys::dim3 {
            x: g.x,
            y: g.y,
            z: g.z,
        },
        kernelParams: args.params_ptr(),
        sharedMemBytes: config.shared_mem_bytes,
    }
}

mod copy_3d;
mod edges;
mod exec;
mod exec_host_copy;
mod host_copy;
mod nodes;
mod remove;
#[cfg(test)]
mod tests;
