//! Pitched allocations (`hipMallocPitch`, `hipMalloc3D`): rows padded by the runtime to its preferred
//! alignment, for 2-D and 3-D data.

use super::tracking::{Allocation, Release};
use super::{DeviceCopy, DeviceMemoryMut, DevicePtr};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::result;
use hip_sys as sys;
use std::marker::PhantomData;
use std::sync::Arc;

/// `depth` slices of `height` rows of `width` values of `T`, each row starting `pitch_bytes()` after the
/// previous (the runtime pads rows to its alignment). Allocated with `hipMallocPitch` (2-D) or
/// `hipMalloc3D` (3-D), zero-filled, freed like a [`DeviceBuffer`](super::DeviceBuffer).
///
/// As device memory ([`DeviceMemory`](super::DeviceMemory)) it is every row with its padding:
/// `pitch() * height * depth` elements, so it passes to kernels (`arg`, `arg_mut`) and to the 2-D and
/// 3-D copies ([`Stream::copy_2d_async`](crate::Stream::copy_2d_async),
/// [`Stream::copy_3d_async`](crate::Stream::copy_3d_async)) with its own pitch.
///
/// ```no_run
/// use hip::prelude::*;
/// use hip::memory::PitchedBuffer;
///
/// let device = Device::get(0)?;
/// let image = PitchedBuffer::<f32>::zeroed_2d(&device, 100, 30)?;
/// assert!(image.pitch_bytes() >= 100 * 4);
/// assert_eq!(image.len(), image.pitch() * 30);
/// # Ok::<(), hip::Error>(())
/// ```
#[derive(Debug)]
pub struct PitchedBuffer<T: DeviceCopy> {
    ptr: DevicePtr,
    len: usize,
    alloc: Arc<Allocation>,
    pitch_bytes: usize,
    extent: [usize; 3],
    _elem: PhantomData<T>,
}

// SAFETY: as for DeviceBuffer: `ptr` is a device address the host never dereferences, the allocation is
// Send + Sync, T is DeviceCopy.
unsafe impl<T: DeviceCopy> Send for PitchedBuffer<T> {}
// SAFETY: as for DeviceBuffer: through `&PitchedBuffer` safe code only queues reads, ordered by the
// allocation's thread-safe tracking.
unsafe impl<T: DeviceCopy> Sync for PitchedBuffer<T> {}

device_memory!(PitchedBuffer);
impl<T: DeviceCopy> DeviceMemoryMut<T> for PitchedBuffer<T> {}

/// Refuse an extent with a zero side or whose row bytes overflow: `what` names the call.
fn row_bytes<T>(what: &'static str, extent: [usize; 3]) -> Result<usize> {
    let [w, h, d] = extent;
    let refuse = |reason: &str| Error::InvalidArgument {
        what,
        value: format!(
            "width {w}, height {h}, depth {d} (elements of {} bytes)",
            size_of::<T>()
        ),
        reason: reason.into(),
    };
    if w == 0 || h == 0 || d == 0 || size_of::<T>() == 0 {
        return Err(refuse(
            "a pitched allocation needs every side (and the element) at least 1",
        ));
    }
    let row = w
        .checked_mul(size_of::<T>())
        .ok_or_else(|| refuse("the row's bytes overflow usize"))?;
    h.checked_mul(d)
        .and_then(|rows| rows.checked_mul(row))
        .ok_or_else(|| refuse("the allocation's bytes overflow usize"))?;
    Ok(row)
}

impl<T: DeviceCopy> PitchedBuffer<T> {
    /// `height` rows of `width` values (`hipMallocPitch`), zero-filled (a `hipMemset` on the device's null
    /// stream, ordered before every later use).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a zero width or height or a size that overflows, or a pitch the
    /// runtime chose that is not a whole number of elements (never seen); what HIP returns for making
    /// the device current, `hipMallocPitch` and `hipMemset`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// let b = hip::memory::PitchedBuffer::<[u8; 4]>::zeroed_2d(device, 640, 480)?;
    /// assert_eq!((b.width(), b.height(), b.depth()), (640, 480, 1));
    /// # Ok(()) }
    /// ```
    pub fn zeroed_2d(device: &Device, width: usize, height: usize) -> Result<Self> {
        let row = row_bytes::<T>("hipMallocPitch extent", [width, height, 1])?;
        device.bind()?;
        let (ptr, pitch) = result::texture::malloc_pitch(row, height)?;
        Self::adopt(ptr, pitch, [width, height, 1], device)
    }

    /// `depth` slices of `height` rows of `width` values (`hipMalloc3D`), zero-filled as
    /// [`zeroed_2d`](Self::zeroed_2d).
    ///
    /// # Errors
    ///
    /// As [`zeroed_2d`](Self::zeroed_2d), with `hipMalloc3D`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// let v = hip::memory::PitchedBuffer::<f32>::zeroed_3d(device, 33, 17, 5)?;
    /// assert_eq!(v.len(), v.pitch() * 17 * 5);
    /// # Ok(()) }
    /// ```
    pub fn zeroed_3d(device: &Device, width: usize, height: usize, depth: usize) -> Result<Self> {
        let row = row_bytes::<T>("hipMalloc3D extent", [width, height, depth])?;
        device.bind()?;
        let p = result::texture::malloc_3d(sys::hipExtent {
            width: row,
            height,
            depth,
        })?;
        Self::adopt(p.ptr, p.pitch, [width, height, depth], device)
    }

