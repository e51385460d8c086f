//! Copies into and out of arrays (`hipMemcpy2DToArrayAsync`, `hipMemcpy2DFromArrayAsync`) and 3-D copies
//! between arrays and pitched memory (`hipMemcpy3DAsync`), every extent checked against both sides
//! before HIP is called, ordered by the memory model like any copy.

use super::{Array, ChannelFormat};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::event::same_device;
use crate::memory::tracking::{use_both, Allocation};
use crate::memory::{check_plane, row_bytes, Access, DeviceCopy, DeviceMemory, DeviceMemoryMut};
use crate::memory::{check_region, DevicePtr, PitchedBuffer};
use crate::result;
use crate::stream::Stream;
use hip_sys as sys;
use std::ffi::c_void;
use std::sync::Arc;

impl Stream {
    /// Queue a copy of `height` rows of `width` elements from device memory `src` (rows `src_pitch` bytes
    /// apart) into the 1-D or 2-D array `dst` at element column `at.0`, row `at.1`
    /// (`hipMemcpy2DToArrayAsync`). A write of the array for the memory model. `src` may be a
    /// [`PitchedBuffer`] (its `pitch_bytes()`), a buffer or a view, of the stream's device.
    ///
    /// # Errors
    ///
    /// Before HIP is called: [`Error::InvalidArgument`] naming the side for a pitch shorter than a row,
    /// rows past the end of `src`, a region past the array's extent, a 3-D array (use
    /// [`copy_3d_async`](Self::copy_3d_async)) or sizes that overflow; [`Error::DeviceMismatch`] unless
    /// all three share a device. Then what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream) -> hip::Result<()> {
    /// use hip::texture::{Array, ArrayFlags, Extent};
    /// let texels = DeviceBuffer::from_slice(device, &[0.5f32; 16 * 8])?;
    /// let mut a = Array::<f32>::zeroed(device, Extent::new(16, 8, 0), ArrayFlags::DEFAULT)?;
    /// stream.copy_2d_to_array_async(&texels, 16 * 4, &mut a, (0, 0), 16, 8)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_2d_to_array_async<T: ChannelFormat>(
        &self,
        src: &impl DeviceMemory<T>,
        src_pitch: usize,
        dst: &mut Array<T>,
        at: (usize, usize),
        width: usize,
        height: usize,
    ) -> Result<()> {
        let src = Linear {
            what: "hipMemcpy2DToArrayAsync source",
            ptr: src.device_ptr(),
            bytes: src.byte_len(),
            pitch: src_pitch,
            alloc: src.allocation(),
            device: src.device(),
            kind: sys::hipMemcpyDeviceToDevice,
        };
        // SAFETY: `src` is device memory of `byte_len()` bytes, tracked by its allocation.
        unsafe { self.linear_to_array(src, dst, at, width, height) }
    }

    /// Queue a copy of `height` rows of `width` elements of the 1-D or 2-D array `src`, from element
    /// column `at.0`, row `at.1`, into device memory `dst` (rows `dst_pitch` bytes apart)
    /// (`hipMemcpy2DFromArrayAsync`). A read of the array for the memory model.
    ///
    /// # Errors
    ///
    /// As [`copy_2d_to_array_async`](Self::copy_2d_to_array_async), the sides swapped.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream, a: &hip::texture::Array<f32>) -> hip::Result<()> {
    /// let mut out = DeviceBuffer::<f32>::zeroed(device, 4 * 2)?;
    /// stream.copy_2d_from_array_async(a, (3, 1), &mut out, 4 * 4, 4, 2)?; // columns 3..7 of rows 1..3
    /// # Ok(()) }
    /// ```
    pub fn copy_2d_from_array_async<T: ChannelFormat>(
        &self,
        src: &Array<T>,
        at: (usize, usize),
        dst: &mut impl DeviceMemoryMut<T>,
        dst_pitch: usize,
        width: usize,
        height: usize,
    ) -> Result<()> {
        let dst = Linear {
            what: "hipMemcpy2DFromArrayAsync destination",
            ptr: dst.device_ptr(),
            bytes: dst.byte_len(),
            pitch: dst_pitch,
            alloc: dst.allocation(),
            device: dst.device(),
            kind: sys::hipMemcpyDeviceToDevice,
        };
        // SAFETY: `dst` is device memory of `byte_len()` bytes, tracked by its allocation, borrowed
        // mutably.
        unsafe { self.array_to_linear(src, at, dst, width, height) }
    }

    /// Queue a copy of an `extent` (elements: width, height, depth) box from `src` at `src_at` into `dst`
    /// at `dst_at` (`hipMemcpy3DAsync`). Each side is an [`Array`] or a [`PitchedBuffer`] (any
    /// dimensions: 1-D and 2-D ones have one slice, and one row); every position plus the extent is
    /// checked against that side's extent. A read of `src` and a write of `dst` for the memory model.
    ///
    /// # Errors
    ///
    /// Before HIP is called: [`Error::InvalidArgument`] naming the side and axis for a box past its
    /// extent (or sizes that overflow); [`Error::DeviceMismatch`] unless all three share a device. Then
    /// what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream) -> hip::Result<()> {
    /// use hip::memory::PitchedBuffer;
    /// use hip::texture::{Array, ArrayFlags, Extent};
    /// let v = PitchedBuffer::<f32>::zeroed_3d(device, 33, 17, 5)?;
    /// let mut a = Array::<f32>::zeroed(device, Extent::new(33, 17, 5), ArrayFlags::DEFAULT)?;
    /// stream.copy_3d_async(&v, [0; 3], &mut a, [0; 3], [33, 17, 5])?;
    /// # Ok(()) }
    /// ```
    pub fn copy_3d_async<T: DeviceCopy>(
        &self,
        src: &impl Volume<T>,
        src_at: [usize; 3],
        dst: &mut impl Volume<T>,
        dst_at: [usize; 3],
        extent: [usize; 3],
    ) -> Result<()> {
        let names = [
            "hipMemcpy3DAsync",
            "hipMemcpy3DAsync source",
            "hipMemcpy3DAsync destination",
        ];
        let Some(p) = params_3d(names, self.device(), src, src_at, &*dst, dst_at, extent)? else {
            return Ok(());
        };
        // SAFETY: both sides hold their region (params_3d checked it against the extent each was made
        // with: an array's, or a pitched buffer's rows of `pitch` bytes, `width * e <= pitch`), on the
        // stream's device, tracked by their allocations; `dst` is borrowed mutably.
        unsafe {
            self.queue_3d(
                &p,
                (src.allocation(), Access::Read),
                (dst.allocation(), Access::Write),
            )
        }
    }
}

