//! hip::solver on a device, checked against host arithmetic: Cholesky, LU and QR solves (residuals),
//! eigenvalues and singular values of matrices whose answers are known in closed form, `info` turned
//! into clear errors (not positive definite, singular; the batched calls: `gpu_solver_batched.rs`),
//! leading dimensions larger than the rows, wrong shapes refused with nothing written, and one handle
//! moved between two streams. Compiled only with `--features gpu,solver`.
#![cfg(all(feature = "gpu", feature = "solver"))]
mod common;

use common::dense::{matvec, max_diff, spd};
use common::device;
use hip::prelude::*;
use hip::solver::{Complex64, Eigen, Handle, Op, Side, SvdVectors, Uplo};
use hip::{Error, SolverFailure};

fn setup() -> (Device, Stream, Handle) {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let h = Handle::new(&s).unwrap();
    (d, s, h)
}

#[test]
fn cholesky_solves_with_a_padded_leading_dimension_and_leaves_the_padding() {
    let (d, _s, mut solver) = setup();
    let (n, ld) = (64, 70);
    let a = spd(n, ld);
    let x: Vec<f64> = (0..n).map(|i| (i as f64 - 30.0) / 8.0).collect();
    let b = matvec(&a, n, n, ld, &x);
    let mut da = DeviceBuffer::from_slice(&d, &a).unwrap();
    let mut db = DeviceBuffer::from_slice(&d, &b).unwrap();
    solver
        .potrf(Uplo::Lower, n, &mut da, ld)
        .unwrap()
        .check()
        .unwrap();
    solver
        .potrs(Uplo::Lower, n, 1, &da, ld, &mut db, n)
        .unwrap()
        .check()
        .unwrap();
    let got = db.to_vec().unwrap();
    // f64, a well-conditioned matrix (diagonally dominant): the solution to 1e-10.
    assert!(max_diff(&got, &x) < 1e-10, "{}", max_diff(&got, &x));
    let factored = da.to_vec().unwrap();
    for j in 0..n {
        for i in n..ld {
            assert_eq!(
                factored[i + j * ld],
                -777.0,
                "padding ({i}, {j}) was written"
            );
        }
    }
}

#[test]
fn a_matrix_that_is_not_positive_definite_is_named_at_its_minor() {
    let (d, _s, mut solver) = setup();
    // Leading 2x2 minor [[1, 2], [2, 1]] has determinant -3: order 2 fails.
    let a = [1.0f32, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let mut da = DeviceBuffer::from_slice(&d, &a).unwrap();
    let info = solver.potrf(Uplo::Lower, 3, &mut da, 3).unwrap();
    match info.check() {
        Err(Error::NoSolution {
            call,
            batch: None,
            failure: SolverFailure::NotPositiveDefinite { order: 2 },
        }) => assert_eq!(call, "hipsolverSpotrf"),
        other => panic!("expected not positive definite at order 2, got {other:?}"),
    }
    assert_eq!(info.values().unwrap(), [2]);
}

#[test]
fn lu_solves_real_and_complex_systems_and_names_a_singular_pivot() {
    let (d, _s, mut solver) = setup();
    // f64: a non-symmetric system, transposed solve too.
    let n = 40;
    let mut a = spd(n, n);
    a[3] += 2.5; // no longer symmetric
    let x: Vec<f64> = (0..n).map(|i| i as f64 / 3.0 - 4.0).collect();
    let b = matvec(&a, n, n, n, &x);
    let mut da = DeviceBuffer::from_slice(&d, &a).unwrap();
    let mut ipiv = DeviceBuffer::<i32>::zeroed(&d, n).unwrap();
    solver
        .getrf(n, n, &mut da, n, &mut ipiv)
        .unwrap()
        .check()
        .unwrap();
    let mut db = DeviceBuffer::from_slice(&d, &b).unwrap();
    solver
        .getrs(Op::N, n, 1, &da, n, &ipiv, &mut db, n)
        .unwrap()
        .check()
        .unwrap();
    assert!(max_diff(&db.to_vec().unwrap(), &x) < 1e-10);
    // A^T x = b', solved with the same factors.
    let mut at = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..n {
            at[j + i * n] = a[i + j * n];
        }
    }
    let bt = matvec(&at, n, n, n, &x);
    let mut dbt = DeviceBuffer::from_slice(&d, &bt).unwrap();
    solver
        .getrs(Op::T, n, 1, &da, n, &ipiv, &mut dbt, n)
        .unwrap()
        .check()
        .unwrap();
    assert!(max_diff(&dbt.to_vec().unwrap(), &x) < 1e-10);

    // Complex64: diag(1+i, 2) with an off-diagonal 1; x = (1, i).
    let c = |re, im| Complex64::new(re, im);
    let a = [c(1.0, 1.0), c(0.0, 0.0), c(1.0, 0.0), c(2.0, 0.0)];
    let b = [c(1.0, 1.0) + c(0.0, 1.0), c(0.0, 2.0)];
    let mut da = DeviceBuffer::from_slice(&d, &a).unwrap();
    let mut ipiv = DeviceBuffer::<i32>::zeroed(&d, 2).unwrap();
    solver
        .getrf(2, 2, &mut da, 2, &mut ipiv)
        .unwrap()
        .check()
        .unwrap();
    let mut db = DeviceBuffer::from_slice(&d, &b).unwrap();
    solver
        .getrs(Op::N, 2, 1, &da, 2, &ipiv, &mut db, 2)
        .unwrap()
        .check()
        .unwrap();
    let got = db.to_vec().unwrap();
    assert!(
        (got[0] - c(1.0, 0.0)).norm() < 1e-12 && (got[1] - c(0.0, 1.0)).norm() < 1e-12,
        "{got:?}"
    );

    // A singular matrix: the second column is twice the first.
    let a = [1.0f64, 2.0, 2.0, 4.0];
    let mut da = DeviceBuffer::from_slice(&d, &a).unwrap();
    let mut ipiv = DeviceBuffer::<i32>::zeroed(&d, 2).unwrap();
    match solver.getrf(2, 2, &mut da, 2, &mut ipiv).unwrap().check() {
        Err(Error::NoSolution {
            failure: SolverFailure::Singular { pivot: 2 },
            ..
        }) => {}
        other => panic!("expected singular at pivot 2, got {other:?}"),
    }
}

