//! The caller's workspace (`hipblasSetWorkspace`, hipBLAS 3.x / ROCm 7): device memory hipBLAS uses for
//! scratch space instead of its own. Older hipBLAS manages its own workspace only: there `set_workspace`
//! answers [`Error::NotSupported`].

use super::Handle;
use crate::error::{Error, Result};
use crate::event::same_device;
use crate::memory::{DeviceBuffer, DeviceMemory};

/// The alignment hipBLAS's backends ask of a workspace (cuBLAS refuses less than 256 bytes).
const ALIGNMENT: usize = 256;

impl Handle {
    /// Give hipBLAS `workspace` for the scratch memory of later calls (`hipblasSetWorkspace`), instead of
    /// the memory it manages itself; returns the workspace given before, if any. The handle owns the
    /// buffer while it uses it. hipBLAS 3.x (ROCm 7) only: with older hipBLAS ([`HEADER_VERSION`] below
    /// 3) this is [`Error::NotSupported`] and the buffer is dropped.
    ///
    /// [`HEADER_VERSION`]: super::HEADER_VERSION
    ///
    /// Every later call is ordered as a writer of the workspace, like its output: a call on another
    /// stream (after [`set_stream`](Self::set_stream)) waits for the calls before it, and the buffer
    /// returned here or by [`take_workspace`](Self::take_workspace) is ordered after the calls that used
    /// it (reading it back or freeing it waits for them). A workspace too small for a call is hipBLAS's
    /// to refuse ([`Error::Blas`]) or to work around, as the library documents.
    ///
    /// Errors: [`Error::DeviceMismatch`] for a buffer of another device, [`Error::InvalidArgument`] for an
    /// empty buffer or one not 256-byte aligned (a buffer of its own allocation always is).
    pub fn set_workspace(
        &mut self,
        workspace: DeviceBuffer<u8>,
    ) -> Result<Option<DeviceBuffer<u8>>> {
        same_device("blas workspace", &self.device, workspace.device())?;
        let ptr = workspace.device_ptr() as usize;
        if workspace.is_empty() || ptr % ALIGNMENT != 0 {
            return Err(Error::InvalidArgument {
                what: "blas workspace",
                value: format!("{} bytes at {ptr:#x}", workspace.len()),
                reason: format!(
                    "a workspace holds at least one byte and starts {ALIGNMENT}-byte aligned; \
                     take_workspace returns hipBLAS to its own"
                ),
            });
        }
        let previous = self.workspace.replace(workspace);
        if let Err(e) = self.apply_workspace() {
            // hipBLAS still has the previous workspace (or its own): keep the record true to it (the
            // refused buffer is dropped).
            self.workspace = previous;
            return Err(e);
        }
        Ok(previous)
    }

    /// Return hipBLAS to the workspace it manages itself, and hand back the caller's, if one was given
    /// (always `None` with hipBLAS older than 3.x, where none can be).
    pub fn take_workspace(&mut self) -> Result<Option<DeviceBuffer<u8>>> {
        if self.workspace.is_none() {
            return Ok(None);
        }
        let previous = self.workspace.take();
        if let Err(e) = self.apply_workspace() {
            self.workspace = previous;
            return Err(e);
        }
        Ok(previous)
    }

    /// Tell hipBLAS the workspace recorded in `self.workspace` (none: its own).
    #[cfg(hipblas_workspace)]
    pub(super) fn apply_workspace(&self) -> Result<()> {
        use super::{check, sys};
        let (ptr, bytes) = match &self.workspace {
            Some(w) => (w.device_ptr(), w.len()),
            None => (std::ptr::null_mut(), 0),
        };
        self.device.bind()?;
        // SAFETY: live handle; `ptr` is null with size 0 (hipBLAS's own workspace), or a live buffer of
        // `bytes` bytes on the handle's device (checked by set_workspace), owned by `self` until replaced,
        // and ordered by the memory model as written by every call that may use it.
        check("hipblasSetWorkspace", unsafe {
            sys::hipblasSetWorkspace(self.raw, ptr, bytes)
        })
    }

    /// hipBLAS older than 3.x has no `hipblasSetWorkspace`.
    #[cfg(not(hipblas_workspace))]
    pub(super) fn apply_workspace(&self) -> Result<()> {
        Err(Error::NotSupported {
            what: "hipblasSetWorkspace (Handle::set_workspace)",
            reason: "hipBLAS older than 3.x (ROCm 7) manages its own workspace only",
        })
    }
}
