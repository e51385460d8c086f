//! The hipBLAS functions of `asum`, `iamax` / `iamin`, `ger` / `gerc`, `geam`, `trsm`, `syrk` for each
//! element type, and `herk` for the complex ones: a supertrait of [`BlasScalar`](super::BlasScalar), sealed
//! like it (public but unnameable outside the crate).

use crate::library::scalar::{declare_calls, forward_calls};
use crate::memory::{DeviceCopy, DevicePtr};
use hipblas_sys as sys;
use num_complex::{Complex32, Complex64};
use std::ffi::c_void;
use sys::{hipblasDiagType_t as D, hipblasFillMode_t as F, hipblasSideMode_t as Sd};
use sys::{hipblasHandle_t as H, hipblasOperation_t as O, hipblasStatus_t as S};

/// The names of one type's functions, for errors.
#[doc(hidden)]
pub struct Names23 {
    pub asum: &'static str,
    pub iamax: &'static str,
    pub iamin: &'static str,
    pub ger: &'static str,
    pub gerc: &'static str,
    pub geam: &'static str,
    pub trsm: &'static str,
    pub syrk: &'static str,
}

/// The functions of [`Level23`] but `ger` (which picks one of two by `conj`), once, handed to `$then!`
/// after its own arguments (the trait's declarations; each type's impl below).
macro_rules! level23_calls {
    ($then:ident!($($args:tt)*)) => {
        $then!($($args)*
            /// `r` points at one `BlasScalar::Real` (the real type of the same precision).
            asum(h: H, n: i32, x: DevicePtr, incx: i32, r: *mut c_void) -> S;
            iamax(h: H, n: i32, x: DevicePtr, incx: i32, r: *mut i32) -> S;
            iamin(h: H, n: i32, x: DevicePtr, incx: i32, r: *mut i32) -> S;
            geam(h: H, oa: O, ob: O, m: i32, n: i32, alpha: *const Self, a: DevicePtr, lda: i32,
                beta: *const Self, b: DevicePtr, ldb: i32, c: DevicePtr, ldc: i32) -> S;
            /// `a` is `float*` in hipBLAS 0.x, `const float*` later; not written.
            trsm(h: H, side: Sd, uplo: F, op: O, diag: D, m: i32, n: i32, alpha: *const Self,
                a: DevicePtr, lda: i32, b: DevicePtr, ldb: i32) -> S;
            syrk(h: H, uplo: F, op: O, n: i32, k: i32, alpha: *const Self, a: DevicePtr, lda: i32,
                beta: *const Self, c: DevicePtr, ldc: i32) -> S;
        );
    };
}

/// The level 1 to 3 calls beyond the first set (the supertrait of `BlasScalar`).
///
/// Every function has the contract of [`BlasScalar`](super::BlasScalar)'s: `h` is a live hipBLAS handle
/// whose device is current and whose pointer mode matches where the scalar pointers point; every device
/// pointer spans what the sizes, increments and leading dimensions reach, on the handle's device, ordered
/// and kept alive by the caller until the queued call is done; a host result pointer is valid for writing
/// one value.
#[doc(hidden)]
#[allow(clippy::too_many_arguments, missing_docs, clippy::missing_safety_doc)]
pub trait Level23: DeviceCopy {
    const NAMES23: Names23;
    /// Complex: `syrk` takes `Op::T` only, besides `Op::N`.
    const BLAS_COMPLEX: bool;
    level23_calls!(declare_calls!());
    /// `hipblas?ger` (`?geru` for complex types), or `?gerc` when `conj`.
    unsafe fn ger(
        h: H,
        conj: bool,
        m: i32,
        n: i32,
        alpha: *const Self,
        x: DevicePtr,
        incx: i32,
        y: DevicePtr,
        incy: i32,
        a: DevicePtr,
        lda: i32,
    ) -> S;
}

mod sealed {
    pub trait Sealed {}
}

