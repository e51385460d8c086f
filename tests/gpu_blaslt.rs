//! hip::blaslt on a device: every epilogue against a host reference for f32, f16 and bf16, leading
//! dimensions larger than the rows, transposes, row-major operands, a strided batch, distinct C and D, the
//! heuristic's algorithms, and wrong shapes refused with the output untouched. Compiled only with
//! `--features gpu,blaslt`.
//!
//! These tests compile (CI lints them in Debian sid and experimental) but have not been run: hipBLASLt
//! runs on AMD GPUs only and none was available (docs/BLASLT.md).
//!
//! Tolerances, relative to the size of the terms (`sum |a| |b|` plus `|beta c|` and `|bias|`): `k + 4`
//! f32 roundings (the compute type), then one rounding of the output type (2^-11 for f16, 2^-8 for
//! bf16), and for GELU 2e-3 absolute on top (hipBLASLt's GELU is the tanh approximation; some kernels
//! evaluate it in lower precision).
#![cfg(all(feature = "gpu", feature = "blaslt"))]
mod common;

use common::device;
use hip::blaslt::{Epilogue, EpilogueKind, Handle, LtElement, Matmul, Op, StridedBatch};
use hip::half::{bf16, f16};
use hip::prelude::*;
use hip::Error;

/// Element types as f64 on the host, with the rounding of one output.
trait Host: LtElement + std::fmt::Debug {
    const OUT_EPS: f64;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
}

impl Host for f32 {
    const OUT_EPS: f64 = f32::EPSILON as f64;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
}
impl Host for f16 {
    const OUT_EPS: f64 = 1.0 / 2048.0;
    fn from_f64(v: f64) -> Self {
        f16::from_f64(v)
    }
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
}
impl Host for bf16 {
    const OUT_EPS: f64 = 1.0 / 256.0;
    fn from_f64(v: f64) -> Self {
        bf16::from_f64(v)
    }
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
}

fn values<T: Host>(n: usize, seed: usize) -> Vec<T> {
    (0..n)
        .map(|i| T::from_f64((((i + seed) * 37 % 29) as f64 - 14.0) / 7.0))
        .collect()
}

fn gelu(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh())
}

/// A column-major problem on the host: `op(A)` `m x k`, `op(B)` `k x n`, C/D `m x n` with `ldc`.
struct Problem {
    m: usize,
    n: usize,
    k: usize,
    op_a: Op,
    op_b: Op,
    lda: usize,
    ldb: usize,
    ldc: usize,
}

impl Problem {
    fn desc(&self) -> Matmul {
        Matmul::new(self.m, self.n, self.k)
            .op_a(self.op_a)
            .op_b(self.op_b)
            .lda(self.lda)
            .ldb(self.ldb)
            .ldc(self.ldc)
    }

    fn a_len(&self) -> usize {
        let cols = if self.op_a == Op::N { self.k } else { self.m };
        self.lda * cols
    }

    fn b_len(&self) -> usize {
        let cols = if self.op_b == Op::N { self.n } else { self.k };
        self.ldb * cols
    }

    /// `(pre-activation x, scale of its terms)` at `(i, j)`.
    #[allow(clippy::too_many_arguments)]
    fn x(
        &self,
        a: &[f64],
        b: &[f64],
        c: &[f64],
        bias: &[f64],
        alpha: f64,
        beta: f64,
        i: usize,
        j: usize,
    ) -> (f64, f64) {
        let (mut sum, mut scale) = (0.0, 0.0);
        for p in 0..self.k {
            let av = if self.op_a == Op::N {
                a[i + p * self.lda]
            } else {
                a[p + i * self.lda]
            };
            let bv = if self.op_b == Op::N {
                b[p + j * self.ldb]
            } else {
                b[j + p * self.ldb]
            };
            sum += av * bv;
            scale += (av * bv).abs();
        }
        let cv = beta * c[i + j * self.ldc];
        let bias = bias.get(i).copied().unwrap_or(0.0);
        (
            alpha * sum + cv + bias,
            alpha.abs() * scale + cv.abs() + bias.abs(),
        )
    }
}

fn to_f64<T: Host>(v: &[T]) -> Vec<f64> {
    v.iter().map(|&x| x.to_f64()).collect()
}

fn close(what: &str, got: f64, want: f64, scale: f64, k: usize, out_eps: f64, gelu: bool) {
    let tol = scale * (k as f64 + 4.0) * f32::EPSILON as f64
        + want.abs() * out_eps
        + if gelu { 2e-3 * (1.0 + scale) } else { 1e-6 };
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got}, want {want} (tolerance {tol})"
    );
}