#[test]
fn qr_gives_r_and_applying_q_transposed_to_a_gives_r_again() {
    let (d, _s, mut solver) = setup();
    let (m, n) = (12, 5);
    let a: Vec<f64> = (0..m * n)
        .map(|i| ((i * 17 % 23) as f64 - 11.0) / 4.0)
        .collect();
    let mut da = DeviceBuffer::from_slice(&d, &a).unwrap();
    let mut tau = DeviceBuffer::<f64>::zeroed(&d, n).unwrap();
    solver
        .geqrf(m, n, &mut da, m, &mut tau)
        .unwrap()
        .check()
        .unwrap();
    let qr = da.to_vec().unwrap();
    let mut c = DeviceBuffer::from_slice(&d, &a).unwrap();
    solver
        .ormqr(Side::Left, Op::T, (m, n, n), &da, m, &tau, &mut c, m)
        .unwrap()
        .check()
        .unwrap();
    let qta = c.to_vec().unwrap();
    for j in 0..n {
        for i in 0..m {
            let want = if i <= j { qr[i + j * m] } else { 0.0 };
            assert!(
                (qta[i + j * m] - want).abs() < 1e-10,
                "({i}, {j}): {} vs {want}",
                qta[i + j * m]
            );
        }
    }
}

#[test]
fn eigenvalues_and_singular_values_match_their_closed_forms() {
    let (d, _s, mut solver) = setup();
    // The tridiagonal (-1, 2, -1) matrix: eigenvalues 2 - 2 cos(k pi / (n + 1)), k = 1..n.
    let n = 32;
    let mut a = vec![0.0f64; n * n];
    for i in 0..n {
        a[i + i * n] = 2.0;
        if i + 1 < n {
            a[i + 1 + i * n] = -1.0;
            a[i + (i + 1) * n] = -1.0;
        }
    }
    let want: Vec<f64> = (1..=n)
        .map(|k| 2.0 - 2.0 * (k as f64 * std::f64::consts::PI / (n as f64 + 1.0)).cos())
        .collect();
    let mut da = DeviceBuffer::from_slice(&d, &a).unwrap();
    let mut w = DeviceBuffer::<f64>::zeroed(&d, n).unwrap();
    solver
        .syevd(Eigen::Vectors, Uplo::Upper, n, &mut da, n, &mut w)
        .unwrap()
        .check()
        .unwrap();
    assert!(max_diff(&w.to_vec().unwrap(), &want) < 1e-12);
    // Each returned column v_k satisfies A v_k = w_k v_k.
    let v = da.to_vec().unwrap();
    for k in [0, n / 2, n - 1] {
        let col = &v[k * n..(k + 1) * n];
        let av = matvec(&a, n, n, n, col);
        let wv: Vec<f64> = col.iter().map(|x| x * want[k]).collect();
        assert!(max_diff(&av, &wv) < 1e-10);
    }
    // f32 singular values of a 6 x 4 matrix whose columns are orthogonal with norms 3, 1, 4, 2.
    let (m, n) = (6, 4);
    let norms = [3.0f32, 1.0, 4.0, 2.0];
    let mut a = vec![0.0f32; m * n];
    for j in 0..n {
        a[j + j * m] = norms[j];
    }
    let mut da = DeviceBuffer::from_slice(&d, &a).unwrap();
    let mut s = DeviceBuffer::<f32>::zeroed(&d, n).unwrap();
    let mut u = DeviceBuffer::<f32>::zeroed(&d, m * n).unwrap();
    let mut vt = DeviceBuffer::<f32>::zeroed(&d, n * n).unwrap();
    solver
        .gesvd(
            (SvdVectors::Thin, SvdVectors::All),
            m,
            n,
            &mut da,
            m,
            &mut s,
            (&mut u, m),
            (&mut vt, n),
        )
        .unwrap()
        .check()
        .unwrap();
    let got = s.to_vec().unwrap();
    for (g, w) in got.iter().zip([4.0f32, 3.0, 2.0, 1.0]) {
        assert!((g - w).abs() < 1e-5, "{got:?}");
    }
}

