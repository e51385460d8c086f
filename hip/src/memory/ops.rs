//! Fills of 8/16/32-bit values, pitched 2-D copies, and prefetch / advice for managed memory.

use super::{Access, DeviceBuffer, DeviceCopy, DeviceMemory, DeviceMemoryMut, ManagedBuffer};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::result;
use crate::stream::Stream;
use hip_sys as sys;

/// Check that `height` rows of `width` elements, `pitch` elements apart, fit in `len` elements.
pub(crate) fn check_2d(
    what: &'static str,
    len: usize,
    pitch: usize,
    width: usize,
    height: usize,
) -> Result<()> {
    let refuse = |reason: String| Error::InvalidArgument {
        what,
        value: format!("pitch {pitch}, width {width}, height {height} (elements)"),
        reason,
    };
    if width > pitch {
        return Err(refuse(format!(
            "the width exceeds the pitch ({width} > {pitch})"
        )));
    }
    if height == 0 || width == 0 {
        return Ok(());
    }
    let need = (height - 1)
        .checked_mul(pitch)
        .and_then(|b| b.checked_add(width))
        .ok_or_else(|| refuse("the extent overflows usize".into()))?;
    if need > len {
        return Err(refuse(format!(
            "needs {need} elements but the memory holds {len}"
        )));
    }
    Ok(())
}

/// `pitch` elements of `elem` bytes as bytes: a pitch is not bounded by the memory's size when only one row
/// is copied, so the product can overflow ([`Error::InvalidArgument`] naming it).
fn byte_pitch(what: &'static str, pitch: usize, elem: usize) -> Result<usize> {
    pitch
        .checked_mul(elem)
        .ok_or_else(|| Error::InvalidArgument {
            what,
            value: format!("{pitch} elements of {elem} bytes"),
            reason: "the pitch in bytes overflows usize".into(),
        })
}

/// The bits of a 1-, 2- or 4-byte fill value, as the `hipMemsetD*` calls take them.
pub(crate) fn fill_bits<T: DeviceCopy>(value: &T) -> Option<u32> {
    let p = (value as *const T).cast::<u8>();
    // SAFETY: `p` points at a live `T`, borrowed for the call; each arm reads exactly size_of::<T>()
    // bytes, all initialised because DeviceCopy types have no padding, and `read_unaligned` (a `u8` read
    // needs no alignment) makes T's alignment (1 for `[u8; 4]`) irrelevant.
    unsafe {
        match std::mem::size_of::<T>() {
            1 => Some(u32::from(p.read())),
            2 => Some(u32::from(p.cast::<u16>().read_unaligned())),
            4 => Some(p.cast::<u32>().read_unaligned()),
            _ => None,
        }
    }
}

/// [`fill_bits`], or the refusal of an element that is not 1, 2 or 4 bytes wide.
pub(crate) fn fill_value<T: DeviceCopy>(value: &T) -> Result<u32> {
    fill_bits(value).ok_or_else(|| Error::InvalidArgument {
        what: "fill element size",
        value: format!("{} bytes", std::mem::size_of::<T>()),
        reason: "fills take 1-, 2- or 4-byte elements".into(),
    })
}

/// Queue setting `n` elements of `T` at `p` to `bits` on `stream` (`hipMemsetAsync`,
/// `hipMemsetD16Async` or `hipMemsetD32Async` by the size of `T`, each counting in its own units).
///
/// # Safety
/// `T` is 1, 2 or 4 bytes wide ([`fill_value`] returned `bits`), and `p` is `n` such elements of memory
/// the stream's device (current) reaches, which nothing uses in conflict until the fill is done (the
/// caller recorded the stream as its writer).
pub(crate) unsafe fn memset_elements<T>(
    p: *mut std::ffi::c_void,
    bits: u32,
    n: usize,
    stream: sys::hipStream_t,
) -> Result<()> {
    // SAFETY: the caller's contract; each call counts `n` units of the size it sets.
    unsafe {
        match std::mem::size_of::<T>() {
            1 => result::memset_async(p, bits as u8, n, stream),
            2 => result::memory::memset_d16_async(p, bits as u16, n, stream),
            _ => result::memory::memset_d32_async(p, bits, n, stream),
        }
    }
}

