//! hip::elementwise on a device: conversions bit for bit against the `half` crate over every f16 / bf16
//! value and a spread of f32 values (rounding ties, overflow, subnormals, NaN payloads); bias and
//! activation against a host reference with a leading dimension larger than the rows (the rows between
//! untouched); refused shapes that write nothing; ordering with another stream. Compiled only with
//! `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use common::device;
use hip::elementwise::{self, Activation, ColumnMajor, Element};
use hip::half::{bf16, f16};
use hip::prelude::*;
use hip::Error;

/// f32 values that stress rounding: every power of two, values halfway between f16 / bf16 neighbours
/// (ties), just around them, the largest finite values, subnormals of both, infinities, NaNs with
/// payloads, and a pseudo-random spread of bit patterns.
fn f32_cases() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        65504.0,
        65519.99,
        65520.0,
        -65520.0,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-8,
        -6e-8,
        2.98e-8,
        5.9604645e-8,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(0x7fa0_1234),
        f32::from_bits(0xffc0_0001),
        f32::from_bits(0x0000_0001),
    ];
    for e in -30..20 {
        let p = 2f32.powi(e);
        v.push(p);
        // f16 ties: 1 + 2^-11 is halfway between 1 and 1 + 2^-10; bf16: 1 + 2^-8.
        v.push(p * (1.0 + 2f32.powi(-11)));
        v.push(p * (1.0 + 3.0 * 2f32.powi(-11)));
        v.push(p * (1.0 + 2f32.powi(-8)));
        v.push(p * (1.0 + 3.0 * 2f32.powi(-8)));
        v.push(-p * (1.0 + 2f32.powi(-11) + 2f32.powi(-20)));
    }
    let mut x = 0x1234_5678u32;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v.push(f32::from_bits(x));
    }
    v
}

