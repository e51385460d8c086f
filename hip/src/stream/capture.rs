//! The capture log and a stream's capture state: what a capture recorded (the graph keeps it alive), and
//! how a stream enters, joins and leaves a capture with its gate closed.

use super::{lock, StreamHandle};
use crate::error::{Error, Result};
use crate::queue::Access;
use std::any::Any;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// What a capture recorded: every allocation an operation on a capturing stream touched and how (the
/// graph keeps each alive and orders its launches by them), every kernel launched on a capturing stream
/// (the graph keeps its module loaded), and the streams that joined the capture through an event (their
/// capture state ends with the capture).
#[derive(Default)]
pub(crate) struct CaptureLog {
    /// The allocations captured operations touched, and how (the memory model puts its `Allocation`s in;
    /// the graph takes them out). Held as `Any` so that streams stay below memory.
    pub(crate) uses: Mutex<Vec<(Arc<dyn Any + Send + Sync>, Access)>>,
    /// What the graph must keep alive besides: the functions (modules) of captured kernels.
    pub(crate) kept: Mutex<Vec<Arc<dyn Any + Send + Sync>>>,
    joined: Mutex<Joined>,
}

/// The streams that joined a capture, and whether it has ended (no stream may join it then).
#[derive(Default)]
struct Joined {
    streams: Vec<Arc<StreamHandle>>,
    ended: bool,
}

impl StreamHandle {
    /// The capture recording this stream, if any.
    pub(crate) fn capture_log(&self) -> Option<Arc<CaptureLog>> {
        lock(&self.capture).clone()
    }

    /// Start recording this stream into `log`: a marker is recorded first (it covers everything queued
    /// before the capture, and stands for this stream's work while the capture lasts), then `begin` runs
    /// (`hipStreamBeginCapture`), all with the gate closed (no operation in progress) and under the
    /// markers' lock (no marker lands inside). A stream already
    /// capturing is refused ([`Error::InvalidArgument`]).
    pub(crate) fn begin_capture(
        self: &Arc<Self>,
        log: &Arc<CaptureLog>,
        begin: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let _gate = self.close_gate();
        if self.is_capturing() {
            return Err(Error::InvalidArgument {
                what: "stream to capture",
                value: format!("stream {}", self.id),
                reason: "it is already being captured".into(),
            });
        }
        self.enter_locked(log, begin)
    }

    /// Enter the capture with the gate closed by the caller.
    fn enter_locked(
        &self,
        log: &Arc<CaptureLog>,
        begin: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let (event, label) = self.queue.event_covering(crate::queue::OPEN)?;
        let mut markers = lock(&self.queue.markers);
        markers.at_capture = Some((event, label));
        *lock(&self.capture) = Some(log.clone());
        self.capturing.store(true, Ordering::Release);
        if let Err(e) = begin() {
            *lock(&self.capture) = None;
            self.capturing.store(false, Ordering::Release);
            markers.at_capture = None;
            return Err(e);
        }
        Ok(())
    }

    /// Join this stream to the capture recording `log` by `wait` (a wait on an event recorded in it): its
    /// later operations are recorded there, and its capture state ends with that capture. A capture that
    /// has ended, or a stream in another capture, is refused ([`Error::InvalidArgument`]).
    pub(crate) fn join_capture(
        self: &Arc<Self>,
        log: &Arc<CaptureLog>,
        wait: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let _gate = self.close_gate();
        let refuse = |reason: &str| Error::InvalidArgument {
            what: "event to wait for",
            value: format!(
                "an event recorded in a capture, waited for on stream {}",
                self.id
            ),
            reason: reason.into(),
        };
        match self.capture_log() {
            Some(l) if Arc::ptr_eq(&l, log) => return wait(),
            Some(_) => return Err(refuse("the stream is being captured into another graph")),
            None => {}
        }
        // Under `joined`'s lock: the capture cannot end between this check and the push, and its end
        // (which closes this stream's gate before ending) comes after the wait is queued.
        let mut joined = lock(&log.joined);
        if joined.ended {
            return Err(refuse(
                "the capture it was recorded in has ended: record a new event outside a capture",
            ));
        }
        self.enter_locked(log, wait)?;
        joined.streams.push(self.clone());
        Ok(())
    }

    /// End the capture this stream began: `end` (`hipStreamEndCapture`) runs with the gates of this
    /// stream and of every stream that joined it closed; then they are all live again, and no stream can
    /// join the capture any more.
    pub(crate) fn end_capture<T>(&self, end: impl FnOnce() -> T) -> T {
        let _gate = self.close_gate();
        let joined = match lock(&self.capture).clone() {
            Some(log) => {
                let mut j = lock(&log.joined);
                j.ended = true;
                std::mem::take(&mut j.streams)
            }
            None => Vec::new(),
        };
        let others: Vec<&Arc<StreamHandle>> = joined
            .iter()
            .filter(|j| !std::ptr::eq(Arc::as_ptr(j), self))
            .collect();
        let gates: Vec<_> = others.iter().map(|j| j.close_gate()).collect();
        let r = end();
        for s in others.iter().map(|j| j.as_ref()).chain([self]) {
            *lock(&s.capture) = None;
            lock(&s.queue.markers).at_capture = None;
            s.capturing.store(false, Ordering::Release);
        }
        drop(gates);
        r
    }
}

impl std::fmt::Debug for CaptureLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaptureLog")
            .field("uses", &lock(&self.uses).len())
            .finish()
    }
}

impl CaptureLog {
    /// Record that a captured operation makes `access` to `allocation`.
    pub(crate) fn record(&self, allocation: Arc<dyn Any + Send + Sync>, access: Access) {
        lock(&self.uses).push((allocation, access));
    }
}

#[cfg(test)]
impl StreamHandle {
    /// Put the stream into `log`'s capture (or out of any, `None`) as this crate's captures do, without
    /// HIP: for unit tests of what a capturing stream refuses.
    pub(crate) fn capture_for_unit_tests(&self, log: Option<Arc<CaptureLog>>) {
        let _gate = self.close_gate();
        self.capturing.store(log.is_some(), Ordering::Release);
        *lock(&self.capture) = log;
    }
}
