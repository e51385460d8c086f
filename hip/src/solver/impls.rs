//! [`SolverScalar`] for each element type: which hipSOLVER function each call is.

use super::types::{sealed, Names, SolverScalar};
use crate::memory::DevicePtr;
use hipsolver_sys as sys;
use num_complex::{Complex32, Complex64};
use std::os::raw::c_int;
use sys::{
    hipsolverEigMode_t as Eig, hipsolverFillMode_t as Fill, hipsolverHandle_t as H,
    hipsolverOperation_t as O, hipsolverSideMode_t as Side, hipsolverStatus_t as S,
};

/// One type's impl: its real type, and the hipSOLVER functions in the trait's order.
macro_rules! scalar {
    ($t:ty, $real:ty, $complex:literal, [$potrf_bs:ident, $potrf:ident, $potrs_bs:ident, $potrs:ident,
     $getrf_bs:ident, $getrf:ident, $getrs_bs:ident, $getrs:ident, $geqrf_bs:ident, $geqrf:ident,
     $ormqr_bs:ident, $ormqr:ident, $syevd_bs:ident, $syevd:ident, $gesvd_bs:ident, $gesvd:ident,
     $pfb_bs:ident, $pfb:ident, $psb_bs:ident, $psb:ident]) => {
        impl sealed::Sealed for $t {}
        #[allow(clippy::too_many_arguments)]
        impl SolverScalar for $t {
            type Real = $real;
            const COMPLEX: bool = $complex;
            const NAMES: Names = Names {
                potrf: stringify!($potrf),
                potrs: stringify!($potrs),
                getrf: stringify!($getrf),
                getrs: stringify!($getrs),
                geqrf: stringify!($geqrf),
                ormqr: stringify!($ormqr),
                syevd: stringify!($syevd),
                gesvd: stringify!($gesvd),
                potrf_batched: stringify!($pfb),
                potrs_batched: stringify!($psb),
            };
            unsafe fn potrf_bs(
                h: H,
                u: Fill,
                n: c_int,
                a: DevicePtr,
                lda: c_int,
                lw: *mut c_int,
            ) -> S {
                // SAFETY: the caller's contract (the trait's `# Safety`): a live handle on the current
                // device, and device pointers spanning what the sizes reach, kept alive until the call is done.
                unsafe { sys::$potrf_bs(h, u, n, a as _, lda, lw) }
            }
            unsafe fn potrf(
                h: H,
                u: Fill,
                n: c_int,
                a: DevicePtr,
                lda: c_int,
                w: DevicePtr,
                lw: c_int,
                info: DevicePtr,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe { sys::$potrf(h, u, n, a as _, lda, w as _, lw, info as _) }
            }
            unsafe fn potrs_bs(
                h: H,
                u: Fill,
                n: c_int,
                nrhs: c_int,
                a: DevicePtr,
                lda: c_int,
                b: DevicePtr,
                ldb: c_int,
                lw: *mut c_int,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe { sys::$potrs_bs(h, u, n, nrhs, a as _, lda, b as _, ldb, lw) }
            }
            unsafe fn potrs(
                h: H,
                u: Fill,
                n: c_int,
                nrhs: c_int,
                a: DevicePtr,
                lda: c_int,
                b: DevicePtr,
                ldb: c_int,
                w: DevicePtr,
                lw: c_int,
                info: DevicePtr,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe {
                    sys::$potrs(
                        h, u, n, nrhs, a as _, lda, b as _, ldb, w as _, lw, info as _,
                    )
                }
            }
            unsafe fn getrf_bs(
                h: H,
                m: c_int,
                n: c_int,
                a: DevicePtr,
                lda: c_int,
                lw: *mut c_int,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe { sys::$getrf_bs(h, m, n, a as _, lda, lw) }
            }
            unsafe fn getrf(
                h: H,
                m: c_int,
                n: c_int,
                a: DevicePtr,
                lda: c_int,
                w: DevicePtr,
                lw: c_int,
                ipiv: DevicePtr,
                info: DevicePtr,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe { sys::$getrf(h, m, n, a as _, lda, w as _, lw, ipiv as _, info as _) }
            }
            unsafe fn getrs_bs(
                h: H,
                t: O,
                n: c_int,
                nrhs: c_int,
                a: DevicePtr,
                lda: c_int,
                ipiv: DevicePtr,
                b: DevicePtr,
                ldb: c_int,
                lw: *mut c_int,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe { sys::$getrs_bs(h, t, n, nrhs, a as _, lda, ipiv as _, b as _, ldb, lw) }
            }
            unsafe fn getrs(
                h: H,
                t: O,
                n: c_int,
                nrhs: c_int,
                a: DevicePtr,
                lda: c_int,
                ipiv: DevicePtr,
                b: DevicePtr,
                ldb: c_int,
                w: DevicePtr,
                lw: c_int,
                info: DevicePtr,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe {
                    sys::$getrs(
                        h, t, n, nrhs, a as _, lda, ipiv as _, b as _, ldb, w as _, lw, info as _,
                    )
                }
            }
            unsafe fn geqrf_bs(
                h: H,
                m: c_int,
                n: c_int,
                a: DevicePtr,
                lda: c_int,
                lw: *mut c_int,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe { sys::$geqrf_bs(h, m, n, a as _, lda, lw) }
            }
            unsafe fn geqrf(
                h: H,
                m: c_int,
                n: c_int,
                a: DevicePtr,
                lda: c_int,
                tau: DevicePtr,
                w: DevicePtr,
                lw: c_int,
                info: DevicePtr,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe { sys::$geqrf(h, m, n, a as _, lda, tau as _, w as _, lw, info as _) }
            }
            unsafe fn ormqr_bs(
                h: H,
                s: Side,
                t: O,
                m: c_int,
                n: c_int,
                k: c_int,
                a: DevicePtr,
                lda: c_int,
                tau: DevicePtr,
                c: DevicePtr,
                ldc: c_int,
                lw: *mut c_int,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe { sys::$ormqr_bs(h, s, t, m, n, k, a as _, lda, tau as _, c as _, ldc, lw) }
            }
            unsafe fn ormqr(
                h: H,
                s: Side,
                t: O,
                m: c_int,
                n: c_int,
                k: c_int,
                a: DevicePtr,
                lda: c_int,
                tau: DevicePtr,
                c: DevicePtr,
                ldc: c_int,
                w: DevicePtr,
                lw: c_int,
                info: DevicePtr,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe {
                    sys::$ormqr(
                        h, s, t, m, n, k, a as _, lda, tau as _, c as _, ldc, w as _, lw, info as _,
                    )
                }
            }
            unsafe fn syevd_bs(
                h: H,
                j: Eig,
                u: Fill,
                n: c_int,
                a: DevicePtr,
                lda: c_int,
                d: DevicePtr,
                lw: *mut c_int,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe { sys::$syevd_bs(h, j, u, n, a as _, lda, d as _, lw) }
            }
            unsafe fn syevd(
                h: H,
                j: Eig,
                u: Fill,
                n: c_int,
                a: DevicePtr,
                lda: c_int,
                d: DevicePtr,
                w: DevicePtr,
                lw: c_int,
                info: DevicePtr,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe { sys::$syevd(h, j, u, n, a as _, lda, d as _, w as _, lw, info as _) }
            }
            unsafe fn gesvd_bs(h: H, ju: i8, jv: i8, m: c_int, n: c_int, lw: *mut c_int) -> S {
                // SAFETY: as in potrf_bs.
                unsafe { sys::$gesvd_bs(h, ju as _, jv as _, m, n, lw) }
            }
            unsafe fn gesvd(
                h: H,
                ju: i8,
                jv: i8,
                m: c_int,
                n: c_int,
                a: DevicePtr,
                lda: c_int,
                s: DevicePtr,
                u: DevicePtr,
                ldu: c_int,
                v: DevicePtr,
                ldv: c_int,
                w: DevicePtr,
                lw: c_int,
                rwork: DevicePtr,
                info: DevicePtr,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe {
                    sys::$gesvd(
                        h, ju as _, jv as _, m, n, a as _, lda, s as _, u as _, ldu, v as _, ldv,
                        w as _, lw, rwork as _, info as _,
                    )
                }
            }
            unsafe fn potrf_batched_bs(
                h: H,
                u: Fill,
                n: c_int,
                a: DevicePtr,
                lda: c_int,
                lw: *mut c_int,
                count: c_int,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe { sys::$pfb_bs(h, u, n, a as _, lda, lw, count) }
            }
            unsafe fn potrf_batched(
                h: H,
                u: Fill,
                n: c_int,
                a: DevicePtr,
                lda: c_int,
                w: DevicePtr,
                lw: c_int,
                info: DevicePtr,
                count: c_int,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe { sys::$pfb(h, u, n, a as _, lda, w as _, lw, info as _, count) }
            }
            unsafe fn potrs_batched_bs(
                h: H,
                u: Fill,
                n: c_int,
                nrhs: c_int,
                a: DevicePtr,
                lda: c_int,
                b: DevicePtr,
                ldb: c_int,
                lw: *mut c_int,
                count: c_int,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe { sys::$psb_bs(h, u, n, nrhs, a as _, lda, b as _, ldb, lw, count) }
            }
            unsafe fn potrs_batched(
                h: H,
                u: Fill,
                n: c_int,
                nrhs: c_int,
                a: DevicePtr,
                lda: c_int,
                b: DevicePtr,
                ldb: c_int,
                w: DevicePtr,
                lw: c_int,
                info: DevicePtr,
                count: c_int,
            ) -> S {
                // SAFETY: as in potrf_bs.
                unsafe {
                    sys::$psb(
                        h, u, n, nrhs, a as _, lda, b as _, ldb, w as _, lw, info as _, count,
                    )
                }
            }
        }
    };
}

