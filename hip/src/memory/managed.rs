//! Managed (unified) memory: one address valid on the host and the device.

use super::tracking::{Access, Allocation, Release};
use super::DevicePtr;
use super::{byte_size, DeviceCopy, DeviceMemory, DeviceMemoryMut};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::event::same_device;
use crate::result;
use crate::stream::Stream;
use hip_sys as sys;
use std::sync::Arc;

/// `len` values of `T` in managed memory (`hipMallocManaged`, attached globally), freed on drop (once no
/// stream still uses it).
///
/// Kernels and copies use it like device memory, ordered by the memory model like a [`DeviceBuffer`](crate::DeviceBuffer)
///. The host reads and writes it through [`as_slice`](Self::as_slice) and
/// [`as_mut_slice`](Self::as_mut_slice), which wait for the conflicting work (a read for the last
/// writer, a write for every user). On a device that cannot access managed memory while the host does
/// (`hipDeviceAttributeConcurrentManagedAccess` = 0):
/// - on AMD (no XNACK) the memory stays coherent host memory: they wait for every device as well
///   ([`Device::synchronize_all`]);
/// - on HIP's NVIDIA platform (GPUs before Pascal, Windows) a host access while *any* kernel runs faults
///   (the process gets SIGSEGV), which a slice cannot prevent once handed out: they answer
///   [`Error::NotSupported`]; copy through [`DeviceMemory::copy_to_host`] and
///   [`DeviceMemoryMut::copy_from_host`] there. [`zeroed`](Self::zeroed) zeroes on the device then.
///
/// On NVIDIA GPUs never ask for more managed memory than the device has free.
///
/// # Attachments
///
/// [`attachment`](Self::attachment) reports the attachment last asked for. An attachment is accepted only
/// where it is a hint: devices with concurrent managed access (there CUDA and HIP let every stream keep
/// using the memory), and AMD, where HIP ignores it; where it would be a rule (NVIDIA without concurrent
/// managed access: only the attached stream, or the host, may touch the memory while other work runs) it
/// is refused with [`Error::NotSupported`]. So memory attached to one stream ([`MemAttach::Single`]) may
/// still be used from other streams and the host: those uses are ordered by the memory model like any
/// other, not refused.
#[derive(Debug)]
pub struct ManagedBuffer<T: DeviceCopy> {
    ptr: DevicePtr,
    len: usize,
    alloc: Arc<Allocation>,
    /// The attachment last asked for, and for [`MemAttach::Single`] the stream's id.
    attach: (MemAttach, Option<u64>),
    _elem: std::marker::PhantomData<T>,
}

// SAFETY: as DeviceBuffer: the buffer owns the allocation (Send + Sync) and T is DeviceCopy (Send + Sync).
unsafe impl<T: DeviceCopy> Send for ManagedBuffer<T> {}
// SAFETY: `&ManagedBuffer` gives host reads of Sync data (`as_slice`, after the writers are done) and
// queues work that only reads; host writes and device writes need `&mut`.
unsafe impl<T: DeviceCopy> Sync for ManagedBuffer<T> {}

impl<T: DeviceCopy> ManagedBuffer<T> {
    /// `len` zeroed elements (`hipMallocManaged`, attached globally), zeroed by the host (on the device
    /// where the host may not touch managed memory).
    ///
    /// # Errors
    ///
    /// [`Error::AllocationTooLarge`] when the byte size overflows, and [`Error::Hip`] with what HIP
    /// returns for the device attribute, for making the device current, for `hipMallocManaged`
    /// (`hipErrorOutOfMemory` when there is no room) and, where it zeroes on the device, for the memset.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(device: &Device) -> hip::Result<()> {
    /// let mut m = ManagedBuffer::<f32>::zeroed(device, 1024)?;
    /// m.as_mut_slice()?[0] = 1.0; // the host writes it in place
    /// // ... kernels read and write `m` as a device buffer ...
    /// println!("{}", m.as_slice()?[0]); // waits for the kernels that write it
    /// # Ok(()) }
    /// ```
    pub fn zeroed(device: &Device, len: usize) -> Result<Self> {
        Self::zeroed_attached(device, len, MemAttach::Global)
    }

