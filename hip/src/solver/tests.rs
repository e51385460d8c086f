//! The solver's checks, without a device: shapes, info values, the job characters.

use super::calls::{int, matrix, vector};
use super::info::{failure, Meaning};
use crate::error::{Error, SolverFailure, Status};

fn invalid(r: crate::Result<std::os::raw::c_int>) -> String {
    match r {
        Err(Error::InvalidArgument {
            what,
            value,
            reason,
        }) => format!("{what}|{value}|{reason}"),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn a_matrix_needs_its_last_column_and_a_leading_dimension_of_its_rows() {
    // 3 x 2 with ld 5: the last element is at 3 - 1 + 5 * 1 = 7, so 8 elements.
    assert_eq!(matrix("a", 8, 3, 2, 5).unwrap(), 5);
    let e = invalid(matrix("potrf: a", 7, 3, 2, 5));
    assert!(
        e.starts_with("potrf: a|a buffer of 7 elements|") && e.contains("spans 8"),
        "{e}"
    );
    let e = invalid(matrix("a", 100, 3, 2, 2));
    assert!(
        e.contains("leading dimension 2") && e.contains("at least 3"),
        "{e}"
    );
    // Empty matrices need nothing, but a leading dimension of at least 1.
    assert_eq!(matrix("a", 0, 0, 5, 1).unwrap(), 1);
    assert_eq!(matrix("a", 0, 4, 0, 4).unwrap(), 4);
    assert!(matrix("a", 0, 0, 0, 0).is_err());
}

#[test]
fn hostile_shapes_end_in_errors_not_overflow() {
    let huge = usize::MAX;
    for (len, rows, cols, ld) in [
        (huge, 1, huge, 1),
        (
            1 << 61,
            i32::MAX as usize,
            i32::MAX as usize,
            i32::MAX as usize,
        ),
        (huge, 1 << 31, 1, 1 << 31),
        (huge, 2, 2, huge),
        (0, 1, 1, 1),
    ] {
        assert!(
            matrix("a", len, rows, cols, ld).is_err(),
            "{rows} x {cols} ld {ld}"
        );
    }
    // The largest int shape passes where the buffer could hold it (the product does not overflow).
    let m = i32::MAX as usize;
    assert!(matrix("a", huge, m, m, m).is_ok());
    assert!(int("n", m + 1).is_err() && int("n", m).is_ok());
    assert!(vector("tau", 2, 3).is_err() && vector("tau", 3, 3).is_ok());
}

#[test]
fn info_values_become_the_failure_they_name() {
    assert_eq!(failure(Meaning::NotPositiveDefinite, &[0, 0]), None);
    assert_eq!(
        failure(Meaning::NotPositiveDefinite, &[0, 3, 2]),
        Some((1, SolverFailure::NotPositiveDefinite { order: 3 }))
    );
    assert_eq!(
        failure(Meaning::Singular, &[5]),
        Some((0, SolverFailure::Singular { pivot: 5 }))
    );
    assert_eq!(
        failure(Meaning::NotConverged, &[2]),
        Some((0, SolverFailure::NotConverged { count: 2 }))
    );
    assert_eq!(
        failure(Meaning::Singular, &[-4]),
        Some((0, SolverFailure::IllegalArgument { position: 4 }))
    );
    assert_eq!(
        failure(Meaning::ArgumentsOnly, &[7]),
        Some((0, SolverFailure::Undocumented { info: 7 }))
    );
    assert_eq!(
        failure(Meaning::Singular, &[i32::MIN]),
        Some((0, SolverFailure::IllegalArgument { position: 1 << 31 }))
    );
}

#[test]
fn a_failed_solve_says_which_problem_and_what_it_was() {
    let e = Error::NoSolution {
        call: "hipsolverDpotrfBatched",
        batch: Some(3),
        failure: SolverFailure::NotPositiveDefinite { order: 2 },
    };
    assert_eq!(
        e.to_string(),
        "hipsolverDpotrfBatched: the matrix is not positive definite (its leading minor of order 2 \
         is not) (problem 3 of the batch)"
    );
    assert_eq!(e.status(), Status::OperationFailed);
    let e = Error::NoSolution {
        call: "hipsolverSgetrf",
        batch: None,
        failure: SolverFailure::Singular { pivot: 1 },
    };
    assert_eq!(
        e.to_string(),
        "hipsolverSgetrf: the matrix is singular (U(1, 1) is exactly zero)"
    );
    let refused = SolverFailure::IllegalArgument { position: 4 };
    assert_eq!(refused.status(), Status::InvalidArgument);
}
