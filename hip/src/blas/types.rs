//! The element types of the typed calls, and which hipBLAS function each call is for each type.

use crate::library::scalar::{declare_calls, forward_calls};
use crate::memory::{DeviceCopy, DevicePtr};
use hipblas_sys as sys;
use num_complex::{Complex32, Complex64};
use sys::{hipblasHandle_t as H, hipblasOperation_t as O, hipblasStatus_t as S};

mod sealed {
    pub trait Sealed {}
}

/// The names of one type's functions, for errors.
#[doc(hidden)]
pub struct Names {
    pub axpy: &'static str,
    pub dot: &'static str,
    pub dotc: &'static str,
    pub nrm2: &'static str,
    pub scal: &'static str,
    pub gemv: &'static str,
    pub gemm: &'static str,
    pub gemm_strided_batched: &'static str,
    pub gemm_batched: &'static str,
}

/// Every function of [`BlasScalar`], once, handed to `$then!` after its own arguments (the trait's
/// declarations; each type's impl below).
macro_rules! blas_calls {
    ($then:ident!($($args:tt)*)) => {
        $then!($($args)*
            axpy(h: H, n: i32, alpha: *const Self, x: DevicePtr, incx: i32, y: DevicePtr,
                incy: i32) -> S;
            dot(h: H, n: i32, x: DevicePtr, incx: i32, y: DevicePtr, incy: i32, r: *mut Self) -> S;
            dotc(h: H, n: i32, x: DevicePtr, incx: i32, y: DevicePtr, incy: i32, r: *mut Self) -> S;
            nrm2(h: H, n: i32, x: DevicePtr, incx: i32, r: *mut Self::Real) -> S;
            scal(h: H, n: i32, alpha: *const Self, x: DevicePtr, incx: i32) -> S;
            gemv(h: H, op: O, m: i32, n: i32, alpha: *const Self, a: DevicePtr, lda: i32,
                x: DevicePtr, incx: i32, beta: *const Self, y: DevicePtr, incy: i32) -> S;
            gemm(h: H, oa: O, ob: O, m: i32, n: i32, k: i32, alpha: *const Self, a: DevicePtr,
                lda: i32, b: DevicePtr, ldb: i32, beta: *const Self, c: DevicePtr, ldc: i32) -> S;
            gemm_strided_batched(h: H, oa: O, ob: O, m: i32, n: i32, k: i32, alpha: *const Self,
                a: DevicePtr, lda: i32, sa: i64, b: DevicePtr, ldb: i32, sb: i64,
                beta: *const Self, c: DevicePtr, ldc: i32, sc: i64, count: i32) -> S;
            /// `a`, `b`, `c` are device arrays of `count` device pointers.
            gemm_batched(h: H, oa: O, ob: O, m: i32, n: i32, k: i32, alpha: *const Self,
                a: DevicePtr, lda: i32, b: DevicePtr, ldb: i32, beta: *const Self, c: DevicePtr,
                ldc: i32, count: i32) -> S;
        );
    };
}

/// An element type of hipBLAS's typed calls: `f32`, `f64`, [`Complex32`] and [`Complex64`]
/// (`hipblasComplex` / `hipblasDoubleComplex`: two floats, real part first).
///
/// Sealed: the functions below take raw pointers and are only called by this module, after its checks.
// Safety (of every function, all hidden from the docs): `h` is a live hipBLAS handle whose device is
// current and whose pointer mode matches where the scalar pointers point (host values read during the
// call, or device memory); every device pointer spans what the sizes, increments, leading dimensions,
// strides and batch count reach, on the handle's device, ordered and kept alive by the caller until the
// queued call is done; a host result pointer is valid for writing one value.
#[allow(clippy::too_many_arguments, clippy::missing_safety_doc, missing_docs)]
pub trait BlasScalar: DeviceCopy + sealed::Sealed + super::types23::Level23 {
    /// The real type of the same precision (what `nrm2` returns).
    type Real: DeviceCopy + Default;
    #[doc(hidden)]
    const NAMES: Names;
    blas_calls!(declare_calls!(#[doc(hidden)]));
}

/// One element type: its real type and its hipBLAS functions in the order of `blas_calls!`.
macro_rules! blas_scalar {
    ($t:ty, real $real:ty, $axpy:ident, $dot:ident, $dotc:ident, $nrm2:ident, $scal:ident, $gemv:ident,
     $gemm:ident, $sb:ident, $batched:ident) => {
        impl sealed::Sealed for $t {}
        impl BlasScalar for $t {
            type Real = $real;
            const NAMES: Names = Names {
                axpy: stringify!($axpy),
                dot: stringify!($dot),
                dotc: stringify!($dotc),
                nrm2: stringify!($nrm2),
                scal: stringify!($scal),
                gemv: stringify!($gemv),
                gemm: stringify!($gemm),
                gemm_strided_batched: stringify!($sb),
                gemm_batched: stringify!($batched),
            };
            blas_calls!(forward_calls!(sys [$axpy, $dot, $dotc, $nrm2, $scal, $gemv, $gemm, $sb,
                $batched]));
        }
    };
}

blas_scalar!(f32, real f32, hipblasSaxpy, hipblasSdot, hipblasSdot, hipblasSnrm2, hipblasSscal,
    hipblasSgemv, hipblasSgemm, hipblasSgemmStridedBatched, hipblasSgemmBatched);
blas_scalar!(f64, real f64, hipblasDaxpy, hipblasDdot, hipblasDdot, hipblasDnrm2, hipblasDscal,
    hipblasDgemv, hipblasDgemm, hipblasDgemmStridedBatched, hipblasDgemmBatched);
blas_scalar!(Complex32, real f32, hipblasCaxpy, hipblasCdotu, hipblasCdotc, hipblasScnrm2, hipblasCscal,
    hipblasCgemv, hipblasCgemm, hipblasCgemmStridedBatched, hipblasCgemmBatched);
blas_scalar!(Complex64, real f64, hipblasZaxpy, hipblasZdotu, hipblasZdotc, hipblasDznrm2, hipblasZscal,
    hipblasZgemv, hipblasZgemm, hipblasZgemmStridedBatched, hipblasZgemmBatched);
