//! The checks of the blas module that need no device: shapes, strides, scalars and status mapping.

use super::shape::{matrix_len, positive_vector_len, vector_len, Gemm, Gemv, Op, StridedBatch};
use super::*;
use crate::error::Status;

fn invalid_what(e: Error) -> &'static str {
    match e {
        Error::InvalidArgument { what, .. } => what,
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn vector_span_is_one_plus_n_minus_one_increments() {
    assert_eq!(vector_len("x", 0, 3).unwrap(), 0);
    assert_eq!(vector_len("x", 1, 7).unwrap(), 1);
    assert_eq!(vector_len("x", 4, 1).unwrap(), 4);
    assert_eq!(vector_len("x", 4, 3).unwrap(), 10);
    assert_eq!(vector_len("x", 4, -3).unwrap(), 10);
    assert_eq!(vector_len("x", 2, i32::MIN).unwrap(), 1 + (1usize << 31));
    assert_eq!(invalid_what(vector_len("y", 4, 0).unwrap_err()), "y");
    assert_eq!(
        invalid_what(vector_len("y", usize::MAX, 2).unwrap_err()),
        "y"
    );
}

#[test]
fn positive_only_calls_refuse_zero_and_negative_increments() {
    assert_eq!(positive_vector_len("x", 0, 1).unwrap(), 0);
    assert_eq!(positive_vector_len("x", 4, 1).unwrap(), 4);
    assert_eq!(positive_vector_len("x", 4, 3).unwrap(), 10);
    for inc in [0, -1, i32::MIN] {
        let e = positive_vector_len("nrm2 x", 4, inc).unwrap_err();
        assert!(e.to_string().contains(&format!("increment {inc}")), "{e}");
        assert_eq!(invalid_what(e), "nrm2 x");
    }
}

#[test]
fn matrix_span_uses_the_leading_dimension_between_columns() {
    assert_eq!(matrix_len("a", 3, 2, 3).unwrap(), 6);
    assert_eq!(matrix_len("a", 3, 2, 5).unwrap(), 8);
    assert_eq!(matrix_len("a", 0, 4, 1).unwrap(), 0);
    assert_eq!(matrix_len("a", 4, 0, 4).unwrap(), 0);
    assert_eq!(invalid_what(matrix_len("a", 3, 2, 2).unwrap_err()), "a");
    assert_eq!(invalid_what(matrix_len("a", 0, 2, 0).unwrap_err()), "a");
    assert_eq!(
        invalid_what(matrix_len("a", 2, usize::MAX, usize::MAX).unwrap_err()),
        "a"
    );
}

#[test]
fn column_major_gemm_spans_and_transposes() {
    let call = Gemm::new(4, 3, 2).resolve().unwrap();
    assert_eq!(
        (call.mnk, call.ld, call.len, call.swapped),
        ([4, 3, 2], [4, 2, 4], [8, 6, 12], false)
    );
    // op(A) = A^T is 4x2, so A is stored 2x4 (ld 2); op(B) = B^T is 2x3: B stored 3x2 (ld 3).
    let call = Gemm::new(4, 3, 2)
        .op_a(Op::T)
        .op_b(Op::C)
        .resolve()
        .unwrap();
    assert_eq!(
        (call.ld, call.len, call.op),
        ([2, 3, 4], [8, 6, 12], [Op::T, Op::C])
    );
    // Larger leading dimensions: the last column starts ld * (cols - 1) in.
    let call = Gemm::new(4, 3, 2).lda(10).ldb(5).ldc(6).resolve().unwrap();
    assert_eq!((call.ld, call.len), ([10, 5, 6], [14, 12, 16]));
    assert_eq!(
        invalid_what(Gemm::new(4, 3, 2).lda(3).resolve().unwrap_err()),
        "gemm operand a"
    );
    assert_eq!(
        invalid_what(Gemm::new(4, 3, 2).ldb(1).resolve().unwrap_err()),
        "gemm operand b"
    );
    assert_eq!(
        invalid_what(Gemm::new(4, 3, 2).ldc(3).resolve().unwrap_err()),
        "gemm operand c"
    );
}

#[test]
fn row_major_gemm_is_the_transposed_column_major_call() {
    // Row-major A (m x k = 4x2, ld 2), B (2x3, ld 3), C (4x3, ld 3): call C^T = B^T A^T, n x m over k.
    let call = Gemm::row_major(4, 3, 2).resolve().unwrap();
    assert_eq!(
        (call.mnk, call.ld, call.len, call.swapped),
        ([3, 4, 2], [3, 2, 3], [8, 6, 12], true)
    );
    // What hipBLAS is handed: B's memory first, then A's; the sizes as C ints.
    assert_eq!(call.ordered("a", "b"), ("b", "a"));
    assert_eq!(call.ints(), ([3, 4, 2], [3, 2, 3]));
    let column_major = Gemm::new(4, 3, 2).resolve().unwrap();
    assert_eq!(column_major.ordered("a", "b"), ("a", "b"));
    assert_eq!(column_major.ints(), ([4, 3, 2], [4, 2, 4]));
    let call = Gemm::row_major(4, 3, 2)
        .op_a(Op::T)
        .lda(7)
        .resolve()
        .unwrap();
    // A stored row-major 2x4 with ld 7: spans 7 + 4.
    assert_eq!((call.op, call.ld[1], call.len[0]), ([Op::N, Op::T], 7, 11));
    assert_eq!(
        invalid_what(Gemm::row_major(4, 3, 2).ldc(2).resolve().unwrap_err()),
        "gemm operand c"
    );
}

#[test]
fn gemm_dimensions_must_fit_a_c_int() {
    let big = i32::MAX as usize + 1;
    assert_eq!(
        invalid_what(Gemm::new(big, 1, 1).resolve().unwrap_err()),
        "m"
    );
    assert_eq!(
        invalid_what(Gemm::new(1, 1, big).resolve().unwrap_err()),
        "k"
    );
    assert_eq!(
        invalid_what(Gemm::new(1, 1, 1).ldc(big).resolve().unwrap_err()),
        "ldc"
    );
}

#[test]
fn strided_batches_need_room_for_the_last_matrix_and_apart_outputs() {
    let one = [6, 8, 12];
    let (stride, need) = StridedBatch::packed(3).resolve(one).unwrap();
    assert_eq!((stride, need), ([6, 8, 12], [18, 24, 36]));
    let b = StridedBatch {
        count: 3,
        stride_a: Some(0),
        stride_b: Some(10),
        stride_c: Some(12),
    };
    assert_eq!(b.resolve(one).unwrap(), ([0, 10, 12], [6, 28, 36]));
    let overlapping = StridedBatch {
        stride_c: Some(11),
        ..b
    };
    assert_eq!(
        invalid_what(overlapping.resolve(one).unwrap_err()),
        "stride_c"
    );
    // One product may use any stride; no product needs nothing.
    let single = StridedBatch {
        count: 1,
        stride_c: Some(0),
        ..b
    };
    assert_eq!(single.resolve(one).unwrap().1, one);
    assert_eq!(StridedBatch::packed(0).resolve(one).unwrap().1, [0, 0, 0]);
    let huge = StridedBatch {
        stride_b: Some(usize::MAX / 2),
        ..b
    };
    assert_eq!(invalid_what(huge.resolve(one).unwrap_err()), "stride_b");
    assert_eq!(
        invalid_what(
            StridedBatch::packed(i32::MAX as usize + 1)
                .resolve(one)
                .unwrap_err()
        ),
        "batch count"
    );
}

#[test]
fn gemv_vectors_follow_the_transpose() {
    assert_eq!(Gemv::new(4, 3).resolve().unwrap(), (4, [12, 3, 4]));
    assert_eq!(
        Gemv::new(4, 3).op(Op::T).resolve().unwrap(),
        (4, [12, 4, 3])
    );
    let g = Gemv {
        lda: Some(6),
        incx: -2,
        incy: 3,
        ..Gemv::new(4, 3)
    };
    assert_eq!(g.resolve().unwrap(), (6, [16, 5, 10]));
    assert_eq!(
        invalid_what(
            Gemv {
                lda: Some(3),
                ..Gemv::new(4, 3)
            }
            .resolve()
            .unwrap_err()
        ),
        "gemv operand a"
    );
    assert_eq!(
        invalid_what(
            Gemv {
                incy: 0,
                ..Gemv::new(4, 3)
            }
            .resolve()
            .unwrap_err()
        ),
        "gemv operand y"
    );
}

#[test]
fn short_buffers_are_refused_naming_the_operand_and_shape() {
    let shape = Gemm::row_major(4, 3, 2);
    let call = shape.resolve().unwrap();
    let e = calls_check(&shape, &call.len, [8, 5, 12]).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("gemm operand b") && text.contains("5 elements") && text.contains("spans 6"),
        "{text}"
    );
    assert!(
        text.contains("row-major 2x3 matrix with leading dimension 3"),
        "{text}"
    );
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(calls_check(&shape, &call.len, [8, 6, 12]).is_ok());
    assert!(calls_check(&shape, &call.len, [100, 6, 13]).is_ok());
}