/// The linear side of a 2-D copy to or from an array: device memory, or pinned host memory.
pub(super) struct Linear<'a> {
    /// The side, for errors (`"hipMemcpy2DToArrayAsync source"`).
    pub what: &'static str,
    pub ptr: *mut c_void,
    pub bytes: usize,
    /// Bytes from one row to the next.
    pub pitch: usize,
    pub alloc: &'a Arc<Allocation>,
    pub device: &'a Device,
    /// The copy's kind from this side's point of view (device to device, host to device, ...).
    pub kind: sys::hipMemcpyKind,
}

impl Stream {
    /// Queue `height` rows of `width` elements from `src` into the 1-D or 2-D array `dst` at `at`
    /// (`hipMemcpy2DToArrayAsync`): both sides checked, then ordered as a read of `src` and a write of
    /// the array.
    ///
    /// # Safety
    ///
    /// `src.ptr` points to `src.bytes` bytes of memory of `src.kind`'s source side, on `src.device`,
    /// tracked by `src.alloc` (which keeps it alive while the copy is queued).
    pub(super) unsafe fn linear_to_array<T: ChannelFormat>(
        &self,
        src: Linear<'_>,
        dst: &mut Array<T>,
        at: (usize, usize),
        width: usize,
        height: usize,
    ) -> Result<()> {
        const CALL: &str = "hipMemcpy2DToArrayAsync";
        let row = row_bytes::<T>("hipMemcpy2DToArrayAsync width", width)?;
        check_plane(src.what, src.bytes, 0, src.pitch, row, height)?;
        check_array_2d(
            "hipMemcpy2DToArrayAsync destination",
            dst,
            at,
            width,
            height,
        )?;
        same_device(CALL, self.device(), src.device)?;
        same_device(CALL, self.device(), dst.device())?;
        if row == 0 || height == 0 {
            return Ok(());
        }
        let op = self.begin_op();
        use_both(&op, (src.alloc, Access::Read), (&dst.alloc, Access::Write))?;
        self.device().bind()?;
        // SAFETY: `src` holds `(height - 1) * pitch + row` bytes (check_plane; the caller's contract
        // for the rest) and the array the region (check_array_2d; the byte column is `at.0` elements of
        // `T`, the array's format); both on the stream's device (current). The stream waits for their
        // conflicting users and is recorded as a user of both (host memory is refused while capturing),
        // so neither is freed or used in conflict before the copy is done.
        unsafe {
            result::texture::memcpy_2d_to_array_async(
                dst.raw(),
                at.0 * size_of::<T>(),
                at.1,
                src.ptr,
                src.pitch,
                row,
                height,
                src.kind,
                self.raw(),
            )
        }
    }

