//! Sharing memory and events with other processes (`hipIpc*`): handles as plain bytes, interprocess
//! events and the events other processes exported.
//!
//! The exporting side: [`DeviceBuffer::ipc_handle`](crate::DeviceBuffer::ipc_handle) (an
//! [`IpcExport`](crate::memory::IpcExport) guard holding an [`IpcMemHandle`]) and
//! [`Event::interprocess`] with [`Event::ipc_handle`]. The importing side:
//! [`ForeignBuffer::open`](crate::memory::ForeignBuffer::open) and [`ForeignEvent::open`]. Send the
//! handles' bytes ([`IpcMemHandle::as_bytes`]) any way you like: a pipe, a socket, a file.
//!
//! The memory model orders the work of one process. Between processes, order uses with interprocess
//! events: the writer records one after its writes, the reader waits on the opened event
//! ([`Stream::wait_event`](crate::Stream::wait_event)) before reading, and the exporter keeps its
//! [`IpcExport`](crate::memory::IpcExport) until every importer is done with the memory.
//!
//! ```no_run
//! use hip::prelude::*;
//! use hip::ipc::{ForeignEvent, IpcEventHandle, IpcMemHandle};
//! use hip::memory::ForeignBuffer;
//!
//! # fn send(_: &[u8]) {} fn receive() -> Vec<u8> { Vec::new() }
//! // In the exporting process:
//! let device = Device::get(0)?;
//! let stream = Stream::new(&device)?;
//! let x = DeviceBuffer::from_slice(&device, &[1u32, 2, 3, 4])?;
//! let export = x.ipc_handle()?; // keeps the memory alive while it lives
//! let ready = Event::interprocess(&device)?;
//! ready.record(&stream)?;
//! send(export.handle().as_bytes());
//! send(ready.ipc_handle()?.as_bytes());
//!
//! // In the importing process:
//! let memory = IpcMemHandle::from_bytes(&receive())?;
//! let event = ForeignEvent::open(&device, &IpcEventHandle::from_bytes(&receive())?)?;
//! let y = ForeignBuffer::<u32>::open(&device, &memory, 4)?;
//! stream.wait_event(&event)?; // after the exporter's record
//! let mut mine = DeviceBuffer::<u32>::zeroed(&device, 4)?;
//! stream.copy_device_async(&y, &mut mine)?; // on the stream that waited
//! assert_eq!(mine.to_vec()?, [1, 2, 3, 4]);
//! # Ok::<(), hip::Error>(())
//! ```

use crate::device::Device;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::result;
use hip_sys as sys;

/// Plain-bytes conversions for a handle type wrapping a 64-byte HIP handle struct.
macro_rules! ipc_handle_bytes {
    ($ty:ident, $raw:ty, $what:literal) => {
        impl $ty {
            /// How many bytes a handle has (64 on every HIP).
            pub const LEN: usize = std::mem::size_of::<$raw>();

            /// The handle as plain bytes, to send to another process.
            pub fn as_bytes(&self) -> &[u8] {
                // SAFETY: the handle is a C struct of chars only (no padding, every byte initialised),
                // `LEN` bytes long, borrowed for the slice's lifetime.
                unsafe {
                    std::slice::from_raw_parts(&self.raw as *const $raw as *const u8, Self::LEN)
                }
            }

            /// A handle from the bytes [`as_bytes`](Self::as_bytes) gave in another process.
            ///
            /// # Errors
            ///
            /// [`Error::InvalidArgument`] unless `bytes` is exactly [`LEN`](Self::LEN) long. Whether the
            /// bytes name a live export is for HIP to say when the handle is opened.
            pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
                if bytes.len() != Self::LEN {
                    return Err(Error::InvalidArgument {
                        what: $what,
                        value: format!("{} bytes", bytes.len()),
                        reason: format!("a HIP IPC handle is {} bytes", Self::LEN),
                    });
                }
                // SAFETY: `bytes` holds `LEN` bytes (checked), and every bit pattern is a valid handle
                // (a struct of chars); read unaligned, as a byte slice may be anywhere.
                let raw = unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const $raw) };
                Ok($ty { raw })
            }

            /// The raw HIP handle.
            pub fn raw(&self) -> $raw {
                self.raw
            }
        }

        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let hex: String = self.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
                f.debug_tuple(stringify!($ty)).field(&hex).finish()
            }
        }

        impl PartialEq for $ty {
            fn eq(&self, other: &Self) -> bool {
                self.as_bytes() == other.as_bytes()
            }
        }

        impl Eq for $ty {}
    };
}

/// A handle to device memory another process may open (`hipIpcMemHandle_t`), from
/// [`DeviceBuffer::ipc_handle`](crate::DeviceBuffer::ipc_handle); opened with
/// [`ForeignBuffer::open`](crate::memory::ForeignBuffer::open).
#[derive(Clone, Copy)]
pub struct IpcMemHandle {
    raw: sys::hipIpcMemHandle_t,
}

ipc_handle_bytes!(IpcMemHandle, sys::hipIpcMemHandle_t, "IPC memory handle");

