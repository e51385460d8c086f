//! Reads that hand the data over when it is there: [`DeviceBuffer::to_vec_future`] (and on views) and
//! [`Stream::copy_to_pinned_future`].
//!
//! Both queue a device-to-host copy into pinned memory, ordered by the memory model like
//! [`Stream::copy_to_host_async`] (the stream waits for the source's writers on other streams), then the
//! completion event (see [`super::waiter`]). The pinned memory is not visible to the host before the future resolves:
//! `to_vec_future` keeps its staging buffer inside the future, and `copy_to_pinned_future` takes the
//! destination by value and hands it back. `to_vec_future` takes its staging buffer from a small
//! process-wide cache of pinned buffers (allocating pinned memory costs far more than a small copy, and
//! freeing it may synchronize the device on some platforms), and puts it back when done.

use super::signal::Pending;
use super::{polled_again, queue_on, refuse_in_capture, Position, State};
use crate::device::Device;
use crate::error::Result;
use crate::event::same_device;
use crate::memory::tracking::{use_both, Access, Allocation};
use crate::memory::{
    check_len, DeviceBuffer, DeviceCopy, DeviceMemory, DevicePtr, DeviceSlice, DeviceSliceMut,
    HostMemoryMut, PinnedBuffer,
};
use crate::queue::lock;
use crate::result;
use crate::stream::Stream;
use hip_sys as sys;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

/// What a read keeps alive until its copy is done: the stream and position, the source allocation and the
/// pinned memory the copy writes (`None` once handed over).
struct Read<H> {
    position: Position,
    _source: Arc<Allocation>,
    dst: Option<H>,
    /// Where `dst` goes if the read is dropped with it: `to_vec_future`'s staging buffer back to the cache
    /// (freeing pinned memory may synchronize the device), a caller's buffer nowhere (dropped).
    recycle: Option<fn(H)>,
}

impl<H> Drop for Read<H> {
    fn drop(&mut self) {
        if let (Some(dst), Some(recycle)) = (self.dst.take(), self.recycle) {
            recycle(dst);
        }
    }
}

impl<H: Send + 'static> super::signal::Settle for Read<H> {
    fn settle(&self) {
        self.position.completed();
    }
}

/// The future of [`DeviceBuffer::to_vec_future`]: the contents as a `Vec`, once the copy is done.
#[must_use = "a future does nothing unless awaited (the copy itself is queued already)"]
pub struct ReadFuture<T: DeviceCopy> {
    state: State<Read<PinnedBuffer<u8>>>,
    /// The result of a read with no bytes to move (nothing queued, no HIP call).
    empty: Option<Result<Vec<T>>>,
    len: usize,
    _elem: PhantomData<fn() -> T>,
}

// Nothing in it is pinned (no field is ever projected): moving it is always fine.
impl<T: DeviceCopy> Unpin for ReadFuture<T> {}

impl<T: DeviceCopy> std::fmt::Debug for ReadFuture<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadFuture")
            .field("len", &self.len)
            .field("pending", &matches!(self.state, State::Waiting(_)))
            .finish()
    }
}

impl<T: DeviceCopy> Future for ReadFuture<T> {
    type Output = Result<Vec<T>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Vec<T>>> {
        let this = self.get_mut();
        if let Some(v) = this.empty.take() {
            return Poll::Ready(v);
        }
        let len = this.len;
        match &mut this.state {
            State::Failed(e) => Poll::Ready(Err(e.take().unwrap_or_else(polled_again))),
            State::Waiting(p) => p.poll(cx).map(|(status, read)| {
                let read = read.ok_or_else(polled_again)?;
                status?;
                read.position.completed();
                let bytes = len * std::mem::size_of::<T>();
                // Known complete above: the copy writing it is done, so this does not wait.
                let staging = read.dst.as_ref().ok_or_else(polled_again)?.as_slice()?;
                let mut v = Vec::<T>::with_capacity(len);
                // SAFETY: `staging` holds at least `bytes` bytes (taken for this read), written by the
                // copy that is done; `v` has room for `len` elements, `bytes` bytes; any bits are a
                // valid T (DeviceCopy); the two do not overlap.
                unsafe {
                    std::ptr::copy_nonoverlapping(staging.as_ptr(), v.as_mut_ptr().cast(), bytes);
                    v.set_len(len);
                }
                Ok(v) // `read` gives its staging buffer back to the cache as it drops
            }),
        }
    }
}

/// The future of [`Stream::copy_to_pinned_future`]: the pinned buffer, once the copy into it is done.
#[must_use = "a future does nothing unless awaited (the copy itself is queued already)"]
pub struct PinnedCopy<T: DeviceCopy> {
    state: State<Read<PinnedBuffer<T>>>,
}

impl<T: DeviceCopy> std::fmt::Debug for PinnedCopy<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedCopy")
            .field("pending", &matches!(self.state, State::Waiting(_)))
            .finish()
    }
}