    /// Queue `height` rows of `width` elements of the 1-D or 2-D array `src` at `at` into `dst`
    /// (`hipMemcpy2DFromArrayAsync`): both sides checked, then ordered as a read of the array and a
    /// write of `dst`.
    ///
    /// # Safety
    ///
    /// As [`linear_to_array`](Self::linear_to_array) for `dst`, which nothing else reads or writes
    /// while borrowed (a mutable borrow).
    pub(super) unsafe fn array_to_linear<T: ChannelFormat>(
        &self,
        src: &Array<T>,
        at: (usize, usize),
        dst: Linear<'_>,
        width: usize,
        height: usize,
    ) -> Result<()> {
        const CALL: &str = "hipMemcpy2DFromArrayAsync";
        let row = row_bytes::<T>("hipMemcpy2DFromArrayAsync width", width)?;
        check_array_2d("hipMemcpy2DFromArrayAsync source", src, at, width, height)?;
        check_plane(dst.what, dst.bytes, 0, dst.pitch, row, height)?;
        same_device(CALL, self.device(), src.device())?;
        same_device(CALL, self.device(), dst.device)?;
        if row == 0 || height == 0 {
            return Ok(());
        }
        let op = self.begin_op();
        use_both(&op, (&src.alloc, Access::Read), (dst.alloc, Access::Write))?;
        self.device().bind()?;
        // SAFETY: as in linear_to_array, the other way.
        unsafe {
            result::texture::memcpy_2d_from_array_async(
                dst.ptr,
                dst.pitch,
                src.raw(),
                at.0 * size_of::<T>(),
                at.1,
                row,
                height,
                dst.kind,
                self.raw(),
            )
        }
    }
}

impl Stream {
    /// Order the 3-D copy `p` after the conflicting users of its two sides, then queue it.
    ///
    /// # Safety
    ///
    /// `p` is a copy between memory of this stream's device (or pinned host memory for it) that holds
    /// its regions, tracked by the two allocations given; a written side is not borrowed elsewhere.
    pub(super) unsafe fn queue_3d(
        &self,
        p: &sys::hipMemcpy3DParms,
        src: (&Arc<Allocation>, Access),
        dst: (&Arc<Allocation>, Access),
    ) -> Result<()> {
        let op = self.begin_op();
        use_both(&op, src, dst)?;
        self.device().bind()?;
        // SAFETY: the caller's contract; the stream waits for the sides' conflicting users and is
        // recorded as a user of both (host memory is refused while capturing), so neither is freed or
        // used in conflict before the copy is done.
        unsafe { result::texture::memcpy_3d_async(p, self.raw()) }
    }
}

