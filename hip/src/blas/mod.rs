//! Dense linear algebra through hipBLAS (over rocBLAS on AMD, cuBLAS on HIP's NVIDIA platform). Feature
//! `blas`: `hip = { features = ["blas"] }`, over `hipblas-sys` (bindgen over the installed
//! `hipblas/hipblas.h`).
//!
//! ```no_run
//! use hip::prelude::*;
//! use hip::blas::{Gemm, Handle};
//!
//! let device = Device::get(0)?;
//! let stream = Stream::new(&device)?;
//! let blas = Handle::new(&stream)?;
//! // Row-major 2x3 times 3x2, as NumPy stores them.
//! let a = DeviceBuffer::from_slice(&device, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! let b = DeviceBuffer::from_slice(&device, &[1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0])?;
//! let mut c = DeviceBuffer::<f32>::zeroed(&device, 4)?;
//! blas.gemm(&Gemm::row_major(2, 2, 3), 1.0, &a, &b, 0.0, &mut c)?;
//! assert_eq!(c.to_vec()?, [4.0, 5.0, 10.0, 11.0]);
//! # Ok::<(), hip::Error>(())
//! ```
//!
//! # Layout
//!
//! hipBLAS, like every BLAS, stores matrices column-major: element `(i, j)` of a matrix with leading
//! dimension `ld` is at `i + j * ld`. [`Gemm::new`] describes such operands; [`Gemm::row_major`] takes
//! row-major ones (C, NumPy) and runs the column-major product of the transposes, which is the same
//! memory (`C^T = B^T A^T`): no copy, no transpose kernel.
//!
//! # What is checked, and what keeps it sound
//!
//! Before any call, every dimension, leading dimension, increment, stride and batch count is checked
//! against the buffers: each operand must hold every element the call reads or writes (a larger buffer
//! is fine), leading dimensions are at least the stored rows, increments are non-zero, the products of a
//! strided batch never write the same elements, and every value fits hipBLAS's C `int` / 64-bit stride.
//! A shape that fails is an [`Error::InvalidArgument`] naming the operand (`"gemm operand b"`), and
//! nothing is queued. Buffers and scalars must be on the handle's device ([`Error::DeviceMismatch`]).
//! Every `hipblasStatus_t` other than success is an [`Error::Blas`] keeping the raw status.
//!
//! Calls are queued on the handle's stream and return at once, ordered by the memory model like every
//! other operation of this crate (see the [`memory`](crate::memory) module): the stream first waits for
//! other streams' conflicting work on the operands, later operations on them wait for the call, and a
//! buffer is freed only after the stream is done with it. [`Handle::set_stream`] moves the handle to
//! another stream of its device.
//!
//! # Scalars
//!
//! `alpha` and `beta` are host values by default (`1.0`, `Complex32::new(0.0, 1.0)`), read when the call
//! is made. [`Scalar::device`] takes them from device memory instead (hipBLAS's pointer mode device),
//! read when the call runs, for values computed on the device; `alpha` and `beta` of one call must both be
//! host values or both device values. Results (`dot`, `nrm2`) come back to the host, waiting for the
//! call, or into device memory without waiting ([`Handle::dot_into`], [`Handle::nrm2_into`]).
//!
//! # What it has
//!
//! | call | hipBLAS | element types |
//! | --- | --- | --- |
//! | [`Handle::new`], [`Handle::set_stream`], [`Handle::raw`] | `hipblasCreate`, `hipblasSetStream` | |
//! | [`Handle::axpy`], [`Handle::scal`] | `hipblas?axpy`, `?scal` | `f32`, `f64`, [`Complex32`], [`Complex64`] |
//! | [`Handle::dot`] / [`Handle::dotc`] (host result), [`Handle::dot_into`] (device result) | `?dot`, `?dotu`, `?dotc` | same |
//! | [`Handle::nrm2`] (host), [`Handle::nrm2_into`] (device) | `?nrm2`, `?cnrm2` / `?znrm2` | same (real result) |
//! | [`Handle::gemv`] | `?gemv` | same |
//! | [`Handle::gemm`], [`Handle::gemm_strided_batched`], [`Handle::gemm_batched`] | `?gemm`, `?gemmStridedBatched`, `?gemmBatched` | same |
//! | [`Handle::gemm_ex`] | `hipblasGemmEx` (`_v2` on hipBLAS 2.x) | `f16`, `bf16`, `f32` inputs; `f16` / `bf16` / `f32` output; F32 or F16 compute ([`ComputeType`]) |
//! | [`Handle::asum`] (host), [`Handle::asum_into`] (device) | `?asum`, `hipblasScasum` / `hipblasDzasum` | `f32`, `f64`, [`Complex32`], [`Complex64`] (real result) |
//! | [`Handle::iamax`], [`Handle::iamin`] (host; **0-based** index, `None` for `n == 0`) | `hipblasI?amax`, `hipblasI?amin` (1-based) | same |
//! | [`Handle::ger`] / [`Handle::gerc`] | `?ger`; `?geru` / `?gerc` for complex | same |
//! | [`Handle::geam`] ([`Geam`]) | `?geam` | same |
//! | [`Handle::trsm`] ([`Trsm`]: [`Side`], [`Uplo`], [`Op`], [`Diag`]) | `?trsm` | same |
//! | [`Handle::syrk`] ([`Syrk`]) | `?syrk` | same (complex: [`Op::N`] or [`Op::T`]) |
//! | [`Handle::herk`] ([`Syrk`], real `alpha` / `beta`) | `hipblasCherk`, `hipblasZherk` | [`Complex32`], [`Complex64`] ([`BlasComplex`]; [`Op::N`] or [`Op::C`]) |
//! | [`Handle::set_atomics_mode`] | `hipblasSetAtomicsMode` | every version |
//! | [`Handle::set_math_mode`] ([`MathMode`]) | `hipblasSetMathMode` | hipBLAS 2.x and 3.x; [`Error::NotSupported`] on 0.x (ROCm 5) |
//!
//! For `gemv`, a row-major `m x n` matrix is the column-major `n x m` one: `Gemv::new(n, m).op(Op::T)`
//! computes `A x`. `Handle` is `Send`, not `Sync`: one thread at a time, as hipBLAS requires.
//! `gemm_batched` builds the device pointer tables itself: uploaded on the handle's stream from pinned
//! memory the handle keeps (a graph keeps a captured call's), so it returns at once and can be captured. A
//! `hipblasStatus_t` maps to its DTL status by [`BlasErrorCode::status`](crate::BlasErrorCode::status);
//! with `dynamic-loading`, a missing libhipblas is [`Error::LibraryNotFound`].
//!
//! # Element types in a kernel
//!
//! The buffers hipBLAS reads and writes are ordinary [`DeviceBuffer`]s, which kernels of your own may
//! read and write too: `f32` / `f64` are `float` / `double`; [`Complex32`] / [`Complex64`]
//! (`num_complex::Complex`, `#[repr(C)] { re, im }`) are `float2` / `double2` (`hipFloatComplex` /
//! `hipDoubleComplex` of `hip/hip_complex.h`, `hipblasComplex` / `hipblasDoubleComplex`): `re` is `.x`,
//! `im` is `.y`; [`half::f16`] is `__half` (`hip/hip_fp16.h`), or an `unsigned short`
//! holding its bits; [`half::bf16`] is `hip_bfloat16` (`hip/hip_bfloat16.h`;
//! `__nv_bfloat16` on NVIDIA), or an `unsigned short` holding its bits. The whole table is in the
//! [`memory`](crate::memory#element-types-in-a-kernel) module.
//!
//! # Versions
//!
//! | hipBLAS | ROCm | Debian | `hipblasGemmEx` | soname |
//! | --- | --- | --- | --- | --- |
//! | 0.51 | 5.2.3 | (NVIDIA build from source) | `hipblasDatatype_t` | `libhipblas.so.0` |
//! | 0.54 (5.5.1) | 5.5 | trixie | `hipblasDatatype_t` | `libhipblas.so.0` |
//! | 2.4.0 (6.4.4) | 6.4 | sid | old form, and `hipblasGemmEx_v2` with `hipDataType` | `libhipblas.so.2` |
//! | 3.2.0 (7.2.4) | 7.2 | experimental | `hipDataType` + `hipblasComputeType_t` only | `libhipblas.so.3` |
//!
//! The crate picks the form from the bindings ([`HEADER_VERSION`]). hipBLAS 3.x has
//! `hipblasSetWorkspace`: there [`Handle::set_workspace`] gives hipBLAS a `DeviceBuffer<u8>` the handle
//! owns until [`Handle::take_workspace`] or drop; every call is ordered as a writer of it, and it is given
//! again after `set_stream` (cuBLAS drops a workspace when its stream changes). Older versions manage
//! their own workspace only: `set_workspace` answers [`Error::NotSupported`] there, `take_workspace`
//! `None`.
//!
//! # Finding hipBLAS when building
//!
//! `hipblas-sys` looks for `include/hipblas/hipblas.h` under, in order: `HIPBLAS_PATH`, the HIP root
//! `hip-sys` found, `ROCM_PATH`, `HIP_PATH`, `/opt/rocm`, `/usr`; the library beside it (`lib`, `lib64`,
//! `lib/<multiarch>`). Install: Debian trixie or newer `apt-get install libhipblas-dev`, ROCm
//! `hipblas-dev`; on HIP's NVIDIA platform hipBLAS's NVIDIA backend is built from its source over cuBLAS.
//! Without it, `--features blas` stops the build with a message listing every place tried and what to
//! install, unless `dynamic-loading` is on: then the committed hipBLAS 2.4.0 bindings are used and
//! `libhipblas.so.2` is opened at run time (`HIP_RS_HIPBLAS` names a file).
//!
//! # Deploying a program
//!
//! Without `dynamic-loading` a program is linked to hipBLAS: the system's loader must find
//! `libhipblas.so.N`, and what it runs on, before `main` starts, or the program dies with "error while
//! loading shared libraries" (exit status 127). On AMD that is rocBLAS; on HIP's NVIDIA platform it is
//! hipBLAS's NVIDIA backend with cuBLAS (`libcublas`, `libcublasLt`), beside what every program of this
//! crate needs there: the CUDA runtime (`libcudart`), NVRTC (`libnvrtc`) and the driver's
//! `libcuda.so.1` (not the CUDA toolkit's `stubs/` copy). With `hip`'s `dynamic-loading` feature nothing
//! of this is linked: each library is opened on first use, and a missing one is
//! [`Error::LibraryNotFound`] (status `backend_not_available`) listing every path tried, so the
//! program can say what to install.

