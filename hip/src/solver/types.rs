//! The element types of the solver calls, and which hipSOLVER function each call is for each type.

use crate::library::scalar::declare_calls;
use crate::memory::{DeviceCopy, DevicePtr};
use hipsolver_sys as sys;
use std::os::raw::c_int;
use sys::{
    hipsolverEigMode_t as Eig, hipsolverFillMode_t as Fill, hipsolverHandle_t as H,
    hipsolverOperation_t as O, hipsolverSideMode_t as Side, hipsolverStatus_t as S,
};

pub(super) mod sealed {
    pub trait Sealed {}
}

/// The names of one type's functions, for errors.
#[doc(hidden)]
pub struct Names {
    pub potrf: &'static str,
    pub potrs: &'static str,
    pub getrf: &'static str,
    pub getrs: &'static str,
    pub geqrf: &'static str,
    pub ormqr: &'static str,
    pub syevd: &'static str,
    pub gesvd: &'static str,
    pub potrf_batched: &'static str,
    pub potrs_batched: &'static str,
}

/// Every function of [`SolverScalar`], once: each call's `_bufferSize` query (`*_bs`), then the call,
/// handed to `$then!` after its own arguments (the trait's declarations; each type's impl, impls.rs).
macro_rules! solver_calls {
    ($then:ident!($($args:tt)*)) => {
        $then!($($args)*
            potrf_bs(h: H, u: Fill, n: c_int, a: DevicePtr, lda: c_int, lw: *mut c_int) -> S;
            potrf(h: H, u: Fill, n: c_int, a: DevicePtr, lda: c_int, w: DevicePtr, lw: c_int,
                info: DevicePtr) -> S;
            potrs_bs(h: H, u: Fill, n: c_int, nrhs: c_int, a: DevicePtr, lda: c_int, b: DevicePtr,
                ldb: c_int, lw: *mut c_int) -> S;
            potrs(h: H, u: Fill, n: c_int, nrhs: c_int, a: DevicePtr, lda: c_int, b: DevicePtr,
                ldb: c_int, w: DevicePtr, lw: c_int, info: DevicePtr) -> S;
            getrf_bs(h: H, m: c_int, n: c_int, a: DevicePtr, lda: c_int, lw: *mut c_int) -> S;
            getrf(h: H, m: c_int, n: c_int, a: DevicePtr, lda: c_int, w: DevicePtr, lw: c_int,
                ipiv: DevicePtr, info: DevicePtr) -> S;
            getrs_bs(h: H, t: O, n: c_int, nrhs: c_int, a: DevicePtr, lda: c_int, ipiv: DevicePtr,
                b: DevicePtr, ldb: c_int, lw: *mut c_int) -> S;
            getrs(h: H, t: O, n: c_int, nrhs: c_int, a: DevicePtr, lda: c_int, ipiv: DevicePtr,
                b: DevicePtr, ldb: c_int, w: DevicePtr, lw: c_int, info: DevicePtr) -> S;
            geqrf_bs(h: H, m: c_int, n: c_int, a: DevicePtr, lda: c_int, lw: *mut c_int) -> S;
            geqrf(h: H, m: c_int, n: c_int, a: DevicePtr, lda: c_int, tau: DevicePtr, w: DevicePtr,
                lw: c_int, info: DevicePtr) -> S;
            ormqr_bs(h: H, s: Side, t: O, m: c_int, n: c_int, k: c_int, a: DevicePtr, lda: c_int,
                tau: DevicePtr, c: DevicePtr, ldc: c_int, lw: *mut c_int) -> S;
            ormqr(h: H, s: Side, t: O, m: c_int, n: c_int, k: c_int, a: DevicePtr, lda: c_int,
                tau: DevicePtr, c: DevicePtr, ldc: c_int, w: DevicePtr, lw: c_int,
                info: DevicePtr) -> S;
            syevd_bs(h: H, j: Eig, u: Fill, n: c_int, a: DevicePtr, lda: c_int, d: DevicePtr,
                lw: *mut c_int) -> S;
            syevd(h: H, j: Eig, u: Fill, n: c_int, a: DevicePtr, lda: c_int, d: DevicePtr,
                w: DevicePtr, lw: c_int, info: DevicePtr) -> S;
            gesvd_bs(h: H, ju: i8, jv: i8, m: c_int, n: c_int, lw: *mut c_int) -> S;
            gesvd(h: H, ju: i8, jv: i8, m: c_int, n: c_int, a: DevicePtr, lda: c_int, s: DevicePtr,
                u: DevicePtr, ldu: c_int, v: DevicePtr, ldv: c_int, w: DevicePtr, lw: c_int,
                rwork: DevicePtr, info: DevicePtr) -> S;
            potrf_batched_bs(h: H, u: Fill, n: c_int, a: DevicePtr, lda: c_int, lw: *mut c_int,
                count: c_int) -> S;
            potrf_batched(h: H, u: Fill, n: c_int, a: DevicePtr, lda: c_int, w: DevicePtr,
                lw: c_int, info: DevicePtr, count: c_int) -> S;
            potrs_batched_bs(h: H, u: Fill, n: c_int, nrhs: c_int, a: DevicePtr, lda: c_int,
                b: DevicePtr, ldb: c_int, lw: *mut c_int, count: c_int) -> S;
            potrs_batched(h: H, u: Fill, n: c_int, nrhs: c_int, a: DevicePtr, lda: c_int,
                b: DevicePtr, ldb: c_int, w: DevicePtr, lw: c_int, info: DevicePtr,
                count: c_int) -> S;
        );
    };
}
pub(super) use solver_calls;

/// An element type of hipSOLVER's calls: `f32`, `f64`, [`Complex32`](super::Complex32) and [`Complex64`](super::Complex64)
/// (`hipFloatComplex` / `hipDoubleComplex`: two floats, real part first).
///
/// Sealed: the functions below take raw pointers and are called only by this module, after its checks.
/// Each `*_bs` function is the call's `_bufferSize` query: it reads no memory and answers the workspace
/// in bytes on rocSOLVER, in elements of the type on cuSOLVER (`sizes::workspace`).
///
/// # Safety (of every function)
/// `h` is a live hipSOLVER handle whose device is current; every device pointer spans what the sizes and
/// leading dimensions reach, on the handle's device, ordered and kept alive by the caller until the
/// queued call is done; `work` holds what `lwork` means on the backend (`sizes::workspace`: bytes on
/// rocSOLVER, after what hipSOLVER carves off its front; elements on cuSOLVER), `info` as many `int`s as
/// the backend writes (`sizes::info_len`); `lwork` out-pointers
/// are valid host pointers.
// Every function's safety contract is the one "# Safety (of every function)" above.
#[allow(clippy::too_many_arguments, clippy::missing_safety_doc, missing_docs)]
pub trait SolverScalar: DeviceCopy + sealed::Sealed {
    /// The real type of the same precision (eigenvalues, singular values).
    type Real: DeviceCopy + Default;
    /// Whether the type is complex (`?unmqr`, `?heevd`) or real (`?ormqr`, `?syevd`).
    const COMPLEX: bool;
    #[doc(hidden)]
    const NAMES: Names;
    solver_calls!(declare_calls!());
}
