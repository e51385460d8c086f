//! hip::rand's 16-bit fills on a device: with one seed, `uniform_half` / `normal_half` /
//! `log_normal_half` give exactly the `f32` fill's values rounded (`half::f16::from_f32`,
//! `bf16::from_f32`), the generator advances as the `f32` fill does, the checks of the `f32` fills hold
//! (odd length refused, nothing written), and a fill into memory another stream reads is ordered.
//! Compiled only with `--features gpu,rand`.
#![cfg(all(feature = "gpu", feature = "rand"))]
mod common;

use common::device;
use hip::half::{bf16, f16};
use hip::memory::DeviceCopy;
use hip::prelude::*;
use hip::rand::{Generator, RngType};
use hip::Error;

const N: usize = 1 << 16;

fn generator(stream: &Stream) -> Generator {
    let mut g = Generator::new(stream, RngType::Philox4x32_10).unwrap();
    g.set_seed(1234).unwrap();
    g
}

/// Two rounds of `fill` (one 16-bit, then one `f32` with the generator it left) against the same two
/// rounds done in `f32`: the values are the rounded `f32` ones, and the second rounds agree, so the
/// generator advanced the same.
fn matches_f32<T: DeviceCopy + PartialEq + std::fmt::Debug>(
    round: impl Fn(f32) -> T,
    half_fill: impl Fn(&mut Generator, &mut DeviceBuffer<T>),
    f32_fill: impl Fn(&mut Generator, &mut DeviceBuffer<f32>),
) {
    let dev = device();
    let stream = Stream::new(&dev).unwrap();
    let (mut g16, mut g32) = (generator(&stream), generator(&stream));
    let mut h = DeviceBuffer::<T>::zeroed(&dev, N).unwrap();
    let mut f = DeviceBuffer::<f32>::zeroed(&dev, N).unwrap();
    half_fill(&mut g16, &mut h);
    f32_fill(&mut g32, &mut f);
    let (h, f) = (h.to_vec().unwrap(), f.to_vec().unwrap());
    let wrong = (0..N).filter(|&i| h[i] != round(f[i])).count();
    assert_eq!(
        wrong, 0,
        "{wrong} of {N} differ from the rounded f32 fill (first {:?} vs {})",
        h[0], f[0]
    );
    assert!(f.windows(2).any(|w| w[0] != w[1]), "the fill is constant");
    let (mut a, mut b) = (
        DeviceBuffer::<f32>::zeroed(&dev, N).unwrap(),
        DeviceBuffer::<f32>::zeroed(&dev, N).unwrap(),
    );
    f32_fill(&mut g16, &mut a);
    f32_fill(&mut g32, &mut b);
    assert_eq!(
        a.to_vec().unwrap(),
        b.to_vec().unwrap(),
        "the generators advanced differently"
    );
}

#[test]
fn uniform_half_is_the_f32_fill_rounded() {
    matches_f32(
        f16::from_f32,
        |g, x| g.uniform_half(x).unwrap(),
        |g, x| g.uniform(x).unwrap(),
    );
    matches_f32(
        bf16::from_f32,
        |g, x| g.uniform_half(x).unwrap(),
        |g, x| g.uniform(x).unwrap(),
    );
}

#[test]
fn normal_and_log_normal_half_are_the_f32_fills_rounded() {
    matches_f32(
        f16::from_f32,
        |g, x| g.normal_half(x, 1.0, 2.0).unwrap(),
        |g, x| g.normal(x, 1.0, 2.0).unwrap(),
    );
    matches_f32(
        bf16::from_f32,
        |g, x| g.normal_half(x, -3.0, 0.5).unwrap(),
        |g, x| g.normal(x, -3.0, 0.5).unwrap(),
    );
    matches_f32(
        f16::from_f32,
        |g, x| g.log_normal_half(x, 0.0, 0.25).unwrap(),
        |g, x| g.log_normal(x, 0.0, 0.25).unwrap(),
    );
}