/// `herk`, once, handed to `$then!` after its own arguments (the trait's declaration; each type's impl).
macro_rules! complex_calls {
    ($then:ident!($($args:tt)*)) => {
        $then!($($args)*
            /// # Safety
            /// As [`Level23`]'s functions; `alpha` and `beta` are real values of the same precision.
            herk(h: H, uplo: F, op: O, n: i32, k: i32, alpha: *const Self::Real, a: DevicePtr,
                lda: i32, beta: *const Self::Real, c: DevicePtr, ldc: i32) -> S;
        );
    };
}

/// The complex element types, [`Complex32`] and [`Complex64`]: those with a Hermitian rank-k update
/// ([`Handle::herk`](super::Handle::herk)). Sealed.
#[allow(clippy::too_many_arguments, missing_docs)]
pub trait BlasComplex: super::BlasScalar + sealed::Sealed {
    /// `hipblasCherk` / `hipblasZherk`.
    #[doc(hidden)]
    const HERK: &'static str;
    complex_calls!(declare_calls!(#[doc(hidden)]));
}

/// One element type: whether it is complex, and its hipBLAS functions: those of `level23_calls!` in its
/// order, with `ger` and `gerc` (the same function for real types) after `iamin`.
macro_rules! level23 {
    ($t:ty, complex $complex:expr, $asum:ident, $iamax:ident, $iamin:ident, $ger:ident,
     $gerc:ident, $geam:ident, $trsm:ident, $syrk:ident) => {
        impl Level23 for $t {
            const NAMES23: Names23 = Names23 {
                asum: stringify!($asum),
                iamax: stringify!($iamax),
                iamin: stringify!($iamin),
                ger: stringify!($ger),
                gerc: stringify!($gerc),
                geam: stringify!($geam),
                trsm: stringify!($trsm),
                syrk: stringify!($syrk),
            };
            const BLAS_COMPLEX: bool = $complex;
            level23_calls!(forward_calls!(sys [$asum, $iamax, $iamin, $geam, $trsm, $syrk]));
            #[inline]
            unsafe fn ger(
                h: H,
                conj: bool,
                m: i32,
                n: i32,
                alpha: *const Self,
                x: DevicePtr,
                incx: i32,
                y: DevicePtr,
                incy: i32,
                a: DevicePtr,
                lda: i32,
            ) -> S {
                let f = if conj { sys::$gerc } else { sys::$ger };
                // SAFETY: the caller's contract (the trait's); the casts name the header's element type,
                // which has this type's layout (`forward_calls!`).
                unsafe {
                    f(
                        h,
                        m,
                        n,
                        alpha.cast(),
                        x.cast(),
                        incx,
                        y.cast(),
                        incy,
                        a.cast(),
                        lda,
                    )
                }
            }
        }
    };
}

level23!(f32, complex false, hipblasSasum, hipblasIsamax, hipblasIsamin, hipblasSger,
    hipblasSger, hipblasSgeam, hipblasStrsm, hipblasSsyrk);
level23!(f64, complex false, hipblasDasum, hipblasIdamax, hipblasIdamin, hipblasDger,
    hipblasDger, hipblasDgeam, hipblasDtrsm, hipblasDsyrk);
level23!(Complex32, complex true, hipblasScasum, hipblasIcamax, hipblasIcamin, hipblasCgeru,
    hipblasCgerc, hipblasCgeam, hipblasCtrsm, hipblasCsyrk);
level23!(Complex64, complex true, hipblasDzasum, hipblasIzamax, hipblasIzamin, hipblasZgeru,
    hipblasZgerc, hipblasZgeam, hipblasZtrsm, hipblasZsyrk);

/// One complex element type's `herk`.
macro_rules! complex {
    ($t:ty, $herk:ident) => {
        impl sealed::Sealed for $t {}
        impl BlasComplex for $t {
            const HERK: &'static str = stringify!($herk);
            complex_calls!(forward_calls!(sys[$herk]));
        }
    };
}

complex!(Complex32, hipblasCherk);
complex!(Complex64, hipblasZherk);
