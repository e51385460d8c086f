//! Graphs recorded by stream capture: [`Stream::begin_capture`] -> [`Capture`] -> [`Graph`] ->
//! [`GraphExec`], launched on any stream of the device as often as needed.
//!
//! Replaying many small operations as one graph saves the per-operation launch cost (100 small kernels:
//! about 4x faster than one by one). Instantiating is slow (it allocates and validates): instantiate
//! once, launch many times.
//!
//! ```no_run
//! use hip::prelude::*;
//!
//! let device = Device::get(0)?;
//! let stream = Stream::new(&device)?;
//! let mut x = DeviceBuffer::<u32>::zeroed(&device, 1024)?;
//! let capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
//! capture.stream().fill_async(&mut x, 1)?; // recorded, not run
//! let graph = capture.end()?; // keeps `x` alive for as long as the graph or an executable of it lives
//! let mut exec = graph.instantiate()?;
//! for _ in 0..3 {
//!     exec.launch(&stream)?; // the whole graph, ordered like one operation writing `x`
//! }
//! assert!(x.to_vec()?.iter().all(|&v| v == 1)); // waits for the launches
//! # Ok::<(), hip::Error>(())
//! ```
//!
//! # Soundness: what a graph refers to must outlive every launch
//!
//! A captured operation keeps the raw device addresses and module function it was queued with; replaying
//! the graph after a buffer was freed or the module unloaded would use freed memory (the bug cudarc and
//! candle users hit with replayed graphs). Here:
//!
//! - Every operation of this crate queued on a capturing stream (kernel launches, copies, memsets, fills,
//!   peer copies, prefetches) records the allocations it touches, and how (read or write), in the capture
//!   instead of ordering itself: nothing runs at capture time. The [`Graph`] and every [`GraphExec`] made
//!   from it keep those allocations alive (the memory is freed only after the last of them is dropped and
//!   its launches are done, whoever owned the buffer), and each [`GraphExec::launch`] is ordered by the
//!   memory model like one operation making those accesses: after the other streams' conflicting work,
//!   and before later work that conflicts with it. Host-visible memory ([`PinnedBuffer`](crate::PinnedBuffer),
//!   [`ManagedBuffer`](crate::ManagedBuffer)) is refused in a capture: a replay needs no borrow of it, so
//!   it could write memory the host holds a slice of. Copy to and from the host through a
//!   [`GraphPinnedBuffer`](crate::GraphPinnedBuffer) ([`Capture::copy_from_host`],
//!   [`Capture::copy_to_host`]), whose host borrows launches check at run time.
//! - Kernels are captured with [`Capture::launch`], or with [`Function::launch`] on a stream the capture
//!   records (a joined one): either way the capture keeps a clone of the [`Function`] (so its module stays
//!   loaded for the graph's life). Both are `unsafe`; the crate's buffers they are given are kept as
//!   above. [`Capture::keep`] keeps anything else alive (memory reached without this crate's buffers),
//!   until the last launch is done.
//! - Another stream joins a capture by waiting on an event recorded on a capturing stream
//!   ([`Stream::wait_event`]); its operations are then recorded too, until the capture ends.
//!
//! # Changing what a graph does: [`GraphExec::update`]
//!
//! A graph replays the arguments it was captured with. To run the same work with other arguments (other
//! scalars, other buffers), capture it again and hand the new [`Graph`] to [`GraphExec::update`]
//! (`hipGraphExecUpdate`): far cheaper than instantiating anew, and the executable graph then holds what
//! the new capture kept. HIP refuses an update whose topology, node types or kernels differ, with an error
//! naming which. A graph built node by node ([`GraphBuilder`](crate::GraphBuilder)) can also have one
//! node's parameters set ([`GraphExec::set_kernel_node_params`] and its memset and copy forms): each
//! checked like the operation it replaces, with what it uses joining the executable graph's uses.
//!
//! # Operations that cannot be captured
//!
//! A synchronize or a query of the capturing stream is refused by this crate before HIP sees it
//! ([`Error::InvalidArgument`] naming the stream; the capture stays valid). Other uncapturable work (a
//! synchronous `hipMemcpy`, work on the legacy default stream in global mode) makes HIP invalidate the
//! capture: that call fails, and [`Capture::end`] returns the runtime's `hipErrorStreamCaptureInvalidated`
//! (901) / `hipErrorStreamCaptureUnsupported` (900) with a message saying what happened.

