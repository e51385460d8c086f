//! hip::blaslt without a device: the shape checks, the epilogue and type tables, the status mapping.

use super::calls::type_name;
use super::shape::{holds, Call, Layout};
use super::*;
use crate::error::Status;
use half::{bf16, f16};

fn refused(r: Result<Call>) -> String {
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
fn a_column_major_product_has_tight_leading_dimensions_and_exact_spans() {
    let call = Matmul::new(4, 3, 5).resolve().unwrap();
    assert_eq!((call.m, call.n, call.k, call.count), (4, 3, 5, 1));
    assert_eq!(call.ops, [Op::N, Op::N]);
    assert!(!call.swapped);
    // A 4 x 5 (ld 4), B 5 x 3 (ld 5), C/D 4 x 3 (ld 4).
    assert_eq!((call.first.rows, call.first.cols, call.first.ld), (4, 5, 4));
    assert_eq!(call.first.need, 20);
    assert_eq!(
        (call.second.rows, call.second.cols, call.second.ld),
        (5, 3, 5)
    );
    assert_eq!(call.c.need, 12);
    assert_eq!(call.bias_len(), 4);
    // Transposes swap the stored shapes; a larger ld spans ld * (cols - 1) + rows.
    let call = Matmul::new(4, 3, 5)
        .op_a(Op::T)
        .op_b(Op::T)
        .lda(8)
        .ldc(6)
        .resolve()
        .unwrap();
    assert_eq!((call.first.rows, call.first.cols, call.first.ld), (5, 4, 8));
    assert_eq!(call.first.need, 8 * 3 + 5);
    assert_eq!((call.second.rows, call.second.cols), (3, 5));
    assert_eq!(call.c.need, 6 * 2 + 4);
}

#[test]
fn row_major_runs_the_transposed_product_with_b_first() {
    // Row-major A 2 x 3 (ld 3), B 3 x 4 (ld 4), D 2 x 4 (ld 4): the call is D^T (4 x 2) = B^T A^T.
    let call = Matmul::row_major(2, 4, 3).resolve().unwrap();
    assert!(call.swapped);
    assert_eq!((call.m, call.n, call.k), (4, 2, 3));
    assert_eq!((call.first.rows, call.first.cols, call.first.ld), (4, 3, 4));
    assert_eq!(
        (call.second.rows, call.second.cols, call.second.ld),
        (3, 2, 3)
    );
    assert_eq!((call.c.rows, call.c.cols, call.c.ld), (4, 2, 4));
    assert_eq!(call.ordered("a", "b"), ("b", "a"));
    assert_eq!(call.names(), ("matmul operand b", "matmul operand a"));
    // The bias has one element per column of the row-major D.
    assert_eq!(call.bias_len(), 4);
    // op_b(T): B stored 4 x 3 row-major, the call's first operand transposed.
    let call = Matmul::row_major(2, 4, 3).op_b(Op::T).resolve().unwrap();
    assert_eq!(call.ops, [Op::T, Op::N]);
    assert_eq!((call.first.rows, call.first.cols, call.first.ld), (3, 4, 3));
}

#[test]
fn short_leading_dimensions_empty_products_and_overflow_are_refused_by_operand() {
    let e = refused(Matmul::new(4, 3, 5).lda(3).resolve());
    assert!(e.starts_with("matmul operand a|leading dimension 3|") && e.contains("at least 4"));
    let e = refused(Matmul::new(4, 3, 5).ldb(4).resolve());
    assert!(e.starts_with("matmul operand b|leading dimension 4"), "{e}");
    let e = refused(Matmul::new(4, 3, 5).ldc(2).resolve());
    assert!(e.starts_with("matmul operand c/d|"), "{e}");
    // Row-major: ld is at least the stored columns.
    let e = refused(Matmul::row_major(2, 4, 3).lda(2).resolve());
    assert!(e.starts_with("matmul operand a|leading dimension 2") && e.contains("at least 3"));
    for (desc, what) in [
        (Matmul::new(0, 3, 5), "matmul m"),
        (Matmul::new(4, 0, 5), "matmul n"),
        (Matmul::new(4, 3, 0), "matmul k"),
    ] {
        assert!(refused(desc.resolve()).starts_with(what));
    }
    let e = refused(Matmul::new(usize::MAX, 2, 1).resolve());
    assert!(e.starts_with("matmul m|") && e.contains("64-bit"), "{e}");
    // Each span fits, the element counts are checked against the buffers.
    let huge = Matmul::new(usize::MAX / 2, 2, 1).resolve().unwrap();
    assert_eq!(huge.c.need, usize::MAX - 1);
    let e = refused(Matmul::new(4, 3, 5).ldc(usize::MAX / 2).resolve());
    assert!(e.contains("overflow"), "{e}");
}

#[test]
fn a_batch_needs_every_product_and_outputs_that_do_not_overlap() {
    let batch = |stride_c| StridedBatch {
        count: 3,
        stride_a: 20,
        stride_b: 0,
        stride_c,
    };
    let call = Matmul::new(4, 3, 5).batch(batch(12)).resolve().unwrap();
    assert_eq!(call.count, 3);
    assert_eq!(call.first.need, 20 * 2 + 20);
    // B shared by every product.
    assert_eq!(call.second.need, 15);
    assert_eq!(call.c.need, 12 * 2 + 12);
    let e = refused(Matmul::new(4, 3, 5).batch(batch(11)).resolve());
    assert!(e.starts_with("matmul batch stride_c|11|") && e.contains("spans 12"));
    let e = refused(
        Matmul::new(4, 3, 5)
            .batch(StridedBatch {
                count: 0,
                ..batch(12)
            })
            .resolve(),
    );
    assert!(e.starts_with("matmul batch count|0|"), "{e}");
    let e = refused(Matmul::new(4, 3, 5).batch(batch(usize::MAX / 2)).resolve());
    assert!(e.contains("overflow") || e.contains("64-bit"), "{e}");
    // A single product ignores C's stride.
    let one = StridedBatch {
        count: 1,
        ..batch(0)
    };
    assert_eq!(
        Matmul::new(4, 3, 5).batch(one).resolve().unwrap().c.need,
        12
    );
}

#[test]
fn the_auxiliary_output_has_d_shape_with_its_own_leading_dimension() {
    let call = Matmul::new(4, 3, 5).resolve().unwrap();
    assert_eq!(call.aux_need(4).unwrap(), (12, 12));
    assert_eq!(call.aux_need(8).unwrap(), (8 * 2 + 4, 24));
    assert!(call.aux_need(3).is_err());
    let batched = Matmul::new(4, 3, 5)
        .batch(StridedBatch {
            count: 2,
            stride_a: 20,
            stride_b: 15,
            stride_c: 12,
        })
        .resolve()
        .unwrap();
    assert_eq!(batched.aux_need(8).unwrap(), (24 + 20, 24));
    // Row-major: the call's rows are D's columns.
    let row = Matmul::row_major(2, 4, 3).resolve().unwrap();
    assert_eq!(row.aux_need(4).unwrap(), (8, 8));
    assert!(row.aux_need(2).is_err());
}

#[test]
fn holds_names_the_operand_and_what_the_product_reaches() {
    assert!(holds("matmul operand d", 12, 12).is_ok());
    match holds("matmul operand d", 11, 12) {
        Err(Error::InvalidArgument {
            what,
            value,
            reason,
        }) => {
            assert_eq!(what, "matmul operand d");
            assert_eq!(value, "a buffer of 11 elements");
            assert!(reason.contains("12"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn epilogues_are_the_header_values_with_their_buffers() {
    let want = [
        (EpilogueKind::Default, 1, false, false),
        (EpilogueKind::Relu, 2, false, false),
        (EpilogueKind::Gelu, 32, false, false),
        (EpilogueKind::Bias, 4, true, false),
        (EpilogueKind::ReluBias, 6, true, false),
        (EpilogueKind::GeluBias, 36, true, false),
        (EpilogueKind::GeluAux, 160, false, true),
        (EpilogueKind::GeluAuxBias, 164, true, true),
    ];
    assert_eq!(EpilogueKind::ALL.len(), want.len());
    for (kind, (want_kind, raw, bias, aux)) in EpilogueKind::ALL.into_iter().zip(want) {
        assert_eq!(kind, want_kind);
        assert_eq!(
            (kind.raw(), kind.has_bias(), kind.has_aux()),
            (raw, bias, aux),
            "{kind:?}"
        );
    }
    assert_eq!(Epilogue::<f32>::none().kind(), EpilogueKind::Default);
    assert_eq!(Epilogue::<f16>::relu().kind(), EpilogueKind::Relu);
    assert_eq!(Epilogue::<bf16>::gelu().kind(), EpilogueKind::Gelu);
}

#[test]
fn element_types_are_hip_data_types() {
    assert_eq!(<f32 as LtElement>::DATA_TYPE, 0);
    assert_eq!(<f16 as LtElement>::DATA_TYPE, 2);
    assert_eq!(<bf16 as LtElement>::DATA_TYPE, 14);
    for (t, name) in [(0, "f32"), (2, "f16"), (14, "bf16"), (1, "an unknown type")] {
        assert_eq!(type_name(t), name);
    }
    assert_eq!(<bf16 as LtElement>::NAME, "bf16");
}

#[test]
fn statuses_are_blas_errors_keeping_the_code_and_the_call() {
    assert!(check("hipblasLtMatmul", sys::hipblasStatus_t(0)).is_ok());
    let e = check(
        "hipblasLtMatmul",
        sys::hipblasStatus_t::HIPBLAS_STATUS_INVALID_VALUE,
    )
    .unwrap_err();
    assert!(
        matches!(e, Error::Blas { call: "hipblasLtMatmul", code } if code == BlasErrorCode(3)),
        "{e:?}"
    );
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(e
        .to_string()
        .contains("hipblasLtMatmul failed: HIPBLAS_STATUS_INVALID_VALUE"));
    let e = check("hipblasLtCreate", sys::hipblasStatus_t(0x7777)).unwrap_err();
    assert!(matches!(e, Error::Blas { code, .. } if code == BlasErrorCode(0x7777)));
    // The loader's own codes (dynamic-loading) are a missing library / function, whatever the build.
    let e = check("hipblasLtCreate", sys::hipblasLtRsStatusLibraryNotFound).unwrap_err();
    assert!(
        matches!(&e, Error::LibraryNotFound { library, .. } if library.contains("hipBLASLt")),
        "{e:?}"
    );
    assert_eq!(e.status(), Status::BackendNotAvailable);
    let e = check("hipblasLtMatmul", sys::hipblasLtRsStatusSymbolNotFound).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NotSupported {
                what: "hipblasLtMatmul",
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn descriptions_compare_by_value_and_the_layout_default_is_empty() {
    let a = Matmul::row_major(2, 4, 3).op_b(Op::T).ldc(8);
    assert_eq!(a.clone(), a);
    assert_ne!(a, Matmul::row_major(2, 4, 3).op_b(Op::T));
    assert_eq!(a.dims(), (2, 4, 3));
    assert_eq!(Layout::default().need, 0);
    assert_eq!(DEFAULT_WORKSPACE_LIMIT, 32 * 1024 * 1024);
}

#[test]
fn a_handle_moves_between_threads_and_algorithms_are_shared_data() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync + Clone>() {}
    send::<Handle>();
    send_sync::<Algo>();
    send_sync::<Matmul>();
}
