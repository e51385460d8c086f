//! hipBLASLt's fused epilogue: `D = GELU(A B + bias)` for square f16 and bf16 matrices (4096, 8192),
//! three ways on one stream, timed with events:
//! - safe `hip::blaslt` (`Handle::matmul` with `Epilogue::gelu_bias`),
//! - raw C++ hipBLASLt (bench/baseline/blaslt_baseline.cpp: its own handle, descriptors, heuristic choice
//!   and workspace),
//! - unfused: `hip::blas::gemm_ex` (f32 compute) followed by the built-in bias + GELU pass
//!   (`hip::elementwise::bias_activation`), a second trip through D.
//!
//! ```text
//! blaslt --baseline libhiprs_blaslt_baseline.so [--quick]
//! ```
//! Each row is the median of five rounds (the three sides in turn) of `REPS` calls after a warm-up;
//! `safe/raw` is the median (and range) of the per-round ratios raw ms / safe ms (above 1 the safe side
//! is faster), `fused speed-up` unfused ms / safe ms. `--quick`: 1024 and 2048 instead. AMD only (hipBLASLt has no NVIDIA
//! backend).
use hip::blas::{ComputeType, Gemm, Handle as Blas};
use hip::blaslt::{Epilogue, Handle as Lt, LtElement, Matmul};
use hip::elementwise::{self, Activation, ColumnMajor, Element};
use hip::half::{bf16, f16};
use hip::prelude::*;
#[path = "../baseline_arg.rs"]
mod baseline_arg;
#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;
use stats::median;
use std::ffi::{c_int, c_void};

type RawBiasGelu = unsafe extern "C" fn(
    *mut c_void,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    *const c_void,
    *mut c_void,
    c_int,
) -> f64;

const REPS: usize = 20;
const ROUNDS: usize = 5;

/// An element type of the benchmark, with the baseline's code for it.
trait Bench: LtElement + Element + hip::blas::GemmExType {
    const CODE: c_int;
    fn from(v: f32) -> Self;
}
impl Bench for f16 {
    const CODE: c_int = 1;
    fn from(v: f32) -> Self {
        f16::from_f32(v)
    }
}
impl Bench for bf16 {
    const CODE: c_int = 2;
    fn from(v: f32) -> Self {
        bf16::from_f32(v)
    }
}

/// Milliseconds per call of `f` over `REPS` calls on `stream`, after one warm-up.
fn time(stream: &Stream, mut f: impl FnMut() -> hip::Result<()>) -> hip::Result<f64> {
    let device = stream.device();
    let (start, stop) = (Event::with_timing(device)?, Event::with_timing(device)?);
    f()?;
    start.record(stream)?;
    for _ in 0..REPS {
        f()?;
    }
    stop.record(stream)?;
    stop.synchronize()?;
    Ok(start.elapsed_ms(&stop)? as f64 / REPS as f64)
}

fn run_size<T: Bench>(
    raw: RawBiasGelu,
    device: &Device,
    stream: &Stream,
    n: usize,
) -> Result<(), String> {
    let e = |e: hip::Error| e.to_string();
    let values = |seed: usize, len: usize| -> Vec<T> {
        (0..len)
            .map(|i| T::from((((i * 7919 + seed) % 251) as f32 - 125.0) / 1024.0))
            .collect()
    };
    let a = DeviceBuffer::from_slice(device, &values(1, n * n)).map_err(e)?;
    let b = DeviceBuffer::from_slice(device, &values(2, n * n)).map_err(e)?;
    let bias = DeviceBuffer::from_slice(device, &values(3, n)).map_err(e)?;
    let mut d = DeviceBuffer::<T>::zeroed(device, n * n).map_err(e)?;
    let mut lt = Lt::new(stream).map_err(e)?;
    let blas = Blas::new(stream).map_err(e)?;
    let desc = Matmul::new(n, n, n);
    let (mut safe, mut unfused, mut raw_ms) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let s = time(stream, || {
            lt.matmul(&desc, 1.0, &a, &b, 0.0, &mut d, Epilogue::gelu_bias(&bias))
        })
        .map_err(e)?;
        // SAFETY: the baseline reads A, B (n x n) and the bias (n) and writes D (n x n) of type T on
        // `stream`, and returns after synchronizing on its last event: nothing of it is queued past the
        // call. The buffers live until the end of this function.
        let r = unsafe {
            raw(
                stream.raw().cast(),
                T::CODE,
                n as c_int,
                a.device_ptr().cast_const(),
                b.device_ptr().cast_const(),
                bias.device_ptr().cast_const(),
                d.device_ptr(),
                REPS as c_int,
            )
        };
        if r < 0.0 {
            return Err(format!("the raw hipBLASLt baseline failed ({r})"));
        }
        let u = time(stream, || {
            blas.gemm_ex(
                &Gemm::new(n, n, n),
                1.0,
                &a,
                &b,
                0.0,
                &mut d,
                ComputeType::F32,
            )?;
            let m = ColumnMajor::new(n, n);
            elementwise::bias_activation(stream, &m, &bias, Activation::Gelu, &mut d)
        })
        .map_err(e)?;
        raw_ms.push(r);
        safe.push(s);
        unfused.push(u);
    }
    let (s, u) = (median(&safe), median(&unfused));
    let tflops = |ms: f64| 2.0 * (n as f64).powi(3) / (ms * 1e-3) / 1e12;
    println!(
        "| {} | {n} | {s:.3} ({:.0} TFLOP/s) | {:.3} | {u:.3} | {} | {:.2}x |",
        <T as Element>::NAME,
        tflops(s),
        median(&raw_ms),
        stats::paired_ratio(&raw_ms, &safe),
        u / s
    );
    Ok(())
}

fn run(baseline: &str) -> Result<(), String> {
    // SAFETY: the baseline library is this repository's bench/baseline/blaslt_baseline.cpp, whose
    // initialisers do nothing.
    let lib = unsafe { libloading::Library::new(baseline) }.map_err(|e| e.to_string())?;
    // SAFETY: the symbol has RawBiasGelu's signature (blaslt_baseline.cpp).
    let raw: RawBiasGelu =
        *unsafe { lib.get::<RawBiasGelu>(b"lt_raw_bias_gelu\0") }.map_err(|e| e.to_string())?;
    let Some(device) = Device::first_usable(|why| println!("{why}")).map_err(|e| e.to_string())?
    else {
        println!("no GPU: nothing to measure");
        return Ok(());
    };
    let stream = Stream::new(&device).map_err(|e| e.to_string())?;
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes: &[usize] = if quick { &[1024, 2048] } else { &[4096, 8192] };
    println!(
        "{}: D = GELU(A B + bias), square, median of {ROUNDS} rounds of {REPS} calls",
        device.properties().map_err(|e| e.to_string())?.name
    );
    println!(
        "| type | n | safe hip::blaslt ms | raw C++ hipBLASLt ms | unfused (gemm_ex + bias/GELU pass) ms \
         | safe/raw (min-max) | fused speed-up |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for &n in sizes {
        run_size::<f16>(raw, &device, &stream, n)?;
        run_size::<bf16>(raw, &device, &stream, n)?;
    }
    Ok(())
}

fn main() {
    baseline_arg::main("blaslt", "libhiprs_blaslt_baseline.so", run);
}
