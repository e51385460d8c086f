//! hip::blas's calls beyond the products (`asum`, `iamax` / `iamin`, `ger` / `gerc`, `geam`, `trsm`,
//! `syrk`, `herk`, the math and atomics modes) on a device: each against a host reference in complex
//! f64, with leading dimensions larger than the rows (the rows between must stay as they were), and
//! refused shapes that write nothing. Compiled only with `--features gpu,blas`.
//!
//! Tolerances, relative to the size of the terms (`sum |a| |b|`): `k` (terms per element) times the
//! element type's epsilon for f32 and f64, twice that for Complex32 and Complex64 (four products per
//! term); `trsm` is checked by its residual `|op(A) X - alpha B|` against `4 m eps (|op(A)| |X| + |alpha B|)`.
#![cfg(all(feature = "gpu", feature = "blas"))]
mod common;

use common::device;
use hip::blas::{
    BlasComplex, BlasScalar, Complex32, Complex64, Diag, Geam, Handle, MathMode, Op, Side, Syrk,
    Trsm, Uplo,
};
use hip::prelude::*;
use hip::Error;

/// Element types as complex f64 on the host, with their epsilon.
trait Host: BlasScalar + PartialEq + std::fmt::Debug {
    const EPS: f64;
    const COMPLEX: bool;
    fn c(self) -> Complex64;
    fn from_c(v: Complex64) -> Self;
    fn make(i: usize) -> Self;
    fn real(v: Self::Real) -> f64;
    fn to_real(v: f64) -> Self::Real;
}

macro_rules! host_real {
    ($t:ty) => {
        impl Host for $t {
            const EPS: f64 = <$t>::EPSILON as f64;
            const COMPLEX: bool = false;
            fn c(self) -> Complex64 {
                Complex64::new(self as f64, 0.0)
            }
            fn from_c(v: Complex64) -> Self {
                v.re as $t
            }
            fn make(i: usize) -> Self {
                ((i * 37 % 29) as $t - 14.0) / 7.0
            }
            fn real(v: $t) -> f64 {
                v as f64
            }
            fn to_real(v: f64) -> $t {
                v as $t
            }
        }
    };
}
host_real!(f32);
host_real!(f64);

macro_rules! host_complex {
    ($t:ty, $r:ty) => {
        impl Host for $t {
            const EPS: f64 = 2.0 * <$r>::EPSILON as f64;
            const COMPLEX: bool = true;
            fn c(self) -> Complex64 {
                Complex64::new(self.re as f64, self.im as f64)
            }
            fn from_c(v: Complex64) -> Self {
                <$t>::new(v.re as $r, v.im as $r)
            }
            fn make(i: usize) -> Self {
                <$t>::new(<$r>::make(i), <$r>::make(i * 3 + 1))
            }
            fn real(v: $r) -> f64 {
                v as f64
            }
            fn to_real(v: f64) -> $r {
                v as $r
            }
        }
    };
}
host_complex!(Complex32, f32);
host_complex!(Complex64, f64);

fn data<T: Host>(n: usize, seed: usize) -> Vec<T> {
    (0..n).map(|i| T::make(i * 13 + seed)).collect()
}

fn to_host<T: Host>(v: &[T]) -> Vec<Complex64> {
    v.iter().map(|x| x.c()).collect()
}

/// `|got - want| <= tol * scale` element by element (exact equality where the scale is 0: untouched).
fn assert_close(what: &str, got: &[Complex64], want: &[Complex64], scale: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, ((g, w), s)) in got.iter().zip(want).zip(scale).enumerate() {
        assert!(
            (g - w).norm() <= tol * s,
            "{what}: element {i}: got {g}, want {w} (scale {s})"
        );
    }
}

/// Element (i, j) of the stored column-major matrix `m` (leading dimension `ld`) after `op`.
fn at(m: &[Complex64], ld: usize, op: Op, i: usize, j: usize) -> Complex64 {
    match op {
        Op::N => m[i + j * ld],
        Op::T => m[j + i * ld],
        Op::C => m[j + i * ld].conj(),
    }
}

