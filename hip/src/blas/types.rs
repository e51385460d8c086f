//! The element types of the typed calls, and which hipBLAS function each call is for each type.

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

/// An element type of hipBLAS's typed calls: `f32`, `f64`, [`Complex32`] and [`Complex64`]
/// (`hipblasComplex` / `hipblasDoubleComplex`: two floats, real part first).
///
/// Sealed: the functions below take raw pointers and are only called by this module, after its checks.
#[allow(clippy::too_many_arguments, missing_docs)]
pub trait BlasScalar: DeviceCopy + sealed::Sealed + super::types23::Level23 {
    /// The real type of the same precision (what `nrm2` returns).
    type Real: DeviceCopy + Default;
    #[doc(hidden)]
    const NAMES: Names;
    /// # Safety
    /// `h` is a live hipBLAS handle whose device is current and whose pointer mode matches where the
    /// scalar pointers point (host values read during the call, or device memory); every device pointer
    /// spans what the sizes, increments, leading dimensions, strides and batch count reach, on the
    /// handle's device, ordered and kept alive by the caller until the queued call is done; a host
    /// result pointer is valid for writing one value.
    #[doc(hidden)]
    unsafe fn axpy(
        h: H,
        n: i32,
        alpha: *const Self,
        x: DevicePtr,
        incx: i32,
        y: DevicePtr,
        incy: i32,
    ) -> S;
    /// # Safety
    /// `h` is a live hipBLAS handle whose device is current and whose pointer mode matches where the
    /// scalar pointers point (host values read during the call, or device memory); every device pointer
    /// spans what the sizes, increments, leading dimensions, strides and batch count reach, on the
    /// handle's device, ordered and kept alive by the caller until the queued call is done; a host
    /// result pointer is valid for writing one value.
    #[doc(hidden)]
    unsafe fn dot(
        h: H,
        n: i32,
        x: DevicePtr,
        incx: i32,
        y: DevicePtr,
        incy: i32,
        r: *mut Self,
    ) -> S;
    /// # Safety
    /// `h` is a live hipBLAS handle whose device is current and whose pointer mode matches where the
    /// scalar pointers point (host values read during the call, or device memory); every device pointer
    /// spans what the sizes, increments, leading dimensions, strides and batch count reach, on the
    /// handle's device, ordered and kept alive by the caller until the queued call is done; a host
    /// result pointer is valid for writing one value.
    #[doc(hidden)]
    unsafe fn dotc(
        h: H,
        n: i32,
        x: DevicePtr,
        incx: i32,
        y: DevicePtr,
        incy: i32,
        r: *mut Self,
    ) -> S;
    /// # Safety
    /// `h` is a live hipBLAS handle whose device is current and whose pointer mode matches where the
    /// scalar pointers point (host values read during the call, or device memory); every device pointer
    /// spans what the sizes, increments, leading dimensions, strides and batch count reach, on the
    /// handle's device, ordered and kept alive by the caller until the queued call is done; a host
    /// result pointer is valid for writing one value.
    #[doc(hidden)]
    unsafe fn nrm2(h: H, n: i32, x: DevicePtr, incx: i32, r: *mut Self::Real) -> S;
    /// # Safety
    /// `h` is a live hipBLAS handle whose device is current and whose pointer mode matches where the
    /// scalar pointers point (host values read during the call, or device memory); every device pointer
    /// spans what the sizes, increments, leading dimensions, strides and batch count reach, on the
    /// handle's device, ordered and kept alive by the caller until the queued call is done; a host
    /// result pointer is valid for writing one value.
    #[doc(hidden)]
    unsafe fn scal(h: H, n: i32, alpha: *const Self, x: DevicePtr, incx: i32) -> S;
    /// # Safety
    /// `h` is a live hipBLAS handle whose device is current and whose pointer mode matches where the
    /// scalar pointers point (host values read during the call, or device memory); every device pointer
    /// spans what the sizes, increments, leading dimensions, strides and batch count reach, on the
    /// handle's device, ordered and kept alive by the caller until the queued call is done; a host
    /// result pointer is valid for writing one value.
    #[doc(hidden)]
    unsafe fn gemv(
        h: H,
        op: O,
        m: i32,
        n: i32,
        alpha: *const Self,
        a: DevicePtr,
        lda: i32,
        x: DevicePtr,
        incx: i32,
        beta: *const Self,
        y: DevicePtr,
        incy: i32,
    ) -> S;
    /// # Safety
    /// `h` is a live hipBLAS handle whose device is current and whose pointer mode matches where the
    /// scalar pointers point (host values read during the call, or device memory); every device pointer
    /// spans what the sizes, increments, leading dimensions, strides and batch count reach, on the
    /// handle's device, ordered and kept alive by the caller until the queued call is done; a host
    /// result pointer is valid for writing one value.
    #[doc(hidden)]
    unsafe fn gemm(
        h: H,
        oa: O,
        ob: O,
        m: i32,
        n: i32,
        k: i32,
        alpha: *const Self,
        a: DevicePtr,
        lda: i32,
        b: DevicePtr,
        ldb: i32,
        beta: *const Self,
        c: DevicePtr,
        ldc: i32,
    ) -> S;
    /// # Safety
    /// `h` is a live hipBLAS handle whose device is current and whose pointer mode matches where the
    /// scalar pointers point (host values read during the call, or device memory); every device pointer
    /// spans what the sizes, increments, leading dimensions, strides and batch count reach, on the
    /// handle's device, ordered and kept alive by the caller until the queued call is done; a host
    /// result pointer is valid for writing one value.
    #[doc(hidden)]
    unsafe fn gemm_strided_batched(
        h: H,
        oa: O,
        ob: O,
        m: i32,
        n: i32,
        k: i32,
        alpha: *const Self,
        a: DevicePtr,
        lda: i32,
        sa: i64,
        b: DevicePtr,
        ldb: i32,
        sb: i64,
        beta: *const Self,
        c: DevicePtr,
        ldc: i32,
        sc: i64,
        count: i32,
    ) -> S;
    /// # Safety
    /// `h` is a live hipBLAS handle whose device is current and whose pointer mode matches where the
    /// scalar pointers point (host values read during the call, or device memory); every device pointer
    /// spans what the sizes, increments, leading dimensions, strides and batch count reach, on the
    /// handle's device, ordered and kept alive by the caller until the queued call is done; a host
    /// result pointer is valid for writing one value.
    #[doc(hidden)]
    unsafe fn gemm_batched(
        h: H,
        oa: O,
        ob: O,
        m: i32,
        n: i32,
        k: i32,
        alpha: *const Self,
        a: DevicePtr,
        lda: i32,
        b: DevicePtr,
        ldb: i32,
        beta: *const Self,
        c: DevicePtr,
        ldc: i32,
        count: i32,
    ) -> S;
}

