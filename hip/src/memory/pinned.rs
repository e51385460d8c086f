//! Pinned (page-locked) host memory, the only host memory asynchronous copies accept.

use super::tracking::{use_both, Access, Allocation, Release};
use super::{byte_size, check_len, sealed, DeviceCopy, DeviceMemory, DeviceMemoryMut};
use super::{HostMemory, HostMemoryMut};
use crate::device::Device;
use crate::error::Result;
use crate::event::same_device;
use crate::result;
use crate::stream::Stream;
use hip_sys as sys;
use std::sync::Arc;

/// `len` values of `T` in pinned host memory (`hipHostMalloc`), freed on drop.
///
/// Tracked by the memory model like device memory: every asynchronous copy that uses the buffer records
/// its stream, and the host sees the contents ([`as_slice`](Self::as_slice): after the copies that write
/// them) or changes them ([`as_mut_slice`](Self::as_mut_slice): after every copy that uses them) only
/// when those are done. The memory is freed when the buffer and every graph that captured a copy of it
/// are gone, after every stream still using it is done. This is what makes the asynchronous copies safe.
///
/// Streams are told apart by a process-unique id, never by handle address (HIP gives a new stream the
/// address of a destroyed one), and a copy's stream is recorded before the copy is queued.
///
/// Allocating pinned memory is slow (it locks pages: keep and reuse pinned buffers), and
/// [`as_slice`](Self::as_slice) / [`as_mut_slice`](Self::as_mut_slice) may block the thread until the
/// copies they conflict with are done; both return `Result`.
///
/// ```no_run
/// use hip::prelude::*;
///
/// let device = Device::get(0)?;
/// let stream = Stream::new(&device)?;
/// let x = DeviceBuffer::from_slice(&device, &[1.0f32, 2.0, 3.0])?;
/// let mut host = PinnedBuffer::<f32>::zeroed(&device, 3)?;
/// stream.copy_to_host_async(&x, &mut host)?; // queued: returns at once
/// assert_eq!(host.as_slice()?, [1.0, 2.0, 3.0]); // blocks until the copy is done
/// # Ok::<(), hip::Error>(())
/// ```
#[derive(Debug)]
pub struct PinnedBuffer<T: DeviceCopy> {
    pub(super) ptr: *mut T,
    pub(super) len: usize,
    pub(super) alloc: Arc<Allocation>,
}

// SAFETY: the buffer owns its pinned memory (T is DeviceCopy: Send + Sync plain data), so moving it moves
// that ownership; the allocation is Send + Sync.
unsafe impl<T: DeviceCopy> Send for PinnedBuffer<T> {}
// SAFETY: `&PinnedBuffer` gives host reads (`as_slice`, of Sync data) and queues copies that only read
// the memory; host writes and copies into it need `&mut`.
unsafe impl<T: DeviceCopy> Sync for PinnedBuffer<T> {}

impl<T: DeviceCopy> PinnedBuffer<T> {
    /// `len` zeroed elements (`hipHostMalloc`, then zeroed by the host). Slow next to a device
    /// allocation: the pages are locked; keep and reuse pinned buffers.
    ///
    /// # Errors
    ///
    /// [`Error::AllocationTooLarge`](crate::Error::AllocationTooLarge) when the byte size overflows, and
    /// [`Error::Hip`](crate::Error::Hip) with what HIP returns (`hipErrorOutOfMemory`, status
    /// `out_of_memory`, when there is no room).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream, x: &DeviceBuffer<f32>) -> hip::Result<()> {
    /// let mut host = PinnedBuffer::<f32>::zeroed(device, x.len())?; // reuse it for every read-back
    /// stream.copy_to_host_async(x, &mut host)?;
    /// let sum: f32 = host.as_slice()?.iter().sum();
    /// # Ok(()) }
    /// ```
    pub fn zeroed(device: &Device, len: usize) -> Result<Self> {
        Self::zeroed_with_flags(device, len, PinnedFlags::DEFAULT)
    }