mod calls;
mod gemm_ex;
mod level23;
mod shape;
mod shape23;
mod tables;
mod types;
mod types23;
mod workspace;

pub use self::gemm_ex::{ComputeType, ExScalar, GemmExType};
pub use self::level23::MathMode;
pub use self::shape::{Gemm, Gemv, Op, StridedBatch};
pub use self::shape23::{Diag, Geam, Side, Syrk, Trsm, Uplo};
pub use self::types::BlasScalar;
pub use self::types23::BlasComplex;
/// The raw bindings (`hipblas-sys`).
pub use hipblas_sys;
/// The `num-complex` crate: [`Complex32`] and [`Complex64`] are the complex element types.
pub use num_complex;
pub use num_complex::{Complex32, Complex64};

use crate::device::Device;
use crate::error::{BlasErrorCode, Error, Result};
use crate::event::same_device;
use crate::library::{create_bound, HandleUse, HostScalar, Owner};
use crate::memory::{Access, Allocation, DeviceBuffer, DeviceCopy, DeviceMemory, DevicePtr};
use crate::stream::{Stream, StreamHandle, StreamOp};
use hipblas_sys as sys;
use std::cell::{Cell, RefCell};
use std::sync::Arc;
use tables::{Cache, RelaxedCaptureMode, Table};