    /// `len` zeroed elements, attached as `attach` says (`hipMallocManaged`'s flags: [`MemAttach::Global`]
    /// or [`MemAttach::Host`]; [`MemAttach::Single`] names a stream, so it is given with
    /// [`attach_async`](Self::attach_async) instead: [`Error::InvalidArgument`] here). A host attachment
    /// is refused ([`Error::NotSupported`]) where the host may never touch managed memory safely (NVIDIA
    /// devices without concurrent managed access).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for [`MemAttach::Single`], [`Error::NotSupported`] for
    /// [`MemAttach::Host`] on an NVIDIA device without concurrent managed access, and what
    /// [`zeroed`](Self::zeroed) returns.
    ///
    /// ```no_run
    /// use hip::memory::MemAttach;
    /// # fn f(device: &hip::Device) -> hip::Result<()> {
    /// // Filled by the host before any kernel uses it.
    /// let staging = hip::ManagedBuffer::<u8>::zeroed_attached(device, 1 << 20, MemAttach::Host)?;
    /// # Ok(()) }
    /// ```
    pub fn zeroed_attached(device: &Device, len: usize, attach: MemAttach) -> Result<Self> {
        let flags = match attach {
            MemAttach::Global => sys::hipMemAttachGlobal,
            MemAttach::Host => {
                refuse_attach_without_concurrent_access(device)?;
                sys::hipMemAttachHost
            }
            MemAttach::Single => {
                return Err(Error::InvalidArgument {
                    what: "managed memory attachment at allocation",
                    value: "MemAttach::Single".into(),
                    reason: "an allocation is attached globally or to the host; attach it to one \
                             stream with ManagedBuffer::attach_async"
                        .into(),
                })
            }
        };
        let bytes = byte_size::<T>(len)?;
        let ptr = if bytes == 0 {
            std::ptr::null_mut()
        } else {
            device.bind()?;
            zeroed_allocation(
                || host_access(device),
                || result::malloc_managed(bytes, flags),
                // SAFETY: `p` is a fresh allocation of `bytes` bytes on the current device, used by
                // nothing yet (no allocation records it, so no stream can be ordered against it). This
                // path runs only where host access is `Never` (NVIDIA without concurrent managed access),
                // where CUDA's hipMemset on managed memory is fully synchronous: it is zero on return.
                |p| unsafe { result::memset(p, 0, bytes) },
                // SAFETY: `p` is a fresh hipMallocManaged allocation of `bytes` bytes, attached globally
                // so the host may write it, and no work uses it yet; zero bits are a valid T. The device
                // allows host access while kernels run (or, on AMD, the memory is coherent host memory).
                |p| unsafe { p.cast::<u8>().write_bytes(0, bytes) },
                |p| {
                    // SAFETY: allocated just before, used by nothing, freed once.
                    let _ = unsafe { result::free(p) };
                },
            )?
        };
        Ok(ManagedBuffer {
            ptr,
            len,
            // Nothing allocated (no bytes): nothing to free either.
            alloc: Allocation::host_visible(
                ptr,
                device,
                if ptr.is_null() {
                    Release::Nothing
                } else {
                    Release::Free
                },
            ),
            attach: (attach, None),
            _elem: std::marker::PhantomData,
        })
    }

    /// The attachment last asked for: [`MemAttach::Global`] or [`MemAttach::Host`] from the allocation
    /// ([`zeroed_attached`](Self::zeroed_attached)), or what [`attach_async`](Self::attach_async) set.
    /// An `attach_async` takes effect in its stream's order: work queued on that stream before it still
    /// runs under the previous attachment.
    pub fn attachment(&self) -> MemAttach {
        self.attach.0
    }

    /// For memory attached to one stream ([`MemAttach::Single`]), that stream's [`Stream::id`]; `None`
    /// otherwise.
    pub fn attached_stream(&self) -> Option<u64> {
        self.attach.1
    }

