//! Sparse matrices and their products through hipSPARSE (over rocSPARSE on AMD, cuSPARSE on HIP's NVIDIA
//! platform). Feature `sparse`: `hip = { features = ["sparse"] }`, over `hipsparse-sys` (bindgen over the
//! installed `hipsparse/hipsparse.h`).
//!
//! ```no_run
//! use hip::prelude::*;
//! use hip::sparse::{Csr, Handle, Op};
//!
//! let device = Device::get(0)?;
//! let stream = Stream::new(&device)?;
//! let mut sparse = Handle::new(&stream)?;
//! // [[2, 0, 1], [0, 3, 0]] in CSR form.
//! let a = Csr::from_host(&device, 2, 3, &[0, 2, 3], &[0, 2, 1], &[2.0f32, 1.0, 3.0])?;
//! let x = DeviceBuffer::from_slice(&device, &[1.0f32, 1.0, 1.0])?;
//! let mut y = DeviceBuffer::<f32>::zeroed(&device, 2)?;
//! sparse.spmv(Op::N, 1.0, &a, &x, 0.0, &mut y)?; // y = A x
//! assert_eq!(y.to_vec()?, [3.0, 3.0]);
//! # Ok::<(), hip::Error>(())
//! ```
//!
//! # What keeps it sound
//!
//! A sparse call follows the matrix's indices into other buffers without checking them, so the matrices
//! here are valid by construction: [`Csr`] and [`Coo`] own their index and value buffers, check the
//! structure when made (from host arrays, or from device buffers copied into buffers only the matrix
//! holds and read back from there: a graph that captured a write to a given buffer cannot reach the
//! copy), and never hand the index buffers out mutably. Dense operands are checked against their buffers before every call (each
//! holds every element the call reaches; leading dimensions at least the rows), and everything must be on
//! the handle's device. A shape that fails is an [`Error::InvalidArgument`] and nothing is queued.
//!
//! Calls are queued on the handle's stream and return at once, ordered by the memory model (see the
//! [`memory`](crate::memory) module). The library's scratch buffer (`*_bufferSize`) is the handle's,
//! grown in the stream's order and ordered as written by every call. The calls whose result size the
//! library computes on the device ([`Handle::spgemm`], [`Csr::from_dense`]) wait for that count: said at
//! each. A `hipsparseStatus_t` other than success is an [`Error::Sparse`] keeping the raw status
//! ([`SparseErrorCode::status`](crate::SparseErrorCode::status) gives its DTL status).
//!
//! # What it has
//!
//! | call | hipSPARSE |
//! | --- | --- |
//! | [`Handle::spmv`] (`y = alpha op(A) x + beta y`, CSR or COO) | `hipsparseSpMV` |
//! | [`Handle::spmm`] (`C = alpha op(A) B + beta C`, `B`, `C` dense column-major) | `hipsparseSpMM` |
//! | [`Handle::spgemm`] (`C = A B`, CSR) | `hipsparseSpGEMM_*` |
//! | [`Csr::to_coo`], [`Coo::to_csr`] | `hipsparseXcsr2coo`, `hipsparseXcoo2csr` |
//! | [`Csr::to_dense`], [`Csr::from_dense`] | `hipsparseSparseToDense`, `hipsparseDenseToSparse_*` |
//!
//! for `f32`, `f64`, [`Complex32`] and [`Complex64`] ([`SparseScalar`]), 32-bit indices, 0-based.
//!
//! # Versions
//!
//! | hipSPARSE | ROCm | Debian | soname |
//! | --- | --- | --- | --- |
//! | 2.2 (5.2.3) | 5.2 | (NVIDIA build from source) | `libhipsparse.so.0` |
//! | 2.3.2 (5.3.3) | 5.3 | bookworm | `libhipsparse.so.0` |
//! | 5.7.1 | 5.7 | trixie | `libhipsparse.so.0` |
//! | 3.2.0 (6.4.3) | 6.4 | sid | `libhipsparse.so.1` |
//! | 7.2.4 | 7.2 | experimental | as packaged (the loader tries `.so.4`, `.so.1`, `.so.0`) |

mod calls;
mod convert;
mod descr;
mod matrix;
mod plan;

pub use self::descr::SparseMatrix;
pub use self::matrix::{Coo, Csr};
/// The raw bindings (`hipsparse-sys`).
pub use hipsparse_sys;
/// The `num-complex` crate: [`Complex32`] and [`Complex64`] are the complex element types.
pub use num_complex;
pub use num_complex::{Complex32, Complex64};