#[test]
fn wrong_shapes_are_refused_with_nothing_written() {
    let (d, _s, mut solver) = setup();
    let a = spd(8, 8);
    let mut da = DeviceBuffer::from_slice(&d, &a[..63]).unwrap();
    let e = solver.potrf(Uplo::Lower, 8, &mut da, 8).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                what: "potrf: a",
                ..
            }
        ),
        "{e}"
    );
    let mut small = DeviceBuffer::from_slice(&d, &a).unwrap();
    let e = solver.potrf(Uplo::Lower, 8, &mut small, 7).unwrap_err();
    assert!(e.to_string().contains("leading dimension 7"), "{e}");
    let mut ipiv = DeviceBuffer::<i32>::zeroed(&d, 7).unwrap();
    let e = solver.getrf(8, 8, &mut small, 8, &mut ipiv).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                what: "getrf: ipiv",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        small.to_vec().unwrap(),
        a,
        "a refused call wrote its matrix"
    );
    assert_eq!(da.to_vec().unwrap(), &a[..63]);
}

#[test]
fn one_handle_on_two_streams_keeps_program_order() {
    let (d, s1, mut solver) = setup();
    let s2 = Stream::new(&d).unwrap();
    let n = 256;
    let a = spd(n, n);
    let x: Vec<f64> = (0..n).map(|i| (i % 9) as f64).collect();
    let b = matvec(&a, n, n, n, &x);
    let mut da = DeviceBuffer::from_slice(&d, &a).unwrap();
    let mut db = DeviceBuffer::from_slice(&d, &b).unwrap();
    let f = solver.potrf(Uplo::Upper, n, &mut da, n).unwrap();
    // The solve on the other stream must see the finished factor (and the workspace's last writer).
    solver.set_stream(&s2).unwrap();
    let s = solver.potrs(Uplo::Upper, n, 1, &da, n, &mut db, n).unwrap();
    f.check().unwrap();
    s.check().unwrap();
    assert!(max_diff(&db.to_vec().unwrap(), &x) < 1e-9);
    drop(s1);
}

/// Host arithmetic of the four element types, for the checks below.
trait Host: hip::solver::SolverScalar + Copy + std::fmt::Debug {
    const NAME: &'static str;
    /// The unit roundoff of the type's precision.
    const EPS: f64;
    fn new(re: f64, im: f64) -> Self;
    fn re(self) -> f64;
    fn im(self) -> f64;
    fn real_of(r: Self::Real) -> f64;
}

macro_rules! host_real {
    ($t:ty, $eps:expr) => {
        impl Host for $t {
            const NAME: &'static str = stringify!($t);
            const EPS: f64 = $eps;
            fn new(re: f64, _: f64) -> Self {
                re as $t
            }
            fn re(self) -> f64 {
                self as f64
            }
            fn im(self) -> f64 {
                0.0
            }
            fn real_of(r: Self::Real) -> f64 {
                r as f64
            }
        }
    };
}
macro_rules! host_complex {
    ($t:ty, $r:ty, $eps:expr) => {
        impl Host for $t {
            const NAME: &'static str = stringify!($t);
            const EPS: f64 = $eps;
            fn new(re: f64, im: f64) -> Self {
                <$t>::new(re as $r, im as $r)
            }
            fn re(self) -> f64 {
                self.re as f64
            }
            fn im(self) -> f64 {
                self.im as f64
            }
            fn real_of(r: Self::Real) -> f64 {
                r as f64
            }
        }
    };
}
host_real!(f32, f32::EPSILON as f64);
host_real!(f64, f64::EPSILON);
host_complex!(hip::solver::Complex32, f32, f32::EPSILON as f64);
host_complex!(Complex64, f64, f64::EPSILON);

