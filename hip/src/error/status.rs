//! DTL's status codes, mirrored.

use std::fmt;

/// A status mirroring DTL's `status_code` (`dtl/error/status.hpp`): the same names and numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
#[allow(missing_docs)] // each variant is DTL's value of the same name
pub enum Status {
    Ok = 0,
    NotFound = 1,
    AllocationFailed = 201,
    OutOfMemory = 202,
    InvalidPointer = 203,
    MemoryTransferFailed = 204,
    OutOfBounds = 401,
    ExtentMismatch = 405,
    InvalidArgument = 410,
    NullPointer = 411,
    NotSupported = 420,
    BackendError = 500,
    BackendNotAvailable = 501,
    BackendInitFailed = 502,
    BackendInvalid = 503,
    CudaError = 510,
    HipError = 520,
    NcclError = 540,
    OperationFailed = 600,
    InternalError = 900,
    NotImplemented = 901,
    InvalidState = 902,
    UnknownError = 999,
}

impl Status {
    /// DTL's number for this status.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// DTL's name for this status, e.g. `"hip_error"`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::NotFound => "not_found",
            Status::AllocationFailed => "allocation_failed",
            Status::OutOfMemory => "out_of_memory",
            Status::InvalidPointer => "invalid_pointer",
            Status::MemoryTransferFailed => "memory_transfer_failed",
            Status::OutOfBounds => "out_of_bounds",
            Status::ExtentMismatch => "extent_mismatch",
            Status::InvalidArgument => "invalid_argument",
            Status::NullPointer => "null_pointer",
            Status::NotSupported => "not_supported",
            Status::BackendError => "backend_error",
            Status::BackendNotAvailable => "backend_not_available",
            Status::BackendInitFailed => "backend_init_failed",
            Status::BackendInvalid => "backend_invalid",
            Status::CudaError => "cuda_error",
            Status::HipError => "hip_error",
            Status::NcclError => "nccl_error",
            Status::OperationFailed => "operation_failed",
            Status::InternalError => "internal_error",
            Status::NotImplemented => "not_implemented",
            Status::InvalidState => "invalid_state",
            Status::UnknownError => "unknown_error",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.code())
    }
}
