//! hipSOLVER's and hipSPARSE's codes and the solver failures: names, DTL groups, messages, and the
//! `Error` variants that carry them. Compiled in every build (no library needed).

use super::{SolverErrorCode, SolverFailure, SparseErrorCode};
use crate::error::{Error, Status};

#[test]
fn solver_codes_keep_their_names_and_dtl_groups() {
    let named = [
        (0, "HIPSOLVER_STATUS_SUCCESS", Status::Ok),
        (
            1,
            "HIPSOLVER_STATUS_NOT_INITIALIZED",
            Status::BackendInitFailed,
        ),
        (2, "HIPSOLVER_STATUS_ALLOC_FAILED", Status::AllocationFailed),
        (3, "HIPSOLVER_STATUS_INVALID_VALUE", Status::InvalidArgument),
        (
            4,
            "HIPSOLVER_STATUS_MAPPING_ERROR",
            Status::MemoryTransferFailed,
        ),
        (
            5,
            "HIPSOLVER_STATUS_EXECUTION_FAILED",
            Status::OperationFailed,
        ),
        (6, "HIPSOLVER_STATUS_INTERNAL_ERROR", Status::InternalError),
        (7, "HIPSOLVER_STATUS_NOT_SUPPORTED", Status::NotSupported),
        (8, "HIPSOLVER_STATUS_ARCH_MISMATCH", Status::NotSupported),
        (9, "HIPSOLVER_STATUS_HANDLE_IS_NULLPTR", Status::NullPointer),
        (10, "HIPSOLVER_STATUS_INVALID_ENUM", Status::InvalidArgument),
        (11, "HIPSOLVER_STATUS_UNKNOWN", Status::BackendError),
        (12, "HIPSOLVER_STATUS_ZERO_PIVOT", Status::OperationFailed),
        (
            13,
            "HIPSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED",
            Status::NotSupported,
        ),
    ];
    for (v, name, status) in named {
        let c = SolverErrorCode(v);
        assert_eq!((c.name(), c.status()), (Some(name), status), "{v}");
        assert_eq!(c.to_string(), format!("{name} ({v})"));
    }
    let unknown = SolverErrorCode(99);
    assert_eq!(unknown.name(), None);
    assert_eq!(unknown.status(), Status::BackendError);
    assert_eq!(unknown.to_string(), "hipsolverStatus_t 99");
    let e = Error::Solver {
        call: "hipsolverDpotrf",
        code: SolverErrorCode(3),
    };
    assert_eq!(
        e.to_string(),
        "hipsolverDpotrf failed: HIPSOLVER_STATUS_INVALID_VALUE (3)"
    );
    assert_eq!(e.status(), Status::InvalidArgument);
    assert_eq!(e.solver_code(), Some(SolverErrorCode(3)));
    assert_eq!(e.sparse_code(), None);
    assert_eq!(e.blas_code(), None);
}

#[test]
fn sparse_codes_keep_their_names_and_dtl_groups() {
    let named = [
        (0, "HIPSPARSE_STATUS_SUCCESS", Status::Ok),
        (
            1,
            "HIPSPARSE_STATUS_NOT_INITIALIZED",
            Status::BackendInitFailed,
        ),
        (2, "HIPSPARSE_STATUS_ALLOC_FAILED", Status::AllocationFailed),
        (3, "HIPSPARSE_STATUS_INVALID_VALUE", Status::InvalidArgument),
        (4, "HIPSPARSE_STATUS_ARCH_MISMATCH", Status::NotSupported),
        (
            5,
            "HIPSPARSE_STATUS_MAPPING_ERROR",
            Status::MemoryTransferFailed,
        ),
        (
            6,
            "HIPSPARSE_STATUS_EXECUTION_FAILED",
            Status::OperationFailed,
        ),
        (7, "HIPSPARSE_STATUS_INTERNAL_ERROR", Status::InternalError),
        (
            8,
            "HIPSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED",
            Status::NotSupported,
        ),
        (9, "HIPSPARSE_STATUS_ZERO_PIVOT", Status::OperationFailed),
        (10, "HIPSPARSE_STATUS_NOT_SUPPORTED", Status::NotSupported),
        (
            11,
            "HIPSPARSE_STATUS_INSUFFICIENT_RESOURCES",
            Status::AllocationFailed,
        ),
    ];
    for (v, name, status) in named {
        let c = SparseErrorCode(v);
        assert_eq!((c.name(), c.status()), (Some(name), status), "{v}");
        assert_eq!(c.to_string(), format!("{name} ({v})"));
    }
    let unknown = SparseErrorCode(12);
    assert_eq!(unknown.name(), None);
    assert_eq!(unknown.status(), Status::BackendError);
    assert_eq!(unknown.to_string(), "hipsparseStatus_t 12");
    let e = Error::Sparse {
        call: "hipsparseSpMV",
        code: SparseErrorCode(11),
    };
    assert_eq!(
        e.to_string(),
        "hipsparseSpMV failed: HIPSPARSE_STATUS_INSUFFICIENT_RESOURCES (11)"
    );
    assert_eq!(e.status(), Status::AllocationFailed);
    assert_eq!(e.sparse_code(), Some(SparseErrorCode(11)));
    assert_eq!(e.solver_code(), None);
}

#[test]
fn each_solver_failure_says_what_the_input_was_with_its_batch() {
    let cases = [
        (
            SolverFailure::NotPositiveDefinite { order: 3 },
            "the matrix is not positive definite (its leading minor of order 3 is not)",
            Status::OperationFailed,
        ),
        (
            SolverFailure::Singular { pivot: 2 },
            "the matrix is singular (U(2, 2) is exactly zero)",
            Status::OperationFailed,
        ),
        (
            SolverFailure::NotConverged { count: 5 },
            "the algorithm did not converge (5 elements did not)",
            Status::OperationFailed,
        ),
        (
            SolverFailure::IllegalArgument { position: 4 },
            "the library refused argument 4",
            Status::InvalidArgument,
        ),
        (
            SolverFailure::Undocumented { info: 9 },
            "info 9, which the call does not document",
            Status::BackendError,
        ),
    ];
    for (failure, text, status) in cases {
        assert_eq!(failure.to_string(), text);
        assert_eq!(failure.status(), status, "{text}");
        let single = Error::NoSolution {
            call: "hipsolverSgetrf",
            batch: None,
            failure,
        };
        assert_eq!(single.to_string(), format!("hipsolverSgetrf: {text}"));
        assert_eq!(single.status(), status);
        let batched = Error::NoSolution {
            call: "hipsolverSpotrfBatched",
            batch: Some(7),
            failure,
        };
        assert_eq!(
            batched.to_string(),
            format!("hipsolverSpotrfBatched: {text} (problem 7 of the batch)")
        );
        assert_eq!(batched.solver_code(), None);
    }
}
