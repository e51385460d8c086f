//! Virtual memory management: address ranges (`hipMemAddressReserve`), physical allocations
//! (`hipMemCreate`), mapping one into the other (`hipMemMap`) and access per device (`hipMemSetAccess`).
//!
//! AMD's headers declare these calls from 5.2; HIP's NVIDIA headers only from 5.7. Built against headers
//! without them (`cfg(hip_vmm)` unset, see the crate's build script) every call here answers
//! [`Error::NotSupported`](crate::Error::NotSupported) naming itself.

#[cfg(hip_vmm)]
use super::check;
#[cfg(not(hip_vmm))]
use crate::error::Error;
use crate::error::Result;
#[cfg(hip_vmm)]
use hip_sys as sys;
use std::ffi::c_void;

/// A physical allocation's handle (`hipMemGenericAllocationHandle_t`).
#[cfg(hip_vmm)]
pub type RawPhysical = sys::hipMemGenericAllocationHandle_t;
/// A physical allocation's handle; the headers declare none, so nothing ever makes one.
#[cfg(not(hip_vmm))]
pub type RawPhysical = *mut c_void;

/// `hipMemAccessFlagsProtReadWrite`.
pub const ACCESS_READ_WRITE: u32 = 3;
/// `hipMemAccessFlagsProtRead`.
pub const ACCESS_READ: u32 = 1;
/// `hipMemAccessFlagsProtNone`.
pub const ACCESS_NONE: u32 = 0;

#[cfg(not(hip_vmm))]
pub(super) fn missing(call: &'static str) -> Error {
    Error::NotSupported {
        what: call,
        reason:
            "the HIP headers this crate was built with declare no virtual memory management calls \
                 (HIP's NVIDIA headers before 5.7)",
    }
}

/// `ptr` as the runtime's device pointer type: void* on AMD, an integer (CUdeviceptr) on NVIDIA.
#[cfg(hip_vmm)]
fn dptr(ptr: *mut c_void) -> sys::hipDeviceptr_t {
    ptr as usize as sys::hipDeviceptr_t
}

/// Pinned device memory on device `ordinal`, no shareable handle.
#[cfg(hip_vmm)]
pub(super) fn device_prop(ordinal: i32) -> sys::hipMemAllocationProp {
    // SAFETY: a plain C struct of integers and one pointer, for which all-zero bytes are valid (a null
    // pointer, zero values).
    let mut prop: sys::hipMemAllocationProp = unsafe { std::mem::zeroed() };
    prop.type_ = 1 as _; // hipMemAllocationTypePinned
    prop.location = sys::hipMemLocation {
        type_: 1 as _, // hipMemLocationTypeDevice
        id: ordinal,
    };
    prop
}

/// `hipMemGetAllocationGranularity` for pinned memory on device `ordinal`: the minimum (`recommended`
/// false) or recommended granularity, in bytes.
pub fn granularity(ordinal: i32, recommended: bool) -> Result<usize> {
    #[cfg(hip_vmm)]
    {
        let prop = device_prop(ordinal);
        let mut g = 0usize;
        let option = if recommended {
            sys::hipMemAllocationGranularityRecommended
        } else {
            sys::hipMemAllocationGranularityMinimum
        };
        // SAFETY: an out-pointer to a live local and a live, fully initialised properties struct HIP only
        // reads; an ordinal out of range is an error code.
        check("hipMemGetAllocationGranularity", unsafe {
            sys::hipMemGetAllocationGranularity(&mut g, &prop, option)
        })?;
        Ok(g)
    }
    #[cfg(not(hip_vmm))]
    {
        let _ = (ordinal, recommended);
        Err(missing("hipMemGetAllocationGranularity"))
    }
}

/// `hipMemAddressReserve`: `size` bytes of device address space, aligned to `alignment` (0: the
/// runtime's choice), mapped to nothing. Free it with [`address_free`].
pub fn address_reserve(size: usize, alignment: usize) -> Result<*mut c_void> {
    #[cfg(hip_vmm)]
    {
        // hipDeviceptr_t is void* on AMD and an integer (CUdeviceptr) on NVIDIA; both hold one address.
        let mut p = 0usize as sys::hipDeviceptr_t;
        // SAFETY: an out-pointer to a live local; no fixed address is asked for (null) and the flags are
        // 0, as the header requires.
        check("hipMemAddressReserve", unsafe {
            sys::hipMemAddressReserve(&mut p, size, alignment, 0usize as sys::hipDeviceptr_t, 0)
        })?;
        Ok(p as usize as *mut c_void)
    }
    #[cfg(not(hip_vmm))]
    {
        let _ = (size, alignment);
        Err(missing("hipMemAddressReserve"))
    }
}

/// `hipMemAddressFree`.
///
/// # Safety
/// `(ptr, size)` is a whole range from [`address_reserve`], freed once, with nothing mapped in it.
pub unsafe fn address_free(ptr: *mut c_void, size: usize) -> Result<()> {
    #[cfg(hip_vmm)]
    {
        // SAFETY: the caller's contract (`# Safety`).
        check("hipMemAddressFree", unsafe {
            sys::hipMemAddressFree(dptr(ptr), size)
        })
    }
    #[cfg(not(hip_vmm))]
    {
        let _ = (ptr, size);
        Err(missing("hipMemAddressFree"))
    }
}

