//! What every math library handle shares (`hip::blas`, `blaslt`, `solver`, `sparse`, `rand`, `fft`), below
//! them all: the owner that destroys the raw handle, and the record of the handle's own uses.
//!
//! - [`Owner`]: the raw handle and its destroy call, shared (`Arc`) by the safe handle and every graph
//!   that captured a call on it ([`Owner::keep_in_capture`]): a captured call may use the library's own
//!   workspace, which destroying the handle frees, so the handle lives as long as a graph that may
//!   replay the call. Dropped inside a host function, it is destroyed on the releasing thread
//!   ([`crate::release`]): destroying synchronizes the device on some libraries.
//! - [`HandleUse`]: a library keeps state of its own on the device (rocBLAS's workspace, generator
//!   states, an FFT plan's work area, hipSPARSE and hipSOLVER buffers), which every call of the handle
//!   may write. Each call records a write of a per-handle pseudo-allocation, live or captured, in the
//!   same address order as its operands: calls of one handle on two streams (after `set_stream`, or a
//!   graph that captured one replayed beside live calls) are ordered exactly as writes of one buffer
//!   are, and nothing else is waited for.
//! - [`Workspace`]: device scratch a handle passes to its calls, grown in the stream's order.
//! - [`begin_call`]: the start of a call: operands on the handle's device, the stream ordered after
//!   their conflicting users (and the workspace's and the handle's), what a capture needs.
//! - [`HostScalar`]: a scalar the library reads from host memory during the call (`alpha`, `beta`).

#[cfg(any(feature = "blas", feature = "solver"))]
pub(crate) mod scalar;

use crate::device::Device;
use crate::error::Result;
use crate::memory::tracking::{Access, Allocation, Release};
use crate::release::{now_or_later, RawHandle};
use crate::stream::{StreamHandle, StreamOp};
use std::sync::Arc;

/// A library's raw handle and how to destroy it, destroyed when the last owner goes (the safe handle,
/// and each graph that captured a call on it).
pub(crate) struct Owner<H: Copy + 'static> {
    raw: H,
    device: Device,
    /// The library's destroy call (`hipblasDestroy`, ...), given the live handle once.
    destroy: unsafe fn(H),
}

// SAFETY: the owner only destroys the handle, once, on whichever thread drops the last reference (a
// library handle may be destroyed from any thread); the handle is not used through it.
unsafe impl<H: Copy + 'static> Send for Owner<H> {}
// SAFETY: as for Send: `&Owner` gives no access to the handle.
unsafe impl<H: Copy + 'static> Sync for Owner<H> {}

impl<H: Copy + 'static> Owner<H> {
    /// Own `raw`, a live handle made on `device`, destroyed by `destroy`.
    ///
    /// # Safety
    /// `raw` is live, owned by no one else, and `destroy(raw)` is the library's call that frees it.
    pub(crate) unsafe fn new(raw: H, device: &Device, destroy: unsafe fn(H)) -> Arc<Owner<H>> {
        Arc::new(Owner {
            raw,
            device: device.clone(),
            destroy,
        })
    }

    /// While a capture records `op`, the capture's graph keeps the handle alive.
    #[cfg(any(
        feature = "blas",
        feature = "blaslt",
        feature = "sparse",
        feature = "rand",
        feature = "fft"
    ))]
    pub(crate) fn keep_in_capture(self: &Arc<Self>, op: &StreamOp<'_>) {
        if let Some(log) = op.capture_log() {
            crate::stream::lock(&log.kept)
                .push(Arc::clone(self) as Arc<dyn std::any::Any + Send + Sync>);
        }
    }
}

impl<H: Copy + 'static> Drop for Owner<H> {
    fn drop(&mut self) {
        let (raw, device, destroy) = (RawHandle(self.raw), self.device.clone(), self.destroy);
        // Inside a host function (no HIP or library call allowed there) on the releasing thread.
        now_or_later(move || {
            // Errors cannot be reported from drop; the device is current so the handle goes on it.
            let _ = device.bind();
            // SAFETY: the live handle (`new`'s contract), destroyed once, when neither the safe handle nor
            // a graph that captured a call on it is left. Work it queued may still run: the buffers it
            // uses are freed only after their recorded users, and the libraries free their own device
            // state with calls that wait for the device's queued work (hipFree, cudaFree, or a
            // synchronization first).
            unsafe { destroy(raw.get()) };
        });
    }
}

