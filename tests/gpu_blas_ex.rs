//! hip::blas's `gemm_ex` with device scalars (`Scalar::device`): F32 compute reading `f32` alpha / beta
//! from device memory, F16 compute reading `f16` ones, host `f16` values, the refusals (mixed host and
//! device scalars, a device scalar of the other type) writing nothing, and a device alpha written by a
//! slow kernel on another stream read only once written. Compiled only with `--features gpu,blas`.
#![cfg(all(feature = "gpu", feature = "blas"))]
mod common;

use common::device;
use hip::blas::{ComputeType, Gemm, Handle, Scalar};
use hip::half::f16;
use hip::prelude::*;
use hip::Error;

const M: usize = 24;
const N: usize = 16;
const K: usize = 32;

/// A, B (f16, exact small values), C's starting values, and `alpha A B + beta C` on the host.
fn problem(alpha: f64, beta: f64) -> (Vec<f16>, Vec<f16>, Vec<f32>, Vec<f64>) {
    let a: Vec<f16> = (0..M * K)
        .map(|i| f16::from_f32(((i * 7 % 11) as f32 - 5.0) / 4.0))
        .collect();
    let b: Vec<f16> = (0..K * N)
        .map(|i| f16::from_f32(((i * 3 % 7) as f32 - 3.0) / 2.0))
        .collect();
    let c: Vec<f32> = (0..M * N).map(|i| (i % 5) as f32 - 2.0).collect();
    let mut want = vec![0.0; M * N];
    for i in 0..M {
        for j in 0..N {
            let mut acc = 0.0;
            for p in 0..K {
                acc += a[i * K + p].to_f64() * b[p * N + j].to_f64();
            }
            want[i * N + j] = alpha * acc + beta * c[i * N + j] as f64;
        }
    }
    (a, b, c, want)
}

fn assert_close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1.0),
            "{what}: element {i}: {g} vs {w}"
        );
    }
}

#[test]
fn f32_compute_reads_device_scalars() {
    let d = device();
    let stream = Stream::new(&d).unwrap();
    let blas = Handle::new(&stream).unwrap();
    let (a, b, c, want) = problem(2.5, -0.5);
    let (da, db) = (
        DeviceBuffer::from_slice(&d, &a).unwrap(),
        DeviceBuffer::from_slice(&d, &b).unwrap(),
    );
    let mut dc = DeviceBuffer::from_slice(&d, &c).unwrap();
    let scalars = DeviceBuffer::from_slice(&d, &[2.5f32, -0.5]).unwrap();
    let alpha = Scalar::device(&scalars).unwrap();
    let second = scalars.slice(1..2).unwrap();
    let beta = Scalar::device(&second).unwrap();
    blas.gemm_ex(
        &Gemm::row_major(M, N, K),
        alpha,
        &da,
        &db,
        beta,
        &mut dc,
        ComputeType::F32,
    )
    .unwrap();
    let got: Vec<f64> = dc.to_vec().unwrap().iter().map(|v| *v as f64).collect();
    assert_close("device f32 scalars", &got, &want, 1e-6);
    // Host f16 values, converted to the F32 compute type.
    let mut dc = DeviceBuffer::from_slice(&d, &c).unwrap();
    let (ha, hb) = (f16::from_f32(2.5), f16::from_f32(-0.5));
    blas.gemm_ex(
        &Gemm::row_major(M, N, K),
        ha,
        &da,
        &db,
        hb,
        &mut dc,
        ComputeType::F32,
    )
    .unwrap();
    let got: Vec<f64> = dc.to_vec().unwrap().iter().map(|v| *v as f64).collect();
    assert_close("host f16 scalars", &got, &want, 1e-6);
}