/// One product with `kind`'s epilogue on device buffers, against the host: D (and aux) element by
/// element, D's padding rows (ld > m) untouched.
fn check_epilogue<T: Host>(lt: &mut Handle, p: &Problem, kind: EpilogueKind) {
    let device = lt.device().clone();
    let (alpha, beta) = (0.75, 0.5);
    let a_h: Vec<T> = values(p.a_len(), 1);
    let b_h: Vec<T> = values(p.b_len(), 2);
    let c_len = p.ldc * p.n;
    let c_h: Vec<T> = values(c_len, 3);
    let bias_h: Vec<T> = values(p.m, 4);
    let a = DeviceBuffer::from_slice(&device, &a_h).unwrap();
    let b = DeviceBuffer::from_slice(&device, &b_h).unwrap();
    let bias = DeviceBuffer::from_slice(&device, &bias_h).unwrap();
    let mut d = DeviceBuffer::from_slice(&device, &c_h).unwrap();
    let aux_ld = p.m + 1;
    let mut aux = DeviceBuffer::<T>::zeroed(&device, aux_ld * p.n).unwrap();
    let epilogue = match kind {
        EpilogueKind::Default => Epilogue::none(),
        EpilogueKind::Relu => Epilogue::relu(),
        EpilogueKind::Gelu => Epilogue::gelu(),
        EpilogueKind::Bias => Epilogue::bias(&bias),
        EpilogueKind::ReluBias => Epilogue::relu_bias(&bias),
        EpilogueKind::GeluBias => Epilogue::gelu_bias(&bias),
        EpilogueKind::GeluAux => Epilogue::gelu_aux(&mut aux, aux_ld),
        EpilogueKind::GeluAuxBias => Epilogue::gelu_aux_bias(&bias, &mut aux, aux_ld),
    };
    lt.matmul(
        &p.desc(),
        alpha as f32,
        &a,
        &b,
        beta as f32,
        &mut d,
        epilogue,
    )
    .unwrap_or_else(|e| panic!("{kind:?} {}: {e}", T::NAME));
    let got = d.to_vec().unwrap();
    let got_aux = aux.to_vec().unwrap();
    let (a64, b64, c64) = (to_f64(&a_h), to_f64(&b_h), to_f64(&c_h));
    let bias64 = if kind.has_bias() {
        to_f64(&bias_h)
    } else {
        Vec::new()
    };
    let is_gelu = matches!(
        kind,
        EpilogueKind::Gelu
            | EpilogueKind::GeluBias
            | EpilogueKind::GeluAux
            | EpilogueKind::GeluAuxBias
    );
    for j in 0..p.n {
        for i in 0..p.ldc {
            let at = i + j * p.ldc;
            if i >= p.m {
                assert_eq!(
                    got[at].to_f64(),
                    c64[at],
                    "{kind:?} {}: padding ({i}, {j}) written",
                    T::NAME
                );
                continue;
            }
            let (x, scale) = p.x(&a64, &b64, &c64, &bias64, alpha, beta, i, j);
            let want = match kind {
                EpilogueKind::Relu | EpilogueKind::ReluBias => x.max(0.0),
                _ if is_gelu => gelu(x),
                _ => x,
            };
            let what = format!("{kind:?} {} D({i}, {j})", T::NAME);
            close(
                &what,
                got[at].to_f64(),
                want,
                scale,
                p.k,
                T::OUT_EPS,
                is_gelu,
            );
            if kind.has_aux() {
                let what = format!("{kind:?} {} aux({i}, {j})", T::NAME);
                close(
                    &what,
                    got_aux[i + j * aux_ld].to_f64(),
                    x,
                    scale,
                    p.k,
                    T::OUT_EPS,
                    false,
                );
            }
        }
    }
}

fn every_epilogue<T: Host>() {
    let device = device();
    let stream = Stream::new(&device).unwrap();
    let mut lt = Handle::new(&stream).unwrap();
    let problems = [
        // Leading dimensions larger than the rows.
        Problem {
            m: 5,
            n: 4,
            k: 7,
            op_a: Op::N,
            op_b: Op::N,
            lda: 8,
            ldb: 9,
            ldc: 7,
        },
        // Transposes, tight.
        Problem {
            m: 16,
            n: 8,
            k: 32,
            op_a: Op::T,
            op_b: Op::N,
            lda: 32,
            ldb: 32,
            ldc: 16,
        },
        Problem {
            m: 6,
            n: 3,
            k: 5,
            op_a: Op::N,
            op_b: Op::T,
            lda: 6,
            ldb: 3,
            ldc: 8,
        },
    ];
    for p in &problems {
        for kind in EpilogueKind::ALL {
            check_epilogue::<T>(&mut lt, p, kind);
        }
    }
}

#[test]
fn every_epilogue_matches_the_host_in_f32() {
    every_epilogue::<f32>();
}

#[test]
fn every_epilogue_matches_the_host_in_f16() {
    every_epilogue::<f16>();
}

