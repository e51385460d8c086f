//! Queued uploads from pageable memory ([`Stream::copy_from_slice_async`]): the host copies the slice into
//! a pinned staging buffer and the device copies from there, so the call returns once the slice was read
//! (the borrow ends there) while the upload itself runs in stream order, as a pageable
//! `hipMemcpyAsync` does on CUDA.
//!
//! Staging buffers come from a small per-device pool: a buffer is taken only when the event recorded
//! after its last upload has completed (`hipEventQuery`, no wait), and its host write then waits for
//! nothing. While every pooled buffer is busy a new one is allocated (`hipHostMalloc`). At most
//! [`POOLED`] buffers of at most [`POOLED_BYTES`] each stay pooled; any other goes to the crate's
//! releasing thread, which frees it once its upload completed (never under it, never blocking the
//! caller).

use super::pinned::PinnedBuffer;
use super::tracking::{use_both, Access};
use super::{byte_size, check_len, DeviceCopy, DeviceMemoryMut, HostMemory};
use crate::error::Result;
use crate::event::{same_device, Event};
use crate::queue::lock;
use crate::result;
use crate::stream::Stream;
use hip_sys as sys;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Staging buffers kept per device.
pub(crate) const POOLED: usize = 4;
/// The largest staging buffer kept (larger ones are freed after their upload).
pub(crate) const POOLED_BYTES: usize = 64 << 20;

/// A staging buffer and the event recorded after its last upload.
struct Staged {
    buffer: PinnedBuffer<u8>,
    after: Event,
}

/// The pooled staging buffers of each device (by ordinal).
fn pool() -> &'static Mutex<HashMap<usize, Vec<Staged>>> {
    static POOL: OnceLock<Mutex<HashMap<usize, Vec<Staged>>>> = OnceLock::new();
    POOL.get_or_init(Default::default)
}

/// A pooled buffer of `ordinal`'s of at least `bytes` whose last upload completed, if any.
fn take_idle(ordinal: usize, bytes: usize) -> Option<Staged> {
    let mut pools = lock(pool());
    let free = pools.get_mut(&ordinal)?;
    let at = free
        .iter()
        .position(|s| s.buffer.len() >= bytes && s.after.query().unwrap_or(false))?;
    Some(free.swap_remove(at))
}

/// Keep `staged` for a later upload if there is room, else release it off this thread.
fn give_back(ordinal: usize, staged: Staged) {
    if staged.buffer.len() <= POOLED_BYTES {
        let mut pools = lock(pool());
        let free = pools.entry(ordinal).or_default();
        if free.len() < POOLED {
            free.push(staged);
            return;
        }
    }
    // Its drop waits for the upload (the memory model's user of the buffer): on the releasing thread.
    crate::release::defer(Box::new(move || drop(staged)));
}

impl Stream {
    /// Queue an upload of `src`, ordinary (pageable) host memory, into device memory of the same length:
    /// the host copies `src` into a pinned staging buffer and returns; the device copies from there in
    /// stream order, ordered by the memory model like [`copy_from_host_async`](Self::copy_from_host_async)
    /// (the destination's other users wait, and are waited for). `src` is free again when this returns.
    ///
    /// Costs a host copy of `src` (and, when no pooled staging buffer is idle, a `hipHostMalloc`): for
    /// repeated uploads of the same data, keep it in a [`PinnedBuffer`] instead.
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) for lengths that differ,
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) for device memory of another device,
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) on a capturing stream (the graph would
    /// replay a staging buffer the crate reuses), [`Error::AllocationTooLarge`](crate::Error::AllocationTooLarge)
    /// when the byte size overflows, and what HIP returns (the staging allocation, the copy, the event).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, x: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// let samples: Vec<f32> = (0..x.len()).map(|i| i as f32).collect();
    /// stream.copy_from_slice_async(&samples, x)?; // returns once `samples` was read
    /// drop(samples);
    /// stream.synchronize()?; // the upload itself runs in stream order
    /// # Ok(()) }
    /// ```
    pub fn copy_from_slice_async<T: DeviceCopy>(
        &self,
        src: &[T],
        dst: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        const WHAT: &str = "copy_from_slice_async";
        check_len(WHAT, dst.len(), src.len())?;
        same_device(WHAT, self.device(), dst.device())?;
        let bytes = byte_size::<T>(src.len())?;
        if bytes == 0 {
            return Ok(());
        }
        if self.is_capturing() {
            return Err(crate::Error::InvalidArgument {
                what: WHAT,
                value: "a capturing stream".into(),
                reason: "a graph would replay the upload from a staging buffer the crate reuses: \
                         capture a copy from a GraphPinnedBuffer instead"
                    .into(),
            });
        }
        let ordinal = self.device().ordinal();
        let mut staged = match take_idle(ordinal, bytes) {
            Some(s) => s,
            None => Staged {
                buffer: PinnedBuffer::zeroed(self.device(), bytes.next_power_of_two().max(4096))?,
                after: Event::new(self.device())?,
            },
        };
        let host = staged.buffer.as_mut_slice()?;
        // SAFETY: `src` is valid for reading `bytes` bytes (len * size_of::<T>()), the staging buffer's
        // slice holds at least `bytes` (its length is `bytes` rounded up), and they do not overlap (the
        // buffer is the crate's own). The bytes are only ever read by the device's copy, never as `u8`
        // by the host.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr().cast::<u8>(), host.as_mut_ptr(), bytes)
        };
        let queued = self.upload_staged(&staged.buffer, bytes, dst);
        let recorded = queued.and_then(|()| staged.after.record(self));
        give_back(ordinal, staged);
        recorded
    }

    /// Queue the copy of the first `bytes` of `staged` into `dst` (of `bytes` bytes, on this stream's
    /// device: checked by the caller), ordered by the memory model.
    fn upload_staged<T: DeviceCopy>(
        &self,
        staged: &PinnedBuffer<u8>,
        bytes: usize,
        dst: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        let op = self.begin_op();
        use_both(
            &op,
            (staged.allocation(), Access::Read),
            (dst.allocation(), Access::Write),
        )?;
        self.device().bind()?;
        // SAFETY: `staged` is pinned host memory of at least `bytes` bytes and `dst` device memory of
        // `bytes` bytes, both on the stream's device (current). The stream now waits for the staging
        // buffer's writers and the destination's users and is recorded as a user of both: the staging
        // buffer is neither written by the host (`as_mut_slice` waits) nor freed before the copy is done.
        // `use_both` refuses pinned memory in a capture, so no graph replays it.
        unsafe {
            result::memcpy_async(
                dst.device_ptr(),
                staged.host_ptr().cast(),
                bytes,
                sys::hipMemcpyHostToDevice,
                self.raw(),
            )
        }
    }
}
