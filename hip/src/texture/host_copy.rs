//! Copies between pinned host memory and arrays (`hipMemcpy2DToArrayAsync` from the host,
//! `hipMemcpy2DFromArrayAsync` to the host): the host side's extent checked as a device side's is, the
//! host memory a user of the stream for the memory model, as a pinned copy's is.

use super::copy::Linear;
use super::{Array, ChannelFormat};
use crate::error::Result;
use crate::memory::{HostMemory, HostMemoryMut};
use crate::stream::Stream;
use hip_sys as sys;

impl Stream {
    /// Queue a copy of `height` rows of `width` elements from pinned host memory `src` (rows `src_pitch`
    /// bytes apart) into the 1-D or 2-D array `dst` at element column `at.0`, row `at.1`
    /// (`hipMemcpy2DToArrayAsync`, host to device). A read of `src` and a write of the array for the
    /// memory model: the host writes `src` again only once the copy is done.
    ///
    /// # Errors
    ///
    /// Before HIP is called: [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming the side for
    /// a pitch shorter than a row, rows past the end of `src`, a region past the array's extent, a 3-D
    /// array or sizes that overflow, and for a capturing stream (pinned memory is refused in graphs);
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) unless all three share a device. Then what
    /// HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream) -> hip::Result<()> {
    /// use hip::texture::{Array, ArrayFlags, Extent};
    /// let texels = PinnedBuffer::from_slice(device, &[0.5f32; 16 * 8])?;
    /// let mut a = Array::<f32>::zeroed(device, Extent::new(16, 8, 0), ArrayFlags::DEFAULT)?;
    /// stream.copy_2d_to_array_from_host_async(&texels, 16 * 4, &mut a, (0, 0), 16, 8)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_2d_to_array_from_host_async<T: ChannelFormat>(
        &self,
        src: &impl HostMemory<T>,
        src_pitch: usize,
        dst: &mut Array<T>,
        at: (usize, usize),
        width: usize,
        height: usize,
    ) -> Result<()> {
        let src = Linear {
            what: "hipMemcpy2DToArrayAsync source (host)",
            ptr: src.host_ptr().cast_mut().cast(),
            bytes: src.len() * size_of::<T>(),
            pitch: src_pitch,
            alloc: src.allocation(),
            device: src.device(),
            kind: sys::hipMemcpyHostToDevice,
        };
        // SAFETY: `src` is pinned host memory of `len()` elements, tracked by its allocation (the host
        // writes it again only once the copy, recorded as its reader, is done).
        unsafe { self.linear_to_array(src, dst, at, width, height) }
    }

    /// Queue a copy of `height` rows of `width` elements of the 1-D or 2-D array `src`, from element
    /// column `at.0`, row `at.1`, into pinned host memory `dst` (rows `dst_pitch` bytes apart)
    /// (`hipMemcpy2DFromArrayAsync`, device to host). A read of the array and a write of `dst` for the
    /// memory model: the host reads `dst` only once the copy is done.
    ///
    /// # Errors
    ///
    /// As [`copy_2d_to_array_from_host_async`](Self::copy_2d_to_array_from_host_async), the sides
    /// swapped.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream, a: &hip::texture::Array<f32>) -> hip::Result<()> {
    /// let mut out = PinnedBuffer::<f32>::zeroed(device, 4 * 2)?;
    /// stream.copy_2d_from_array_to_host_async(a, (3, 1), &mut out, 4 * 4, 4, 2)?;
    /// stream.synchronize()?;
    /// println!("{:?}", out.as_slice()?);
    /// # Ok(()) }
    /// ```
    pub fn copy_2d_from_array_to_host_async<T: ChannelFormat>(
        &self,
        src: &Array<T>,
        at: (usize, usize),
        dst: &mut impl HostMemoryMut<T>,
        dst_pitch: usize,
        width: usize,
        height: usize,
    ) -> Result<()> {
        let dst = Linear {
            what: "hipMemcpy2DFromArrayAsync destination (host)",
            ptr: dst.host_mut_ptr().cast(),
            bytes: dst.len() * size_of::<T>(),
            pitch: dst_pitch,
            alloc: dst.allocation(),
            device: dst.device(),
            kind: sys::hipMemcpyDeviceToHost,
        };
        // SAFETY: `dst` is pinned host memory of `len()` elements, tracked by its allocation and
        // borrowed mutably (the host reads it only once the copy, recorded as its writer, is done).
        unsafe { self.array_to_linear(src, at, dst, width, height) }
    }
}