    /// Attach the memory to `stream` ([`MemAttach::Single`]), to the host, or globally again, in
    /// `stream`'s order (`hipStreamAttachMemAsync`). On devices with concurrent managed access it is a
    /// hint, on AMD HIP does nothing; where the host may never touch managed memory safely (NVIDIA without
    /// concurrent managed access) it is refused ([`Error::NotSupported`]), since the rules it would set
    /// there are not ones this crate enforces. Other streams may still use memory attached to one stream,
    /// ordered by the memory model (see [Attachments](Self#attachments)). The attachment call itself is
    /// ordered like a write. [`attachment`](Self::attachment) reports it from now on.
    ///
    /// # Errors
    ///
    /// [`Error::DeviceMismatch`] for a stream of another device than the memory's,
    /// [`Error::NotSupported`] on an NVIDIA device without concurrent managed access,
    /// [`Error::InvalidArgument`] on a capturing stream (managed memory is refused in graphs), and what
    /// HIP returns for `hipStreamAttachMemAsync`.
    ///
    /// ```no_run
    /// use hip::memory::MemAttach;
    /// # fn f(stream: &hip::Stream, m: &mut hip::ManagedBuffer<f32>) -> hip::Result<()> {
    /// m.attach_async(stream, MemAttach::Single)?; // a hint: mostly used by `stream`
    /// assert_eq!(m.attached_stream(), Some(stream.id()));
    /// # Ok(()) }
    /// ```
    pub fn attach_async(&mut self, stream: &Stream, attach: MemAttach) -> Result<()> {
        same_device(
            "ManagedBuffer::attach_async",
            stream.device(),
            self.device(),
        )?;
        refuse_attach_without_concurrent_access(self.device())?;
        let attached = (attach, (attach == MemAttach::Single).then(|| stream.id()));
        if self.ptr.is_null() {
            self.attach = attached;
            return Ok(());
        }
        let flags = match attach {
            MemAttach::Global => sys::hipMemAttachGlobal,
            MemAttach::Host => sys::hipMemAttachHost,
            MemAttach::Single => sys::hipMemAttachSingle,
        };
        let op = stream.begin_op();
        self.alloc.use_on(&op, Access::Write)?;
        self.device().bind()?;
        // SAFETY: `self.ptr` is this live managed allocation (held by `self.alloc` until every stream that
        // uses it is done), `stream` is live and on its device (checked, current); length 0 means the
        // whole allocation. Attaching changes which streams may use the memory, not its contents; the
        // device allows any (concurrent managed access, or AMD, where it does nothing).
        unsafe { result::memory::stream_attach_mem_async(stream.raw(), self.ptr, flags) }?;
        self.attach = attached;
        Ok(())
    }

