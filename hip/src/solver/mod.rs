//! Dense factorizations, solves, eigenvalues and singular values through hipSOLVER (over rocSOLVER on
//! AMD, cuSOLVER on HIP's NVIDIA platform). Feature `solver`: `hip = { features = ["solver"] }`, over
//! `hipsolver-sys` (bindgen over the installed `hipsolver/hipsolver.h`).
//!
//! ```no_run
//! use hip::prelude::*;
//! use hip::solver::{Handle, Uplo};
//!
//! let device = Device::get(0)?;
//! let stream = Stream::new(&device)?;
//! let mut solver = Handle::new(&stream)?;
//! // A symmetric positive definite 2x2 matrix (column-major) and a right-hand side.
//! let mut a = DeviceBuffer::from_slice(&device, &[4.0f64, 2.0, 2.0, 3.0])?;
//! let mut b = DeviceBuffer::from_slice(&device, &[2.0f64, 1.0])?;
//! solver.potrf(Uplo::Lower, 2, &mut a, 2)?.check()?; // Cholesky: A = L L^T
//! solver.potrs(Uplo::Lower, 2, 1, &a, 2, &mut b, 2)?.check()?; // solves A x = b into b
//! assert_eq!(b.to_vec()?, [0.5, 0.0]);
//! # Ok::<(), hip::Error>(())
//! ```
//!
//! # Layout and checks
//!
//! Matrices are column-major, as in LAPACK: element `(i, j)` of a matrix with leading dimension `ld` is
//! at `i + j * ld`. Before any call every size, leading dimension and batch count is checked against the
//! buffers: each buffer must hold every element the call reads or writes (`ld * (cols - 1) + rows`; a
//! larger buffer is fine), leading dimensions are at least the rows (and 1), and every value fits
//! hipSOLVER's C `int`. A shape that fails is an [`Error::InvalidArgument`] naming the operand, and
//! nothing is queued. Buffers must be on the handle's device ([`Error::DeviceMismatch`]).
//!
//! # Ordering, workspace, and `info`
//!
//! Calls are queued on the handle's stream and return at once, ordered by the memory model like every
//! other operation of this crate (see the [`memory`](crate::memory) module). The handle owns its
//! workspace: asked of the library (`*_bufferSize`) before each call, grown when a call needs more,
//! allocated in the stream's order (`hipMallocAsync` where the device has memory pools) and ordered as
//! written by every call. The answer is in bytes on AMD (hipSOLVER's rocSOLVER backend sizes rocBLAS's
//! workspace) and in elements on HIP's NVIDIA platform (cuSOLVER): the handle allocates that many
//! bytes, or elements, plus what hipSOLVER carves off the front on AMD (`syevd`/`heevd`: `n` reals).
//!
//! Every call that has one returns its `info` result as an [`Info`]: a small device buffer the call
//! writes, which nothing reads behind the caller's back, as long as the backend that writes the most
//! writes (`potrs_batched`: one per matrix, which the rocSOLVER backend zeroes; cuSOLVER writes one), and
//! zeroed first where a backend leaves some of it unwritten. [`Info::check`] is the documented point where
//! the host waits for the call (for that buffer's writer only, not the whole stream) and turns a
//! non-zero `info` into [`Error::NoSolution`]: [`SolverFailure::NotPositiveDefinite`] (`potrf`),
//! [`SolverFailure::Singular`] (`getrf`), [`SolverFailure::NotConverged`] (`syevd`, `gesvd`). An `Info`
//! dropped unchecked costs nothing and waits for nothing. A `hipsolverStatus_t` other than success is
//! an [`Error::Solver`] keeping the raw status ([`SolverErrorCode::status`] gives its DTL status); with
//! `dynamic-loading`, a missing libhipsolver is [`Error::LibraryNotFound`].
//!
//! # What it has
//!
//! | call | hipSOLVER | notes |
//! | --- | --- | --- |
//! | [`Handle::potrf`], [`Handle::potrs`] | `hipsolver?potrf`, `?potrs` | Cholesky |
//! | [`Handle::getrf`], [`Handle::getrs`] | `?getrf` (with pivots), `?getrs` | LU |
//! | [`Handle::geqrf`], [`Handle::ormqr`] | `?geqrf`, `?ormqr` / `?unmqr` | QR, and applying `Q` |
//! | [`Handle::syevd`] | `?syevd` / `?heevd` | symmetric / Hermitian eigenvalues, optionally vectors |
//! | [`Handle::gesvd`] | `?gesvd` | SVD; on HIP's NVIDIA platform (cuSOLVER) only `m >= n` |
//! | [`Handle::potrf_batched`], [`Handle::potrs_batched`] | `?potrfBatched`, `?potrsBatched` | many small matrices |
//!
//! for `f32`, `f64`, [`Complex32`] and [`Complex64`] ([`SolverScalar`]). `Handle` is `Send`, not `Sync`.
//!
//! # Versions
//!
//! | hipSOLVER | ROCm | Debian | soname |
//! | --- | --- | --- | --- |
//! | 1.4 (5.2.3) | 5.2 | (NVIDIA build from source) | `libhipsolver.so.0` |
//! | 5.5.1 | 5.5 | trixie | `libhipsolver.so.0` |
//! | 2.4.0 (6.4.1) | 6.4 | sid | `libhipsolver.so.0` |
//! | 7.2.4 | 7.2 | experimental | as packaged (the loader tries `.so.1`, then `.so.0`) |
//!
//! Debian bookworm packages no hipSOLVER: there `--features solver` stops the build with a
//! message listing every place tried and what to install, unless `dynamic-loading` is on (the committed
//! hipSOLVER 2.4.0 bindings are used, and the library is opened at run time; `HIP_RS_HIPSOLVER` names a
//! file). On HIP's NVIDIA platform hipSOLVER's NVIDIA backend is built from its source over cuSOLVER
//! (`scripts/build-math-nvidia.sh solver`), and a program needs cuSOLVER, cuBLAS(Lt) and cuSPARSE at run
//! time beside CUDA's runtime.