/// Queue a fill of every element of `dst` (device memory: a buffer or a view) with `value` on `stream`.
fn fill_on<T: DeviceCopy>(
    dst: &mut impl DeviceMemoryMut<T>,
    value: T,
    stream: &Stream,
) -> Result<()> {
    if stream.device().ordinal() != dst.device().ordinal() {
        return Err(Error::DeviceMismatch {
            what: "fill_async",
            stream: stream.device().ordinal(),
            other: dst.device().ordinal(),
        });
    }
    let bits = fill_value(&value)?;
    if dst.is_empty() {
        return Ok(());
    }
    let op = stream.begin_op();
    dst.allocation().use_on(&op, Access::Write)?;
    stream.device().bind()?;
    // SAFETY: `dst` is `len()` elements of 1, 2 or 4 bytes (`fill_value` returned) of device memory on
    // the stream's device (checked, current), borrowed mutably. The stream now waits for the memory's
    // other users and is recorded as its writer, so it is not freed or used in conflict before the fill
    // is done. (On a capturing stream the use of device memory goes to the capture instead, managed
    // memory being refused there: its graphs keep the memory alive and order their launches.)
    unsafe { memset_elements::<T>(dst.device_ptr(), bits, dst.len(), stream.raw()) }
}

impl Stream {
    /// Queue a fill of every element of `dst` (a buffer, or a view of part of one) with `value`
    /// (`hipMemsetAsync`, `hipMemsetD16Async` or `hipMemsetD32Async` by the size of `T`), ordered after
    /// the other streams' work on the memory.
    /// Returns once queued.
    ///
    /// # Errors
    ///
    /// [`Error::DeviceMismatch`] when `dst` is on another device than the stream,
    /// [`Error::InvalidArgument`] for a `T` of another size than 1, 2 or 4 bytes, and what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// let device = Device::get(0)?;
    /// let stream = Stream::new(&device)?;
    /// let mut x = DeviceBuffer::<u32>::zeroed(&device, 1024)?;
    /// stream.fill_async(&mut x, 7)?;
    /// stream.fill_async(&mut x.slice_mut(10..20)?, 9)?; // part of it
    /// let v = x.to_vec()?; // the read waits for the fills
    /// assert!(v[..10].iter().all(|&v| v == 7) && v[10..20].iter().all(|&v| v == 9));
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn fill_async<T: DeviceCopy>(
        &self,
        dst: &mut impl DeviceMemoryMut<T>,
        value: T,
    ) -> Result<()> {
        fill_on(dst, value, self)
    }