    /// The contents on the host, once the work that writes them is done (and, on AMD without
    /// concurrent managed access, once every device is idle).
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] on an NVIDIA device without concurrent managed access (copy with
    /// [`DeviceMemory::to_vec`] there); an error of the work it waited for;
    /// [`Error::InvalidArgument`] inside a host function while work still writes the memory (or, feature
    /// `rccl`, while an open RCCL group uses it).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(m: &ManagedBuffer<u32>) -> hip::Result<()> {
    /// let total: u64 = m.as_slice()?.iter().map(|&v| u64::from(v)).sum();
    /// # Ok(()) }
    /// ```
    pub fn as_slice(&self) -> Result<&[T]> {
        self.host_wait(Access::Read)?;
        // SAFETY: `host_ptr` is aligned and valid on the host for `len` initialised T (zeroed at
        // allocation; or dangling with no bytes), alive while `self` is borrowed. Every write queued
        // before was waited for above (and, without concurrent managed access, every device); a new
        // device write needs `&mut self`, which the returned borrow excludes (a graph cannot hold it:
        // captures refuse host-visible memory). Host access while other kernels run cannot fault: the
        // device allows it, or it is AMD's coherent host memory; NVIDIA devices without concurrent
        // managed access were refused by `host_wait`.
        Ok(unsafe { std::slice::from_raw_parts(self.host_ptr(), self.len) })
    }

    /// The contents on the host for writing, once every queued use of them is done.
    ///
    /// # Errors
    ///
    /// As [`as_slice`](Self::as_slice): [`Error::NotSupported`] on an NVIDIA device without concurrent
    /// managed access, an error of the work it waited for, and [`Error::InvalidArgument`] inside a host
    /// function while work still uses the memory (or, feature `rccl`, while an open RCCL group uses it).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(m: &mut ManagedBuffer<f32>) -> hip::Result<()> {
    /// for (i, v) in m.as_mut_slice()?.iter_mut().enumerate() {
    ///     *v = i as f32;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.host_wait(Access::Write)?;
        // SAFETY: as in as_slice, for writing: every use queued before (reads too) was waited for, no
        // other borrow of the buffer exists, and host access cannot fault, as there.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.host_ptr(), self.len) })
    }

    fn host_wait(&self, access: Access) -> Result<()> {
        if self.ptr.is_null() {
            return Ok(());
        }
        match host_access(self.device())? {
            HostAccess::Concurrent => self.alloc.host_wait(access),
            HostAccess::WhenIdle => {
                self.alloc.host_wait(access)?;
                Device::synchronize_all()
            }
            HostAccess::Never => Err(Error::NotSupported {
                what: "host access (as_slice, as_mut_slice) to managed memory of this device",
                reason: "it cannot access managed memory while the host does \
                         (hipDeviceAttributeConcurrentManagedAccess = 0), so a kernel running during the \
                         access would fault the process; copy with copy_to_host / copy_from_host",
            }),
        }
    }

    /// The host address of the elements: the allocation, or a dangling (never null) pointer when nothing
    /// was allocated (no elements, or zero-sized ones; a slice may never start at null, even an empty one).
    fn host_ptr(&self) -> *mut T {
        if self.ptr.is_null() {
            std::ptr::NonNull::<T>::dangling().as_ptr()
        } else {
            self.ptr.cast()
        }
    }
}

device_memory!(ManagedBuffer);
impl<T: DeviceCopy> DeviceMemoryMut<T> for ManagedBuffer<T> {}

/// Who may use managed memory ([`ManagedBuffer::zeroed_attached`], [`ManagedBuffer::attach_async`]):
/// `hipMemAttachGlobal`, `hipMemAttachHost`, `hipMemAttachSingle`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemAttach {
    /// Any stream of any device (the default).
    Global,
    /// The host; devices only after it is attached otherwise.
    Host,
    /// One stream ([`ManagedBuffer::attach_async`]): a hint where this crate accepts it, so other
    /// streams' uses are still allowed, and ordered by the memory model.
    Single,
}

/// Fresh zeroed managed memory, every failure leaving nothing allocated: how the host may touch it
/// (`access`), then the allocation (`alloc`), then the zeroing, on the device where the host may never
/// touch the memory (`zero_on_device`; the memory goes to `free` if that fails), else by the host
/// (`zero_on_host`).
fn zeroed_allocation<P: Copy>(
    access: impl FnOnce() -> Result<HostAccess>,
    alloc: impl FnOnce() -> Result<P>,
    zero_on_device: impl FnOnce(P) -> Result<()>,
    zero_on_host: impl FnOnce(P),
    free: impl FnOnce(P),
) -> Result<P> {
    // Asked before allocating: once the memory exists, the only step that can fail is the zeroing,
    // which frees it.
    let access = access()?;
    let p = alloc()?;
    if access == HostAccess::Never {
        if let Err(e) = zero_on_device(p) {
            free(p);
            return Err(e);
        }
    } else {
        zero_on_host(p);
    }
    Ok(p)
}

