//! Host functions that see what the stream's earlier work did: [`Stream::launch_host_fn_with_status`]
//! gives the closure the stream's status, and [`Stream::launch_host_fn_reading`] /
//! [`Stream::launch_host_fn_writing`] give it pinned host memory, ordered by the memory model like a
//! copy's use of it: after this stream's earlier work and the conflicting work of other streams, and
//! before the work (of any stream, and the host's own borrows) that conflicts with it later.

use crate::error::{Error, Result};
use crate::host_fn::{into_raw_with_status, queue_raw, refuse_in_capture, HostFnHandle};
use crate::memory::{Access, DeviceCopy, HostMemory, HostMemoryMut};
use crate::stream::Stream;
use hip_sys as sys;

/// The stream's status as HIP hands it to a host function.
fn status(code: sys::hipError_t) -> Result<()> {
    if code == sys::hipSuccess {
        Ok(())
    } else {
        Err(Error::from_hip(
            "the work queued before the host function",
            code,
        ))
    }
}

/// `len` elements at `ptr`, carried to the runtime thread that runs the host function.
struct HostSpan<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: the span is pinned host memory the memory model orders for the host function (see the
// callers); `T: DeviceCopy` is Send + Sync.
unsafe impl<T: DeviceCopy> Send for HostSpan<T> {}

impl<T> HostSpan<T> {
    /// The pointer, or a dangling one for no elements (an empty buffer's may be null).
    fn ptr(&self) -> *mut T {
        if self.len == 0 {
            std::ptr::NonNull::dangling().as_ptr()
        } else {
            self.ptr
        }
    }
}

impl Stream {
    /// [`launch_host_fn`](Stream::launch_host_fn) whose closure is told the stream's status: `Ok(())`,
    /// or the error the stream's earlier work ended in (`hipStreamAddCallback`'s status).
    ///
    /// # Errors
    ///
    /// As [`launch_host_fn`](Stream::launch_host_fn).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream) -> hip::Result<()> {
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// stream.launch_host_fn_with_status(move |status| tx.send(status.is_ok()).unwrap())?;
    /// stream.synchronize()?;
    /// assert!(rx.recv().unwrap());
    /// # Ok(()) }
    /// ```
    pub fn launch_host_fn_with_status<F: FnOnce(Result<()>) + Send + 'static>(
        &self,
        f: F,
    ) -> Result<HostFnHandle> {
        let op = self.begin_op();
        if op.is_capturing() {
            return Err(refuse_in_capture(self.id()));
        }
        self.device().bind()?;
        // SAFETY: as in `launch_host_fn`: a live stream of the current device, not captured (checked
        // under `op`, held through the call).
        unsafe { queue_raw(self.raw(), into_raw_with_status(move |c| f(status(c)))) }
    }

    /// Queue `f` to read `memory` (pinned host memory, a buffer or a view) on a runtime thread, in
    /// stream order: once this stream's earlier work and every other stream's queued writes of the
    /// memory are done. The memory model records the function as a read of the memory on this stream,
    /// so later writes (another stream's, or the host's through
    /// [`as_mut_slice`](crate::PinnedBuffer::as_mut_slice)) wait until it returned, and the memory is
    /// not freed before. `f` gets `Ok(slice)`, or the stream's error without the memory when its earlier
    /// work failed (what it wrote may be missing).
    ///
    /// As for [`launch_host_fn`](Stream::launch_host_fn): `f` must not call HIP and should be short; a
    /// panic in it is caught and reported by the handle; refused on a stream a capture records.
    ///
    /// # Errors
    ///
    /// As [`launch_host_fn`](Stream::launch_host_fn); what the memory model's ordering returns (a wait
    /// HIP refused).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, x: &DeviceBuffer<f32>, device: &Device) -> hip::Result<()> {
    /// let mut host = PinnedBuffer::<f32>::zeroed(device, x.len())?;
    /// stream.copy_to_host_async(x, &mut host)?;
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// // Runs once the download is done; the host thread is not blocked.
    /// stream.launch_host_fn_reading(&host, move |data| {
    ///     let _ = tx.send(data.map(|d| d.iter().sum::<f32>()));
    /// })?;
    /// # Ok(()) }
    /// ```
    pub fn launch_host_fn_reading<T, F>(
        &self,
        memory: &impl HostMemory<T>,
        f: F,
    ) -> Result<HostFnHandle>
    where
        T: DeviceCopy,
        F: FnOnce(Result<&[T]>) + Send + 'static,
    {
        let span = HostSpan {
            ptr: memory.host_ptr().cast_mut(),
            len: memory.len(),
        };
        let run = move |code| match status(code) {
            // SAFETY: `span` is `len` initialized elements of pinned memory (HostMemory's contract),
            // recorded below as read by this stream: writers wait for this function, and the memory is
            // freed only after it (the allocation waits for its users).
            Ok(()) => f(Ok(unsafe {
                std::slice::from_raw_parts(span.ptr(), span.len)
            })),
            Err(e) => f(Err(e)),
        };
        self.queue_with_memory(memory.allocation(), Access::Read, run)
    }

    /// Queue `f` to write `memory` (pinned host memory) on a runtime thread, in stream order: once this
    /// stream's earlier work and every other stream's queued uses of the memory are done. Recorded as
    /// a write of the memory on this stream: later uses (other streams', the host's borrows) wait until
    /// `f` returned. `f` gets `Ok(slice)`, or the stream's error without the memory.
    ///
    /// # Errors
    ///
    /// As [`launch_host_fn_reading`](Stream::launch_host_fn_reading).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, x: &mut DeviceBuffer<u32>, device: &Device) -> hip::Result<()> {
    /// let mut host = PinnedBuffer::<u32>::zeroed(device, x.len())?;
    /// stream.launch_host_fn_writing(&mut host, |data| {
    ///     if let Ok(d) = data {
    ///         d.iter_mut().enumerate().for_each(|(i, v)| *v = i as u32);
    ///     }
    /// })?;
    /// stream.copy_from_host_async(&host, x)?; // uploads what the function wrote
    /// # Ok(()) }
    /// ```
    pub fn launch_host_fn_writing<T, F>(
        &self,
        memory: &mut impl HostMemoryMut<T>,
        f: F,
    ) -> Result<HostFnHandle>
    where
        T: DeviceCopy,
        F: FnOnce(Result<&mut [T]>) + Send + 'static,
    {
        let span = HostSpan {
            ptr: memory.host_mut_ptr(),
            len: memory.len(),
        };
        let run = move |code| match status(code) {
            // SAFETY: as in `launch_host_fn_reading`, recorded as written by this stream: every other
            // use (device or host) is ordered before or after this function, so the slice is unique
            // while it runs.
            Ok(()) => f(Ok(unsafe {
                std::slice::from_raw_parts_mut(span.ptr(), span.len)
            })),
            Err(e) => f(Err(e)),
        };
        self.queue_with_memory(memory.allocation(), Access::Write, run)
    }

    /// Order `access` to `alloc` on this stream, then queue `run` (told the stream's status).
    fn queue_with_memory(
        &self,
        alloc: &std::sync::Arc<crate::memory::Allocation>,
        access: Access,
        run: impl FnOnce(sys::hipError_t) + Send + 'static,
    ) -> Result<HostFnHandle> {
        // Held until the callback is queued: the recorded use and the function are one operation.
        let op = self.begin_op();
        if op.is_capturing() {
            return Err(refuse_in_capture(self.id()));
        }
        alloc.use_on(&op, access)?;
        self.device().bind()?;
        // SAFETY: as in `launch_host_fn`: a live stream of the current device, not captured (checked
        // under `op`, held through the call, which queues the function the use was recorded for).
        unsafe { queue_raw(self.raw(), into_raw_with_status(run)) }
    }
}
