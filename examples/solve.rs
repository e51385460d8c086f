//! A least-squares fit through hipSOLVER (`hip::solver`), checked against the same fit on the host.
//!
//! `cargo run --features solver --example solve`. Fits `y = c0 + c1 t + c2 t^2` to 4096 noisy samples of
//! `1.5 - 2 t + 0.25 t^2`: QR-factorize the 4096 x 3 design matrix (`geqrf`), apply `Q^T` to the samples
//! (`ormqr`), solve the 3 x 3 triangle `R c = (Q^T y)[..3]` on the host, and compare with the normal
//! equations solved on the host in f64. Then a Cholesky solve of the same normal equations on the device
//! (`potrf`, `potrs`). Without a usable GPU it says why (no device, no driver, an old driver).
use hip::prelude::*;
use hip::solver::{Handle, Op, Side, Uplo};
use hip::Report;

const M: usize = 4096;
const N: usize = 3;

/// The design matrix (column-major, M x 3) and the noisy samples.
fn problem() -> (Vec<f64>, Vec<f64>) {
    let mut a = vec![0.0; M * N];
    let mut y = vec![0.0; M];
    for i in 0..M {
        let t = i as f64 / M as f64 * 8.0 - 4.0;
        a[i] = 1.0;
        a[i + M] = t;
        a[i + 2 * M] = t * t;
        let noise = ((i * 7919 % 1009) as f64 / 1009.0 - 0.5) * 0.1;
        y[i] = 1.5 - 2.0 * t + 0.25 * t * t + noise;
    }
    (a, y)
}

/// `A^T A` (3 x 3, column-major) and `A^T y`.
fn normal_equations(a: &[f64], y: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let mut ata = vec![0.0; N * N];
    let mut aty = vec![0.0; N];
    for j in 0..N {
        for k in 0..N {
            ata[j + k * N] = (0..M).map(|i| a[i + j * M] * a[i + k * M]).sum();
        }
        aty[j] = (0..M).map(|i| a[i + j * M] * y[i]).sum();
    }
    (ata, aty)
}

/// Solve a 3 x 3 system on the host (Gaussian elimination, f64).
fn host_solve(mut m: Vec<f64>, mut b: Vec<f64>) -> Vec<f64> {
    for p in 0..N {
        for r in p + 1..N {
            let f = m[r + p * N] / m[p + p * N];
            for c in p..N {
                m[r + c * N] -= f * m[p + c * N];
            }
            b[r] -= f * b[p];
        }
    }
    let mut x = vec![0.0; N];
    for p in (0..N).rev() {
        let s: f64 = (p + 1..N).map(|c| m[p + c * N] * x[c]).sum();
        x[p] = (b[p] - s) / m[p + p * N];
    }
    x
}

fn main() -> Result<(), Report> {
    let Some(device) = Device::first_usable(|why| println!("{why}"))? else {
        return Ok(()); // no usable GPU: the reason was printed
    };
    let (a, y) = problem();
    let (ata, aty) = normal_equations(&a, &y);
    let want = host_solve(ata.clone(), aty.clone());

    let stream = Stream::new(&device)?;
    let mut solver = Handle::new(&stream)?;
    let mut qr = DeviceBuffer::from_slice(&device, &a)?;
    let mut tau = DeviceBuffer::<f64>::zeroed(&device, N)?;
    let mut qty = DeviceBuffer::from_slice(&device, &y)?;
    solver.geqrf(M, N, &mut qr, M, &mut tau)?.check()?;
    solver
        .ormqr(Side::Left, Op::T, (M, 1, N), &qr, M, &tau, &mut qty, M)?
        .check()?;
    // R is the upper triangle of the factored matrix's first 3 rows: back-substitute on the host.
    let r = qr.to_vec()?;
    let rhs = qty.to_vec()?;
    let mut upper = vec![0.0; N * N];
    for j in 0..N {
        for i in 0..=j {
            upper[i + j * N] = r[i + j * M];
        }
    }
    let fit = host_solve(upper, rhs[..N].to_vec());

    let mut dn = DeviceBuffer::from_slice(&device, &ata)?;
    let mut dx = DeviceBuffer::from_slice(&device, &aty)?;
    solver.potrf(Uplo::Lower, N, &mut dn, N)?.check()?;
    solver
        .potrs(Uplo::Lower, N, 1, &dn, N, &mut dx, N)?
        .check()?;
    let cholesky = dx.to_vec()?;

    let err = |x: &[f64]| {
        x.iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
    };
    println!(
        "least squares on {} ({M} samples, quadratic model)",
        device.properties()?.name
    );
    println!(
        "  QR (geqrf, ormqr):        c = {fit:.6?}  (max |error| vs host {:.1e})",
        err(&fit)
    );
    println!(
        "  normal equations (potrf): c = {cholesky:.6?}  (max |error| vs host {:.1e})",
        err(&cholesky)
    );
    println!("  host (f64):               c = {want:.6?}");
    // f64 throughout; the normal equations' condition number here is about 1e3: agreement to 1e-9.
    if err(&fit) > 1e-9 || err(&cholesky) > 1e-9 {
        return Err(Report::msg("the device fit differs from the host's"));
    }
    println!("ok: both device fits match the host");
    Ok(())
}
