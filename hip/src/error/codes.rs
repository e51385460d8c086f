//! The raw codes each library returns, kept exactly as returned, with their names.

use super::{Error, Result, Status};
use hip_sys::hipError_t;
use hiprtc_sys::hiprtcResult;
use std::fmt;

include!(concat!(env!("OUT_DIR"), "/code_names.rs"));

/// A raw `hipError_t` value, kept exactly as the runtime returned it (also values no header lists).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HipErrorCode(pub u32);

impl HipErrorCode {
    /// The primary name of this code in the headers hip-sys was built from, e.g. `"hipErrorNoDevice"`;
    /// `None` for a value those headers do not list.
    pub fn name(self) -> Option<&'static str> {
        HIP_ERROR_NAMES
            .iter()
            .find(|(v, _)| *v == self.0)
            .map(|(_, n)| *n)
    }

    /// Every code the headers list, with its primary name.
    pub fn known() -> impl Iterator<Item = (HipErrorCode, &'static str)> {
        HIP_ERROR_NAMES.iter().map(|&(v, n)| (HipErrorCode(v), n))
    }

    /// The raw `hipError_t`.
    pub fn raw(self) -> hipError_t {
        hipError_t(self.0)
    }

    /// The DTL-style status of this code (see the [module table](crate::error)).
    pub fn status(self) -> Status {
        match self.0 {
            0 => Status::Ok,
            2 => Status::OutOfMemory,
            17 => Status::InvalidPointer,
            1 | 9 | 12 | 21 | 101 => Status::InvalidArgument,
            13 | 301 | 500 => Status::NotFound,
            100 => Status::BackendNotAvailable,
            3 | 35 => Status::BackendInitFailed,
            801 | 217 => Status::NotSupported,
            4 | 704 | 705 | 709 => Status::InvalidState,
            999 => Status::UnknownError,
            _ => Status::HipError,
        }
    }
}

impl fmt::Display for HipErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "hipError_t({})", self.0),
        }
    }
}

/// A raw `hiprtcResult` value, kept exactly as HIPRTC returned it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RtcErrorCode(pub u32);

impl RtcErrorCode {
    /// The name of this code in the headers hiprtc-sys was built from, e.g. `"HIPRTC_ERROR_COMPILATION"`.
    pub fn name(self) -> Option<&'static str> {
        HIPRTC_RESULT_NAMES
            .iter()
            .find(|(v, _)| *v == self.0)
            .map(|(_, n)| *n)
    }

    /// Every code the headers list, with its name.
    pub fn known() -> impl Iterator<Item = (RtcErrorCode, &'static str)> {
        HIPRTC_RESULT_NAMES
            .iter()
            .map(|&(v, n)| (RtcErrorCode(v), n))
    }

    /// The raw `hiprtcResult`.
    pub fn raw(self) -> hiprtcResult {
        hiprtcResult(self.0)
    }

    /// The DTL-style status of this code (see the [module table](crate::error)).
    pub fn status(self) -> Status {
        match self.0 {
            0 => Status::Ok,
            1 => Status::OutOfMemory,
            // 6: HIPRTC_ERROR_COMPILATION, the user's source (or an option) did not compile.
            3 | 4 | 5 | 6 | 10 => Status::InvalidArgument,
            8 | 9 => Status::InvalidState,
            11 => Status::InternalError,
            _ => Status::HipError,
        }
    }
}

impl fmt::Display for RtcErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "hiprtcResult({})", self.0),
        }
    }
}

/// A raw `ncclResult_t` value from RCCL (or NCCL on HIP's NVIDIA platform), kept exactly as returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NcclErrorCode(pub u32);

impl NcclErrorCode {
    /// The C enumerator's name (`"ncclInvalidArgument"`), for the codes RCCL 7.2 and NCCL 2.21 list.
    pub fn name(self) -> Option<&'static str> {
        const NAMES: [&str; 8] = [
            "ncclSuccess",
            "ncclUnhandledCudaError",
            "ncclSystemError",
            "ncclInternalError",
            "ncclInvalidArgument",
            "ncclInvalidUsage",
            "ncclRemoteError",
            "ncclInProgress",
        ];
        NAMES.get(self.0 as usize).copied()
    }

    /// Always [`Status::NcclError`] (540), as DTL maps its NCCL integration; [`Status::Ok`] for 0.
    pub fn status(self) -> Status {
        if self.0 == 0 {
            Status::Ok
        } else {
            Status::NcclError
        }
    }
}