fn setup() -> (Device, Stream, Handle) {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let h = Handle::new(&s).unwrap();
    (d, s, h)
}

fn level1<T: Host>() {
    let (d, _s, blas) = setup();
    let n = 500;
    // |re| + |im| between 1 and 5.5, but a unique largest element at 37 and a unique smallest at 91,
    // among every second one.
    let im = |j: usize| {
        if T::COMPLEX {
            -((j % 5) as f64) / 8.0
        } else {
            0.0
        }
    };
    let mut x: Vec<T> = (0..2 * n)
        .map(|j| T::from_c(Complex64::new(1.0 + (j % 17) as f64 / 4.0, im(j))))
        .collect();
    x[2 * 37] = T::from_c(Complex64::new(-100.0, if T::COMPLEX { 50.0 } else { 0.0 }));
    x[2 * 91] = T::from_c(Complex64::new(0.25, 0.0));
    let dx = DeviceBuffer::from_slice(&d, &x).unwrap();
    let l1 = |v: Complex64| v.re.abs() + v.im.abs();
    let want: f64 = (0..n).map(|i| l1(x[2 * i].c())).sum();
    let got = T::real(blas.asum(n, &dx, 2).unwrap());
    assert!(
        (got - want).abs() <= n as f64 * T::EPS * want,
        "asum: got {got}, want {want}"
    );
    let mut r = DeviceBuffer::<T::Real>::zeroed(&d, 2).unwrap();
    blas.asum_into(n, &dx, 2, &mut r).unwrap();
    let on_device = r.to_vec().unwrap();
    let got = T::real(on_device[0]);
    assert!(
        (got - want).abs() <= n as f64 * T::EPS * want,
        "asum_into: got {got}, want {want}"
    );
    assert_eq!(T::real(on_device[1]), 0.0, "asum_into writes one element");
    assert!(matches!(
        blas.asum(n, &dx, -2),
        Err(Error::InvalidArgument {
            what: "asum operand x",
            ..
        })
    ));

    // 0-based indices of the vector's elements (not of the buffer), None for an empty vector.
    assert_eq!(blas.iamax(n, &dx, 2).unwrap(), Some(37));
    assert_eq!(blas.iamin(n, &dx, 2).unwrap(), Some(91));
    assert_eq!(blas.iamax(0, &dx, 2).unwrap(), None);
    assert_eq!(blas.iamin(1, &dx, 1).unwrap(), Some(0));
    assert!(matches!(
        blas.iamax(n + 1, &dx, 2),
        Err(Error::InvalidArgument {
            what: "iamax operand x",
            ..
        })
    ));
}

fn ger<T: Host>() {
    let (d, _s, blas) = setup();
    let (m, n, lda) = (5, 4, 7);
    let a: Vec<T> = data(lda * n, 3);
    let x: Vec<T> = data(2 * m, 4);
    let y: Vec<T> = data(n, 5);
    let (dx, dy) = (
        DeviceBuffer::from_slice(&d, &x).unwrap(),
        DeviceBuffer::from_slice(&d, &y).unwrap(),
    );
    let alpha = T::make(6);
    for conj in [false, true] {
        let mut da = DeviceBuffer::from_slice(&d, &a).unwrap();
        if conj {
            blas.gerc(m, n, alpha, &dx, 2, &dy, 1, &mut da, lda)
                .unwrap();
        } else {
            blas.ger(m, n, alpha, &dx, 2, &dy, 1, &mut da, lda).unwrap();
        }
        let mut want = to_host(&a);
        let mut scale = vec![0.0; want.len()];
        for j in 0..n {
            let yj = if conj { y[j].c().conj() } else { y[j].c() };
            for i in 0..m {
                let t = alpha.c() * x[2 * i].c() * yj;
                scale[i + j * lda] = t.norm() + want[i + j * lda].norm();
                want[i + j * lda] += t;
            }
        }
        let name = if conj { "gerc" } else { "ger" };
        assert_close(
            name,
            &to_host(&da.to_vec().unwrap()),
            &want,
            &scale,
            2.0 * T::EPS,
        );
    }
}