/// HIP's parameters for a 3-D copy of an `extent` box from `src` at `src_at` to `dst` at `dst_at`, on
/// `device`, every position plus the extent checked against its side's extent first; `None` for an
/// empty box (nothing to copy). `names`: the call, then its source and its destination, for errors.
pub(crate) fn params_3d<T: DeviceCopy>(
    [call, source, destination]: [&'static str; 3],
    device: &Device,
    src: &impl Volume<T>,
    src_at: [usize; 3],
    dst: &impl Volume<T>,
    dst_at: [usize; 3],
    extent: [usize; 3],
) -> Result<Option<sys::hipMemcpy3DParms>> {
    let (s, d) = (src.layout(), dst.layout());
    check_region(source, s.whose(), src_at, extent, s.extent())?;
    check_region(destination, d.whose(), dst_at, extent, d.extent())?;
    same_device(call, device, src.device())?;
    same_device(call, device, dst.device())?;
    if extent.contains(&0) || size_of::<T>() == 0 {
        return Ok(None);
    }
    let e = size_of::<T>();
    let any_array = s.is_array() || d.is_array();
    // A pitched side's x position: bytes on AMD, where HIP scales only an array side's x by its
    // element size (clr's getDrvMemcpy3DDesc); on NVIDIA, elements whenever an array takes part
    // (CUDA 12.9 on an H100: a pitched destination at x = 1 passed as 4 bytes landed at element 4).
    let pitched_x = if any_array && crate::PLATFORM == "nvidia" {
        1
    } else {
        e
    };
    let mut p = sys::hipMemcpy3DParms {
        kind: sys::hipMemcpyDeviceToDevice as _,
        extent: sys::hipExtent {
            // Elements when an array takes part, bytes between pitched memories (HIP's and CUDA's
            // rule); the region was checked in elements, so neither overflows (it fits an
            // allocation).
            width: if any_array { extent[0] } else { extent[0] * e },
            height: extent[1],
            depth: extent[2],
        },
        ..Default::default()
    };
    match s.0 {
        Shape::Array { raw, .. } => {
            p.srcArray = raw;
            p.srcPos = pos(src_at, 1);
        }
        Shape::Pitched { ptr, pitch, extent } => {
            p.srcPtr = pitched(ptr, pitch, e, extent);
            p.srcPos = pos(src_at, pitched_x);
        }
    }
    match d.0 {
        Shape::Array { raw, .. } => {
            p.dstArray = raw;
            p.dstPos = pos(dst_at, 1);
        }
        Shape::Pitched { ptr, pitch, extent } => {
            p.dstPtr = pitched(ptr, pitch, e, extent);
            p.dstPos = pos(dst_at, pitched_x);
        }
    }
    Ok(Some(p))
}

/// A 2-D array region: refused on a 3-D array, or past the extent.
pub(super) fn check_array_2d<T: ChannelFormat>(
    what: &'static str,
    a: &Array<T>,
    at: (usize, usize),
    width: usize,
    height: usize,
) -> Result<()> {
    let e = a.extent();
    if a.flags().contains(super::ArrayFlags::LAYERED) {
        return Err(Error::InvalidArgument {
            what,
            value: format!("a layered array of {} layers of extent {e:?}", e.depth),
            reason: "2-D array copies take 1-D and 2-D arrays: copy layers with \
                     Stream::copy_3d_async (the layers are its slices)"
                .into(),
        });
    }
    if e.depth != 0 {
        return Err(Error::InvalidArgument {
            what,
            value: format!("a 3-D array of extent {e:?}"),
            reason:
                "2-D array copies take 1-D and 2-D arrays: copy slices with Stream::copy_3d_async"
                    .into(),
        });
    }
    check_region(
        what,
        "array",
        [at.0, at.1, 0],
        [width, height, 1],
        [e.width, e.rows(), 1],
    )
}

fn pos(at: [usize; 3], x_unit: usize) -> sys::hipPos {
    sys::hipPos {
        x: at[0] * x_unit,
        y: at[1],
        z: at[2],
    }
}

fn pitched(ptr: DevicePtr, pitch: usize, elem: usize, extent: [usize; 3]) -> sys::hipPitchedPtr {
    sys::hipPitchedPtr {
        ptr,
        pitch,
        xsize: pitch / elem,
        ysize: extent[1],
    }
}

/// What one side of a 3-D copy is.
#[derive(Clone, Copy)]
enum Shape {
    Array {
        raw: sys::hipArray_t,
        extent: [usize; 3],
    },
    Pitched {
        ptr: DevicePtr,
        pitch: usize,
        extent: [usize; 3],
    },
}

/// One side of a 3-D copy, as [`Volume::layout`] describes it (opaque).
#[doc(hidden)]
pub struct VolumeLayout(Shape);

impl VolumeLayout {
    /// Linear memory at `ptr`: rows of `pitch` bytes, `extent` elements (width, rows, slices).
    pub(super) fn pitched(ptr: *mut c_void, pitch: usize, extent: [usize; 3]) -> VolumeLayout {
        VolumeLayout(Shape::Pitched { ptr, pitch, extent })
    }
    fn extent(&self) -> [usize; 3] {
        match self.0 {
            Shape::Array { extent, .. } | Shape::Pitched { extent, .. } => extent,
        }
    }
    fn is_array(&self) -> bool {
        matches!(self.0, Shape::Array { .. })
    }
    fn whose(&self) -> &'static str {
        if self.is_array() {
            "array"
        } else {
            "pitched buffer"
        }
    }
}