/// The version of the hipBLAS headers this crate was built against: 0.x for ROCm 5, 2.x for ROCm 6,
/// 3.x for ROCm 7.
pub const HEADER_VERSION: (u32, u32, u32) = sys::HEADER_VERSION;

/// A hipBLAS handle bound to a stream of one device (`hipblasHandle_t`): every call is queued on that
/// stream. Destroyed on drop.
///
/// `Send` (it may move to another thread) but not `Sync`: hipBLAS handles are not for concurrent use.
/// Make one per thread, or per stream, as hipBLAS advises.
pub struct Handle {
    raw: sys::hipblasHandle_t,
    /// Owns `raw`: destroyed when the handle and every graph that captured a call on it are gone.
    owner: Arc<Owner<sys::hipblasHandle_t>>,
    /// Written by every call: orders the calls of this handle (and its workspace) across streams and
    /// graphs.
    uses: HandleUse,
    device: Device,
    stream: Arc<StreamHandle>,
    stream_raw: sys::hipStream_t,
    /// The pointer mode last set on the handle (`true`: device).
    device_scalars: Cell<bool>,
    /// The caller's workspace (`set_workspace`, hipBLAS 3.x): every call may write it. `None`: hipBLAS's
    /// own.
    workspace: Option<DeviceBuffer<u8>>,
    /// `gemm_batched`'s device pointer tables, each reused once the call that last used it is done
    /// (see `tables`).
    tables: RefCell<Cache<Table>>,
}

