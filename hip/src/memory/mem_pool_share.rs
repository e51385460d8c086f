//! Memory pools shared between processes (POSIX systems): a pool made exportable
//! ([`MemPool::new_shareable`]), exported as a file descriptor ([`MemPool::export_fd`]) and imported in
//! another process ([`ImportedMemPool::import`]); one of its buffers exported ([`MemPool::export_pointer`])
//! and opened there as a [`ForeignBuffer`] ([`ImportedMemPool::import_pointer`]).
//!
//! The file descriptor travels between processes the way descriptors do (a Unix socket's
//! `SCM_RIGHTS`, `pidfd_getfd`, or inheritance by a child process); the pointer's export data is 64
//! plain bytes to send any way. As for [`IpcExport`](super::IpcExport), the memory model sees one
//! process: the exporter keeps the [`PoolPointerExport`] guard until every importer is done, and orders
//! its writes before their reads with interprocess events.

use super::mem_pool::{pools_supported, Own};
use super::tracking::{Allocation, Keep, Release};
use super::{byte_size, DeviceBuffer, DeviceCopy, DeviceMemory, ForeignBuffer, MemPool};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::result;
use hip_sys as sys;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::Arc;

impl MemPool {
    /// A pool of one's own on `device` whose memory other processes may import
    /// (`hipMemPoolCreate` with `hipMemHandleTypePosixFileDescriptor`); otherwise as [`MemPool::new`].
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] where the device reports no memory pools, and [`Error::Hip`] with what HIP
    /// returns for making the device current, for the attribute and for `hipMemPoolCreate` (a platform
    /// without shareable pools answers `hipErrorNotSupported` or `hipErrorInvalidValue`).
    ///
    /// ```no_run
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// let pool = hip::MemPool::new_shareable(device)?;
    /// let fd = pool.export_fd()?; // send it to the other process
    /// # Ok(()) }
    /// ```
    pub fn new_shareable(device: &Device) -> Result<MemPool> {
        device.bind()?;
        if !pools_supported(device)? {
            return Err(Error::NotSupported {
                what: "hipMemPoolCreate",
                reason: "the device reports hipDeviceAttributeMemoryPoolsSupported = 0",
            });
        }
        let raw = result::pool_share::mem_pool_create_shareable(device.ordinal() as i32)?;
        Ok(MemPool {
            raw,
            device: device.clone(),
            own: Some(Arc::new(Own {
                raw,
                device: device.clone(),
            })),
        })
    }

    /// Export the pool as a POSIX file descriptor (`hipMemPoolExportToShareableHandle`), which the caller
    /// owns (closed on drop). Only a pool made with [`new_shareable`](Self::new_shareable) can be.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a device's default pool, and [`Error::Hip`] with what HIP returns for
    /// making the device current and for the export (`hipErrorInvalidValue` for a pool not made
    /// shareable).
    ///
    /// ```no_run
    /// # fn f(pool: &hip::MemPool) -> hip::Result<()> {
    /// use std::os::fd::AsRawFd;
    /// let fd = pool.export_fd()?;
    /// assert!(fd.as_raw_fd() >= 0);
    /// # Ok(()) }
    /// ```
    pub fn export_fd(&self) -> Result<OwnedFd> {
        if self.own.is_none() {
            return Err(Error::InvalidArgument {
                what: "memory pool to export",
                value: "a device's default pool".into(),
                reason: "only a pool made with MemPool::new_shareable can be exported".into(),
            });
        }
        self.device.bind()?;
        // SAFETY: `self.raw` is a live pool of one's own (`own` keeps it).
        let fd = unsafe { result::pool_share::export_to_fd(self.raw) }?;
        // SAFETY: the runtime just opened it for the caller.
        unsafe { exported_fd("hipMemPoolExportToShareableHandle", fd) }
    }

    /// Export `buffer`, allocated from this pool ([`MemPool::alloc`], [`MemPool::zeroed`]), to processes
    /// that imported the pool (`hipMemPoolExportPointer`): the returned guard holds the 64 bytes to send
    /// ([`PoolPointerExport::bytes`]) and keeps the memory from going back to the pool while it lives.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a buffer that is not stream-ordered (pool) memory, or that is empty;
    /// [`Error::DeviceMismatch`] for a buffer of another device; [`Error::Hip`] with what HIP returns for
    /// the export (`hipErrorInvalidValue` for memory of a pool that is not shareable).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(pool: &hip::MemPool, stream: &Stream) -> hip::Result<()> {
    /// let x = pool.zeroed::<f32>(stream, 1024)?;
    /// stream.synchronize()?;
    /// let export = pool.export_pointer(&x)?;
    /// let bytes = export.bytes().to_vec(); // for the other process
    /// # Ok(()) }
    /// ```
    pub fn export_pointer<T: DeviceCopy>(
        &self,
        buffer: &DeviceBuffer<T>,
    ) -> Result<PoolPointerExport> {
        crate::event::same_device("MemPool::export_pointer", &self.device, buffer.device())?;
        if !buffer.alloc.is_stream_ordered() {
            return Err(Error::InvalidArgument {
                what: "buffer to export from a memory pool",
                value: if buffer.len == 0 {
                    "an empty buffer".into()
                } else {
                    "memory that is not from a pool".into()
                },
                reason:
                    "only memory from MemPool::alloc or MemPool::zeroed of a shareable pool can be \
                         exported (hipMemPoolExportPointer)"
                        .into(),
            });
        }
        self.device.bind()?;
        // SAFETY: `buffer.ptr` is the start of a live stream-ordered allocation (checked), kept by the
        // borrow; HIP refuses memory of a pool that is not shareable.
        let data = unsafe { result::pool_share::export_pointer(buffer.ptr) }?;
        Ok(PoolPointerExport {
            data,
            _alloc: buffer.alloc.clone(),
        })
    }
}