    /// Queue a migration of the whole of `buffer` to `to` (a device, or `None` for the host)
    /// (`hipMemPrefetchAsync`).
    ///
    /// A prefetch to a device is queued on a stream of that device, where the work that reads the
    /// migrated pages runs: a stream of another device is [`Error::InvalidArgument`] naming both, checked
    /// before anything else. A prefetch to the host may use a stream of any device. The buffer's device
    /// and the stream's device must both access managed memory concurrently with the host (CUDA's rule
    /// for the destination and the stream): [`Error::NotSupported`] otherwise.
    ///
    /// Ordered like a read: after the work of other streams that writes the buffer, before later writes.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a stream of another device than `to`, [`Error::NotSupported`] where
    /// a device does not access managed memory concurrently with the host, and what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream) -> hip::Result<()> {
    /// let data = ManagedBuffer::<f32>::zeroed(device, 1 << 20)?;
    /// stream.prefetch_async(&data, Some(device))?; // pages move before the kernels that read them
    /// // ... launches on `stream` that use `data` ...
    /// stream.prefetch_async(&data, None)?; // and back to the host
    /// # Ok(()) }
    /// ```
    pub fn prefetch_async<T: DeviceCopy>(
        &self,
        buffer: &ManagedBuffer<T>,
        to: Option<&Device>,
    ) -> Result<()> {
        buffer.prefetch_on(to, self)
    }
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Queue a fill of every element with `value` on `stream`: the old form of
    /// [`Stream::fill_async`], which takes the stream first as every queued operation does.
    #[deprecated(
        since = "0.1.0",
        note = "use `stream.fill_async(&mut buffer, value)`: the stream comes first"
    )]
    pub fn fill_async(&mut self, value: T, stream: &Stream) -> Result<()> {
        self.fill_on(value, stream)
    }

    fn fill_on(&mut self, value: T, stream: &Stream) -> Result<()> {
        fill_on(self, value, stream)
    }

    /// Copy `height` rows of `width` elements from `src` (rows `src_pitch` elements apart) into this buffer
    /// (rows `dst_pitch` elements apart). Synchronous like
    /// [`copy_from_host`](crate::DeviceMemoryMut::copy_from_host): `src` may change on return, and later
    /// operations see the data. Extents that do not fit either side are [`Error::InvalidArgument`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `width` exceeds a pitch, when the rows do not fit in this buffer or
    /// in `src`, or when a pitch in bytes overflows `usize`; otherwise what HIP returns for making the
    /// device current and for `hipMemcpy2D`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// // A 3 x 4 host matrix into the left columns of a 3 x 8 device matrix (rows 8 apart).
    /// let host = [1.0f32; 12];
    /// let mut m = DeviceBuffer::<f32>::zeroed(device, 3 * 8)?;
    /// m.copy_2d_from_host(8, &host, 4, 4, 3)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_2d_from_host(
        &mut self,
        dst_pitch: usize,
        src: &[T],
        src_pitch: usize,
        width: usize,
        height: usize,
    ) -> Result<()> {
        check_2d("2-D copy destination", self.len(), dst_pitch, width, height)?;
        check_2d("2-D copy source", src.len(), src_pitch, width, height)?;
        let e = std::mem::size_of::<T>();
        if width == 0 || height == 0 || e == 0 {
            return Ok(());
        }
        let dst_bytes = byte_pitch("2-D copy destination pitch", dst_pitch, e)?;
        let src_bytes = byte_pitch("2-D copy source pitch", src_pitch, e)?;
        let null = self.device().null_stream();
        let op = null.begin_op();
        self.allocation().use_on(&op, Access::Write)?;
        self.device().bind()?;
        // SAFETY: check_2d proved `(height - 1) * pitch + width` elements fit each side, so in bytes
        // (`* e`, pitches checked by byte_pitch) both pointers are valid for what hipMemcpy2D touches, and
        // `width * e` is at most a buffer's byte size. The device's null stream (current) was ordered
        // after the buffer's users and recorded as its writer; a synchronous hipMemcpy2D from the host
        // has read `src` on return.
        unsafe {
            result::memory::memcpy_2d(
                self.device_ptr(),
                dst_bytes,
                src.as_ptr().cast(),
                src_bytes,
                width * e,
                height,
                sys::hipMemcpyHostToDevice,
            )
        }
    }

    /// Copy `height` rows of `width` elements from this buffer (rows `src_pitch` elements apart) into
    /// `dst` (rows `dst_pitch` elements apart). Synchronous: returns once `dst` holds the data; extents
    /// are checked as above.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `width` exceeds a pitch, when the rows do not fit in this buffer or
    /// in `dst`, or when a pitch in bytes overflows `usize`; otherwise what HIP returns for making the
    /// device current and for `hipMemcpy2D` (an error of the work it waited for among them).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(m: &DeviceBuffer<f32>) -> hip::Result<()> {
    /// // The first 4 columns of a 3 x 8 device matrix (rows 8 apart) into a packed 3 x 4 host one.
    /// let mut host = [0.0f32; 12];
    /// m.copy_2d_to_host(8, &mut host, 4, 4, 3)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_2d_to_host(
        &self,
        src_pitch: usize,
        dst: &mut [T],
        dst_pitch: usize,
        width: usize,
        height: usize,
    ) -> Result<()> {
        check_2d("2-D copy source", self.len(), src_pitch, width, height)?;
        check_2d("2-D copy destination", dst.len(), dst_pitch, width, height)?;
        let e = std::mem::size_of::<T>();
        if width == 0 || height == 0 || e == 0 {
            return Ok(());
        }
        let dst_bytes = byte_pitch("2-D copy destination pitch", dst_pitch, e)?;
        let src_bytes = byte_pitch("2-D copy source pitch", src_pitch, e)?;
        let null = self.device().null_stream();
        let op = null.begin_op();
        self.allocation().use_on(&op, Access::Read)?;
        self.device().bind()?;
        // SAFETY: extents as in copy_2d_from_host; the null stream was ordered after the buffer's writers
        // and recorded as a reader; a synchronous hipMemcpy2D to the host returns once `dst` holds the
        // data, so nothing writes `dst` after its borrow ends.
        unsafe {
            result::memory::memcpy_2d(
                dst.as_mut_ptr().cast(),
                dst_bytes,
                self.device_ptr(),
                src_bytes,
                width * e,
                height,
                sys::hipMemcpyDeviceToHost,
            )
        }?;
        op.completed();
        Ok(())
    }
}

