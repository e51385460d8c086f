//! Stream capture: [`Stream::begin_capture`] -> [`Capture`] -> [`Graph`], and what a capture records
//! for the graph (the allocations its operations use and the owners it keeps alive).

use super::Graph;
#[cfg(doc)]
use super::GraphExec;
use crate::error::{Error, Result};
use crate::launch::{LaunchArgs, LaunchConfig};
use crate::memory::{Access, Allocation};
use crate::module::Function;
use crate::result;
use crate::stream::{lock, CaptureLog, Stream};
use hip_sys as sys;
use std::any::Any;
use std::marker::PhantomData;
use std::sync::Arc;

/// Which other threads' work a capture refuses (`hipStreamCaptureMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureMode {
    /// Potentially unsafe calls (synchronous copies, ...) are refused on every thread while any global
    /// capture is under way.
    Global,
    /// Such calls are refused only on the capturing thread.
    ThreadLocal,
    /// No calls are refused: the caller knows what it does.
    Relaxed,
}

impl CaptureMode {
    /// The HIP value.
    pub fn raw(self) -> sys::hipStreamCaptureMode {
        match self {
            CaptureMode::Global => sys::hipStreamCaptureModeGlobal,
            CaptureMode::ThreadLocal => sys::hipStreamCaptureModeThreadLocal,
            CaptureMode::Relaxed => sys::hipStreamCaptureModeRelaxed,
        }
    }
}

pub(crate) type Kept = Vec<Arc<dyn Any + Send + Sync>>;

/// The allocations a graph's operations touch, each once (a write where any operation writes it).
pub(crate) type Uses = Vec<(Arc<Allocation>, Access)>;

pub(crate) fn merge_uses(mut all: Uses) -> Uses {
    all.sort_by_key(|(a, _)| Arc::as_ptr(a) as usize);
    let mut merged: Uses = Vec::with_capacity(all.len());
    for (alloc, access) in all {
        match merged.last_mut() {
            Some((last, a)) if Arc::ptr_eq(last, &alloc) => {
                if access == Access::Write {
                    *a = Access::Write;
                }
            }
            _ => merged.push((alloc, access)),
        }
    }
    merged
}

/// A capture under way on one stream. End it with [`Capture::end`]; dropping it ends the capture and
/// throws the graph away, so the stream never stays in capture mode. Not `Send`: thread-local captures
/// must end on the thread that began them.
pub struct Capture<'s> {
    stream: &'s Stream,
    log: Arc<CaptureLog>,
    kept: Kept,
    ended: bool,
    _not_send: PhantomData<*const ()>,
}

impl Stream {
    /// Begin recording this stream's work into a graph (`hipStreamBeginCapture`); see [`crate::graph`]
    /// for an example.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for the default (null) stream, which cannot be captured, and for a
    /// stream already capturing; what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, x: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// let capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
    /// capture.stream().fill_async(x, 0.0)?; // recorded into the graph, not run
    /// let graph = capture.end()?;
    /// # Ok(()) }
    /// ```
    pub fn begin_capture(&self, mode: CaptureMode) -> Result<Capture<'_>> {
        if self.is_default() {
            return Err(Error::InvalidArgument {
                what: "stream to capture",
                value: "default stream".into(),
                reason: "HIP cannot capture the default (null) stream: create one with Stream::new"
                    .into(),
            });
        }
        let log = Arc::new(CaptureLog::default());
        self.device().bind()?;
        self.handle().begin_capture(&log, || {
            // SAFETY: `self.raw()` is live while `self` is borrowed and is not the null stream (refused
            // above); its device is current. It is not being captured already (`begin_capture` checked,
            // with every other operation on the stream held off until the capture has begun).
            unsafe { result::graph::stream_begin_capture(self.raw(), mode.raw()) }
        })?;
        Ok(Capture {
            stream: self,
            log,
            kept: Vec::new(),
            ended: false,
            _not_send: PhantomData,
        })
    }
}

