//! Stream-ordered allocation ([`DeviceBuffer::alloc_async`]) from the device's current memory pool
//! ([`MemPool`](super::MemPool), in `mem_pool.rs`).
//!
//! `hipMallocAsync` takes memory from the device's pool in stream order and `hipFreeAsync` gives it back in
//! stream order: no device-wide synchronisation, unlike `hipFree`. Freed memory stays reserved by the pool
//! up to its release threshold (default 0: trimmed at the next synchronisation); a higher threshold keeps
//! memory for reuse and makes repeated allocations cheap. HIP has been reported (cubecl) not to return pool
//! memory to the OS even below the threshold: [`MemPool::trim_to`] asks explicitly.

use super::tracking::{Keep, Release};
use super::{byte_size, Access, DeviceBuffer, DeviceCopy, DeviceMemory};
use crate::error::{Error, Result};
use crate::result;
use crate::stream::{Stream, StreamHandle};
use hip_sys as sys;
use std::sync::Arc;

use super::mem_pool::pools_supported;

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// `len` elements allocated in `stream`'s order (`hipMallocAsync`) where the device supports memory
    /// pools, freed on drop in the same stream's order (`hipFreeAsync`) after that stream waited for every
    /// other stream still using the buffer (the buffer keeps the stream's handle alive until then). On a
    /// device without pools, or for the default stream, this is a plain `hipMalloc`, freed with `hipFree`.
    ///
    /// The allocation counts as a write on `stream`: work on other streams is ordered after it by the
    /// memory model like any other use.
    ///
    /// A stream being captured is refused ([`Error::InvalidArgument`]): HIP would record the allocation
    /// into the graph, and the address would exist only while a replay runs.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] on a capturing stream, [`Error::AllocationTooLarge`] when the byte
    /// size overflows, and what HIP returns for the device attribute, for `hipMallocAsync` or `hipMalloc`
    /// (`hipErrorOutOfMemory` when there is no room) and for ordering the stream.
    ///
    /// # Safety
    /// The contents are uninitialised: write them before reading.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, n: usize) -> hip::Result<()> {
    /// // SAFETY: every element is written (the fill) before anything reads it.
    /// let mut scratch = unsafe { DeviceBuffer::<f32>::alloc_async(stream, n)? };
    /// stream.fill_async(&mut scratch, 1.0)?;
    /// // ... kernels on `stream` use `scratch` ...
    /// drop(scratch); // hipFreeAsync on `stream`: no device-wide synchronisation
    /// # Ok(()) }
    /// ```
    pub unsafe fn alloc_async(stream: &Stream, len: usize) -> Result<Self> {
        // SAFETY: the caller's contract, passed on.
        unsafe { Self::alloc_async_on(stream.handle(), len) }
    }

    /// [`alloc_async`](Self::alloc_async) on a stream's shared handle, for what keeps a stream's handle
    /// rather than the `Stream` (the math libraries' handles).
    ///
    /// # Safety
    /// As [`alloc_async`](Self::alloc_async): the contents are uninitialised.
    pub(crate) unsafe fn alloc_async_on(stream: &Arc<StreamHandle>, len: usize) -> Result<Self> {
        // SAFETY: the caller's contract, passed on.
        unsafe { Self::alloc_ordered(stream, len, None) }
    }

    /// `len` elements in `stream`'s order from `pool` (`hipMallocFromPoolAsync`, the pool kept alive by
    /// the allocation until its free is queued), or from the device's current pool when `None`.
    ///
    /// # Safety
    /// As [`alloc_async`](Self::alloc_async): the contents are uninitialised. A pool given is live, on
    /// the stream's device, and `keep` owns it.
    pub(crate) unsafe fn alloc_ordered(
        stream: &Arc<StreamHandle>,
        len: usize,
        pool: Option<(sys::hipMemPool_t, Keep)>,
    ) -> Result<Self> {
        let op = stream.begin_op();
        if op.is_capturing() {
            return Err(Error::InvalidArgument {
                what: "stream for a stream-ordered allocation",
                value: format!("stream {}", stream.id),
                reason: "it is being captured: allocate before the capture begins".into(),
            });
        }
        let bytes = byte_size::<T>(len)?;
        let device = &stream.device;
        if bytes == 0 {
            // No elements, or zero-sized ones: nothing to allocate, but `len` of them all the same.
            return Ok(Self::from_parts(
                std::ptr::null_mut(),
                len,
                device,
                Release::Nothing,
            ));
        }
        device.bind()?;
        let b = if let Some((raw, keep)) = pool {
            // SAFETY: `stream.raw` is live (the handle is borrowed) and on `device` (current), and so is
            // the pool (the caller's contract), kept by the allocation until its free is queued. Not
            // capturing (as below).
            let ptr = unsafe { result::pool::malloc_from_pool_async(bytes, raw, stream.raw) }?;
            let release = Release::FreeAsync(Arc::clone(stream), Some(keep));
            Self::from_parts(ptr, len, device, release)
        } else if pools_supported(device)? && !stream.raw.is_null() {
            // SAFETY: `stream.raw` is live (the handle is borrowed) and on `device` (current); it is not
            // being captured (checked under `op`, held until the use is recorded), so the allocation is
            // made now in stream order, not recorded into a graph.
            // The device's current pool, when it is one of one's own, stays until the free is queued.
            let (ptr, keep) = super::mem_pool::from_current_pool(device, || unsafe {
                result::pool::malloc_async(bytes, stream.raw)
            })?;
            let release = Release::FreeAsync(Arc::clone(stream), keep);
            Self::from_parts(ptr, len, device, release)
        } else {
            Self::from_parts(result::malloc(bytes)?, len, device, Release::Free)
        };
        let ordered = b.allocation().use_on(&op, Access::Write);
        // Before `b` can be dropped (on an error): its free takes the stream's gate again.
        drop(op);
        ordered?;
        Ok(b)
    }

    /// `len` zeroed elements in `stream`'s order: [`DeviceBuffer::alloc_async`] and a memset queued on
    /// `stream`. Later operations on any stream are ordered after the zeroing.
    ///
    /// # Errors
    ///
    /// What [`alloc_async`](Self::alloc_async) returns ([`Error::InvalidArgument`] on a capturing stream,
    /// [`Error::AllocationTooLarge`], HIP's errors), and what HIP returns for the memset.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream) -> hip::Result<()> {
    /// let counts = DeviceBuffer::<u32>::zeroed_async(stream, 256)?; // returns at once
    /// assert!(counts.to_vec()?.iter().all(|&c| c == 0)); // ordered after the zeroing
    /// # Ok(()) }
    /// ```
    pub fn zeroed_async(stream: &Stream, len: usize) -> Result<Self> {
        Self::zeroed_async_on(stream.handle(), len)
    }

    /// [`zeroed_async`](Self::zeroed_async) on a stream's shared handle (see
    /// [`alloc_async_on`](Self::alloc_async_on)).
    pub(crate) fn zeroed_async_on(stream: &Arc<StreamHandle>, len: usize) -> Result<Self> {
        // SAFETY: `alloc_async` asks that the contents be written before they are read: the memset below
        // writes every byte on `stream`, which `alloc_async` recorded as the buffer's writer, so every
        // later use is ordered after it; on failure the buffer is dropped unread.
        let b = unsafe { Self::alloc_async_on(stream, len)? };
        if b.device_ptr().is_null() {
            return Ok(b);
        }
        let bytes = byte_size::<T>(len)?;
        let op = stream.begin_op();
        let zeroed = if op.is_capturing() {
            // Another thread began a capture since the allocation: the memset would only be recorded.
            Err(Error::InvalidArgument {
                what: "stream for a stream-ordered allocation",
                value: format!("stream {}", stream.id),
                reason: "a capture began on it before the memory was zeroed".into(),
            })
        } else {
            b.allocation().use_on(&op, Access::Write).and_then(|()| {
                stream.device.bind()?;
                // SAFETY: `b` is `bytes` of device memory on `stream`'s device (current), allocated in
                // `stream`'s order just before; `stream` is recorded as its writer, so the buffer is freed
                // and used elsewhere only after `stream`'s work. Not capturing (checked under `op`, held
                // through the call), so the memset runs now.
                unsafe { result::memset_async(b.device_ptr(), 0, bytes, stream.raw) }
            })
        };
        // Before `b` can be dropped (on an error): its free takes the stream's gate again.
        drop(op);
        zeroed?;
        Ok(b)
    }

    /// Whether this buffer is freed in stream order (it came from a memory pool).
    pub fn is_stream_ordered(&self) -> bool {
        self.allocation().is_stream_ordered()
    }
}
