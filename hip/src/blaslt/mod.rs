//! Matrix products with fused epilogues through hipBLASLt. Feature `blaslt`:
//! `hip = { features = ["blaslt"] }`, over `hipblaslt-sys` (bindgen over the installed
//! `hipblaslt/hipblaslt.h`). **AMD's platform only**: hipBLASLt has no NVIDIA backend upstream, and the
//! feature's build stops with a message saying so on HIP's NVIDIA platform (use `hip::blas`,
//! feature `blas`, there).
//!
//! ```no_run
//! use hip::prelude::*;
//! use hip::blaslt::{Epilogue, Handle, Matmul};
//!
//! let device = Device::get(0)?;
//! let stream = Stream::new(&device)?;
//! let mut lt = Handle::new(&stream)?;
//! // Row-major 2x3 times 3x2 plus a bias per output column, then ReLU: one kernel.
//! let a = DeviceBuffer::from_slice(&device, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! let b = DeviceBuffer::from_slice(&device, &[1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0])?;
//! let bias = DeviceBuffer::from_slice(&device, &[-10.0f32, 0.0])?;
//! let mut d = DeviceBuffer::<f32>::zeroed(&device, 4)?;
//! let desc = Matmul::row_major(2, 2, 3);
//! lt.matmul(&desc, 1.0, &a, &b, 0.0, &mut d, Epilogue::relu_bias(&bias))?;
//! assert_eq!(d.to_vec()?, [0.0, 5.0, 0.0, 11.0]);
//! # Ok::<(), hip::Error>(())
//! ```
//!
//! # What it has
//!
//! | call | hipBLASLt |
//! | --- | --- |
//! | [`Handle::new`], [`Handle::set_stream`], [`Handle::raw`] | `hipblasLtCreate` (the stream is given per call) |
//! | [`Handle::matmul`] (`D = epilogue(alpha op(A) op(B) + beta D)`, C = D) | `hipblasLtMatmul` |
//! | [`Handle::matmul_into`] (`D = epilogue(alpha op(A) op(B) + beta C)`, C and D distinct) | `hipblasLtMatmul` |
//! | [`Handle::algorithms`] ([`Algo`], cacheable, with its workspace size) | `hipblasLtMatmulAlgoGetHeuristic` |
//! | [`Epilogue`]: none, ReLU, GELU, bias, ReLU + bias, GELU + bias, GELU with auxiliary output (+ bias) | `HIPBLASLT_EPILOGUE_*` |
//!
//! Element types ([`LtElement`]): `f32`, [`half::f16`], [`half::bf16`] for A, B, C, D, the bias and the
//! auxiliary output, with `f32` compute and `f32` host `alpha` / `beta`. Not wrapped: the 8-bit float
//! types (FP8 E4M3 / E5M2, which need per-tensor scale pointers and run only on gfx942 / gfx950 / gfx12),
//! mixed input types, device scalars, the gradient epilogues (`DGELU`, `BGRAD*`), `hipblasLtMatrixTransform`
//! and the `hipblaslt-ext.hpp` C++ API: use [`Handle::raw`] and `hipblaslt-sys`.
//!
//! # What is checked, and what keeps it sound
//!
//! Before any library call, every dimension, leading dimension (at least the stored rows), batch count
//! and stride is checked against the buffers with checked arithmetic: A, B, C and D, the bias (one
//! element per row of D) and the auxiliary output must hold every element the product reaches, and the
//! products of a batch never write the same elements. A shape that fails is an [`Error::InvalidArgument`]
//! naming the operand (`"matmul operand b"`, `"matmul epilogue bias"`), and nothing is queued or written.
//! Every buffer must be on the handle's device ([`Error::DeviceMismatch`]). The sizes checked are the ones
//! hipBLASLt uses because every descriptor attribute that decides them is set, none left to a library
//! default: the operations, column-major layouts, the epilogue, host `alpha` / `beta`, the bias's and the
//! auxiliary output's element type (D's), the auxiliary output's pointer, leading dimension and batch
//! stride, and no scaling (the A, B, C, D and auxiliary scale pointers null, and the amax output). A `hipblasStatus_t` other than
//! success is an [`Error::Blas`] keeping the raw status and the hipBLASLt function's name
//! ([`BlasErrorCode::status`](crate::BlasErrorCode::status) gives its DTL status: hipBLASLt returns
//! hipBLAS's status type); with `dynamic-loading`, a missing libhipblaslt is [`Error::LibraryNotFound`].
//!
//! Calls are queued on the handle's stream and return at once, ordered by the memory model like every
//! other operation of this crate (see the [`memory`](crate::memory) module): the stream first waits for
//! other streams' conflicting work on the operands, later operations on them wait for the call.
//!
//! # Algorithms and the workspace
//!
//! hipBLASLt picks a kernel per problem from a heuristic ([`Handle::algorithms`]). Without an algorithm in
//! the description ([`Matmul::algo`]) a call takes the heuristic's first answer, remembered by the handle
//! per problem (dimensions, layouts, element type, epilogue kind), so the heuristic runs once per shape.
//! The handle also keeps the descriptors (`hipblasLtMatmulDesc_t` and four `hipblasLtMatrixLayout_t`) of
//! the 16 problems it ran last and reuses them for a call of the same problem, setting only that call's
//! bias and auxiliary pointers (and the auxiliary leading dimension and stride) again.
//! The handle owns the workspace the kernels use, a `DeviceBuffer<u8>` grown in the stream's order to what
//! the chosen algorithm needs, never past [`Handle::workspace_limit`] (32 MiB unless
//! [`Handle::set_workspace_limit`] says otherwise); every call is ordered as a writer of it. An
//! algorithm that needs more than the limit is refused ([`Error::InvalidArgument`]).
//!
//! `Handle` is `Send`, not `Sync`: one thread at a time.
//!
//! # Versions, and where it was tested
//!
//! | hipBLASLt | ROCm | Debian | soname |
//! | --- | --- | --- | --- |
//! | 1.1.0 | 7.1.1 | sid | `libhipblaslt.so.1` |
//! | 1.2.2 | 7.2.4 | experimental | `libhipblaslt.so.1` |
//!
//! Bookworm and trixie package no hipBLASLt: there `--features blaslt` stops the build with a message
//! naming what was tried and `apt-get install libhipblaslt-dev`, unless `dynamic-loading` is on (then the
//! committed bindings of sid's 7.1.1 are used and `libhipblaslt.so.1` is opened at first use). The
//! module is built, linted and unit-tested (no device) against sid's and experimental's packages; its
//! GPU tests (`tests/gpu_blaslt.rs`) compile but have not run: no AMD GPU was available, and hipBLASLt
//! has no NVIDIA backend.