/// A library handle just made and bound to a stream ([`create_bound`]): what every handle holds.
#[cfg(any(
    feature = "blas",
    feature = "blaslt",
    feature = "solver",
    feature = "sparse"
))]
pub(crate) struct Bound<H: Copy + 'static> {
    pub(crate) raw: H,
    pub(crate) owner: Arc<Owner<H>>,
    pub(crate) uses: HandleUse,
    pub(crate) device: Device,
    pub(crate) stream: Arc<StreamHandle>,
}

/// Make a library handle on `stream`'s device and bind it to `stream`: the device made current,
/// `create` run (the library's create call), the handle owned (destroyed by `destroy` when its last
/// owner goes, also right away if binding fails), then `set` run on it and the stream
/// (`hipblasSetStream`, ...; nothing for a library that takes the stream per call).
///
/// # Safety
/// `create` returns a live handle made on the current device and owned by no one else, and
/// `destroy` is the library's call that frees it.
#[cfg(any(
    feature = "blas",
    feature = "blaslt",
    feature = "solver",
    feature = "sparse"
))]
pub(crate) unsafe fn create_bound<H: Copy + 'static>(
    stream: &crate::Stream,
    create: impl FnOnce() -> Result<H>,
    destroy: unsafe fn(H),
    set: impl FnOnce(H, hip_sys::hipStream_t) -> Result<()>,
) -> Result<Bound<H>> {
    let device = stream.device().clone();
    device.bind()?;
    let raw = create()?;
    // SAFETY: the caller's contract: a live handle nobody else owns, freed by `destroy`.
    let owner = unsafe { Owner::new(raw, &device, destroy) };
    set(raw, stream.raw())?;
    Ok(Bound {
        raw,
        owner,
        uses: HandleUse::new(&device),
        device,
        stream: Arc::clone(stream.handle()),
    })
}

/// The record of a handle's own uses: a pseudo-allocation (no memory) that every call of the handle
/// writes, so the memory model orders the calls of one handle across streams and graphs.
pub(crate) struct HandleUse(Arc<Allocation>);

impl HandleUse {
    /// A record for a handle of `device`.
    pub(crate) fn new(device: &Device) -> HandleUse {
        HandleUse(Allocation::new(
            std::ptr::null_mut(),
            device,
            Release::Nothing,
        ))
    }

    /// A handle of `device` whose calls queue on `*current` moves to `stream` (its `set_stream`):
    /// `stream` must be on `device` ([`Error::DeviceMismatch`](crate::Error::DeviceMismatch) naming
    /// `what`); from now on it runs after the handle's last call (on whichever stream that was), and
    /// nothing else queued there; then `set` binds the library's handle to it (`hipblasSetStream`, ...;
    /// nothing for a library that takes the stream per call) and `*current` becomes it. Recorded as a
    /// use, so calls on the old stream after a later move back wait for this stream's calls the same
    /// way.
    pub(crate) fn set_stream(
        &self,
        what: &'static str,
        device: &Device,
        current: &mut Arc<StreamHandle>,
        stream: &crate::Stream,
        set: impl FnOnce(hip_sys::hipStream_t) -> Result<()>,
    ) -> Result<()> {
        crate::event::same_device(what, device, stream.device())?;
        device.bind()?;
        {
            let op = stream.handle().begin_op();
            self.0.use_on(&op, Access::Write)?;
        }
        set(stream.raw())?;
        *current = Arc::clone(stream.handle());
        Ok(())
    }

    /// The pseudo-allocation, to order with a call's operands (in address order, as every operation
    /// takes its allocations: see `memory::tracking::by_address`), as a write.
    #[inline]
    pub(crate) fn operand(&self) -> (&Arc<Allocation>, Access) {
        (&self.0, Access::Write)
    }
}