    /// Own memory the runtime just allocated, then zero it.
    fn adopt(ptr: DevicePtr, pitch: usize, extent: [usize; 3], device: &Device) -> Result<Self> {
        // Owned first: any refusal below frees it (hipFree frees hipMallocPitch and hipMalloc3D memory).
        let alloc = Allocation::new(ptr, device, Release::Free);
        let e = size_of::<T>();
        let [w, h, d] = extent;
        let len = if pitch % e == 0 && pitch >= w * e {
            (pitch / e).checked_mul(h).and_then(|n| n.checked_mul(d))
        } else {
            None
        };
        let Some(len) = len else {
            return Err(Error::InvalidArgument {
                what: "pitch the runtime chose",
                value: format!("{pitch} bytes for rows of {w} elements of {e} bytes"),
                reason: "not a whole number of elements at least a row long".into(),
            });
        };
        let mut b = PitchedBuffer {
            ptr,
            len,
            alloc,
            pitch_bytes: pitch,
            extent,
            _elem: PhantomData,
        };
        b.zero()?;
        Ok(b)
    }

    /// Bytes from one row's start to the next's.
    pub fn pitch_bytes(&self) -> usize {
        self.pitch_bytes
    }

    /// Elements from one row's start to the next's.
    pub fn pitch(&self) -> usize {
        self.pitch_bytes / size_of::<T>()
    }

    /// Values in a row (without the padding).
    pub fn width(&self) -> usize {
        self.extent[0]
    }

    /// Rows in a slice.
    pub fn height(&self) -> usize {
        self.extent[1]
    }

    /// Slices (1 for a 2-D buffer).
    pub fn depth(&self) -> usize {
        self.extent[2]
    }
}

/// Refuse a region `at + size` (per axis) past `extent`, naming `what` and the axis.
pub(crate) fn check_region(
    what: &'static str,
    whose: &str,
    at: [usize; 3],
    size: [usize; 3],
    extent: [usize; 3],
) -> Result<()> {
    for (axis, ((a, s), e)) in ["x", "y", "z"].iter().zip(at.iter().zip(size).zip(extent)) {
        let end = a.checked_add(s);
        if end.is_none_or(|end| end > e) {
            return Err(Error::InvalidArgument {
                what,
                value: format!("position {at:?} + extent {size:?} (elements)"),
                reason: format!(
                    "passes the {whose}'s extent {extent:?} along {axis}: beyond the allocation"
                ),
            });
        }
    }
    Ok(())
}

impl crate::Stream {
    /// Set every byte of the values of `dst` (each row's `width` values, in every slice) to `byte`,
    /// leaving the rows' padding as it is: `hipMemset2DAsync` for a 2-D buffer, `hipMemset3DAsync` for a
    /// 3-D one. A write of `dst` for the memory model: the fill waits for its users on other streams,
    /// and later users wait for it.
    ///
    /// # Errors
    ///
    /// [`Error::DeviceMismatch`] for a buffer of another device; what HIP returns for making the device
    /// current and for the memset.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream) -> hip::Result<()> {
    /// let mut image = hip::memory::PitchedBuffer::<u8>::zeroed_2d(device, 100, 30)?;
    /// stream.memset_pitched_async(&mut image, 0xff)?;
    /// # Ok(()) }
    /// ```
    pub fn memset_pitched_async<T: DeviceCopy>(
        &self,
        dst: &mut PitchedBuffer<T>,
        byte: u8,
    ) -> Result<()> {
        let extent = dst.extent;
        self.memset_pitched_region_async(dst, [0; 3], extent, byte)
    }