// SAFETY: a hipBLAS handle may be used from any thread, one at a time; `Handle` is not `Sync` (the `Cell`
// and `RefCell`), so `&Handle` never crosses threads, and each call makes the handle's device current
// first. The tables are plain memory and events, usable from any thread (`Table` is Send).
unsafe impl Send for Handle {}

impl Handle {
    /// A handle on `stream`'s device, queueing on `stream` (`hipblasCreate`, `hipblasSetStream`).
    ///
    /// Creating a handle is slow next to a call (the library sets itself up on the device): make one per
    /// stream and keep it.
    ///
    /// # Errors
    ///
    /// [`Error::Blas`] with hipBLAS's status where the library cannot start on the
    /// device; what HIP returns for the device; with `dynamic-loading`,
    /// [`Error::LibraryNotFound`] where hipBLAS could not be opened.
    ///
    /// ```no_run
    /// let device = hip::Device::get(0)?;
    /// let stream = hip::Stream::new(&device)?;
    /// let handle = hip::blas::Handle::new(&stream)?;
    /// # let _ = handle;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn new(stream: &Stream) -> Result<Handle> {
        let create = || {
            let mut raw: sys::hipblasHandle_t = std::ptr::null_mut();
            // SAFETY: a valid out-pointer; the device is current, so the handle is made on it.
            check("hipblasCreate", unsafe { sys::hipblasCreate(&mut raw) })?;
            Ok(raw)
        };
        let set = |raw, s| {
            // SAFETY: the live handle just made; the stream is live (kept by the handle) and
            // on the handle's device.
            check("hipblasSetStream", unsafe { sys::hipblasSetStream(raw, s) })
        };
        // SAFETY: `create` makes a handle on the current device (`hipblasCreate`), owned by no one
        // else; `destroy` frees it.
        let bound = unsafe { create_bound(stream, create, destroy, set)? };
        Ok(Handle {
            raw: bound.raw,
            owner: bound.owner,
            uses: bound.uses,
            device: bound.device,
            stream: bound.stream,
            stream_raw: stream.raw(),
            device_scalars: Cell::new(false),
            workspace: None,
            tables: RefCell::new(Cache::default()),
        })
    }

    /// Queue later calls on `stream`, which must be on the handle's device ([`Error::DeviceMismatch`]).
    /// Calls already queued stay on the previous stream; the memory model orders the two on shared
    /// buffers, and on the handle's own device state (the first call on `stream` waits for the handle's
    /// last call on the old one, and nothing else queued there).
    pub fn set_stream(&mut self, stream: &Stream) -> Result<()> {
        let raw = self.raw;
        self.uses.set_stream(
            "blas set_stream",
            &self.device,
            &mut self.stream,
            stream,
            |s| {
                // SAFETY: live handle; the stream is live and on the handle's device (checked), kept
                // alive by the handle while used.
                check("hipblasSetStream", unsafe { sys::hipblasSetStream(raw, s) })
            },
        )?;
        self.stream_raw = stream.raw();
        // cuBLAS goes back to its own workspace when its stream changes: give it the caller's again.
        if self.workspace.is_some() {
            self.apply_workspace()?;
        }
        Ok(())
    }

    /// The device the handle works on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The raw handle, for hipBLAS calls this crate does not wrap. Order them on the handle's stream with
    /// [`DeviceMemory::track_use`]; the handle stays owned by `self`.
    pub fn raw(&self) -> sys::hipblasHandle_t {
        self.raw
    }

    /// Start a call: every operand and device scalar on the handle's device, the stream ordered after
    /// their conflicting users and recorded as their user (and as the workspace's writer, where the
    /// caller gave one), the device current, the pointer mode set for `scalars` (all host values or
    /// all device scalars, else an error). The returned guard keeps captures from starting or ending
    /// until the call is queued.
    #[inline(always)]
    fn begin<T: DeviceCopy>(
        &self,
        what: &'static str,
        operands: &[(&Device, &Arc<Allocation>, Access)],
        scalars: &[&Scalar<'_, T>],
    ) -> Result<StreamOp<'_>> {
        // All host values or all device scalars, checked here too (each call also checks first, with the
        // shapes): one pointer mode covers every scalar of the call.
        let mut device_scalars = scalars.first().is_some_and(|s| s.is_device());
        for pair in scalars.windows(2) {
            device_scalars = scalar_mode(pair[0], pair[1])?;
        }
        self.begin_with_mode(what, operands, scalars, device_scalars)
    }

    /// [`begin`](Self::begin) for a result written to device memory (`dot_into`, `nrm2_into`): pointer
    /// mode device.
    fn begin_device_result(
        &self,
        what: &'static str,
        operands: &[(&Device, &Arc<Allocation>, Access)],
    ) -> Result<StreamOp<'_>> {
        self.begin_with_mode::<u8>(what, operands, &[], true)
    }

    /// The work of [`begin`](Self::begin), as one straight line for the usual call (host scalars, every
    /// check passing): a call runs right after hipBLAS's own host work, which leaves the branch
    /// predictor cold, so each loop and taken jump here costs more than its instructions. The scalars'
    /// operands and the pointer mode are looked at only when they matter; errors are built out of line.
    #[inline(always)]
    fn begin_with_mode<T: DeviceCopy>(
        &self,
        what: &'static str,
        operands: &[(&Device, &Arc<Allocation>, Access)],
        scalars: &[&Scalar<'_, T>],
        device_scalars: bool,
    ) -> Result<StreamOp<'_>> {
        for &(device, _, _) in operands {
            same_device(what, &self.device, device)?;
        }
        if device_scalars {
            self.check_scalar_devices(what, scalars)?;
        }
        let op = self.stream.begin_op();
        if op.is_capturing() {
            self.owner.keep_in_capture(&op);
        }
        if !device_scalars && self.workspace.is_none() && operands.len() <= 4 {
            // The usual call: the operands and the handle's record alone, in address order (see
            // memory::tracking).
            let mut sorted = [None; 5];
            sorted[4] = Some(self.uses.operand());
            for (slot, &(_, allocation, access)) in sorted.iter_mut().zip(operands) {
                *slot = Some((allocation, access));
            }
            sorted.sort_unstable_by_key(|u| u.map(|(a, _)| Arc::as_ptr(a)));
            for &(allocation, access) in sorted.iter().flatten() {
                allocation.use_on(&op, access)?;
            }
        } else {
            use_all(
                &op,
                operands,
                scalars,
                (self.workspace.as_ref(), &self.uses),
                device_scalars,
            )?;
        }
        self.device.bind()?;
        if self.device_scalars.get() != device_scalars {
            self.set_pointer_mode(device_scalars)?;
        }
        Ok(op)
    }

    /// Device scalars on the handle's device. Out of line: host scalars are the usual call.
    #[cold]
    #[inline(never)]
    fn check_scalar_devices<T: DeviceCopy>(
        &self,
        what: &'static str,
        scalars: &[&Scalar<'_, T>],
    ) -> Result<()> {
        for (device, _, _) in scalars.iter().filter_map(|s| s.operand()) {
            same_device(what, &self.device, device)?;
        }
        Ok(())
    }

    /// `hipblasSetPointerMode`: device scalars (`true`) or host ones, recorded for the next call.
    #[cold]
    #[inline(never)]
    fn set_pointer_mode(&self, device_scalars: bool) -> Result<()> {
        let mode = if device_scalars {
            sys::HIPBLAS_POINTER_MODE_DEVICE
        } else {
            sys::HIPBLAS_POINTER_MODE_HOST
        };
        // SAFETY: live handle, a valid pointer mode.
        check("hipblasSetPointerMode", unsafe {
            sys::hipblasSetPointerMode(self.raw, mode)
        })?;
        self.device_scalars.set(device_scalars);
        Ok(())
    }
}