/// An exported pool buffer's data, and a hold on its memory: the memory does not go back to the pool
/// while this guard lives, even if the [`DeviceBuffer`] is dropped first. Keep it until every importer
/// has dropped its [`ForeignBuffer`].
#[derive(Debug)]
pub struct PoolPointerExport {
    data: [u8; 64],
    _alloc: Arc<Allocation>,
}

impl PoolPointerExport {
    /// The bytes to send to the importing processes (`hipMemPoolPtrExportData`).
    pub fn bytes(&self) -> &[u8; 64] {
        &self.data
    }
}

/// A memory pool another process exported, imported in this one
/// (`hipMemPoolImportFromShareableHandle`), destroyed on drop once no buffer imported from it is left.
/// It allocates nothing: it opens the buffers the exporter sends ([`import_pointer`](Self::import_pointer)).
///
/// ```no_run
/// # fn f(device: &hip::Device, fd: std::os::fd::BorrowedFd<'_>, bytes: &[u8; 64]) -> hip::Result<()> {
/// use hip::prelude::*;
/// let pool = hip::memory::ImportedMemPool::import(device, fd)?;
/// let x = pool.import_pointer::<f32>(bytes, 1024)?;
/// let host = x.to_vec()?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ImportedMemPool {
    own: Arc<Own>,
}

impl ImportedMemPool {
    /// Import the pool another process exported as `fd` ([`MemPool::export_fd`] there), on `device`.
    /// The descriptor stays the caller's.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] where the device reports no memory pools, and [`Error::Hip`] with what HIP
    /// returns for making the device current and for the import (`hipErrorInvalidValue` for a descriptor
    /// that is no exported pool).
    pub fn import(device: &Device, fd: BorrowedFd<'_>) -> Result<ImportedMemPool> {
        device.bind()?;
        if !pools_supported(device)? {
            return Err(Error::NotSupported {
                what: "hipMemPoolImportFromShareableHandle",
                reason: "the device reports hipDeviceAttributeMemoryPoolsSupported = 0",
            });
        }
        let raw = result::pool_share::import_from_fd(fd.as_raw_fd())?;
        Ok(ImportedMemPool {
            own: Arc::new(Own {
                raw,
                device: device.clone(),
            }),
        })
    }

    /// The raw handle.
    pub fn raw(&self) -> sys::hipMemPool_t {
        self.own.raw
    }

    /// The device the pool was imported on.
    pub fn device(&self) -> &Device {
        &self.own.device
    }

    /// Open the buffer another process exported from the pool ([`MemPool::export_pointer`] there; `data`
    /// its [`bytes`](PoolPointerExport::bytes)) as `len` elements of `T` (`hipMemPoolImportPointer`). The
    /// allocation must hold `len` elements (its size is asked of HIP, `hipMemGetAddressRange`). Dropping
    /// the [`ForeignBuffer`] frees the import (`hipFreeAsync` on the device's null stream, after every
    /// stream of this process that used it) and keeps this pool until then.
    ///
    /// # Errors
    ///
    /// [`Error::AllocationTooLarge`] when the byte size overflows, [`Error::InvalidArgument`] when the
    /// allocation is shorter than `len` elements, and [`Error::Hip`] with what HIP returns for making the
    /// device current, `hipMemPoolImportPointer` (bytes that describe no allocation of the pool) and
    /// `hipMemGetAddressRange`.
    pub fn import_pointer<T: DeviceCopy>(
        &self,
        data: &[u8; 64],
        len: usize,
    ) -> Result<ForeignBuffer<T>> {
        let bytes = byte_size::<T>(len)?;
        let device = &self.own.device;
        device.bind()?;
        // SAFETY: `self.own.raw` is a live imported pool (kept by `self`).
        let ptr = unsafe { result::pool_share::import_pointer(self.own.raw, data) }?;
        let keep: Keep = self.own.clone();
        let alloc = Allocation::new(
            ptr,
            device,
            Release::FreeAsync(device.null_stream(), Some(keep)),
        );
        // From here on `alloc` frees the import (in null-stream order) if anything below fails.
        let room = result::ipc::mem_get_address_range(ptr)
            .map(|(base, size)| (base as usize + size).saturating_sub(ptr as usize))?;
        if room < bytes {
            return Err(Error::InvalidArgument {
                what: "length of the imported pool buffer",
                value: format!("{len} elements ({bytes} bytes)"),
                reason: format!("the exported allocation holds {room} bytes"),
            });
        }
        Ok(ForeignBuffer::from_parts(ptr, len, alloc))
    }
}

/// The descriptor `call` answered, owned; a negative one (success with no descriptor) is an error.
///
/// # Safety
/// A non-negative `fd` is a descriptor the runtime just opened for the caller, owned by nothing else.
pub(super) unsafe fn exported_fd(call: &'static str, fd: i32) -> Result<OwnedFd> {
    if fd < 0 {
        return Err(Error::InvalidArgument {
            what: "file descriptor the runtime's export returned",
            value: format!("{fd} from {call}"),
            reason: "the runtime answered success with no descriptor".into(),
        });
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