fn geam<T: Host>() {
    let (d, s, blas) = setup();
    let (m, n) = (5, 4);
    // op(A) = A^T: A stored 4 x 5 with lda 6; B as stored, ldb 5 (tight); C with ldc 7.
    let shape = Geam {
        op_a: Op::T,
        lda: Some(6),
        ldc: Some(7),
        ..Geam::new(m, n)
    };
    let a: Vec<T> = data(6 * m, 7);
    let b: Vec<T> = data(m * n, 8);
    let c0: Vec<T> = data(7 * n, 9);
    let (da, db) = (
        DeviceBuffer::from_slice(&d, &a).unwrap(),
        DeviceBuffer::from_slice(&d, &b).unwrap(),
    );
    let mut dc = DeviceBuffer::from_slice(&d, &c0).unwrap();
    let (alpha, beta) = (T::make(10), T::make(11));
    blas.geam(&shape, alpha, &da, beta, &db, &mut dc).unwrap();
    let (ah, bh) = (to_host(&a), to_host(&b));
    let mut want = to_host(&c0);
    let mut scale = vec![0.0; want.len()];
    for j in 0..n {
        for i in 0..m {
            let (ta, tb) = (
                alpha.c() * at(&ah, 6, Op::T, i, j),
                beta.c() * at(&bh, m, Op::N, i, j),
            );
            want[i + j * 7] = ta + tb;
            scale[i + j * 7] = ta.norm() + tb.norm();
        }
    }
    assert_close(
        "geam",
        &to_host(&dc.to_vec().unwrap()),
        &want,
        &scale,
        2.0 * T::EPS,
    );

    // Refused: C one element short of what ldc 7 reaches; nothing is queued, C is as it was.
    let mut short = DeviceBuffer::from_slice(&d, &c0[..7 * (n - 1) + m - 1]).unwrap();
    assert!(matches!(
        blas.geam(&shape, alpha, &da, beta, &db, &mut short),
        Err(Error::InvalidArgument {
            what: "geam operand c",
            ..
        })
    ));
    s.synchronize().unwrap();
    assert_eq!(short.to_vec().unwrap(), c0[..7 * (n - 1) + m - 1]);
}

/// op(A) of a triangular `k x k` A as a dense matrix (the other triangle and, for a unit diagonal, the
/// diagonal as BLAS takes them, whatever is stored).
fn triangle(a: &[Complex64], lda: usize, k: usize, t: &Trsm) -> Vec<Complex64> {
    let mut full = vec![Complex64::new(0.0, 0.0); k * k];
    for j in 0..k {
        for i in 0..k {
            let inside = match t.uplo {
                Uplo::Upper => i <= j,
                Uplo::Lower => i >= j,
            };
            full[i + j * k] = if i == j && t.diag == Diag::Unit {
                Complex64::new(1.0, 0.0)
            } else if inside {
                a[i + j * lda]
            } else {
                Complex64::new(0.0, 0.0)
            };
        }
    }
    (0..k * k)
        .map(|p| at(&full, k, t.op, p % k, p / k))
        .collect()
}