/// Operands, device scalars, the caller's workspace and the handle's record (written), ordered under
/// `op` in address order. Out of line: most calls have host scalars and hipBLAS's own workspace.
#[cold]
#[inline(never)]
fn use_all<T: DeviceCopy>(
    op: &StreamOp<'_>,
    operands: &[(&Device, &Arc<Allocation>, Access)],
    scalars: &[&Scalar<'_, T>],
    (workspace, handle): (Option<&DeviceBuffer<u8>>, &HandleUse),
    device_scalars: bool,
) -> Result<()> {
    let scalars = scalars
        .iter()
        .filter(|_| device_scalars)
        .filter_map(|s| s.operand())
        .map(|(_, a, x)| (a, x));
    let uses = operands
        .iter()
        .map(|&(_, a, x)| (a, x))
        .chain([handle.operand()])
        .chain(scalars)
        .chain(workspace.map(|w| (w.allocation(), Access::Write)));
    crate::memory::tracking::use_by_address(op, uses)
}

/// `hipblasDestroy`, for the handle's [`Owner`].
///
/// # Safety
/// `raw` is a live hipBLAS handle, destroyed once.
unsafe fn destroy(raw: sys::hipblasHandle_t) {
    // SAFETY: the caller's contract.
    unsafe { sys::hipblasDestroy(raw) };
}

impl Handle {
    /// [`begin`](Self::begin) for a call whose result the library writes to host memory (`dot`, `nrm2`,
    /// `asum`, `iamax`): refused on a capturing stream, where the call would only be recorded and every
    /// replay of the graph would write the result into host memory this call no longer owns.
    pub(super) fn begin_host_result<T: DeviceCopy>(
        &self,
        what: &'static str,
        operands: &[(&Device, &Arc<Allocation>, Access)],
    ) -> Result<StreamOp<'_>> {
        let op = self.begin::<T>(what, operands, &[])?;
        if op.is_capturing() {
            return Err(Error::InvalidArgument {
                what,
                value: "a call with a host result on a capturing stream".into(),
                reason:
                    "a graph's replays would write the result into host memory after this call \
                         returned: use the `_into` form, whose result is device memory"
                        .into(),
            });
        }
        Ok(op)
    }
}

