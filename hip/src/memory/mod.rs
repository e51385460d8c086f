//! Memory: device buffers and views, pinned host buffers, managed buffers, and copies between them.
//!
//! # What keeps copies sound
//!
//! - Synchronous copies and memsets (`copy_from_host`, `copy_from_device`, `memset_bytes`, `zero`,
//!   `copy_to_host`, `to_vec`, and so `zeroed` and `from_host`) return only once the operation is complete
//!   (HIP's own calls may return early: the crate waits for the default stream), so any host memory will
//!   do, and work queued afterwards on any stream sees the result.
//! - Synchronous operations on device memory first wait for all work queued on its device
//!   (`hipDeviceSynchronize`): an async copy or memset queued on any stream holds no borrow once queued, so
//!   without this a synchronous read could see a half-finished async write, or a synchronous write be
//!   overwritten by a late async one. The cost is one device synchronise per synchronous operation; code
//!   that needs to overlap work uses the async operations and events.
//! - Asynchronous copies ([`Stream::copy_to_device_async`](crate::Stream::copy_to_device_async) and
//!   friends) take host memory only as a [`PinnedBuffer`]. The buffer records an event on each stream that
//!   uses it and waits for those events before the host can see or change its contents
//!   ([`PinnedBuffer::as_slice`], [`PinnedBuffer::as_mut_slice`]) and before it is freed. So neither
//!   dropping nor `mem::forget`-ing anything lets the host memory go away or change under a copy.
//! - Device memory is freed with `hipFree`, which waits for the device's queued work first, so dropping a
//!   buffer never frees memory a queued copy or kernel may still use.
//! - Device buffers are zero-initialised unless allocated with the `unsafe` `*_uninit` functions.

/// `DeviceMemory` and `KernelArg` for a type holding `ptr: DevicePtr`, `len` and `device`.
macro_rules! device_memory {
    ($ty:ident $(<$lt:lifetime>)?) => {
        impl<$($lt,)? T: $crate::memory::DeviceCopy> $crate::memory::sealed::Sealed for $ty<$($lt,)? T> {}
        impl<$($lt,)? T: $crate::memory::DeviceCopy> $crate::memory::DeviceMemory<T> for $ty<$($lt,)? T> {
            fn device_ptr(&self) -> $crate::memory::DevicePtr {
                self.ptr
            }
            fn len(&self) -> usize {
                self.len
            }
            fn device(&self) -> &$crate::Device {
                &self.device
            }
        }
        // SAFETY: `ptr` is a device address, the value a kernel's pointer parameter takes.
        unsafe impl<$($lt,)? T: $crate::memory::DeviceCopy> crate::launch::KernelArg for $ty<$($lt,)? T> {
            fn as_kernel_param(&self) -> *mut std::ffi::c_void {
                std::ptr::addr_of!(self.ptr) as *mut std::ffi::c_void
            }
            fn kernel_param_size(&self) -> usize {
                std::mem::size_of::<$crate::memory::DevicePtr>()
            }
            fn is_device_pointer(&self) -> bool {
                true
            }
        }
    };
}

mod device;
mod managed;
mod ops;
mod peer;
mod pinned;
mod pool;
pub mod staging;

pub use device::{DeviceBuffer, DeviceSlice, DeviceSliceMut};
pub use managed::ManagedBuffer;
pub use ops::MemAdvice;
pub use pinned::PinnedBuffer;
pub use pool::MemPool;

use crate::device::Device;
use crate::error::{Error, Result};
use crate::result;
use hip_sys as sys;
use std::ffi::c_void;
use std::ops::{Bound, RangeBounds};

/// A device address. HIP's `hipDeviceptr_t` is `void*` on AMD but `CUdeviceptr` (an integer) on NVIDIA;
/// `hipMalloc` and the copy functions take `void*` on both, so this crate holds addresses as that.
pub type DevicePtr = *mut c_void;

/// Plain data that may be copied to and from a device byte for byte.
///
/// # Safety
/// The type is `Copy`, holds no references or host pointers that a kernel could not use, and **every bit
/// pattern is a valid value**: a kernel can write any bits, and copying them back must never produce an
/// invalid value. This is why every `DeviceCopy` type is also valid as all-zero bits, and why zero-filled
/// allocation is offered for all of them. `bool`, `char` and most enums are therefore not `DeviceCopy`.
pub unsafe trait DeviceCopy: Copy + Send + Sync + 'static {}

macro_rules! device_copy {
    ($($t:ty),*) => { $(unsafe impl DeviceCopy for $t {})* };
}
device_copy!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);
// 16-bit floats (the `half` crate, with the `rccl` feature): every bit pattern is a value.
#[cfg(feature = "rccl")]
device_copy!(half::f16, half::bf16);
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}

