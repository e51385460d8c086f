//! The raw codes each library returns, kept exactly as returned, with their names.

use super::Status;
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
            3 | 4 | 5 | 10 => Status::InvalidArgument,
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
