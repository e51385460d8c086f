//! GPU work as Rust futures: await a stream, an event or a copy to the host without blocking a thread.
//!
//! Only `std::task` is used: the futures run on any executor (tokio, async-std, smol, a hand-written
//! `block_on`). Each is `Send + 'static` and resolves to a [`Result`]:
//!
//! - [`Stream::completion`]: everything queued on the stream so far;
//! - [`Event::completion`]: the work the event's last record covers;
//! - [`DeviceBuffer::to_vec_future`](crate::DeviceBuffer::to_vec_future) (and on views): the contents, as a
//!   `Vec`, once the copy that reads them is done;
//! - [`Stream::copy_to_pinned_future`]: a [`PinnedBuffer`](crate::PinnedBuffer) handed back once the copy
//!   into it is done (reusable staging, no allocation per read).
//!
//! # How a future wakes
//!
//! With [`Wake::Thread`] (chosen by [`set_wake`] or `HIP_RS_FUTURE_WAKE=thread`), creating a future records
//! an event on the stream right after its work and hands it to the stream's waiting thread (one per stream
//! with pending futures, started on its first future and ended after a second with none pending; not one per
//! wait). That thread takes its stream's events in record order, polls each with `hipEventQuery` for up to 50
//! us, then blocks in `hipEventSynchronize` (the events are made with `hipEventBlockingSync`: it sleeps, it
//! does not spin), stores the status (`hipSuccess`, or the error the stream is in), takes the stored
//! [`Waker`](std::task::Waker) and wakes it. Nothing is queued in the stream besides the event, so later work
//! there runs on. A pending future costs one event (from a pool) and a few words of shared state: thousands
//! may be pending at once. When the future is polled after that, it reports the error if the status was one,
//! and otherwise teaches the memory model that the stream's work up to the future's position is complete:
//! later host accesses of the same memory do not wait again.
//!
//! The work is queued when the future is created (program order, like every `_async` method), not when it
//! is first polled. Errors found then (no device, a stream being captured, bad lengths) are the future's
//! output. Inside a graph capture every future is refused ([`Error::InvalidArgument`]): an event recorded
//! there belongs to the capture (a point of the graph, not of the stream's live work), and the host
//! cannot wait for it.
//!
//! [`Wake::Reactor`], the default (ahead of the waiting thread in every futures row measured on an H100:
//! round trip, wall and CPU time of a long wait, a pipeline's throughput), queues a stream write of a ticket
//! into a pinned slot instead of the event (`hipStreamWriteValue64`), and one scanner thread for the process
//! reads the slots of every pending future: it sleeps until shortly before a completion is expected (the
//! stream's recent completion times say when), spins around it, backs off to short sleeps, fires every future
//! whose ticket arrived in one scan, and sleeps on a condition variable while nothing is pending. A stream in
//! an error state never writes its ticket: the scanner asks it `hipStreamQuery` every 20 ms while its futures
//! are pending and fires them with the error. Where the device has no 64-bit stream memory operations, a
//! future created with the reactor chosen uses the waiting thread ([`reactor_stats`] counts both). Everything
//! below holds for both.
//!
//! # Cancellation
//!
//! Dropping a future before it resolves never frees memory the queued work still uses and never leaks it:
//! what the work needs (the pinned staging buffer, the source allocation, the stream) is handed to the
//! future's shared state, and released once the work is done: the memory model learns the work is
//! complete, then the crate's releasing thread drops what the future kept (never the waiting thread,
//! whose next futures would wait behind a free). If the wait never ends (a device that hangs), that
//! memory is kept, never freed under work.
//!
//! # Costs
//!
//! Against a thread blocked in `hipStreamSynchronize`: the reactor's scanner sleeps until shortly before
//! a completion is expected and spins around it, so a wait costs about one thread wake (the executor's)
//! more than a blocked thread; on an H100 a short round trip took 1.36x a blocked thread's and an awaited
//! 1 ms kernel 1.04x its wall time with about a tenth of its CPU time. The waiting thread polls
//! `hipEventQuery` for 50 us, then sleeps in `hipEventSynchronize` on a blocking-sync event: a short wait
//! costs two thread wakes (1.43x there), a long one 50 us of CPU and then none.
//! `examples/futures_bench.rs` measures both against a blocked thread on your machine.

mod reactor;
mod read;
mod signal;
#[cfg(test)]
mod tests;
mod waiter;
mod wake;

pub use reactor::{reactor_stats, ReactorStats};
pub use read::{PinnedCopy, ReadFuture};
pub use wake::{set_wake, wake, Wake};

use crate::error::{Error, Result};
use crate::event::Event;
use crate::stream::{Stream, StreamHandle, StreamOp};
use signal::{Pending, Signal};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// What a completion keeps until it resolves: the stream (alive while its event is waited for), and the
/// position the event follows, for the memory model's knowledge.
struct Position {
    stream: Arc<StreamHandle>,
    label: u64,
}

impl Position {
    /// The event completed with `hipSuccess`: the work up to `label` is complete.
    fn completed(&self) {
        self.stream.queue.complete_through(self.label);
    }
}

impl signal::Settle for Position {
    fn settle(&self) {
        self.completed();
    }
}

/// The future of [`Stream::completion`] and [`Event::completion`]: resolves to `Ok(())` once the work is
/// done, or to the error the stream is in.
#[must_use = "a future does nothing unless awaited (the work itself is queued already)"]
pub struct Completion {
    state: State<Position>,
}