/// Advice about how managed memory will be used (`hipMemoryAdvise`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemAdvice {
    /// Mostly read: devices may keep read-only copies.
    SetReadMostly,
    /// Undo [`MemAdvice::SetReadMostly`].
    UnsetReadMostly,
    /// Prefer keeping the pages at the given location.
    SetPreferredLocation,
    /// Undo [`MemAdvice::SetPreferredLocation`].
    UnsetPreferredLocation,
    /// The given location will access the memory: map it there.
    SetAccessedBy,
    /// Undo [`MemAdvice::SetAccessedBy`].
    UnsetAccessedBy,
}

impl MemAdvice {
    /// The HIP value.
    pub fn raw(self) -> sys::hipMemoryAdvise {
        match self {
            MemAdvice::SetReadMostly => sys::hipMemAdviseSetReadMostly,
            MemAdvice::UnsetReadMostly => sys::hipMemAdviseUnsetReadMostly,
            MemAdvice::SetPreferredLocation => sys::hipMemAdviseSetPreferredLocation,
            MemAdvice::UnsetPreferredLocation => sys::hipMemAdviseUnsetPreferredLocation,
            MemAdvice::SetAccessedBy => sys::hipMemAdviseSetAccessedBy,
            MemAdvice::UnsetAccessedBy => sys::hipMemAdviseUnsetAccessedBy,
        }
    }
}

/// `hipCpuDeviceId`: the host as a location.
const CPU_DEVICE_ID: i32 = -1;

fn location(to: Option<&Device>) -> i32 {
    to.map_or(CPU_DEVICE_ID, |d| d.ordinal() as i32)
}

/// A prefetch to a device is queued on one of its streams; one to the host (`None`) on any stream.
fn prefetch_stream(to: Option<&Device>, stream: &Stream) -> Result<()> {
    match to {
        Some(d) if d.ordinal() != stream.device().ordinal() => Err(Error::InvalidArgument {
            what: "stream for a managed memory prefetch",
            value: format!(
                "stream {} of device {}",
                stream.id(),
                stream.device().ordinal()
            ),
            reason: format!(
                "the prefetch is to device {to}: queue it on a stream of device {to}, where the work \
                 that reads the migrated pages runs",
                to = d.ordinal()
            ),
        }),
        _ => Ok(()),
    }
}

fn managed_supported(device: &Device) -> Result<()> {
    if device.attribute(sys::hipDeviceAttributeConcurrentManagedAccess)? == 0 {
        return Err(Error::NotSupported {
            what: "managed memory prefetch and advice",
            reason: "the device reports hipDeviceAttributeConcurrentManagedAccess = 0",
        });
    }
    Ok(())
}

