//! Copies between pinned host memory and arrays (`hipMemcpy2DToArrayAsync` from the host,
//! `hipMemcpy2DFromArrayAsync` to the host): the host side's extent checked as a device side's is, the
//! host memory a user of the stream for the memory model, as a pinned copy's is.

use super::copy::check_array_2d;
use super::{Array, ChannelFormat};
use crate::error::Result;
use crate::event::same_device;
use crate::memory::tracking::use_both;
use crate::memory::{check_plane, row_bytes, Access, HostMemory, HostMemoryMut};
use crate::result;
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
        const CALL: &str = "hipMemcpy2DToArrayAsync";
        let row = row_bytes::<T>("hipMemcpy2DToArrayAsync width", width)?;
        let src_bytes = src.len() * size_of::<T>();
        check_plane(
            "hipMemcpy2DToArrayAsync source (host)",
            src_bytes,
            0,
            src_pitch,
            row,
            height,
        )?;
        check_array_2d(
            "hipMemcpy2DToArrayAsync destination",
            dst,
            at,
            width,
            height,
        )?;
        same_device(CALL, self.device(), src.device())?;
        same_device(CALL, self.device(), dst.device())?;
        if row == 0 || height == 0 {
            return Ok(());
        }
        let op = self.begin_op();
        use_both(
            &op,
            (src.allocation(), Access::Read),
            (&dst.alloc, Access::Write),
        )?;
        self.device().bind()?;
        // SAFETY: `src` is pinned host memory holding `(height - 1) * src_pitch + row` bytes (check_plane),
        // which the host writes only after this copy, recorded as its reader, is done (a capturing stream
        // is refused by `use_both`: host-visible memory); the array holds the region (check_array_2d; the
        // byte column is `at.0` elements of `T`, the array's format); both on the stream's device
        // (current). The stream waits for their conflicting users first.
        unsafe {
            result::texture::memcpy_2d_to_array_async(
                dst.raw(),
                at.0 * size_of::<T>(),
                at.1,
                src.host_ptr().cast_mut().cast(),
                src_pitch,
                row,
                height,
                sys::hipMemcpyHostToDevice,
                self.raw(),
            )
        }
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
        const CALL: &str = "hipMemcpy2DFromArrayAsync";
        let row = row_bytes::<T>("hipMemcpy2DFromArrayAsync width", width)?;
        check_array_2d("hipMemcpy2DFromArrayAsync source", src, at, width, height)?;
        let dst_bytes = dst.len() * size_of::<T>();
        check_plane(
            "hipMemcpy2DFromArrayAsync destination (host)",
            dst_bytes,
            0,
            dst_pitch,
            row,
            height,
        )?;
        same_device(CALL, self.device(), src.device())?;
        same_device(CALL, self.device(), dst.device())?;
        if row == 0 || height == 0 {
            return Ok(());
        }
        let op = self.begin_op();
        use_both(
            &op,
            (&src.alloc, Access::Read),
            (dst.allocation(), Access::Write),
        )?;
        self.device().bind()?;
        // SAFETY: as in copy_2d_to_array_from_host_async, the other way: `dst` is pinned memory of
        // `(height - 1) * dst_pitch + row` bytes or more, borrowed mutably, which the host reads or writes
        // only after this copy, recorded as its writer, is done.
        unsafe {
            result::texture::memcpy_2d_from_array_async(
                dst.host_mut_ptr().cast(),
                dst_pitch,
                src.raw(),
                at.0 * size_of::<T>(),
                at.1,
                row,
                height,
                sys::hipMemcpyDeviceToHost,
                self.raw(),
            )
        }
    }
}