/// Refuse attachments on NVIDIA devices without concurrent managed access, where they set rules about
/// which kernels and host code may run at once that this crate does not enforce.
fn refuse_attach_without_concurrent_access(device: &Device) -> Result<()> {
    if host_access(device)? == HostAccess::Never {
        return Err(Error::NotSupported {
            what: "managed memory attachments (host, one stream) on this device",
            reason: "it cannot access managed memory concurrently with the host \
                     (hipDeviceAttributeConcurrentManagedAccess = 0): an attachment there restricts \
                     which work may run at once, which this crate does not enforce",
        });
    }
    Ok(())
}

/// When the host may touch managed memory of a device.
#[derive(Debug, PartialEq, Eq)]
enum HostAccess {
    /// Any time (`hipDeviceAttributeConcurrentManagedAccess` = 1).
    Concurrent,
    /// On AMD without it: coherent host memory, waited for like the device's work.
    WhenIdle,
    /// On NVIDIA without it: only while no kernel runs anywhere, which a slice cannot guarantee.
    Never,
}

fn host_access(device: &Device) -> Result<HostAccess> {
    let concurrent = device.attribute(sys::hipDeviceAttributeConcurrentManagedAccess)?;
    Ok(host_access_for(concurrent, cfg!(hip_platform = "nvidia")))
}

fn host_access_for(concurrent_managed_access: i32, nvidia: bool) -> HostAccess {
    match (concurrent_managed_access != 0, nvidia) {
        (true, _) => HostAccess::Concurrent,
        (false, true) => HostAccess::Never,
        (false, false) => HostAccess::WhenIdle,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_step_of_a_zeroed_allocation_leaves_nothing_allocated() {
        use std::cell::{Cell, RefCell};
        let live = RefCell::new(Vec::new());
        let zeroed = Cell::new(None);
        fn failed<T>() -> Result<T> {
            Err(Error::NotSupported {
                what: "test",
                reason: "a step that fails",
            })
        }
        let run = |access: Result<HostAccess>, on_device: Result<()>| {
            zeroed_allocation(
                || access,
                || {
                    live.borrow_mut().push(7);
                    Ok(7)
                },
                |_| on_device,
                |p| zeroed.set(Some(p)),
                |p| live.borrow_mut().retain(|q| *q != p),
            )
        };
        // The attribute query fails: nothing is left allocated (it was the leak).
        assert!(run(failed(), Ok(())).is_err());
        assert!(live.borrow().is_empty(), "{:?}", live.borrow());
        // Zeroing on the device fails: the memory is freed.
        assert!(run(Ok(HostAccess::Never), failed()).is_err());
        assert!(live.borrow().is_empty(), "{:?}", live.borrow());
        assert_eq!(zeroed.get(), None);
        // Success: the memory stays, zeroed by the host where it may touch it.
        assert_eq!(run(Ok(HostAccess::Concurrent), failed()).unwrap(), 7);
        assert_eq!((live.borrow().clone(), zeroed.get()), (vec![7], Some(7)));
        live.borrow_mut().clear();
        zeroed.set(None);
        assert_eq!(run(Ok(HostAccess::Never), Ok(())).unwrap(), 7);
        assert_eq!((live.borrow().clone(), zeroed.get()), (vec![7], None));
    }

    #[test]
    fn a_buffer_reports_the_attachment_it_was_allocated_with() {
        // No bytes: nothing is allocated, and no HIP call is made.
        let m = ManagedBuffer::<u32>::zeroed(&Device::for_unit_tests(0), 0).unwrap();
        assert_eq!(
            (m.attachment(), m.attached_stream()),
            (MemAttach::Global, None)
        );
        assert!(matches!(
            ManagedBuffer::<u32>::zeroed_attached(&Device::for_unit_tests(0), 0, MemAttach::Single),
            Err(Error::InvalidArgument { .. })
        ));
    }

    #[test]
    fn host_access_follows_the_attribute_and_the_platform() {
        assert_eq!(host_access_for(1, true), HostAccess::Concurrent);
        assert_eq!(host_access_for(1, false), HostAccess::Concurrent);
        assert_eq!(host_access_for(0, true), HostAccess::Never);
        assert_eq!(host_access_for(0, false), HostAccess::WhenIdle);
    }
}