use crate::device::Device;
use crate::error::{Error, Result, SparseErrorCode};
use crate::library::{begin_call, create_bound, HandleUse, Owner, Workspace};
use crate::memory::{DeviceCopy, DevicePtr};
use crate::stream::{Stream, StreamHandle, StreamOp};
use hipsparse_sys as sys;
use std::sync::Arc;

/// The version of the hipSPARSE headers this crate was built against.
pub const HEADER_VERSION: (u32, u32, u32) = sys::HEADER_VERSION;

mod sealed {
    pub trait Sealed {}
}

/// An element type of hipSPARSE's generic calls: `f32`, `f64`, [`Complex32`], [`Complex64`].
pub trait SparseScalar: DeviceCopy + sealed::Sealed {
    /// The `hipDataType` value (`HIP_R_32F` 0, `HIP_R_64F` 1, `HIP_C_32F` 4, `HIP_C_64F` 5: the same
    /// numbers as CUDA's `cudaDataType` on HIP's NVIDIA platform).
    #[doc(hidden)]
    const DATA_TYPE: u32;
    /// 1 and 0 of the type (the scalars of a plain product).
    #[doc(hidden)]
    const ONE: Self;
    #[doc(hidden)]
    const ZERO: Self;
}

/// One element type and its `hipDataType` value; its 1 and 0 are `1.0` and `0.0`, complex for a complex
/// type.
macro_rules! scalar {
    (real $t:ty, $v:expr) => {
        scalar!($t, $v, 1.0, 0.0);
    };
    (complex $t:ty, $v:expr) => {
        scalar!($t, $v, <$t>::new(1.0, 0.0), <$t>::new(0.0, 0.0));
    };
    ($t:ty, $v:expr, $one:expr, $zero:expr) => {
        impl sealed::Sealed for $t {}
        impl SparseScalar for $t {
            const DATA_TYPE: u32 = $v;
            const ONE: Self = $one;
            const ZERO: Self = $zero;
        }
    };
}
scalar!(real f32, 0);
scalar!(real f64, 1);
scalar!(complex Complex32, 4);
scalar!(complex Complex64, 5);

/// An operation on the sparse operand: as is, transposed, or conjugate-transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `A`.
    N,
    /// `A^T`.
    T,
    /// `A^H` (the same as `T` for real types).
    C,
}

/// A hipSPARSE handle bound to a stream of one device (`hipsparseHandle_t`), with the scratch buffer
/// it owns. Every call is queued on that stream. Destroyed on drop.
///
/// `Send` (it may move to another thread) but not `Sync`: its calls take `&mut self`.
pub struct Handle {
    raw: sys::hipsparseHandle_t,
    /// Owns `raw`: destroyed when the handle and every graph that captured a call on it are gone.
    owner: Arc<Owner<sys::hipsparseHandle_t>>,
    /// Written by every call: orders the calls of this handle across streams and graphs.
    uses: HandleUse,
    device: Device,
    stream: Arc<StreamHandle>,
    buffer: Workspace,
    /// The last [`spmv`](Handle::spmv) problem's descriptors and scratch size, reused while the
    /// problem is the same.
    spmv: Option<plan::SpmvPlan>,
}

// SAFETY: a hipSPARSE handle may be used from any thread, one at a time: every use takes `&mut self` or
// `&self` of a type that is not `Sync`, and each call makes the handle's device current first.
unsafe impl Send for Handle {}

use crate::dense_shape::Operand;