/// A scalar argument (`alpha`, `beta`): a host value, or one element of device memory.
///
/// Made from a value (`2.0.into()`, or just `2.0` where a call takes `impl Into<Scalar<T>>`) or with
/// [`Scalar::device`].
pub struct Scalar<'a, T: DeviceCopy>(ScalarKind<'a, T>);

enum ScalarKind<'a, T: DeviceCopy> {
    Host(HostScalar<T>),
    Device {
        ptr: DevicePtr,
        device: &'a Device,
        allocation: &'a Arc<Allocation>,
    },
}

impl<T: DeviceCopy> From<T> for Scalar<'_, T> {
    fn from(v: T) -> Self {
        Scalar(ScalarKind::Host(HostScalar(v)))
    }
}

impl<'a, T: DeviceCopy> Scalar<'a, T> {
    /// The first element of `mem`, read on the device when the call runs. [`Error::InvalidArgument`] for
    /// empty memory.
    pub fn device(mem: &'a impl DeviceMemory<T>) -> Result<Self> {
        if mem.is_empty() {
            return Err(Error::InvalidArgument {
                what: "device scalar",
                value: "empty device memory".into(),
                reason: "a device scalar is the first element of its memory".into(),
            });
        }
        Ok(Scalar(ScalarKind::Device {
            ptr: mem.device_ptr(),
            device: mem.device(),
            allocation: mem.allocation(),
        }))
    }

