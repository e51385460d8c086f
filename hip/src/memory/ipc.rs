//! Device memory shared between processes: exporting a [`DeviceBuffer`] ([`IpcExport`]) and opening
//! what another process exported ([`ForeignBuffer`]). See [`crate::ipc`] for the whole exchange.

use super::device::DeviceBuffer;
use super::tracking::{Allocation, Release};
use super::{DeviceCopy, DeviceMemoryMut, DevicePtr};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::ipc::IpcMemHandle;
use crate::result;
use std::marker::PhantomData;
use std::sync::Arc;

/// An exported buffer's handle, and a hold on its memory: the memory is not freed while this guard lives,
/// even if the [`DeviceBuffer`] is dropped first.
///
/// Other processes use the memory without this process knowing (the memory model sees one process):
/// keep the guard until every importer has closed its [`ForeignBuffer`] or is done with it (a message
/// back, an interprocess event the importer recorded and this process synchronized on). Freeing memory
/// another process still reads or writes makes its work read or write freed memory.
#[derive(Debug)]
pub struct IpcExport {
    handle: IpcMemHandle,
    _alloc: Arc<Allocation>,
}

impl IpcExport {
    /// The handle to send to the other processes.
    pub fn handle(&self) -> &IpcMemHandle {
        &self.handle
    }
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Export this buffer to other processes (`hipIpcGetMemHandle`): the returned guard holds the handle
    /// ([`IpcExport::handle`], plain bytes to send) and keeps the memory from being freed while it lives.
    ///
    /// Only `hipMalloc` memory can be exported ([`DeviceBuffer::zeroed`], [`from_slice`](Self::from_slice),
    /// [`uninit`](Self::uninit)); memory from a pool ([`alloc_async`](Self::alloc_async)) is refused.
    /// Ordering this process's writes before another's reads is for interprocess events
    /// ([`Event::interprocess`](crate::Event::interprocess)).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for pool memory or an empty buffer, and [`Error::Hip`] with what HIP
    /// returns for making the device current and for `hipIpcGetMemHandle`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// let device = Device::get(0)?;
    /// let x = DeviceBuffer::from_slice(&device, &[1.0f32, 2.0])?;
    /// let export = x.ipc_handle()?;
    /// let bytes = export.handle().as_bytes().to_vec(); // for the other process
    /// // ... keep `export` until the other process is done with the memory
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn ipc_handle(&self) -> Result<IpcExport> {
        if !self.alloc.is_exportable() {
            return Err(Error::InvalidArgument {
                what: "buffer to export to other processes",
                value: if self.len == 0 {
                    "an empty buffer".into()
                } else {
                    "stream-ordered (memory pool) memory".into()
                },
                reason:
                    "only hipMalloc memory can be exported (hipIpcGetMemHandle); copy it into a \
                         buffer from DeviceBuffer::zeroed first"
                        .into(),
            });
        }
        self.alloc.device().bind()?;
        // SAFETY: `self.ptr` is the start of a live hipMalloc allocation (`is_exportable`: released with
        // hipFree, not host-visible) of its device, made current above.
        let raw = unsafe { result::ipc::get_mem_handle(self.ptr) }?;
        Ok(IpcExport {
            handle: IpcMemHandle::new(raw),
            _alloc: self.alloc.clone(),
        })
    }
}

