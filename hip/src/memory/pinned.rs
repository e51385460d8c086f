//! Pinned (page-locked) host memory, the only host memory asynchronous copies accept.

use super::{byte_size, check_len, DeviceCopy, DeviceMemory, DeviceMemoryMut};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::event::{same_device, Event};
use crate::result;
use crate::stream::Stream;
use hip_sys as sys;
use std::sync::Mutex;

/// `len` values of `T` in pinned host memory (`hipHostMalloc`), freed on drop.
///
/// Every asynchronous copy that uses the buffer records an event on its stream; the host sees the contents
/// ([`as_slice`](Self::as_slice), [`as_mut_slice`](Self::as_mut_slice)) and the memory is freed only after
/// those events complete. This is what makes the asynchronous copies safe.
///
/// Streams are told apart by [`Stream::id`], never by handle address (HIP gives a new stream the address
/// of a destroyed one), and the tracking is in place before a copy is queued: if the event cannot be
/// recorded after queueing, the stream is synchronised instead, and if even that fails the buffer refuses
/// host access ([`Error::UntrackedCopy`]) and is leaked rather than freed under the copy.
#[derive(Debug)]
pub struct PinnedBuffer<T: DeviceCopy> {
    ptr: *mut T,
    len: usize,
    device: Device,
    pending: Mutex<Tracking>,
}

#[derive(Debug, Default)]
struct Tracking {
    /// One event per stream (by id) with a copy that may still use the memory, re-recorded per copy.
    events: Vec<(u64, Event)>,
    /// A copy may be queued that no event covers: set before queueing, cleared once the event is recorded
    /// (or the stream synchronised). Left set only when both failed.
    untracked: bool,
}

// SAFETY: the buffer owns its memory; host access goes through &self / &mut self after pending copies
// completed, and `pending` is behind a Mutex.
unsafe impl<T: DeviceCopy> Send for PinnedBuffer<T> {}
unsafe impl<T: DeviceCopy> Sync for PinnedBuffer<T> {}

impl<T: DeviceCopy> PinnedBuffer<T> {
    /// `len` zeroed elements.
    pub fn zeroed(device: &Device, len: usize) -> Result<Self> {
        let bytes = byte_size::<T>(len)?;
        let ptr = if bytes == 0 {
            std::ptr::NonNull::<T>::dangling().as_ptr()
        } else {
            device.bind()?;
            let p = result::host_malloc(bytes, sys::hipHostMallocDefault)?.cast::<T>();
            // SAFETY: fresh allocation of `bytes`; zero bits are a valid T (DeviceCopy).
            unsafe { p.write_bytes(0, len) };
            p
        };
        Ok(PinnedBuffer {
            ptr,
            len,
            device: device.clone(),
            pending: Mutex::new(Tracking::default()),
        })
    }

    /// A new pinned buffer holding a copy of `src`.
    pub fn from_slice(device: &Device, src: &[T]) -> Result<Self> {
        let mut b = Self::zeroed(device, src.len())?;
        b.as_mut_slice()?.copy_from_slice(src);
        Ok(b)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The contents, once every asynchronous copy using the buffer has completed.
    pub fn as_slice(&self) -> Result<&[T]> {
        self.wait()?;
        Ok(unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
    }

    /// The contents for writing, once every asynchronous copy using the buffer has completed.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.wait()?;
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }

    /// Block until every asynchronous copy using the buffer has completed.
    pub fn wait(&self) -> Result<()> {
        let pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if pending.untracked {
            return Err(Error::UntrackedCopy);
        }
        for (_, event) in pending.events.iter() {
            event.synchronize()?;
        }
        Ok(())
    }

    /// Queue a copy using this buffer on `stream` (`queue` does it) with its completion tracked: the
    /// buffer is marked untracked before `queue` runs, and only an event recorded after it (or a
    /// synchronised stream) clears the mark.
    fn queue_tracked(
        &self,
        what: &'static str,
        stream: &Stream,
        queue: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        same_device(what, stream.device(), &self.device)?;
        stream.device().bind()?;
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if pending.untracked {
            return Err(Error::UntrackedCopy);
        }
        // Forget finished copies of other streams, so a buffer used by many short-lived streams stays small.
        let id = stream.id();
        pending
            .events
            .retain(|(s, e)| *s == id || !matches!(e.query(), Ok(true)));
        let at = match pending.events.iter().position(|(s, _)| *s == id) {
            Some(at) => at,
            None => {
                pending.events.push((id, Event::new(&self.device)?));
                pending.events.len() - 1
            }
        };
        pending.untracked = true;
        let queued = queue();
        let recorded = match &queued {
            Ok(()) => pending.events[at].1.record(stream),
            Err(_) => Ok(()),
        };
        if queued.is_err() || recorded.is_err() {
            // Whatever may have been queued is covered once the stream is idle.
            pending.untracked = stream.synchronize().is_err();
        } else {
            pending.untracked = false;
        }
        queued.and(recorded)
    }
}

impl<T: DeviceCopy> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        if self.len == 0 || std::mem::size_of::<T>() == 0 {
            return;
        }
        // Never free memory a queued copy may still use. If waiting fails the device is broken; leaking
        // the allocation is then the only safe choice.
        if self.wait().is_ok() {
            let _ = self.device.bind();
            let _ = unsafe { result::host_free(self.ptr.cast()) };
        }
    }
}