use crate::device::Device;
use crate::error::{Error, Result};
#[cfg(doc)]
use crate::module::Function;
use crate::result;
use crate::stream::{lock, Stream};
use hip_sys as sys;
use std::sync::Arc;

mod capture;
mod host_copy;
pub(crate) mod host_node;
mod node_params;
mod topology;
pub(crate) use capture::{merge_uses, Kept, Uses};
pub use capture::{Capture, CaptureMode, CaptureStatus};
pub use host_node::HostNodeHandle;
pub use node_params::MemsetNodeParams;
pub use topology::{GraphNodeKind, GraphTopology};

/// How an executable graph is made ([`Graph::instantiate_with_flags`]): HIP's `hipGraphInstantiateFlags`.
/// Combine with `|`. A device-launched graph (`hipGraphInstantiateFlagDeviceLaunch`) is not offered: this
/// crate launches graphs from the host only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphInstantiateFlags(u64);

impl GraphInstantiateFlags {
    /// No flags: what [`Graph::instantiate`] does.
    pub const NONE: Self = Self(0);
    /// Free memory the graph allocated before it is launched again (`AutoFreeOnLaunch`, 1). Captures
    /// made by this crate allocate nothing in a graph (`alloc_async` is refused there), so it changes
    /// nothing for them; it is offered for graphs a user builds with raw calls.
    pub const AUTO_FREE_ON_LAUNCH: Self = Self(1);
    /// Upload the graph to the device as part of instantiation (`Upload`, 2; HIP 6.1 and later on AMD,
    /// older ones refuse it). On NVIDIA it is refused as an invalid value on every CUDA: CUDA 12 takes it
    /// only through `cudaGraphInstantiateWithParams`, not the `WithFlags` call HIP maps (measured with
    /// CUDA 11.8 and 12.9 on an H100).
    pub const UPLOAD: Self = Self(2);
    /// Launch kernel nodes with the priority they were captured with (`UseNodePriority`, 8; CUDA 11.7 and
    /// later, HIP 6.1 and later).
    pub const USE_NODE_PRIORITY: Self = Self(8);

    /// The raw bits.
    pub fn bits(self) -> u64 {
        self.0
    }
}

impl std::ops::BitOr for GraphInstantiateFlags {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

/// A captured graph (`hipGraph_t`), destroyed on drop. Instantiate it to launch it.
pub struct Graph {
    raw: sys::hipGraph_t,
    /// Held across every HIP call on `raw`: graph objects are not internally synchronised, and even
    /// seemingly read-only calls (`hipGraphInstantiate`, `hipGraphGetNodes`) on one graph must not run
    /// concurrently (CUDA's "graph object thread safety"; HIP makes no stronger promise).
    calls: std::sync::Mutex<()>,
    device: Device,
    kept: Arc<Kept>,
    uses: Arc<Uses>,
    /// The GraphBuilder that built it (its nodes' handles name it); 0 for a capture.
    origin: u64,
    /// The indices of the nodes that builder removed (their handles name no node).
    removed: Vec<usize>,
}

// SAFETY: a graph handle may be used from any thread as long as calls on it do not overlap; every call on
// `raw` holds `calls` (Drop has `&mut self`). The other fields are Send + Sync.
unsafe impl Send for Graph {}
// SAFETY: as for Send: the HIP calls `&Graph` makes are serialised by `calls`.
unsafe impl Sync for Graph {}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("raw", &self.raw)
            .field("device", &self.device.ordinal())
            .field("kept", &self.kept.len())
            .finish()
    }
}

impl Graph {
    /// The raw handle, still owned by this `Graph`.
    pub fn raw(&self) -> sys::hipGraph_t {
        self.raw
    }

    /// How many of this crate's allocations the graph keeps alive and orders its launches by: each one
    /// an operation of the capture touched, counted once. A launch orders itself after the other streams'
    /// conflicting uses of these, and later uses after the launch, as for any operation.
    pub fn tracked_allocations(&self) -> usize {
        self.uses.len()
    }