impl fmt::Display for NcclErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "ncclResult_t {}", self.0),
        }
    }
}

/// A raw `hipblasStatus_t` value from hipBLAS, kept exactly as returned (the `blas` module).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlasErrorCode(pub u32);

impl BlasErrorCode {
    /// The C enumerator's name (`"HIPBLAS_STATUS_INVALID_VALUE"`), for the codes hipBLAS 0.51 to 3.2 list.
    pub fn name(self) -> Option<&'static str> {
        const NAMES: [&str; 12] = [
            "HIPBLAS_STATUS_SUCCESS",
            "HIPBLAS_STATUS_NOT_INITIALIZED",
            "HIPBLAS_STATUS_ALLOC_FAILED",
            "HIPBLAS_STATUS_INVALID_VALUE",
            "HIPBLAS_STATUS_MAPPING_ERROR",
            "HIPBLAS_STATUS_EXECUTION_FAILED",
            "HIPBLAS_STATUS_INTERNAL_ERROR",
            "HIPBLAS_STATUS_NOT_SUPPORTED",
            "HIPBLAS_STATUS_ARCH_MISMATCH",
            "HIPBLAS_STATUS_HANDLE_IS_NULLPTR",
            "HIPBLAS_STATUS_INVALID_ENUM",
            "HIPBLAS_STATUS_UNKNOWN",
        ];
        NAMES.get(self.0 as usize).copied()
    }

    /// The DTL-style status: DTL has no BLAS group, so each code maps to the group that says what went
    /// wrong (allocation 201, invalid argument 410, null pointer 411, not supported 420, backend not
    /// initialised 502, transfer 204, operation failed 600), and anything else to `backend_error` (500).
    pub fn status(self) -> Status {
        match self.0 {
            0 => Status::Ok,
            1 => Status::BackendInitFailed,
            2 => Status::AllocationFailed,
            3 | 10 => Status::InvalidArgument,
            4 => Status::MemoryTransferFailed,
            5 => Status::OperationFailed,
            7 | 8 => Status::NotSupported,
            9 => Status::NullPointer,
            _ => Status::BackendError,
        }
    }
}

impl fmt::Display for BlasErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "hipblasStatus_t {}", self.0),
        }
    }
}

/// A raw `hiprandStatus_t` value from hipRAND, kept exactly as returned (the `rand` module).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RandErrorCode(pub u32);

impl RandErrorCode {
    const NAMES: [(u32, &'static str, Status); 14] = [
        (0, "HIPRAND_STATUS_SUCCESS", Status::Ok),
        (
            100,
            "HIPRAND_STATUS_VERSION_MISMATCH",
            Status::BackendInvalid,
        ),
        (
            101,
            "HIPRAND_STATUS_NOT_INITIALIZED",
            Status::BackendInitFailed,
        ),
        (
            102,
            "HIPRAND_STATUS_ALLOCATION_FAILED",
            Status::AllocationFailed,
        ),
        (103, "HIPRAND_STATUS_TYPE_ERROR", Status::InvalidArgument),
        (104, "HIPRAND_STATUS_OUT_OF_RANGE", Status::InvalidArgument),
        (
            105,
            "HIPRAND_STATUS_LENGTH_NOT_MULTIPLE",
            Status::ExtentMismatch,
        ),
        (
            106,
            "HIPRAND_STATUS_DOUBLE_PRECISION_REQUIRED",
            Status::NotSupported,
        ),
        (
            201,
            "HIPRAND_STATUS_LAUNCH_FAILURE",
            Status::OperationFailed,
        ),
        (
            202,
            "HIPRAND_STATUS_PREEXISTING_FAILURE",
            Status::BackendError,
        ),
        (
            203,
            "HIPRAND_STATUS_INITIALIZATION_FAILED",
            Status::BackendInitFailed,
        ),
        (204, "HIPRAND_STATUS_ARCH_MISMATCH", Status::NotSupported),
        (999, "HIPRAND_STATUS_INTERNAL_ERROR", Status::InternalError),
        (
            1000,
            "HIPRAND_STATUS_NOT_IMPLEMENTED",
            Status::NotImplemented,
        ),
    ];

    /// The C enumerator's name (`"HIPRAND_STATUS_LENGTH_NOT_MULTIPLE"`).
    pub fn name(self) -> Option<&'static str> {
        Self::NAMES
            .iter()
            .find(|(v, n, _)| *v == self.0 && !n.is_empty())
            .map(|(_, n, _)| *n)
    }

