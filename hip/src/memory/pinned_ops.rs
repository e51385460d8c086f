//! Queued operations on pinned host memory alone: host-to-host copies between pinned buffers and fills
//! of pinned memory, ordered by the memory model like every other copy and fill.

use super::ops::{fill_value, memset_elements};
use super::tracking::{use_both, Access};
use super::{byte_size, check_len, DeviceCopy, HostMemory, HostMemoryMut};
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::event::same_device;
use crate::result;
use crate::stream::Stream;
use hip_sys as sys;

impl Stream {
    /// Queue a copy of `src` into `dst`, both pinned host memory ([`PinnedBuffer`](crate::PinnedBuffer)s
    /// or views of them) of the same length (`hipMemcpyAsync`, host to host), after the work on either
    /// that conflicts. The host sees `dst`'s new contents ([`as_slice`](crate::PinnedBuffer::as_slice))
    /// once the copy is done, and changes `src` again only after the copy read it.
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`] for lengths that differ, [`Error::DeviceMismatch`] unless the stream
    /// and both buffers are on one device, [`Error::InvalidArgument`] on a capturing stream (pinned memory
    /// is refused in graphs: see [`GraphPinnedBuffer`](crate::GraphPinnedBuffer)), and what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, device: &Device) -> hip::Result<()> {
    /// let a = PinnedBuffer::from_slice(device, &[1u32, 2, 3])?;
    /// let mut b = PinnedBuffer::<u32>::zeroed(device, 3)?;
    /// stream.copy_host_async(&a, &mut b)?;
    /// assert_eq!(b.as_slice()?, [1, 2, 3]); // waits for the copy
    /// # Ok(()) }
    /// ```
    pub fn copy_host_async<T: DeviceCopy>(
        &self,
        src: &impl HostMemory<T>,
        dst: &mut impl HostMemoryMut<T>,
    ) -> Result<()> {
        const WHAT: &str = "copy_host_async";
        check_len(WHAT, dst.len(), src.len())?;
        same_device(WHAT, self.device(), src.device())?;
        same_device(WHAT, self.device(), dst.device())?;
        let bytes = byte_size::<T>(dst.len())?;
        if bytes == 0 {
            return Ok(());
        }
        let op = self.begin_op();
        use_both(
            &op,
            (src.allocation(), Access::Read),
            (dst.allocation(), Access::Write),
        )?;
        self.device().bind()?;
        // SAFETY: `src` and `dst` are `bytes` bytes each of pinned host memory (equal lengths checked) that
        // `&src` and `&mut dst` keep from being one memory. The stream now waits for the work that conflicts
        // with each and is recorded as their user, so neither is freed, nor touched by the host (its slices
        // wait), before the copy is done; a capturing stream never gets here (`use_both` refuses pinned
        // memory in a capture).
        unsafe {
            result::memcpy_async(
                dst.host_mut_ptr().cast(),
                src.host_ptr().cast(),
                bytes,
                sys::hipMemcpyHostToHost,
                self.raw(),
            )
        }
    }

    /// Queue a fill of every element of `dst`, pinned host memory (a [`PinnedBuffer`](crate::PinnedBuffer)
    /// or a mutable view of one), with `value` (`hipMemsetAsync`, `hipMemsetD16Async` or
    /// `hipMemsetD32Async` by the size of `T`), after the work on it that conflicts. The host sees the
    /// values once the fill is done.
    ///
    /// # Errors
    ///
    /// [`Error::DeviceMismatch`] for memory of another device than the stream's,
    /// [`Error::InvalidArgument`] for a `T` of another size than 1, 2 or 4 bytes or on a capturing stream,
    /// and what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, device: &Device) -> hip::Result<()> {
    /// let mut host = PinnedBuffer::<u32>::zeroed(device, 1024)?;
    /// stream.fill_host_async(&mut host, 7)?;
    /// assert!(host.as_slice()?.iter().all(|&v| v == 7)); // waits for the fill
    /// # Ok(()) }
    /// ```
    pub fn fill_host_async<T: DeviceCopy>(
        &self,
        dst: &mut impl HostMemoryMut<T>,
        value: T,
    ) -> Result<()> {
        same_device("fill_host_async", self.device(), dst.device())?;
        let bits = fill_value(&value)?;
        if dst.len() == 0 {
            return Ok(());
        }
        let op = self.begin_op();
        dst.allocation().use_on(&op, Access::Write)?;
        self.device().bind()?;
        let (p, n) = (dst.host_mut_ptr().cast(), dst.len());
        // SAFETY: `dst` is `n` elements of 1, 2 or 4 bytes (`fill_value` returned) of pinned host memory,
        // which HIP and CUDA fill through its mapping on the stream's device (checked, current). The
        // stream now waits for its other users and is recorded as its writer, so it is not freed, nor read
        // by the host, before the fill is done; a capturing stream never gets here (`use_on` refuses pinned
        // memory in a capture).
        unsafe { memset_elements::<T>(p, bits, n, self.raw()) }
    }
}