impl<T: DeviceCopy> Future for PinnedCopy<T> {
    type Output = Result<PinnedBuffer<T>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<PinnedBuffer<T>>> {
        match &mut self.get_mut().state {
            State::Failed(e) => Poll::Ready(Err(e.take().unwrap_or_else(polled_again))),
            State::Waiting(p) => p.poll(cx).map(|(status, read)| {
                let read = read.ok_or_else(polled_again)?;
                status?;
                read.position.completed();
                let mut read = read;
                read.dst.take().ok_or_else(polled_again)
            }),
        }
    }
}

/// Queue `src` (device memory, `bytes` bytes at `src_ptr`) into `dst` (pinned, at least `bytes` bytes)
/// on `stream`, then the completion event.
fn start<H: HostMemoryMut<D> + Send + 'static, D: DeviceCopy>(
    what: &'static str,
    stream: &Stream,
    (src, src_ptr, src_device): (&Arc<Allocation>, DevicePtr, &Device),
    mut dst: H,
    bytes: usize,
    recycle: Option<fn(H)>,
) -> Result<Pending<Read<H>>> {
    same_device(what, stream.device(), src_device)?;
    same_device(what, stream.device(), dst.device())?;
    let op = stream.begin_op();
    let queued = (|| {
        if op.is_capturing() {
            return Err(refuse_in_capture(what, format!("stream {}", stream.id())));
        }
        if bytes == 0 {
            // Nothing to copy (an empty view): only the completion is queued, as HIP's copies of zero
            // bytes may not accept a dangling host pointer.
            return Ok(());
        }
        use_both(&op, (src, Access::Read), (dst.allocation(), Access::Write))?;
        stream.device().bind()?;
        // SAFETY: `src_ptr` is `bytes` bytes of device memory of `src` and `dst` pinned host memory of at
        // least `bytes` bytes, both on the stream's device (checked, and current). The stream now waits
        // for the source's writers and the destination's users and is recorded as a user of both; the
        // future keeps both allocations alive until the copy is done, and the host gets `dst` only then.
        unsafe {
            result::memcpy_async(
                dst.host_mut_ptr().cast(),
                src_ptr,
                bytes,
                sys::hipMemcpyDeviceToHost,
                stream.raw(),
            )
        }
    })();
    if let Err(e) = queued {
        // `dst` is dropped after `op` ended: freeing it may wait for the operation's own label.
        drop(op);
        drop(dst);
        return Err(e);
    }
    let read = Read {
        position: Position {
            stream: stream.handle().clone(),
            label: op.label(),
        },
        _source: src.clone(),
        dst: Some(dst),
        recycle,
    };
    queue_on(op, read)
}

/// The read behind every `to_vec_future`.
fn read_async<T: DeviceCopy, M: DeviceMemory<T>>(src: &M, stream: &Stream) -> ReadFuture<T> {
    let (len, bytes) = (src.len(), src.byte_len());
    let mut future = ReadFuture {
        state: State::Failed(None),
        empty: None,
        len,
        _elem: PhantomData,
    };
    if bytes == 0 {
        // No bytes (no elements, or zero-sized ones): the synchronous read makes no HIP call.
        future.empty = Some(src.to_vec());
        return future;
    }
    if stream.is_capturing() {
        // Refused before the staging memory is allocated: `hipHostMalloc` is one of the calls a capture
        // may refuse (and be invalidated by). `start` checks again under the stream's gate.
        future.state = State::Failed(Some(refuse_in_capture(
            "to_vec_future",
            format!("stream {}", stream.id()),
        )));
        return future;
    }
    let started = take_staging(src.device(), bytes).and_then(|staging| {
        start(
            "to_vec_future",
            stream,
            (src.allocation(), src.device_ptr(), src.device()),
            staging,
            bytes,
            Some(give_back),
        )
    });
    future.state = match started {
        Ok(p) => State::Waiting(p),
        Err(e) => State::Failed(Some(e)),
    };
    future
}

macro_rules! to_vec_async {
    ($ty:ident $(<$lt:lifetime>)?) => {
        impl<$($lt,)? T: DeviceCopy> $ty<$($lt,)? T> {
            /// A future of the contents as a `Vec`: the asynchronous
            /// [`to_vec`](crate::DeviceMemory::to_vec). The copy is queued on `stream` now (after the work
            /// of other streams that writes this memory, as every operation is ordered), into pinned
            /// staging memory the future owns; the future resolves once it is done, without blocking a
            /// thread meanwhile. `Send + 'static`: it keeps the memory alive itself, so the buffer may be
            /// dropped or written before it resolves (a later write is ordered after this read).
            /// Refused ([`Error::InvalidArgument`](crate::Error::InvalidArgument)) on a stream a capture
            /// records. See [`crate::future`].
            ///
            /// ```no_run
            /// # use hip::prelude::*;
            /// # async fn f(stream: &Stream, buffer: &DeviceBuffer<f32>) -> hip::Result<()> {
            /// let values: Vec<f32> = buffer.to_vec_future(stream).await?;
            /// let head: Vec<f32> = buffer.slice(..16)?.to_vec_future(stream).await?;
            /// # Ok(()) }
            /// ```
            pub fn to_vec_future(&self, stream: &Stream) -> ReadFuture<T> {
                read_async(self, stream)
            }

            /// The old name of [`to_vec_future`](Self::to_vec_future).
            #[deprecated(
                since = "0.1.0",
                note = "renamed `to_vec_future`: `_async` names queue on a stream and return `Result`, `_future` names return a future"
            )]
            pub fn to_vec_async(&self, stream: &Stream) -> ReadFuture<T> {
                read_async(self, stream)
            }
        }
    };
}

