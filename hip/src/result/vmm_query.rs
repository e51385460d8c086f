//! What the runtime knows of physical allocations: the one mapped at an address
//! (`hipMemRetainAllocationHandle`, one more reference to it) and the properties it was made with
//! (`hipMemGetAllocationPropertiesFromHandle`).
//!
//! On HIP's NVIDIA platform the properties come from `cuMemGetAllocationPropertiesFromHandle` (hip-sys's
//! `hipRsMemAllocationProperties`): HIP 5.7's mapping of the HIP call never writes its answer back.
//! Built against headers without the virtual memory calls (`cfg(hip_vmm)` unset) each answers
//! [`Error::NotSupported`](crate::Error::NotSupported) naming itself.

#[cfg(hip_vmm)]
use super::check;
#[cfg(not(hip_vmm))]
use super::vmm::missing;
use super::vmm::RawPhysical;
use crate::error::Result;
#[cfg(hip_vmm)]
use hip_sys as sys;

/// What `hipMemGetAllocationPropertiesFromHandle` reports, as integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawPhysicalProperties {
    /// `hipMemAllocationType` (1: pinned).
    pub allocation_type: u32,
    /// The device ordinal of the memory's location.
    pub ordinal: i32,
    /// The requested shareable handle types (`hipMemAllocationHandleType` bits; 1: a POSIX descriptor).
    pub handle_types: u64,
}

/// `hipMemRetainAllocationHandle`: the physical allocation mapped at address `addr`, with one more reference the
/// caller releases with [`super::vmm::release`]. An address HIP does not know as mapped is an error code
/// (it only looks the address up).
pub fn retain(addr: usize) -> Result<RawPhysical> {
    #[cfg(hip_vmm)]
    {
        // SAFETY: all-zero bytes are a valid (null) handle value, overwritten on success.
        let mut h: RawPhysical = unsafe { std::mem::zeroed() };
        // SAFETY: an out-pointer to a live local; HIP only looks `addr` up among its mappings.
        check("hipMemRetainAllocationHandle", unsafe {
            sys::hipMemRetainAllocationHandle(&mut h, addr as *mut std::ffi::c_void)
        })?;
        Ok(h)
    }
    #[cfg(not(hip_vmm))]
    {
        let _ = addr;
        Err(missing("hipMemRetainAllocationHandle"))
    }
}

/// `hipMemGetAllocationPropertiesFromHandle` of `handle`.
///
/// # Safety
/// `handle` is a live physical allocation's handle (AMD's runtime reads it as its object unchecked).
pub unsafe fn properties(handle: RawPhysical) -> Result<RawPhysicalProperties> {
    #[cfg(all(hip_vmm, hip_platform = "nvidia"))]
    {
        let (mut allocation_type, mut ordinal, mut handle_types) = (0, 0, 0);
        // SAFETY: the caller's contract for `handle`; three out-pointers to live locals.
        check("hipMemGetAllocationPropertiesFromHandle", unsafe {
            sys::hipRsMemAllocationProperties(
                handle as _,
                &mut allocation_type,
                &mut ordinal,
                &mut handle_types,
            )
        })?;
        Ok(RawPhysicalProperties {
            allocation_type: allocation_type as u32,
            ordinal,
            handle_types,
        })
    }
    #[cfg(all(hip_vmm, not(hip_platform = "nvidia")))]
    {
        // SAFETY: a plain C struct of integers and one pointer: all-zero bytes are valid.
        let mut prop: sys::hipMemAllocationProp = unsafe { std::mem::zeroed() };
        // SAFETY: the caller's contract for `handle`; an out-pointer to a live struct.
        check("hipMemGetAllocationPropertiesFromHandle", unsafe {
            sys::hipMemGetAllocationPropertiesFromHandle(&mut prop, handle)
        })?;
        // The requested handle type's field has two names from HIP 7 (a union; build script).
        #[cfg(hip_mem_prop_handle = "union")]
        // SAFETY: both members of the union are the same integer type, written by the runtime.
        let handle_types = unsafe { prop.__bindgen_anon_1.requestedHandleType };
        #[cfg(not(hip_mem_prop_handle = "union"))]
        let handle_types = prop.requestedHandleType;
        Ok(RawPhysicalProperties {
            allocation_type: prop.type_ as u32,
            ordinal: prop.location.id,
            handle_types: handle_types as u64,
        })
    }
    #[cfg(not(hip_vmm))]
    {
        let _ = handle;
        Err(missing("hipMemGetAllocationPropertiesFromHandle"))
    }
}
