//! A matrix product through hipBLAS (`hip::blas`), checked against the same product on the host.
//!
//! `cargo run --features blas --example gemm`. Row-major (C / NumPy order) f32 operands, C = A * B with A
//! 192x256 and B 256x128, then the same product from f16 inputs with f32 accumulation (`gemm_ex`).
//! Without a usable GPU it says why (no device, no driver, an old driver).
use hip::blas::{ComputeType, Gemm, Handle};
use hip::half::f16;
use hip::prelude::*;
use hip::Report;

const M: usize = 192;
const N: usize = 128;
const K: usize = 256;

/// Row-major `a` (m x k) times `b` (k x n) on the host, in f64.
fn host_product(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f64> {
    let mut c = vec![0.0f64; m * n];
    for i in 0..m {
        for p in 0..k {
            let aip = a[i * k + p] as f64;
            for j in 0..n {
                c[i * n + j] += aip * b[p * n + j] as f64;
            }
        }
    }
    c
}

/// The largest error relative to the size of the terms (`sum |a_ip * b_pj|`), so the bound does not
/// depend on cancellation.
fn max_relative_error(got: &[f32], want: &[f64], scale: &[f64]) -> f64 {
    got.iter()
        .zip(want)
        .zip(scale)
        .map(|((g, w), s)| (*g as f64 - w).abs() / s.max(1e-30))
        .fold(0.0, f64::max)
}

fn main() -> Result<(), Report> {
    let Some(device) = Device::first_usable(|why| println!("{why}"))? else {
        let v = hip::blas::HEADER_VERSION;
        println!(
            "no GPU to multiply on: the GEMM needs a HIP device (built against hipBLAS {v:?})"
        );
        return Ok(());
    };
    // Values exact in f16, so both products see the same inputs.
    let a: Vec<f32> = (0..M * K)
        .map(|i| ((i * 7 % 17) as f32 - 8.0) / 8.0)
        .collect();
    let b: Vec<f32> = (0..K * N)
        .map(|i| ((i * 5 % 13) as f32 - 6.0) / 4.0)
        .collect();
    let want = host_product(&a, &b, M, N, K);
    let abs = |v: &[f32]| v.iter().map(|x| x.abs()).collect::<Vec<f32>>();
    let scale = host_product(&abs(&a), &abs(&b), M, N, K);

    let stream = Stream::new(&device)?;
    let blas = Handle::new(&stream)?;
    let shape = Gemm::row_major(M, N, K);
    let da = DeviceBuffer::from_slice(&device, &a)?;
    let db = DeviceBuffer::from_slice(&device, &b)?;
    let mut dc = DeviceBuffer::<f32>::zeroed(&device, M * N)?;
    blas.gemm(&shape, 1.0f32, &da, &db, 0.0f32, &mut dc)?;
    let err32 = max_relative_error(&dc.to_vec()?, &want, &scale);

    let to_half = |v: &[f32]| v.iter().map(|x| f16::from_f32(*x)).collect::<Vec<f16>>();
    let ha = DeviceBuffer::from_slice(&device, &to_half(&a))?;
    let hb = DeviceBuffer::from_slice(&device, &to_half(&b))?;
    let mut hc = DeviceBuffer::<f32>::zeroed(&device, M * N)?;
    blas.gemm_ex(&shape, 1.0, &ha, &hb, 0.0, &mut hc, ComputeType::F32)?;
    let err16 = max_relative_error(&hc.to_vec()?, &want, &scale);

    // f32 accumulation over K = 256 terms: a relative error of about K * 2^-24 at worst; the f16 inputs
    // are exact, so the same bound holds (TF32 or other reduced-precision paths would exceed it).
    let bound = K as f64 * f32::EPSILON as f64;
    println!(
        "{} ({}): C = A * B, {M}x{K} times {K}x{N}, row-major\n  f32 gemm: max relative error {err32:.2e}\n  \
         f16 inputs, f32 compute (gemm_ex): max relative error {err16:.2e}\n  bound {bound:.2e}",
        device.properties()?.name,
        hip::PLATFORM
    );
    if err32 > bound || err16 > bound {
        return Err(Report::msg(format!(
            "the product differs from the host's beyond {bound:.2e}"
        )));
    }
    println!("checked against the host: ok");
    Ok(())
}