type C = (f64, f64);
fn cmul(a: C, b: C) -> C {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}
fn to_c<T: Host>(v: &[T]) -> Vec<C> {
    v.iter().map(|x| (x.re(), x.im())).collect()
}
/// `op(A) x` for a column-major n x n `A` (op: conjugate-transpose when `h`).
fn cmatvec(a: &[C], n: usize, x: &[C], h: bool) -> Vec<C> {
    (0..n)
        .map(|i| {
            (0..n).fold((0.0, 0.0), |s, j| {
                let e = if h {
                    (a[j + i * n].0, -a[j + i * n].1)
                } else {
                    a[i + j * n]
                };
                let p = cmul(e, x[j]);
                (s.0 + p.0, s.1 + p.1)
            })
        })
        .collect()
}
fn cnorm(v: &[C]) -> f64 {
    v.iter().map(|c| c.0 * c.0 + c.1 * c.1).sum::<f64>().sqrt()
}
fn cdiff(a: &[C], b: &[C]) -> Vec<C> {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x.0 - y.0, x.1 - y.1))
        .collect()
}

/// A Hermitian positive definite n x n matrix (real symmetric for real types): `n + 2` on the
/// diagonal, small values with imaginary parts (complex types only) off it, `A(j, i) = conj(A(i, j))`.
fn hpd<T: Host>(n: usize) -> Vec<T> {
    let mut a = vec![T::new(0.0, 0.0); n * n];
    for j in 0..n {
        for i in 0..n {
            let (re, im) = match i.cmp(&j) {
                std::cmp::Ordering::Equal => (n as f64 + 2.0, 0.0),
                std::cmp::Ordering::Less => (
                    (((i * 5 + j * 3) % 7) as f64 - 3.0) / 4.0,
                    ((i + 2 * j) % 5) as f64 / 8.0,
                ),
                std::cmp::Ordering::Greater => (
                    (((j * 5 + i * 3) % 7) as f64 - 3.0) / 4.0,
                    -(((j + 2 * i) % 5) as f64) / 8.0,
                ),
            };
            a[i + j * n] = T::new(re, im);
        }
    }
    a
}