mod batched;
mod calls;
mod impls;
mod info;
mod reuse;
mod sizes;
mod types;

pub use self::info::Info;
pub use self::types::SolverScalar;
/// The raw bindings (`hipsolver-sys`).
pub use hipsolver_sys;
/// The `num-complex` crate: [`Complex32`] and [`Complex64`] are the complex element types.
pub use num_complex;
pub use num_complex::{Complex32, Complex64};

use crate::device::Device;
use crate::error::{Error, Result};
pub use crate::error::{SolverErrorCode, SolverFailure};
use crate::library::{begin_call, create_bound, HandleUse, Owner, Workspace};
use crate::memory::{DeviceBuffer, DevicePtr};
use crate::stream::{Stream, StreamHandle, StreamOp};
use hipsolver_sys as sys;
use std::os::raw::c_int;
use std::sync::Arc;

/// The version of the hipSOLVER headers this crate was built against (1.x for ROCm 5, 2.x for ROCm 6).
pub const HEADER_VERSION: (u32, u32, u32) = sys::HEADER_VERSION;

/// Which triangle of a symmetric / Hermitian matrix a call reads (and, for a factorization, writes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Uplo {
    /// The lower triangle (`HIPSOLVER_FILL_MODE_LOWER`).
    Lower,
    /// The upper triangle (`HIPSOLVER_FILL_MODE_UPPER`).
    Upper,
}

/// An operation on a matrix operand: as is, transposed, or conjugate-transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `A`.
    N,
    /// `A^T`.
    T,
    /// `A^H` (the same as `T` for real types).
    C,
}

/// Which side `Q` multiplies from in [`Handle::ormqr`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// `op(Q) C`.
    Left,
    /// `C op(Q)`.
    Right,
}

/// What [`Handle::syevd`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eigen {
    /// Eigenvalues only; the matrix is overwritten with intermediate values.
    Values,
    /// Eigenvalues, and the orthonormal eigenvectors in the matrix's columns.
    Vectors,
}

