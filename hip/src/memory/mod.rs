//! Memory: device buffers and views, pinned host buffers, managed buffers, and copies between them.
//!
//! # What keeps memory sound and in program order
//!
//! Every allocation is tracked by the memory model ([`Allocation`]): it knows the
//! last stream that wrote it and the streams that read it since. Every safe operation that touches memory
//! on a stream first orders that stream after the conflicting work of other streams (read after write,
//! write after read, write after write), so safe code sees program order on any number of streams. While
//! memory stays on one stream this costs one atomic load and one compare-and-swap, and nothing is recorded.
//!
//! - Synchronous operations (`copy_from_host`, `copy_from_device`, `memset_bytes`, `zero`,
//!   `copy_to_host`, `to_vec`, and so `zeroed` and `from_slice`) are queued on the device's null stream,
//!   ordered like any other stream's work, and wait for nothing else: see each one's rustdoc for what it
//!   guarantees on return.
//! - Asynchronous copies ([`Stream::copy_from_host_async`](crate::Stream::copy_from_host_async) and
//!   friends) take host memory only as a [`PinnedBuffer`], tracked the same way: the host sees or changes
//!   its contents ([`PinnedBuffer::as_slice`], [`PinnedBuffer::as_mut_slice`]) only after the copies that
//!   conflict and were queued before the call have completed, and neither dropping nor `mem::forget`-ing
//!   anything frees it under a copy. Queueing a copy needs a borrow of the buffer, which a slice held
//!   excludes; a graph replay needs none, so captures refuse pinned and managed memory
//!   ([`Error::InvalidArgument`]): no [`GraphExec::launch`](crate::GraphExec::launch) writes or reads
//!   memory the host holds a slice of. Graphs copy to and from the host through a
//!   [`GraphPinnedBuffer`] instead, whose host borrows are guards counted at run time: a launch that
//!   conflicts with a live borrow is refused, and a borrow waits for the launches before it.
//! - Memory is freed when its owner and every graph that captured work on it are gone, and only after
//!   every stream recorded as still using it is done (a stream-ordered buffer: its stream waits for them
//!   first). Work this crate cannot see is not waited for: uses made untracked
//!   ([`DeviceBuffer::set_untracked`], [`LaunchArgs::arg_untracked`](crate::LaunchArgs::arg_untracked),
//!   both `unsafe`). With the `rccl` feature, a collective called inside `rccl::group` is queued by RCCL /
//!   NCCL only when the group ends: `group` keeps the buffers it uses alive until then (one dropped inside
//!   the group is freed after the collective), and until then every other use of those buffers (an
//!   operation on any stream, a host access, `track_use`, a group call on another stream) is refused with
//!   [`Error::InvalidArgument`] (see `rccl::group`).
//! - Device buffers are zero-initialised unless allocated with the `unsafe` [`DeviceBuffer::uninit`] or
//!   [`DeviceBuffer::alloc_async`].
//!
//! # Element types in a kernel
//!
//! A buffer of `T` is passed to a kernel as a pointer (`arg(&buf)` for `const T*`, `arg_mut` for `T*`);
//! a value of `T` by value (`arg(&x)`). What `T` is on the kernel's side (HIP C++; the same names on both
//! platforms unless said):
//!
//! | Rust | kernel |
//! | --- | --- |
//! | `f32`, `f64` | `float`, `double` |
//! | `i8`, `i16`, `i32`, `i64` / `u8` ... `u64` | `int8_t` ... `int64_t` / `uint8_t` ... `uint64_t` (`char`, `short`, `int`, `long long` and their `unsigned`) |
//! | `usize`, `isize` | `size_t`, `ptrdiff_t` (64 bits on every HIP target) |
//! | [`half::f16`] | `__half` (`hip/hip_fp16.h`, `cuda_fp16.h` on NVIDIA), or an `unsigned short` holding its bits; `hip_rs_half` with [`ProgramBuilder::half_precision`](crate::rtc::ProgramBuilder::half_precision) |
//! | [`half::bf16`] | `__hip_bfloat16` (`hip/hip_bf16.h`, HIP 6+), `hip_bfloat16` (`hip/hip_bfloat16.h`; `__nv_bfloat16` on NVIDIA), or an `unsigned short` holding its bits; `hip_rs_bfloat16` with [`ProgramBuilder::half_precision`](crate::rtc::ProgramBuilder::half_precision) on every version |
//! | `Complex32`, `Complex64` (`hip::blas`, `hip::fft`) | `float2`, `double2` (`hipFloatComplex`, `hipDoubleComplex`): `re` is `.x`, `im` is `.y` |
//! | `[T; N]` | `T[N]` (in a struct); a buffer of `[f32; 4]` may be read as `float4`, whose 16-byte alignment its elements have when the buffer is a whole allocation or a view starting at a whole element |
//! | a `#[repr(C)]` struct of these, without padding | the same C struct |
//!
//! A type whose alignment is larger in C than in Rust (`float2` is 8-byte aligned, `Complex32` 4;
//! `float4` 16, `[f32; 4]` 4) is only safe to read as the C type at an address aligned for it: whole
//! buffers are (allocations are aligned to at least 256 bytes), a view made by
//! [`reinterpret`](DeviceMemory::reinterpret) or an odd-offset [`slice`](DeviceMemory::slice) may not be.
//! Passed by value the layout is the kernel's: the launch hands HIP a pointer to each argument
//! (`kernelParams`), and HIP copies it into the kernel's own parameter layout.

