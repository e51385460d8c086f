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
//! - [`HostScalar`]: a scalar the library reads from host memory during the call (`alpha`, `beta`).

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

    /// The handle moves to `stream` (`set_stream`): from now on `stream` runs after the handle's last
    /// call (on whichever stream it was), and nothing else queued there. Recorded as a use, so calls on
    /// the old stream after a later move back wait for this stream's calls the same way.
    pub(crate) fn move_to(&self, stream: &Arc<StreamHandle>) -> Result<()> {
        let op = stream.begin_op();
        self.0.use_on(&op, Access::Write)
    }

    /// The pseudo-allocation, to order with a call's operands (in address order, as every operation
    /// takes its allocations: see `memory::tracking::by_address`), as a write.
    #[inline]
    pub(crate) fn operand(&self) -> (&Arc<Allocation>, Access) {
        (&self.0, Access::Write)
    }
}

/// A host scalar passed by address (`alpha`, `beta`), at 16-byte alignment: the libraries may read
/// complex values as `float2` / `double2` (8- or 16-byte loads).
#[repr(C, align(16))]
pub(crate) struct HostScalar<T>(pub(crate) T);

impl<T> HostScalar<T> {
    /// The scalar's address, for the library call (valid while `self` is).
    #[inline]
    pub(crate) fn ptr(&self) -> *const std::ffi::c_void {
        (&self.0 as *const T).cast()
    }
}
