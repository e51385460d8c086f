//! hip::blas's products on a device: every call against a host reference, transposes, leading dimensions
//! larger than the rows, strided and pointer-array batches, row-major operands, `gemm_ex` with half and
//! bfloat inputs. The handle's behaviour (device scalars, streams, threads, wrong shapes, the workspace,
//! cross-stream order) is tested in `gpu_blas_handle.rs`. Compiled only with `--features gpu,blas`.
//!
//! Tolerances, relative to the size of the terms (`sum |a| |b|`, so cancellation does not matter): `k`
//! times the element type's epsilon for real types, twice that for complex (four products per term);
//! for f16 / bf16 outputs one rounding of the result (2^-11, 2^-8) on top.
#![cfg(all(feature = "gpu", feature = "blas"))]
mod common;

use common::device;
use hip::blas::{
    BlasScalar, Complex32, Complex64, ComputeType, Gemm, Gemv, Handle, Op, StridedBatch,
};
use hip::half::{bf16, f16};
use hip::prelude::*;
use hip::Error;

/// Element types as complex f64 on the host, with their epsilon.
trait Host: BlasScalar + PartialEq + std::fmt::Debug {
    const EPS: f64;
    const COMPLEX: bool;
    fn c(self) -> Complex64;
    fn make(i: usize) -> Self;
    fn real(v: Self::Real) -> f64;
}

impl Host for f32 {
    fn real(v: Self::Real) -> f64 {
        v as f64
    }
    const EPS: f64 = f32::EPSILON as f64;
    const COMPLEX: bool = false;
    fn c(self) -> Complex64 {
        Complex64::new(self as f64, 0.0)
    }
    fn make(i: usize) -> Self {
        ((i * 37 % 29) as f32 - 14.0) / 7.0
    }
}
impl Host for f64 {
    fn real(v: Self::Real) -> f64 {
        v
    }
    const EPS: f64 = f64::EPSILON;
    const COMPLEX: bool = false;
    fn c(self) -> Complex64 {
        Complex64::new(self, 0.0)
    }
    fn make(i: usize) -> Self {
        ((i * 37 % 29) as f64 - 14.0) / 7.0
    }
}
impl Host for Complex32 {
    fn real(v: Self::Real) -> f64 {
        v as f64
    }
    const EPS: f64 = 2.0 * f32::EPSILON as f64;
    const COMPLEX: bool = true;
    fn c(self) -> Complex64 {
        Complex64::new(self.re as f64, self.im as f64)
    }
    fn make(i: usize) -> Self {
        Complex32::new(f32::make(i), f32::make(i * 3 + 1))
    }
}
impl Host for Complex64 {
    fn real(v: Self::Real) -> f64 {
        v
    }
    const EPS: f64 = 2.0 * f64::EPSILON;
    const COMPLEX: bool = true;
    fn c(self) -> Complex64 {
        self
    }
    fn make(i: usize) -> Self {
        Complex64::new(f64::make(i), f64::make(i * 3 + 1))
    }
}

fn data<T: Host>(n: usize, seed: usize) -> Vec<T> {
    (0..n).map(|i| T::make(i * 13 + seed)).collect()
}