/// Which singular vectors [`Handle::gesvd`] computes, for `U` and for `V^H` each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SvdVectors {
    /// All of them (`'A'`): `U` is `m x m`, `V^H` is `n x n`.
    All,
    /// The first `min(m, n)` (`'S'`): `U` is `m x min(m, n)`, `V^H` is `min(m, n) x n`.
    Thin,
    /// None (`'N'`): the buffer is not touched and may be empty.
    None,
}

/// A hipSOLVER handle bound to a stream of one device (`hipsolverHandle_t`), with the workspace it
/// owns. Every call is queued on that stream. Destroyed on drop.
///
/// `Send` (it may move to another thread) but not `Sync`: its calls take `&mut self` (the workspace may
/// grow), and hipSOLVER handles are not for concurrent use.
pub struct Handle {
    raw: sys::hipsolverHandle_t,
    /// Owns `raw`: held, never read (no solver call is captured, so no graph shares it); dropping it
    /// destroys the handle, on the releasing thread inside a host function.
    _owner: Arc<Owner<sys::hipsolverHandle_t>>,
    /// Written by every call: orders the calls of this handle across streams.
    uses: HandleUse,
    device: Device,
    stream: Arc<StreamHandle>,
    /// The workspace every call is given, grown on demand; ordered as written by every call.
    workspace: Workspace,
    /// The last batched call's table of matrix addresses, reused while the addresses are the same.
    table: Option<batched::PointerTable>,
    /// The `_bufferSize` answers of recent calls, per call and shape.
    queries: reuse::Queries,
    /// `info` buffers of dropped [`Info`]s, for later calls.
    infos: Arc<reuse::InfoPool>,
}

// SAFETY: a hipSOLVER handle may be used from any thread, one at a time: every use takes `&mut self` or
// `&self` of a type that is not `Sync`, and each call makes the handle's device current first.
unsafe impl Send for Handle {}

use crate::dense_shape::Operand;

