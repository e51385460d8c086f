//! Physical memory shared between processes (POSIX systems): made exportable
//! ([`PhysicalMemory::new_shareable`]), exported as a file descriptor ([`PhysicalMemory::export_fd`]) and
//! imported in another process ([`PhysicalMemory::import`]), which maps it into an address range of its
//! own ([`AddressRange::map`](super::AddressRange::map)).
//!
//! The descriptor travels between processes the way descriptors do (a Unix socket's `SCM_RIGHTS`,
//! `pidfd_getfd`, or inheritance by a child process); the size goes with it, as the import cannot ask
//! it. Mapped memory is raw memory the memory model does not know, in either process: mapping it is
//! `unsafe`, and the processes order their uses themselves (interprocess events,
//! [`IpcEventHandle`](crate::ipc::IpcEventHandle)).

use super::mem_pool_share::exported_fd;
use super::virtual_mem::PhysicalMemory;
use crate::device::Device;
use crate::error::Result;
use crate::result;
use std::os::fd::{BorrowedFd, OwnedFd};

impl PhysicalMemory {
    /// At least `bytes` of pinned memory on `device`, rounded up to its minimum granularity, which other
    /// processes may import (`hipMemCreate` with `hipMemHandleTypePosixFileDescriptor`); otherwise as
    /// [`PhysicalMemory::new`].
    ///
    /// # Errors
    ///
    /// As [`PhysicalMemory::new`]; a platform without shareable physical memory answers what HIP
    /// returns for `hipMemCreate` (`hipErrorNotSupported` or `hipErrorInvalidValue`).
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// let memory = hip::memory::PhysicalMemory::new_shareable(device, 2 << 20)?;
    /// let fd = memory.export_fd()?; // send it, and memory.size(), to the other process
    /// # Ok(()) }
    /// ```
    pub fn new_shareable(device: &Device, bytes: usize) -> Result<PhysicalMemory> {
        let size = Self::granules("size of the shareable physical allocation", device, bytes)?;
        device.bind()?;
        let handle = result::vmm_share::create_shareable(device.ordinal() as i32, size)?;
        Ok(PhysicalMemory {
            handle,
            size,
            device: device.clone(),
        })
    }

    /// Export the memory as a POSIX file descriptor (`hipMemExportToShareableHandle`), which the caller
    /// owns (closed on drop). Only memory made with [`new_shareable`](Self::new_shareable) (or imported)
    /// can be.
    ///
    /// # Errors
    ///
    /// [`Error::Hip`](crate::Error::Hip) with what HIP returns for making the device current and for
    /// the export (`hipErrorInvalidValue` or `hipErrorNotSupported` for memory not made shareable);
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) if the runtime answers success with no
    /// descriptor.
    ///
    /// ```no_run
    /// # fn f(memory: &hip::memory::PhysicalMemory) -> hip::Result<()> {
    /// use std::os::fd::AsRawFd;
    /// assert!(memory.export_fd()?.as_raw_fd() >= 0);
    /// # Ok(()) }
    /// ```
    pub fn export_fd(&self) -> Result<OwnedFd> {
        self.device.bind()?;
        // SAFETY: `self.handle` is live while `self` is.
        let fd = unsafe { result::vmm_share::export_fd(self.handle) }?;
        // SAFETY: the runtime just opened it for the caller.
        unsafe { exported_fd("hipMemExportToShareableHandle", fd) }
    }

    /// Import physical memory another process exported ([`export_fd`](Self::export_fd)) on `device`
    /// (`hipMemImportFromShareableHandle`); `fd` stays the caller's. `bytes` is the exporter's
    /// [`size`](Self::size) (rounded up to `device`'s minimum granularity here): the import cannot ask
    /// it, and [`AddressRange::map`](super::AddressRange::map), whose contract this is, maps that many
    /// bytes. Released on drop (the exporter's memory stays while either side holds it).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for 0 bytes, what
    /// [`Device::allocation_granularity`] answers, and [`Error::Hip`](crate::Error::Hip) with what HIP
    /// returns for making the device current and for the import (`hipErrorInvalidValue` for a descriptor
    /// that is not exported physical memory).
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device, fd: std::os::fd::BorrowedFd<'_>, bytes: usize) -> hip::Result<()> {
    /// use hip::memory::{AddressRange, PhysicalMemory};
    /// let memory = PhysicalMemory::import(device, fd, bytes)?;
    /// let range = AddressRange::reserve(device, memory.size())?;
    /// // SAFETY: the processes order their uses of the memory; the mapping drops first.
    /// let mapping = unsafe { range.map(0, memory)? };
    /// # Ok(()) }
    /// ```
    pub fn import(device: &Device, fd: BorrowedFd<'_>, bytes: usize) -> Result<PhysicalMemory> {
        let size = Self::granules("size of the imported physical allocation", device, bytes)?;
        device.bind()?;
        let handle = result::vmm_share::import_fd(fd)?;
        Ok(PhysicalMemory {
            handle,
            size,
            device: device.clone(),
        })
    }
}