/// `|got - want| <= tol * scale` element by element.
fn assert_close(what: &str, got: &[Complex64], want: &[Complex64], scale: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, ((g, w), s)) in got.iter().zip(want).zip(scale).enumerate() {
        assert!(
            (g - w).norm() <= tol * s.max(1e-300),
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

/// The host GEMM over column-major operands: C (m x n, ldc) = alpha op(A) op(B) + beta C, with the scale
/// `|alpha| sum |a| |b| + |beta| |c|` of each element.
#[allow(clippy::too_many_arguments)]
fn host_gemm(
    (m, n, k): (usize, usize, usize),
    (oa, ob): (Op, Op),
    alpha: Complex64,
    a: &[Complex64],
    lda: usize,
    b: &[Complex64],
    ldb: usize,
    beta: Complex64,
    c: &mut [Complex64],
    ldc: usize,
) -> Vec<f64> {
    let mut scale = vec![0.0; c.len()];
    for j in 0..n {
        for i in 0..m {
            let (mut sum, mut abs) = (Complex64::new(0.0, 0.0), 0.0);
            for p in 0..k {
                let t = at(a, lda, oa, i, p) * at(b, ldb, ob, p, j);
                sum += t;
                abs += t.norm();
            }
            let idx = i + j * ldc;
            scale[idx] = alpha.norm() * abs + beta.norm() * c[idx].norm();
            c[idx] = alpha * sum + beta * c[idx];
        }
    }
    scale
}

fn to_host<T: Host>(v: &[T]) -> Vec<Complex64> {
    v.iter().map(|x| x.c()).collect()
}

fn setup() -> (Device, Stream, Handle) {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let h = Handle::new(&s).unwrap();
    (d, s, h)
}

fn level1<T: Host>() {
    let (d, s, blas) = setup();
    let n = 1000;
    let x: Vec<T> = data(2 * n, 1);
    let y: Vec<T> = data(3 * n, 2);
    let dx = DeviceBuffer::from_slice(&d, &x).unwrap();
    let mut dy = DeviceBuffer::from_slice(&d, &y).unwrap();
    let alpha = T::make(5);
    // y[3i] += alpha x[2i]
    blas.axpy(n, alpha, &dx, 2, &mut dy, 3).unwrap();
    let got = to_host(&dy.to_vec().unwrap());
    let mut want = to_host(&y);
    let mut scale = vec![0.0; want.len()];
    for i in 0..n {
        scale[3 * i] = alpha.c().norm() * x[2 * i].c().norm() + want[3 * i].norm();
        want[3 * i] += alpha.c() * x[2 * i].c();
    }
    assert_close("axpy", &got, &want, &scale, 2.0 * T::EPS);

    // dot and dotc of x (stride 2) and y (stride 3, as changed above), on the host and on the device.
    let yv = dy.to_vec().unwrap();
    let (mut dot, mut dotc, mut abs) = (Complex64::new(0.0, 0.0), Complex64::new(0.0, 0.0), 0.0);
    for i in 0..n {
        dot += x[2 * i].c() * yv[3 * i].c();
        dotc += x[2 * i].c().conj() * yv[3 * i].c();
        abs += x[2 * i].c().norm() * yv[3 * i].c().norm();
    }
    let tol = n as f64 * T::EPS;
    let got = blas.dot(n, &dx, 2, &dy, 3).unwrap().c();
    assert_close("dot", &[got], &[dot], &[abs], tol);
    let got = blas.dotc(n, &dx, 2, &dy, 3).unwrap().c();
    assert_close("dotc", &[got], &[dotc], &[abs], tol);
    let mut r = DeviceBuffer::<T>::zeroed(&d, 2).unwrap();
    blas.dot_into(true, n, &dx, 2, &dy, 3, &mut r).unwrap();
    let on_device = r.to_vec().unwrap();
    assert_close("dot_into", &[on_device[0].c()], &[dotc], &[abs], tol);
    assert_eq!(
        on_device[1].c(),
        Complex64::new(0.0, 0.0),
        "dot_into writes one element"
    );

    // nrm2 of every second element of x. BLAS defines nrm2 for positive increments only (cuBLAS
    // returns 0 for -2): refused.
    let norm: f64 = (0..n).map(|i| x[2 * i].c().norm_sqr()).sum::<f64>().sqrt();
    assert!(matches!(
        blas.nrm2(n, &dx, -2),
        Err(Error::InvalidArgument {
            what: "nrm2 operand x",
            ..
        })
    ));
    let host = T::real(blas.nrm2(n, &dx, 2).unwrap());
    let mut out = DeviceBuffer::<T::Real>::zeroed(&d, 1).unwrap();
    blas.nrm2_into(n, &dx, 2, &mut out).unwrap();
    let on_device = T::real(out.to_vec().unwrap()[0]);
    for got in [host, on_device] {
        assert!(
            (got - norm).abs() <= tol * norm,
            "nrm2: got {got}, want {norm}"
        );
    }

    // scal in place, every third element.
    let before = dy.to_vec().unwrap();
    blas.scal(n, alpha, &mut dy, 3).unwrap();
    let got = to_host(&dy.to_vec().unwrap());
    let mut want = to_host(&before);
    for i in 0..n {
        want[3 * i] *= alpha.c();
    }
    let scale: Vec<f64> = want.iter().map(|w| w.norm()).collect();
    assert_close("scal", &got, &want, &scale, 2.0 * T::EPS);
    s.synchronize().unwrap();
}

#[test]
fn level1_matches_the_host_for_every_type() {
    level1::<f32>();
    level1::<f64>();
    level1::<Complex32>();
    level1::<Complex64>();
}

fn gemv<T: Host>() {
    let (d, _s, blas) = setup();
    let (m, n, lda) = (37, 23, 41);
    let a: Vec<T> = data(lda * n, 3);
    let ops: &[Op] = if T::COMPLEX {
        &[Op::N, Op::T, Op::C]
    } else {
        &[Op::N, Op::T]
    };
    for &op in ops {
        let shape = Gemv {
            lda: Some(lda),
            incx: 2,
            incy: -1,
            ..Gemv::new(m, n).op(op)
        };
        let (nx, ny) = if op == Op::N { (n, m) } else { (m, n) };
        let x: Vec<T> = data(2 * nx, 4);
        let y: Vec<T> = data(ny, 5);
        let (alpha, beta) = (T::make(6), T::make(7));
        let da = DeviceBuffer::from_slice(&d, &a).unwrap();
        let dx = DeviceBuffer::from_slice(&d, &x).unwrap();
        let mut dy = DeviceBuffer::from_slice(&d, &y).unwrap();
        blas.gemv(&shape, alpha, &da, &dx, beta, &mut dy).unwrap();
        // A negative incy visits y from its end: logical element i is y[ny - 1 - i].
        let (ah, xh, yh) = (to_host(&a), to_host(&x), to_host(&y));
        let mut want = yh.clone();
        let mut scale = vec![0.0; ny];
        for i in 0..ny {
            let (mut sum, mut abs) = (Complex64::new(0.0, 0.0), 0.0);
            for p in 0..nx {
                let t = at(&ah, lda, op, i, p) * xh[2 * p];
                sum += t;
                abs += t.norm();
            }
            let yi = ny - 1 - i;
            scale[yi] = alpha.c().norm() * abs + beta.c().norm() * yh[yi].norm();
            want[yi] = alpha.c() * sum + beta.c() * yh[yi];
        }
        let got = to_host(&dy.to_vec().unwrap());
        assert_close(
            &format!("gemv {op:?}"),
            &got,
            &want,
            &scale,
            2.0 * nx as f64 * T::EPS,
        );
    }
}

#[test]
fn gemv_matches_the_host_for_every_type_and_transpose() {
    gemv::<f32>();
    gemv::<f64>();
    gemv::<Complex32>();
    gemv::<Complex64>();
}

fn gemm<T: Host>() {
    let (d, _s, blas) = setup();
    let (m, n, k) = (33, 17, 29);
    let ops: &[Op] = if T::COMPLEX {
        &[Op::N, Op::T, Op::C]
    } else {
        &[Op::N, Op::T]
    };
    for &oa in ops {
        for &ob in ops {
            let (ra, ca) = if oa == Op::N { (m, k) } else { (k, m) };
            let (rb, cb) = if ob == Op::N { (k, n) } else { (n, k) };
            let (lda, ldb, ldc) = (ra + 3, rb + 1, m + 5);
            let a: Vec<T> = data(lda * ca, 8);
            let b: Vec<T> = data(ldb * cb, 9);
            let c: Vec<T> = data(ldc * n, 10);
            let (alpha, beta) = (T::make(11), T::make(12));
            let shape = Gemm::new(m, n, k)
                .op_a(oa)
                .op_b(ob)
                .lda(lda)
                .ldb(ldb)
                .ldc(ldc);
            let da = DeviceBuffer::from_slice(&d, &a).unwrap();
            let db = DeviceBuffer::from_slice(&d, &b).unwrap();
            let mut dc = DeviceBuffer::from_slice(&d, &c).unwrap();
            blas.gemm(&shape, alpha, &da, &db, beta, &mut dc).unwrap();
            let mut want = to_host(&c);
            let mut scale = host_gemm(
                (m, n, k),
                (oa, ob),
                alpha.c(),
                &to_host(&a),
                lda,
                &to_host(&b),
                ldb,
                beta.c(),
                &mut want,
                ldc,
            );
            // Rows m..ldc of C are outside the product: untouched, exactly.
            for (i, s) in scale.iter_mut().enumerate() {
                if i % ldc >= m {
                    *s = 0.0;
                }
            }
            let got = to_host(&dc.to_vec().unwrap());
            assert_close(
                &format!("gemm {oa:?}{ob:?}"),
                &got,
                &want,
                &scale,
                2.0 * k as f64 * T::EPS,
            );
        }
    }
}

#[test]
fn gemm_matches_the_host_for_every_type_transpose_and_leading_dimension() {
    gemm::<f32>();
    gemm::<f64>();
    gemm::<Complex32>();
    gemm::<Complex64>();
}

#[test]
fn row_major_gemm_is_numpy_order() {
    let (d, _s, blas) = setup();
    // A 2x3, B 3x2 (row-major), with a transposed B stored 2x3 for the second product.
    let a = DeviceBuffer::from_slice(&d, &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let b = DeviceBuffer::from_slice(&d, &[7.0f64, 8.0, 9.0, 10.0, 11.0, 12.0]).unwrap();
    let mut c = DeviceBuffer::<f64>::zeroed(&d, 4).unwrap();
    blas.gemm(&Gemm::row_major(2, 2, 3), 1.0, &a, &b, 0.0, &mut c)
        .unwrap();
    assert_eq!(c.to_vec().unwrap(), [58.0, 64.0, 139.0, 154.0]);
    // A * A^T (2x2) from A stored row-major 2x3.
    blas.gemm(
        &Gemm::row_major(2, 2, 3).op_b(Op::T),
        1.0,
        &a,
        &a,
        0.0,
        &mut c,
    )
    .unwrap();
    assert_eq!(c.to_vec().unwrap(), [14.0, 32.0, 32.0, 77.0]);
    // A sub-matrix: the left 2x2 block of A (row-major, leading dimension 3) times the top of B.
    let mut c2 = DeviceBuffer::<f64>::zeroed(&d, 4).unwrap();
    blas.gemm(
        &Gemm::row_major(2, 2, 2).lda(3).ldb(2),
        1.0,
        &a,
        &b,
        0.0,
        &mut c2,
    )
    .unwrap();
    assert_eq!(
        c2.to_vec().unwrap(),
        [
            1.0 * 7.0 + 2.0 * 9.0,
            1.0 * 8.0 + 2.0 * 10.0,
            4.0 * 7.0 + 5.0 * 9.0,
            4.0 * 8.0 + 5.0 * 10.0
        ]
    );
}

#[test]
fn strided_and_pointer_array_batches_match_single_products() {
    let (d, _s, blas) = setup();
    let (m, n, k, count) = (12, 9, 7, 5);
    let shape = Gemm::new(m, n, k);
    // A shared by every product (stride 0), B and C spaced wider than packed.
    let batch = StridedBatch {
        count,
        stride_a: Some(0),
        stride_b: Some(k * n + 4),
        stride_c: Some(m * n + 2),
    };
    let a: Vec<f32> = data(m * k, 1);
    let b: Vec<f32> = data((k * n + 4) * count, 2);
    let c: Vec<f32> = data((m * n + 2) * count, 3);
    let da = DeviceBuffer::from_slice(&d, &a).unwrap();
    let db = DeviceBuffer::from_slice(&d, &b).unwrap();
    let mut dc = DeviceBuffer::from_slice(&d, &c).unwrap();
    blas.gemm_strided_batched(&shape, &batch, 2.0f32, &da, &db, 0.5f32, &mut dc)
        .unwrap();
    let got = dc.to_vec().unwrap();
    let mut separate: Vec<DeviceBuffer<f32>> = Vec::new();
    for i in 0..count {
        let bi = DeviceBuffer::from_slice(&d, &b[i * (k * n + 4)..][..k * n]).unwrap();
        let mut ci = DeviceBuffer::from_slice(&d, &c[i * (m * n + 2)..][..m * n]).unwrap();
        blas.gemm(&shape, 2.0f32, &da, &bi, 0.5f32, &mut ci)
            .unwrap();
        let one = ci.to_vec().unwrap();
        assert_eq!(
            &got[i * (m * n + 2)..][..m * n],
            &one[..],
            "product {i} of the strided batch"
        );
        assert_eq!(
            &got[i * (m * n + 2) + m * n..][..2],
            &c[i * (m * n + 2) + m * n..][..2],
            "gap after product {i}"
        );
        separate.push(bi);
    }
    // The same products through arrays of pointers to separate buffers.
    let a_list: Vec<&DeviceBuffer<f32>> = (0..count).map(|_| &da).collect();
    let b_list: Vec<&DeviceBuffer<f32>> = separate.iter().collect();
    let mut outs: Vec<DeviceBuffer<f32>> = (0..count)
        .map(|i| DeviceBuffer::from_slice(&d, &c[i * (m * n + 2)..][..m * n]).unwrap())
        .collect();
    let mut c_list: Vec<&mut DeviceBuffer<f32>> = outs.iter_mut().collect();
    blas.gemm_batched(&shape, 2.0f32, &a_list, &b_list, 0.5f32, &mut c_list)
        .unwrap();
    for (i, o) in outs.iter().enumerate() {
        assert_eq!(
            &o.to_vec().unwrap()[..],
            &got[i * (m * n + 2)..][..m * n],
            "pointer-array product {i}"
        );
    }
}

#[test]
fn gemm_ex_half_and_bfloat_inputs_match_the_host() {
    let (d, _s, blas) = setup();
    let (m, n, k) = (64, 48, 80);
    let shape = Gemm::row_major(m, n, k);
    // Small integers over 8: exact in f16 and bf16, so only accumulation and the output rounding differ.
    let a: Vec<f32> = (0..m * k)
        .map(|i| ((i * 7 % 15) as f32 - 7.0) / 8.0)
        .collect();
    let b: Vec<f32> = (0..k * n)
        .map(|i| ((i * 3 % 11) as f32 - 5.0) / 8.0)
        .collect();
    let mut want = vec![0.0f64; m * n];
    let mut scale = vec![0.0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            for p in 0..k {
                let t = a[i * k + p] as f64 * b[p * n + j] as f64;
                want[i * n + j] += t;
                scale[i * n + j] += t.abs();
            }
        }
    }
    let check = |what: &str, got: Vec<f64>, out_eps: f64| {
        for i in 0..m * n {
            let tol = k as f64 * f32::EPSILON as f64 * scale[i] + out_eps * want[i].abs();
            assert!(
                (got[i] - want[i]).abs() <= tol + 1e-30,
                "{what}: element {i}: {} vs {}",
                got[i],
                want[i]
            );
        }
    };
    let ha = DeviceBuffer::from_slice(&d, &a.iter().map(|v| f16::from_f32(*v)).collect::<Vec<_>>())
        .unwrap();
    let hb = DeviceBuffer::from_slice(&d, &b.iter().map(|v| f16::from_f32(*v)).collect::<Vec<_>>())
        .unwrap();
    let ba = DeviceBuffer::from_slice(
        &d,
        &a.iter().map(|v| bf16::from_f32(*v)).collect::<Vec<_>>(),
    )
    .unwrap();
    let bb = DeviceBuffer::from_slice(
        &d,
        &b.iter().map(|v| bf16::from_f32(*v)).collect::<Vec<_>>(),
    )
    .unwrap();
    let mut c32 = DeviceBuffer::<f32>::zeroed(&d, m * n).unwrap();
    let mut c16 = DeviceBuffer::<f16>::zeroed(&d, m * n).unwrap();
    let mut cb16 = DeviceBuffer::<bf16>::zeroed(&d, m * n).unwrap();
    blas.gemm_ex(&shape, 1.0, &ha, &hb, 0.0, &mut c32, ComputeType::F32)
        .unwrap();
    check(
        "f16 -> f32",
        c32.to_vec().unwrap().iter().map(|v| *v as f64).collect(),
        0.0,
    );
    blas.gemm_ex(&shape, 1.0, &ha, &hb, 0.0, &mut c16, ComputeType::F32)
        .unwrap();
    check(
        "f16 -> f16",
        c16.to_vec().unwrap().iter().map(|v| v.to_f64()).collect(),
        2f64.powi(-11),
    );
    blas.gemm_ex(&shape, 1.0, &ba, &bb, 0.0, &mut c32, ComputeType::F32)
        .unwrap();
    check(
        "bf16 -> f32",
        c32.to_vec().unwrap().iter().map(|v| *v as f64).collect(),
        0.0,
    );
    blas.gemm_ex(&shape, 1.0, &ba, &bb, 0.0, &mut cb16, ComputeType::F32)
        .unwrap();
    check(
        "bf16 -> bf16",
        cb16.to_vec().unwrap().iter().map(|v| v.to_f64()).collect(),
        2f64.powi(-8),
    );
    // Half-precision compute: f16 accumulation, so k roundings of f16 at worst.
    blas.gemm_ex(&shape, 1.0, &ha, &hb, 0.0, &mut c16, ComputeType::F16)
        .unwrap();
    let got: Vec<f64> = c16.to_vec().unwrap().iter().map(|v| v.to_f64()).collect();
    for i in 0..m * n {
        let tol = k as f64 * 2f64.powi(-11) * scale[i] + 1e-30;
        assert!(
            (got[i] - want[i]).abs() <= tol,
            "f16 compute: element {i}: {} vs {}",
            got[i],
            want[i]
        );
    }
    let e = blas
        .gemm_ex(&shape, 1.0, &ba, &bb, 0.0, &mut c32, ComputeType::F16)
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                what: "gemm_ex compute type",
                ..
            }
        ),
        "{e}"
    );
}