mod sealed {
    pub trait Sealed {}
}

/// Device memory holding [`len`](DeviceMemory::len) values of `T`: a whole buffer or a view of one.
///
/// Sealed: only this crate's types implement it, so its pointer and length are always right.
pub trait DeviceMemory<T: DeviceCopy>: sealed::Sealed {
    /// The device address of the first element.
    fn device_ptr(&self) -> DevicePtr;
    /// Number of elements.
    fn len(&self) -> usize;
    /// The device the memory lives on.
    fn device(&self) -> &Device;

    /// Whether there are no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Size in bytes (the allocation's size: it was checked not to overflow when allocated).
    fn byte_len(&self) -> usize {
        self.len() * std::mem::size_of::<T>()
    }

    /// Copy everything into `dst`, whose length must match. Synchronous.
    fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        check_len("copy_to_host", self.len(), dst.len())?;
        if self.byte_len() == 0 {
            return Ok(());
        }
        self.device().synchronize()?; // async work still using this memory finishes first
        let (d, n) = (dst.as_mut_ptr().cast::<u8>(), self.byte_len());
        if let Some(r) = unsafe { staging::to_host(self.device(), d, self.device_ptr(), n) } {
            return r;
        }
        unsafe {
            result::memcpy(
                dst.as_mut_ptr().cast(),
                self.device_ptr(),
                self.byte_len(),
                sys::hipMemcpyDeviceToHost,
            )
        }
    }

    /// Copy everything into a new `Vec`. Synchronous.
    fn to_vec(&self) -> Result<Vec<T>> {
        let mut v = Vec::<T>::with_capacity(self.len());
        if self.byte_len() != 0 {
            self.device().synchronize()?; // async work still using this memory finishes first
            let (d, n) = (v.as_mut_ptr().cast::<u8>(), self.byte_len());
            match unsafe { staging::to_host(self.device(), d, self.device_ptr(), n) } {
                Some(r) => r?,
                None => unsafe {
                    result::memcpy(d.cast(), self.device_ptr(), n, sys::hipMemcpyDeviceToHost)?;
                },
            }
        }
        // SAFETY: the copy wrote all len() elements (or they are zero-sized), and any bits are a valid T
        // (DeviceCopy).
        unsafe { v.set_len(self.len()) };
        Ok(v)
    }

    /// A view of `range` of the elements.
    fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceSlice<'_, T>>
    where
        Self: Sized,
    {
        let (start, end) = bounds(range, self.len())?;
        Ok(DeviceSlice::new(
            offset(self.device_ptr(), element_offset::<T>(start)),
            end - start,
            self.device(),
        ))
    }
}

/// Device memory that may be written: owned buffers and mutable views.
///
/// Copies and memsets with no bytes to move (no elements, or zero-sized ones) return `Ok` without calling
/// HIP: a zero-sized buffer of `usize::MAX` elements has no allocation to point at.
pub trait DeviceMemoryMut<T: DeviceCopy>: DeviceMemory<T> {
    /// Copy `src`, whose length must match, into this memory. Synchronous.
    fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        check_len("copy_from_host", self.len(), src.len())?;
        if self.byte_len() == 0 {
            return Ok(());
        }
        self.device().synchronize()?; // async work still using this memory finishes first
        let (s, n) = (src.as_ptr().cast::<u8>(), self.byte_len());
        if let Some(r) = unsafe { staging::to_device(self.device(), self.device_ptr(), s, n) } {
            return r;
        }
        unsafe {
            result::memcpy(
                self.device_ptr(),
                src.as_ptr().cast(),
                self.byte_len(),
                sys::hipMemcpyHostToDevice,
            )?
        };
        // From pageable memory the call may return once the data is staged, before it lands.
        default_stream_done()
    }

    /// Copy device memory of the same length into this memory. Waits for work queued on both memories'
    /// devices first, and returns once the copy is done (HIP's device-to-device copy alone does not wait).
    fn copy_from_device(&mut self, src: &impl DeviceMemory<T>) -> Result<()>
    where
        Self: Sized,
    {
        check_len("copy_from_device", self.len(), src.len())?;
        if self.byte_len() == 0 {
            return Ok(());
        }
        if src.device().ordinal() != self.device().ordinal() {
            src.device().synchronize()?; // a peer source: its device's queued writes finish first
        }
        self.device().synchronize()?; // async work still using this memory finishes first
        unsafe {
            result::memcpy(
                self.device_ptr(),
                src.device_ptr(),
                self.byte_len(),
                sys::hipMemcpyDeviceToDevice,
            )?
        };
        default_stream_done()
    }

    /// Set every byte to `value` (`hipMemset`). Synchronous: returns once the memory is set.
    fn memset_bytes(&mut self, value: u8) -> Result<()> {
        if self.byte_len() == 0 {
            return Ok(());
        }
        self.device().synchronize()?; // async work still using this memory finishes first
        unsafe { result::memset(self.device_ptr(), value, self.byte_len())? };
        // hipMemset on device memory may return before the memset ran.
        default_stream_done()
    }

    /// Set every element to zero.
    fn zero(&mut self) -> Result<()> {
        self.memset_bytes(0)
    }

    /// A mutable view of `range` of the elements.
    fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceSliceMut<'_, T>>
    where
        Self: Sized,
    {
        let (start, end) = bounds(range, self.len())?;
        Ok(DeviceSliceMut::new(
            offset(self.device_ptr(), element_offset::<T>(start)),
            end - start,
            self.device(),
        ))
    }
}