    /// The number of nodes (`hipGraphGetNodes`): one per captured kernel, copy, memset, host function, ...
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for `hipGraphGetNodes`.
    ///
    /// ```no_run
    /// # fn f(graph: &hip::Graph) -> hip::Result<()> {
    /// println!("{} nodes, {} kernels", graph.node_count()?, graph.kernel_node_count()?);
    /// # Ok(()) }
    /// ```
    pub fn node_count(&self) -> Result<usize> {
        self.device.bind()?;
        let _serialised = lock(&self.calls);
        // SAFETY: `self.raw` is live until Drop, and `calls` is held.
        Ok(unsafe { result::graph::graph_nodes(self.raw)? }.len())
    }

    /// How many nodes are kernel launches (`hipGraphNodeGetType`).
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current, for `hipGraphGetNodes` and
    /// for `hipGraphNodeGetType`.
    ///
    /// ```no_run
    /// # fn f(graph: &hip::Graph) -> hip::Result<()> {
    /// assert!(graph.kernel_node_count()? <= graph.node_count()?);
    /// # Ok(()) }
    /// ```
    pub fn kernel_node_count(&self) -> Result<usize> {
        self.device.bind()?;
        let _serialised = lock(&self.calls);
        // SAFETY: as in node_count.
        let nodes = unsafe { result::graph::graph_nodes(self.raw)? };
        let mut kernels = 0;
        for node in nodes {
            // SAFETY: `node` was just returned by hipGraphGetNodes for this live graph, which nothing
            // changes while `calls` is held.
            if unsafe { result::graph::graph_node_type(node)? } == sys::hipGraphNodeTypeKernel {
                kernels += 1;
            }
        }
        Ok(kernels)
    }

    /// Make an executable graph (`hipGraphInstantiate`); it shares what the capture kept. Slow next to a
    /// launch (it allocates and validates the graph): instantiate once, launch many times.
    ///
    /// # Errors
    ///
    /// What HIP returns (a graph HIP cannot instantiate, out of memory).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, graph: &hip::Graph) -> hip::Result<()> {
    /// let mut exec = graph.instantiate()?; // once
    /// for _ in 0..100 {
    ///     exec.launch(stream)?; // many times
    /// }
    /// # Ok(()) }
    /// ```
    pub fn instantiate(&self) -> Result<GraphExec> {
        self.instantiate_raw(None)
    }

    /// [`instantiate`](Self::instantiate) with flags (`hipGraphInstantiateWithFlags`): see
    /// [`GraphInstantiateFlags`]. A flag this HIP (or the CUDA under it) does not know is HIP's own
    /// error.
    ///
    /// # Errors
    ///
    /// As [`instantiate`](Self::instantiate): [`Error::Hip`] with what HIP returns, `hipErrorInvalidValue`
    /// for a flag it does not take (such as [`GraphInstantiateFlags::UPLOAD`] before HIP 6.1 on AMD, and
    /// on NVIDIA).
    ///
    /// ```no_run
    /// use hip::GraphInstantiateFlags;
    /// # fn f(graph: &hip::Graph) -> hip::Result<()> {
    /// let exec = graph.instantiate_with_flags(GraphInstantiateFlags::USE_NODE_PRIORITY)?;
    /// # Ok(()) }
    /// ```
    pub fn instantiate_with_flags(&self, flags: GraphInstantiateFlags) -> Result<GraphExec> {
        self.instantiate_raw(Some(flags.0))
    }

    fn instantiate_raw(&self, flags: Option<u64>) -> Result<GraphExec> {
        self.device.bind()?;
        let _serialised = lock(&self.calls);
        // SAFETY: `self.raw` is live until Drop and `calls` is held; the executable graph is a copy
        // (it stays valid after the graph is destroyed) and gets the kept owners and uses below. The
        // flags change how it is launched, not what it touches.
        let raw = unsafe {
            match flags {
                None => result::graph::graph_instantiate(self.raw)?,
                Some(f) => result::graph::graph_instantiate_with_flags(self.raw, f)?,
            }
        };
        Ok(GraphExec {
            raw,
            device: self.device.clone(),
            kept: self.kept.clone(),
            uses: self.uses.clone(),
            launched: false,
            origin: self.origin,
        })
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        if crate::release::in_host_fn() {
            // No HIP call inside a host function: the releasing thread drops it.
            let moved = Graph {
                raw: self.raw,
                calls: std::sync::Mutex::new(()),
                device: self.device.clone(),
                kept: self.kept.clone(),
                uses: self.uses.clone(),
                origin: self.origin,
                removed: std::mem::take(&mut self.removed),
            };
            crate::release::defer(Box::new(move || drop(moved)));
            return;
        }
        // Executable graphs made from it stay valid (HIP copies the graph at instantiation).
        let _ = self.device.bind();
        // SAFETY: `self.raw` came from hipStreamEndCapture and is destroyed only here, once; executable
        // graphs made from it are copies and stay valid.
        let _ = unsafe { result::graph::graph_destroy(self.raw) };
    }
}

