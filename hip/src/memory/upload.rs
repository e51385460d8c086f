//! Queued uploads from pageable memory ([`Stream::copy_from_slice_async`]): the host copies the slice into
//! a pinned staging buffer and the device copies from there, so the call returns once the slice was read
//! (the borrow ends there) while the upload itself runs in stream order, as a pageable
//! `hipMemcpyAsync` does on CUDA. The host copies the slice in pieces of [`PIECE`] bytes and queues each
//! piece's device copy as soon as it is staged, so the device copies overlap the host's; an upload of at
//! least [`PARALLEL_BYTES`] is split between up to [`THREADS`] threads (the caller's included), each
//! staging and queueing its own pieces.
//!
//! Staging buffers come from a small per-device pool: a buffer is taken only when the event recorded
//! after its last upload has completed (`hipEventQuery`, no wait), and its host write then waits for
//! nothing. While every pooled buffer is busy a new one is allocated (`hipHostMalloc`). At most
//! [`POOLED`] buffers of at most [`POOLED_BYTES`] each stay pooled; any other goes to the crate's
//! releasing thread, which frees it once its upload completed (never under it, never blocking the
//! caller).

use super::pinned::PinnedBuffer;
use super::tracking::{use_both, Access, Allocation};
use super::{byte_size, check_len, DeviceCopy, DeviceMemoryMut, DevicePtr, HostMemory};
use crate::error::Result;
use crate::event::{same_device, Event};
use crate::queue::lock;
use crate::result;
use crate::stream::Stream;
use hip_sys as sys;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

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

/// The smallest pooled buffer of `ordinal`'s of at least `bytes` whose last upload completed, if any.
fn take_idle(ordinal: usize, bytes: usize) -> Option<Staged> {
    let mut pools = lock(pool());
    let free = pools.get_mut(&ordinal)?;
    let at = free
        .iter()
        .enumerate()
        .filter(|(_, s)| s.buffer.len() >= bytes && s.after.query().unwrap_or(false))
        .min_by_key(|(_, s)| s.buffer.len())
        .map(|(i, _)| i)?;
    Some(free.remove(at))
}

/// Keep `staged` for a later upload (the oldest pooled buffer makes room if the pool is full), or
/// release it off this thread if it is too large to keep.
fn give_back(ordinal: usize, staged: Staged) {
    let evicted = if staged.buffer.len() <= POOLED_BYTES {
        let mut pools = lock(pool());
        let free = pools.entry(ordinal).or_default();
        free.push(staged);
        (free.len() > POOLED).then(|| free.remove(0))
    } else {
        Some(staged)
    };
    if let Some(old) = evicted {
        // Its drop waits for its upload (the memory model's user of the buffer): on the releasing
        // thread.
        crate::release::defer(Box::new(move || drop(old)));
    }
}

/// An address the copying threads share: each only reads or writes its own disjoint ranges of it.
#[derive(Clone, Copy)]
struct Shared(*mut u8);

// SAFETY: the threads of one upload use disjoint byte ranges of the source (read only) and the staging
// buffer, and offset the destination (a device address, never dereferenced); all of them end before
// the call returns (`std::thread::scope`), within the borrows of the slice and the buffers.
unsafe impl Send for Shared {}
// SAFETY: as for Send.
unsafe impl Sync for Shared {}

/// Bytes of one staged piece: its device copy is queued as soon as the host has copied it, so the
/// copies of earlier pieces overlap the host's copy of later ones.
const PIECE: usize = 2 << 20;
/// Uploads of at least this many bytes are copied into the staging buffer by several threads.
const PARALLEL_BYTES: usize = 8 << 20;
/// The most threads (the caller's included) that copy one upload.
const THREADS: usize = 4;