    /// `len` zeroed elements allocated with `flags` (`hipHostMalloc`'s: portable, mapped,
    /// write-combined; see [`PinnedFlags`]).
    ///
    /// # Errors
    ///
    /// [`Error::AllocationTooLarge`](crate::Error::AllocationTooLarge) when the byte size overflows, and
    /// [`Error::Hip`](crate::Error::Hip) with what HIP returns for making the device current and for
    /// `hipHostMalloc` (`hipErrorOutOfMemory` when there is no room, `hipErrorInvalidValue` for flags it
    /// refuses).
    ///
    /// ```no_run
    /// use hip::memory::PinnedFlags;
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// // Filled by the host, read only by the device: write-combined uploads are faster over PCIe.
    /// let flags = PinnedFlags::WRITE_COMBINED;
    /// let upload = hip::PinnedBuffer::<f32>::zeroed_with_flags(device, 1 << 20, flags)?;
    /// # Ok(()) }
    /// ```
    pub fn zeroed_with_flags(device: &Device, len: usize, flags: PinnedFlags) -> Result<Self> {
        let bytes = byte_size::<T>(len)?;
        let (ptr, release) = if bytes == 0 {
            (
                std::ptr::NonNull::<T>::dangling().as_ptr(),
                Release::Nothing,
            )
        } else {
            device.bind()?;
            let p = result::host_malloc(bytes, flags.0)?.cast::<T>();
            // SAFETY: `p` is a fresh hipHostMalloc allocation of `bytes` = len * size_of::<T>() bytes,
            // suitably aligned for any type (as the runtime's allocations are), host-writable, and used by
            // nothing yet; zero bits are a valid T (DeviceCopy).
            unsafe { p.write_bytes(0, len) };
            (p, Release::HostFree)
        };
        Ok(PinnedBuffer {
            ptr,
            len,
            alloc: Allocation::host_visible(ptr.cast(), device, release),
        })
    }

    /// A new pinned buffer holding a copy of `src` (allocated as by [`zeroed`](Self::zeroed), then
    /// copied by the host).
    ///
    /// # Errors
    ///
    /// [`Error::AllocationTooLarge`](crate::Error::AllocationTooLarge) when the byte size overflows, and
    /// [`Error::Hip`](crate::Error::Hip) with what HIP returns (`hipErrorOutOfMemory`, status
    /// `out_of_memory`, when there is no room).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device, stream: &Stream, x: &mut DeviceBuffer<u32>) -> hip::Result<()> {
    /// let host = PinnedBuffer::from_slice(device, &[1u32, 2, 3, 4])?;
    /// stream.copy_from_host_async(&host, x)?;
    /// # Ok(()) }
    /// ```
    pub fn from_slice(device: &Device, src: &[T]) -> Result<Self> {
        let mut b = Self::zeroed(device, src.len())?;
        b.as_mut_slice()?.copy_from_slice(src);
        Ok(b)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device whose streams copy to and from this buffer.
    pub fn device(&self) -> &Device {
        self.alloc.device()
    }

    /// The contents, once every asynchronous copy writing the buffer has completed (copies that only
    /// read it may still run).
    ///
    /// # Errors
    ///
    /// An error of the copy it waited for (what HIP returns for the wait);
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) inside a host function
    /// ([`crate::host_fn`]) while a copy still writes the buffer, and (feature `rccl`) while a call of an
    /// open RCCL group uses it.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, x: &DeviceBuffer<f32>, host: &mut PinnedBuffer<f32>) -> hip::Result<()> {
    /// stream.copy_to_host_async(x, host)?;
    /// let first = host.as_slice()?[0]; // waits for the copy, not for the rest of the stream
    /// # Ok(()) }
    /// ```
    pub fn as_slice(&self) -> Result<&[T]> {
        self.alloc.host_wait(Access::Read)?;
        // SAFETY: `ptr` is aligned and valid for `len` initialised T (zeroed at allocation), or dangling
        // and non-null with no bytes; the allocation lives while `self` is borrowed. Every copy writing it
        // that was queued before was waited for above, and queueing another needs `&mut self`, which the
        // returned borrow excludes; no graph replay writes it (captures refuse pinned memory).
        Ok(unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
    }

    /// The contents for writing, once every asynchronous copy using the buffer has completed.
    ///
    /// # Errors
    ///
    /// An error of the copies it waited for (what HIP returns for the wait);
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) inside a host function
    /// ([`crate::host_fn`]) while a copy still uses the buffer, and (feature `rccl`) while a call of an
    /// open RCCL group uses it.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, host: &mut PinnedBuffer<f32>, x: &mut DeviceBuffer<f32>) -> Result<()> {
    /// for step in 0..10 {
    ///     host.as_mut_slice()?.fill(step as f32); // waits for the previous upload to read it
    ///     stream.copy_from_host_async(host, x)?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.alloc.host_wait(Access::Write)?;
        // SAFETY: as in as_slice, for writing: every copy reading or writing it that was queued before was
        // waited for above, `&mut self` excludes queueing another while the slice lives (no graph replay
        // uses it: captures refuse pinned memory), and no other slice of it exists.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }

    /// Block until every asynchronous copy using the buffer has completed.
    ///
    /// # Errors
    ///
    /// As [`as_mut_slice`](Self::as_mut_slice): an error of the copies it waited for, and
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) inside a host function while a copy
    /// still uses the buffer (or, feature `rccl`, while an open RCCL group uses it).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, host: &PinnedBuffer<u8>, x: &mut DeviceBuffer<u8>) -> hip::Result<()> {
    /// stream.copy_from_host_async(host, x)?;
    /// host.wait()?; // the upload has read `host`
    /// # Ok(()) }
    /// ```
    pub fn wait(&self) -> Result<()> {
        self.alloc.host_wait(Access::Write)
    }
}

impl<T: DeviceCopy> sealed::Sealed for PinnedBuffer<T> {}

impl<T: DeviceCopy> HostMemory<T> for PinnedBuffer<T> {
    fn len(&self) -> usize {
        self.len
    }
    fn device(&self) -> &Device {
        self.alloc.device()
    }
    fn host_ptr(&self) -> *const T {
        self.ptr
    }
    fn allocation(&self) -> &Arc<Allocation> {
        &self.alloc
    }
}

impl<T: DeviceCopy> HostMemoryMut<T> for PinnedBuffer<T> {
    fn host_mut_ptr(&mut self) -> *mut T {
        self.ptr
    }
}

/// How pinned memory is allocated ([`PinnedBuffer::zeroed_with_flags`]): `hipHostMalloc`'s flags.
/// Combine with `|`. Every combination is safe: they change where and how the memory is mapped, not who
/// may touch it (the memory model orders every copy either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PinnedFlags(u32);

impl PinnedFlags {
    /// Plain pinned memory (`hipHostMallocDefault`).
    pub const DEFAULT: Self = Self(sys::hipHostMallocDefault);
    /// Pinned for every device's transfers, not only the current one's (`hipHostMallocPortable`).
    pub const PORTABLE: Self = Self(sys::hipHostMallocPortable);
    /// Also mapped into the device's address space (`hipHostMallocMapped`).
    pub const MAPPED: Self = Self(sys::hipHostMallocMapped);
    /// Write-combined: faster for the device to read over PCIe, very slow for the host to read (write it,
    /// do not read it back on the host) (`hipHostMallocWriteCombined`).
    pub const WRITE_COMBINED: Self = Self(sys::hipHostMallocWriteCombined);

    /// The raw `hipHostMalloc` flags.
    pub fn bits(self) -> u32 {
        self.0
    }
}