#[test]
fn f16_compute_reads_f16_device_scalars() {
    let d = device();
    let stream = Stream::new(&d).unwrap();
    let blas = Handle::new(&stream).unwrap();
    let (a, b, c, want) = problem(0.5, 2.0);
    let (da, db) = (
        DeviceBuffer::from_slice(&d, &a).unwrap(),
        DeviceBuffer::from_slice(&d, &b).unwrap(),
    );
    let c16: Vec<f16> = c.iter().map(|v| f16::from_f32(*v)).collect();
    let mut dc = DeviceBuffer::from_slice(&d, &c16).unwrap();
    let scalars = DeviceBuffer::from_slice(&d, &[f16::from_f32(0.5), f16::from_f32(2.0)]).unwrap();
    let alpha = Scalar::device(&scalars).unwrap();
    let second = scalars.slice(1..2).unwrap();
    let beta = Scalar::device(&second).unwrap();
    blas.gemm_ex(
        &Gemm::row_major(M, N, K),
        alpha,
        &da,
        &db,
        beta,
        &mut dc,
        ComputeType::F16,
    )
    .unwrap();
    let got: Vec<f64> = dc.to_vec().unwrap().iter().map(|v| v.to_f64()).collect();
    // f16 accumulation over K terms.
    assert_close("device f16 scalars", &got, &want, K as f64 * 2f64.powi(-11));
}

#[test]
fn wrong_scalars_are_refused_and_nothing_is_written() {
    let d = device();
    let stream = Stream::new(&d).unwrap();
    let blas = Handle::new(&stream).unwrap();
    let (a, b, c, _) = problem(1.0, 0.0);
    let (da, db) = (
        DeviceBuffer::from_slice(&d, &a).unwrap(),
        DeviceBuffer::from_slice(&d, &b).unwrap(),
    );
    let mut dc = DeviceBuffer::from_slice(&d, &c).unwrap();
    let f32s = DeviceBuffer::from_slice(&d, &[1.0f32, 0.0]).unwrap();
    let f16s = DeviceBuffer::from_slice(&d, &[f16::ONE, f16::ZERO]).unwrap();
    let (f32_beta, f16_beta) = (f32s.slice(1..2).unwrap(), f16s.slice(1..2).unwrap());
    let shape = Gemm::row_major(M, N, K);
    // One host, one device.
    let e = blas
        .gemm_ex(
            &shape,
            Scalar::device(&f32s).unwrap(),
            &da,
            &db,
            0.0,
            &mut dc,
            ComputeType::F32,
        )
        .unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { what: "beta", .. }),
        "{e}"
    );
    // f16 device scalars for F32 compute.
    let e = blas
        .gemm_ex(
            &shape,
            Scalar::device(&f16s).unwrap(),
            &da,
            &db,
            Scalar::device(&f16_beta).unwrap(),
            &mut dc,
            ComputeType::F32,
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                what: "gemm_ex alpha",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("reads device scalars as f32"), "{e}");
    let mut c16 = DeviceBuffer::<f16>::zeroed(&d, M * N).unwrap();
    let e = blas
        .gemm_ex(
            &shape,
            Scalar::device(&f32s).unwrap(),
            &da,
            &db,
            Scalar::device(&f32_beta).unwrap(),
            &mut c16,
            ComputeType::F16,
        )
        .unwrap_err();
    assert!(e.to_string().contains("reads device scalars as f16"), "{e}");
    assert_eq!(dc.to_vec().unwrap(), c);
    assert!(c16.to_vec().unwrap().iter().all(|v| *v == f16::ZERO));
}

/// A device alpha written by a slow kernel on another stream: the product waits for it.
#[test]
fn device_alpha_is_read_after_its_writer() {
    let d = device();
    let (s1, s2) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    let blas = Handle::new(&s2).unwrap();
    let slow = common::slow::Slow::new(&d);
    let (a, b, _, want) = problem(3.0, 0.0);
    let (da, db) = (
        DeviceBuffer::from_slice(&d, &a).unwrap(),
        DeviceBuffer::from_slice(&d, &b).unwrap(),
    );
    let mut alpha = slow.buffer(DeviceBuffer::from_slice(&d, &[1.0f32]).unwrap());
    let beta = DeviceBuffer::from_slice(&d, &[0.0f32]).unwrap();
    slow.fill(&s1, &mut alpha, 3.0);
    let mut dc = DeviceBuffer::<f32>::zeroed(&d, M * N).unwrap();
    blas.gemm_ex(
        &Gemm::row_major(M, N, K),
        Scalar::device(&alpha).unwrap(),
        &da,
        &db,
        Scalar::device(&beta).unwrap(),
        &mut dc,
        ComputeType::F32,
    )
    .unwrap();
    let got: Vec<f64> = dc.to_vec().unwrap().iter().map(|v| *v as f64).collect();
    slow.end_round(&d);
    assert_close("alpha written on another stream", &got, &want, 1e-6);
}
