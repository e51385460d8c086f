//! The shape checks over hostile values, as a fuzzer would run them (issue 43): dimensions, leading
//! dimensions, strides and batch counts at the edges (0, 1, around `i32::MAX`, `2^32`, `usize::MAX`) and
//! anywhere; increments at theirs (0, -1, `i32::MIN`, `i32::MAX`). Every case ends in `Ok` or
//! `Err(InvalidArgument)`, never a panic (a debug build: arithmetic overflow panics), and every `Ok` is
//! the exact span, recomputed in `u128`, with every value hipBLAS takes as an `int` within one.

use super::*;
use crate::test_fuzz::Rng;

const CASES: usize = 20_000;

/// `f`'s answer, failing the test (naming the case) if it panicked; an `Err` must be `InvalidArgument`.
fn run<T>(case: &str, f: impl FnOnce() -> Result<T> + std::panic::UnwindSafe) -> Option<T> {
    match std::panic::catch_unwind(f) {
        Err(_) => panic!("{case} panicked"),
        Ok(Ok(v)) => Some(v),
        Ok(Err(Error::InvalidArgument { .. })) => None,
        Ok(Err(e)) => panic!("{case}: {e:?}"),
    }
}

fn fits_int(v: usize) -> bool {
    i32::try_from(v).is_ok()
}

/// `ld * (cols - 1) + rows`, or 0 without elements, exactly.
fn exact_matrix(rows: usize, cols: usize, ld: usize) -> u128 {
    if rows == 0 || cols == 0 {
        0
    } else {
        ld as u128 * (cols as u128 - 1) + rows as u128
    }
}

/// Half the cases take every size small (below 9), where shapes are plausible and the rules decide.
fn sizes(rng: &mut Rng) -> impl FnMut(&mut Rng) -> usize {
    let small = rng.below(2) == 0;
    move |rng: &mut Rng| if small { rng.below(9) } else { rng.size() }
}

/// [`sizes`]'s value or none, a quarter of the time none.
fn maybe(rng: &mut Rng, size: &mut impl FnMut(&mut Rng) -> usize) -> Option<usize> {
    (rng.below(4) != 0).then(|| size(rng))
}

fn op(rng: &mut Rng) -> Op {
    [Op::N, Op::T, Op::C][rng.below(3)]
}

#[test]
fn hostile_vectors_and_matrices_end_in_ok_or_err_never_a_panic() {
    let mut rng = Rng::new(4301);
    for _ in 0..CASES {
        let (n, inc) = (rng.size(), rng.int());
        let case = format!("vector_len({n}, {inc})");
        if let Some(len) = run(&case, || vector_len("x", n, inc)) {
            let want = if n == 0 {
                0
            } else {
                1 + (n as u128 - 1) * u128::from(inc.unsigned_abs())
            };
            assert!(inc != 0 && len as u128 == want, "{case} = {len}");
        }
        if let Some(len) = run(&case, || positive_vector_len("x", n, inc)) {
            assert!(
                inc > 0 && Some(len) == vector_len("x", n, inc).ok(),
                "{case}"
            );
        }
        let (rows, cols, ld) = (rng.size(), rng.size(), rng.size());
        let case = format!("matrix_len({rows}, {cols}, {ld})");
        if let Some(len) = run(&case, || matrix_len("a", rows, cols, ld)) {
            assert!(ld >= rows.max(1), "{case}");
            assert_eq!(len as u128, exact_matrix(rows, cols, ld), "{case}");
        }
    }
}