impl IpcMemHandle {
    pub(crate) fn new(raw: sys::hipIpcMemHandle_t) -> Self {
        IpcMemHandle { raw }
    }
}

/// A handle to an interprocess event another process may open (`hipIpcEventHandle_t`), from
/// [`Event::ipc_handle`]; opened with [`ForeignEvent::open`].
#[derive(Clone, Copy)]
pub struct IpcEventHandle {
    raw: sys::hipIpcEventHandle_t,
}

ipc_handle_bytes!(IpcEventHandle, sys::hipIpcEventHandle_t, "IPC event handle");

impl Event {
    /// A new event other processes may open (`hipEventInterprocess | hipEventDisableTiming`, the flags
    /// HIP asks of an interprocess event): export it with [`ipc_handle`](Self::ipc_handle).
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for
    /// `hipEventCreateWithFlags`.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// let device = Device::get(0)?;
    /// let ready = Event::interprocess(&device)?;
    /// let bytes = ready.ipc_handle()?.as_bytes().to_vec(); // for the other process
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn interprocess(device: &Device) -> Result<Event> {
        Event::with_flags(
            device,
            sys::hipEventInterprocess | sys::hipEventDisableTiming,
        )
    }

    /// The handle another process opens this event with (`hipIpcGetEventHandle`). The event must have
    /// been made by [`Event::interprocess`] (or with those flags).
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for
    /// `hipIpcGetEventHandle` (an error for an event made without `hipEventInterprocess`).
    ///
    /// ```no_run
    /// # fn f(ready: &hip::Event) -> hip::Result<()> {
    /// let handle = ready.ipc_handle()?;
    /// assert_eq!(handle.as_bytes().len(), hip::ipc::IpcEventHandle::LEN);
    /// # Ok(()) }
    /// ```
    pub fn ipc_handle(&self) -> Result<IpcEventHandle> {
        self.device().bind()?;
        // SAFETY: `self.raw()` is live while `self` is borrowed.
        let raw = unsafe { result::ipc::get_event_handle(self.raw()) }?;
        Ok(IpcEventHandle { raw })
    }
}

/// An event another process exported, opened in this one (`hipIpcOpenEventHandle`): it behaves as an
/// [`Event`] (it derefs to one) for [`Stream::wait_event`](crate::Stream::wait_event),
/// [`record`](Event::record), [`query`](Event::query) and [`synchronize`](Event::synchronize), and is
/// destroyed on drop (the exporter's event lives on).
///
/// A record or wait in one process orders the other's work on the GPU only: the memory model of this
/// process learns from waits on the event only what this process recorded on it.
///
/// ```no_run
/// # use hip::prelude::*;
/// # fn f(device: &Device, stream: &Stream, bytes: &[u8]) -> hip::Result<()> {
/// let handle = hip::ipc::IpcEventHandle::from_bytes(bytes)?;
/// let theirs = hip::ipc::ForeignEvent::open(device, &handle)?;
/// stream.wait_event(&theirs)?; // later work here runs after the exporter's record
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ForeignEvent {
    event: Event,
}

impl ForeignEvent {
    /// Open an event another process exported, on `device` (made current for the call).
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] with what HIP returns for making the device current and for
    /// `hipIpcOpenEventHandle` (a handle of no live event, or one of this very process, is refused).
    pub fn open(device: &Device, handle: &IpcEventHandle) -> Result<ForeignEvent> {
        device.bind()?;
        let raw = result::ipc::open_event_handle(handle.raw)?;
        // Interprocess events have no timing (the flags HIP asks of them).
        let event = Event::from_raw(device, raw, sys::hipEventDisableTiming);
        Ok(ForeignEvent { event })
    }
}

impl std::ops::Deref for ForeignEvent {
    type Target = Event;
    fn deref(&self) -> &Event {
        &self.event
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_as_bytes_and_refuse_other_lengths() {
        let bytes: Vec<u8> = (0..IpcMemHandle::LEN as u8).collect();
        let h = IpcMemHandle::from_bytes(&bytes).unwrap();
        assert_eq!(h.as_bytes(), &bytes[..]);
        assert_eq!(IpcMemHandle::new(h.raw()), h);
        assert_eq!(IpcMemHandle::LEN, 64);
        assert!(format!("{h:?}").starts_with("IpcMemHandle(\"000102"));
        let e = IpcEventHandle::from_bytes(&bytes[..]).unwrap();
        assert_eq!(e.as_bytes(), &bytes[..]);
        assert_eq!(IpcEventHandle::LEN, 64);
        for len in [0, 63, 65, 128] {
            let v = vec![7u8; len];
            match IpcMemHandle::from_bytes(&v) {
                Err(Error::InvalidArgument { what, value, .. }) => {
                    assert_eq!(what, "IPC memory handle");
                    assert_eq!(value, format!("{len} bytes"));
                }
                other => panic!("{other:?}"),
            }
            assert!(IpcEventHandle::from_bytes(&v).is_err());
        }
        assert_ne!(IpcMemHandle::from_bytes(&[0; 64]).unwrap(), h);
    }
}
