//! Normal samples generated on the device (`hip::rand`), their FFT on the device (`hip::fft`), and both
//! checked on the host: the samples' moments, and the spectrum against `rustfft` over the same samples.
//!
//! `cargo run --features rand,fft --example random_fft`. Without a usable GPU it says why (no
//! device, no driver, an old driver).
use hip::fft::{Complex32, Plan, Shape, Transform};
use hip::prelude::*;
use hip::rand::{Generator, RngType};
use hip::Report;

const N: usize = 1 << 20;

fn main() -> Result<(), Report> {
    let Some(device) = Device::first_usable(|why| println!("{why}"))? else {
        println!("no GPU to generate on: random_fft needs a HIP device");
        return Ok(());
    };
    let stream = Stream::new(&device)?;
    let mut rng = Generator::new(&stream, RngType::Philox4x32_10)?;
    rng.set_seed(2026)?;
    let mut samples = DeviceBuffer::<f32>::zeroed(&device, N)?;
    rng.normal(&mut samples, 0.0, 1.0)?;

    let plan = Plan::<f32>::new(&stream, Transform::R2C, &Shape::new(&[N]))?;
    let mut spectrum = DeviceBuffer::<Complex32>::zeroed(&device, plan.output_len())?;
    plan.r2c(&samples, &mut spectrum)?;

    let x = samples.to_vec()?;
    let n = N as f64;
    let mean = x.iter().map(|v| *v as f64).sum::<f64>() / n;
    let var = x.iter().map(|v| (*v as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0);
    // Six standard errors: mean 1/sqrt(n), variance sqrt(2/n) for a standard normal.
    if mean.abs() > 6.0 / n.sqrt() || (var - 1.0).abs() > 6.0 * (2.0 / n).sqrt() {
        return Err(Report::msg(format!(
            "samples: mean {mean}, variance {var}: not a standard normal"
        )));
    }

    let mut host: Vec<rustfft::num_complex::Complex<f64>> = x
        .iter()
        .map(|v| rustfft::num_complex::Complex::new(*v as f64, 0.0))
        .collect();
    rustfft::FftPlanner::new()
        .plan_fft_forward(N)
        .process(&mut host);
    let got = spectrum.to_vec()?;
    let (mut diff, mut norm) = (0.0f64, 0.0f64);
    for (g, w) in got.iter().zip(&host) {
        diff += (g.re as f64 - w.re).powi(2) + (g.im as f64 - w.im).powi(2);
        norm += w.norm_sqr();
    }
    let rel = (diff / norm).sqrt();
    // f32 FFT of 2^20 points: a relative L2 error of a few 1e-7 (rounding grows like sqrt(log n)).
    println!(
        "{} ({}): {N} normal samples (mean {mean:.5}, variance {var:.5}), real FFT of {} bins\n  \
         relative L2 error against rustfft: {rel:.2e} (bound 1e-5)",
        device.properties()?.name,
        hip::PLATFORM,
        got.len()
    );
    if rel > 1e-5 {
        return Err(Report::msg(format!(
            "the spectrum differs from the host's: relative error {rel:.2e}"
        )));
    }
    println!("checked against the host: ok");
    Ok(())
}