pub(super) mod sealed {
    pub trait Sealed {}
}

/// Memory a 3-D copy takes as one side ([`Stream::copy_3d_async`]): an [`Array`] or a
/// [`PitchedBuffer`]. Sealed: only this crate's types implement it, so each layout is right.
pub trait Volume<T: DeviceCopy>: sealed::Sealed {
    /// The device it lives on.
    fn device(&self) -> &Device;
    /// Its extent in elements (width, rows, slices; each at least 1).
    fn volume_extent(&self) -> [usize; 3] {
        self.layout().extent()
    }
    #[doc(hidden)]
    fn layout(&self) -> VolumeLayout;
    #[doc(hidden)]
    fn allocation(&self) -> &Arc<Allocation>;
}

impl<T: ChannelFormat> sealed::Sealed for Array<T> {}
impl<T: ChannelFormat> Volume<T> for Array<T> {
    fn device(&self) -> &Device {
        Array::device(self)
    }
    fn layout(&self) -> VolumeLayout {
        let e = self.extent();
        VolumeLayout(Shape::Array {
            raw: self.raw(),
            extent: [e.width, e.rows(), e.slices()],
        })
    }
    fn allocation(&self) -> &Arc<Allocation> {
        &self.alloc
    }
}

impl<T: DeviceCopy> sealed::Sealed for PitchedBuffer<T> {}
impl<T: DeviceCopy> Volume<T> for PitchedBuffer<T> {
    fn device(&self) -> &Device {
        DeviceMemory::device(self)
    }
    fn layout(&self) -> VolumeLayout {
        VolumeLayout(Shape::Pitched {
            ptr: self.device_ptr(),
            pitch: self.pitch_bytes(),
            extent: [self.width(), self.height(), self.depth()],
        })
    }
    fn allocation(&self) -> &Arc<Allocation> {
        DeviceMemory::allocation(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_checked_per_axis_naming_it() {
        check_region("w", "array", [1, 2, 3], [4, 5, 6], [5, 7, 9]).unwrap();
        let e = check_region("w", "array", [1, 2, 3], [4, 6, 6], [5, 7, 9]).unwrap_err();
        assert!(e.to_string().contains("along y"), "{e}");
        let e = check_region(
            "w",
            "pitched buffer",
            [usize::MAX, 0, 0],
            [1, 1, 1],
            [5, 7, 9],
        )
        .unwrap_err();
        assert!(e.to_string().contains("along x"), "{e}");
        assert!(e.to_string().contains("pitched buffer"), "{e}");
    }
}