/// Where a future stands: refused at creation, or waiting for its event (and resolved once polled
/// after it).
enum State<P: signal::Settle> {
    Failed(Option<Error>),
    Waiting(Pending<P>),
}

impl std::fmt::Debug for Completion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completion")
            .field("pending", &matches!(self.state, State::Waiting(_)))
            .finish()
    }
}

impl Future for Completion {
    type Output = Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        match &mut self.get_mut().state {
            State::Failed(e) => Poll::Ready(Err(e.take().unwrap_or_else(polled_again))),
            State::Waiting(p) => p.poll(cx).map(|(status, position)| {
                let position = position.ok_or_else(polled_again)?;
                status?;
                position.completed();
                Ok(())
            }),
        }
    }
}

/// The error a future resolves to when polled again after it resolved (executors do not do this).
fn polled_again() -> Error {
    Error::InvalidArgument {
        what: "future",
        value: "polled after it resolved".into(),
        reason: "a future's output is handed over once".into(),
    }
}

/// The refusal of a future on a stream that a capture records (`on`: which stream, or event).
fn refuse_in_capture(what: &'static str, on: String) -> Error {
    Error::InvalidArgument {
        what: "future on a capturing stream",
        value: format!("{what} on {on}"),
        reason: "the stream is being captured into a graph: the event a future records there would \
                 belong to the capture (a point of the graph, not of the stream's live work) and cannot \
                 be waited for; await the graph's launch on a live stream instead, after the capture ends"
            .into(),
    }
}

/// Record the completion event (or, with [`Wake::Reactor`], queue the reactor's ticket write) on the
/// stream `op` holds, keeping `payload` until it resolves,
/// then end `op`. Call with `op` held (its capture state checked), after the work the future waits for
/// was queued. On failure the payload is dropped after `op` ended.
fn queue_on<P: signal::Settle>(op: StreamOp<'_>, payload: P) -> Result<Pending<P>> {
    let handle = op.handle();
    let signal = Arc::new(Signal::default());
    let watched = handle.device.bind().and_then(|()| {
        // SAFETY: `op` holds the stream's gate and its stream is not being captured (the callers
        // checked); `bind` made its device current.
        if wake() == Wake::Reactor && unsafe { reactor::watch(handle, &signal) } {
            return Ok(());
        }
        // SAFETY: `handle.raw` is live (the handle is held by the caller's borrow, and by the payload
        // until the event was waited for) or null (the device's null stream), and `bind` made its device
        // current.
        unsafe { waiter::watch(handle.raw, &handle.device, signal.clone()) }
    });
    drop(op);
    match watched {
        Ok(()) => Ok(Pending::new(signal, payload)),
        Err(e) => {
            drop(payload);
            Err(e)
        }
    }
}

impl Completion {
    /// The future of a completion that started (`Ok`) or was refused at once.
    fn from_start(started: Result<Pending<Position>>) -> Completion {
        Completion {
            state: match started {
                Ok(p) => State::Waiting(p),
                Err(e) => State::Failed(Some(e)),
            },
        }
    }
}

impl Stream {
    /// A future that resolves once everything queued on this stream so far is done: the asynchronous
    /// [`Stream::synchronize`]. It resolves to the stream's error if the stream is in one. Refused
    /// ([`Error::InvalidArgument`]) while a capture records the stream.
    ///
    /// The memory model learns the completion when the future resolves: a
    /// [`PinnedBuffer::as_slice`](crate::PinnedBuffer::as_slice) of memory that work wrote then
    /// returns without waiting.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # async fn f(device: &Device, host: &PinnedBuffer<f32>, dev: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// let stream = Stream::new(device)?;
    /// stream.copy_from_host_async(host, dev)?;
    /// stream.completion().await?; // the host may change `host` now, without waiting
    /// # Ok(()) }
    /// ```
    pub fn completion(&self) -> Completion {
        Completion::from_start(self.start_completion())
    }

    fn start_completion(&self) -> Result<Pending<Position>> {
        let op = self.begin_op();
        if op.is_capturing() {
            return Err(refuse_in_capture(
                "Stream::completion",
                format!("stream {}", self.id()),
            ));
        }
        let position = Position {
            stream: self.handle().clone(),
            label: op.label(),
        };
        queue_on(op, position)
    }
}

impl Event {
    /// A future that resolves once the work covered by this event's last record is done: the
    /// asynchronous [`Event::synchronize`]. An event never recorded resolves at once (as HIP's wait on
    /// it). Refused ([`Error::InvalidArgument`]) for an event recorded inside a capture.
    ///
    /// The wake comes from an event recorded on a stream of the event's own (created on the first call
    /// and kept with the event) after it waits for this event: the record the call saw is the one
    /// waited for, and later work on the stream the event was recorded on neither delays the wake nor
    /// is delayed by it.
    pub fn completion(&self) -> Completion {
        Completion::from_start(self.start_completion())
    }

    fn start_completion(&self) -> Result<Pending<Position>> {
        if self.capture_log().is_some() {
            return Err(refuse_in_capture(
                "Event::completion",
                "an event recorded inside a capture".into(),
            ));
        }
        let waiter = self.waiter()?;
        // Teaches the waiter's queue that it runs after the event's stream up to the record: when the
        // waiter's completion resolves, that work is known complete too.
        waiter.wait_event(self)?;
        waiter.start_completion()
    }
}