    fn is_device(&self) -> bool {
        matches!(self.0, ScalarKind::Device { .. })
    }

    /// The host value, `None` for a device scalar.
    fn host_value(&self) -> Option<T> {
        match &self.0 {
            ScalarKind::Host(v) => Some(v.0),
            ScalarKind::Device { .. } => None,
        }
    }

    /// The pointer hipBLAS reads: the host value's address, or the device element's.
    fn ptr(&self) -> *const T {
        match &self.0 {
            ScalarKind::Host(v) => &v.0,
            ScalarKind::Device { ptr, .. } => ptr.cast_const().cast(),
        }
    }

    fn operand(&self) -> Option<(&Device, &Arc<Allocation>, Access)> {
        match &self.0 {
            ScalarKind::Host(_) => None,
            ScalarKind::Device {
                device, allocation, ..
            } => Some((*device, *allocation, Access::Read)),
        }
    }
}

/// Whether `alpha` and `beta` are device scalars; an error when one is and the other is not.
#[inline]
fn scalar_mode<T: DeviceCopy>(alpha: &Scalar<'_, T>, beta: &Scalar<'_, T>) -> Result<bool> {
    if alpha.is_device() == beta.is_device() {
        Ok(alpha.is_device())
    } else {
        Err(mixed_scalars(beta.is_device()))
    }
}

#[cold]
#[inline(never)]
fn mixed_scalars(beta_on_device: bool) -> Error {
    Error::InvalidArgument {
        what: "beta",
        value: if beta_on_device {
            "a device scalar"
        } else {
            "a host value"
        }
        .into(),
        reason: "alpha and beta of one call must both be host values or both device scalars".into(),
    }
}

/// `Ok` for success, else the error for `call`.
#[inline]
pub(crate) fn check(call: &'static str, status: sys::hipblasStatus_t) -> Result<()> {
    crate::error::math_status(&LIBRARY, call, status.0, |raw| Error::Blas {
        call,
        code: BlasErrorCode(raw),
    })
}

const LIBRARY: crate::error::MathLibrary = crate::error::math_library!(
    sys,
    "hipBLAS (libhipblas)",
    "Debian trixie or newer: apt-get install libhipblas-dev; ROCm: hipblas; or point HIP_RS_HIPBLAS at the library",
    hipblasRsStatusLibraryNotFound,
    hipblasRsStatusSymbolNotFound,
);

/// `hipblasOperation_t` of an [`Op`].
fn raw_op(op: Op) -> sys::hipblasOperation_t {
    match op {
        Op::N => sys::HIPBLAS_OP_N,
        Op::T => sys::HIPBLAS_OP_T,
        Op::C => sys::HIPBLAS_OP_C,
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests23;
