//! [`Comm::wait`]: wait for a communicator's work with a bound, watching for a peer that failed.

use super::poll::{poll_until, Backoff};
use super::Comm;
use crate::error::Result;
use crate::event::same_device;
use crate::stream::Stream;
use std::time::Duration;

/// The longest pause between two looks at the stream and the communicator.
const MAX_PAUSE: Duration = Duration::from_millis(1);

impl Comm {
    /// Wait until the work queued on `stream` so far is done (this communicator's collectives among
    /// it), for at most `timeout`, looking at the communicator's asynchronous error state between looks
    /// at the stream (`hipStreamQuery`, `ncclCommGetAsyncError`; pauses of 20 us growing to 1 ms, so a
    /// wait costs little CPU). A rank whose peer died gets an error within `timeout` instead of hanging
    /// in `hipStreamSynchronize`; [`abort`](Comm::abort) the communicator then (a collective that never
    /// completes keeps the stream busy until it is aborted).
    ///
    /// # Errors
    ///
    /// [`Error::Timeout`](crate::Error::Timeout) when the stream's work is not done within `timeout`;
    /// the communicator's asynchronous error ([`Error::Nccl`](crate::Error::Nccl)) as soon as it has
    /// one; [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) for a stream of another device; the
    /// stream's error from HIP ([`Error::Hip`](crate::Error::Hip)), and
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a stream being captured.
    ///
    /// ```no_run
    /// # fn f(comm: hip::rccl::Comm, stream: &hip::Stream, x: &mut hip::DeviceBuffer<f32>) -> hip::Result<()> {
    /// use std::time::Duration;
    /// comm.all_reduce_in_place(x, hip::rccl::ReduceOp::Sum, stream)?;
    /// if let Err(e) = comm.wait(stream, Duration::from_secs(30)) {
    ///     comm.abort()?; // a peer died or hangs: stop the collective, free the communicator
    ///     return Err(e);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn wait(&self, stream: &Stream, timeout: Duration) -> Result<()> {
        same_device("Comm::wait", &self.device, stream.device())?;
        let backoff = Backoff {
            first: Duration::from_micros(20),
            cap: MAX_PAUSE,
            limit: Some((timeout, "the RCCL communicator's work on the stream")),
        };
        poll_until(backoff, || {
            if stream.query()? {
                return Ok(true);
            }
            self.async_error().map(|()| false)
        })
    }
}