impl Default for PinnedFlags {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl std::ops::BitOr for PinnedFlags {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

/// Asynchronous copies. Each returns once the copy is queued on the stream.
impl Stream {
    /// Queue a copy of `src` (pinned host memory: a [`PinnedBuffer`] or a view of one) into device memory
    /// of the same length: the queued form of
    /// [`copy_from_host`](crate::DeviceMemoryMut::copy_from_host). Returns once queued; the host sees
    /// `src` change again ([`PinnedBuffer::as_mut_slice`]) only after the copy read it.
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) for lengths that differ,
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) unless the stream, the pinned memory and
    /// the device memory are on one device, [`Error::InvalidArgument`](crate::Error::InvalidArgument) on a
    /// capturing stream (pinned memory is refused in graphs), and what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// let device = Device::get(0)?;
    /// let stream = Stream::new(&device)?;
    /// let host = PinnedBuffer::from_slice(&device, &[1u32, 2, 3])?;
    /// let mut x = DeviceBuffer::<u32>::zeroed(&device, 3)?;
    /// stream.copy_from_host_async(&host, &mut x)?;
    /// assert_eq!(x.to_vec()?, [1, 2, 3]); // ordered after the copy
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn copy_from_host_async<T: DeviceCopy>(
        &self,
        src: &impl HostMemory<T>,
        dst: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        self.copy_to_device_inner(src, dst)
    }