mod calls;
mod descr;
mod epilogue;
mod shape;

pub use self::calls::Algo;
pub use self::epilogue::{Epilogue, EpilogueKind, LtElement};
pub use self::shape::{Matmul, Op, StridedBatch};
/// The raw bindings (`hipblaslt-sys`).
pub use hipblaslt_sys;

use crate::device::Device;
use crate::error::{BlasErrorCode, Error, Result};
use crate::event::same_device;
use crate::library::{begin_call, create_bound, HandleUse, Owner, Workspace};
use crate::memory::{Access, Allocation};
use crate::stream::{Stream, StreamHandle, StreamOp};
use hipblaslt_sys as sys;
use std::collections::HashMap;
use std::sync::Arc;

/// One operand of a call: its device, allocation and how the call uses it.
type Operand<'a> = (&'a Device, &'a Arc<Allocation>, Access);

/// The version of the hipBLASLt headers this crate was built against (1.1.0 for ROCm 7.1).
pub const HEADER_VERSION: (u32, u32, u32) = sys::HEADER_VERSION;

/// The default [`Handle::workspace_limit`]: 32 MiB.
pub const DEFAULT_WORKSPACE_LIMIT: usize = 32 << 20;

/// How many problems' algorithms a handle remembers before it forgets them all.
const CACHE_LIMIT: usize = 1024;

