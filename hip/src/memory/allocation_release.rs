//! How an allocation's memory goes back ([`Release`]) and the drop that does it, once no stream still uses
//! it.

use super::{Allocation, Keep};
use crate::error::Result;
use crate::queue::OPEN;
use crate::result;
use crate::stream::StreamHandle;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// How an allocation's memory goes back when the last owner drops it.
pub(crate) enum Release {
    /// Nothing to free (no bytes were allocated).
    Nothing,
    /// `hipFree`.
    Free,
    /// `hipFreeAsync` on this stream, after it waited for every other stream still using the memory; the
    /// second field (the pool of one's own the memory came from) is kept until the free is queued.
    FreeAsync(Arc<StreamHandle>, Option<Keep>),
    /// `hipHostFree` (pinned host memory).
    HostFree,
    /// `hipIpcCloseMemHandle`: memory another process exported, opened here (`ForeignBuffer`); never
    /// freed by this process, unmapped once no stream still uses it.
    IpcClose,
    /// Virtual memory ([`GrowableBuffer`](crate::memory::GrowableBuffer)): once no stream still uses the
    /// range, this is dropped, and the last clone's drop unmaps the range, releases its physical memory
    /// and frees the reservation. If waiting fails it is leaked instead (never unmapped under work).
    Unmap(Keep),
    /// `hipFreeArray`: an array (`hip::texture::Array`), whose `ptr` is the `hipArray_t` handle, not an
    /// address a kernel or a copy may take.
    FreeArray,
    /// `hipFreeMipmappedArray` (`hip::texture::MipmappedArray`, `ptr` its handle): its levels are arrays
    /// it owns, whose uses are recorded here.
    FreeMipmappedArray,
    /// `hipHostUnregister` of the user's own memory (`PinnedBuffer::register`; not called where
    /// `registered` is false: no bytes), then the keep (which owns that memory) is dropped. If waiting
    /// or unregistering fails the keep is leaked instead: the memory is never freed while registered or
    /// under work.
    Unregister {
        /// What owns the memory.
        keep: Keep,
        /// Whether `hipHostRegister` registered it.
        registered: bool,
    },
}

impl Allocation {
    /// For `PinnedBuffer::into_vec`: a `Release::Unregister` allocation's keep, once every stream still
    /// using the memory is done and the memory is unregistered; any other allocation back as it is. On
    /// an error the allocation is dropped as usual (which waits and unregisters again, or leaks).
    pub(crate) fn take_registration(mut self) -> Result<std::result::Result<Keep, Self>> {
        let Release::Unregister { registered, .. } = self.release else {
            return Ok(Err(self));
        };
        self.wait_for_all_users(None)?;
        if registered {
            self.device.bind()?;
            // SAFETY: memory registered by PinnedBuffer::register (the only `Release::Unregister`),
            // unregistered once (`release` is `Nothing` below); the host waited for every stream recorded
            // as a user and this was the last owner, so nothing uses it.
            unsafe { result::memory::host_unregister(self.ptr) }?;
        }
        match std::mem::replace(&mut self.release, Release::Nothing) {
            Release::Unregister { keep, .. } => Ok(Ok(keep)),
            other => {
                self.release = other;
                Ok(Err(self))
            }
        }
    }
}

