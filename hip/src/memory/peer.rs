//! Copies between devices (`hipMemcpyPeerAsync`).

use super::tracking::use_both;
use super::{check_len, Access, DeviceCopy, DeviceMemory, DeviceMemoryMut};
use crate::error::{Error, Result};
use crate::event::same_device;
use crate::result;
use crate::stream::Stream;

fn ordinal(d: usize) -> Result<i32> {
    i32::try_from(d).map_err(|_| Error::DeviceOutOfRange {
        ordinal: d,
        count: i32::MAX as usize,
    })
}

impl Stream {
    /// Queue a copy of `src`, on any device, into `dst` on this stream's device, of the same length
    /// (`hipMemcpyPeerAsync`). It works without peer access (the runtime stages it) and runs at link speed
    /// once [`Device::enable_peer_access`](crate::Device::enable_peer_access) was called from `dst`'s device
    /// to `src`'s.
    ///
    /// Checked first: the lengths ([`Error::LengthMismatch`]) and that `dst` is on the stream's device
    /// ([`Error::DeviceMismatch`]). Both sides are ordered by the memory model across devices: the copy
    /// waits for the source's writers on any device, and later work on either side (freeing included)
    /// waits for the copy.
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`] for lengths that differ, [`Error::DeviceMismatch`] for `dst` on another
    /// device than the stream's, [`Error::InvalidArgument`] for pinned or managed memory on a capturing
    /// stream, and what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// let (d0, d1) = (Device::get(0)?, Device::get(1)?);
    /// let a = DeviceBuffer::from_slice(&d0, &[1.0f32; 1024])?;
    /// let mut b = DeviceBuffer::<f32>::zeroed(&d1, 1024)?;
    /// let s1 = Stream::new(&d1)?;
    /// s1.copy_peer_async(&a, &mut b)?; // d0 -> d1, queued on d1's stream
    /// assert_eq!(b.to_vec()?, [1.0; 1024]);
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn copy_peer_async<T: DeviceCopy>(
        &self,
        src: &impl DeviceMemory<T>,
        dst: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        check_len("copy_peer_async", dst.len(), src.len())?;
        same_device("copy_peer_async", self.device(), dst.device())?;
        if dst.byte_len() == 0 {
            return Ok(());
        }
        let (dst_dev, src_dev) = (
            ordinal(dst.device().ordinal())?,
            ordinal(src.device().ordinal())?,
        );
        let op = self.begin_op();
        use_both(
            &op,
            (src.allocation(), Access::Read),
            (dst.allocation(), Access::Write),
        )?;
        self.device().bind()?;
        // SAFETY: both are device memory of `byte_len()` bytes (equal lengths checked; sealed trait) on the
        // devices whose ordinals are passed; `dst`'s device (the stream's, checked) is current. This stream
        // now waits for the source's writers and the destination's users on any device (HIP waits on another
        // device's event), and is recorded as a user of both, so neither is freed, nor used in conflict by
        // later work, before the copy is done. (On a capturing stream the uses of device memory go to the
        // capture instead, managed memory being refused there: its graphs keep both alive and order their
        // launches.)
        unsafe {
            result::memcpy_peer_async(
                dst.device_ptr(),
                dst_dev,
                src.device_ptr(),
                src_dev,
                dst.byte_len(),
                self.raw(),
            )
        }
    }
}