#[test]
fn half_fills_keep_the_f32_checks_and_write_nothing_on_refusal() {
    let dev = device();
    let stream = Stream::new(&dev).unwrap();
    let mut g = generator(&stream);
    let mut odd = DeviceBuffer::from_slice(&dev, &[f16::from_f32(9.0); 7]).unwrap();
    let e = g.normal_half(&mut odd, 0.0, 1.0).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    let e = g
        .normal_half(&mut odd.slice_mut(0..6).unwrap(), 0.0, -1.0)
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    assert_eq!(odd.to_vec().unwrap(), [f16::from_f32(9.0); 7]);
    // A view fills only its elements.
    g.uniform_half(&mut odd.slice_mut(2..5).unwrap()).unwrap();
    let v = odd.to_vec().unwrap();
    assert_eq!(&v[..2], &[f16::from_f32(9.0); 2]);
    assert_eq!(&v[5..], &[f16::from_f32(9.0); 2]);
    assert!(
        v[2..5]
            .iter()
            .all(|x| x.to_f32() > 0.0 && x.to_f32() <= 1.0),
        "{v:?}"
    );
    // Empty: nothing to do.
    let mut empty = DeviceBuffer::<bf16>::zeroed(&dev, 0).unwrap();
    g.uniform_half(&mut empty).unwrap();
}

/// A 16-bit fill into a buffer a slow kernel on another stream is still reading waits for it.
#[test]
fn half_fill_waits_for_another_streams_reader() {
    let dev = device();
    let (s1, s2) = (Stream::new(&dev).unwrap(), Stream::new(&dev).unwrap());
    let slow = common::slow::Slow::new(&dev);
    let src = slow.buffer(DeviceBuffer::from_slice(&dev, &vec![f16::from_f32(7.0); N]).unwrap());
    let mut copy = slow.buffer(DeviceBuffer::<f16>::zeroed(&dev, N).unwrap());
    slow.copy(&s1, &src, &mut copy);
    let mut src = src;
    generator(&s2).uniform_half(&mut src).unwrap();
    let got = copy.to_vec().unwrap();
    slow.end_round(&dev);
    let wrong = got.iter().filter(|v| **v != f16::from_f32(7.0)).count();
    assert_eq!(
        wrong, 0,
        "{wrong} of {N} copied after the fill overwrote them"
    );
}

/// A 16-bit fill returns at once: its scratch buffer is freed in the stream's order, so the call does
/// not wait on the host for the generation (queued behind a ~20 ms spin here). A stream being captured
/// is refused, naming the capture.
#[test]
fn half_fill_returns_without_waiting_and_refuses_a_capture() {
    let dev = device();
    let s = Stream::new(&dev).unwrap();
    let slow = common::slow::Slow::new(&dev);
    let mut g = generator(&s);
    let mut out = DeviceBuffer::<f16>::zeroed(&dev, N).unwrap();
    slow.spin(&s, 1); // loaded before it is timed
    g.uniform_half(&mut out).unwrap();
    s.synchronize().unwrap();
    slow.spin(&s, common::slow::SPIN_CYCLES);
    let t = std::time::Instant::now();
    g.uniform_half(&mut out).unwrap();
    let returned = t.elapsed();
    let v = out.to_vec().unwrap();
    let done = t.elapsed();
    assert!(v.iter().all(|x| x.to_f32() > 0.0 && x.to_f32() <= 1.0));
    assert!(
        returned.as_secs_f64() < 0.25 * done.as_secs_f64(),
        "uniform_half took {returned:?} of the {done:?} until its values were read: it waited"
    );
    let cap = s.begin_capture(CaptureMode::ThreadLocal).unwrap();
    let e = g.uniform_half(&mut out).unwrap_err();
    drop(cap.end());
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    assert!(e.to_string().contains("captured"), "{e}");
}
