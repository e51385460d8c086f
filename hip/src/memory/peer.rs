//! Copies between devices (`hipMemcpyPeerAsync`).

use super::{check_len, DeviceCopy, DeviceMemory, DeviceMemoryMut};
use crate::error::{Error, Result};
use crate::event::{same_device, Event};
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
    /// ([`Error::DeviceMismatch`]). When `src` is on another device, that device's default stream is made to
    /// wait for the copy (an event), so synchronous operations on `src` and freeing it wait for the copy as
    /// they wait for the source device's own work.
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
        self.device().bind()?;
        // SAFETY: both are device memory of `byte_len` bytes on the named devices; they outlive the copy:
        // `dst`'s device runs it, and `src`'s device waits for it below.
        unsafe {
            result::memcpy_peer_async(
                dst.device_ptr(),
                dst_dev,
                src.device_ptr(),
                src_dev,
                dst.byte_len(),
                self.raw(),
            )?
        };
        source_waits(self, src.device())
    }
}

/// When `src_device` is not `stream`'s, make `src_device`'s default stream wait for the work just queued on
/// `stream`: freeing memory of `src_device` and its synchronous operations wait for that device's queued
/// work, and so now for this copy too.
pub(super) fn source_waits(stream: &Stream, src_device: &crate::Device) -> Result<()> {
    if src_device.ordinal() == stream.device().ordinal() {
        return Ok(());
    }
    let done = Event::new(stream.device())?;
    done.record(stream)?;
    src_device.bind()?;
    // SAFETY: the null stream of the current (source) device and a recorded event.
    unsafe { result::stream_wait_event(std::ptr::null_mut(), done.raw()) }
}
