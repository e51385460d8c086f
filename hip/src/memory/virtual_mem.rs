//! Virtual memory management: device address space reserved without memory behind it
//! ([`AddressRange`], `hipMemAddressReserve`), physical memory without an address ([`PhysicalMemory`],
//! `hipMemCreate`), the one mapped into the other ([`Mapping`], `hipMemMap`, with `hipMemSetAccess`), and
//! the granularity all three come in ([`Device::allocation_granularity`]).
//!
//! The safe way to use mapped memory is [`GrowableBuffer`](super::GrowableBuffer): a reserved range that
//! grows by mapping more physical memory at its end, tracked by the memory model like every buffer. A
//! [`Mapping`] made here by hand is raw memory the memory model does not know: making one is `unsafe`.
//!
//! Every call answers [`Error::NotSupported`] where the HIP headers this crate was built with lack it
//! (HIP's NVIDIA headers before 5.7), and where the device reports
//! `hipDeviceAttributeVirtualMemoryManagementSupported` = 0 (headers from 5.7 declare the attribute; with
//! 5.2's the runtime answers each call itself).

use crate::device::Device;
use crate::error::{Error, Result};
use crate::release::{now_or_later, RawHandle};
use crate::result;
use crate::result::vmm::RawPhysical;
use std::ffi::c_void;

/// Which granularity to ask for ([`Device::allocation_granularity`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granularity {
    /// The smallest size and alignment a physical allocation and a mapping may have
    /// (`hipMemAllocationGranularityMinimum`).
    Minimum,
    /// The size the runtime recommends for performance (`hipMemAllocationGranularityRecommended`).
    Recommended,
}

/// What a device may do with mapped memory (`hipMemAccessFlags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemAccess {
    /// No access (`hipMemAccessFlagsProtNone`).
    None,
    /// Read only (`hipMemAccessFlagsProtRead`).
    Read,
    /// Read and write (`hipMemAccessFlagsProtReadWrite`).
    ReadWrite,
}

impl MemAccess {
    pub(crate) fn from_raw(flags: u64) -> MemAccess {
        match flags as u32 {
            result::vmm::ACCESS_READ_WRITE => MemAccess::ReadWrite,
            result::vmm::ACCESS_READ => MemAccess::Read,
            _ => MemAccess::None,
        }
    }

    fn raw(self) -> u32 {
        match self {
            MemAccess::None => result::vmm::ACCESS_NONE,
            MemAccess::Read => result::vmm::ACCESS_READ,
            MemAccess::ReadWrite => result::vmm::ACCESS_READ_WRITE,
        }
    }
}

/// [`Error::NotSupported`] where the device says it has no virtual memory management; nothing where the
/// headers have no attribute to ask (the calls then answer for themselves).
pub(crate) fn check_supported(device: &Device) -> Result<()> {
    #[cfg(hip_vmm_attribute)]
    if device.attribute(hip_sys::hipDeviceAttributeVirtualMemoryManagementSupported)? == 0 {
        return Err(Error::NotSupported {
            what: "virtual memory management (hipMemAddressReserve, hipMemCreate, hipMemMap)",
            reason: "the device reports hipDeviceAttributeVirtualMemoryManagementSupported = 0",
        });
    }
    #[cfg(not(hip_vmm_attribute))]
    let _ = device;
    Ok(())
}

/// `value` rounded up to a multiple of `granularity`; [`Error::AllocationTooLarge`] on overflow.
pub(crate) fn round_up(value: usize, granularity: usize) -> Result<usize> {
    value
        .checked_next_multiple_of(granularity.max(1))
        .ok_or(Error::AllocationTooLarge {
            elements: value,
            elem_bytes: 1,
        })
}

