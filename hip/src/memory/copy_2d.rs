//! Queued 2-D copies between pitched memories (`hipMemcpy2DAsync`): device to device, and between pinned
//! host memory and the device. Every pitch, width and height is checked against both sides before HIP
//! is called; the copies to and from arrays are in [`crate::texture`].

use super::tracking::{use_both, Allocation};
use super::{Access, DeviceCopy, DeviceMemory, DeviceMemoryMut, HostMemory, HostMemoryMut};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::event::same_device;
use crate::result;
use crate::stream::Stream;
use hip_sys as sys;
use std::ffi::c_void;
use std::sync::Arc;

/// The bytes of a row of `width` elements of `T`: [`Error::InvalidArgument`] naming `what` when they
/// overflow.
pub(crate) fn row_bytes<T>(what: &'static str, width: usize) -> Result<usize> {
    width
        .checked_mul(size_of::<T>())
        .ok_or_else(|| Error::InvalidArgument {
            what,
            value: format!("width {width} elements of {} bytes", size_of::<T>()),
            reason: "the row's bytes overflow usize".into(),
        })
}

/// Check one side of a 2-D copy: `height` rows of `row` bytes, `pitch` bytes apart, starting `start`
/// bytes into memory of `len` bytes. [`Error::InvalidArgument`] naming `what` (the call and the side)
/// for a pitch shorter than a row, an extent that overflows, or rows past the memory's end.
pub(crate) fn check_plane(
    what: &'static str,
    len: usize,
    start: usize,
    pitch: usize,
    row: usize,
    height: usize,
) -> Result<()> {
    let refuse = |reason: String| Error::InvalidArgument {
        what,
        value: format!(
            "pitch {pitch} bytes, rows of {row} bytes, height {height}, from byte {start}"
        ),
        reason,
    };
    if pitch < row {
        return Err(refuse(format!(
            "the pitch is less than a row's bytes ({pitch} < {row})"
        )));
    }
    if height == 0 || row == 0 {
        return Ok(());
    }
    let end = (height - 1)
        .checked_mul(pitch)
        .and_then(|b| b.checked_add(row))
        .and_then(|b| b.checked_add(start))
        .ok_or_else(|| refuse("the extent overflows usize".into()))?;
    if end > len {
        return Err(refuse(format!(
            "needs {end} bytes but the memory holds {len}: beyond the allocation"
        )));
    }
    Ok(())
}