fn assert_bits<T: Copy + std::fmt::Debug>(
    what: &str,
    input: &[impl std::fmt::Debug],
    got: &[T],
    want: &[T],
    bits: impl Fn(T) -> u32,
) {
    assert_eq!(got.len(), want.len());
    let wrong: Vec<_> = (0..got.len())
        .filter(|&i| bits(got[i]) != bits(want[i]))
        .take(5)
        .map(|i| {
            format!(
                "{:?}: device {:#x}, host {:#x}",
                input[i],
                bits(got[i]),
                bits(want[i])
            )
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{what}: {} differ, e.g. {wrong:?}",
        wrong.len()
    );
}

#[test]
fn narrowing_matches_the_half_crate_bit_for_bit() {
    let dev = device();
    let stream = Stream::new(&dev).unwrap();
    let x = f32_cases();
    let src = DeviceBuffer::from_slice(&dev, &x).unwrap();
    let mut h = DeviceBuffer::<f16>::zeroed(&dev, x.len()).unwrap();
    let mut b = DeviceBuffer::<bf16>::zeroed(&dev, x.len()).unwrap();
    elementwise::convert(&stream, &src, &mut h).unwrap();
    elementwise::convert(&stream, &src, &mut b).unwrap();
    let want_h: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
    let want_b: Vec<bf16> = x.iter().map(|&v| bf16::from_f32(v)).collect();
    assert_bits("f32 -> f16", &x, &h.to_vec().unwrap(), &want_h, |v| {
        v.to_bits() as u32
    });
    assert_bits("f32 -> bf16", &x, &b.to_vec().unwrap(), &want_b, |v| {
        v.to_bits() as u32
    });
}

#[test]
fn widening_every_half_value_is_exact() {
    let dev = device();
    let stream = Stream::new(&dev).unwrap();
    let all: Vec<u16> = (0..=u16::MAX).collect();
    let h: Vec<f16> = all.iter().map(|&b| f16::from_bits(b)).collect();
    let b: Vec<bf16> = all.iter().map(|&b| bf16::from_bits(b)).collect();
    let (dh, db) = (
        DeviceBuffer::from_slice(&dev, &h).unwrap(),
        DeviceBuffer::from_slice(&dev, &b).unwrap(),
    );
    let mut out = DeviceBuffer::<f32>::zeroed(&dev, all.len()).unwrap();
    elementwise::convert(&stream, &dh, &mut out).unwrap();
    let want: Vec<f32> = h.iter().map(|v| v.to_f32()).collect();
    assert_bits(
        "f16 -> f32",
        &all,
        &out.to_vec().unwrap(),
        &want,
        f32::to_bits,
    );
    elementwise::convert(&stream, &db, &mut out).unwrap();
    let want: Vec<f32> = b.iter().map(|v| v.to_f32()).collect();
    assert_bits(
        "bf16 -> f32",
        &all,
        &out.to_vec().unwrap(),
        &want,
        f32::to_bits,
    );
    // Between the half types: through f32, rounding once.
    let mut to_b = DeviceBuffer::<bf16>::zeroed(&dev, all.len()).unwrap();
    elementwise::convert(&stream, &dh, &mut to_b).unwrap();
    let want: Vec<bf16> = h.iter().map(|v| bf16::from_f32(v.to_f32())).collect();
    assert_bits("f16 -> bf16", &all, &to_b.to_vec().unwrap(), &want, |v| {
        v.to_bits() as u32
    });
    let mut to_h = DeviceBuffer::<f16>::zeroed(&dev, all.len()).unwrap();
    elementwise::convert(&stream, &db, &mut to_h).unwrap();
    let want: Vec<f16> = b.iter().map(|v| f16::from_f32(v.to_f32())).collect();
    assert_bits("bf16 -> f16", &all, &to_h.to_vec().unwrap(), &want, |v| {
        v.to_bits() as u32
    });
}

#[test]
fn convert_refuses_unequal_lengths_and_writes_nothing() {
    let dev = device();
    let stream = Stream::new(&dev).unwrap();
    let src = DeviceBuffer::from_slice(&dev, &[1.0f32; 8]).unwrap();
    let mut dst = DeviceBuffer::from_slice(&dev, &[f16::from_f32(7.0); 7]).unwrap();
    let e = elementwise::convert(&stream, &src, &mut dst).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { .. }), "{e}");
    assert_eq!(dst.to_vec().unwrap(), [f16::from_f32(7.0); 7]);
    // A view of the right length converts into part of a larger buffer.
    let mut big = DeviceBuffer::from_slice(&dev, &[f16::from_f32(7.0); 10]).unwrap();
    elementwise::convert(&stream, &src, &mut big.slice_mut(1..9).unwrap()).unwrap();
    let got = big.to_vec().unwrap();
    assert_eq!(got[0], f16::from_f32(7.0));
    assert_eq!(got[9], f16::from_f32(7.0));
    assert!(got[1..9].iter().all(|v| *v == f16::ONE));
}

fn gelu(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh())
}

fn host_reference(c: &[f64], bias: Option<&[f64]>, m: &ColumnMajor, act: Activation) -> Vec<f64> {
    let mut out = c.to_vec();
    for j in 0..m.cols {
        for i in 0..m.rows {
            let x = c[i + j * m.ld] + bias.map_or(0.0, |b| b[i]);
            out[i + j * m.ld] = match act {
                Activation::Identity => x,
                Activation::Relu => x.max(0.0),
                Activation::Gelu => gelu(x),
            };
        }
    }
    out
}

