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

mod sizes {
    use super::super::sizes::{
        info_len, info_written, info_zeroed, workspace, Backend, InfoCall, Workspace,
    };

    #[test]
    fn info_holds_what_the_backend_that_writes_the_most_writes() {
        // potrsBatched: hipSOLVER zeroes batch_count ints on rocSOLVER, cuSOLVER writes one.
        assert_eq!(
            info_written(Backend::RocSolver, InfoCall::PotrsBatched, 5),
            5
        );
        assert_eq!(
            info_written(Backend::CuSolver, InfoCall::PotrsBatched, 5),
            1
        );
        assert_eq!(info_len(InfoCall::PotrsBatched, 5), 5);
        assert_eq!(info_len(InfoCall::PotrsBatched, 1), 1);
        // potrfBatched: one per matrix on both.
        assert_eq!(info_len(InfoCall::PotrfBatched, 7), 7);
        for call in [InfoCall::Computed, InfoCall::ArgumentsOnly] {
            assert_eq!(info_len(call, 1), 1);
        }
        // No backend writes more than is allocated, for every call and batch size.
        for call in [
            InfoCall::Computed,
            InfoCall::ArgumentsOnly,
            InfoCall::PotrfBatched,
            InfoCall::PotrsBatched,
        ] {
            for batch in [1, 2, 64, 1000] {
                for backend in [Backend::RocSolver, Backend::CuSolver] {
                    assert!(info_written(backend, call, batch) <= info_len(call, batch));
                }
            }
        }
    }

    #[test]
    fn info_is_zeroed_where_some_backend_leaves_part_of_it_unwritten() {
        // cuSOLVER writes 1 of potrsBatched's batch_count: the rest would be read uninitialised.
        assert!(info_zeroed(InfoCall::PotrsBatched, 3));
        // hipSOLVER before 5.3 wrote no info for potrs, getrs, geqrf, ormqr on rocSOLVER.
        assert!(info_zeroed(InfoCall::ArgumentsOnly, 1));
        // Computed by every backend, whole: no memset.
        assert!(!info_zeroed(InfoCall::Computed, 1));
        assert!(!info_zeroed(InfoCall::PotrfBatched, 9));
    }

    #[test]
    fn rocsolver_answers_bytes_and_cusolver_elements() {
        // rocSOLVER: 1000 means 1000 bytes (rocBLAS's size query), whatever the element type; lwork is
        // passed on as given.
        for elem in [4, 8, 16] {
            assert_eq!(
                workspace(Backend::RocSolver, "w", 1000, elem, 0).unwrap(),
                Workspace {
                    bytes: 1000,
                    lwork: 1000
                }
            );
        }
        // cuSOLVER: 1000 elements of 16 bytes.
        assert_eq!(
            workspace(Backend::CuSolver, "w", 1000, 16, 0).unwrap(),
            Workspace {
                bytes: 16000,
                lwork: 1000
            }
        );
        // syevd on rocSOLVER: hipSOLVER puts n reals at the front and gives rocBLAS lwork bytes after
        // them; cuSOLVER carves nothing.
        let w = workspace(Backend::RocSolver, "syevd", 4096, 8, 64 * 8).unwrap();
        assert_eq!(w.bytes, 4096 + 512);
        assert_eq!(w.lwork, 4096);
        assert_eq!(
            workspace(Backend::CuSolver, "syevd", 100, 8, 512)
                .unwrap()
                .bytes,
            800
        );
        // No workspace: hipSOLVER then uses rocBLAS's own (nothing carved from a null pointer).
        assert_eq!(
            workspace(Backend::RocSolver, "w", 0, 8, 512).unwrap().bytes,
            0
        );
    }

    #[test]
    fn hostile_workspace_answers_are_errors() {
        assert!(workspace(Backend::RocSolver, "w", -1, 8, 0).is_err());
        assert!(workspace(Backend::CuSolver, "w", -5, 8, 0).is_err());
        assert!(workspace(Backend::CuSolver, "w", i32::MAX, usize::MAX / 2, 0).is_err());
        assert!(workspace(Backend::RocSolver, "w", 1, 8, usize::MAX).is_err());
    }
}
