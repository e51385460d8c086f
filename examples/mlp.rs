//! A two-layer perceptron's forward pass, `Y = GELU(X W1 + b1) W2 + b2`, in f32 and in f16, checked
//! against the same model on the host. No kernel of its own, no `unsafe`.
//!
//! `cargo run --features blas --example mlp`. Weights come from the host in f32 and are rounded to f16
//! on the device (`hip::elementwise::convert`); the products are hipBLAS GEMMs (`gemm` in f32, `gemm_ex`
//! with f16 inputs and f32 accumulation), each followed by the built-in bias + activation pass
//! (`hip::elementwise::bias_activation`). With `--features blas,blaslt` (AMD: hipBLASLt has no NVIDIA
//! backend) the f16 model also runs with the bias and GELU fused into hipBLASLt's matmul epilogues.
//! Without a usable GPU it says why (no device, no driver, an old driver).
use hip::blas::{ComputeType, Gemm, Handle};
use hip::elementwise::{self, Activation, ColumnMajor};
use hip::half::f16;
use hip::prelude::*;
use hip::Report;

const BATCH: usize = 64;
const INPUTS: usize = 256;
const HIDDEN: usize = 512;
const OUTPUTS: usize = 128;

/// The model's parameters and an input batch, row-major, on the host.
struct Model {
    x: Vec<f32>,
    w1: Vec<f32>,
    b1: Vec<f32>,
    w2: Vec<f32>,
    b2: Vec<f32>,
}

/// Deterministic values in about [-scale, scale).
fn values(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

fn gelu(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh())
}

/// `act(A B + bias)` for row-major `a` (m x k), `b` (k x n), in f64; also `|A| |B| + |bias|`, the size
/// of the terms, which bounds the rounding error. `round` is applied to the result (the f16 model
/// stores its hidden layer in f16).
fn host_layer(
    a: &[f64],
    b: &[f64],
    bias: &[f64],
    (m, n, k): (usize, usize, usize),
    act: fn(f64) -> f64,
    round: fn(f64) -> f64,
) -> (Vec<f64>, Vec<f64>) {
    let (mut out, mut size) = (vec![0.0; m * n], vec![0.0; m * n]);
    for i in 0..m {
        for j in 0..n {
            let (mut acc, mut abs) = (bias[j], bias[j].abs());
            for p in 0..k {
                acc += a[i * k + p] * b[p * n + j];
                abs += (a[i * k + p] * b[p * n + j]).abs();
            }
            out[i * n + j] = round(act(acc));
            size[i * n + j] = abs;
        }
    }
    (out, size)
}

/// The model on the host, its inputs first passed through `round` (identity for f32, f16 rounding for
/// f16): the output and the size of its terms.
fn host_forward(m: &Model, round: fn(f64) -> f64) -> (Vec<f64>, Vec<f64>) {
    let r = |v: &[f32]| v.iter().map(|x| round(*x as f64)).collect::<Vec<f64>>();
    let (h, _) = host_layer(
        &r(&m.x),
        &r(&m.w1),
        &r(&m.b1),
        (BATCH, HIDDEN, INPUTS),
        gelu,
        round,
    );
    host_layer(
        &h,
        &r(&m.w2),
        &r(&m.b2),
        (BATCH, OUTPUTS, HIDDEN),
        |x| x,
        |x| x,
    )
}

/// The largest error relative to the size of the terms.
fn max_relative_error(got: &[f32], want: &[f64], size: &[f64]) -> f64 {
    got.iter()
        .zip(want.iter().zip(size))
        .map(|(g, (w, s))| (*g as f64 - w).abs() / s.max(1e-30))
        .fold(0.0, f64::max)
}