/// `DeviceMemory` (and, in `launch`, `KernelArg`) for a type holding `ptr: DevicePtr`, `len` and `alloc` (an
/// `Arc<Allocation>` or a reference to one).
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
                self.alloc.device()
            }
            fn allocation(&self) -> &std::sync::Arc<$crate::memory::Allocation> {
                &self.alloc
            }
        }
        impl<$($lt,)? T: $crate::memory::DeviceCopy> $ty<$($lt,)? T> {
            /// The `ptr` field itself, for [`KernelArg`](crate::KernelArg) (in `launch`), whose parameter
            /// must point at memory stored in `self`.
            pub(crate) fn device_ptr_field(&self) -> &$crate::memory::DevicePtr {
                &self.ptr
            }
        }
    };
}

mod copy_2d;
mod copy_threads;
mod device;
mod graph_pinned;
mod growable;
mod host_lease;
mod ipc;
mod managed;
mod mem_pool;
#[cfg(unix)]
mod mem_pool_share;
mod ops;
mod peer;
mod pinned;
mod pinned_mapped;
mod pinned_ops;
mod pinned_register;
mod pinned_view;
mod pitched;
mod pool;
mod raw;
mod registered;
pub mod staging;
pub(crate) mod tracking;
mod upload;
mod users;
mod views;
mod virtual_mem;
mod virtual_mem_query;
#[cfg(unix)]
mod virtual_mem_share;

pub(crate) use copy_2d::{check_plane, row_bytes};
pub use device::{DeviceBuffer, DeviceSlice, DeviceSliceMut};
pub use graph_pinned::{GraphPinnedBuffer, GraphPinnedRef, GraphPinnedRefMut};
pub use growable::GrowableBuffer;
pub(crate) use host_lease::hold_for_launch;
pub use ipc::{ForeignBuffer, IpcExport};
pub use managed::{ManagedBuffer, MemAttach};
pub use mem_pool::{MemPool, PoolAccess, ReusePolicy};
#[cfg(unix)]
pub use mem_pool_share::{ImportedMemPool, PoolPointerExport};
pub use ops::MemAdvice;
pub use pinned::{PinnedBuffer, PinnedFlags};
pub use pinned_mapped::MappedPinned;
pub use pinned_view::{HostMemory, HostMemoryMut, PinnedSlice, PinnedSliceMut};
pub(crate) use pitched::check_region;
pub use pitched::PitchedBuffer;
pub use tracking::{Access, Allocation};
pub use virtual_mem::{AddressRange, Granularity, Mapping, MemAccess, PhysicalMemory};
pub use virtual_mem_query::PhysicalProperties;