#[test]
fn gemm_shapes_describe_each_operand_as_the_user_stores_it() {
    let shape = Gemm::new(4, 3, 2);
    assert_eq!(shape.dims(), (4, 3, 2));
    assert_eq!(
        shape.describe(0),
        "a column-major 4x2 matrix with leading dimension 4"
    );
    assert_eq!(
        shape.describe(1),
        "a column-major 2x3 matrix with leading dimension 2"
    );
    assert_eq!(
        shape.describe(2),
        "a column-major 4x3 matrix with leading dimension 4"
    );
    // Transposed operands are stored k x m and n x k; an explicit leading dimension is reported as given.
    let shape = Gemm::new(4, 3, 2).op_a(Op::T).op_b(Op::C).ldb(7);
    assert_eq!(shape.dims(), (4, 3, 2));
    assert_eq!(
        shape.describe(0),
        "a column-major 2x4 matrix with leading dimension 2"
    );
    assert_eq!(
        shape.describe(1),
        "a column-major 3x2 matrix with leading dimension 7"
    );
    // Row-major: the tight leading dimension is the number of columns.
    let shape = Gemm::row_major(5, 6, 7).ldc(9);
    assert_eq!(shape.dims(), (5, 6, 7));
    assert_eq!(
        shape.describe(0),
        "a row-major 5x7 matrix with leading dimension 7"
    );
    assert_eq!(
        shape.describe(1),
        "a row-major 7x6 matrix with leading dimension 6"
    );
    assert_eq!(
        shape.describe(2),
        "a row-major 5x6 matrix with leading dimension 9"
    );
}

