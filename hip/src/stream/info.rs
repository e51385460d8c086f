//! What a stream says of itself: its flags (`hipStreamGetFlags`) and priority (`hipStreamGetPriority`).

use super::Stream;
use crate::error::Result;
use crate::result;
use hip_sys as sys;

impl Stream {
    /// The flags the stream was created with (`hipStreamGetFlags`): `hipStreamDefault` (0) or
    /// `hipStreamNonBlocking` (1).
    ///
    /// # Errors
    ///
    /// What HIP returns for making the device current and for `hipStreamGetFlags`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// assert_eq!(Stream::non_blocking(device)?.flags()?, hip::sys::hipStreamNonBlocking);
    /// # Ok(()) }
    /// ```
    pub fn flags(&self) -> Result<u32> {
        self.device().bind()?;
        // SAFETY: this live stream (or null, the device's null stream), its device current.
        unsafe { result::device::stream_get_flags(self.raw()) }
    }

    /// Whether work on this stream runs without the legacy null stream's implicit order
    /// (`hipStreamNonBlocking` among [`flags`](Self::flags)).
    ///
    /// # Errors
    ///
    /// As [`flags`](Self::flags).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// assert!(!Stream::new(device)?.is_non_blocking()?);
    /// # Ok(()) }
    /// ```
    pub fn is_non_blocking(&self) -> Result<bool> {
        Ok(self.flags()? & sys::hipStreamNonBlocking != 0)
    }

    /// The stream's priority (`hipStreamGetPriority`): lower numbers run first, within
    /// [`Stream::priority_range`].
    ///
    /// # Errors
    ///
    /// What HIP returns for making the device current and for `hipStreamGetPriority`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// let (_least, greatest) = Stream::priority_range(device)?;
    /// let urgent = Stream::with_priority(device, greatest, true)?;
    /// assert_eq!(urgent.priority()?, greatest);
    /// # Ok(()) }
    /// ```
    pub fn priority(&self) -> Result<i32> {
        self.device().bind()?;
        // SAFETY: as in `flags`.
        unsafe { result::device::stream_get_priority(self.raw()) }
    }
}