impl Handle {
    /// A handle on `stream`'s device, queueing on `stream` (`hipsparseCreate`, `hipsparseSetStream`).
    ///
    /// Creating a handle is slow next to a call (the library sets itself up on the device): make one per
    /// stream and keep it.
    ///
    /// # Errors
    ///
    /// [`Error::Sparse`] with hipSPARSE's status where the library cannot start on the
    /// device; what HIP returns for the device; with `dynamic-loading`,
    /// [`Error::LibraryNotFound`] where hipSPARSE could not be opened.
    ///
    /// ```no_run
    /// let device = hip::Device::get(0)?;
    /// let stream = hip::Stream::new(&device)?;
    /// let handle = hip::sparse::Handle::new(&stream)?;
    /// # let _ = handle;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn new(stream: &Stream) -> Result<Handle> {
        let create = || {
            let mut raw: sys::hipsparseHandle_t = std::ptr::null_mut();
            // SAFETY: a valid out-pointer; the device is current, so the handle is made on it.
            check("hipsparseCreate", unsafe { sys::hipsparseCreate(&mut raw) })?;
            Ok(raw)
        };
        let set = |raw, s| {
            // SAFETY: the live handle just made; the stream is live (kept by the handle) and
            // on the handle's device.
            check("hipsparseSetStream", unsafe {
                sys::hipsparseSetStream(raw, s)
            })
        };
        // SAFETY: `create` makes a handle on the current device (`hipsparseCreate`), owned by no one
        // else; `destroy` frees it.
        let bound = unsafe { create_bound(stream, create, destroy, set)? };
        Ok(Handle {
            raw: bound.raw,
            owner: bound.owner,
            uses: bound.uses,
            device: bound.device,
            stream: bound.stream,
            buffer: Workspace::default(),
            spmv: None,
        })
    }

    /// Queue later calls on `stream`, which must be on the handle's device ([`Error::DeviceMismatch`]).
    pub fn set_stream(&mut self, stream: &Stream) -> Result<()> {
        let raw = self.raw;
        self.uses.set_stream(
            "sparse set_stream",
            &self.device,
            &mut self.stream,
            stream,
            |s| {
                // SAFETY: live handle; the stream is live and on the handle's device (checked), kept
                // alive by the handle while used.
                check("hipsparseSetStream", unsafe {
                    sys::hipsparseSetStream(raw, s)
                })
            },
        )?;
        Ok(())
    }

    /// The device the handle works on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The raw handle, for hipSPARSE calls this crate does not wrap. Order them on the handle's stream
    /// with [`DeviceMemory::track_use`](crate::memory::DeviceMemory::track_use); the handle stays owned by `self`.
    pub fn raw(&self) -> sys::hipsparseHandle_t {
        self.raw
    }

    /// A scratch buffer of at least `bytes` (null for 0), grown in the stream's order.
    fn scratch(&mut self, bytes: usize) -> Result<DevicePtr> {
        self.buffer.at_least(&self.stream, bytes)
    }

    /// Start a call: every operand on the handle's device, the stream ordered after their conflicting
    /// users and recorded as their user (and as the scratch buffer's and the handle's writer), the
    /// device current. A capture keeps the handle alive for its graph. The guard keeps captures from
    /// starting or ending until the call is queued.
    fn begin(&self, what: &'static str, operands: &[Operand<'_>]) -> Result<StreamOp<'_>> {
        let state = [self.buffer.operand(), Some(self.uses.operand())];
        begin_call(what, &self.device, &self.stream, operands, state, |op| {
            // A graph replaying the call after the handle was dropped would use a destroyed handle.
            self.owner.keep_in_capture(op);
            Ok(())
        })
    }
}

/// `hipsparseDestroy`, for the handle's [`Owner`]. Queued work keeps its buffers alive through the
/// memory model (the scratch buffer too, freed after this in stream order); the library frees only its
/// own host state here.
///
/// # Safety
/// `raw` is a live hipSPARSE handle, destroyed once.
unsafe fn destroy(raw: sys::hipsparseHandle_t) {
    // SAFETY: the caller's contract.
    unsafe { sys::hipsparseDestroy(raw) };
}

/// `Ok` for success, else the error for `call`.
#[inline]
pub(crate) fn check(call: &'static str, status: sys::hipsparseStatus_t) -> Result<()> {
    crate::error::math_status(&LIBRARY, call, status.0, |raw| Error::Sparse {
        call,
        code: SparseErrorCode(raw),
    })
}

const LIBRARY: crate::error::MathLibrary = crate::error::math_library!(
    sys,
    "hipSPARSE (libhipsparse)",
    "Debian: apt-get install libhipsparse-dev; ROCm: hipsparse; or point HIP_RS_HIPSPARSE at the library",
    hipsparseRsStatusLibraryNotFound,
    hipsparseRsStatusSymbolNotFound,
);

fn raw_op(op: Op) -> sys::hipsparseOperation_t {
    match op {
        Op::N => sys::HIPSPARSE_OPERATION_NON_TRANSPOSE,
        Op::T => sys::HIPSPARSE_OPERATION_TRANSPOSE,
        Op::C => sys::HIPSPARSE_OPERATION_CONJUGATE_TRANSPOSE,
    }
}

#[cfg(test)]
mod tests;