use crate::device::Device;
use crate::error::{Error, Result};
use crate::result;
use crate::stream::Stream;
use hip_sys as sys;
use std::ffi::c_void;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;
use tracking::use_both;

/// A device address. HIP's `hipDeviceptr_t` is `void*` on AMD but `CUdeviceptr` (an integer) on NVIDIA;
/// `hipMalloc` and the copy functions take `void*` on both, so this crate holds addresses as that.
pub type DevicePtr = *mut c_void;

/// Plain data that may be copied to and from a device byte for byte.
///
/// # Safety
///
/// - the type is `Copy` and holds no references or host pointers that a kernel could not use;
/// - it **has no padding bytes**: every byte of a value is initialised, so the crate may read a value as
///   plain bytes (a fill value, a kernel argument); `#[repr(C)] struct { a: u8, b: u16 }` has one and
///   must not implement it;
/// - **every bit pattern is a valid value**: a kernel can write any bits, and copying them back must
///   never produce an invalid value (so `bool`, `char` and most enums are not `DeviceCopy`; every
///   `DeviceCopy` type is valid as all-zero bits, which is why zero-filled allocation is offered for all).
pub unsafe trait DeviceCopy: Copy + Send + Sync + 'static {}

macro_rules! device_copy {
    ($($t:ty),*) => { $(
        // SAFETY: primitive integers and floats (and `half`'s 16-bit floats, plain `u16` wrappers): Copy,
        // Send, Sync and 'static, no padding, no pointers, and every bit pattern is a value (a float's
        // NaNs included).
        unsafe impl DeviceCopy for $t {}
    )* };
}
device_copy!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);
// 16-bit floats (the `half` crate, re-exported as `hip::half`): every bit pattern is a value.
device_copy!(half::f16, half::bf16);
// SAFETY: an array of a DeviceCopy type has no padding between elements (an element's size is a multiple
// of its alignment, and the array adds nothing) and every bit pattern of each element is valid; it is
// Copy, Send, Sync and 'static as its element is.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}
#[cfg(any(
    feature = "blas",
    feature = "fft",
    feature = "solver",
    feature = "sparse"
))]
// SAFETY: `num_complex::Complex<T>` is `#[repr(C)] { re: T, im: T }`: two fields of one DeviceCopy type
// leave no padding, and every bit pattern of each is valid; Copy, Send, Sync and 'static as T is.
unsafe impl<T: DeviceCopy> DeviceCopy for num_complex::Complex<T> {}

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
    /// The allocation this memory belongs to (a view's is its parent's).
    #[doc(hidden)]
    fn allocation(&self) -> &Arc<Allocation>;

    /// Whether there are no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Size in bytes (the allocation's size: it was checked not to overflow when allocated).
    fn byte_len(&self) -> usize {
        self.len() * std::mem::size_of::<T>()
    }

    /// Order work about to be queued on `stream` outside this crate (a raw `hip-sys` call, another
    /// library) that makes `access` to this memory: `stream` waits for the conflicting work of other
    /// streams, and later operations of this crate are ordered after it. This is the rule for raw calls:
    /// call this before queueing them. Work on the default stream of another device is allowed (peer
    /// access). `access` is [`Access::Read`] or [`Access::Write`] (`hip::Access`, in the prelude).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for pinned or managed memory on a stream being captured, and (feature
    /// `rccl`) for memory a call of an open RCCL group uses; what HIP returns for the wait queued on
    /// `stream`.
    ///
    /// ```no_run
    /// use hip::prelude::*;
    ///
    /// let device = Device::first()?;
    /// let stream = Stream::new(&device)?;
    /// let buf = DeviceBuffer::<f32>::zeroed(&device, 256)?;
    /// // A raw hip-sys call (or another library) is about to read `buf` on `stream`: order it first.
    /// buf.track_use(&stream, Access::Read)?;
    /// # Ok::<(), hip::Error>(())
    /// ```
    fn track_use(&self, stream: &Stream, access: Access) -> Result<()> {
        self.allocation().use_on_open(&stream.begin_op(), access)
    }

    /// Copy everything into `dst`, whose length must match. Synchronous: queued on the device's null
    /// stream after the work of other streams that writes this memory, and returns once `dst` holds the
    /// data. It does not wait for unrelated work.
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`] for lengths that differ, and what HIP returns for the copy.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(x: &DeviceBuffer<f32>) -> hip::Result<()> {
    /// let mut host = vec![0.0f32; x.len()];
    /// x.copy_to_host(&mut host)?; // waits for the work that writes `x`
    /// # Ok(()) }
    /// ```
    fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        check_len("copy_to_host", self.len(), dst.len())?;
        read_to_host(self, dst.as_mut_ptr().cast())
    }

    /// Copy everything into a new `Vec`. Blocking, like [`copy_to_host`](Self::copy_to_host): it waits
    /// for the work of any stream that writes this memory, and for nothing else. In async code,
    /// `to_vec_future` does the same without blocking a thread.
    ///
    /// # Errors
    ///
    /// What HIP returns for the copy, or an error of the work it waited for.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// let device = Device::get(0)?;
    /// let x = DeviceBuffer::<u32>::zeroed(&device, 4)?;
    /// assert_eq!(x.to_vec()?, [0; 4]);
    /// # Ok::<(), hip::Error>(())
    /// ```
    fn to_vec(&self) -> Result<Vec<T>> {
        let mut v = Vec::<T>::with_capacity(self.len());
        read_to_host(self, v.as_mut_ptr().cast())?;
        // SAFETY: `v` has capacity for len() elements; `read_to_host` returned Ok, so it wrote all
        // byte_len() = len() * size_of::<T>() bytes of them (none when T is zero-sized), and any bits are a
        // valid T (DeviceCopy).
        unsafe { v.set_len(self.len()) };
        Ok(v)
    }

    /// A view of `range` of the elements (any range: `2..5`, `..n`, `4..`), for a copy or a kernel
    /// argument. It borrows the memory; nothing is copied.
    ///
    /// # Errors
    ///
    /// [`Error::OutOfBounds`] for a range that does not fit in the memory or whose start is past its end.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// let x = DeviceBuffer::from_slice(device, &[1u32, 2, 3, 4, 5])?;
    /// assert_eq!(x.slice(1..3)?.to_vec()?, [2, 3]);
    /// assert!(x.slice(4..9).is_err()); // Error::OutOfBounds
    /// # Ok(()) }
    /// ```
    fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceSlice<'_, T>>
    where
        Self: Sized,
    {
        let (start, end) = bounds(range, self.len())?;
        Ok(DeviceSlice::new(
            offset(self.device_ptr(), element_offset::<T>(start)),
            end - start,
            self.allocation(),
        ))
    }
    /// Two views, `..mid` and `mid..` (for example two halves read by two kernels at once, each view a
    /// kernel argument of its own). [`Error::OutOfBounds`] for `mid` past the end. For two views to write,
    /// [`DeviceMemoryMut::split_at_mut`].
    ///
    /// # Errors
    ///
    /// [`Error::OutOfBounds`] when `mid` is greater than the length.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// let x = DeviceBuffer::from_slice(device, &[1u32, 2, 3, 4])?;
    /// let (low, high) = x.split_at(1)?;
    /// assert_eq!((low.len(), high.len()), (1, 3));
    /// # Ok(()) }
    /// ```
    fn split_at(&self, mid: usize) -> Result<(DeviceSlice<'_, T>, DeviceSlice<'_, T>)>
    where
        Self: Sized,
    {
        let (_, mid) = bounds(..mid, self.len())?;
        let (ptr, len, alloc) = (self.device_ptr(), self.len(), self.allocation());
        let second = offset(ptr, element_offset::<T>(mid));
        Ok((
            DeviceSlice::new(ptr, mid, alloc),
            DeviceSlice::new(second, len - mid, alloc),
        ))
    }

    /// The same memory as elements of another [`DeviceCopy`] type `U` (for example `f32` as `u32`, or
    /// `[f32; 4]` as `f32`): a view of `byte_len / size_of::<U>()` elements. Safe because every bit
    /// pattern is a valid `DeviceCopy` value. [`Error::InvalidArgument`] when the bytes do not divide
    /// into whole `U`s, when the address is not aligned for `U`, or for a zero-sized `U`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the byte length is not a multiple of `size_of::<U>()`, when the
    /// first element's address is not aligned for `U`, or when `U` is zero-sized.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// let x = DeviceBuffer::from_slice(device, &[1.0f32, -2.0])?;
    /// let bits = x.reinterpret::<u32>()?;
    /// assert_eq!(bits.to_vec()?, [1.0f32.to_bits(), (-2.0f32).to_bits()]);
    /// # Ok(()) }
    /// ```
    fn reinterpret<U: DeviceCopy>(&self) -> Result<DeviceSlice<'_, U>>
    where
        Self: Sized,
    {
        let len = views::reinterpreted_len::<U>(self.device_ptr(), self.byte_len())?;
        Ok(DeviceSlice::new(self.device_ptr(), len, self.allocation()))
    }
}