/// Wait for the current device's default (null) stream: synchronous HIP calls that may return early
/// (`hipMemset`, host-to-device from pageable memory, device-to-device) queue there. Without this, work on
/// a non-blocking stream, which is not ordered after the default stream, could run before a "synchronous"
/// zeroing or upload landed (`DeviceBuffer::zeroed` then an async copy into it, overwritten by the late
/// memset).
pub(crate) fn default_stream_done() -> Result<()> {
    // SAFETY: the null stream always exists.
    unsafe { result::stream_synchronize(std::ptr::null_mut()) }
}

/// Bytes for `len` elements of `T`, or an error if that overflows.
pub(crate) fn byte_size<T>(len: usize) -> Result<usize> {
    let elem_bytes = std::mem::size_of::<T>();
    len.checked_mul(elem_bytes)
        .ok_or(Error::AllocationTooLarge {
            elements: len,
            elem_bytes,
        })
}

fn element_offset<T>(index: usize) -> usize {
    index * std::mem::size_of::<T>()
}

fn offset(ptr: DevicePtr, bytes: usize) -> DevicePtr {
    (ptr as *mut u8).wrapping_add(bytes).cast::<c_void>()
}

pub(crate) fn check_len(what: &'static str, expected: usize, actual: usize) -> Result<()> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::LengthMismatch {
            what,
            expected,
            actual,
        })
    }
}

fn bounds(range: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
    // `..=usize::MAX` and `(Excluded(usize::MAX), _)` name an end or start one past usize::MAX: no buffer
    // holds that, so they are out of bounds (saturating would silently shorten the range by one).
    let past = |v: usize| {
        v.checked_add(1).ok_or(Error::OutOfBounds {
            start: v,
            end: usize::MAX,
            len,
        })
    };
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => past(s)?,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => past(e)?,
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        return Err(Error::OutOfBounds { start, end, len });
    }
    Ok((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::Bound::*;

    #[test]
    fn ranges_at_the_extremes_are_checked_without_overflow() {
        let m = usize::MAX;
        assert_eq!(bounds(.., m).unwrap(), (0, m));
        assert_eq!(bounds(m.., m).unwrap(), (m, m));
        assert_eq!(bounds(..m, m).unwrap(), (0, m));
        assert!(matches!(bounds(..=m, m), Err(Error::OutOfBounds { .. })));
        assert!(matches!(
            bounds((Excluded(m), Unbounded), m),
            Err(Error::OutOfBounds { .. })
        ));
        assert!(matches!(
            bounds((Included(1), Excluded(0)), 4),
            Err(Error::OutOfBounds {
                start: 1,
                end: 0,
                len: 4
            })
        ));
        assert!(matches!(bounds(0..5, 4), Err(Error::OutOfBounds { .. })));
        assert_eq!(bounds((Excluded(2), Included(3)), 4).unwrap(), (3, 4));
        assert_eq!(bounds(0..0, 0).unwrap(), (0, 0));
    }

    #[test]
    fn byte_sizes_overflow_into_an_error() {
        assert!(matches!(
            byte_size::<u64>(usize::MAX),
            Err(Error::AllocationTooLarge {
                elements: usize::MAX,
                elem_bytes: 8
            })
        ));
        assert_eq!(byte_size::<[u8; 0]>(usize::MAX).unwrap(), 0);
        assert_eq!(byte_size::<u8>(usize::MAX).unwrap(), usize::MAX);
        assert_eq!(byte_size::<u32>(usize::MAX / 4).unwrap(), usize::MAX - 3);
    }
}