impl Drop for Allocation {
    /// Free the memory once no stream can still use it. If waiting fails (a broken device), the memory is
    /// leaked: never freed under work that may still run.
    fn drop(&mut self) {
        if crate::host_fn::in_host_fn() && !matches!(self.release, Release::Nothing) {
            // Freeing waits for the streams still using the memory, possibly the one running this host
            // function (behind it): a thread that may wait frees it instead.
            let users = std::mem::take(&mut *self.settled());
            let moved = Allocation {
                ptr: self.ptr,
                device: self.device.clone(),
                sole: AtomicU64::new(0),
                reader: AtomicU64::new(0),
                untracked: AtomicBool::new(self.untracked.load(Ordering::Relaxed)),
                first_stream: AtomicU64::new(0),
                shared: AtomicBool::new(true),
                group_calls: AtomicUsize::new(0),
                users: Mutex::new(users),
                release: std::mem::replace(&mut self.release, Release::Nothing),
                host_visible: self.host_visible,
                lease: OnceLock::new(),
            };
            crate::host_fn::defer(Box::new(move || drop(moved)));
            return;
        }
        match std::mem::replace(&mut self.release, Release::Nothing) {
            Release::Nothing => {}
            Release::Free => {
                if self.wait_for_all_users(None).is_ok() && self.device.bind().is_ok() {
                    // SAFETY: memory from hipMalloc or hipMallocManaged (the only allocations made with
                    // `Release::Free`), freed once (`release` is `Nothing` from now on). The host waited for
                    // every stream recorded as a user, and the last owner is gone, so no new use can be
                    // queued; uses made while untracked are the caller's to have ordered
                    // (`set_untracked`'s contract), and hipFree waits for the device's work as well.
                    let _ = unsafe { result::free(self.ptr) };
                }
            }
            Release::HostFree => {
                if self.wait_for_all_users(None).is_ok() && self.device.bind().is_ok() {
                    // SAFETY: memory from hipHostMalloc (`PinnedBuffer`, the only `Release::HostFree`), freed
                    // once; the host waited for every stream recorded as a user and the last owner (with
                    // every host slice borrowed from it) is gone.
                    let _ = unsafe { result::host_free(self.ptr) };
                }
            }
            Release::IpcClose => {
                if self.wait_for_all_users(None).is_ok() && self.device.bind().is_ok() {
                    // SAFETY: memory from hipIpcOpenMemHandle (`ForeignBuffer`, the only
                    // `Release::IpcClose`), closed once; the host waited for every stream recorded as a
                    // user and the last owner is gone, so no queued work of this process uses it.
                    let _ = unsafe { result::ipc::close_mem_handle(self.ptr) };
                }
            }
            Release::Unmap(mapped) => {
                if self.wait_for_all_users(None).is_ok() {
                    // The host waited for every stream recorded as a user and the last owner is gone: the
                    // keep's own drop (the last clone's) may unmap and free.
                    drop(mapped);
                } else {
                    std::mem::forget(mapped);
                }
            }
            Release::FreeArray => {
                if self.wait_for_all_users(None).is_ok() && self.device.bind().is_ok() {
                    // SAFETY: an array from hipMallocArray or hipMalloc3DArray (`texture::Array`, the only
                    // `Release::FreeArray`), freed once; the host waited for every stream recorded as a
                    // user (copies, and kernels given a texture or surface object of it), and the last owner
                    // is gone: the array and every texture or surface object over it (each holds this
                    // allocation, and destroys itself first).
                    let _ = unsafe { result::texture::free_array(self.ptr.cast()) };
                }
            }
            Release::FreeMipmappedArray => {
                if self.wait_for_all_users(None).is_ok() && self.device.bind().is_ok() {
                    // SAFETY: as for `FreeArray`: a mipmapped array from hipMallocMipmappedArray
                    // (`texture::MipmappedArray`, the only one), freed once after every recorded user of
                    // it or of one of its levels (each level's `Array` holds this allocation).
                    let _ = unsafe { result::texture::free_mipmapped_array(self.ptr.cast()) };
                }
            }
            Release::Unregister { keep, registered } => {
                let done = self.wait_for_all_users(None).is_ok()
                    && (!registered
                        || self.device.bind().is_ok()
                            // SAFETY: memory registered by PinnedBuffer::register (the only
                            // `Release::Unregister`), unregistered once; the host waited for every
                            // stream recorded as a user and the last owner is gone.
                            && unsafe { result::memory::host_unregister(self.ptr) }.is_ok());
                if done {
                    drop(keep);
                } else {
                    std::mem::forget(keep);
                }
            }
            Release::FreeAsync(stream, _pool) => {
                // In stream order where possible; a capturing stream would record the free into its
                // graph, so then (and if anything fails) the host waits and frees.
                let op = stream.begin_op();
                if !op.is_capturing()
                    && self.wait_for_all_users(Some(&stream)).is_ok()
                    && stream.device.bind().is_ok()
                    // SAFETY: memory from hipMallocAsync on `stream` (the only `Release::FreeAsync`), freed
                    // once; `stream` (live: held by `release`, its device current) now waits for every
                    // other stream recorded as a user and runs its own earlier work first, and with the last
                    // owner gone nothing can be queued after the free. It was not capturing (checked under
                    // `op`, held through the call), so the free is not recorded into a graph. Uses made
                    // while untracked are the caller's to have ordered before it (`set_untracked`).
                    && unsafe { result::pool::free_async(self.ptr, stream.raw) }.is_ok()
                {
                    return;
                }
                drop(op);
                let idle = self
                    .wait_for_all_users(None)
                    .and_then(|()| stream.queue.host_wait_for(OPEN));
                let null = &stream.device.null_stream();
                let op = null.begin_op();
                if idle.is_ok() && !op.is_capturing() && stream.device.bind().is_ok() {
                    // SAFETY: the host waited for every user and for `stream` itself, so no queued work uses
                    // the memory; it is freed once, in the order of the device's null stream (never captured
                    // by this crate), as pool memory must be (hipFree would leave HIP 5.2.3's pool a dangling
                    // entry). If this fails too the memory is leaked, never freed under work.
                    let _ = unsafe { result::pool::free_async(self.ptr, null.raw) };
                }
            }
        }
    }
}