to_vec_async!(DeviceBuffer);
to_vec_async!(DeviceSlice<'a>);
to_vec_async!(DeviceSliceMut<'a>);

impl Stream {
    /// Queue a copy of `src` into the pinned buffer `dst` (same length, same device) and return a future
    /// that hands `dst` back once the copy is done: its [`as_slice`](PinnedBuffer::as_slice) then returns
    /// without waiting. Reusing the pinned buffer avoids allocating one per read (as
    /// [`DeviceBuffer::to_vec_future`] does through its cache). A length or device mismatch, or a stream
    /// being captured, is the future's error (and `dst` is dropped). See [`crate::future`].
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # async fn f(device: &Device, stream: &Stream, buffer: &DeviceBuffer<f32>) -> hip::Result<()> {
    /// let mut pinned = PinnedBuffer::<f32>::zeroed(device, buffer.len())?;
    /// for _ in 0..3 {
    ///     pinned = stream.copy_to_pinned_future(buffer, pinned).await?;
    ///     println!("{}", pinned.as_slice()?[0]);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn copy_to_pinned_future<T: DeviceCopy>(
        &self,
        src: &impl DeviceMemory<T>,
        dst: PinnedBuffer<T>,
    ) -> PinnedCopy<T> {
        self.copy_to_pinned_inner(src, dst)
    }

    /// The old name of [`copy_to_pinned_future`](Self::copy_to_pinned_future).
    #[deprecated(
        since = "0.1.0",
        note = "renamed `copy_to_pinned_future`: `_async` names queue on a stream and return `Result`, `_future` names return a future"
    )]
    pub fn copy_to_pinned_async<T: DeviceCopy>(
        &self,
        src: &impl DeviceMemory<T>,
        dst: PinnedBuffer<T>,
    ) -> PinnedCopy<T> {
        self.copy_to_pinned_inner(src, dst)
    }

    fn copy_to_pinned_inner<T: DeviceCopy>(
        &self,
        src: &impl DeviceMemory<T>,
        dst: PinnedBuffer<T>,
    ) -> PinnedCopy<T> {
        let started = check_len("copy_to_pinned_future", dst.len(), src.len()).and_then(|()| {
            start(
                "copy_to_pinned_future",
                self,
                (src.allocation(), src.device_ptr(), src.device()),
                dst,
                src.byte_len(),
                None,
            )
        });
        PinnedCopy {
            state: match started {
                Ok(p) => State::Waiting(p),
                Err(e) => State::Failed(Some(e)),
            },
        }
    }
}

/// Pinned staging buffers kept for `to_vec_future`, at most [`SPARE_BUFFERS`] of at most
/// [`SPARE_MAX_BYTES`] each.
static SPARE: Mutex<Vec<PinnedBuffer<u8>>> = Mutex::new(Vec::new());
const SPARE_BUFFERS: usize = 64;
const SPARE_MAX_BYTES: usize = 16 << 20;

/// A pinned buffer of at least `bytes` bytes on `device`: the smallest kept one that fits (and is at most
/// four times too large), else a new one of `bytes` rounded up to 4 KiB.
fn take_staging(device: &Device, bytes: usize) -> Result<PinnedBuffer<u8>> {
    {
        let mut spare = lock(&SPARE);
        let best = spare
            .iter()
            .enumerate()
            .filter(|(_, b)| {
                b.device().ordinal() == device.ordinal() && b.len() >= bytes && b.len() / 4 <= bytes
            })
            .min_by_key(|(_, b)| b.len())
            .map(|(i, _)| i);
        if let Some(i) = best {
            return Ok(spare.swap_remove(i));
        }
    }
    PinnedBuffer::zeroed(device, bytes.div_ceil(4096) * 4096)
}

/// Keep `b` for a later read if there is room, else free it (outside the lock).
fn give_back(b: PinnedBuffer<u8>) {
    if b.len() > SPARE_MAX_BYTES {
        return;
    }
    let refused = {
        let mut spare = lock(&SPARE);
        if spare.len() < SPARE_BUFFERS {
            spare.push(b);
            None
        } else {
            Some(b)
        }
    };
    drop(refused);
}