#[test]
fn every_epilogue_matches_the_host_in_bf16() {
    every_epilogue::<bf16>();
}

#[test]
fn row_major_bias_is_per_column_and_c_may_be_another_buffer() {
    let device = device();
    let stream = Stream::new(&device).unwrap();
    let mut lt = Handle::new(&stream).unwrap();
    // Row-major A 2x3, B 3x2, bias per output column; D = relu(A B + bias + 2 C).
    let a = DeviceBuffer::from_slice(&device, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let b = DeviceBuffer::from_slice(&device, &[1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0]).unwrap();
    let bias = DeviceBuffer::from_slice(&device, &[-10.0f32, 0.0]).unwrap();
    let c = DeviceBuffer::from_slice(&device, &[1.0f32, 1.0, 1.0, -20.0]).unwrap();
    let mut d = DeviceBuffer::<f32>::zeroed(&device, 4).unwrap();
    let desc = Matmul::row_major(2, 2, 3);
    lt.matmul_into(
        &desc,
        1.0,
        &a,
        &b,
        2.0,
        &c,
        &mut d,
        Epilogue::relu_bias(&bias),
    )
    .unwrap();
    // A B = [[4, 5], [10, 11]]; + bias = [[-6, 5], [0, 11]]; + 2 C = [[-4, 7], [2, -29]].
    assert_eq!(d.to_vec().unwrap(), [0.0, 7.0, 2.0, 0.0]);
    assert_eq!(
        c.to_vec().unwrap(),
        [1.0, 1.0, 1.0, -20.0],
        "C is only read"
    );
}

#[test]
fn a_strided_batch_runs_every_product() {
    let device = device();
    let stream = Stream::new(&device).unwrap();
    let mut lt = Handle::new(&stream).unwrap();
    let (m, n, k, count) = (4, 3, 2, 3);
    let a_h: Vec<f32> = values(m * k * count, 1);
    let b_h: Vec<f32> = values(k * n, 2); // shared: stride 0
    let a = DeviceBuffer::from_slice(&device, &a_h).unwrap();
    let b = DeviceBuffer::from_slice(&device, &b_h).unwrap();
    let mut d = DeviceBuffer::<f32>::zeroed(&device, m * n * count).unwrap();
    let desc = Matmul::new(m, n, k).batch(StridedBatch {
        count,
        stride_a: m * k,
        stride_b: 0,
        stride_c: m * n,
    });
    lt.matmul(&desc, 1.0, &a, &b, 0.0, &mut d, Epilogue::none())
        .unwrap();
    let got = d.to_vec().unwrap();
    for s in 0..count {
        for j in 0..n {
            for i in 0..m {
                let want: f64 = (0..k)
                    .map(|p| a_h[s * m * k + i + p * m] as f64 * b_h[p + j * k] as f64)
                    .sum();
                let g = got[s * m * n + i + j * m] as f64;
                assert!(
                    (g - want).abs() < 1e-5,
                    "product {s} ({i}, {j}): {g} vs {want}"
                );
            }
        }
    }
}

#[test]
fn algorithms_are_reusable_and_refused_for_another_problem() {
    let device = device();
    let stream = Stream::new(&device).unwrap();
    let mut lt = Handle::new(&stream).unwrap();
    let desc = Matmul::new(64, 32, 16);
    let algos = lt.algorithms::<f32>(&desc, EpilogueKind::Bias, 8).unwrap();
    assert!(!algos.is_empty() && algos.len() <= 8);
    assert!(algos
        .iter()
        .all(|a| a.workspace_size() <= lt.workspace_limit()));
    let a = DeviceBuffer::from_slice(&device, &values::<f32>(64 * 16, 1)).unwrap();
    let b = DeviceBuffer::from_slice(&device, &values::<f32>(16 * 32, 2)).unwrap();
    let bias = DeviceBuffer::from_slice(&device, &values::<f32>(64, 3)).unwrap();
    let mut d1 = DeviceBuffer::<f32>::zeroed(&device, 64 * 32).unwrap();
    let mut d2 = DeviceBuffer::<f32>::zeroed(&device, 64 * 32).unwrap();
    let chosen = desc.clone().algo(*algos.last().unwrap());
    lt.matmul(&chosen, 1.0, &a, &b, 0.0, &mut d1, Epilogue::bias(&bias))
        .unwrap();
    lt.matmul(&desc, 1.0, &a, &b, 0.0, &mut d2, Epilogue::bias(&bias))
        .unwrap();
    let (v1, v2) = (d1.to_vec().unwrap(), d2.to_vec().unwrap());
    for (x, y) in v1.iter().zip(&v2) {
        assert!((x - y).abs() <= 1e-4 * (1.0 + x.abs()), "{x} vs {y}");
    }
    // The algorithm was found for the bias epilogue: with ReLU it is refused, D untouched.
    let before = d1.to_vec().unwrap();
    let e = lt
        .matmul(&chosen, 1.0, &a, &b, 0.0, &mut d1, Epilogue::relu())
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                what: "matmul algo",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(d1.to_vec().unwrap(), before);
}

#[test]
fn wrong_shapes_are_refused_by_name_and_nothing_is_written() {
    let device = device();
    let stream = Stream::new(&device).unwrap();
    let mut lt = Handle::new(&stream).unwrap();
    let (m, n, k) = (8, 4, 6);
    let a = DeviceBuffer::from_slice(&device, &values::<f32>(m * k, 1)).unwrap();
    let short_a = DeviceBuffer::from_slice(&device, &values::<f32>(m * k - 1, 1)).unwrap();
    let b = DeviceBuffer::from_slice(&device, &values::<f32>(k * n, 2)).unwrap();
    let bias = DeviceBuffer::from_slice(&device, &values::<f32>(m, 3)).unwrap();
    let short_bias = DeviceBuffer::from_slice(&device, &values::<f32>(m - 1, 3)).unwrap();
    let mut aux = DeviceBuffer::from_slice(&device, &vec![7.0f32; m * n]).unwrap();
    let mut d = DeviceBuffer::from_slice(&device, &vec![5.0f32; m * n]).unwrap();
    let desc = Matmul::new(m, n, k);
    let what = |r: hip::Result<()>| match r {
        Err(Error::InvalidArgument { what, .. }) => what,
        other => panic!("expected InvalidArgument, got {other:?}"),
    };
    assert_eq!(
        what(lt.matmul(&desc, 1.0, &short_a, &b, 0.0, &mut d, Epilogue::none())),
        "matmul operand a"
    );
    assert_eq!(
        what(lt.matmul(
            &desc.clone().lda(m - 1),
            1.0,
            &a,
            &b,
            0.0,
            &mut d,
            Epilogue::none()
        )),
        "matmul operand a"
    );
    assert_eq!(
        what(lt.matmul(
            &desc.clone().ldc(m + 1),
            1.0,
            &a,
            &b,
            0.0,
            &mut d,
            Epilogue::none()
        )),
        "matmul operand d"
    );
    assert_eq!(
        what(lt.matmul(
            &desc,
            1.0,
            &a,
            &b,
            0.0,
            &mut d,
            Epilogue::gelu_bias(&short_bias)
        )),
        "matmul epilogue bias"
    );
    assert_eq!(
        what(lt.matmul(
            &desc,
            1.0,
            &a,
            &b,
            0.0,
            &mut d,
            Epilogue::gelu_aux_bias(&bias, &mut aux, m - 1)
        )),
        "matmul epilogue aux"
    );
    assert_eq!(
        what(lt.matmul(
            &desc,
            1.0,
            &a,
            &b,
            0.0,
            &mut d,
            Epilogue::gelu_aux(&mut aux, m + 1)
        )),
        "matmul epilogue aux"
    );
    assert_eq!(
        what(lt.matmul(
            &Matmul::new(m, n, 0),
            1.0,
            &a,
            &b,
            0.0,
            &mut d,
            Epilogue::none()
        )),
        "matmul k"
    );
    assert_eq!(
        d.to_vec().unwrap(),
        vec![5.0f32; m * n],
        "D written by a refused call"
    );
    assert_eq!(
        aux.to_vec().unwrap(),
        vec![7.0f32; m * n],
        "aux written by a refused call"
    );
    assert_eq!(lt.workspace_size(), 0, "a refused call allocated workspace");
}

#[test]
fn the_workspace_limit_bounds_the_algorithms_and_forgets_the_cache() {
    let device = device();
    let stream = Stream::new(&device).unwrap();
    let mut lt = Handle::new(&stream).unwrap();
    lt.set_workspace_limit(0);
    let desc = Matmul::new(256, 256, 256);
    match lt.algorithms::<f16>(&desc, EpilogueKind::Default, 16) {
        Ok(algos) => assert!(algos.iter().all(|a| a.workspace_size() == 0)),
        Err(e) => assert!(matches!(e, Error::NotSupported { .. }), "{e}"),
    }
    let other = Stream::new(&device).unwrap();
    lt.set_stream(&other).unwrap();
    let a = DeviceBuffer::<f16>::zeroed(&device, 256 * 256).unwrap();
    let mut d = DeviceBuffer::from_slice(&device, &vec![f16::ONE; 256 * 256]).unwrap();
    lt.set_workspace_limit(hip::blaslt::DEFAULT_WORKSPACE_LIMIT);
    lt.matmul(&desc, 1.0, &a, &a, 0.0, &mut d, Epilogue::none())
        .unwrap();
    assert!(d.to_vec().unwrap().iter().all(|v| *v == f16::ZERO));
    assert!(lt.workspace_size() <= lt.workspace_limit());
}