/// Asynchronous copies. Each returns once the copy is queued on the stream.
impl Stream {
    /// Queue a copy of `src` (pinned host memory) into device memory of the same length. The stream, the
    /// pinned buffer and the device memory must be on one device ([`Error::DeviceMismatch`]).
    pub fn copy_to_device_async<T: DeviceCopy>(
        &self,
        src: &PinnedBuffer<T>,
        dst: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        check_len("copy_to_device_async", dst.len(), src.len)?;
        same_device("copy_to_device_async", self.device(), dst.device())?;
        if dst.byte_len() == 0 {
            return Ok(());
        }
        src.queue_tracked("copy_to_device_async", self, || unsafe {
            result::memcpy_async(
                dst.device_ptr(),
                src.ptr.cast(),
                dst.byte_len(),
                sys::hipMemcpyHostToDevice,
                self.raw(),
            )
        })
    }

    /// Queue a copy of device memory into `dst` (pinned host memory) of the same length, all three on one
    /// device ([`Error::DeviceMismatch`] otherwise). Read the result
    /// with [`PinnedBuffer::as_slice`], which waits for the copy.
    pub fn copy_to_host_async<T: DeviceCopy>(
        &self,
        src: &impl DeviceMemory<T>,
        dst: &mut PinnedBuffer<T>,
    ) -> Result<()> {
        check_len("copy_to_host_async", dst.len, src.len())?;
        same_device("copy_to_host_async", self.device(), src.device())?;
        if src.byte_len() == 0 {
            return Ok(());
        }
        let ptr = dst.ptr;
        dst.queue_tracked("copy_to_host_async", self, || unsafe {
            result::memcpy_async(
                ptr.cast(),
                src.device_ptr(),
                src.byte_len(),
                sys::hipMemcpyDeviceToHost,
                self.raw(),
            )
        })
    }

    /// Queue a device-to-device copy between memories of the same length. `dst` is on the stream's device;
    /// `src` may be on another one (a peer copy): that device's default stream then waits for the copy, as
    /// with [`Stream::copy_peer_async`], so freeing `src` waits for it.
    pub fn copy_device_async<T: DeviceCopy>(
        &self,
        src: &impl DeviceMemory<T>,
        dst: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        check_len("copy_device_async", dst.len(), src.len())?;
        same_device("copy_device_async", self.device(), dst.device())?;
        if src.byte_len() == 0 {
            return Ok(());
        }
        self.device().bind()?;
        unsafe {
            result::memcpy_async(
                dst.device_ptr(),
                src.device_ptr(),
                src.byte_len(),
                sys::hipMemcpyDeviceToDevice,
                self.raw(),
            )?
        };
        // A peer source: its device waits for the copy, so freeing it cannot come first.
        super::peer::source_waits(self, src.device())
    }

    /// Queue setting every byte of `dst` to `value`.
    pub fn memset_async<T: DeviceCopy>(
        &self,
        dst: &mut impl DeviceMemoryMut<T>,
        value: u8,
    ) -> Result<()> {
        same_device("memset_async", self.device(), dst.device())?;
        if dst.byte_len() == 0 {
            return Ok(());
        }
        self.device().bind()?;
        unsafe { result::memset_async(dst.device_ptr(), value, dst.byte_len(), self.raw()) }
    }
}