macro_rules! blas_scalar {
    ($t:ty, real $real:ty, $axpy:ident, $dot:ident, $dotc:ident, $nrm2:ident, $scal:ident, $gemv:ident,
     $gemm:ident, $sb:ident, $batched:ident) => {
        impl sealed::Sealed for $t {}
        // Each function forwards to the hipBLAS function of this element type (inlined: the call then calls
        // hipBLAS directly); the pointer casts only name the header's element type (`float`,
        // `hipblasComplex`, ...), which has this type's layout.
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
            #[inline]
            unsafe fn axpy(
                h: H,
                n: i32,
                alpha: *const Self,
                x: DevicePtr,
                incx: i32,
                y: DevicePtr,
                incy: i32,
            ) -> S {
                // SAFETY: the caller's contract (the trait's `# Safety`: a live handle on the current
                // device, pointers spanning what the arguments say); the casts name the header's element
                // type of this type's layout (f32 / f64, or `#[repr(C)]` Complex: two of them, real first).
                unsafe { sys::$axpy(h, n, alpha.cast(), x.cast(), incx, y.cast(), incy) }
            }
            #[inline]
            unsafe fn dot(
                h: H,
                n: i32,
                x: DevicePtr,
                incx: i32,
                y: DevicePtr,
                incy: i32,
                r: *mut Self,
            ) -> S {
                // SAFETY: as in axpy.
                unsafe { sys::$dot(h, n, x.cast(), incx, y.cast(), incy, r.cast()) }
            }
            #[inline]
            unsafe fn dotc(
                h: H,
                n: i32,
                x: DevicePtr,
                incx: i32,
                y: DevicePtr,
                incy: i32,
                r: *mut Self,
            ) -> S {
                // SAFETY: as in axpy.
                unsafe { sys::$dotc(h, n, x.cast(), incx, y.cast(), incy, r.cast()) }
            }
            #[inline]
            unsafe fn nrm2(h: H, n: i32, x: DevicePtr, incx: i32, r: *mut Self::Real) -> S {
                // SAFETY: as in axpy.
                unsafe { sys::$nrm2(h, n, x.cast(), incx, r.cast()) }
            }
            #[inline]
            unsafe fn scal(h: H, n: i32, alpha: *const Self, x: DevicePtr, incx: i32) -> S {
                // SAFETY: as in axpy.
                unsafe { sys::$scal(h, n, alpha.cast(), x.cast(), incx) }
            }
            #[inline]
            unsafe fn gemv(
                h: H,
                op: O,
                m: i32,
                n: i32,
                alpha: *const Self,
                a: DevicePtr,
                lda: i32,
                x: DevicePtr,
                incx: i32,
                beta: *const Self,
                y: DevicePtr,
                incy: i32,
            ) -> S {
                // SAFETY: as in axpy.
                unsafe {
                    sys::$gemv(
                        h,
                        op,
                        m,
                        n,
                        alpha.cast(),
                        a.cast(),
                        lda,
                        x.cast(),
                        incx,
                        beta.cast(),
                        y.cast(),
                        incy,
                    )
                }
            }
            #[inline]
            unsafe fn gemm(
                h: H,
                oa: O,
                ob: O,
                m: i32,
                n: i32,
                k: i32,
                alpha: *const Self,
                a: DevicePtr,
                lda: i32,
                b: DevicePtr,
                ldb: i32,
                beta: *const Self,
                c: DevicePtr,
                ldc: i32,
            ) -> S {
                // SAFETY: as in axpy.
                unsafe {
                    sys::$gemm(
                        h,
                        oa,
                        ob,
                        m,
                        n,
                        k,
                        alpha.cast(),
                        a.cast(),
                        lda,
                        b.cast(),
                        ldb,
                        beta.cast(),
                        c.cast(),
                        ldc,
                    )
                }
            }
            #[inline]
            unsafe fn gemm_strided_batched(
                h: H,
                oa: O,
                ob: O,
                m: i32,
                n: i32,
                k: i32,
                alpha: *const Self,
                a: DevicePtr,
                lda: i32,
                sa: i64,
                b: DevicePtr,
                ldb: i32,
                sb: i64,
                beta: *const Self,
                c: DevicePtr,
                ldc: i32,
                sc: i64,
                count: i32,
            ) -> S {
                // SAFETY: as in axpy.
                unsafe {
                    sys::$sb(
                        h,
                        oa,
                        ob,
                        m,
                        n,
                        k,
                        alpha.cast(),
                        a.cast(),
                        lda,
                        sa,
                        b.cast(),
                        ldb,
                        sb,
                        beta.cast(),
                        c.cast(),
                        ldc,
                        sc,
                        count,
                    )
                }
            }
            #[inline]
            unsafe fn gemm_batched(
                h: H,
                oa: O,
                ob: O,
                m: i32,
                n: i32,
                k: i32,
                alpha: *const Self,
                a: DevicePtr,
                lda: i32,
                b: DevicePtr,
                ldb: i32,
                beta: *const Self,
                c: DevicePtr,
                ldc: i32,
                count: i32,
            ) -> S {
                // SAFETY: as in axpy; `a`, `b`, `c` are device arrays of `count` device pointers.
                unsafe {
                    sys::$batched(
                        h,
                        oa,
                        ob,
                        m,
                        n,
                        k,
                        alpha.cast(),
                        a.cast(),
                        lda,
                        b.cast(),
                        ldb,
                        beta.cast(),
                        c.cast(),
                        ldc,
                        count,
                    )
                }
            }
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
