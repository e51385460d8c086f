//! `Handle::set_math_mode` changes the precision of an f32 GEMM where the device has a reduced-precision
//! fast path: on HIP's NVIDIA platform with a GPU of compute capability 8.0 or newer (TF32 tensor cores),
//! `MathMode::Tf32TensorOp` rounds the inputs to TF32 (10 explicit mantissa bits), so the product's error
//! grows from f32's (about `k * 2^-24` of the terms) to TF32's (about `2^-11`); back in
//! `MathMode::Default` it is f32's again. hipBLAS 0.x (ROCm 5) has no math mode: there every mode is
//! `NotSupported`, which is asserted instead. Compiled only with `--features gpu,blas`.
#![cfg(all(feature = "gpu", feature = "blas"))]
mod common;

use common::device;
use hip::blas::{Gemm, Handle, MathMode};
use hip::prelude::*;
use hip::Error;

const N: usize = 256;

/// Values whose low mantissa bits TF32 drops: `1 + small`, `small` a multiple of 2^-20, signs mixed.
fn operand(seed: usize) -> Vec<f32> {
    (0..N * N)
        .map(|i| {
            let j = (i * 2654435761 + seed) % 1021;
            let v = 1.0 + j as f32 * 2f32.powi(-20);
            if (i + seed).is_multiple_of(3) {
                -v
            } else {
                v
            }
        })
        .collect()
}

/// The largest `|got - want| / sum |a| |b|` of a row-major N x N product.
fn error(got: &[f32], a: &[f32], b: &[f32]) -> f64 {
    let mut worst = 0.0f64;
    for i in 0..N {
        for j in 0..N {
            let (mut want, mut size) = (0.0f64, 0.0f64);
            for p in 0..N {
                let t = a[i * N + p] as f64 * b[p * N + j] as f64;
                want += t;
                size += t.abs();
            }
            worst = worst.max((got[i * N + j] as f64 - want).abs() / size);
        }
    }
    worst
}

fn product(blas: &Handle, d: &Device, a: &[f32], b: &[f32]) -> Vec<f32> {
    let (da, db) = (
        DeviceBuffer::from_slice(d, a).unwrap(),
        DeviceBuffer::from_slice(d, b).unwrap(),
    );
    let mut dc = DeviceBuffer::<f32>::zeroed(d, N * N).unwrap();
    blas.gemm(&Gemm::row_major(N, N, N), 1.0f32, &da, &db, 0.0f32, &mut dc)
        .unwrap();
    dc.to_vec().unwrap()
}

#[test]
fn math_mode_changes_f32_gemm_precision_where_the_device_has_a_fast_path() {
    let d = device();
    let stream = Stream::new(&d).unwrap();
    let blas = Handle::new(&stream).unwrap();
    if hip::blas::HEADER_VERSION.0 < 2 {
        for mode in [MathMode::Default, MathMode::Tf32TensorOp, MathMode::Xf32Xdl] {
            let r = blas.set_math_mode(mode);
            assert!(
                matches!(r, Err(Error::NotSupported { .. })),
                "{mode:?}: {r:?}"
            );
        }
        return;
    }
    let (a, b) = (operand(1), operand(7));
    let f32_bound = N as f64 * f32::EPSILON as f64;
    blas.set_math_mode(MathMode::Default).unwrap();
    let precise = error(&product(&blas, &d, &a, &b), &a, &b);
    assert!(
        precise <= f32_bound,
        "default math: {precise:e} > {f32_bound:e}"
    );
    let props = d.properties().unwrap();
    println!(
        "{} (compute {}.{}): default math, max relative error {precise:.2e}",
        props.name, props.major, props.minor
    );
    if hip::PLATFORM == "nvidia" && props.major >= 8 {
        blas.set_math_mode(MathMode::Tf32TensorOp).unwrap();
        let tf32 = error(&product(&blas, &d, &a, &b), &a, &b);
        println!("  TF32 tensor-op math: max relative error {tf32:.2e}");
        // TF32 keeps 10 of f32's 23 mantissa bits: each input is off by up to 2^-11 relative.
        assert!(
            tf32 <= 4.0 * 2f64.powi(-11),
            "TF32 error {tf32:e} beyond TF32's rounding"
        );
        assert!(
            tf32 > 20.0 * precise.max(f32::EPSILON as f64),
            "TF32 error {tf32:e} is f32's ({precise:e}): the mode did not take"
        );
        blas.set_math_mode(MathMode::Default).unwrap();
        let again = error(&product(&blas, &d, &a, &b), &a, &b);
        assert!(again <= f32_bound, "back in default math: {again:e}");
    } else if hip::PLATFORM == "nvidia" {
        // No TF32 before compute 8.0: the mode is taken, and the products stay f32's.
        blas.set_math_mode(MathMode::Tf32TensorOp).unwrap();
        let e = error(&product(&blas, &d, &a, &b), &a, &b);
        assert!(
            e <= f32_bound,
            "compute {}.{}: {e:e}",
            props.major,
            props.minor
        );
    }
}
