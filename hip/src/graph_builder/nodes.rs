//! Host and event nodes of a [`GraphBuilder`]: a Rust closure the graph owns and runs at every replay
//! (`crate::graph::host_node`), and records of, or waits on, an [`Event`] the graph keeps.

use super::{GraphBuilder, GraphNode};
use crate::error::Result;
use crate::event::Event;
use crate::graph::host_node::{run_host_node, HostNode, HostNodeHandle};
use crate::result;
use std::ffi::c_void;
use std::sync::Arc;

impl GraphBuilder {
    /// Add a node that runs `f` on a runtime thread after `deps`, at every launch of every executable
    /// graph made from this builder (`hipGraphAddHostNode`); the nodes after it wait until `f` returns.
    /// The graph owns `f` and drops it with the graph, after its last launch is done.
    ///
    /// `f` is `Fn + Sync`: two executable graphs of one builder may run it at once on two runtime
    /// threads. As with [`Stream::launch_host_fn`](crate::Stream::launch_host_fn), `f` must not call HIP
    /// (the runtime may deadlock; the crate's host waits refuse inside it), should be short, and a
    /// panic in it is caught and counted by the returned [`HostNodeHandle`], the graph going on.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a dependency of another builder;
    /// what making the device current and `hipGraphAddHostNode` return (`f` is then dropped, never
    /// run).
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device, stream: &hip::Stream) -> hip::Result<()> {
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::sync::Arc;
    /// let ticks = Arc::new(AtomicU32::new(0));
    /// let mut b = hip::GraphBuilder::new(device)?;
    /// let t = ticks.clone();
    /// let (_node, runs) = b.host(&[], move || {
    ///     t.fetch_add(1, Ordering::Relaxed);
    /// })?;
    /// let mut exec = b.build()?.instantiate()?;
    /// exec.launch(stream)?;
    /// exec.launch(stream)?;
    /// stream.synchronize()?;
    /// assert_eq!(ticks.load(Ordering::Relaxed), 2);
    /// assert_eq!((runs.runs(), runs.panics()), (2, 0));
    /// # Ok(()) }
    /// ```
    pub fn host<F: Fn() + Send + Sync + 'static>(
        &mut self,
        deps: &[GraphNode],
        f: F,
    ) -> Result<(GraphNode, HostNodeHandle)> {
        let raw_deps = self.deps("graph host node", deps)?;
        let (node, handle) = HostNode::new(f);
        self.device.bind()?;
        let p = Arc::as_ptr(&node) as *mut c_void;
        // SAFETY: `self.raw` is live and `raw_deps` are its nodes (checked). `p` names the `HostNode`
        // this graph keeps (below) until its last executable graph is dropped and done, so every call
        // of `run_host_node` finds it alive; that function only reads it (atomics, a mutex, a `Fn +
        // Sync` closure), never unwinds, and may run on any thread (`HostNode` is Send + Sync).
        let raw =
            unsafe { result::graph_build::add_host_node(self.raw, &raw_deps, run_host_node, p)? };
        self.kept.push(node);
        Ok((self.added(raw, deps), handle))
    }

    /// Add a record of `event` after `deps` (`hipGraphAddEventRecordNode`): at each launch the event
    /// completes when the nodes before it have; a stream may wait for it
    /// ([`Stream::wait_event`](crate::Stream::wait_event)), the host query or synchronize it. The graph
    /// keeps `event`.
    ///
    /// A replay records the event where this crate does not see it, so from now on its records teach
    /// the memory model nothing (it keeps ordering buffers by its own waits, as for work it cannot see).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a dependency of another builder,
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) for an event of another device; what
    /// making the device current and `hipGraphAddEventRecordNode` return.
    ///
    /// ```no_run
    /// # fn f(b: &mut hip::GraphBuilder, after: hip::GraphNode) -> hip::Result<()> {
    /// let done = std::sync::Arc::new(hip::Event::new(b.device())?);
    /// b.record_event(&[after], &done)?;
    /// # Ok(()) }
    /// ```
    pub fn record_event(&mut self, deps: &[GraphNode], event: &Arc<Event>) -> Result<GraphNode> {
        const WHAT: &str = "graph event record node";
        let raw_deps = self.deps(WHAT, deps)?;
        crate::event::same_device(WHAT, &self.device, event.device())?;
        // Before HIP can record it in a replay: no position learnt from here on.
        event.mark_replayed();
        self.device.bind()?;
        // SAFETY: `self.raw` is live and `raw_deps` are its nodes (checked); the event is live and of
        // this device (checked), and the graph keeps it (below) until its last executable graph is done.
        let raw = unsafe {
            result::graph_build::add_event_record_node(self.raw, &raw_deps, event.raw())?
        };
        self.kept.push(event.clone());
        Ok(self.added(raw, deps))
    }

    /// Add a wait for `event` after `deps` (`hipGraphAddEventWaitNode`): at each launch, the nodes after
    /// this one wait until the event's record current at that moment completes (an event never recorded
    /// waits for nothing). The graph keeps `event`. For ordering work this crate cannot see: the memory
    /// model orders the crate's buffers without it.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a dependency of another builder,
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) for an event of another device; what
    /// making the device current and `hipGraphAddEventWaitNode` return.
    ///
    /// ```no_run
    /// # fn f(b: &mut hip::GraphBuilder, ready: &std::sync::Arc<hip::Event>) -> hip::Result<()> {
    /// let gate = b.wait_event(&[], ready)?;
    /// # Ok(()) }
    /// ```
    pub fn wait_event(&mut self, deps: &[GraphNode], event: &Arc<Event>) -> Result<GraphNode> {
        const WHAT: &str = "graph event wait node";
        let raw_deps = self.deps(WHAT, deps)?;
        crate::event::same_device(WHAT, &self.device, event.device())?;
        self.device.bind()?;
        // SAFETY: as in `record_event`.
        let raw =
            unsafe { result::graph_build::add_event_wait_node(self.raw, &raw_deps, event.raw())? };
        self.kept.push(event.clone());
        Ok(self.added(raw, deps))
    }
}
