//! 16-bit float fills ([`f16`](crate::half::f16), [`bf16`](crate::half::bf16)): generated in `f32` and rounded on the device.
//!
//! hipRAND has half-precision generators on AMD only (rocRAND's; cuRAND has none, so hipRAND's NVIDIA
//! backend answers "not implemented") and none for bfloat16. These fills are the same on every platform
//! instead: the generator fills a scratch `f32` buffer exactly as [`Generator::uniform`] /
//! [`normal`](Generator::normal) / [`log_normal`](Generator::log_normal) would, then the built-in
//! conversion ([`elementwise::convert`](crate::elementwise::convert)) rounds it into `out` (to nearest,
//! ties to even) on the generator's stream. A 16-bit fill consumes the generator's sequence as an `f32`
//! fill of the same length does, and its values are that fill's, rounded. The scratch buffer is
//! allocated and freed in the stream's order (`hipMallocAsync` / `hipFreeAsync` where the device has
//! memory pools; elsewhere `hipMalloc`, whose free waits on the host for the fill), so the call returns
//! at once. A stream being captured is refused ([`Error::InvalidArgument`](crate::Error::InvalidArgument)):
//! fill in `f32` and convert with [`elementwise::convert`](crate::elementwise::convert) inside a capture.

use super::Generator;
use crate::elementwise::{self, ConvertTo, Element};
use crate::error::Result;
use crate::event::same_device;
use crate::launch::KernelArg;
use crate::memory::{DeviceBuffer, DeviceMemoryMut};
use crate::stream::Stream;

impl Generator {
    /// Uniform values in (0, 1] as `f16` or `bf16`: [`uniform`](Self::uniform) in `f32`, rounded (so a
    /// value near 1 may round to exactly 1, and a tiny one to 0 in `f16`).
    ///
    /// # Errors
    ///
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) for `out` on another device than the
    /// generator's; [`Error::InvalidArgument`](crate::Error::InvalidArgument) on a capturing stream and
    /// for a length that is not a multiple of a quasi-random generator's dimensions; what the `f32` fill,
    /// the scratch allocation and the conversion return (the conversion kernel is compiled with HIPRTC
    /// on its first use).
    ///
    /// ```no_run
    /// use hip::half::f16;
    /// use hip::rand::{Generator, RngType};
    /// # fn f(stream: &hip::Stream) -> hip::Result<()> {
    /// let mut rng = Generator::new(stream, RngType::Philox4x32_10)?;
    /// let mut x = hip::DeviceBuffer::<f16>::zeroed(stream.device(), 4096)?;
    /// rng.uniform_half(&mut x)?;
    /// # Ok(()) }
    /// ```
    pub fn uniform_half<T: Element>(
        &mut self,
        out: &mut (impl DeviceMemoryMut<T> + KernelArg),
    ) -> Result<()>
    where
        f32: ConvertTo<T>,
    {
        self.through_f32("uniform_half", out, |g, tmp| g.uniform(tmp))
    }

    /// Normal values of `mean` and `stddev` as `f16` or `bf16`: [`normal`](Self::normal) in `f32` (the
    /// same checks: even length for a pseudo-random generator, whole points for a quasi-random one),
    /// rounded.
    ///
    /// # Errors
    ///
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) for `out` on another device than the
    /// generator's; [`Error::InvalidArgument`](crate::Error::InvalidArgument) on a capturing stream and
    /// for the rules of [`normal`](Self::normal); what the `f32` fill, the scratch allocation and the
    /// conversion return (the conversion kernel is compiled with HIPRTC on its first use).
    ///
    /// ```no_run
    /// use hip::half::bf16;
    /// use hip::rand::{Generator, RngType};
    /// # fn f(stream: &hip::Stream, weights: &mut hip::DeviceBuffer<bf16>) -> hip::Result<()> {
    /// let mut rng = Generator::new(stream, RngType::Philox4x32_10)?;
    /// rng.normal_half(weights, 0.0, 0.02)?; // an even length
    /// # Ok(()) }
    /// ```
    pub fn normal_half<T: Element>(
        &mut self,
        out: &mut (impl DeviceMemoryMut<T> + KernelArg),
        mean: f32,
        stddev: f32,
    ) -> Result<()>
    where
        f32: ConvertTo<T>,
    {
        self.through_f32("normal_half", out, |g, tmp| g.normal(tmp, mean, stddev))
    }

    /// Log-normal values as `f16` or `bf16`: [`log_normal`](Self::log_normal) in `f32`, rounded.
    ///
    /// # Errors
    ///
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) for `out` on another device than the
    /// generator's; [`Error::InvalidArgument`](crate::Error::InvalidArgument) on a capturing stream and
    /// for the rules of [`normal`](Self::normal); what the `f32` fill, the scratch allocation and the
    /// conversion return (the conversion kernel is compiled with HIPRTC on its first use).
    ///
    /// ```no_run
    /// use hip::half::f16;
    /// use hip::rand::{Generator, RngType};
    /// # fn f(stream: &hip::Stream, x: &mut hip::DeviceBuffer<f16>) -> hip::Result<()> {
    /// let mut rng = Generator::new(stream, RngType::PseudoDefault)?;
    /// rng.log_normal_half(x, 0.0, 0.5)?;
    /// # Ok(()) }
    /// ```
    pub fn log_normal_half<T: Element>(
        &mut self,
        out: &mut (impl DeviceMemoryMut<T> + KernelArg),
        mean: f32,
        stddev: f32,
    ) -> Result<()>
    where
        f32: ConvertTo<T>,
    {
        self.through_f32("log_normal_half", out, |g, tmp| {
            g.log_normal(tmp, mean, stddev)
        })
    }

    fn through_f32<T: Element>(
        &mut self,
        call: &'static str,
        out: &mut (impl DeviceMemoryMut<T> + KernelArg),
        fill: impl FnOnce(&mut Self, &mut DeviceBuffer<f32>) -> Result<()>,
    ) -> Result<()>
    where
        f32: ConvertTo<T>,
    {
        same_device(call, &self.device, out.device())?;
        if out.is_empty() {
            return Ok(());
        }
        // In the stream's order, so that dropping it does not wait on the host for the fill and the
        // conversion (a hipMalloc'd buffer's drop would: hipFree).
        // SAFETY: every element is written by `fill` (a whole-buffer generation of out.len() values)
        // before the conversion reads it; on an error nothing reads it and it is freed.
        let mut scratch = unsafe { DeviceBuffer::<f32>::alloc_async_on(&self.stream, out.len())? };
        fill(self, &mut scratch)?;
        let stream = Stream::from_handle(&self.stream);
        elementwise::convert(&stream, &scratch, out)
    }
}
