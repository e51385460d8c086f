//! "What is this pointer": `hipPointerGetAttributes` as a safe query, on any address (a lookup in the
//! runtime's tables; nothing is read or written through the pointer) and on the crate's buffers.
//!
//! The values of `hipMemoryType` changed in ROCm 6 (5.x: host 0, device 1, array 2, unified 3, managed 4
//! from 5.7; 6.x: unregistered 0, host 1, device 2, managed 3, array 10, unified 11) and the field was
//! renamed (`memoryType` in 5.2, a union of both names in 5.7, `type` in 6.x): [`MemoryType`] names them
//! the same way on every version.

use crate::error::Result;
use crate::memory::{DeviceCopy, DeviceMemory, HostMemory};
use crate::result::check;
use hip_sys as sys;
use std::ffi::c_void;

/// Where memory lives, as `hipPointerGetAttributes` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemoryType {
    /// Host memory the runtime knows (pinned: `hipHostMalloc`, `hipHostRegister`).
    Host,
    /// Device memory (`hipMalloc`, pools).
    Device,
    /// Managed (unified) memory (`hipMallocManaged`), where the runtime says so by type (AMD's HIP >= 5.7,
    /// and HIP's NVIDIA platform, where CUDA's answer is read); older ones answer [`MemoryType::Device`]
    /// or [`MemoryType::Host`] with [`PointerAttributes::is_managed`] set.
    Managed,
    /// A HIP array (`hipMallocArray`).
    Array,
    /// `hipMemoryTypeUnified`.
    Unified,
    /// Memory the runtime does not know (plain `malloc`), where it answers instead of failing (HIP 6+,
    /// CUDA).
    Unregistered,
    /// A value this crate does not name, kept raw.
    Other(u32),
}

impl MemoryType {
    #[cfg(hip_platform = "amd")]
    fn from_raw(raw: sys::hipMemoryType) -> MemoryType {
        match raw {
            t if t == sys::hipMemoryTypeHost => MemoryType::Host,
            t if t == sys::hipMemoryTypeDevice => MemoryType::Device,
            t if t == sys::hipMemoryTypeArray => MemoryType::Array,
            t if t == sys::hipMemoryTypeUnified => MemoryType::Unified,
            #[cfg(hip_memory_type_managed)]
            t if t == sys::hipMemoryTypeManaged => MemoryType::Managed,
            #[cfg(hip_memory_type_unregistered)]
            t if t == sys::hipMemoryTypeUnregistered => MemoryType::Unregistered,
            // `hipMemoryType` is unsigned on some headers and signed on others.
            #[allow(clippy::unnecessary_cast)]
            t => MemoryType::Other(t as u32),
        }
    }
}

/// What the runtime knows of an address (`hipPointerAttribute_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointerAttributes {
    /// Where the memory lives.
    pub memory_type: MemoryType,
    /// The device the memory belongs to (for pinned memory, the one current at allocation).
    pub device: i32,
    /// The address a kernel uses for it (null where there is none).
    pub device_pointer: *mut c_void,
    /// The address the host uses for it (null for device memory).
    pub host_pointer: *mut c_void,
    /// Whether it is managed memory.
    pub is_managed: bool,
    /// The flags it was allocated with (`hipHostMalloc*` flags for pinned memory; 0 on NVIDIA).
    pub allocation_flags: u32,
}

/// The attributes of `ptr` (`hipPointerGetAttributes`): any address, including one inside an allocation
/// (the pointers returned then point at `ptr`'s byte too).
///
/// # Errors
///
/// What HIP returns for `hipPointerGetAttributes`, naming it: `hipErrorInvalidValue` for an address the
/// runtime does not know on AMD's HIP 5.x (6.x and CUDA answer [`MemoryType::Unregistered`] instead), the error of a
/// machine without a device (`hipErrorNoDevice`, kept raw).
///
/// ```no_run
/// use hip::prelude::*;
/// use hip::pointer::{self, MemoryType};
///
/// let device = Device::get(0)?;
/// let x = DeviceBuffer::<f32>::zeroed(&device, 256)?;
/// let a = pointer::attributes(x.device_ptr())?;
/// assert_eq!((a.memory_type, a.device), (MemoryType::Device, 0));
/// # Ok::<(), hip::Error>(())
/// ```
pub fn attributes(ptr: *const c_void) -> Result<PointerAttributes> {
    // Passed on as an address only (the runtime looks it up, never dereferences it).
    let ptr = ptr as usize as *const c_void;
    #[cfg(hip_platform = "nvidia")]
    return nvidia_attributes(ptr);
    #[cfg(hip_platform = "amd")]
    amd_attributes(ptr)
}