impl Stream {
    /// Queue an upload of `src`, ordinary (pageable) host memory, into device memory of the same length:
    /// the host copies `src` into a pinned staging buffer and returns; the device copies from there in
    /// stream order, ordered by the memory model like [`copy_from_host_async`](Self::copy_from_host_async)
    /// (the destination's other users wait, and are waited for). `src` is free again when this returns.
    ///
    /// Costs a host copy of `src` (and, when no pooled staging buffer is idle, a `hipHostMalloc`): for
    /// repeated uploads of the same data, keep it in a [`PinnedBuffer`] instead. Up to 4 staging buffers
    /// of up to 64 MiB each stay allocated per device for later uploads (until the process ends);
    /// larger ones are freed once their upload is done.
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
        // Waits for nothing: the buffer is new, or its last upload completed.
        let host = Shared(staged.buffer.as_mut_slice()?.as_mut_ptr());
        let (src, dst_ptr, dst_alloc) = (
            Shared(src.as_ptr().cast::<u8>().cast_mut()),
            Shared(dst.device_ptr().cast::<u8>()),
            dst.allocation(),
        );
        let threads = if bytes >= PARALLEL_BYTES {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(THREADS))
        } else {
            1
        };
        let ranges = super::copy_threads::split(bytes, threads);
        let buffer = &staged.buffer;
        // Each thread copies its range piece by piece into the staging buffer and queues each piece's
        // device copy at once.
        let upload = |&(start, len): &(usize, usize)| -> Result<()> {
            // Whole values, not their pointer fields: the closure is shared with the threads.
            let (src, host, dst_ptr) = (&src, &host, &dst_ptr);
            for (off, n) in super::staging::chunks(len, PIECE) {
                let at = start + off;
                // SAFETY: `[at, at + n)` lies inside `[0, bytes)`: inside `src` (valid for reading
                // `bytes`, borrowed for this call) and inside the staging buffer (at least `bytes`,
                // whose host users were waited for above); the ranges of the threads and the pieces of
                // a range are disjoint, and every queued device copy reads only a piece already
                // written. The bytes are only ever read by the device, never as `u8` by the host.
                unsafe { std::ptr::copy_nonoverlapping(src.0.add(at), host.0.add(at), n) };
                // A device address: only offset, never dereferenced here.
                let to = dst_ptr.0.wrapping_add(at).cast();
                self.upload_piece(buffer, at, dst_alloc, to, n)?;
            }
            Ok(())
        };
        let queued = match ranges.split_first() {
            Some((mine, theirs)) if !theirs.is_empty() => std::thread::scope(|scope| {
                let others: Vec<_> = theirs
                    .iter()
                    .map(|r| scope.spawn(move || upload(r)))
                    .collect();
                let first = upload(mine);
                others
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .fold(first, Result::and)
            }),
            _ => upload(&(0, bytes)),
        };
        let recorded = queued.and_then(|()| staged.after.record(self));
        give_back(ordinal, staged);
        recorded
    }

    /// Queue the copy of `bytes` of `staged` from byte `at` to `dst` (device memory of `alloc`, on this
    /// stream's device: checked by the caller), ordered by the memory model.
    fn upload_piece(
        &self,
        staged: &PinnedBuffer<u8>,
        at: usize,
        alloc: &Arc<Allocation>,
        dst: DevicePtr,
        bytes: usize,
    ) -> Result<()> {
        let op = self.begin_op();
        use_both(
            &op,
            (staged.allocation(), Access::Read),
            (alloc, Access::Write),
        )?;
        self.device().bind()?;
        // SAFETY: `at + bytes` lies inside the staging buffer's pinned memory and `dst` is `bytes` of
        // `alloc`'s device memory (the caller's ranges), both on the stream's device (current). The
        // stream now waits for the staging buffer's writers and the destination's users and is recorded
        // as a user of both: the staging buffer is neither reused (its event, and `as_mut_slice`'s
        // wait) nor freed before the copy is done. `use_both` refuses pinned memory in a capture.
        unsafe {
            result::memcpy_async(
                dst,
                staged.host_ptr().add(at).cast(),
                bytes,
                sys::hipMemcpyHostToDevice,
                self.raw(),
            )
        }
    }
}