/// The f32 model: `gemm`, then the built-in bias + activation pass.
fn forward_f32(
    device: &Device,
    stream: &Stream,
    blas: &Handle,
    m: &Model,
) -> hip::Result<Vec<f32>> {
    let up = |v: &[f32]| DeviceBuffer::from_slice(device, v);
    let (x, w1, b1, w2, b2) = (up(&m.x)?, up(&m.w1)?, up(&m.b1)?, up(&m.w2)?, up(&m.b2)?);
    let mut h = DeviceBuffer::<f32>::zeroed(device, BATCH * HIDDEN)?;
    blas.gemm(
        &Gemm::row_major(BATCH, HIDDEN, INPUTS),
        1.0,
        &x,
        &w1,
        0.0,
        &mut h,
    )?;
    // Row-major BATCH x HIDDEN is column-major HIDDEN x BATCH: one bias element per hidden unit.
    let hidden = ColumnMajor::new(HIDDEN, BATCH);
    elementwise::bias_activation(stream, &hidden, &b1, Activation::Gelu, &mut h)?;
    let mut y = DeviceBuffer::<f32>::zeroed(device, BATCH * OUTPUTS)?;
    blas.gemm(
        &Gemm::row_major(BATCH, OUTPUTS, HIDDEN),
        1.0,
        &h,
        &w2,
        0.0,
        &mut y,
    )?;
    let out = ColumnMajor::new(OUTPUTS, BATCH);
    elementwise::bias_activation(stream, &out, &b2, Activation::Identity, &mut y)?;
    y.to_vec()
}

/// The model's parameters rounded to f16 on the device.
struct HalfModel {
    x: DeviceBuffer<f16>,
    w1: DeviceBuffer<f16>,
    b1: DeviceBuffer<f16>,
    w2: DeviceBuffer<f16>,
    /// The output bias in f16 (hipBLASLt's epilogue, whose types are all one), and its values in f32
    /// (added to the f32 output of the hipBLAS path).
    #[cfg_attr(not(feature = "blaslt"), allow(dead_code))]
    b2: DeviceBuffer<f16>,
    b2_wide: DeviceBuffer<f32>,
}

fn to_device_f16(device: &Device, stream: &Stream, m: &Model) -> hip::Result<HalfModel> {
    let half = |v: &[f32]| -> hip::Result<DeviceBuffer<f16>> {
        let wide = DeviceBuffer::from_slice(device, v)?;
        let mut narrow = DeviceBuffer::<f16>::zeroed(device, v.len())?;
        elementwise::convert(stream, &wide, &mut narrow)?;
        Ok(narrow)
    };
    // The output layer's bias is added to the f32 output: round it to f16 values, kept in f32.
    let b2 = half(&m.b2)?;
    let mut b2_wide = DeviceBuffer::<f32>::zeroed(device, OUTPUTS)?;
    elementwise::convert(stream, &b2, &mut b2_wide)?;
    Ok(HalfModel {
        x: half(&m.x)?,
        w1: half(&m.w1)?,
        b1: half(&m.b1)?,
        w2: half(&m.w2)?,
        b2,
        b2_wide,
    })
}

/// The f16 model: f16 weights and activations, f32 accumulation (`gemm_ex`), the hidden layer stored in
/// f16, the output in f32.
fn forward_f16(
    device: &Device,
    stream: &Stream,
    blas: &Handle,
    m: &HalfModel,
) -> hip::Result<Vec<f32>> {
    let mut h = DeviceBuffer::<f16>::zeroed(device, BATCH * HIDDEN)?;
    let layer1 = Gemm::row_major(BATCH, HIDDEN, INPUTS);
    blas.gemm_ex(&layer1, 1.0, &m.x, &m.w1, 0.0, &mut h, ComputeType::F32)?;
    let hidden = ColumnMajor::new(HIDDEN, BATCH);
    elementwise::bias_activation(stream, &hidden, &m.b1, Activation::Gelu, &mut h)?;
    let mut y = DeviceBuffer::<f32>::zeroed(device, BATCH * OUTPUTS)?;
    let layer2 = Gemm::row_major(BATCH, OUTPUTS, HIDDEN);
    blas.gemm_ex(&layer2, 1.0, &h, &m.w2, 0.0, &mut y, ComputeType::F32)?;
    let out = ColumnMajor::new(OUTPUTS, BATCH);
    elementwise::bias_activation(stream, &out, &m.b2_wide, Activation::Identity, &mut y)?;
    y.to_vec()
}

