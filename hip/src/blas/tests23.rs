//! The shape checks of `asum`, `iamax` / `iamin`, `ger`, `geam`, `trsm`, `syrk` / `herk`: no device.

use super::level23::zero_based;
use super::shape::{positive_vector_len, Op};
use super::shape23::{ger_len, Geam, Side, Syrk, Trsm};
use super::*;

fn invalid_what(e: Error) -> &'static str {
    match e {
        Error::InvalidArgument { what, .. } => what,
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn iamax_index_is_zero_based_and_none_when_empty() {
    assert_eq!(zero_based(1), Some(0));
    assert_eq!(zero_based(7), Some(6));
    assert_eq!(zero_based(0), None);
    assert_eq!(zero_based(-3), None);
    assert_eq!(zero_based(i32::MAX), Some(i32::MAX as usize - 1));
}

#[test]
fn asum_and_iamax_take_positive_increments_only() {
    assert_eq!(positive_vector_len("asum operand x", 5, 2).unwrap(), 9);
    for inc in [0, -1, i32::MIN] {
        let e = positive_vector_len("iamax operand x", 3, inc).unwrap_err();
        assert_eq!(invalid_what(e), "iamax operand x");
    }
}

#[test]
fn ger_spans_a_matrix_and_two_vectors() {
    assert_eq!(ger_len(3, 2, 3, 1, 1).unwrap(), [6, 3, 2]);
    // A larger leading dimension, strided and negative increments.
    assert_eq!(ger_len(3, 2, 5, 2, -3).unwrap(), [8, 5, 4]);
    assert_eq!(ger_len(0, 0, 1, 1, 1).unwrap(), [0, 0, 0]);
    assert_eq!(
        invalid_what(ger_len(3, 2, 2, 1, 1).unwrap_err()),
        "ger operand a"
    );
    assert_eq!(
        invalid_what(ger_len(3, 2, 3, 0, 1).unwrap_err()),
        "ger operand x"
    );
    assert_eq!(
        invalid_what(ger_len(3, 2, 3, 1, 0).unwrap_err()),
        "ger operand y"
    );
    let big = i32::MAX as usize + 1;
    assert_eq!(invalid_what(ger_len(big, 1, big, 1, 1).unwrap_err()), "m");
    assert_eq!(invalid_what(ger_len(1, big, 1, 1, 1).unwrap_err()), "n");
    assert_eq!(invalid_what(ger_len(1, 1, big, 1, 1).unwrap_err()), "lda");
    // Spans overflowing usize are errors, not panics.
    assert_eq!(
        invalid_what(ger_len(usize::MAX, usize::MAX, usize::MAX, i32::MIN, 1).unwrap_err()),
        "ger operand a"
    );
}

#[test]
fn geam_operands_are_stored_as_their_op_says() {
    let (ld, len) = Geam::new(4, 3).resolve().unwrap();
    assert_eq!((ld, len), ([4, 4, 4], [12, 12, 12]));
    let g = Geam {
        op_a: Op::T,
        op_b: Op::C,
        ..Geam::new(4, 3)
    };
    assert_eq!(g.resolve().unwrap(), ([3, 3, 4], [12, 12, 12]));
    let g = Geam {
        lda: Some(6),
        ldb: Some(5),
        ldc: Some(7),
        ..Geam::new(4, 3)
    };
    assert_eq!(g.resolve().unwrap(), ([6, 5, 7], [16, 14, 18]));
    let g = Geam {
        op_a: Op::T,
        lda: Some(2),
        ..Geam::new(4, 3)
    };
    assert_eq!(invalid_what(g.resolve().unwrap_err()), "geam operand a");
    let g = Geam {
        ldb: Some(3),
        ..Geam::new(4, 3)
    };
    assert_eq!(invalid_what(g.resolve().unwrap_err()), "geam operand b");
    let g = Geam {
        ldc: Some(0),
        ..Geam::new(0, 3)
    };
    assert_eq!(invalid_what(g.resolve().unwrap_err()), "geam operand c");
    assert_eq!(Geam::new(0, 5).resolve().unwrap().1, [0, 0, 0]);
    let big = i32::MAX as usize + 1;
    assert_eq!(invalid_what(Geam::new(1, big).resolve().unwrap_err()), "n");
    let g = Geam {
        ldc: Some(usize::MAX),
        ..Geam::new(1, 3)
    };
    assert!(matches!(g.resolve(), Err(Error::InvalidArgument { .. })));
}

#[test]
fn trsm_a_is_square_on_the_side_it_stands() {
    assert_eq!(
        Trsm::new(Side::Left, 4, 3).resolve().unwrap(),
        ([4, 4], [16, 12])
    );
    assert_eq!(
        Trsm::new(Side::Right, 4, 3).resolve().unwrap(),
        ([3, 4], [9, 12])
    );
    let t = Trsm {
        lda: Some(6),
        ldb: Some(5),
        ..Trsm::new(Side::Left, 4, 3)
    };
    assert_eq!(t.resolve().unwrap(), ([6, 5], [22, 14]));
    let t = Trsm {
        lda: Some(3),
        ..Trsm::new(Side::Left, 4, 3)
    };
    assert_eq!(invalid_what(t.resolve().unwrap_err()), "trsm operand a");
    let t = Trsm {
        ldb: Some(3),
        ..Trsm::new(Side::Right, 4, 3)
    };
    assert_eq!(invalid_what(t.resolve().unwrap_err()), "trsm operand b");
    // An empty B reads nothing of A.
    assert_eq!(Trsm::new(Side::Left, 4, 0).resolve().unwrap().1, [0, 0]);
    let big = i32::MAX as usize + 1;
    assert_eq!(
        invalid_what(Trsm::new(Side::Right, 1, big).resolve().unwrap_err()),
        "n"
    );
    let t = Trsm {
        lda: Some(usize::MAX),
        ..Trsm::new(Side::Left, 2, 2)
    };
    assert!(matches!(t.resolve(), Err(Error::InvalidArgument { .. })));
}

#[test]
fn syrk_and_herk_take_their_own_transpose() {
    assert_eq!(
        Syrk::new(3, 5).resolve("syrk", None).unwrap(),
        ([3, 3], [15, 9])
    );
    let s = Syrk {
        op: Op::T,
        ..Syrk::new(3, 5)
    };
    assert_eq!(s.resolve("syrk", None).unwrap(), ([5, 3], [15, 9]));
    let s = Syrk {
        op: Op::C,
        lda: Some(7),
        ldc: Some(4),
        ..Syrk::new(3, 5)
    };
    assert_eq!(s.resolve("syrk", None).unwrap(), ([7, 4], [19, 11]));
    // Complex: syrk takes T, herk takes C.
    assert_eq!(
        invalid_what(s.resolve("syrk", Some(Op::T)).unwrap_err()),
        "syrk"
    );
    assert!(s.resolve("herk", Some(Op::C)).is_ok());
    let s = Syrk {
        op: Op::T,
        ..Syrk::new(3, 5)
    };
    assert_eq!(
        invalid_what(s.resolve("herk", Some(Op::C)).unwrap_err()),
        "herk"
    );
    let s = Syrk {
        lda: Some(2),
        ..Syrk::new(3, 5)
    };
    assert_eq!(
        invalid_what(s.resolve("herk", Some(Op::C)).unwrap_err()),
        "herk operand a"
    );
    let s = Syrk {
        ldc: Some(2),
        ..Syrk::new(3, 5)
    };
    assert_eq!(
        invalid_what(s.resolve("syrk", None).unwrap_err()),
        "syrk operand c"
    );
    let big = i32::MAX as usize + 1;
    assert_eq!(
        invalid_what(Syrk::new(1, big).resolve("syrk", None).unwrap_err()),
        "k"
    );
}

#[test]
fn hostile_level23_shapes_end_in_errors() {
    // No value makes a check panic; any value past hipBLAS's C int is an error.
    let vals = [
        0,
        1,
        2,
        3,
        i32::MAX as usize,
        i32::MAX as usize + 1,
        usize::MAX / 2,
        usize::MAX,
    ];
    let too_big = |v: &[usize]| v.iter().any(|&v| v > i32::MAX as usize);
    let ops = [Op::N, Op::T, Op::C];
    for &m in &vals {
        for &n in &vals {
            for &ld in &vals {
                let big = too_big(&[m, n, ld]);
                let r = ger_len(m, n, ld, i32::MIN, i32::MAX);
                assert!(!big || r.is_err(), "ger {m} {n} {ld}");
                for op in ops {
                    let g = Geam {
                        op_a: op,
                        lda: Some(ld),
                        ldc: Some(ld),
                        ..Geam::new(m, n)
                    };
                    assert!(!big || g.resolve().is_err(), "{g:?}");
                    for side in [Side::Left, Side::Right] {
                        let t = Trsm {
                            op,
                            lda: Some(ld),
                            ldb: Some(ld),
                            ..Trsm::new(side, m, n)
                        };
                        assert!(!big || t.resolve().is_err(), "{t:?}");
                    }
                    let s = Syrk {
                        op,
                        lda: Some(ld),
                        ldc: Some(ld),
                        ..Syrk::new(m, n)
                    };
                    assert!(!big || s.resolve("syrk", None).is_err(), "{s:?}");
                    assert!(!big || s.resolve("herk", Some(Op::C)).is_err(), "{s:?}");
                }
            }
        }
    }
}

#[cfg(not(hipblas_math_mode))]
#[test]
fn no_math_mode_before_hipblas_2() {
    assert!(HEADER_VERSION.0 < 2, "{HEADER_VERSION:?}");
}

#[cfg(hipblas_math_mode)]
#[test]
fn math_mode_from_hipblas_2() {
    assert!(HEADER_VERSION.0 >= 2, "{HEADER_VERSION:?}");
}