scalar!(
    f32,
    f32,
    false,
    [
        hipsolverSpotrf_bufferSize,
        hipsolverSpotrf,
        hipsolverSpotrs_bufferSize,
        hipsolverSpotrs,
        hipsolverSgetrf_bufferSize,
        hipsolverSgetrf,
        hipsolverSgetrs_bufferSize,
        hipsolverSgetrs,
        hipsolverSgeqrf_bufferSize,
        hipsolverSgeqrf,
        hipsolverSormqr_bufferSize,
        hipsolverSormqr,
        hipsolverSsyevd_bufferSize,
        hipsolverSsyevd,
        hipsolverSgesvd_bufferSize,
        hipsolverSgesvd,
        hipsolverSpotrfBatched_bufferSize,
        hipsolverSpotrfBatched,
        hipsolverSpotrsBatched_bufferSize,
        hipsolverSpotrsBatched
    ]
);
scalar!(
    f64,
    f64,
    false,
    [
        hipsolverDpotrf_bufferSize,
        hipsolverDpotrf,
        hipsolverDpotrs_bufferSize,
        hipsolverDpotrs,
        hipsolverDgetrf_bufferSize,
        hipsolverDgetrf,
        hipsolverDgetrs_bufferSize,
        hipsolverDgetrs,
        hipsolverDgeqrf_bufferSize,
        hipsolverDgeqrf,
        hipsolverDormqr_bufferSize,
        hipsolverDormqr,
        hipsolverDsyevd_bufferSize,
        hipsolverDsyevd,
        hipsolverDgesvd_bufferSize,
        hipsolverDgesvd,
        hipsolverDpotrfBatched_bufferSize,
        hipsolverDpotrfBatched,
        hipsolverDpotrsBatched_bufferSize,
        hipsolverDpotrsBatched
    ]
);
scalar!(
    Complex32,
    f32,
    true,
    [
        hipsolverCpotrf_bufferSize,
        hipsolverCpotrf,
        hipsolverCpotrs_bufferSize,
        hipsolverCpotrs,
        hipsolverCgetrf_bufferSize,
        hipsolverCgetrf,
        hipsolverCgetrs_bufferSize,
        hipsolverCgetrs,
        hipsolverCgeqrf_bufferSize,
        hipsolverCgeqrf,
        hipsolverCunmqr_bufferSize,
        hipsolverCunmqr,
        hipsolverCheevd_bufferSize,
        hipsolverCheevd,
        hipsolverCgesvd_bufferSize,
        hipsolverCgesvd,
        hipsolverCpotrfBatched_bufferSize,
        hipsolverCpotrfBatched,
        hipsolverCpotrsBatched_bufferSize,
        hipsolverCpotrsBatched
    ]
);
scalar!(
    Complex64,
    f64,
    true,
    [
        hipsolverZpotrf_bufferSize,
        hipsolverZpotrf,
        hipsolverZpotrs_bufferSize,
        hipsolverZpotrs,
        hipsolverZgetrf_bufferSize,
        hipsolverZgetrf,
        hipsolverZgetrs_bufferSize,
        hipsolverZgetrs,
        hipsolverZgeqrf_bufferSize,
        hipsolverZgeqrf,
        hipsolverZunmqr_bufferSize,
        hipsolverZunmqr,
        hipsolverZheevd_bufferSize,
        hipsolverZheevd,
        hipsolverZgesvd_bufferSize,
        hipsolverZgesvd,
        hipsolverZpotrfBatched_bufferSize,
        hipsolverZpotrfBatched,
        hipsolverZpotrsBatched_bufferSize,
        hipsolverZpotrsBatched
    ]
);
