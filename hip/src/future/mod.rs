//! GPU work as Rust futures: await a stream, an event or a copy to the host without blocking a thread.
//!
//! Only `std::task` is used: the futures run on any executor (tokio, async-std, smol, a hand-written
//! `block_on`). Each is `Send + 'static` and resolves to a [`Result`]:
//!
//! - [`Stream::completion`]: everything queued on the stream so far;
//! - [`Event::completion`]: the work the event's last record covers;
//! - [`DeviceBuffer::to_vec_async`](crate::DeviceBuffer::to_vec_async) (and on views): the contents, as a
//!   `Vec`, once the copy that reads them is done;
//! - [`Stream::copy_to_pinned_async`]: a [`PinnedBuffer`](crate::PinnedBuffer) handed back once the copy
//!   into it is done (reusable staging, no allocation per read).
//!
//! # How a future wakes
//!
//! Creating a future queues one host function on the stream (`hipStreamAddCallback`, the same mechanism
//! as [`Stream::launch_host_fn`]). HIP runs it on its own callback thread once the work before it is
//! done; it calls no HIP function: it stores the status HIP passes (`hipSuccess`, or the error the stream
//! is in), takes the stored [`Waker`](std::task::Waker) and wakes it. Nothing polls the device and no
//! thread is started per wait: a pending future costs one queued callback and a few words of shared
//! state, so thousands may be pending at once. When the future is polled after that, it reports the
//! error if the status was one, and otherwise teaches the memory model that the stream's work up to the
//! future's position is complete (`docs/MEMORY_MODEL.md`, "Knowledge"): later host accesses of the same
//! memory do not wait again.
//!
//! The waker is woken (and dropped) on HIP's callback thread, inside the host function: executors'
//! wakers only schedule the task (tokio, async-std, smol, `futures`' `block_on` do), which is what HIP
//! allows there. A waker that polled the task inline, or whose drop dropped the last owner of a
//! [`Stream`], would make HIP calls inside a host function, which HIP forbids.
//!
//! The work is queued when the future is created (program order, like every `_async` method), not when it
//! is first polled. Errors found then (no device, a stream being captured, bad lengths) are the future's
//! output. Inside a graph capture every future is refused ([`Error::InvalidArgument`]): its host function
//! (`hipStreamAddCallback`) would not follow the captured work: HIP before 7.0 queues it live, so it
//! would wake the future before the graph ever ran, and HIP 7.0 and CUDA refuse it and invalidate the
//! capture.
//!
//! # Cancellation
//!
//! Dropping a future before it resolves never frees memory the queued work still uses and never leaks it:
//! what the work needs (the pinned staging buffer, the source allocation, the stream) is handed to the
//! host function's shared state, and released once the work is done, on the crate's releasing thread
//! (`hip-rs-release`), since a HIP callback may not call HIP. If the callback never runs (a device
//! lost), that memory is leaked, never freed under work.
//!
//! The trade-offs against a thread blocked in `hipStreamSynchronize` and against polling
//! `hipEventQuery` are measured in `docs/BENCHMARKS.md` ("Futures") and described in
//! `docs/MEMORY_MODEL.md` ("Futures").

mod read;
mod signal;
#[cfg(test)]
mod tests;

pub use read::{PinnedCopy, ReadFuture};

use crate::error::{Error, Result};
use crate::event::Event;
use crate::stream::{Stream, StreamHandle, StreamOp};
use signal::Pending;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// What a completion keeps until it resolves: the stream (alive while the callback is queued), and the
/// position the callback follows, for the memory model's knowledge.
struct Position {
    stream: Arc<StreamHandle>,
    label: u64,
}

impl Position {
    /// The callback ran with `hipSuccess`: the work up to `label` is complete.
    fn completed(&self) {
        self.stream.queue.complete_through(self.label);
    }
}

/// The future of [`Stream::completion`] and [`Event::completion`]: resolves to `Ok(())` once the work is
/// done, or to the error the stream is in.
#[must_use = "a future does nothing unless awaited (the work itself is queued already)"]
pub struct Completion {
    state: State<Position>,
}

/// Where a future stands: refused at creation, waiting for its host function, or resolved.
enum State<P: Send + 'static> {
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
        reason: "the stream is being captured into a graph: the future's host function would not \
                 follow the captured work (HIP before 7.0 runs it live, HIP 7.0 and CUDA refuse it and \
                 invalidate the capture); await the graph's launch on a live stream instead, after the \
                 capture ends"
            .into(),
    }
}

/// Queue the completion host function on the stream `op` holds, keeping `payload` until it resolves,
/// then end `op`. Call with `op` held (its capture state checked), after the work the future waits for
/// was queued. On failure the payload is dropped after `op` ended.
fn queue_on<P: Send + 'static>(op: StreamOp<'_>, payload: P) -> Result<Pending<P>> {
    let handle = op.handle();
    let queued = match handle.device.bind() {
        // SAFETY: `handle.raw` is live (the handle is held by the caller's borrow, and by the payload
        // until the callback ran) or null (the device's null stream), and `bind` made its device current.
        Ok(()) => unsafe { Pending::queue(handle.raw, payload) },
        Err(e) => Err((e, payload)),
    };
    drop(op);
    queued.map_err(|(e, payload)| {
        drop(payload);
        e
    })
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
    /// stream.copy_to_device_async(host, dev)?;
    /// stream.completion().await?; // the host may change `host` now, without waiting
    /// # Ok(()) }
    /// ```
    pub fn completion(&self) -> Completion {
        Completion {
            state: match self.start_completion() {
                Ok(p) => State::Waiting(p),
                Err(e) => State::Failed(Some(e)),
            },
        }
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
    /// The wake comes from a host function on a stream of the event's own (created on the first call and
    /// kept with the event) that waits for the event: it never delays, and is never delayed by, later
    /// work on the stream the event was recorded on.
    pub fn completion(&self) -> Completion {
        Completion {
            state: match self.start_completion() {
                Ok(p) => State::Waiting(p),
                Err(e) => State::Failed(Some(e)),
            },
        }
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