/// A hipBLASLt handle (`hipblasLtHandle_t`) on one device, queueing on a stream of it, with the workspace
/// it owns and the algorithms it has chosen. Destroyed on drop.
///
/// `Send` (it may move to another thread) but not `Sync`: its calls take `&mut self`.
pub struct Handle {
    raw: sys::hipblasLtHandle_t,
    /// Owns `raw`: destroyed when the handle and every graph that captured a call on it are gone.
    owner: Arc<Owner<sys::hipblasLtHandle_t>>,
    /// Written by every call: orders the calls of this handle across streams and graphs.
    uses: HandleUse,
    device: Device,
    stream: Arc<StreamHandle>,
    stream_raw: sys::hipStream_t,
    workspace: Workspace,
    workspace_limit: usize,
    /// The heuristic's first answer per problem.
    cache: HashMap<descr::Key, Algo>,
    /// The descriptors of the problems run last (a description and four layouts per problem).
    descriptors: descr::DescriptorCache,
}

// SAFETY: a hipBLASLt handle may be used from any thread, one at a time: `Handle` is not `Sync` (the raw
// pointer), its calls take `&mut self` or `&self`, and each call makes the handle's device current first.
// The cached descriptors are host objects (plain C++ heap objects of the library) used only through
// `&mut self`, by one thread at a time.
unsafe impl Send for Handle {}