fn trsm<T: Host>() {
    let (d, s, blas) = setup();
    let (m, n) = (4, 3);
    let cases = [
        Trsm {
            uplo: Uplo::Lower,
            lda: Some(6),
            ldb: Some(5),
            ..Trsm::new(Side::Left, m, n)
        },
        Trsm {
            uplo: Uplo::Upper,
            op: if T::COMPLEX { Op::C } else { Op::T },
            diag: Diag::Unit,
            lda: Some(4),
            ldb: Some(6),
            ..Trsm::new(Side::Right, m, n)
        },
    ];
    for t in cases {
        let k = if t.side == Side::Left { m } else { n };
        let (lda, ldb) = (t.lda.unwrap(), t.ldb.unwrap());
        // A dominant diagonal: a well-conditioned solve.
        let mut a: Vec<T> = data(lda * k, 12);
        for i in 0..k {
            a[i + i * lda] = T::from_c(Complex64::new(4.0 + i as f64, 0.5));
        }
        let b: Vec<T> = data(ldb * n, 13);
        let da = DeviceBuffer::from_slice(&d, &a).unwrap();
        let mut db = DeviceBuffer::from_slice(&d, &b).unwrap();
        let alpha = T::make(14);
        blas.trsm(&t, alpha, &da, &mut db).unwrap();
        let x = to_host(&db.to_vec().unwrap());
        let op_a = triangle(&to_host(&a), lda, k, &t);
        let bh = to_host(&b);
        for j in 0..n {
            for i in 0..m {
                let (mut sum, mut abs) = (Complex64::new(0.0, 0.0), 0.0);
                for p in 0..k {
                    let term = if t.side == Side::Left {
                        op_a[i + p * k] * x[p + j * ldb]
                    } else {
                        x[i + p * ldb] * op_a[p + j * k]
                    };
                    sum += term;
                    abs += term.norm();
                }
                let rhs = alpha.c() * bh[i + j * ldb];
                let res = (sum - rhs).norm();
                assert!(
                    res <= 4.0 * k as f64 * T::EPS * (abs + rhs.norm()),
                    "trsm {t:?}: element ({i}, {j}): residual {res}"
                );
            }
            // Rows between m and ldb untouched.
            for i in m..ldb {
                assert_eq!(
                    x[i + j * ldb],
                    bh[i + j * ldb],
                    "trsm {t:?}: padding ({i}, {j})"
                );
            }
        }
    }
    // Refused: B one element short; nothing written.
    let t = Trsm::new(Side::Left, m, n);
    let a: Vec<T> = data(m * m, 15);
    let b: Vec<T> = data(m * n - 1, 16);
    let da = DeviceBuffer::from_slice(&d, &a).unwrap();
    let mut db = DeviceBuffer::from_slice(&d, &b).unwrap();
    assert!(matches!(
        blas.trsm(&t, T::make(1), &da, &mut db),
        Err(Error::InvalidArgument {
            what: "trsm operand b",
            ..
        })
    ));
    s.synchronize().unwrap();
    assert_eq!(db.to_vec().unwrap(), b);
}

/// The host rank-k update of the `uplo` triangle: `C = alpha op(A) op(A)^T (or ^H) + beta C`, with
/// `op(A)` `n x k` (`a_at` gives its elements), and the scale of each element (0 outside the triangle).
fn host_rank_k(
    n: usize,
    k: usize,
    a_at: &dyn Fn(usize, usize) -> Complex64,
    herm: bool,
    (alpha, beta): (Complex64, Complex64),
    c: &mut [Complex64],
    ldc: usize,
) -> Vec<f64> {
    let mut scale = vec![0.0; c.len()];
    for j in 0..n {
        for i in 0..=j {
            let (mut sum, mut abs) = (Complex64::new(0.0, 0.0), 0.0);
            for p in 0..k {
                let second = if herm { a_at(j, p).conj() } else { a_at(j, p) };
                let t = a_at(i, p) * second;
                sum += t;
                abs += t.norm();
            }
            let idx = i + j * ldc;
            scale[idx] = alpha.norm() * abs + beta.norm() * c[idx].norm();
            c[idx] = alpha * sum + beta * c[idx];
            if herm && i == j {
                c[idx].im = 0.0;
            }
        }
    }
    scale
}