    /// Set every byte of the `size` box (values: width, height, depth) of `dst` at position `at` (value
    /// column, row, slice) to `byte`, leaving the rest of the buffer as it is: `hipMemset2DAsync` for
    /// one slice, `hipMemset3DAsync` for several. A write of `dst` for the memory model, as
    /// [`memset_pitched_async`](Self::memset_pitched_async); an empty box queues nothing.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] naming the axis for a box past the buffer's extent (or whose end
    /// overflows), before HIP is called; [`Error::DeviceMismatch`] for a buffer of another device; what
    /// HIP returns for making the device current and for the memset.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream) -> hip::Result<()> {
    /// let mut image = hip::memory::PitchedBuffer::<u8>::zeroed_2d(device, 100, 30)?;
    /// // A 10 x 5 square whose top left corner is value 20 of row 3.
    /// stream.memset_pitched_region_async(&mut image, [20, 3, 0], [10, 5, 1], 0xff)?;
    /// # Ok(()) }
    /// ```
    pub fn memset_pitched_region_async<T: DeviceCopy>(
        &self,
        dst: &mut PitchedBuffer<T>,
        at: [usize; 3],
        size: [usize; 3],
        byte: u8,
    ) -> Result<()> {
        const WHAT: &str = "memset_pitched_region_async box";
        check_region(WHAT, "buffer", at, size, dst.extent)?;
        crate::event::same_device("memset_pitched_async", self.device(), dst.alloc.device())?;
        if size.contains(&0) {
            return Ok(());
        }
        let rows = dst.extent[1];
        // Inside the allocation (the box is inside the extent, checked, whose bytes fit a usize).
        let offset = (at[2] * rows + at[1]) * dst.pitch_bytes + at[0] * size_of::<T>();
        let row = size[0] * size_of::<T>();
        // SAFETY: `offset` is inside the allocation (above).
        let start = unsafe { dst.ptr.cast::<u8>().add(offset) }.cast::<std::ffi::c_void>();
        let op = self.begin_op();
        dst.alloc.use_on(&op, super::Access::Write)?;
        self.device().bind()?;
        // SAFETY: from `start`, `size[2]` slices of `size[1]` rows of `row` bytes, rows `pitch_bytes`
        // apart and slices `rows` rows apart, lie in the buffer's box at `at` (checked against its extent,
        // rows `pitch_bytes >= width * size_of::<T>()` long, checked when it was made): device memory on
        // this stream's device (checked, current). The stream now waits for the buffer's other users and
        // is recorded as its writer, so it is neither freed nor used in conflict before the fill is done.
        unsafe {
            if size[2] == 1 {
                result::memory::memset_2d_async(
                    start,
                    dst.pitch_bytes,
                    byte,
                    row,
                    size[1],
                    self.raw(),
                )
            } else {
                result::memory::memset_3d_async(
                    start,
                    dst.pitch_bytes,
                    rows,
                    byte,
                    [row, size[1], size[2]],
                    self.raw(),
                )
            }
        }
    }
}

#[cfg(test)]
impl<T: DeviceCopy> PitchedBuffer<T> {
    /// A buffer record for unit tests without a GPU: no memory behind it (null, never freed); only for
    /// checks made before any HIP call.
    pub(crate) fn for_unit_tests(device: &Device, pitch_bytes: usize, extent: [usize; 3]) -> Self {
        PitchedBuffer {
            ptr: std::ptr::null_mut(),
            len: pitch_bytes / size_of::<T>() * extent[1] * extent[2],
            alloc: Allocation::new(std::ptr::null_mut(), device, Release::Nothing),
            pitch_bytes,
            extent,
            _elem: PhantomData,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_memsets_are_checked_per_axis_before_any_call() {
        let d = Device::for_unit_tests(0);
        let s = crate::Stream::default_for(&d);
        let mut b = PitchedBuffer::<u32>::for_unit_tests(&d, 512, [100, 30, 4]);
        let refused = |e: Error, axis: &str| match &e {
            Error::InvalidArgument { what, reason, .. } => {
                assert_eq!(*what, "memset_pitched_region_async box", "{e}");
                assert!(reason.contains(&format!("along {axis}")), "{e}");
            }
            other => panic!("{other:?}"),
        };
        let e = s.memset_pitched_region_async(&mut b, [1, 0, 0], [100, 1, 1], 0);
        refused(e.unwrap_err(), "x");
        let e = s.memset_pitched_region_async(&mut b, [0, 29, 0], [1, 2, 1], 0);
        refused(e.unwrap_err(), "y");
        let e = s.memset_pitched_region_async(&mut b, [0, 0, 3], [1, 1, 2], 0);
        refused(e.unwrap_err(), "z");
        let e = s.memset_pitched_region_async(&mut b, [usize::MAX, 0, 0], [2, 1, 1], 0);
        refused(e.unwrap_err(), "x");
        // Every check passed and nothing to set: no HIP call, Ok (even at the far corner).
        s.memset_pitched_region_async(&mut b, [100, 30, 4], [0, 0, 0], 0)
            .unwrap();
        s.memset_pitched_region_async(&mut b, [0, 0, 0], [100, 0, 4], 0)
            .unwrap();
    }

    #[test]
    fn extents_are_refused_before_any_call() {
        for (extent, what) in [
            ([0, 4, 1], "every side"),
            ([4, 0, 1], "every side"),
            ([4, 4, 0], "every side"),
            ([usize::MAX / 2, 1, 1], "row's bytes overflow"),
            ([1 << 20, 1 << 30, 1 << 20], "allocation's bytes overflow"),
        ] {
            let e = row_bytes::<f32>("hipMalloc3D extent", extent).unwrap_err();
            assert!(
                matches!(&e, Error::InvalidArgument { what: "hipMalloc3D extent", reason, .. } if reason.contains(what)),
                "{extent:?}: {e}"
            );
        }
        assert_eq!(row_bytes::<[f32; 4]>("x", [3, 2, 1]).unwrap(), 48);
    }
}