impl<T: DeviceCopy> ManagedBuffer<T> {
    /// Queue a migration of the whole buffer to `to` (a device, or `None` for the host) on `stream`
    /// (`hipMemPrefetchAsync`): the old form of [`Stream::prefetch_async`], which takes the stream first
    /// as every queued operation does.
    #[deprecated(
        since = "0.1.0",
        note = "use `stream.prefetch_async(&buffer, to)`: the stream comes first"
    )]
    pub fn prefetch_async(&self, to: Option<&Device>, stream: &Stream) -> Result<()> {
        self.prefetch_on(to, stream)
    }

    fn prefetch_on(&self, to: Option<&Device>, stream: &Stream) -> Result<()> {
        prefetch_stream(to, stream)?;
        managed_supported(self.device())?;
        if stream.device().ordinal() != self.device().ordinal() {
            managed_supported(stream.device())?;
        }
        if self.is_empty() {
            return Ok(());
        }
        let op = stream.begin_op();
        self.allocation().use_on(&op, Access::Read)?;
        stream.device().bind()?;
        // SAFETY: managed memory of byte_len() bytes (a ManagedBuffer, non-empty), alive while `&self` is;
        // `stream` is live while borrowed, its device current, and it is on the destination device when
        // that is a device (checked). The stream waited for the buffer's writers on other streams and
        // is recorded as a (read) user, so the memory is freed only after the prefetch is done. A stream a
        // capture records never gets here: `use_on` refuses host-visible memory in a capture.
        unsafe {
            result::memory::mem_prefetch_async(
                self.device_ptr(),
                self.byte_len(),
                location(to),
                stream.raw(),
            )
        }
    }

    /// Advise the runtime how the buffer will be used (`hipMemAdvise`); `at` is the location the advice
    /// names (a device, or `None` for the host). Not supported as for [`Stream::prefetch_async`].
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] where the buffer's device does not access managed memory concurrently with
    /// the host (`hipDeviceAttributeConcurrentManagedAccess` is 0), and [`Error::Hip`] with what HIP
    /// returns for the attribute, for making the device current and for `hipMemAdvise`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// use hip::memory::MemAdvice;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// let table = ManagedBuffer::<u32>::zeroed(device, 4096)?;
    /// table.advise(MemAdvice::SetReadMostly, None)?; // each device may keep a read-only copy
    /// # Ok(()) }
    /// ```
    pub fn advise(&self, advice: MemAdvice, at: Option<&Device>) -> Result<()> {
        managed_supported(self.device())?;
        if self.is_empty() {
            return Ok(());
        }
        self.device().bind()?;
        // SAFETY: managed memory of byte_len() bytes, alive for the call (`&self`); advice changes where
        // pages live, never their contents, and queues nothing.
        unsafe {
            result::memory::mem_advise(
                self.device_ptr(),
                self.byte_len(),
                advice.raw(),
                location(at),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_d_extents_are_checked() {
        // 3 rows of 4 in rows 5 apart: last row starts at 10, ends at 14.
        assert!(check_2d("x", 14, 5, 4, 3).is_ok());
        let e = check_2d("dst", 13, 5, 4, 3).unwrap_err().to_string();
        assert!(
            e.contains("needs 14 elements but the memory holds 13"),
            "{e}"
        );
        let e = check_2d("dst", 100, 3, 4, 2).unwrap_err().to_string();
        assert!(e.contains("width exceeds the pitch"), "{e}");
        assert!(check_2d("x", 0, 5, 4, 0).is_ok());
        assert!(check_2d("x", 0, 5, 0, 7).is_ok());
        let e = check_2d("x", usize::MAX, usize::MAX, 1, 3).unwrap_err();
        assert!(e.to_string().contains("overflows"), "{e}");
    }

    #[test]
    fn a_one_row_pitch_that_overflows_in_bytes_is_an_error() {
        // One row: check_2d accepts any pitch >= width, so the byte pitch must be checked on its own.
        assert!(check_2d("x", 1, usize::MAX, 1, 1).is_ok());
        let e = byte_pitch("2-D copy source pitch", usize::MAX, 4).unwrap_err();
        assert!(e.to_string().contains("overflows"), "{e}");
        assert_eq!(
            byte_pitch("p", usize::MAX / 4, 4).unwrap(),
            usize::MAX / 4 * 4
        );
    }

    #[test]
    fn a_fill_of_another_width_is_refused_naming_its_size() {
        assert_eq!(fill_value(&0x1234u16).unwrap(), 0x1234);
        for (err, size) in [
            (fill_value(&1u64).unwrap_err(), "8 bytes"),
            (fill_value(&[0u8; 3]).unwrap_err(), "3 bytes"),
        ] {
            assert!(
                matches!(&err, Error::InvalidArgument { what: "fill element size", value, .. }
                    if value == size),
                "{err:?}"
            );
        }
    }

    #[test]
    fn fill_values_are_read_as_their_bits_whatever_their_alignment() {
        assert_eq!(
            fill_bits(&[1u8, 2, 3, 4]),
            Some(u32::from_ne_bytes([1, 2, 3, 4]))
        );
        assert_eq!(
            fill_bits(&[0xabu8, 0xcd]),
            Some(u32::from(u16::from_ne_bytes([0xab, 0xcd])))
        );
        assert_eq!(fill_bits(&0x1234u16), Some(0x1234));
        assert_eq!(fill_bits(&7u8), Some(7));
        assert_eq!(fill_bits(&-1.5f32), Some((-1.5f32).to_bits()));
        assert_eq!(fill_bits(&1u64), None);
        assert_eq!(fill_bits(&[0u8; 3]), None);
    }

    /// Every advice, in the order of `hipMemoryAdvise`.
    const ADVICE_IN_ORDER: [MemAdvice; 6] = [
        MemAdvice::SetReadMostly,
        MemAdvice::UnsetReadMostly,
        MemAdvice::SetPreferredLocation,
        MemAdvice::UnsetPreferredLocation,
        MemAdvice::SetAccessedBy,
        MemAdvice::UnsetAccessedBy,
    ];

    #[test]
    fn a_prefetch_to_a_device_on_another_devices_stream_is_refused_first() {
        let (d0, d1) = (Device::for_unit_tests(0), Device::for_unit_tests(1));
        // No bytes: nothing allocated, and no HIP call is made before the refusal.
        let m = ManagedBuffer::<u32>::zeroed(&d0, 0).unwrap();
        // SAFETY: a null (default) stream wrapper of a unit-test device; no HIP call is made through it.
        let s1 = unsafe { Stream::from_raw(&d1, std::ptr::null_mut()) };
        match s1.prefetch_async(&m, Some(&d0)).unwrap_err() {
            Error::InvalidArgument {
                what,
                value,
                reason,
            } => {
                assert_eq!(what, "stream for a managed memory prefetch");
                assert!(value.ends_with("of device 1"), "{value}");
                assert!(reason.contains("to device 0"), "{reason}");
            }
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
        // To the host, or to the stream's own device, the stream is fine (the next check asks HIP).
        assert!(prefetch_stream(None, &s1).is_ok());
        assert!(prefetch_stream(Some(&d1), &s1).is_ok());
    }

    #[test]
    fn advice_maps_to_distinct_hip_values() {
        let mut raw: Vec<_> = ADVICE_IN_ORDER.iter().map(|a| a.raw()).collect();
        raw.sort_unstable();
        raw.dedup();
        assert_eq!(raw.len(), 6);
        assert_eq!(
            MemAdvice::SetReadMostly.raw(),
            sys::hipMemAdviseSetReadMostly
        );
        assert_eq!(location(None), -1);
    }

    /// The values of `hipMemoryAdvise`, written out: each advice must reach the runtime as itself. AMD:
    /// HIP's values, 1 to 6 (as CUDA's `cudaMemoryAdvise`). HIP 5.2.3's NVIDIA headers declare the enum
    /// from 0 and convert each value to CUDA's in the inline `hipMemAdvise` (`nvidia_hip_runtime_api.h`).
    #[test]
    fn each_advice_is_the_runtimes_value_of_the_same_name() {
        let first: i64 = if cfg!(hip_platform = "amd") { 1 } else { 0 };
        for (i, advice) in (0..).zip(ADVICE_IN_ORDER) {
            assert_eq!(i64::from(advice.raw()), first + i, "{advice:?}");
        }
        assert_eq!(CPU_DEVICE_ID, -1, "hipCpuDeviceId");
    }
}