    /// The DTL-style status: the group that says what went wrong (allocation 201, invalid argument 410,
    /// length 405, not supported 420, launch 600, initialisation 502, version 503, internal 900, not
    /// implemented 901), `backend_error` (500) for anything else.
    pub fn status(self) -> Status {
        Self::NAMES
            .iter()
            .find(|(v, n, _)| *v == self.0 && !n.is_empty())
            .map_or(Status::BackendError, |(_, _, s)| *s)
    }
}

impl fmt::Display for RandErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "hiprandStatus_t {}", self.0),
        }
    }
}

/// A raw `hipfftResult` value from hipFFT, kept exactly as returned (the `fft` module).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FftErrorCode(pub u32);

impl FftErrorCode {
    const NAMES: [(u32, &'static str, Status); 16] = [
        (0, "HIPFFT_SUCCESS", Status::Ok),
        (1, "HIPFFT_INVALID_PLAN", Status::InvalidArgument),
        (2, "HIPFFT_ALLOC_FAILED", Status::AllocationFailed),
        (3, "HIPFFT_INVALID_TYPE", Status::InvalidArgument),
        (4, "HIPFFT_INVALID_VALUE", Status::InvalidArgument),
        (5, "HIPFFT_INTERNAL_ERROR", Status::InternalError),
        (6, "HIPFFT_EXEC_FAILED", Status::OperationFailed),
        (7, "HIPFFT_SETUP_FAILED", Status::BackendInitFailed),
        (8, "HIPFFT_INVALID_SIZE", Status::ExtentMismatch),
        (9, "HIPFFT_UNALIGNED_DATA", Status::InvalidPointer),
        (
            10,
            "HIPFFT_INCOMPLETE_PARAMETER_LIST",
            Status::InvalidArgument,
        ),
        (11, "HIPFFT_INVALID_DEVICE", Status::InvalidArgument),
        (12, "HIPFFT_PARSE_ERROR", Status::InvalidArgument),
        (13, "HIPFFT_NO_WORKSPACE", Status::AllocationFailed),
        (14, "HIPFFT_NOT_IMPLEMENTED", Status::NotImplemented),
        (16, "HIPFFT_NOT_SUPPORTED", Status::NotSupported),
    ];

    /// The C enumerator's name (`"HIPFFT_INVALID_SIZE"`).
    pub fn name(self) -> Option<&'static str> {
        Self::NAMES
            .iter()
            .find(|(v, _, _)| *v == self.0)
            .map(|(_, n, _)| *n)
    }

    /// The DTL-style status: the group that says what went wrong (invalid argument 410, allocation 201,
    /// size 405, alignment 203, execution 600, setup 502, internal 900, not implemented 901, not supported
    /// 420), `backend_error` (500) for codes hipFFT does not list.
    pub fn status(self) -> Status {
        Self::NAMES
            .iter()
            .find(|(v, _, _)| *v == self.0)
            .map_or(Status::BackendError, |(_, _, s)| *s)
    }
}

impl fmt::Display for FftErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "hipfftResult {}", self.0),
        }
    }
}

/// A math library (hipBLAS, hipRAND, hipFFT) as its status codes are turned into errors. Compiled in every
/// build, so its unit tests (and mutation tests) run without the libraries.
#[cfg_attr(
    not(any(
        feature = "blas",
        feature = "rand",
        feature = "fft",
        feature = "solver",
        feature = "sparse",
        feature = "blaslt"
    )),
    allow(dead_code)
)]
pub(crate) struct MathLibrary {
    /// For [`Error::LibraryNotFound`] and [`Error::NotSupported`], e.g. `"hipBLAS (libhipblas)"`.
    pub library: &'static str,
    /// What to install, for [`Error::LibraryNotFound`].
    pub install: &'static str,
    /// The sys crate's `dynamic-loading` codes: no library opened, no such symbol.
    pub not_loaded: [u32; 2],
    /// Why the library could not be opened (the sys crate's loader; empty without `dynamic-loading`).
    pub tried: fn() -> Vec<String>,
}