impl Handle {
    /// A handle on `stream`'s device, queueing on `stream` (`hipsolverCreate`, `hipsolverSetStream`).
    ///
    /// Creating a handle is slow next to a call (the library sets itself up on the device): make one per
    /// stream and keep it.
    ///
    /// # Errors
    ///
    /// [`Error::Solver`] with hipSOLVER's status where the library cannot start on the
    /// device; what HIP returns for the device; with `dynamic-loading`,
    /// [`Error::LibraryNotFound`] where hipSOLVER could not be opened.
    ///
    /// ```no_run
    /// let device = hip::Device::get(0)?;
    /// let stream = hip::Stream::new(&device)?;
    /// let handle = hip::solver::Handle::new(&stream)?;
    /// # let _ = handle;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn new(stream: &Stream) -> Result<Handle> {
        let create = || {
            let mut raw: sys::hipsolverHandle_t = std::ptr::null_mut();
            // SAFETY: a valid out-pointer; the device is current, so the handle is made on it.
            check("hipsolverCreate", unsafe { sys::hipsolverCreate(&mut raw) })?;
            Ok(raw)
        };
        let set = |raw, s| {
            // SAFETY: the live handle just made; the stream is live (kept by the handle) and
            // on the handle's device.
            check("hipsolverSetStream", unsafe {
                sys::hipsolverSetStream(raw, s)
            })
        };
        // SAFETY: `create` makes a handle on the current device (`hipsolverCreate`), owned by no one
        // else; `destroy` frees it.
        let bound = unsafe { create_bound(stream, create, destroy, set)? };
        Ok(Handle {
            raw: bound.raw,
            _owner: bound.owner,
            uses: bound.uses,
            device: bound.device,
            stream: bound.stream,
            workspace: Workspace::default(),
            table: None,
            queries: reuse::Queries::default(),
            infos: Arc::default(),
        })
    }

    /// Queue later calls on `stream`, which must be on the handle's device ([`Error::DeviceMismatch`]).
    /// Calls already queued stay on the previous stream; the memory model orders the two on shared
    /// buffers, and on the workspace.
    pub fn set_stream(&mut self, stream: &Stream) -> Result<()> {
        let raw = self.raw;
        self.uses.set_stream(
            "solver set_stream",
            &self.device,
            &mut self.stream,
            stream,
            |s| {
                // SAFETY: live handle; the stream is live and on the handle's device (checked), kept
                // alive by the handle while used.
                check("hipsolverSetStream", unsafe {
                    sys::hipsolverSetStream(raw, s)
                })
            },
        )?;
        Ok(())
    }

    /// The device the handle works on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The raw handle, for hipSOLVER calls this crate does not wrap. Order them on the handle's stream
    /// with [`DeviceMemory::track_use`](crate::memory::DeviceMemory::track_use); the handle stays owned by `self`.
    pub fn raw(&self) -> sys::hipsolverHandle_t {
        self.raw
    }

    /// The bytes of workspace the handle holds now (0 before the first call that needs one).
    pub fn workspace_bytes(&self) -> usize {
        self.workspace.bytes()
    }

    /// A workspace of at least `bytes` (null for 0), grown in the stream's order.
    fn workspace(&mut self, bytes: usize) -> Result<DevicePtr> {
        self.workspace.at_least(&self.stream, bytes)
    }

    /// The `info` buffer of `call` on `batch_count` problems (1 for an unbatched call): as many ints as
    /// the backend that writes the most writes ([`sizes::info_len`]: `potrsBatched` on rocSOLVER zeroes
    /// `batch_count`, where cuSOLVER writes one), zeroed first in the stream's order where some backend
    /// or version leaves some of them unwritten ([`sizes::info_zeroed`]); otherwise not zeroed (no
    /// memset on the device per call). A buffer of a dropped [`Info`] of the same length is reused (its
    /// record orders this call after its last reader); else one is allocated in the stream's order.
    fn info(&self, call: sizes::InfoCall, batch_count: usize) -> Result<DeviceBuffer<i32>> {
        let len = sizes::info_len(call, batch_count);
        let zeroed = sizes::info_zeroed(call, batch_count);
        // While capturing, no buffer is taken from the pool: a stream-ordered allocation refuses the
        // capture, as every solver call does (`begin`).
        match self.infos.take(len) {
            Some(mut kept) if !self.stream.is_capturing() => {
                if zeroed {
                    let stream = Stream::from_handle(&self.stream);
                    stream.fill_async(&mut kept, 0)?;
                }
                Ok(kept)
            }
            kept => {
                if let Some(kept) = kept {
                    self.infos.put(kept);
                }
                if zeroed {
                    return DeviceBuffer::zeroed_async_on(&self.stream, len);
                }
                // SAFETY: read only through `Info`, after the call, which writes every element: for the
                // calls `info_zeroed` leaves out, every backend writes `info_len` ints whenever the
                // problem is not empty, and empty problems never reach the library (`answered`); a call
                // that fails to queue drops it unread.
                unsafe { DeviceBuffer::alloc_async_on(&self.stream, len) }
            }
        }
    }

    /// The [`Info`] of a call queued with `values`, which go back to the handle's pool when it drops.
    fn outcome(
        &self,
        call: &'static str,
        meaning: info::Meaning,
        batched: bool,
        values: DeviceBuffer<i32>,
    ) -> Info {
        Info::new(call, meaning, batched, values, Arc::clone(&self.infos))
    }

    /// The [`Info`] of an empty problem, answered without calling the library (which may return early
    /// without writing `info`): `count` zeros, in the stream's order.
    fn answered(
        &self,
        call: &'static str,
        meaning: info::Meaning,
        batched: bool,
        count: usize,
    ) -> Result<Info> {
        let values = DeviceBuffer::zeroed_async_on(&self.stream, count)?;
        Ok(self.outcome(call, meaning, batched, values))
    }

    /// Start a call: every operand on the handle's device, the stream ordered after their conflicting
    /// users and recorded as their user (and as the workspace's writer), the device current. The guard
    /// keeps captures from starting or ending until the call is queued.
    fn begin(&self, what: &'static str, operands: &[Operand<'_>]) -> Result<StreamOp<'_>> {
        let state = [self.workspace.operand(), Some(self.uses.operand())];
        begin_call(what, &self.device, &self.stream, operands, state, |_| {
            // Every call's `info` is allocated in stream order, which a capture refuses; a capture that
            // began since (from another thread) is refused the same way here, before anything is
            // recorded.
            Err(Error::InvalidArgument {
                what: "stream of a hipSOLVER call",
                value: format!("stream {}", self.stream.id),
                reason: "it is being captured: hipSOLVER calls allocate their info in stream \
                         order, which a capture refuses; call them before the capture begins"
                    .into(),
            })
        })
    }

    /// Ask a `_bufferSize` function: its raw answer, bytes on rocSOLVER and elements on cuSOLVER
    /// ([`sizes::workspace`] turns it into what to allocate). The answer for `call` with the sizes and
    /// modes `shape` is kept: the same call on the same shape asks the library once.
    fn query<const N: usize>(
        &mut self,
        call: &'static str,
        shape: [i64; N],
        f: impl FnOnce(sys::hipsolverHandle_t, *mut i32) -> sys::hipsolverStatus_t,
    ) -> Result<c_int> {
        let key = reuse::QueryKey::new(call, shape);
        if let Some(answer) = self.queries.get(&key) {
            return Ok(answer);
        }
        self.device.bind()?;
        let mut lwork = 0i32;
        check(call, f(self.raw, &mut lwork))?;
        self.queries.put(key, lwork);
        Ok(lwork)
    }
}