fn calls_check(shape: &Gemm, need: &[usize; 3], len: [usize; 3]) -> Result<()> {
    super::calls::check_operands(shape, need, len)
}

#[test]
fn host_and_device_scalars_do_not_mix() {
    let a: Scalar<'_, f32> = 1.0.into();
    let b: Scalar<'_, f32> = 0.0.into();
    assert!(!scalar_mode(&a, &b).unwrap());
    // SAFETY: a host scalar points at its own value, alive while `a` is.
    assert_eq!(unsafe { *a.ptr() }, 1.0);
    assert_eq!(a.ptr() as usize % 16, 0);
    assert!(a.operand().is_none());
}

#[test]
fn statuses_keep_the_raw_code_and_map_to_dtl() {
    assert!(check("hipblasSgemm", sys::hipblasStatus_t(0)).is_ok());
    let e = check("hipblasSgemm", sys::hipblasStatus_t(3)).unwrap_err();
    assert_eq!(e.blas_code(), Some(BlasErrorCode(3)));
    assert_eq!(e.status(), Status::InvalidArgument);
    assert_eq!(
        e.to_string(),
        "hipblasSgemm failed: HIPBLAS_STATUS_INVALID_VALUE (3)"
    );
    let cases = [
        (1, Status::BackendInitFailed),
        (2, Status::AllocationFailed),
        (4, Status::MemoryTransferFailed),
        (5, Status::OperationFailed),
        (6, Status::BackendError),
        (7, Status::NotSupported),
        (8, Status::NotSupported),
        (9, Status::NullPointer),
        (10, Status::InvalidArgument),
        (11, Status::BackendError),
        (99, Status::BackendError),
    ];
    for (raw, status) in cases {
        assert_eq!(BlasErrorCode(raw).status(), status, "{raw}");
    }
    assert_eq!(BlasErrorCode(99).to_string(), "hipblasStatus_t 99");
    assert_eq!(BlasErrorCode(0).status(), Status::Ok);
    assert!(matches!(
        check("x", sys::hipblasRsStatusLibraryNotFound),
        Err(Error::LibraryNotFound { .. })
    ));
    assert!(matches!(
        check("x", sys::hipblasRsStatusSymbolNotFound),
        Err(Error::NotSupported { what: "x", .. })
    ));
}

#[test]
fn ops_map_to_hipblas_values() {
    assert_eq!(raw_op(Op::N), sys::HIPBLAS_OP_N);
    assert_eq!(raw_op(Op::T), sys::HIPBLAS_OP_T);
    assert_eq!(raw_op(Op::C), sys::HIPBLAS_OP_C);
    assert_eq!(Op::default(), Op::N);
}