/// The f16 model with the bias and GELU fused into hipBLASLt's matmul (AMD only: hipBLASLt has no
/// NVIDIA backend). Every hipBLASLt matmul has one element type, so the output is f16 too, widened on the
/// device for the comparison.
#[cfg(feature = "blaslt")]
fn forward_fused(device: &Device, stream: &Stream, m: &HalfModel) -> hip::Result<Vec<f32>> {
    use hip::blaslt::{Epilogue, Handle as Lt, Matmul};
    let mut lt = Lt::new(stream)?;
    let mut h = DeviceBuffer::<f16>::zeroed(device, BATCH * HIDDEN)?;
    let layer1 = Matmul::row_major(BATCH, HIDDEN, INPUTS);
    lt.matmul(
        &layer1,
        1.0,
        &m.x,
        &m.w1,
        0.0,
        &mut h,
        Epilogue::gelu_bias(&m.b1),
    )?;
    let mut y = DeviceBuffer::<f16>::zeroed(device, BATCH * OUTPUTS)?;
    let layer2 = Matmul::row_major(BATCH, OUTPUTS, HIDDEN);
    lt.matmul(&layer2, 1.0, &h, &m.w2, 0.0, &mut y, Epilogue::bias(&m.b2))?;
    let mut wide = DeviceBuffer::<f32>::zeroed(device, BATCH * OUTPUTS)?;
    elementwise::convert(stream, &y, &mut wide)?;
    wide.to_vec()
}

fn main() -> Result<(), Report> {
    let Some(device) = Device::first_usable(|why| println!("{why}"))? else {
        println!("no GPU to run the model on: the forward pass needs a HIP device");
        return Ok(());
    };
    let model = Model {
        x: values(BATCH * INPUTS, 1, 1.0),
        w1: values(INPUTS * HIDDEN, 2, 1.0 / (INPUTS as f32).sqrt()),
        b1: values(HIDDEN, 3, 0.5),
        w2: values(HIDDEN * OUTPUTS, 4, 1.0 / (HIDDEN as f32).sqrt()),
        b2: values(OUTPUTS, 5, 0.5),
    };
    let stream = Stream::new(&device)?;
    let blas = Handle::new(&stream)?;
    println!(
        "{}: Y = GELU(X W1 + b1) W2 + b2, X {BATCH}x{INPUTS}, W1 {INPUTS}x{HIDDEN}, W2 {HIDDEN}x{OUTPUTS}",
        device.properties()?.name
    );

    let (want, size) = host_forward(&model, |x| x);
    let err32 = max_relative_error(&forward_f32(&device, &stream, &blas, &model)?, &want, &size);
    // Two layers of f32 accumulation over at most HIDDEN terms, and GELU's tanh: well within this.
    let bound32 = 4.0 * HIDDEN as f64 * f32::EPSILON as f64;
    println!("  f32 (gemm + bias/GELU pass): max relative error {err32:.2e} (bound {bound32:.2e})");

    let round16 = |x: f64| f16::from_f64(x).to_f64();
    let (want16, size16) = host_forward(&model, round16);
    let half = to_device_f16(&device, &stream, &model)?;
    let err16 = max_relative_error(
        &forward_f16(&device, &stream, &blas, &half)?,
        &want16,
        &size16,
    );
    // The hidden layer is rounded to f16 on both sides, so a value near a rounding boundary may round
    // differently: one f16 step (2^-10 relative) of a hidden value, plus f32 accumulation.
    let bound16 = 2.0 * 2f64.powi(-10);
    println!(
        "  f16 (gemm_ex + bias/GELU pass): max relative error {err16:.2e} (bound {bound16:.2e})"
    );

    #[cfg(feature = "blaslt")]
    let (err_lt, bound_lt) = {
        let got = forward_fused(&device, &stream, &half)?;
        // One more f16 rounding, of the output.
        let bound = bound16 + 2f64.powi(-11);
        let err = max_relative_error(&got, &want16, &size16);
        println!("  f16 (hipBLASLt, bias + GELU fused): max relative error {err:.2e} (bound {bound:.2e})");
        (err, bound)
    };

    if err32 > bound32 || err16 > bound16 {
        return Err(Report::msg(
            "the device's forward pass differs from the host's",
        ));
    }
    #[cfg(feature = "blaslt")]
    if err_lt > bound_lt {
        return Err(Report::msg(
            "the fused forward pass differs from the host's",
        ));
    }
    println!("all forward passes match the host");
    Ok(())
}
