//! Copies between the host and the device recorded in a capture, through a [`GraphPinnedBuffer`]
//! (whose host borrows graph launches check at run time: `memory::host_lease`).

use super::Capture;
use crate::error::{Error, Result};
use crate::event::same_device;
use crate::memory::tracking::use_both;
use crate::memory::{check_len, Access, DeviceCopy, DeviceMemory, GraphPinnedBuffer};
use crate::result;
use hip_sys as sys;

impl Capture<'_> {
    /// Record a copy of `src` (pinned host memory the host fills between launches) into `dst` on the
    /// captured stream (`hipMemcpyAsync` while capturing: a copy node). As with
    /// [`GraphBuilder::copy_from_host`](crate::GraphBuilder::copy_from_host), a launch is refused while
    /// the host holds a mutable borrow of `src`, and such a borrow waits for the launches before it.
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`] for lengths that differ, [`Error::DeviceMismatch`] for memory of
    /// another device than the stream's, [`Error::InvalidArgument`] for pinned or managed memory as
    /// `dst` or when the stream's capture has ended, and what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, x: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// let input = hip::GraphPinnedBuffer::<f32>::zeroed(stream.device(), x.len())?;
    /// let mut capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
    /// capture.copy_from_host(&input, x)?;
    /// let mut exec = capture.end()?.instantiate()?;
    /// input.borrow_mut()?.fill(1.0);
    /// exec.launch(stream)?; // uploads 1.0s into x
    /// # Ok(()) }
    /// ```
    pub fn copy_from_host<T: DeviceCopy, D: DeviceMemory<T>>(
        &mut self,
        src: &GraphPinnedBuffer<T>,
        dst: &mut D,
    ) -> Result<()> {
        const WHAT: &str = "captured copy from the host";
        check_len(WHAT, dst.len(), src.len())?;
        same_device(WHAT, self.stream().device(), dst.device())?;
        same_device(WHAT, self.stream().device(), src.device())?;
        if dst.byte_len() == 0 {
            return Ok(());
        }
        let op = self.stream().begin_op();
        if !op.is_capturing() {
            return Err(ended(self));
        }
        use_both(
            &op,
            (src.allocation(), Access::Read),
            (dst.allocation(), Access::Write),
        )?;
        self.stream().device().bind()?;
        // SAFETY: the stream is capturing (checked under `op`, held through the call), so the copy is
        // recorded, not run; its graph keeps both allocations (the capture log has them, `use_both`
        // refusing managed or plain pinned memory). `src` is pinned host memory and `dst` device memory of
        // the stream's device, both `byte_len()` bytes. The host writes `src` only through a borrow the
        // lease counts, which no launch of the graph overlaps.
        unsafe {
            result::memcpy_async(
                dst.device_ptr(),
                src.host_ptr().cast_const().cast(),
                dst.byte_len(),
                sys::hipMemcpyHostToDevice,
                self.stream().raw(),
            )
        }
    }

    /// Record a copy of `src` into `dst` (pinned host memory the host reads between launches) on the
    /// captured stream (a copy node). A launch is refused while the host holds any borrow of `dst`; a
    /// borrow waits for the launches before it.
    ///
    /// # Errors
    ///
    /// As [`copy_from_host`](Self::copy_from_host), with pinned or managed memory refused as `src`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, x: &DeviceBuffer<f32>) -> hip::Result<()> {
    /// let output = hip::GraphPinnedBuffer::<f32>::zeroed(stream.device(), x.len())?;
    /// let mut capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
    /// capture.copy_to_host(x, &output)?;
    /// let mut exec = capture.end()?.instantiate()?;
    /// exec.launch(stream)?;
    /// let first = output.borrow()?[0]; // waits for the launch
    /// # Ok(()) }
    /// ```
    pub fn copy_to_host<T: DeviceCopy, S: DeviceMemory<T>>(
        &mut self,
        src: &S,
        dst: &GraphPinnedBuffer<T>,
    ) -> Result<()> {
        const WHAT: &str = "captured copy to the host";
        check_len(WHAT, dst.len(), src.len())?;
        same_device(WHAT, self.stream().device(), src.device())?;
        same_device(WHAT, self.stream().device(), dst.device())?;
        if src.byte_len() == 0 {
            return Ok(());
        }
        let op = self.stream().begin_op();
        if !op.is_capturing() {
            return Err(ended(self));
        }
        use_both(
            &op,
            (src.allocation(), Access::Read),
            (dst.allocation(), Access::Write),
        )?;
        self.stream().device().bind()?;
        // SAFETY: as in copy_from_host, the other way: the host reads or writes `dst` only through a
        // borrow the lease counts, which no launch overlaps and which waits for the launches before it.
        unsafe {
            result::memcpy_async(
                dst.host_ptr().cast(),
                src.device_ptr(),
                src.byte_len(),
                sys::hipMemcpyDeviceToHost,
                self.stream().raw(),
            )
        }
    }
}

fn ended(capture: &Capture<'_>) -> Error {
    Error::InvalidArgument {
        what: "captured copy between the host and the device",
        value: format!("stream {}", capture.stream().id()),
        reason: "the stream's capture has ended".into(),
    }
}