/// `hipMemCreate`: `size` bytes (a multiple of the granularity) of pinned memory on device `ordinal`.
/// Release it with [`release`].
pub fn create(ordinal: i32, size: usize) -> Result<RawPhysical> {
    #[cfg(hip_vmm)]
    {
        create_with(&device_prop(ordinal), size)
    }
    #[cfg(not(hip_vmm))]
    {
        let _ = (ordinal, size);
        Err(missing("hipMemCreate"))
    }
}

/// `hipMemCreate` of `size` bytes with the properties `prop` (vmm_share.rs asks for a shareable handle).
#[cfg(hip_vmm)]
pub(super) fn create_with(prop: &sys::hipMemAllocationProp, size: usize) -> Result<RawPhysical> {
    // SAFETY: all-zero bytes are a valid (null) handle value, overwritten on success.
    let mut h: RawPhysical = unsafe { std::mem::zeroed() };
    // SAFETY: an out-pointer to a live local and a live properties struct HIP only reads; flags 0.
    check("hipMemCreate", unsafe {
        sys::hipMemCreate(&mut h, size, prop, 0)
    })?;
    Ok(h)
}

/// `hipMemRelease`: the physical memory goes back once no range maps it any more.
///
/// # Safety
/// `handle` came from [`create`] and is released once.
pub unsafe fn release(handle: RawPhysical) -> Result<()> {
    #[cfg(hip_vmm)]
    {
        // SAFETY: the caller's contract (`# Safety`).
        check("hipMemRelease", unsafe { sys::hipMemRelease(handle) })
    }
    #[cfg(not(hip_vmm))]
    {
        let _ = handle;
        Err(missing("hipMemRelease"))
    }
}

/// `hipMemMap`: map the whole of `handle` (`size` bytes) at `ptr`.
///
/// # Safety
/// `[ptr, ptr + size)` lies in a live reservation, is granularity-aligned and maps nothing yet; `handle`
/// is live and `size` bytes long.
pub unsafe fn map(ptr: *mut c_void, size: usize, handle: RawPhysical) -> Result<()> {
    #[cfg(hip_vmm)]
    {
        // SAFETY: the caller's contract (`# Safety`); offset and flags 0, as the header requires.
        check("hipMemMap", unsafe {
            sys::hipMemMap(dptr(ptr), size, 0, handle, 0)
        })
    }
    #[cfg(not(hip_vmm))]
    {
        let _ = (ptr, size, handle);
        Err(missing("hipMemMap"))
    }
}

/// `hipMemUnmap`.
///
/// # Safety
/// `[ptr, ptr + size)` is exactly what one or more [`map`] calls mapped, and no queued work uses it.
pub unsafe fn unmap(ptr: *mut c_void, size: usize) -> Result<()> {
    #[cfg(hip_vmm)]
    {
        // SAFETY: the caller's contract (`# Safety`).
        check("hipMemUnmap", unsafe { sys::hipMemUnmap(dptr(ptr), size) })
    }
    #[cfg(not(hip_vmm))]
    {
        let _ = (ptr, size);
        Err(missing("hipMemUnmap"))
    }
}

/// `hipMemSetAccess` for device `ordinal`: `flags` is [`ACCESS_NONE`], [`ACCESS_READ`] or
/// [`ACCESS_READ_WRITE`].
///
/// # Safety
/// `[ptr, ptr + size)` is mapped; when the access shrinks, no queued work of that device uses it.
pub unsafe fn set_access(ptr: *mut c_void, size: usize, ordinal: i32, flags: u32) -> Result<()> {
    #[cfg(hip_vmm)]
    {
        let desc = sys::hipMemAccessDesc {
            location: sys::hipMemLocation {
                type_: 1 as _,
                id: ordinal,
            },
            flags: flags as _,
        };
        // SAFETY: the caller's contract (`# Safety`); one live descriptor HIP only reads.
        check("hipMemSetAccess", unsafe {
            sys::hipMemSetAccess(dptr(ptr), size, &desc, 1)
        })
    }
    #[cfg(not(hip_vmm))]
    {
        let _ = (ptr, size, ordinal, flags);
        Err(missing("hipMemSetAccess"))
    }
}

/// `hipMemGetAccess`: the access device `ordinal` has to the mapped address `addr`.
pub fn get_access(addr: usize, ordinal: i32) -> Result<u64> {
    #[cfg(hip_vmm)]
    {
        let location = sys::hipMemLocation {
            type_: 1 as _,
            id: ordinal,
        };
        let mut flags: u64 = 0;
        // SAFETY: an out-pointer to a live local and a live location HIP only reads; an address HIP does
        // not know is an error code (HIP only looks the address up).
        check("hipMemGetAccess", unsafe {
            sys::hipMemGetAccess(&mut flags, &location, addr as sys::hipDeviceptr_t)
        })?;
        Ok(flags)
    }
    #[cfg(not(hip_vmm))]
    {
        let _ = (addr, ordinal);
        Err(missing("hipMemGetAccess"))
    }
}