impl Stream {
    /// Queue a copy of `height` rows of `width` elements from `src` (rows `src_pitch` bytes apart) into
    /// `dst` (rows `dst_pitch` bytes apart), device to device (`hipMemcpy2DAsync`). Both memories may be
    /// any device memory of this crate: a [`PitchedBuffer`](super::PitchedBuffer) (pass its
    /// `pitch_bytes()`), a buffer or a view. `dst` is on the stream's device; `src` on it or a peer.
    ///
    /// # Errors
    ///
    /// Checked before HIP is called, [`Error::InvalidArgument`] naming the side: a pitch shorter than
    /// `width` elements, rows past the end of either memory, sizes that overflow;
    /// [`Error::DeviceMismatch`] for a destination of another device; what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream) -> hip::Result<()> {
    /// use hip::memory::PitchedBuffer;
    /// let packed = DeviceBuffer::from_slice(device, &[1.0f32; 30 * 100])?;
    /// let mut image = PitchedBuffer::<f32>::zeroed_2d(device, 100, 30)?;
    /// let pitch = image.pitch_bytes();
    /// stream.copy_2d_async(&packed, 100 * 4, &mut image, pitch, 100, 30)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_2d_async<T: DeviceCopy>(
        &self,
        src: &impl DeviceMemory<T>,
        src_pitch: usize,
        dst: &mut impl DeviceMemoryMut<T>,
        dst_pitch: usize,
        width: usize,
        height: usize,
    ) -> Result<()> {
        let row = row_bytes::<T>("hipMemcpy2DAsync width", width)?;
        let src_side = Side::source(
            src.byte_len(),
            src_pitch,
            src.allocation(),
            src.device_ptr(),
        );
        let dst_side = Side::destination(
            dst.byte_len(),
            dst_pitch,
            dst.allocation(),
            dst.device_ptr(),
        );
        // SAFETY: both sides are device memory of this crate (the sealed traits' pointer, length and
        // allocation, whole from its start); `dst` is on the stream's device (checked), `src` on it or a
        // peer, both in the space hipMemcpyDeviceToDevice names; `dst` is borrowed mutably.
        unsafe {
            self.copy_2d_sides(
                (src_side, dst_side),
                row,
                height,
                &[dst.device()],
                sys::hipMemcpyDeviceToDevice,
            )
        }
    }

    /// Queue a 2-D copy from pinned host memory (a [`PinnedBuffer`](super::PinnedBuffer) or a view of
    /// one) into device memory, as [`copy_2d_async`](Self::copy_2d_async) checks it. All three on one
    /// device; refused on a capturing stream as every pinned copy is.
    ///
    /// # Errors
    ///
    /// As [`copy_2d_async`](Self::copy_2d_async); [`Error::DeviceMismatch`] unless the stream and both
    /// memories share a device, [`Error::InvalidArgument`] on a capturing stream.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream) -> hip::Result<()> {
    /// let host = PinnedBuffer::from_slice(device, &[7u16; 12])?; // 3 rows of 4
    /// let mut image = hip::memory::PitchedBuffer::<u16>::zeroed_2d(device, 4, 3)?;
    /// let pitch = image.pitch_bytes();
    /// stream.copy_2d_from_host_async(&host, 8, &mut image, pitch, 4, 3)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_2d_from_host_async<T: DeviceCopy>(
        &self,
        src: &impl HostMemory<T>,
        src_pitch: usize,
        dst: &mut impl DeviceMemoryMut<T>,
        dst_pitch: usize,
        width: usize,
        height: usize,
    ) -> Result<()> {
        let row = row_bytes::<T>("hipMemcpy2DAsync width", width)?;
        let src_len = src.len() * size_of::<T>();
        let src_side = Side::source(
            src_len,
            src_pitch,
            src.allocation(),
            src.host_ptr().cast_mut().cast(),
        );
        let dst_side = Side::destination(
            dst.byte_len(),
            dst_pitch,
            dst.allocation(),
            dst.device_ptr(),
        );
        // SAFETY: `src` is pinned host memory of `src_len` bytes (a live buffer or view of this crate)
        // that the host writes (`as_mut_slice`) only after this copy, recorded as its reader, is done;
        // a capturing stream is refused by `use_both` (host-visible memory). `dst` is device memory of
        // this crate, borrowed mutably; both on the stream's device (checked).
        unsafe {
            self.copy_2d_sides(
                (src_side, dst_side),
                row,
                height,
                &[dst.device(), src.device()],
                sys::hipMemcpyHostToDevice,
            )
        }
    }

    /// Queue a 2-D copy from device memory into pinned host memory, checked as
    /// [`copy_2d_async`](Self::copy_2d_async); read the result with `as_slice`, which waits for it.
    ///
    /// # Errors
    ///
    /// As [`copy_2d_from_host_async`](Self::copy_2d_from_host_async).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream, image: &hip::memory::PitchedBuffer<u16>) -> hip::Result<()> {
    /// let mut host = PinnedBuffer::<u16>::zeroed(device, image.width() * image.height())?;
    /// let row = image.width() * 2;
    /// stream.copy_2d_to_host_async(image, image.pitch_bytes(), &mut host, row, image.width(), image.height())?;
    /// let packed = host.as_slice()?; // waits for the copy
    /// # Ok(()) }
    /// ```
    pub fn copy_2d_to_host_async<T: DeviceCopy>(
        &self,
        src: &impl DeviceMemory<T>,
        src_pitch: usize,
        dst: &mut impl HostMemoryMut<T>,
        dst_pitch: usize,
        width: usize,
        height: usize,
    ) -> Result<()> {
        let row = row_bytes::<T>("hipMemcpy2DAsync width", width)?;
        let (dst_len, dst_ptr) = (dst.len() * size_of::<T>(), dst.host_mut_ptr().cast());
        let src_side = Side::source(
            src.byte_len(),
            src_pitch,
            src.allocation(),
            src.device_ptr(),
        );
        let dst_side = Side::destination(dst_len, dst_pitch, dst.allocation(), dst_ptr);
        // SAFETY: as in copy_2d_from_host_async, the other way: `dst` is pinned memory of `dst_len`
        // bytes, borrowed mutably, which the host reads or writes only after this copy, recorded as its
        // writer, is done; both on the stream's device (checked).
        unsafe {
            self.copy_2d_sides(
                (src_side, dst_side),
                row,
                height,
                &[src.device(), dst.device()],
                sys::hipMemcpyDeviceToHost,
            )
        }
    }

    /// What every 2-D copy does once its sides are known: check each side's rows against its memory,
    /// check the devices in `devices` against the stream's, order the source as read and the
    /// destination as written, then `hipMemcpy2DAsync` of `height` rows of `row` bytes.
    ///
    /// # Safety
    /// Each side's `ptr` is the start of its allocation's memory, `len` bytes of it, in the address space
    /// `kind` names for that side; nothing but this copy writes the destination while it is queued
    /// (the caller holds it borrowed mutably).
    unsafe fn copy_2d_sides(
        &self,
        (src, dst): (Side<'_>, Side<'_>),
        row: usize,
        height: usize,
        devices: &[&Device],
        kind: sys::hipMemcpyKind,
    ) -> Result<()> {
        for side in [&src, &dst] {
            check_plane(side.what, side.len, 0, side.pitch, row, height)?;
        }
        for device in devices {
            same_device("hipMemcpy2DAsync", self.device(), device)?;
        }
        if row == 0 || height == 0 {
            return Ok(());
        }
        let op = self.begin_op();
        use_both(&op, (src.alloc, Access::Read), (dst.alloc, Access::Write))?;
        self.device().bind()?;
        // SAFETY: check_plane proved `(height - 1) * pitch + row` bytes fit each side, which the caller
        // vouches are its allocation's, in the spaces `kind` names; the devices were checked. The stream
        // waits for the source's writers and the destination's users and is recorded as a user of both,
        // so neither is freed or used in conflict before the copy is done (capturing: the graph keeps
        // both; host memory is refused there by `use_both`).
        unsafe {
            result::memory::memcpy_2d_async(
                dst.ptr,
                dst.pitch,
                src.ptr,
                src.pitch,
                row,
                height,
                kind,
                self.raw(),
            )
        }
    }
}

