//! [`SolverScalar`] for each element type: which hipSOLVER function each call is.

use super::types::{sealed, solver_calls, Names, SolverScalar};
use crate::library::scalar::forward_calls;
use crate::memory::DevicePtr;
use hipsolver_sys as sys;
use num_complex::{Complex32, Complex64};
use std::os::raw::c_int;
use sys::{
    hipsolverEigMode_t as Eig, hipsolverFillMode_t as Fill, hipsolverHandle_t as H,
    hipsolverOperation_t as O, hipsolverSideMode_t as Side, hipsolverStatus_t as S,
};

/// One element type: its real type, whether it is complex, and its hipSOLVER functions in the order of
/// `solver_calls!` (each call's `_bufferSize` query, then the call).
macro_rules! scalar {
    ($t:ty, real $real:ty, complex $complex:literal: [$potrf_bs:ident $potrf:ident
     $potrs_bs:ident $potrs:ident $getrf_bs:ident $getrf:ident $getrs_bs:ident $getrs:ident
     $geqrf_bs:ident $geqrf:ident $ormqr_bs:ident $ormqr:ident $syevd_bs:ident $syevd:ident
     $gesvd_bs:ident $gesvd:ident $pfb_bs:ident $pfb:ident $psb_bs:ident $psb:ident]) => {
        impl sealed::Sealed for $t {}
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
            solver_calls!(forward_calls!(sys [$potrf_bs, $potrf, $potrs_bs, $potrs, $getrf_bs,
                $getrf, $getrs_bs, $getrs, $geqrf_bs, $geqrf, $ormqr_bs, $ormqr, $syevd_bs, $syevd,
                $gesvd_bs, $gesvd, $pfb_bs, $pfb, $psb_bs, $psb]));
        }
    };
}

scalar!(f32, real f32, complex false: [
    hipsolverSpotrf_bufferSize hipsolverSpotrf hipsolverSpotrs_bufferSize hipsolverSpotrs
    hipsolverSgetrf_bufferSize hipsolverSgetrf hipsolverSgetrs_bufferSize hipsolverSgetrs
    hipsolverSgeqrf_bufferSize hipsolverSgeqrf hipsolverSormqr_bufferSize hipsolverSormqr
    hipsolverSsyevd_bufferSize hipsolverSsyevd hipsolverSgesvd_bufferSize hipsolverSgesvd
    hipsolverSpotrfBatched_bufferSize hipsolverSpotrfBatched
    hipsolverSpotrsBatched_bufferSize hipsolverSpotrsBatched
]);
scalar!(f64, real f64, complex false: [
    hipsolverDpotrf_bufferSize hipsolverDpotrf hipsolverDpotrs_bufferSize hipsolverDpotrs
    hipsolverDgetrf_bufferSize hipsolverDgetrf hipsolverDgetrs_bufferSize hipsolverDgetrs
    hipsolverDgeqrf_bufferSize hipsolverDgeqrf hipsolverDormqr_bufferSize hipsolverDormqr
    hipsolverDsyevd_bufferSize hipsolverDsyevd hipsolverDgesvd_bufferSize hipsolverDgesvd
    hipsolverDpotrfBatched_bufferSize hipsolverDpotrfBatched
    hipsolverDpotrsBatched_bufferSize hipsolverDpotrsBatched
]);
scalar!(Complex32, real f32, complex true: [
    hipsolverCpotrf_bufferSize hipsolverCpotrf hipsolverCpotrs_bufferSize hipsolverCpotrs
    hipsolverCgetrf_bufferSize hipsolverCgetrf hipsolverCgetrs_bufferSize hipsolverCgetrs
    hipsolverCgeqrf_bufferSize hipsolverCgeqrf hipsolverCunmqr_bufferSize hipsolverCunmqr
    hipsolverCheevd_bufferSize hipsolverCheevd hipsolverCgesvd_bufferSize hipsolverCgesvd
    hipsolverCpotrfBatched_bufferSize hipsolverCpotrfBatched
    hipsolverCpotrsBatched_bufferSize hipsolverCpotrsBatched
]);
scalar!(Complex64, real f64, complex true: [
    hipsolverZpotrf_bufferSize hipsolverZpotrf hipsolverZpotrs_bufferSize hipsolverZpotrs
    hipsolverZgetrf_bufferSize hipsolverZgetrf hipsolverZgetrs_bufferSize hipsolverZgetrs
    hipsolverZgeqrf_bufferSize hipsolverZgeqrf hipsolverZunmqr_bufferSize hipsolverZunmqr
    hipsolverZheevd_bufferSize hipsolverZheevd hipsolverZgesvd_bufferSize hipsolverZgesvd
    hipsolverZpotrfBatched_bufferSize hipsolverZpotrfBatched
    hipsolverZpotrsBatched_bufferSize hipsolverZpotrsBatched
]);