/// What the runtime says of a stream's capture ([`Stream::capture_status`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureStatus {
    /// The stream is not being captured.
    None,
    /// A capture records the stream's work; `id` names the capture (unique in the process).
    Active {
        /// The capture's id.
        id: u64,
    },
    /// The capture was broken (an operation it cannot record); ending it fails.
    Invalidated {
        /// The capture's id.
        id: u64,
    },
}

impl Stream {
    /// The runtime's view of this stream's capture (`hipStreamGetCaptureInfo`), as opposed to
    /// [`is_capturing`](Stream::is_capturing), the crate's own record: it also sees a capture begun
    /// outside this crate (raw calls), and an invalidated one. Two streams in one capture (one joined
    /// the other's by waiting on an event recorded in it) report the same id.
    ///
    /// # Errors
    ///
    /// What HIP returns for making the device current and for `hipStreamGetCaptureInfo`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # use hip::CaptureStatus;
    /// # fn f(stream: &Stream) -> hip::Result<()> {
    /// assert_eq!(stream.capture_status()?, CaptureStatus::None);
    /// let capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
    /// assert!(matches!(stream.capture_status()?, CaptureStatus::Active { .. }));
    /// capture.end()?;
    /// # Ok(()) }
    /// ```
    pub fn capture_status(&self) -> Result<CaptureStatus> {
        self.device().bind()?;
        // SAFETY: `self.raw()` is live while `self` is borrowed (or null, the device's null stream); its
        // device is current.
        let (status, id) = unsafe { result::graph::stream_get_capture_info(self.raw()) }?;
        Ok(match status {
            sys::hipStreamCaptureStatusActive => CaptureStatus::Active { id },
            sys::hipStreamCaptureStatusInvalidated => CaptureStatus::Invalidated { id },
            _ => CaptureStatus::None,
        })
    }
}