#[test]
fn hostile_gemm_and_gemv_shapes_end_in_ok_or_err_never_a_panic() {
    let mut rng = Rng::new(4302);
    let (mut gemms, mut gemvs) = (0, 0);
    for _ in 0..CASES {
        let mut size = sizes(&mut rng);
        let (m, n, k) = (size(&mut rng), size(&mut rng), size(&mut rng));
        let mut g = if rng.below(2) == 0 {
            Gemm::new(m, n, k)
        } else {
            Gemm::row_major(m, n, k)
        }
        .op_a(op(&mut rng))
        .op_b(op(&mut rng));
        if let Some(ld) = maybe(&mut rng, &mut size) {
            g = g.lda(ld);
        }
        if let Some(ld) = maybe(&mut rng, &mut size) {
            g = g.ldb(ld);
        }
        if let Some(ld) = maybe(&mut rng, &mut size) {
            g = g.ldc(ld);
        }
        let case = format!("{g:?}");
        for i in 0..3 {
            // Error messages are built from the same values: they must not panic either.
            run(&case, || Ok(g.describe(i)));
        }
        if let Some(call) = run(&case, || g.resolve()) {
            gemms += 1;
            assert!(
                call.mnk.iter().chain(&call.ld).all(|v| fits_int(*v)),
                "{case}"
            );
            let (mnk, ld) = call.ints();
            assert_eq!(mnk.map(|v| v as usize), call.mnk, "{case}");
            assert_eq!(ld.map(|v| v as usize), call.ld, "{case}");
            // C is m x n, stored (column-major) with its leading dimension, or n x m row-major.
            let (rows, cols) = if call.swapped { (n, m) } else { (m, n) };
            assert_eq!(
                call.len[2] as u128,
                exact_matrix(rows, cols, call.ld[2]),
                "{case}"
            );
            // A strided batch of these matrices.
            let batch = StridedBatch {
                count: size(&mut rng),
                stride_a: maybe(&mut rng, &mut size),
                stride_b: maybe(&mut rng, &mut size),
                stride_c: maybe(&mut rng, &mut size),
            };
            strided(&format!("{case} {batch:?}"), &batch, call.len);
        }
        let gemv = Gemv {
            m,
            n,
            op: op(&mut rng),
            lda: maybe(&mut rng, &mut size),
            incx: rng.int(),
            incy: rng.int(),
        };
        let case = format!("{gemv:?}");
        if let Some((lda, [a, _, _])) = run(&case, || gemv.resolve()) {
            gemvs += 1;
            assert!(fits_int(m) && fits_int(n) && fits_int(lda), "{case}");
            assert_eq!(a as u128, exact_matrix(m, n, lda), "{case}");
        }
    }
    // Both answers are reached: the generator is not all edges.
    assert!(
        gemms > 1000 && gemvs > 1000,
        "{gemms} gemm, {gemvs} gemv Ok"
    );
}

/// A strided batch over matrices spanning `one`: `Ok` (true) only with the count an `int`, the strides
/// `i64`, C's products apart, and each buffer's need exact.
fn strided(case: &str, batch: &StridedBatch, one: [usize; 3]) -> bool {
    let Some((stride, need)) = run(case, || batch.resolve(one)) else {
        return false;
    };
    assert!(fits_int(batch.count), "{case}");
    for i in 0..3 {
        assert!(i64::try_from(stride[i]).is_ok(), "{case}");
        let want = match batch.count {
            0 => 0,
            c => stride[i] as u128 * (c as u128 - 1) + one[i] as u128,
        };
        assert_eq!(need[i] as u128, want, "{case}");
    }
    assert!(batch.count < 2 || stride[2] >= one[2], "{case}");
    true
}

#[test]
fn hostile_strided_batches_end_in_ok_or_err_never_a_panic() {
    let mut rng = Rng::new(4303);
    let mut ok = 0;
    for _ in 0..CASES {
        let mut size = sizes(&mut rng);
        let one = [size(&mut rng), size(&mut rng), size(&mut rng)];
        let batch = StridedBatch {
            count: size(&mut rng),
            stride_a: maybe(&mut rng, &mut size),
            stride_b: maybe(&mut rng, &mut size),
            stride_c: maybe(&mut rng, &mut size),
        };
        ok += usize::from(strided(&format!("{batch:?} over {one:?}"), &batch, one));
    }
    assert!(ok > 1000, "{ok} Ok");
}