/// The synchronous device-to-host read behind `copy_to_host` and `to_vec`: `dst` is valid for
/// `m.byte_len()` bytes.
fn read_to_host<T: DeviceCopy, M: DeviceMemory<T> + ?Sized>(m: &M, dst: *mut u8) -> Result<()> {
    let n = m.byte_len();
    if n == 0 {
        return Ok(());
    }
    // SAFETY: `m` (borrowed for the call) is `n` bytes of device memory of its allocation (DeviceMemory is
    // sealed: pointer and length are this crate's), and the caller gives `dst` valid for writing `n`
    // bytes (a slice of len() elements, or a Vec's spare capacity). The ring orders its stream after the
    // memory's writers and returns once `dst` holds the data.
    if let Some(r) = unsafe { staging::to_host(m.allocation(), dst, m.device_ptr(), n) } {
        return r;
    }
    let device = m.device();
    let null = device.null_stream();
    let op = null.begin_op();
    m.allocation().use_on(&op, Access::Read)?;
    device.bind()?;
    // SAFETY: pointers and size as above. The null stream of the memory's device (current) was ordered
    // after its writers, and hipMemcpy to the host returns only once the copy is done, so `dst` is not
    // written after the call and `m` is not read after its borrow ends.
    unsafe { result::memcpy(dst.cast(), m.device_ptr(), n, sys::hipMemcpyDeviceToHost) }?;
    // The copy ran (and the null stream's earlier work with it): the memory model knows.
    op.completed();
    Ok(())
}