#[cfg(any(feature = "blas", feature = "sparse"))]
/// A host scalar passed by address (`alpha`, `beta`), at 16-byte alignment: the libraries may read
/// complex values as `float2` / `double2` (8- or 16-byte loads).
#[repr(C, align(16))]
pub(crate) struct HostScalar<T>(pub(crate) T);

#[cfg(feature = "sparse")]
impl<T> HostScalar<T> {
    /// The scalar's address, for the library call (valid while `self` is).
    #[inline]
    pub(crate) fn ptr(&self) -> *const std::ffi::c_void {
        (&self.0 as *const T).cast()
    }
}

/// Device scratch a handle passes to its calls (hipSOLVER's `work`, hipSPARSE's and hipBLASLt's
/// buffers), grown on demand in the stream's order: a larger one replaces it, and the old one is freed
/// after the calls that used it. Every call given it records a write of it.
#[cfg(any(feature = "solver", feature = "sparse", feature = "blaslt"))]
#[derive(Default)]
pub(crate) struct Workspace(Option<crate::memory::DeviceBuffer<u8>>);

#[cfg(any(feature = "solver", feature = "sparse", feature = "blaslt"))]
impl Workspace {
    /// Bytes held now (0 before the first call that needed some).
    pub(crate) fn bytes(&self) -> usize {
        self.0.as_ref().map_or(0, |w| w.len())
    }

    /// At least `bytes` of scratch (null for 0), 256-byte aligned (a fresh allocation always is),
    /// allocated in `stream`'s order when what is held is smaller.
    pub(crate) fn at_least(
        &mut self,
        stream: &Arc<StreamHandle>,
        bytes: usize,
    ) -> Result<crate::memory::DevicePtr> {
        use crate::memory::{DeviceBuffer, DeviceMemory};
        if bytes == 0 {
            return Ok(std::ptr::null_mut());
        }
        if self.bytes() < bytes {
            // Dropping the old one first lets the pool reuse its memory; its free is ordered after
            // every call that used it.
            self.0 = None;
            // SAFETY: scratch the library writes before it reads; nothing of this crate reads it.
            self.0 = Some(unsafe { DeviceBuffer::alloc_async_on(stream, bytes)? });
        }
        Ok(self
            .0
            .as_ref()
            .map_or(std::ptr::null_mut(), |w| w.device_ptr()))
    }

    /// Let what is held go (freed in the stream's order, after the calls that used it).
    #[cfg(feature = "blaslt")]
    pub(crate) fn release(&mut self) {
        self.0 = None;
    }

    /// The scratch as a call's operand (a write), if any is held.
    pub(crate) fn operand(&self) -> Option<(&Arc<Allocation>, Access)> {
        use crate::memory::DeviceMemory;
        self.0.as_ref().map(|w| (w.allocation(), Access::Write))
    }
}

/// Start a call of a handle of `device` on `stream`: every operand on the handle's device, the stream
/// ordered after their conflicting users and recorded as their user, with the handle's own `state`
/// (its [`HandleUse`], its [`Workspace`]) recorded as written, all in address order; then the device
/// made current. On a capturing stream `on_capture` runs first: it keeps the handle alive for the graph
/// ([`Owner::keep_in_capture`]) or refuses the call. The returned guard keeps captures from starting or
/// ending until the call is queued.
#[cfg(any(feature = "solver", feature = "sparse", feature = "blaslt"))]
pub(crate) fn begin_call<'s>(
    what: &'static str,
    device: &Device,
    stream: &'s Arc<StreamHandle>,
    operands: &[(&Device, &Arc<Allocation>, Access)],
    state: [Option<(&Arc<Allocation>, Access)>; 2],
    on_capture: impl FnOnce(&StreamOp<'_>) -> Result<()>,
) -> Result<StreamOp<'s>> {
    for &(d, _, _) in operands {
        crate::event::same_device(what, device, d)?;
    }
    let op = stream.begin_op();
    if op.is_capturing() {
        on_capture(&op)?;
    }
    let uses = operands.iter().map(|&(_, a, x)| (a, x));
    crate::memory::tracking::use_by_address(&op, uses.chain(state.into_iter().flatten()))?;
    device.bind()?;
    Ok(op)
}
