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

#[cfg(test)]
mod tests {
    use super::*;

    /// DTL's `status_code` names and numbers (`dtl/error/status.hpp`), written out.
    #[test]
    fn every_status_has_dtls_name_and_number() {
        let table = [
            (Status::Ok, 0, "ok"),
            (Status::NotFound, 1, "not_found"),
            (Status::AllocationFailed, 201, "allocation_failed"),
            (Status::OutOfMemory, 202, "out_of_memory"),
            (Status::InvalidPointer, 203, "invalid_pointer"),
            (Status::MemoryTransferFailed, 204, "memory_transfer_failed"),
            (Status::OutOfBounds, 401, "out_of_bounds"),
            (Status::ExtentMismatch, 405, "extent_mismatch"),
            (Status::InvalidArgument, 410, "invalid_argument"),
            (Status::NullPointer, 411, "null_pointer"),
            (Status::NotSupported, 420, "not_supported"),
            (Status::BackendError, 500, "backend_error"),
            (Status::BackendNotAvailable, 501, "backend_not_available"),
            (Status::BackendInitFailed, 502, "backend_init_failed"),
            (Status::BackendInvalid, 503, "backend_invalid"),
            (Status::CudaError, 510, "cuda_error"),
            (Status::HipError, 520, "hip_error"),
            (Status::NcclError, 540, "nccl_error"),
            (Status::OperationFailed, 600, "operation_failed"),
            (Status::InternalError, 900, "internal_error"),
            (Status::NotImplemented, 901, "not_implemented"),
            (Status::InvalidState, 902, "invalid_state"),
            (Status::UnknownError, 999, "unknown_error"),
        ];
        for (status, code, name) in table {
            assert_eq!((status.code(), status.name()), (code, name));
            assert_eq!(status.to_string(), format!("{name} ({code})"));
        }
    }
}