/// `hipsolverDestroy`, for the handle's [`Owner`]. Work it queued may still run: the buffers it uses
/// (and the workspace, dropped after this in stream order) are freed only after their recorded users;
/// the library's own state is freed by the library, which synchronizes first (cuSOLVER, rocBLAS's
/// handle destruction).
///
/// # Safety
/// `raw` is a live hipSOLVER handle, destroyed once.
unsafe fn destroy(raw: sys::hipsolverHandle_t) {
    // SAFETY: the caller's contract.
    unsafe { sys::hipsolverDestroy(raw) };
}

/// `Ok` for success, else the error for `call`.
#[inline]
pub(crate) fn check(call: &'static str, status: sys::hipsolverStatus_t) -> Result<()> {
    crate::error::math_status(&LIBRARY, call, status.0, |raw| Error::Solver {
        call,
        code: SolverErrorCode(raw),
    })
}

const LIBRARY: crate::error::MathLibrary = crate::error::math_library!(
    sys,
    "hipSOLVER (libhipsolver)",
    "Debian sid or newer: apt-get install libhipsolver-dev; ROCm: hipsolver; or point HIP_RS_HIPSOLVER at the library",
    hipsolverRsStatusLibraryNotFound,
    hipsolverRsStatusSymbolNotFound,
);

// The fill, operation and side values: `HIPSOLVER_FILL_MODE_*`, `HIPSOLVER_OP_*` and `HIPSOLVER_SIDE_*`
// in hipSOLVER 1.x, hipblas-common's `HIPBLAS_*` (which hipSOLVER's types alias) from 2.x: the same
// numbers under either name, so they are spelled here once for every version.
fn raw_uplo(u: Uplo) -> sys::hipsolverFillMode_t {
    match u {
        Uplo::Upper => 121,
        Uplo::Lower => 122,
    }
}

fn raw_op(op: Op) -> sys::hipsolverOperation_t {
    match op {
        Op::N => 111,
        Op::T => 112,
        Op::C => 113,
    }
}

fn raw_side(side: Side) -> sys::hipsolverSideMode_t {
    match side {
        Side::Left => 141,
        Side::Right => 142,
    }
}

#[cfg(test)]
mod tests;