/// Every call of the solver for one type, checked by residuals against host arithmetic in f64, with a
/// tolerance of `1000 n eps` of the type (the matrices are well conditioned: diagonally dominant).
fn every_call_for<T: Host>() {
    let (d, _s, mut solver) = setup();
    let n = 24;
    let a = hpd::<T>(n);
    let ac = to_c(&a);
    let tol = 1000.0 * n as f64 * T::EPS;
    let x: Vec<T> = (0..n)
        .map(|i| T::new(i as f64 / 5.0 - 2.0, (i % 3) as f64 / 4.0))
        .collect();
    let b: Vec<T> = cmatvec(&ac, n, &to_c(&x), false)
        .iter()
        .map(|c| T::new(c.0, c.1))
        .collect();
    let rel = |got: &[T]| cnorm(&cdiff(&to_c(got), &to_c(&x))) / cnorm(&to_c(&x));
    // Cholesky.
    let mut da = DeviceBuffer::from_slice(&d, &a).unwrap();
    let mut db = DeviceBuffer::from_slice(&d, &b).unwrap();
    solver
        .potrf(Uplo::Lower, n, &mut da, n)
        .unwrap()
        .check()
        .unwrap();
    solver
        .potrs(Uplo::Lower, n, 1, &da, n, &mut db, n)
        .unwrap()
        .check()
        .unwrap();
    assert!(
        rel(&db.to_vec().unwrap()) < tol,
        "{} potrs: {}",
        T::NAME,
        rel(&db.to_vec().unwrap())
    );
    // LU, and the conjugate-transposed solve (A is Hermitian: A^H x = b too).
    let mut da = DeviceBuffer::from_slice(&d, &a).unwrap();
    let mut ipiv = DeviceBuffer::<i32>::zeroed(&d, n).unwrap();
    solver
        .getrf(n, n, &mut da, n, &mut ipiv)
        .unwrap()
        .check()
        .unwrap();
    for op in [Op::N, Op::C] {
        let mut db = DeviceBuffer::from_slice(&d, &b).unwrap();
        solver
            .getrs(op, n, 1, &da, n, &ipiv, &mut db, n)
            .unwrap()
            .check()
            .unwrap();
        assert!(rel(&db.to_vec().unwrap()) < tol, "{} getrs {op:?}", T::NAME);
    }
    // QR: Q^H A is R.
    let mut qr = DeviceBuffer::from_slice(&d, &a).unwrap();
    let mut tau = DeviceBuffer::from_slice(&d, &vec![T::new(0.0, 0.0); n]).unwrap();
    solver
        .geqrf(n, n, &mut qr, n, &mut tau)
        .unwrap()
        .check()
        .unwrap();
    let r = to_c(&qr.to_vec().unwrap());
    let mut c = DeviceBuffer::from_slice(&d, &a).unwrap();
    solver
        .ormqr(Side::Left, Op::C, (n, n, n), &qr, n, &tau, &mut c, n)
        .unwrap()
        .check()
        .unwrap();
    let qha = to_c(&c.to_vec().unwrap());
    let scale = cnorm(&ac);
    for j in 0..n {
        for i in 0..n {
            let want = if i <= j { r[i + j * n] } else { (0.0, 0.0) };
            let e =
                ((qha[i + j * n].0 - want.0).powi(2) + (qha[i + j * n].1 - want.1).powi(2)).sqrt();
            assert!(e < tol * scale, "{} Q^H A ({i}, {j}): {e}", T::NAME);
        }
    }
    // Eigenvalues and vectors: A v = w v for each column.
    let mut dv = DeviceBuffer::from_slice(&d, &a).unwrap();
    let mut w = DeviceBuffer::<T::Real>::zeroed(&d, n).unwrap();
    solver
        .syevd(Eigen::Vectors, Uplo::Upper, n, &mut dv, n, &mut w)
        .unwrap()
        .check()
        .unwrap();
    let (v, w) = (to_c(&dv.to_vec().unwrap()), w.to_vec().unwrap());
    for k in 0..n {
        let col = &v[k * n..(k + 1) * n];
        let wk = T::real_of(w[k]);
        let av = cmatvec(&ac, n, col, false);
        let wv: Vec<C> = col.iter().map(|c| (c.0 * wk, c.1 * wk)).collect();
        assert!(
            cnorm(&cdiff(&av, &wv)) < tol * scale,
            "{} eigenpair {k}",
            T::NAME
        );
        assert!(
            k == 0 || wk >= T::real_of(w[k - 1]),
            "{} eigenvalues ascending",
            T::NAME
        );
    }
    // SVD of a tall matrix (two copies of A stacked): A = U S V^H, reconstructed.
    let m = 2 * n;
    let tall: Vec<T> = (0..n)
        .flat_map(|j| (0..m).map(move |i| (i, j)))
        .map(|(i, j)| a[i % n + j * n])
        .collect();
    let mut dt = DeviceBuffer::from_slice(&d, &tall).unwrap();
    let mut s = DeviceBuffer::<T::Real>::zeroed(&d, n).unwrap();
    let mut u = DeviceBuffer::from_slice(&d, &vec![T::new(0.0, 0.0); m * n]).unwrap();
    let mut vt = DeviceBuffer::from_slice(&d, &vec![T::new(0.0, 0.0); n * n]).unwrap();
    solver
        .gesvd(
            (SvdVectors::Thin, SvdVectors::All),
            m,
            n,
            &mut dt,
            m,
            &mut s,
            (&mut u, m),
            (&mut vt, n),
        )
        .unwrap()
        .check()
        .unwrap();
    let (s, u, vt) = (
        s.to_vec().unwrap(),
        to_c(&u.to_vec().unwrap()),
        to_c(&vt.to_vec().unwrap()),
    );
    let tc = to_c(&tall);
    let mut worst: f64 = 0.0;
    for j in 0..n {
        for i in 0..m {
            let mut acc = (0.0, 0.0);
            for k in 0..n {
                let p = cmul(u[i + k * m], vt[k + j * n]);
                let sk = T::real_of(s[k]);
                acc = (acc.0 + p.0 * sk, acc.1 + p.1 * sk);
            }
            worst = worst.max(
                ((acc.0 - tc[i + j * m].0).powi(2) + (acc.1 - tc[i + j * m].1).powi(2)).sqrt(),
            );
        }
    }
    assert!(worst < tol * scale, "{} U S V^H: {worst}", T::NAME);
}

#[test]
fn every_call_for_every_type_against_host_residuals() {
    every_call_for::<f32>();
    every_call_for::<f64>();
    every_call_for::<hip::solver::Complex32>();
    every_call_for::<Complex64>();
}