/// `len` values of `T` in device memory another process exported, opened in this one
/// (`hipIpcOpenMemHandle`): never freed here, closed on drop (`hipIpcCloseMemHandle`) once no stream of
/// this process still uses it.
///
/// It is device memory like a [`DeviceBuffer`] for this process: reads, writes, copies, fills, views and
/// kernel arguments go through [`DeviceMemory`](super::DeviceMemory) and [`DeviceMemoryMut`], ordered
/// by the memory model among this process's streams. The other process's uses are ordered with
/// interprocess events ([`ForeignEvent`](crate::ipc::ForeignEvent)).
///
/// ```no_run
/// # use hip::prelude::*;
/// # fn f(device: &Device, bytes: &[u8]) -> hip::Result<()> {
/// let handle = hip::ipc::IpcMemHandle::from_bytes(bytes)?;
/// let mut theirs = hip::memory::ForeignBuffer::<u32>::open(device, &handle, 256)?;
/// theirs.slice_mut(..16)?.zero()?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ForeignBuffer<T: DeviceCopy> {
    pub(super) ptr: DevicePtr,
    pub(super) len: usize,
    pub(super) alloc: Arc<Allocation>,
    _elem: PhantomData<T>,
}

// SAFETY: as for `DeviceBuffer`: `ptr` is a device address the host never dereferences, and the
// allocation (`Arc<Allocation>`) is Send + Sync; T is DeviceCopy (Send).
unsafe impl<T: DeviceCopy> Send for ForeignBuffer<T> {}
// SAFETY: as for `DeviceBuffer`: through `&ForeignBuffer` safe code only queues reads, and every use goes
// through the allocation's thread-safe tracking.
unsafe impl<T: DeviceCopy> Sync for ForeignBuffer<T> {}

impl<T: DeviceCopy> ForeignBuffer<T> {
    /// Open the memory another process exported as `len` elements of `T` on `device` (made current),
    /// with `hipIpcMemLazyEnablePeerAccess`. The allocation must hold `len` elements: its size is asked of
    /// HIP (`hipMemGetAddressRange`), and a shorter one is refused (and closed).
    ///
    /// # Errors
    ///
    /// [`Error::AllocationTooLarge`] when the byte size overflows, [`Error::InvalidArgument`] when the
    /// exported allocation is shorter than `len` elements, and [`Error::Hip`] with what HIP returns for
    /// making the device current, `hipIpcOpenMemHandle` (a handle of freed memory, of this very process,
    /// or bytes that are no handle) and `hipMemGetAddressRange`.
    pub fn open(device: &Device, handle: &IpcMemHandle, len: usize) -> Result<Self> {
        let bytes = super::byte_size::<T>(len)?;
        device.bind()?;
        let ptr = result::ipc::open_mem_handle(handle.raw())?;
        let close = |e: Error| {
            // SAFETY: `ptr` was just opened, is closed once here, and nothing used it.
            let _ = unsafe { result::ipc::close_mem_handle(ptr) };
            Err(e)
        };
        // The bytes from `ptr` to the end of the allocation holding it (a runtime that sub-allocates may
        // map more than the export, starting before it).
        let room = match result::ipc::mem_get_address_range(ptr) {
            Ok((base, size)) => (base as usize + size).saturating_sub(ptr as usize),
            Err(e) => return close(e),
        };
        if room < bytes {
            return close(Error::InvalidArgument {
                what: "length of the foreign buffer",
                value: format!("{len} elements ({bytes} bytes)"),
                reason: format!("the exported allocation holds {room} bytes"),
            });
        }
        Ok(ForeignBuffer {
            ptr,
            len,
            alloc: Allocation::new(ptr, device, Release::IpcClose),
            _elem: PhantomData,
        })
    }

    /// A foreign buffer over `len` elements at `ptr`, released as `alloc` says (a pool pointer imported
    /// from another process, `mem_pool_share`).
    // Used by the pool import, which is Unix-only (file descriptors).
    #[cfg_attr(not(unix), allow(dead_code))]
    pub(super) fn from_parts(ptr: DevicePtr, len: usize, alloc: Arc<Allocation>) -> Self {
        ForeignBuffer {
            ptr,
            len,
            alloc,
            _elem: PhantomData,
        }
    }

    /// Number of elements (also [`DeviceMemory::len`](super::DeviceMemory::len)).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

device_memory!(ForeignBuffer);

impl<T: DeviceCopy> DeviceMemoryMut<T> for ForeignBuffer<T> {}