/// One side of a 2-D copy: its memory's bytes, pitch, allocation and address.
struct Side<'a> {
    what: &'static str,
    len: usize,
    pitch: usize,
    alloc: &'a Arc<Allocation>,
    ptr: *mut c_void,
}

impl<'a> Side<'a> {
    fn source(len: usize, pitch: usize, alloc: &'a Arc<Allocation>, ptr: *mut c_void) -> Self {
        let what = "hipMemcpy2DAsync source";
        Side {
            what,
            len,
            pitch,
            alloc,
            ptr,
        }
    }

    fn destination(len: usize, pitch: usize, alloc: &'a Arc<Allocation>, ptr: *mut c_void) -> Self {
        let what = "hipMemcpy2DAsync destination";
        Side {
            what,
            len,
            pitch,
            alloc,
            ptr,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(r: Result<()>) -> String {
        match r {
            Err(Error::InvalidArgument { reason, .. }) => reason,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn planes_are_checked_against_pitch_extent_and_length() {
        check_plane("s", 100, 0, 16, 12, 6).unwrap(); // 5 * 16 + 12 = 92 bytes
        check_plane("s", 92, 0, 16, 12, 6).unwrap();
        assert!(reason(check_plane("s", 91, 0, 16, 12, 6)).contains("needs 92 bytes"));
        assert!(reason(check_plane("s", 100, 0, 8, 12, 6)).contains("pitch is less than a row"));
        assert!(reason(check_plane("s", 100, 0, usize::MAX, 12, 3)).contains("overflows"));
        assert!(reason(check_plane("s", 100, 10, 16, 12, 6)).contains("needs 102 bytes"));
        // Nothing to move: only the pitch rule applies.
        check_plane("s", 0, 0, 16, 12, 0).unwrap();
        assert!(matches!(
            row_bytes::<u64>("w", usize::MAX / 4),
            Err(Error::InvalidArgument { what: "w", .. })
        ));
    }
}