/// HIP's NVIDIA platform: CUDA's answer, through hip-sys's `hipRsPointerGetAttributes` (HIP's own mapping
/// refuses managed and unknown memory there and never sets `isManaged`).
#[cfg(hip_platform = "nvidia")]
fn nvidia_attributes(ptr: *const c_void) -> Result<PointerAttributes> {
    let (mut ty, mut device) = (0i32, -1i32);
    let (mut d, mut h) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: out-pointers to live locals; CUDA only looks `ptr` up.
    check("hipPointerGetAttributes", unsafe {
        sys::hipRsPointerGetAttributes(&mut ty, &mut device, &mut d, &mut h, ptr)
    })?;
    // cudaMemoryType: unregistered 0, host 1, device 2, managed 3.
    let memory_type = match ty {
        0 => MemoryType::Unregistered,
        1 => MemoryType::Host,
        2 => MemoryType::Device,
        3 => MemoryType::Managed,
        t => MemoryType::Other(t as u32),
    };
    Ok(PointerAttributes {
        memory_type,
        device,
        device_pointer: d,
        host_pointer: h,
        is_managed: ty == 3,
        allocation_flags: 0,
    })
}

#[cfg(hip_platform = "amd")]
fn amd_attributes(ptr: *const c_void) -> Result<PointerAttributes> {
    let mut raw = std::mem::MaybeUninit::<sys::hipPointerAttribute_t>::zeroed();
    // SAFETY: `raw` is a live, writable `hipPointerAttribute_t` of the bindings' layout; the runtime only
    // looks `ptr` up in its tables, never dereferences it.
    check("hipPointerGetAttributes", unsafe {
        sys::hipPointerGetAttributes(raw.as_mut_ptr(), ptr)
    })?;
    // SAFETY: plain C data (an enum, integers, pointers) for which all-zero bits are valid, zeroed above
    // and filled by the runtime.
    let raw = unsafe { raw.assume_init() };
    // The memory type is the struct's first member on every version, whatever its name (`memoryType`,
    // a union with `type`, or `type`): read it by position.
    // SAFETY: `hipPointerAttribute_t` is `repr(C)` and begins with the `hipMemoryType` member (or a
    // union of two of them), so its first bytes are that value.
    let memory_type =
        unsafe { *(&raw as *const sys::hipPointerAttribute_t).cast::<sys::hipMemoryType>() };
    Ok(PointerAttributes {
        memory_type: MemoryType::from_raw(memory_type),
        device: raw.device,
        device_pointer: raw.devicePointer,
        host_pointer: raw.hostPointer,
        is_managed: raw.isManaged != 0,
        allocation_flags: raw.allocationFlags,
    })
}

/// The attributes of a device buffer, view or managed buffer (its first element's address).
///
/// # Errors
///
/// As [`attributes`].
///
/// ```no_run
/// # use hip::prelude::*;
/// # fn f(device: &Device) -> hip::Result<()> {
/// let m = ManagedBuffer::<u32>::zeroed(device, 64)?;
/// let a = hip::pointer::of_device(&m)?;
/// assert!(a.is_managed || a.memory_type == hip::pointer::MemoryType::Managed);
/// # Ok(()) }
/// ```
pub fn of_device<T: DeviceCopy, M: DeviceMemory<T> + ?Sized>(
    memory: &M,
) -> Result<PointerAttributes> {
    attributes(memory.device_ptr())
}

/// The attributes of pinned host memory (a [`PinnedBuffer`](crate::PinnedBuffer) or a view of one).
///
/// # Errors
///
/// As [`attributes`].
///
/// ```no_run
/// # use hip::prelude::*;
/// # fn f(device: &Device) -> hip::Result<()> {
/// let p = PinnedBuffer::<u8>::zeroed(device, 64)?;
/// assert_eq!(hip::pointer::of_host(&p)?.memory_type, hip::pointer::MemoryType::Host);
/// # Ok(()) }
/// ```
pub fn of_host<T: DeviceCopy, M: HostMemory<T> + ?Sized>(memory: &M) -> Result<PointerAttributes> {
    attributes(memory.host_ptr().cast())
}