impl Device {
    /// Whether the device supports virtual memory management
    /// (`hipDeviceAttributeVirtualMemoryManagementSupported`).
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] naming the attribute where the headers lack it (HIP 5.2; the calls exist
    /// there and answer for themselves), and what HIP returns for the attribute.
    ///
    /// ```no_run
    /// let device = hip::Device::get(0)?;
    /// if device.supports_virtual_memory()? {
    ///     let log = hip::memory::GrowableBuffer::<u8>::new(&device, 1 << 30)?;
    /// }
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn supports_virtual_memory(&self) -> Result<bool> {
        #[cfg(hip_vmm_attribute)]
        {
            Ok(self.attribute(hip_sys::hipDeviceAttributeVirtualMemoryManagementSupported)? != 0)
        }
        #[cfg(not(hip_vmm_attribute))]
        {
            Err(Error::NotSupported {
                what: "hipDeviceAttributeVirtualMemoryManagementSupported",
                reason:
                    "the HIP headers this crate was built with (5.2) declare no such attribute; \
                         HIP 5.7 added it",
            })
        }
    }

    /// The granularity of physical allocations and mappings of pinned memory on this device
    /// (`hipMemGetAllocationGranularity`), in bytes: sizes and offsets of [`PhysicalMemory`],
    /// [`AddressRange`] and [`Mapping`] are multiples of the minimum.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] where the headers lack the call or the device lacks virtual memory
    /// management, and what HIP returns for making the device current and for the query.
    ///
    /// ```no_run
    /// use hip::memory::Granularity;
    /// let device = hip::Device::get(0)?;
    /// let min = device.allocation_granularity(Granularity::Minimum)?;
    /// assert!(min.is_power_of_two());
    /// assert_eq!(device.allocation_granularity(Granularity::Recommended)? % min, 0);
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn allocation_granularity(&self, which: Granularity) -> Result<usize> {
        self.bind()?;
        check_supported(self)?;
        result::vmm::granularity(self.ordinal() as i32, which == Granularity::Recommended)
    }
}

/// Device address space with nothing behind it (`hipMemAddressReserve`), freed on drop
/// (`hipMemAddressFree`). Its size is a multiple of the device's minimum granularity.
///
/// ```no_run
/// let device = hip::Device::get(0)?;
/// let range = hip::memory::AddressRange::reserve(&device, 1 << 30)?; // 1 GiB of addresses, no memory
/// assert!(range.size() >= 1 << 30);
/// # Ok::<(), hip::Error>(())
/// ```
#[derive(Debug)]
pub struct AddressRange {
    ptr: *mut c_void,
    size: usize,
    device: Device,
}

// SAFETY: the address is never dereferenced by the host, only passed to HIP calls, which accept it from
// any thread.
unsafe impl Send for AddressRange {}
// SAFETY: as for Send; `&AddressRange` only reads the address and size.
unsafe impl Sync for AddressRange {}

impl AddressRange {
    /// Reserve at least `bytes` of address space for `device`, rounded up to its minimum granularity.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for 0 bytes, [`Error::AllocationTooLarge`] when the rounding overflows,
    /// [`Error::NotSupported`] as for [`Device::allocation_granularity`], and what HIP returns for
    /// `hipMemAddressReserve`.
    pub fn reserve(device: &Device, bytes: usize) -> Result<AddressRange> {
        if bytes == 0 {
            return Err(Error::InvalidArgument {
                what: "size of the address range",
                value: "0 bytes".into(),
                reason: "hipMemAddressReserve reserves at least one granule".into(),
            });
        }
        let g = device.allocation_granularity(Granularity::Minimum)?;
        Self::reserve_exact(device, round_up(bytes, g)?, g)
    }

    /// `size` bytes (a multiple of the granularity `g`, which the caller asked) aligned to `g`.
    pub(crate) fn reserve_exact(device: &Device, size: usize, g: usize) -> Result<AddressRange> {
        let ptr = result::vmm::address_reserve(size, g)?;
        Ok(AddressRange {
            ptr,
            size,
            device: device.clone(),
        })
    }

    /// The first address.
    pub fn as_ptr(&self) -> *mut c_void {
        self.ptr
    }