/// The [`MathLibrary`] of a math sys crate `$sys` (imported under that name where this is used): its
/// loader's two codes (`$not_found`, `$no_symbol`) and, with `dynamic-loading`, its loader's failure.
#[cfg_attr(
    not(any(
        feature = "blas",
        feature = "rand",
        feature = "fft",
        feature = "solver",
        feature = "sparse",
        feature = "blaslt"
    )),
    allow(unused_macros)
)]
macro_rules! math_library {
    ($sys:ident, $library:expr, $install:expr, $not_found:ident, $no_symbol:ident $(,)?) => {{
        #[cfg(feature = "dynamic-loading")]
        fn tried() -> Vec<String> {
            $sys::loader::failure()
                .map(<[String]>::to_vec)
                .unwrap_or_default()
        }
        #[cfg(not(feature = "dynamic-loading"))]
        fn tried() -> Vec<String> {
            Vec::new()
        }
        $crate::error::MathLibrary {
            library: $library,
            install: $install,
            not_loaded: [$sys::$not_found.0, $sys::$no_symbol.0],
            tried,
        }
    }};
}
#[cfg_attr(
    not(any(
        feature = "blas",
        feature = "rand",
        feature = "fft",
        feature = "solver",
        feature = "sparse",
        feature = "blaslt"
    )),
    allow(unused_imports)
)]
pub(crate) use math_library;

/// `Ok` for status 0; the loader's codes as [`Error::LibraryNotFound`] / [`Error::NotSupported`];
/// anything else through `error` (the library's own variant, keeping the raw code).
///
/// Inlined into every call's hot path; the error is built out of line.
#[cfg_attr(
    not(any(
        feature = "blas",
        feature = "rand",
        feature = "fft",
        feature = "solver",
        feature = "sparse",
        feature = "blaslt"
    )),
    allow(dead_code)
)]
#[inline]
pub(crate) fn math_status(
    lib: &MathLibrary,
    call: &'static str,
    raw: u32,
    error: impl FnOnce(u32) -> Error,
) -> Result<()> {
    match raw {
        0 => Ok(()),
        r => Err(math_error(lib, call, r, error)),
    }
}