fn syrk<T: Host>() {
    let (d, _s, blas) = setup();
    let (n, k) = (4, 3);
    for op in [Op::N, Op::T] {
        // Upper triangle; A n x k (N) or k x n (T) with lda 6, C with ldc 5.
        let shape = Syrk {
            op,
            lda: Some(6),
            ldc: Some(5),
            ..Syrk::new(n, k)
        };
        let a: Vec<T> = data(6 * n.max(k), 17);
        let c0: Vec<T> = data(5 * n, 18);
        let da = DeviceBuffer::from_slice(&d, &a).unwrap();
        let mut dc = DeviceBuffer::from_slice(&d, &c0).unwrap();
        let (alpha, beta) = (T::make(19), T::make(20));
        blas.syrk(&shape, alpha, &da, beta, &mut dc).unwrap();
        let ah = to_host(&a);
        let a_at = |i: usize, p: usize| {
            if op == Op::N {
                ah[i + p * 6]
            } else {
                ah[p + i * 6]
            }
        };
        let mut want = to_host(&c0);
        let scale = host_rank_k(n, k, &a_at, false, (alpha.c(), beta.c()), &mut want, 5);
        let tol = k as f64 * T::EPS;
        assert_close(
            &format!("syrk {op:?}"),
            &to_host(&dc.to_vec().unwrap()),
            &want,
            &scale,
            tol,
        );
    }
}

fn herk<T: Host + BlasComplex>() {
    let (d, _s, blas) = setup();
    let (n, k) = (4, 3);
    for op in [Op::N, Op::C] {
        let shape = Syrk {
            op,
            lda: Some(6),
            ldc: Some(5),
            ..Syrk::new(n, k)
        };
        let a: Vec<T> = data(6 * n.max(k), 21);
        let c0: Vec<T> = data(5 * n, 22);
        let da = DeviceBuffer::from_slice(&d, &a).unwrap();
        let mut dc = DeviceBuffer::from_slice(&d, &c0).unwrap();
        let (alpha, beta) = (0.75, -1.5);
        blas.herk(&shape, T::to_real(alpha), &da, T::to_real(beta), &mut dc)
            .unwrap();
        let ah = to_host(&a);
        let a_at = |i: usize, p: usize| {
            if op == Op::N {
                ah[i + p * 6]
            } else {
                ah[p + i * 6].conj()
            }
        };
        let mut want = to_host(&c0);
        let scalars = (Complex64::new(alpha, 0.0), Complex64::new(beta, 0.0));
        let scale = host_rank_k(n, k, &a_at, true, scalars, &mut want, 5);
        let tol = k as f64 * T::EPS;
        assert_close(
            &format!("herk {op:?}"),
            &to_host(&dc.to_vec().unwrap()),
            &want,
            &scale,
            tol,
        );
    }
    // herk takes Op::C, not Op::T: refused before hipBLAS.
    let shape = Syrk {
        op: Op::T,
        ..Syrk::new(n, k)
    };
    let da = DeviceBuffer::<T>::zeroed(&d, n * k).unwrap();
    let mut dc = DeviceBuffer::<T>::zeroed(&d, n * n).unwrap();
    assert!(matches!(
        blas.herk(&shape, T::to_real(1.0), &da, T::to_real(0.0), &mut dc),
        Err(Error::InvalidArgument { what: "herk", .. })
    ));
}

macro_rules! per_type {
    ($name:ident, $t:ty) => {
        mod $name {
            use super::*;
            #[test]
            fn level1_asum_iamax_iamin() {
                level1::<$t>();
            }
            #[test]
            fn ger_and_gerc() {
                ger::<$t>();
            }
            #[test]
            fn geam_transposed_with_large_leading_dimensions() {
                geam::<$t>();
            }
            #[test]
            fn trsm_left_and_right() {
                trsm::<$t>();
            }
            #[test]
            fn syrk_upper() {
                syrk::<$t>();
            }
        }
    };
}

per_type!(f32_calls, f32);
per_type!(f64_calls, f64);
per_type!(c32_calls, Complex32);
per_type!(c64_calls, Complex64);

#[test]
fn herk_complex32() {
    herk::<Complex32>();
}

#[test]
fn herk_complex64() {
    herk::<Complex64>();
}

#[test]
fn math_mode_where_hipblas_has_it() {
    let (_d, _s, blas) = setup();
    blas.set_atomics_mode(false).unwrap();
    blas.set_atomics_mode(true).unwrap();
    let r = blas.set_math_mode(MathMode::Default);
    if hip::blas::HEADER_VERSION.0 >= 2 {
        r.unwrap();
    } else {
        assert!(matches!(r, Err(Error::NotSupported { .. })), "{r:?}");
    }
}