/// An executable graph (`hipGraphExec_t`). Dropping it waits for the device (a launch may still run) and
/// then frees it and what the capture kept.
pub struct GraphExec {
    raw: sys::hipGraphExec_t,
    device: Device,
    kept: Arc<Kept>,
    uses: Arc<Uses>,
    launched: bool,
    /// The GraphBuilder whose graph it was instantiated from (its node handles name it); 0 for a capture.
    origin: u64,
}

// SAFETY: an executable graph handle may be used from any thread; the calls on it (launch, update) take
// `&mut self`, so they never overlap. The other fields are Send + Sync.
unsafe impl Send for GraphExec {}
// SAFETY: `&GraphExec` makes no HIP call (only `raw()` and Debug read the handle value).
unsafe impl Sync for GraphExec {}

impl std::fmt::Debug for GraphExec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphExec")
            .field("raw", &self.raw)
            .field("device", &self.device.ordinal())
            .field("kept", &self.kept.len())
            .finish()
    }
}

impl GraphExec {
    /// The raw handle, still owned by this `GraphExec`.
    pub fn raw(&self) -> sys::hipGraphExec_t {
        self.raw
    }

    /// Queue one run of the whole graph on `stream` (`hipGraphLaunch`), ordered by the memory model after
    /// the other streams' work that conflicts with what the graph's operations read and write. The stream
    /// must belong to the graph's device and not be capturing.
    ///
    /// # Errors
    ///
    /// [`Error::DeviceMismatch`] for a stream of another device, [`Error::InvalidArgument`] for a
    /// capturing stream (launching a graph into another capture is not supported) or while the host
    /// holds a borrow of a [`GraphPinnedBuffer`](crate::GraphPinnedBuffer) that conflicts with the
    /// graph's use of it, and what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, exec: &mut hip::GraphExec, x: &DeviceBuffer<u32>) -> hip::Result<()> {
    /// exec.launch(stream)?;
    /// let out = x.to_vec()?; // waits for the launch if the graph writes `x`
    /// # Ok(()) }
    /// ```
    pub fn launch(&mut self, stream: &Stream) -> Result<()> {
        if stream.device().ordinal() != self.device.ordinal() {
            return Err(Error::DeviceMismatch {
                what: "graph launch",
                stream: stream.device().ordinal(),
                other: self.device.ordinal(),
            });
        }
        // The host's borrows of GraphPinnedBuffers the graph uses: held (in address order, before
        // anything else) until the launch is queued, refused while one conflicts.
        let leased = self
            .uses
            .iter()
            .filter_map(|(a, access)| Some((a.lease()?, *access)));
        let _leases = crate::memory::hold_for_launch(leased)?;
        let op = stream.begin_op();
        if op.is_capturing() {
            return Err(Error::InvalidArgument {
                what: "stream to launch a graph on",
                value: format!("stream {}", stream.id()),
                reason: "it is being captured; launch the graph on a stream that is not capturing"
                    .into(),
            });
        }
        // In address order (`merge_uses` sorted them), as every operation takes its allocations.
        for (alloc, access) in self.uses.iter() {
            alloc.use_on(&op, *access)?;
        }
        self.device.bind()?;
        self.launched = true;
        // SAFETY: `self.raw` is live until Drop; `stream` is live while borrowed, on the graph's device
        // (checked, current) and not capturing (checked). What the nodes touch outlives the launch: this
        // crate's allocations are held by `self.uses`, and the stream now waits for their conflicting users
        // and is recorded as a user of each, so none is freed before the launch is done; every captured
        // kernel's Function (its module) is in `self.kept`; anything else a kernel reaches is kept by
        // `self.kept` or was promised by the unsafe launch that captured it (Capture::launch,
        // Function::launch on a capturing stream). The only host-visible memory a node the crate
        // recorded uses is a GraphPinnedBuffer's (captures refuse the rest), whose host borrows that
        // conflict with the graph's accesses are refused until this launch is queued (`_leases`) and
        // wait for it after; memory a kernel reaches otherwise is that unsafe launch's promise.
        unsafe { result::graph::graph_launch(self.raw, stream.raw()) }
    }