/// The error for a status other than success.
#[cfg_attr(
    not(any(
        feature = "blas",
        feature = "rand",
        feature = "fft",
        feature = "solver",
        feature = "sparse",
        feature = "blaslt"
    )),
    allow(dead_code)
)]
#[cold]
#[inline(never)]
fn math_error(
    lib: &MathLibrary,
    call: &'static str,
    raw: u32,
    error: impl FnOnce(u32) -> Error,
) -> Error {
    match raw {
        r if r == lib.not_loaded[0] => Error::LibraryNotFound {
            library: lib.library,
            tried: (lib.tried)(),
            install: lib.install,
        },
        r if r == lib.not_loaded[1] => Error::NotSupported {
            what: call,
            reason: "the library that was loaded does not export this function",
        },
        r => error(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The module table's sharp statuses, written out, and `hip_error` for their neighbours.
    #[test]
    fn hip_codes_answer_the_status_of_the_module_table() {
        let sharp = [
            (0, Status::Ok),
            (1, Status::InvalidArgument),
            (2, Status::OutOfMemory),
            (3, Status::BackendInitFailed),
            (4, Status::InvalidState),
            (9, Status::InvalidArgument),
            (12, Status::InvalidArgument),
            (13, Status::NotFound),
            (17, Status::InvalidPointer),
            (21, Status::InvalidArgument),
            (35, Status::BackendInitFailed),
            (100, Status::BackendNotAvailable),
            (101, Status::InvalidArgument),
            (217, Status::NotSupported),
            (301, Status::NotFound),
            (500, Status::NotFound),
            (704, Status::InvalidState),
            (705, Status::InvalidState),
            (709, Status::InvalidState),
            (801, Status::NotSupported),
            (999, Status::UnknownError),
        ];
        for (raw, status) in sharp {
            assert_eq!(HipErrorCode(raw).status(), status, "{raw}");
        }
        for raw in [
            5,
            6,
            8,
            10,
            11,
            14,
            16,
            18,
            20,
            22,
            34,
            36,
            99,
            102,
            200,
            216,
            218,
            300,
            302,
            400,
            499,
            501,
            703,
            706,
            708,
            710,
            800,
            802,
            998,
            1000,
            u32::MAX,
        ] {
            assert_eq!(HipErrorCode(raw).status(), Status::HipError, "{raw}");
        }
    }

    #[test]
    fn hiprtc_codes_answer_the_status_of_the_module_table() {
        let expected = [
            Status::Ok,              // 0 success
            Status::OutOfMemory,     // 1
            Status::HipError,        // 2 program creation failure
            Status::InvalidArgument, // 3 invalid input
            Status::InvalidArgument, // 4 invalid program
            Status::InvalidArgument, // 5 invalid option
            Status::InvalidArgument, // 6 compilation: the source did not compile
            Status::HipError,        // 7 builtin operation failure
            Status::InvalidState,    // 8
            Status::InvalidState,    // 9
            Status::InvalidArgument, // 10 name expression not valid
            Status::InternalError,   // 11
            Status::HipError,        // 12
        ];
        for (raw, status) in expected.into_iter().enumerate() {
            assert_eq!(RtcErrorCode(raw as u32).status(), status, "{raw}");
        }
        assert_eq!(RtcErrorCode(4242).status(), Status::HipError);
    }

    #[test]
    fn nccl_codes_are_ok_or_nccl_error_and_keep_their_names() {
        let names = [
            "ncclSuccess",
            "ncclUnhandledCudaError",
            "ncclSystemError",
            "ncclInternalError",
            "ncclInvalidArgument",
            "ncclInvalidUsage",
            "ncclRemoteError",
            "ncclInProgress",
        ];
        for (raw, name) in names.into_iter().enumerate() {
            let code = NcclErrorCode(raw as u32);
            assert_eq!(code.name(), Some(name));
            assert_eq!(code.to_string(), format!("{name} ({raw})"));
            let status = if raw == 0 {
                Status::Ok
            } else {
                Status::NcclError
            };
            assert_eq!(code.status(), status);
        }
        assert_eq!(NcclErrorCode(8).name(), None);
        assert_eq!(NcclErrorCode(8).to_string(), "ncclResult_t 8");
        assert_eq!(NcclErrorCode(8).status(), Status::NcclError);
    }

    #[test]
    fn names_come_from_the_headers_and_unknown_codes_show_their_number() {
        // Values every supported header version lists (HIP 5.2 to 7.2).
        for (raw, name) in [
            (0, "hipSuccess"),
            (1, "hipErrorInvalidValue"),
            (2, "hipErrorOutOfMemory"),
            (100, "hipErrorNoDevice"),
            (101, "hipErrorInvalidDevice"),
            (400, "hipErrorInvalidHandle"),
            (500, "hipErrorNotFound"),
            (999, "hipErrorUnknown"),
        ] {
            let code = HipErrorCode(raw);
            assert_eq!(code.name(), Some(name));
            assert_eq!(code.to_string(), format!("{name} ({raw})"));
            assert_eq!(code.raw(), hipError_t(raw));
            assert!(HipErrorCode::known().any(|(c, n)| c == code && n == name));
        }
        assert_eq!(HipErrorCode(12345).name(), None);
        assert_eq!(HipErrorCode(12345).to_string(), "hipError_t(12345)");
        assert!(HipErrorCode::known().all(|(c, _)| c.0 != 12345));
        assert!(HipErrorCode::known().count() >= 60);
        for (raw, name) in [
            (0, "HIPRTC_SUCCESS"),
            (3, "HIPRTC_ERROR_INVALID_INPUT"),
            (6, "HIPRTC_ERROR_COMPILATION"),
            (11, "HIPRTC_ERROR_INTERNAL_ERROR"),
        ] {
            let code = RtcErrorCode(raw);
            assert_eq!(code.name(), Some(name));
            assert_eq!(code.to_string(), format!("{name} ({raw})"));
            assert_eq!(code.raw(), hiprtcResult(raw));
            assert!(RtcErrorCode::known().any(|(c, n)| c == code && n == name));
        }
        assert_eq!(RtcErrorCode(4242).name(), None);
        assert_eq!(RtcErrorCode(4242).to_string(), "hiprtcResult(4242)");
        assert!(RtcErrorCode::known().count() >= 12);
    }
}