/// Each activation, with and without bias, for one element type: `ld = rows + 3`, the rows between
/// columns keep their sentinel.
fn bias_activation_for<T: Element + PartialEq + std::fmt::Debug>(
    to: impl Fn(f64) -> T,
    from: impl Fn(T) -> f64,
    tol: f64,
) {
    let dev = device();
    let stream = Stream::new(&dev).unwrap();
    let m = ColumnMajor::new(37, 29).ld(40);
    let len = m.required_len().unwrap();
    let sentinel = to(123.0);
    let host: Vec<T> = (0..len)
        .map(|k| {
            if k % m.ld < m.rows {
                to(((k * 7919) % 97) as f64 / 16.0 - 3.0)
            } else {
                sentinel
            }
        })
        .collect();
    let bias_h: Vec<T> = (0..m.rows).map(|i| to((i as f64 - 18.0) / 8.0)).collect();
    let bias = DeviceBuffer::from_slice(&dev, &bias_h).unwrap();
    let c64: Vec<f64> = host.iter().map(|&v| from(v)).collect();
    let b64: Vec<f64> = bias_h.iter().map(|&v| from(v)).collect();
    for act in [Activation::Identity, Activation::Relu, Activation::Gelu] {
        for with_bias in [true, false] {
            let mut c = DeviceBuffer::from_slice(&dev, &host).unwrap();
            if with_bias {
                elementwise::bias_activation(&stream, &m, &bias, act, &mut c).unwrap();
            } else {
                elementwise::activation(&stream, &m, act, &mut c).unwrap();
            }
            let got = c.to_vec().unwrap();
            let want = host_reference(&c64, with_bias.then_some(&b64[..]), &m, act);
            for k in 0..len {
                if k % m.ld >= m.rows {
                    assert_eq!(
                        got[k], sentinel,
                        "{act:?} bias {with_bias}: padding {k} written"
                    );
                    continue;
                }
                let err = (from(got[k]) - want[k]).abs();
                assert!(
                    err <= tol * want[k].abs().max(1.0),
                    "{} {act:?} bias {with_bias}: element {k}: {} vs {}",
                    T::NAME,
                    from(got[k]),
                    want[k]
                );
            }
        }
    }
}

#[test]
fn bias_activation_f32_matches_the_host() {
    bias_activation_for(|v| v as f32, |v| v as f64, 1e-6);
}

#[test]
fn bias_activation_f16_matches_the_host() {
    // One rounding of the f32 result to f16 (2^-11 relative), plus the input rounding's effect.
    bias_activation_for(f16::from_f64, |v| v.to_f64(), 2.0 * 2f64.powi(-11));
}

#[test]
fn bias_activation_bf16_matches_the_host() {
    bias_activation_for(bf16::from_f64, |v| v.to_f64(), 2.0 * 2f64.powi(-8));
}

#[test]
fn bias_activation_refuses_short_buffers_and_writes_nothing() {
    let dev = device();
    let stream = Stream::new(&dev).unwrap();
    let m = ColumnMajor::new(4, 3).ld(5); // needs 14
    let mut c = DeviceBuffer::from_slice(&dev, &[1.0f32; 13]).unwrap();
    let bias = DeviceBuffer::from_slice(&dev, &[1.0f32; 4]).unwrap();
    let e = elementwise::bias_activation(&stream, &m, &bias, Activation::Relu, &mut c).unwrap_err();
    assert!(e.to_string().contains("bias_activation operand c"), "{e}");
    let short_bias = DeviceBuffer::from_slice(&dev, &[1.0f32; 3]).unwrap();
    let mut c = DeviceBuffer::from_slice(&dev, &[1.0f32; 14]).unwrap();
    let e = elementwise::bias_activation(&stream, &m, &short_bias, Activation::Relu, &mut c)
        .unwrap_err();
    assert!(e.to_string().contains("bias_activation bias"), "{e}");
    let e = elementwise::activation(
        &stream,
        &ColumnMajor::new(4, 3).ld(3),
        Activation::Relu,
        &mut c,
    )
    .unwrap_err();
    assert!(e.to_string().contains("leading dimension 3"), "{e}");
    assert_eq!(c.to_vec().unwrap(), [1.0f32; 14]);
    // Another device's buffer (where there are two) is refused by the launch's device check.
    if let Ok(other) = Device::get(1) {
        let mut far = DeviceBuffer::from_slice(&other, &[1.0f32; 14]).unwrap();
        let e = elementwise::activation(&stream, &m, Activation::Relu, &mut far).unwrap_err();
        assert!(matches!(e, Error::DeviceMismatch { .. }), "{e}");
    }
}

/// A conversion on one stream reads what a slow kernel on another stream wrote: the memory model
/// orders it after the writer.
#[test]
fn conversion_waits_for_another_streams_writer() {
    let dev = device();
    let (s1, s2) = (Stream::new(&dev).unwrap(), Stream::new(&dev).unwrap());
    let n = 1 << 20;
    let slow = common::slow::Slow::new(&dev);
    let mut src = slow.buffer(DeviceBuffer::<f32>::zeroed(&dev, n).unwrap());
    slow.fill(&s1, &mut src, 2.5);
    let mut dst = DeviceBuffer::<f16>::zeroed(&dev, n).unwrap();
    elementwise::convert(&s2, &src, &mut dst).unwrap();
    let got = dst.to_vec().unwrap();
    slow.end_round(&dev);
    let wrong = got.iter().filter(|v| **v != f16::from_f32(2.5)).count();
    assert_eq!(
        wrong, 0,
        "{wrong} of {n} converted before the writer finished"
    );
}

