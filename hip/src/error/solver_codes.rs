//! hipSOLVER's and hipSPARSE's status codes, and what a solver's `info` result says about its input.

use super::Status;
use std::fmt;

/// One status table: value, C name, DTL-style group.
type Names = [(u32, &'static str, Status)];

fn name_of(names: &Names, v: u32) -> Option<&'static str> {
    names.iter().find(|(c, _, _)| *c == v).map(|(_, n, _)| *n)
}

fn status_of(names: &Names, v: u32) -> Status {
    names
        .iter()
        .find(|(c, _, _)| *c == v)
        .map_or(Status::BackendError, |(_, _, s)| *s)
}

/// A raw `hipsolverStatus_t` value from hipSOLVER, kept exactly as returned (the `solver` module).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SolverErrorCode(pub u32);

impl SolverErrorCode {
    const NAMES: [(u32, &'static str, Status); 14] = [
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

    /// The C enumerator's name (`"HIPSOLVER_STATUS_INVALID_VALUE"`).
    pub fn name(self) -> Option<&'static str> {
        name_of(&Self::NAMES, self.0)
    }

    /// The DTL-style status: invalid argument 410, allocation 201, mapping 204, execution 600, setup 502,
    /// internal 900, not supported 420, null pointer 411; `backend_error` (500) for codes hipSOLVER does
    /// not list.
    pub fn status(self) -> Status {
        status_of(&Self::NAMES, self.0)
    }
}

impl fmt::Display for SolverErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "hipsolverStatus_t {}", self.0),
        }
    }
}

/// A raw `hipsparseStatus_t` value from hipSPARSE, kept exactly as returned (the `sparse` module).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SparseErrorCode(pub u32);

impl SparseErrorCode {
    const NAMES: [(u32, &'static str, Status); 12] = [
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

    /// The C enumerator's name (`"HIPSPARSE_STATUS_INVALID_VALUE"`).
    pub fn name(self) -> Option<&'static str> {
        name_of(&Self::NAMES, self.0)
    }

    /// The DTL-style status, grouped as [`SolverErrorCode::status`]; `backend_error` (500) for codes
    /// hipSPARSE does not list.
    pub fn status(self) -> Status {
        status_of(&Self::NAMES, self.0)
    }
}

impl fmt::Display for SparseErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "hipsparseStatus_t {}", self.0),
        }
    }
}

/// What a factorization's or solver's `info` result says: the call ran, and its input has no answer of
/// the kind asked for ([`Error::NoSolution`](crate::Error::NoSolution)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SolverFailure {
    /// Cholesky (`potrf`): the leading minor of this order (1-based) is not positive definite.
    NotPositiveDefinite {
        /// The order of the first leading minor that is not positive definite (1-based).
        order: usize,
    },
    /// LU (`getrf`): `U(k, k)` is exactly zero for this `k` (1-based); the factorization finished, but
    /// `U` is singular and solving with it would divide by zero.
    Singular {
        /// The first zero pivot's index (1-based).
        pivot: usize,
    },
    /// An eigenvalue or singular value solver did not converge: this many off-diagonal elements (or
    /// superdiagonals) of an intermediate form did not converge to zero.
    NotConverged {
        /// How many did not converge.
        count: usize,
    },
    /// The library refused its argument at this position (1-based), as LAPACK's negative `info`. The
    /// crate checks every argument before a call, so this names a defect: please report it.
    IllegalArgument {
        /// The argument's position in the C call (1-based).
        position: usize,
    },
    /// A positive `info` from a call that documents none (`potrs`, `getrs`, `geqrf`, `ormqr`), as
    /// returned.
    Undocumented {
        /// The raw value.
        info: i32,
    },
}

impl SolverFailure {
    /// The DTL-style status: `operation_failed` (600) for what the input is (not positive definite,
    /// singular, not converged), `invalid_argument` (410) for a refused argument, `backend_error` (500)
    /// for an undocumented value.
    pub fn status(self) -> Status {
        match self {
            SolverFailure::IllegalArgument { .. } => Status::InvalidArgument,
            SolverFailure::Undocumented { .. } => Status::BackendError,
            _ => Status::OperationFailed,
        }
    }
}

impl fmt::Display for SolverFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SolverFailure::NotPositiveDefinite { order } => write!(
                f,
                "the matrix is not positive definite (its leading minor of order {order} is not)"
            ),
            SolverFailure::Singular { pivot } => {
                write!(
                    f,
                    "the matrix is singular (U({pivot}, {pivot}) is exactly zero)"
                )
            }
            SolverFailure::NotConverged { count } => {
                write!(
                    f,
                    "the algorithm did not converge ({count} elements did not)"
                )
            }
            SolverFailure::IllegalArgument { position } => {
                write!(f, "the library refused argument {position}")
            }
            SolverFailure::Undocumented { info } => {
                write!(f, "info {info}, which the call does not document")
            }
        }
    }
}

#[cfg(test)]
#[path = "solver_codes_tests.rs"]
mod tests;
