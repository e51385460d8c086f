//! What the runtime reports of physical memory: the properties it was made with
//! ([`PhysicalMemory::properties`], `hipMemGetAllocationPropertiesFromHandle`) and the allocation a
//! mapping maps ([`Mapping::retain_physical`], `hipMemRetainAllocationHandle`).

use super::virtual_mem::{Mapping, PhysicalMemory};
use crate::error::{Error, Result};
use crate::result;

/// `hipMemAllocationTypePinned`.
const PINNED: u32 = 1;
/// `hipMemHandleTypePosixFileDescriptor`.
const POSIX_FD: u64 = 1;

/// What the runtime reports of a physical allocation ([`PhysicalMemory::properties`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PhysicalProperties {
    /// The ordinal of the device the memory is on.
    pub ordinal: usize,
    /// Pinned device memory (`hipMemAllocationTypePinned`): every allocation this crate makes is.
    pub pinned: bool,
    /// Exportable as a POSIX file descriptor ([`PhysicalMemory::new_shareable`], or imported from one).
    pub exportable_as_fd: bool,
}

impl PhysicalMemory {
    /// What the runtime reports of this memory (`hipMemGetAllocationPropertiesFromHandle`): its device,
    /// its type, and whether it may be exported.
    ///
    /// # Errors
    ///
    /// What HIP returns for `hipMemGetAllocationPropertiesFromHandle`; [`Error::NotSupported`] naming it
    /// where the headers lack the virtual memory calls; [`Error::InvalidArgument`] for a device location
    /// that is no ordinal.
    ///
    /// ```no_run
    /// let device = hip::Device::get(0)?;
    /// let memory = hip::memory::PhysicalMemory::new(&device, 1 << 20)?;
    /// let props = memory.properties()?;
    /// assert_eq!(props.ordinal, device.ordinal());
    /// assert!(props.pinned && !props.exportable_as_fd);
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn properties(&self) -> Result<PhysicalProperties> {
        self.device.bind()?;
        // SAFETY: `self.handle` is live while `self` is.
        let raw = unsafe { result::vmm_query::properties(self.handle) }?;
        let ordinal = usize::try_from(raw.ordinal).map_err(|_| Error::InvalidArgument {
            what: "device of the memory hipMemGetAllocationPropertiesFromHandle reported",
            value: raw.ordinal.to_string(),
            reason: "a device ordinal is not negative".into(),
        })?;
        Ok(PhysicalProperties {
            ordinal,
            pinned: raw.allocation_type == PINNED,
            exportable_as_fd: raw.handle_types & POSIX_FD != 0,
        })
    }
}

impl Mapping {
    /// The physical memory this mapping maps, as one more reference to it
    /// (`hipMemRetainAllocationHandle`): it stays after the mapping and its own [`PhysicalMemory`] are
    /// gone, until this one drops too. Mapping it again ([`AddressRange::map`](super::AddressRange::map))
    /// aliases this mapping: that call's contract covers it.
    ///
    /// # Errors
    ///
    /// What HIP returns for `hipMemRetainAllocationHandle`; [`Error::NotSupported`] naming it where the
    /// headers lack the virtual memory calls.
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// use hip::memory::{AddressRange, PhysicalMemory};
    /// let range = AddressRange::reserve(device, 2 << 20)?;
    /// // SAFETY: nothing else uses the range, and the mapping drops first.
    /// let mapping = unsafe { range.map(0, PhysicalMemory::new(device, 2 << 20)?)? };
    /// let memory = mapping.retain_physical()?;
    /// assert_eq!(memory.size(), mapping.size());
    /// # Ok(()) }
    /// ```
    pub fn retain_physical(&self) -> Result<PhysicalMemory> {
        self.device.bind()?;
        let handle = result::vmm_query::retain(self.ptr as usize)?;
        Ok(PhysicalMemory {
            handle,
            size: self.size,
            device: self.device.clone(),
        })
    }
}