    /// The size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The device it was reserved for.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Map the whole of `memory` at `offset` bytes into the range (`hipMemMap`) and give its device read
    /// and write access (`hipMemSetAccess`); unmapped when the [`Mapping`] drops.
    ///
    /// # Errors
    ///
    /// [`Error::OutOfBounds`] when `[offset, offset + memory.size())` does not fit in the range, and what
    /// HIP returns for `hipMemMap` (a misaligned offset, a range already mapped) and `hipMemSetAccess`.
    ///
    /// # Safety
    ///
    /// The memory model does not know the mapped memory: the caller orders every use of it (the range
    /// and every other range mapping the same physical memory alias each other, in this process or in
    /// another that imported it), and drops the [`Mapping`] only once no queued work uses it. The
    /// `Mapping` must drop before `self` does. For memory from [`PhysicalMemory::import`], its size is
    /// the one `import` was given: at most the exporter's.
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// use hip::memory::{AddressRange, PhysicalMemory};
    /// let range = AddressRange::reserve(device, 4 << 20)?;
    /// let memory = PhysicalMemory::new(device, 2 << 20)?;
    /// // SAFETY: nothing else uses the range, and the mapping drops first.
    /// let mapping = unsafe { range.map(0, memory)? };
    /// # Ok(()) }
    /// ```
    pub unsafe fn map(&self, offset: usize, memory: PhysicalMemory) -> Result<Mapping> {
        let end = offset.checked_add(memory.size).filter(|&e| e <= self.size);
        let Some(_) = end else {
            return Err(Error::OutOfBounds {
                start: offset,
                end: offset.saturating_add(memory.size),
                len: self.size,
            });
        };
        let ptr = (self.ptr as *mut u8).wrapping_add(offset).cast::<c_void>();
        self.device.bind()?;
        // SAFETY: `[ptr, ptr + size)` lies in this live reservation (checked above); `memory` is live and
        // `size` bytes long. HIP refuses a misaligned offset or a range already mapped.
        unsafe { result::vmm::map(ptr, memory.size, memory.handle) }?;
        let mapping = Mapping {
            ptr,
            size: memory.size,
            device: self.device.clone(),
            _memory: memory,
        };
        mapping.set_access(&self.device, MemAccess::ReadWrite)?;
        Ok(mapping)
    }
}

impl Drop for AddressRange {
    fn drop(&mut self) {
        let (ptr, size) = (RawHandle(self.ptr), self.size);
        now_or_later(move || {
            // SAFETY: the whole range from hipMemAddressReserve, freed once; every Mapping in it dropped
            // first (the owners' contract: `map` is unsafe, GrowableBuffer unmaps before freeing).
            let _ = unsafe { result::vmm::address_free(ptr.get(), size) };
        });
    }
}

/// Physical device memory with no address (`hipMemCreate`, pinned on one device), released on drop
/// (`hipMemRelease`; the runtime keeps it while a range still maps it). Its size is a multiple of the
/// device's minimum granularity.
///
/// ```no_run
/// let device = hip::Device::get(0)?;
/// let memory = hip::memory::PhysicalMemory::new(&device, 1 << 20)?;
/// assert!(memory.size() >= 1 << 20);
/// # Ok::<(), hip::Error>(())
/// ```
#[derive(Debug)]
pub struct PhysicalMemory {
    pub(super) handle: RawPhysical,
    pub(super) size: usize,
    pub(super) device: Device,
}

// SAFETY: the handle is an opaque runtime object HIP accepts from any thread.
unsafe impl Send for PhysicalMemory {}
// SAFETY: as for Send; `&PhysicalMemory` only reads the handle and size.
unsafe impl Sync for PhysicalMemory {}

impl PhysicalMemory {
    /// At least `bytes` of pinned memory on `device`, rounded up to its minimum granularity.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for 0 bytes, [`Error::AllocationTooLarge`] when the rounding overflows,
    /// [`Error::NotSupported`] as for [`Device::allocation_granularity`], and what HIP returns for
    /// `hipMemCreate` (`hipErrorOutOfMemory`).
    pub fn new(device: &Device, bytes: usize) -> Result<PhysicalMemory> {
        let size = Self::granules("size of the physical allocation", device, bytes)?;
        Self::create_exact(device, size)
    }

    /// `bytes` rounded up to `device`'s minimum granularity; 0 refused, naming `what`.
    pub(super) fn granules(what: &'static str, device: &Device, bytes: usize) -> Result<usize> {
        if bytes == 0 {
            return Err(Error::InvalidArgument {
                what,
                value: "0 bytes".into(),
                reason: "physical memory holds at least one granule".into(),
            });
        }
        round_up(bytes, device.allocation_granularity(Granularity::Minimum)?)
    }

    /// `size` bytes, a multiple of the granularity (the caller asked it), on `device` (current).
    pub(crate) fn create_exact(device: &Device, size: usize) -> Result<PhysicalMemory> {
        let handle = result::vmm::create(device.ordinal() as i32, size)?;
        Ok(PhysicalMemory {
            handle,
            size,
            device: device.clone(),
        })
    }

    /// The size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The device the memory is on.
    pub fn device(&self) -> &Device {
        &self.device
    }
}

impl Drop for PhysicalMemory {
    fn drop(&mut self) {
        let handle = RawHandle(self.handle);
        now_or_later(move || {
            // SAFETY: a handle from hipMemCreate, released once; a range still mapping it keeps the memory
            // until unmapped (HIP's contract).
            let _ = unsafe { result::vmm::release(handle.get()) };
        });
    }
}