    /// The old name of [`copy_from_host_async`](Self::copy_from_host_async).
    #[deprecated(
        since = "0.1.0",
        note = "renamed `copy_from_host_async`: blocking `copy_from_host` / `copy_to_host`, queued `copy_from_host_async` / `copy_to_host_async`"
    )]
    pub fn copy_to_device_async<T: DeviceCopy>(
        &self,
        src: &impl HostMemory<T>,
        dst: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        self.copy_to_device_inner(src, dst)
    }

    fn copy_to_device_inner<T: DeviceCopy>(
        &self,
        src: &impl HostMemory<T>,
        dst: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        check_len("copy_from_host_async", dst.len(), src.len())?;
        same_device("copy_from_host_async", self.device(), dst.device())?;
        same_device("copy_from_host_async", self.device(), src.device())?;
        if dst.byte_len() == 0 {
            return Ok(());
        }
        let op = self.begin_op();
        use_both(
            &op,
            (src.allocation(), Access::Read),
            (dst.allocation(), Access::Write),
        )?;
        self.device().bind()?;
        // SAFETY: `src` is pinned host memory and `dst` device memory, both of byte_len() bytes (equal
        // lengths checked), on the stream's device (checked, and current). The stream now waits for the
        // pinned buffer's writers and the destination's users, and is recorded as a user of both: neither is
        // freed, nor written by the host (`as_mut_slice` waits), before the copy is done. A stream a capture
        // records never gets here: `use_both` refuses pinned (host-visible) memory in a capture, so no
        // graph replay reads it behind the host's back.
        unsafe {
            result::memcpy_async(
                dst.device_ptr(),
                src.host_ptr().cast(),
                dst.byte_len(),
                sys::hipMemcpyHostToDevice,
                self.raw(),
            )
        }
    }

    /// Queue a copy of device memory into `dst` (pinned host memory: a [`PinnedBuffer`] or a mutable view
    /// of one) of the same length, all three on one device
    /// ([`Error::DeviceMismatch`](crate::Error::DeviceMismatch) otherwise). Read the result with
    /// `as_slice`, which waits for the copy.
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch), [`Error::DeviceMismatch`](crate::Error::DeviceMismatch)
    /// unless the stream and both buffers are on one device, [`Error::InvalidArgument`](crate::Error::InvalidArgument)
    /// on a capturing stream, and what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// let device = Device::get(0)?;
    /// let stream = Stream::new(&device)?;
    /// let x = DeviceBuffer::from_slice(&device, &[5u32, 6])?;
    /// let mut host = PinnedBuffer::<u32>::zeroed(&device, 2)?;
    /// stream.copy_to_host_async(&x, &mut host)?; // returns at once
    /// assert_eq!(host.as_slice()?, [5, 6]); // waits for the copy
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn copy_to_host_async<T: DeviceCopy>(
        &self,
        src: &impl DeviceMemory<T>,
        dst: &mut impl HostMemoryMut<T>,
    ) -> Result<()> {
        check_len("copy_to_host_async", dst.len(), src.len())?;
        same_device("copy_to_host_async", self.device(), src.device())?;
        same_device("copy_to_host_async", self.device(), dst.device())?;
        if src.byte_len() == 0 {
            return Ok(());
        }
        let op = self.begin_op();
        use_both(
            &op,
            (src.allocation(), Access::Read),
            (dst.allocation(), Access::Write),
        )?;
        self.device().bind()?;
        // SAFETY: as in copy_from_host_async, the other way: `dst` is pinned memory of byte_len() bytes,
        // which the host reads (`as_slice`) or writes only after this copy, recorded as its writer, is
        // done.
        unsafe {
            result::memcpy_async(
                dst.host_mut_ptr().cast(),
                src.device_ptr(),
                src.byte_len(),
                sys::hipMemcpyDeviceToHost,
                self.raw(),
            )
        }
    }

    /// Queue a device-to-device copy between memories of the same length. `dst` is on the stream's device;
    /// `src` may be on another one (a peer copy). Both are ordered by the memory model, across devices
    /// too.
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) for lengths that differ,
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) for memory the stream's device cannot reach, and what HIP
    /// returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, a: &DeviceBuffer<f32>, b: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// stream.copy_device_async(a, b)?; // same lengths
    /// stream.copy_device_async(&a.slice(..4)?, &mut b.slice_mut(4..8)?)?; // views too
    /// # Ok(()) }
    /// ```
    pub fn copy_device_async<T: DeviceCopy>(
        &self,
        src: &impl DeviceMemory<T>,
        dst: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        check_len("copy_device_async", dst.len(), src.len())?;
        same_device("copy_device_async", self.device(), dst.device())?;
        if src.byte_len() == 0 {
            return Ok(());
        }
        let op = self.begin_op();
        use_both(
            &op,
            (src.allocation(), Access::Read),
            (dst.allocation(), Access::Write),
        )?;
        self.device().bind()?;
        // SAFETY: both are device memory of byte_len() bytes (equal lengths checked); `dst` is on the
        // stream's device (current), `src` on it or a peer. The stream now waits for the source's writers and
        // the destination's users on any device and is recorded as a user of both, so neither is freed or
        // used in conflict before the copy is done. (On a capturing stream the uses of device memory go to
        // the capture instead, managed memory being refused there: its graphs keep the memory alive and order
        // their launches.)
        unsafe {
            result::memcpy_async(
                dst.device_ptr(),
                src.device_ptr(),
                src.byte_len(),
                sys::hipMemcpyDeviceToDevice,
                self.raw(),
            )
        }
    }

    /// Queue setting every byte of `dst` to `value` (`hipMemsetAsync`), after the other streams' work on
    /// it. For values wider than a byte, [`fill_async`](Self::fill_async).
    ///
    /// # Errors
    ///
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) for memory of another device than the
    /// stream's, [`Error::InvalidArgument`](crate::Error::InvalidArgument) for managed memory on a
    /// capturing stream, and what HIP returns.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, x: &mut DeviceBuffer<u32>) -> hip::Result<()> {
    /// stream.memset_async(x, 0)?; // zero, queued
    /// stream.memset_async(&mut x.slice_mut(..8)?, 0xff)?; // the first 8 elements to u32::MAX
    /// # Ok(()) }
    /// ```
    pub fn memset_async<T: DeviceCopy>(
        &self,
        dst: &mut impl DeviceMemoryMut<T>,
        value: u8,
    ) -> Result<()> {
        same_device("memset_async", self.device(), dst.device())?;
        if dst.byte_len() == 0 {
            return Ok(());
        }
        let op = self.begin_op();
        dst.allocation().use_on(&op, Access::Write)?;
        self.device().bind()?;
        // SAFETY: `dst` is byte_len() bytes of device memory on the stream's device (checked, current); the
        // stream now waits for its users and is recorded as its writer, so it is not freed or used in
        // conflict before the memset is done. (On a capturing stream the uses of device memory go to the
        // capture instead, managed memory being refused there: its graphs keep the memory alive and order
        // their launches.)
        unsafe { result::memset_async(dst.device_ptr(), value, dst.byte_len(), self.raw()) }
    }
}