/// Device memory that may be written: owned buffers and mutable views.
///
/// Copies and memsets with no bytes to move (no elements, or zero-sized ones) return `Ok` without calling
/// HIP: a zero-sized buffer of `usize::MAX` elements has no allocation to point at.
///
/// The synchronous operations here are queued on the device's null stream, ordered after the work of
/// other streams that conflicts with them (and before later work that conflicts with them), without
/// waiting for anything else. What "synchronous" guarantees differs by direction, exactly as for raw
/// `hipMemcpy`: see each method.
pub trait DeviceMemoryMut<T: DeviceCopy>: DeviceMemory<T> {
    /// Copy `src`, whose length must match, into this memory. On return `src` may be changed or freed;
    /// the data may still be landing (from pageable memory HIP returns once it is staged), but every later
    /// operation of this crate on this memory, on any stream or the host, sees it.
    ///
    /// Blocking. A large copy from pageable memory goes through the staging ring: its first use
    /// allocates pinned staging buffers and starts a pool of copy threads, which stay for the process.
    /// The queued form is [`Stream::copy_from_host_async`](crate::Stream::copy_from_host_async), from a
    /// [`PinnedBuffer`].
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`] for lengths that differ, and what HIP returns for the copy.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// let device = Device::get(0)?;
    /// let mut x = DeviceBuffer::<u32>::zeroed(&device, 3)?;
    /// x.copy_from_host(&[7, 8, 9])?;
    /// assert_eq!(x.to_vec()?, [7, 8, 9]);
    /// # Ok::<(), hip::Error>(())
    /// ```
    fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        check_len("copy_from_host", self.len(), src.len())?;
        let n = self.byte_len();
        if n == 0 {
            return Ok(());
        }
        let (s, p) = (src.as_ptr().cast::<u8>(), self.device_ptr());
        // SAFETY: `src` is a live slice of len() elements, valid for reading `n` bytes; this memory is
        // `n` bytes of device memory of its allocation (sealed trait). The ring orders its stream after
        // every other use of the memory and returns once `src` has been read.
        if let Some(r) = unsafe { staging::to_device(self.allocation(), p, s, n) } {
            return r;
        }
        let device = self.device();
        let null = device.null_stream();
        let op = null.begin_op();
        self.allocation().use_on(&op, Access::Write)?;
        device.bind()?;
        // SAFETY: pointers and size as above; the device's null stream (current) was ordered after every
        // other use of the memory. hipMemcpy from pageable memory returns once `src` has been read
        // (staged), so `src` may change after the call; the memory is freed only after the null stream's
        // work, which it is now recorded to have.
        unsafe { result::memcpy(p, s.cast(), n, sys::hipMemcpyHostToDevice) }
    }

    /// Copy device memory of the same length (on this device or a peer) into this memory. It blocks the
    /// host no more than raw `hipMemcpy` does (device to device: not at all on most platforms): the result
    /// can only be observed through later operations, which are ordered after it.
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`] for lengths that differ, and what HIP returns for the copy.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// let a = DeviceBuffer::from_slice(device, &[1u32, 2, 3, 4])?;
    /// let mut b = DeviceBuffer::<u32>::zeroed(device, 2)?;
    /// b.copy_from_device(&a.slice(2..)?)?;
    /// assert_eq!(b.to_vec()?, [3, 4]);
    /// # Ok(()) }
    /// ```
    fn copy_from_device(&mut self, src: &impl DeviceMemory<T>) -> Result<()>
    where
        Self: Sized,
    {
        check_len("copy_from_device", self.len(), src.len())?;
        let n = self.byte_len();
        if n == 0 {
            return Ok(());
        }
        let null = self.device().null_stream();
        let op = null.begin_op();
        use_both(
            &op,
            (src.allocation(), Access::Read),
            (self.allocation(), Access::Write),
        )?;
        self.device().bind()?;
        // SAFETY: both are `n` bytes of device memory (equal lengths checked; sealed trait), alive for the
        // call. The null stream of this memory's device (current) was ordered after the source's writers
        // and this memory's users, on any device, and is recorded as a user of both, so neither is freed
        // or conflictingly used before the copy, which may still run after the call, is done.
        unsafe {
            result::memcpy(
                self.device_ptr(),
                src.device_ptr(),
                n,
                sys::hipMemcpyDeviceToDevice,
            )
        }
    }

    /// Set every byte to `value` (`hipMemset`). Like [`copy_from_device`](Self::copy_from_device), it
    /// may return before the memory is set; every later operation sees it set.
    ///
    /// # Errors
    ///
    /// What HIP returns for making the device current and for `hipMemset`; with feature `rccl`,
    /// [`Error::InvalidArgument`] for memory a call of an open RCCL group uses.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// let mut x = DeviceBuffer::<u32>::zeroed(device, 2)?;
    /// x.memset_bytes(0xff)?;
    /// assert_eq!(x.to_vec()?, [u32::MAX; 2]);
    /// # Ok(()) }
    /// ```
    fn memset_bytes(&mut self, value: u8) -> Result<()> {
        let n = self.byte_len();
        if n == 0 {
            return Ok(());
        }
        let null = self.device().null_stream();
        let op = null.begin_op();
        self.allocation().use_on(&op, Access::Write)?;
        self.device().bind()?;
        // SAFETY: `n` bytes of device memory (sealed trait); the device's null stream (current) was
        // ordered after the memory's users and is recorded as its writer, so the memset, which may still
        // run after the call, is done before the memory is freed or used elsewhere.
        unsafe { result::memset(self.device_ptr(), value, n) }
    }

    /// Set every element to zero: [`memset_bytes(0)`](Self::memset_bytes), so it may return before the
    /// memory is set; every later operation sees it set.
    ///
    /// # Errors
    ///
    /// As [`memset_bytes`](Self::memset_bytes): what HIP returns for making the device current and for
    /// `hipMemset`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(x: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// x.slice_mut(..16)?.zero()?; // the first 16 elements
    /// # Ok(()) }
    /// ```
    fn zero(&mut self) -> Result<()> {
        self.memset_bytes(0)
    }

    /// A mutable view of `range` of the elements, to copy into or pass to a kernel that writes it.
    ///
    /// # Errors
    ///
    /// [`Error::OutOfBounds`] for a range that does not fit in the memory or whose start is past its end.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// let mut x = DeviceBuffer::<u32>::zeroed(device, 4)?;
    /// x.slice_mut(2..)?.copy_from_host(&[8, 9])?;
    /// assert_eq!(x.to_vec()?, [0, 0, 8, 9]);
    /// # Ok(()) }
    /// ```
    fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceSliceMut<'_, T>>
    where
        Self: Sized,
    {
        let (start, end) = bounds(range, self.len())?;
        let ptr = offset(self.device_ptr(), element_offset::<T>(start));
        Ok(DeviceSliceMut::new(ptr, end - start, self.allocation()))
    }
    /// Two mutable views, `..mid` and `mid..`, that do not overlap (for example two halves written by
    /// two kernels at once). [`Error::OutOfBounds`] for `mid` past the end.
    ///
    /// # Errors
    ///
    /// [`Error::OutOfBounds`] when `mid` is greater than the length.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// let mut x = DeviceBuffer::<u32>::zeroed(device, 4)?;
    /// let (mut low, mut high) = x.split_at_mut(2)?;
    /// low.copy_from_host(&[1, 2])?;
    /// high.copy_from_host(&[3, 4])?;
    /// assert_eq!(x.to_vec()?, [1, 2, 3, 4]);
    /// # Ok(()) }
    /// ```
    fn split_at_mut(&mut self, mid: usize) -> Result<(DeviceSliceMut<'_, T>, DeviceSliceMut<'_, T>)>
    where
        Self: Sized,
    {
        let (_, mid) = bounds(..mid, self.len())?;
        let (ptr, len, alloc) = (self.device_ptr(), self.len(), self.allocation());
        let second = offset(ptr, element_offset::<T>(mid));
        Ok((
            DeviceSliceMut::new(ptr, mid, alloc),
            DeviceSliceMut::new(second, len - mid, alloc),
        ))
    }

    /// [`reinterpret`](DeviceMemory::reinterpret), for writing.
    ///
    /// # Errors
    ///
    /// As [`reinterpret`](DeviceMemory::reinterpret): [`Error::InvalidArgument`] when the bytes are not
    /// whole `U`s, when the address is not aligned for `U`, or when `U` is zero-sized.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// let mut pixels = DeviceBuffer::<[u8; 4]>::zeroed(device, 256)?;
    /// pixels.reinterpret_mut::<u32>()?.copy_from_host(&[0xff00_00ff; 256])?;
    /// # Ok(()) }
    /// ```
    fn reinterpret_mut<U: DeviceCopy>(&mut self) -> Result<DeviceSliceMut<'_, U>>
    where
        Self: Sized,
    {
        let len = views::reinterpreted_len::<U>(self.device_ptr(), self.byte_len())?;
        Ok(DeviceSliceMut::new(
            self.device_ptr(),
            len,
            self.allocation(),
        ))
    }
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
mod tests;