    /// Give this executable graph the parameters of `graph`, a new capture of the same work
    /// (`hipGraphExecUpdate`): same nodes, same kernels, other arguments, sizes or buffers. Later launches
    /// run the new parameters; the executable graph then holds what `graph`'s capture kept.
    ///
    /// Launches already queued may still use what the old capture kept, so when this graph was launched
    /// since it was made or last updated, the update first waits for its device (as dropping it does):
    /// an update costs a synchronisation then, not an instantiation.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a graph of another device; HIP's refusal
    /// (`hipErrorGraphExecUpdateFailure`) as [`Error::GraphUpdate`], whose fields say the update result
    /// (topology, node type, function or parameters changed) and the node of `graph` it failed at; the
    /// executable graph is then unchanged and still usable. Also
    /// what HIP returns for making the device current and for the device synchronisation.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, exec: &mut hip::GraphExec, y: &mut DeviceBuffer<u32>) -> hip::Result<()> {
    /// // The same work, captured again with another buffer.
    /// let capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
    /// capture.stream().fill_async(y, 1)?;
    /// exec.update(&capture.end()?)?;
    /// exec.launch(stream)?; // now fills `y`
    /// # Ok(()) }
    /// ```
    pub fn update(&mut self, graph: &Graph) -> Result<()> {
        if graph.device.ordinal() != self.device.ordinal() {
            return Err(Error::InvalidArgument {
                what: "graph to update from",
                value: format!("a graph captured on device {}", graph.device.ordinal()),
                reason: format!(
                    "this executable graph belongs to device {}",
                    self.device.ordinal()
                ),
            });
        }
        self.device.bind()?;
        if self.launched {
            // Queued launches may use the old parameters: what the old capture kept must outlive them.
            result::device_synchronize()?;
            self.launched = false;
        }
        let serialised = lock(&graph.calls);
        // SAFETY: both handles are live (each until its owner drops), on one device (checked, current),
        // and `graph.calls` is held. Launches queued with the old parameters finished (synchronised above
        // when there were any), so what the old capture kept may go; what the new nodes touch is kept by
        // `graph.kept` and `graph.uses`, taken below, or was promised by the unsafe launch that captured
        // it.
        unsafe { result::graph::graph_exec_update(self.raw, graph.raw)? };
        drop(serialised);
        self.kept = graph.kept.clone();
        self.uses = graph.uses.clone();
        Ok(())
    }
}

impl Drop for GraphExec {
    fn drop(&mut self) {
        if crate::release::in_host_fn() {
            // No HIP call inside a host function (and the device synchronization below would wait for
            // the function itself): the releasing thread drops it.
            let moved = GraphExec {
                raw: self.raw,
                device: self.device.clone(),
                kept: self.kept.clone(),
                uses: self.uses.clone(),
                launched: self.launched,
                origin: self.origin,
            };
            crate::release::defer(Box::new(move || drop(moved)));
            return;
        }
        let bound = self.device.bind().is_ok();
        if self.launched {
            // A launch may still run: let it finish before the kept buffers can be freed. If the device
            // cannot say it finished (a broken device), what the capture kept is leaked, never released
            // under a launch that may still use it (allocations in `uses` wait for their streams anyway).
            if !(bound && result::device_synchronize().is_ok()) {
                std::mem::forget(self.kept.clone());
            }
        }
        // SAFETY: `self.raw` came from hipGraphInstantiate and is destroyed only here, once; a launch
        // still queued keeps running (HIP allows destroying an executable graph with launches pending).
        let _ = unsafe { result::graph::graph_exec_destroy(self.raw) };
    }
}

mod parts;
pub(crate) use parts::ExecParts;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_modes_map_to_hip_values() {
        assert_eq!(CaptureMode::Global.raw(), sys::hipStreamCaptureModeGlobal);
        assert_eq!(
            CaptureMode::ThreadLocal.raw(),
            sys::hipStreamCaptureModeThreadLocal
        );
        assert_eq!(CaptureMode::Relaxed.raw(), sys::hipStreamCaptureModeRelaxed);
        assert_ne!(CaptureMode::Global.raw(), CaptureMode::ThreadLocal.raw());
    }
}