impl Handle {
    /// A handle on `stream`'s device, queueing on `stream` (`hipblasLtCreate`).
    ///
    /// Creating a handle is slow next to a call (the library sets itself up on the device): make one per
    /// stream and keep it.
    ///
    /// # Errors
    ///
    /// [`Error::Blas`] with hipBLASLt's status where the library cannot start on the
    /// device; what HIP returns for the device; with `dynamic-loading`,
    /// [`Error::LibraryNotFound`] where hipBLASLt could not be opened.
    ///
    /// ```no_run
    /// let device = hip::Device::get(0)?;
    /// let stream = hip::Stream::new(&device)?;
    /// let handle = hip::blaslt::Handle::new(&stream)?;
    /// # let _ = handle;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn new(stream: &Stream) -> Result<Handle> {
        let create = || {
            let mut raw: sys::hipblasLtHandle_t = std::ptr::null_mut();
            // SAFETY: a valid out-pointer; the device is current, so the handle is made on it.
            check("hipblasLtCreate", unsafe { sys::hipblasLtCreate(&mut raw) })?;
            Ok(raw)
        };
        let set = |_, _| Ok(());
        // SAFETY: `create` makes a handle on the current device (`hipblasLtCreate`), owned by no one
        // else; `destroy` frees it.
        let bound = unsafe { create_bound(stream, create, destroy, set)? };
        Ok(Handle {
            raw: bound.raw,
            owner: bound.owner,
            uses: bound.uses,
            device: bound.device,
            stream: bound.stream,
            stream_raw: stream.raw(),
            workspace: Workspace::default(),
            workspace_limit: DEFAULT_WORKSPACE_LIMIT,
            cache: HashMap::new(),
            descriptors: descr::DescriptorCache::new(),
        })
    }

    /// Queue later calls on `stream`, which must be on the handle's device ([`Error::DeviceMismatch`]).
    /// Calls already queued stay on the previous stream; the first call on `stream` waits for the
    /// handle's last call there (they may use the workspace), and the memory model orders the two on
    /// shared buffers.
    pub fn set_stream(&mut self, stream: &Stream) -> Result<()> {
        // hipBLASLt takes the stream per call: nothing to bind.
        self.uses.set_stream(
            "blaslt set_stream",
            &self.device,
            &mut self.stream,
            stream,
            |_| Ok(()),
        )?;
        self.stream_raw = stream.raw();
        Ok(())
    }

    /// The device the handle works on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The raw handle, for hipBLASLt calls this crate does not wrap. Order them on the handle's stream
    /// with [`DeviceMemory::track_use`](crate::memory::DeviceMemory::track_use); the handle stays owned by `self`.
    pub fn raw(&self) -> sys::hipblasLtHandle_t {
        self.raw
    }

    /// The most workspace, in bytes, an algorithm may use: the heuristic's limit, and the most the
    /// handle allocates. [`DEFAULT_WORKSPACE_LIMIT`] (32 MiB) unless set.
    pub fn workspace_limit(&self) -> usize {
        self.workspace_limit
    }

    /// Set [`workspace_limit`](Self::workspace_limit). The algorithms the handle chose are forgotten (the
    /// heuristic's answer depends on the limit); a workspace already allocated above the new limit is
    /// released (in the stream's order, after the calls that used it).
    pub fn set_workspace_limit(&mut self, bytes: usize) {
        self.workspace_limit = bytes;
        self.cache.clear();
        if self.workspace.bytes() > bytes {
            self.workspace.release();
        }
    }

    /// Bytes of workspace the handle holds now (0 before a call needed any).
    pub fn workspace_size(&self) -> usize {
        self.workspace.bytes()
    }

    /// The workspace grown to at least `bytes` (≤ the limit, checked by the caller), in the stream's
    /// order: `(pointer, its size)`; null and 0 for none.
    fn workspace(&mut self, bytes: usize) -> Result<(crate::memory::DevicePtr, usize)> {
        let ptr = self.workspace.at_least(&self.stream, bytes)?;
        Ok((
            ptr,
            if bytes == 0 {
                0
            } else {
                self.workspace.bytes()
            },
        ))
    }

    /// Every operand on the handle's device; checked before anything is allocated or queued.
    fn same_devices(&self, operands: &[Operand<'_>]) -> Result<()> {
        for &(device, _, _) in operands {
            same_device("blaslt matmul", &self.device, device)?;
        }
        Ok(())
    }

    /// Start a call: the stream ordered after the operands' conflicting users and recorded as their user
    /// (and as the workspace's writer), the device current. The guard keeps captures from starting or
    /// ending until the call is queued.
    fn begin(&self, operands: &[Operand<'_>]) -> Result<StreamOp<'_>> {
        let state = [self.workspace.operand(), Some(self.uses.operand())];
        begin_call(
            "blaslt matmul",
            &self.device,
            &self.stream,
            operands,
            state,
            |op| {
                // A graph replaying the matmul needs the handle alive.
                self.owner.keep_in_capture(op);
                Ok(())
            },
        )
    }
}

/// `hipblasLtDestroy`, for the handle's [`Owner`]. Queued calls keep their buffers (and the workspace)
/// alive through the memory model; hipBLASLt's kernels belong to the library, not the handle.
///
/// # Safety
/// `raw` is a live hipBLASLt handle, destroyed once.
unsafe fn destroy(raw: sys::hipblasLtHandle_t) {
    // SAFETY: the caller's contract.
    unsafe { sys::hipblasLtDestroy(raw) };
}

/// `Ok` for success, else the error for `call`: [`Error::Blas`], hipBLASLt returning hipBLAS's
/// `hipblasStatus_t`.
#[inline]
pub(crate) fn check(call: &'static str, status: sys::hipblasStatus_t) -> Result<()> {
    crate::error::math_status(&LIBRARY, call, status.0, |raw| Error::Blas {
        call,
        code: BlasErrorCode(raw),
    })
}

const LIBRARY: crate::error::MathLibrary = crate::error::math_library!(
    sys,
    "hipBLASLt (libhipblaslt)",
    "Debian sid or experimental: apt-get install libhipblaslt-dev; ROCm: hipblaslt; or point HIP_RS_HIPBLASLT at the library",
    hipblasLtRsStatusLibraryNotFound,
    hipblasLtRsStatusSymbolNotFound,
);

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_descr;