/// Physical memory mapped into an [`AddressRange`] (`hipMemMap`), unmapped on drop (`hipMemUnmap`), then
/// the physical memory released.
#[derive(Debug)]
pub struct Mapping {
    pub(super) ptr: *mut c_void,
    pub(super) size: usize,
    pub(super) device: Device,
    _memory: PhysicalMemory,
}

// SAFETY: as for AddressRange: the address is only passed to HIP calls.
unsafe impl Send for Mapping {}
// SAFETY: as for Send.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// The first mapped address.
    pub fn as_ptr(&self) -> *mut c_void {
        self.ptr
    }

    /// The mapped size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// What `device` may do with the mapped memory (`hipMemGetAccess`).
    ///
    /// # Errors
    ///
    /// What HIP returns for `hipMemGetAccess`.
    ///
    /// ```no_run
    /// # fn f(mapping: &hip::memory::Mapping, device: &hip::Device) -> hip::Result<()> {
    /// assert_eq!(mapping.access(device)?, hip::memory::MemAccess::ReadWrite);
    /// # Ok(()) }
    /// ```
    pub fn access(&self, device: &Device) -> Result<MemAccess> {
        self.device.bind()?;
        Ok(MemAccess::from_raw(result::vmm::get_access(
            self.ptr as usize,
            device.ordinal() as i32,
        )?))
    }

    /// Let `device` read and write the mapped memory (`hipMemSetAccess` with
    /// `hipMemAccessFlagsProtReadWrite`): access only grows here, so no queued work can lose it.
    ///
    /// # Errors
    ///
    /// What HIP returns for `hipMemSetAccess` (a device that cannot reach this one's memory).
    ///
    /// ```no_run
    /// # fn f(mapping: &hip::memory::Mapping, peer: &hip::Device) -> hip::Result<()> {
    /// mapping.grant_access(peer)?;
    /// # Ok(()) }
    /// ```
    pub fn grant_access(&self, device: &Device) -> Result<()> {
        self.set_access(device, MemAccess::ReadWrite)
    }

    /// Set what `device` may do with the mapped memory, `None` and `Read` included.
    ///
    /// # Errors
    ///
    /// What HIP returns for `hipMemSetAccess`.
    ///
    /// # Safety
    ///
    /// When the access shrinks, no queued work of `device` reads (for `None`) or writes the memory, and
    /// none is queued until the access grows back.
    ///
    /// ```no_run
    /// # fn f(mapping: &hip::memory::Mapping, peer: &hip::Device) -> hip::Result<()> {
    /// // SAFETY: the peer has no work queued on this memory.
    /// unsafe { mapping.set_access_unchecked(peer, hip::memory::MemAccess::Read)? };
    /// # Ok(()) }
    /// ```
    pub unsafe fn set_access_unchecked(&self, device: &Device, access: MemAccess) -> Result<()> {
        self.set_access(device, access)
    }

    fn set_access(&self, device: &Device, access: MemAccess) -> Result<()> {
        self.device.bind()?;
        // SAFETY: the whole mapping, live while `self` is; shrinking access is the callers' contract
        // (`set_access_unchecked`), growing it harms no queued work.
        unsafe {
            result::vmm::set_access(self.ptr, self.size, device.ordinal() as i32, access.raw())
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        let (ptr, size) = (RawHandle(self.ptr), self.size);
        now_or_later(move || {
            // SAFETY: exactly what one hipMemMap mapped, unmapped once; no queued work uses it (the
            // owners' contract: `AddressRange::map` is unsafe, GrowableBuffer waits for its users first).
            let _ = unsafe { result::vmm::unmap(ptr.get(), size) };
        });
        // `_memory` drops after this: released once unmapped.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_to_the_granularity_and_its_overflow() {
        assert_eq!(round_up(1, 65536).unwrap(), 65536);
        assert_eq!(round_up(65536, 65536).unwrap(), 65536);
        assert_eq!(round_up(65537, 65536).unwrap(), 131072);
        assert_eq!(round_up(0, 65536).unwrap(), 0);
        assert_eq!(
            round_up(7, 0).unwrap(),
            7,
            "a granularity of 0 rounds nothing"
        );
        assert!(matches!(
            round_up(usize::MAX - 1, 4096).unwrap_err(),
            Error::AllocationTooLarge { .. }
        ));
    }

    #[test]
    fn access_flags_round_trip() {
        for a in [MemAccess::None, MemAccess::Read, MemAccess::ReadWrite] {
            assert_eq!(MemAccess::from_raw(u64::from(a.raw())), a);
        }
    }
}