/// A kernel of the user's using `ProgramBuilder::half_precision`'s portable names compiles and runs on
/// this platform, reading and writing `f16` / `bf16` buffers as the `half` crate lays them out.
#[test]
fn half_precision_header_compiles_and_runs() {
    let dev = device();
    let stream = Stream::new(&dev).unwrap();
    let source = r#"#include "hip_rs_half.h"
extern "C" __global__ void k(hip_rs_half* h, hip_rs_bfloat16* b, float* f, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = hip_rs_half2float(h[i]) + hip_rs_bfloat162float(b[i]);
        f[i] = x;
        h[i] = hip_rs_float2half(x * 2.0f);
        b[i] = hip_rs_float2bfloat16(x * 3.0f);
    }
}
"#;
    let compiled = ProgramBuilder::new(source)
        .half_precision()
        .unwrap()
        .compile()
        .unwrap();
    let module = Module::load_data(&dev, compiled.code()).unwrap();
    let k = module.function("k").unwrap();
    let n = 1000u32;
    let hv: Vec<f16> = (0..n).map(|i| f16::from_f32(i as f32 / 8.0)).collect();
    let bv: Vec<bf16> = (0..n).map(|i| bf16::from_f32(-(i as f32) / 4.0)).collect();
    let mut h = DeviceBuffer::from_slice(&dev, &hv).unwrap();
    let mut b = DeviceBuffer::from_slice(&dev, &bv).unwrap();
    let mut f = DeviceBuffer::<f32>::zeroed(&dev, n as usize).unwrap();
    let mut args = LaunchArgs::new();
    args.arg_mut(&mut h).arg_mut(&mut b).arg_mut(&mut f).arg(&n);
    // SAFETY: k(half*, bfloat16*, float*, unsigned) touches elements below n of buffers of n elements.
    unsafe {
        k.launch(&stream, &LaunchConfig::for_num_elems(n), &mut args)
            .unwrap()
    };
    let (h, b, f) = (
        h.to_vec().unwrap(),
        b.to_vec().unwrap(),
        f.to_vec().unwrap(),
    );
    for i in 0..n as usize {
        let x = hv[i].to_f32() + bv[i].to_f32();
        assert_eq!(f[i], x, "element {i}");
        assert_eq!(h[i], f16::from_f32(x * 2.0), "element {i}");
        assert_eq!(b[i], bf16::from_f32(x * 3.0), "element {i}");
    }
}

/// After `prepare`, a conversion can be captured into a graph: nothing runs at capture, each replay
/// converts what the source holds then.
#[test]
fn a_prepared_conversion_is_captured_and_replayed() {
    let dev = device();
    let s = Stream::new(&dev).unwrap();
    elementwise::prepare(&dev).unwrap();
    elementwise::prepare(&dev).unwrap(); // loaded once: a second call does nothing
    let mut src = DeviceBuffer::from_slice(&dev, &[1.5f32; 1000]).unwrap();
    let mut dst = DeviceBuffer::<f16>::zeroed(&dev, 1000).unwrap();
    let cap = s.begin_capture(CaptureMode::ThreadLocal).unwrap();
    elementwise::convert(&s, &src, &mut dst).unwrap();
    let graph = cap.end().unwrap();
    assert_eq!(graph.kernel_node_count().unwrap(), 1);
    assert!(
        dst.to_vec().unwrap().iter().all(|v| *v == f16::ZERO),
        "ran at capture"
    );
    let mut exec = graph.instantiate().unwrap();
    for value in [2.5f32, -3.0] {
        src.copy_from_host(&[value; 1000]).unwrap();
        exec.launch(&s).unwrap();
        let got = dst.to_vec().unwrap();
        assert!(
            got.iter().all(|v| *v == f16::from_f32(value)),
            "{value}: {:?}",
            &got[..4]
        );
    }
}