impl<'s> Capture<'s> {
    /// The stream being captured: queue work on it (copies, memsets, host functions) to record it.
    pub fn stream(&self) -> &'s Stream {
        self.stream
    }

    /// Move an owner into the graph: it lives until the last [`GraphExec`] made from this capture is dropped
    /// (and the device is done with it). This crate's buffers and views used by captured operations are
    /// kept without it; keep here what a kernel reaches another way (a pointer inside a struct).
    ///
    /// To give a graph new inputs every replay, do not move its buffers in: keep them, and copy into and
    /// out of them between replays with the usual calls, which the memory model orders against the
    /// replays (`examples/graph_replay.rs`).
    pub fn keep<T: Any + Send + Sync>(&mut self, owner: Arc<T>) -> &mut Self {
        self.kept.push(owner);
        self
    }

    /// Record a kernel launch on the captured stream; the graph keeps a clone of `function` (its module
    /// stays loaded).
    ///
    /// # Safety
    /// As [`Function::launch`], and more: memory the kernel reaches other than through this crate's
    /// buffers and views in `args` stays valid for every launch of every [`GraphExec`] made from this
    /// capture (move it in with [`Capture::keep`], or make sure it outlives them), and the arguments'
    /// device addresses are what each replay should use (a graph replays the captured values).
    ///
    /// # Errors
    ///
    /// As [`Function::launch`], nothing recorded when refused: [`Error::InvalidLaunch`] for a
    /// configuration the device cannot run or a function of another device, [`Error::ArgumentMismatch`]
    /// for arguments that do not match the kernel's signature, [`Error::DeviceMismatch`] for memory the
    /// device cannot reach, [`Error::TooManyArguments`], [`Error::InvalidArgument`] for pinned or managed
    /// memory among the arguments (refused in a capture), and what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, scale: &Function, x: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// let n = x.len() as u32;
    /// let mut capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
    /// // SAFETY: `scale(float* x, unsigned n)` writes x[0..n); `x` is kept alive by the graph.
    /// unsafe {
    ///     capture.launch(
    ///         scale,
    ///         &LaunchConfig::for_num_elems(n),
    ///         LaunchArgs::new().arg_mut(x).arg(&n),
    ///     )?;
    /// }
    /// let mut exec = capture.end()?.instantiate()?;
    /// exec.launch(stream)?;
    /// # Ok(()) }
    /// ```
    pub unsafe fn launch(
        &mut self,
        function: &Function,
        config: &LaunchConfig,
        args: &mut LaunchArgs<'_>,
    ) -> Result<()> {
        // `Function::launch` on a capturing stream records the function in the capture (and so the graph).
        // SAFETY: the caller's contract, which includes `Function::launch`'s for every replay.
        unsafe { function.launch(self.stream, config, args) }
    }

    /// Record a cooperative kernel launch (`hipModuleLaunchCooperativeKernel` while capturing): a kernel
    /// node whose grid is co-resident at every replay, so its blocks may synchronize grid-wide.
    /// Checked and ordered as [`Function::launch_cooperative`]: a grid that cannot be co-resident is
    /// refused with the occupancy numbers, nothing recorded.
    ///
    /// # Safety
    ///
    /// As [`Function::launch_cooperative`], for every replay of every executable graph made from this
    /// capture.
    ///
    /// # Errors
    ///
    /// As [`launch`](Self::launch) and [`Function::launch_cooperative`]; what the runtime answers for a
    /// cooperative launch on a capturing stream.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, sum_all: &Function, x: &mut DeviceBuffer<u32>) -> hip::Result<()> {
    /// let blocks = sum_all.max_cooperative_grid(64, 0)?;
    /// let mut capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
    /// // SAFETY: `sum_all(unsigned* x)` writes x[0..blocks) and every block reaches the grid barrier.
    /// unsafe {
    ///     capture.launch_cooperative(sum_all, &LaunchConfig::new(blocks, 64), LaunchArgs::new().arg_mut(x))?;
    /// }
    /// capture.end()?.instantiate()?.launch(stream)?;
    /// # Ok(()) }
    /// ```
    pub unsafe fn launch_cooperative(
        &mut self,
        function: &Function,
        config: &LaunchConfig,
        args: &mut LaunchArgs<'_>,
    ) -> Result<()> {
        // SAFETY: the caller's contract, which is `Function::launch_cooperative`'s for every replay.
        unsafe { function.launch_cooperative(self.stream, config, args) }
    }

    /// Record a host node on the captured stream (`hipLaunchHostFunc` while capturing): every replay
    /// of every executable graph made from this capture runs `f` on a runtime thread after the work
    /// captured before it, and the work captured after it waits until `f` returns. The graph owns `f`
    /// and drops it with itself, after its last replay is done.
    ///
    /// What [`GraphBuilder::host`](crate::GraphBuilder::host) is for a graph built node by node, and
    /// with the same rules: `f` is `Fn + Sync` (replays of two executable graphs may run it at once),
    /// must not call HIP, should be short, and a panic in it is caught and counted by the returned
    /// [`HostNodeHandle`](crate::HostNodeHandle), the graph going on.
    /// [`Stream::launch_host_fn`](crate::Stream::launch_host_fn), whose closure runs once, is refused
    /// on a capturing stream.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] where the crate was linked against AMD's HIP 5.2 (its library lacks
    /// `hipLaunchHostFunc`: build a [`GraphBuilder`](crate::GraphBuilder) with a host node instead; with
    /// `dynamic-loading`, the call answers that the library lacks the symbol);
    /// what making the device current and `hipLaunchHostFunc` return (`f` is then dropped, never run).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, x: &mut DeviceBuffer<u32>) -> hip::Result<()> {
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// let replays = std::sync::Arc::new(AtomicU32::new(0));
    /// let mut capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
    /// capture.stream().fill_async(x, 7)?;
    /// let r = replays.clone();
    /// let runs = capture.host(move || {
    ///     r.fetch_add(1, Ordering::Relaxed);
    /// })?;
    /// let mut exec = capture.end()?.instantiate()?;
    /// exec.launch(stream)?;
    /// exec.launch(stream)?;
    /// stream.synchronize()?;
    /// assert_eq!((replays.load(Ordering::Relaxed), runs.runs()), (2, 2));
    /// # Ok(()) }
    /// ```
    pub fn host<F: Fn() + Send + Sync + 'static>(&mut self, f: F) -> Result<crate::HostNodeHandle> {
        #[cfg(hip_launch_host_func)]
        {
            use super::host_node::{run_host_node, HostNode};
            let (node, handle) = HostNode::new(f);
            // Held across the call: the stream's other operations wait, and the capture cannot end.
            let op = self.stream.begin_op();
            if !op.is_capturing() {
                return Err(Error::InvalidArgument {
                    what: "capture host node",
                    value: format!("stream {}", self.stream.id()),
                    reason: "the stream's capture has ended".into(),
                });
            }
            self.stream.device().bind()?;
            let p = Arc::as_ptr(&node) as *mut std::ffi::c_void;
            // SAFETY: `self.stream` is live (borrowed by the capture) and being captured (checked under
            // `op`, held through the call). `p` names the `HostNode` this capture's graph keeps (below)
            // until its last executable graph is dropped and done, so every replay's call of
            // `run_host_node` finds it alive; that function only reads it, never unwinds, and may run on
            // any thread, several at once (`HostNode` is Send + Sync).
            unsafe { result::host_fn::launch_host_func(self.stream.raw(), run_host_node, p) }?;
            drop(op);
            self.kept.push(node);
            Ok(handle)
        }
        #[cfg(not(hip_launch_host_func))]
        {
            drop(f);
            Err(Error::NotSupported {
                what: "host nodes in a capture (Capture::host)",
                reason: "this build's HIP (AMD's 5.2) lacks hipLaunchHostFunc, the call a capture \
                         records as a host node: add the node with GraphBuilder::host",
            })
        }
    }

    /// End the capture (`hipStreamEndCapture`) and return the graph, holding what was kept.
    ///
    /// # Errors
    ///
    /// What HIP returns, notably `hipErrorStreamCaptureInvalidated` when an operation during the capture
    /// broke it (a synchronous call HIP refuses while capturing, another thread's, in `Global` mode).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, x: &mut DeviceBuffer<u32>) -> hip::Result<()> {
    /// let capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
    /// capture.stream().fill_async(x, 1)?;
    /// let graph = capture.end()?;
    /// assert_eq!(graph.node_count()?, 1);
    /// # Ok(()) }
    /// ```
    pub fn end(mut self) -> Result<Graph> {
        self.ended = true;
        let raw = finish(self.stream)?;
        let logged = std::mem::take(&mut *lock(&self.log.uses));
        self.kept.extend(std::mem::take(&mut *lock(&self.log.kept)));
        // The log holds only allocations here (the memory model records them); whatever it held is kept
        // alive with the graph all the same.
        let mut uses = Vec::with_capacity(logged.len());
        for (any, access) in logged {
            match Arc::downcast::<Allocation>(any) {
                Ok(alloc) => uses.push((alloc, access)),
                Err(other) => self.kept.push(other),
            }
        }
        Ok(Graph {
            raw,
            calls: std::sync::Mutex::new(()),
            device: self.stream.device().clone(),
            kept: Arc::new(std::mem::take(&mut self.kept)),
            uses: Arc::new(merge_uses(uses)),
            origin: 0,
            removed: Vec::new(),
        })
    }
}

/// End the capture on `stream` (and on the streams that joined it).
fn finish(stream: &Stream) -> Result<sys::hipGraph_t> {
    stream.handle().end_capture(|| {
        stream
            .device()
            .bind()
            // SAFETY: `stream` is live (borrowed by the Capture) and being captured: `finish` runs once
            // per Capture, from `end` or from Drop (`ended` says which), after begin_capture succeeded.
            .and_then(|()| unsafe { result::graph::stream_end_capture(stream.raw()) })
    })
}

impl Drop for Capture<'_> {
    fn drop(&mut self) {
        if !self.ended {
            if let Ok(g) = finish(self.stream) {
                if !g.is_null() {
                    // SAFETY: the graph hipStreamEndCapture just returned, live and owned by nothing else;
                    // destroyed once.
                    let _ = unsafe { result::graph::graph_destroy(g) };
                }
            }
        }
    }
}
