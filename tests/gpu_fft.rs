//! hip::fft on a device: every plan kind against a host FFT (rustfft), 1D/2D/3D, single and double
//! precision, batched and strided layouts, in place, round trips, and wrong sizes refused with nothing
//! written, program order across streams, and `set_stream` ordering the plan after its work on the old
//! stream. Compiled only with `--features gpu,fft`.
//!
//! Tolerance: the relative L2 error of a transform, ||got - want|| / ||want||, below 1e-5 in single and
//! 1e-12 in double precision (FFT rounding grows like sqrt(log n) times the type's epsilon).
#![cfg(all(feature = "gpu", feature = "fft"))]
mod common;

use common::device;
use hip::fft::{Complex, Direction, FftFloat, Layout, Plan, Shape, Transform};
use hip::prelude::*;
use hip::Error;
use rustfft::num_complex::Complex64;

trait Float: FftFloat + Copy {
    const TOL: f64;
    fn of(v: f64) -> Self;
    fn to(self) -> f64;
}
impl Float for f32 {
    const TOL: f64 = 1e-5;
    fn of(v: f64) -> Self {
        v as f32
    }
    fn to(self) -> f64 {
        self as f64
    }
}
impl Float for f64 {
    const TOL: f64 = 1e-12;
    fn of(v: f64) -> Self {
        v
    }
    fn to(self) -> f64 {
        self
    }
}

fn value(i: usize) -> f64 {
    ((i * 7919 % 1013) as f64 - 506.0) / 97.0
}

fn complex<T: Float>(n: usize, seed: usize) -> Vec<Complex<T>> {
    (0..n)
        .map(|i| Complex::new(T::of(value(i + seed)), T::of(value(3 * i + seed + 1))))
        .collect()
}

fn widen<T: Float>(v: &[Complex<T>]) -> Vec<Complex64> {
    v.iter()
        .map(|c| Complex64::new(c.re.to(), c.im.to()))
        .collect()
}

/// The host DFT of one contiguous row-major transform of `dims`, in place, forward or inverse.
fn host_fft(data: &mut [Complex64], dims: &[usize], inverse: bool) {
    let mut planner = rustfft::FftPlanner::new();
    let total: usize = dims.iter().product();
    assert_eq!(data.len(), total);
    // Along each axis: gather the lines, transform, scatter back.
    for axis in 0..dims.len() {
        let n = dims[axis];
        let stride: usize = dims[axis + 1..].iter().product();
        let fft = if inverse {
            planner.plan_fft_inverse(n)
        } else {
            planner.plan_fft_forward(n)
        };
        let mut line = vec![Complex64::new(0.0, 0.0); n];
        for start in 0..total {
            // `start` is the first element of a line along `axis` when its coordinate on the axis is 0.
            if start % (stride * n) >= stride {
                continue;
            }
            for k in 0..n {
                line[k] = data[start + k * stride];
            }
            fft.process(&mut line);
            for k in 0..n {
                data[start + k * stride] = line[k];
            }
        }
    }
}

fn rel_err(got: &[Complex64], want: &[Complex64]) -> f64 {
    let (mut d, mut w) = (0.0, 0.0);
    for (g, x) in got.iter().zip(want) {
        d += (g - x).norm_sqr();
        w += x.norm_sqr();
    }
    (d / w.max(1e-300)).sqrt()
}

fn c2c<T: Float>(dims: &[usize], batch: usize) {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let plan = Plan::<T>::new(&s, Transform::C2C, &Shape::new(dims).batch(batch)).unwrap();
    let one: usize = dims.iter().product();
    assert_eq!(plan.input_len(), one * batch);
    let x = complex::<T>(one * batch, dims.len());
    let dx = DeviceBuffer::from_slice(&d, &x).unwrap();
    let mut dy = DeviceBuffer::<Complex<T>>::zeroed(&d, one * batch).unwrap();
    plan.c2c(Direction::Forward, &dx, &mut dy).unwrap();
    let mut want = widen(&x);
    for b in 0..batch {
        host_fft(&mut want[b * one..(b + 1) * one], dims, false);
    }
    let got = widen(&dy.to_vec().unwrap());
    let e = rel_err(&got, &want);
    assert!(e < T::TOL, "c2c {dims:?} x {batch}: relative error {e}");
    // Inverse in place: n times the input.
    plan.c2c_in_place(Direction::Inverse, &mut dy).unwrap();
    let back: Vec<Complex64> = widen(&dy.to_vec().unwrap())
        .iter()
        .map(|c| c / one as f64)
        .collect();
    let e = rel_err(&back, &widen(&x));
    assert!(e < T::TOL, "round trip {dims:?}: relative error {e}");
}

#[test]
fn complex_transforms_in_one_two_and_three_dimensions_match_the_host() {
    c2c::<f32>(&[1000], 3);
    c2c::<f64>(&[1000], 3);
    c2c::<f32>(&[64, 48], 2);
    c2c::<f64>(&[64, 48], 2);
    c2c::<f32>(&[16, 12, 10], 1);
    c2c::<f64>(&[16, 12, 10], 2);
}

fn real<T: Float>(dims: &[usize], batch: usize) {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let shape = Shape::new(dims).batch(batch);
    let fwd = Plan::<T>::new(&s, Transform::R2C, &shape).unwrap();
    let inv = Plan::<T>::new(&s, Transform::C2R, &shape).unwrap();
    let one: usize = dims.iter().product();
    let last = *dims.last().unwrap();
    let half_one = one / last * (last / 2 + 1);
    assert_eq!(
        (fwd.input_len(), fwd.output_len()),
        (one * batch, half_one * batch)
    );
    assert_eq!(
        (inv.input_len(), inv.output_len()),
        (half_one * batch, one * batch)
    );
    let x: Vec<T> = (0..one * batch).map(|i| T::of(value(i))).collect();
    let dx = DeviceBuffer::from_slice(&d, &x).unwrap();
    let mut spec = DeviceBuffer::<Complex<T>>::zeroed(&d, half_one * batch).unwrap();
    fwd.r2c(&dx, &mut spec).unwrap();
    let got = widen(&spec.to_vec().unwrap());
    for b in 0..batch {
        let mut full: Vec<Complex64> = x[b * one..(b + 1) * one]
            .iter()
            .map(|v| Complex64::new(v.to(), 0.0))
            .collect();
        host_fft(&mut full, dims, false);
        // The non-redundant half: the first last / 2 + 1 entries of each row of the last dimension.
        let want: Vec<Complex64> = (0..one / last)
            .flat_map(|r| full[r * last..r * last + last / 2 + 1].to_vec())
            .collect();
        let e = rel_err(&got[b * half_one..(b + 1) * half_one], &want);
        assert!(e < T::TOL, "r2c {dims:?} transform {b}: relative error {e}");
    }
    let mut back = DeviceBuffer::<T>::zeroed(&d, one * batch).unwrap();
    inv.c2r(&mut spec, &mut back).unwrap();
    let back: Vec<Complex64> = back
        .to_vec()
        .unwrap()
        .iter()
        .map(|v| Complex64::new(v.to() / one as f64, 0.0))
        .collect();
    let want: Vec<Complex64> = x.iter().map(|v| Complex64::new(v.to(), 0.0)).collect();
    let e = rel_err(&back, &want);
    assert!(e < T::TOL, "r2c then c2r {dims:?}: relative error {e}");
}

#[test]
fn real_transforms_match_the_host_and_round_trip() {
    real::<f32>(&[1024], 4);
    real::<f64>(&[1000], 3);
    real::<f32>(&[30, 50], 2);
    real::<f64>(&[8, 6, 10], 1);
}

#[test]
fn real_transforms_in_place_use_padded_rows() {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let (rows, n) = (30, 50);
    let (half, padded) = (n / 2 + 1, 2 * (n / 2 + 1));
    let shape = Shape::new(&[rows, n]);
    let fwd = Plan::<f32>::new(&s, Transform::R2C, &shape).unwrap();
    let inv = Plan::<f32>::new(&s, Transform::C2R, &shape).unwrap();
    let x: Vec<f32> = (0..rows * n).map(|i| value(i) as f32).collect();
    // Rows of n reals, each padded to 2 * (n / 2 + 1) values (the padding holds -1: never read).
    let mut padded_x = vec![-1.0f32; rows * padded];
    for r in 0..rows {
        padded_x[r * padded..r * padded + n].copy_from_slice(&x[r * n..(r + 1) * n]);
    }
    let mut data = DeviceBuffer::<Complex<f32>>::zeroed(&d, rows * half).unwrap();
    data.reinterpret_mut::<f32>()
        .unwrap()
        .copy_from_host(&padded_x)
        .unwrap();
    fwd.r2c_in_place(&mut data).unwrap();
    let mut full: Vec<Complex64> = x.iter().map(|v| Complex64::new(*v as f64, 0.0)).collect();
    host_fft(&mut full, &[rows, n], false);
    let want: Vec<Complex64> = (0..rows)
        .flat_map(|r| full[r * n..r * n + half].to_vec())
        .collect();
    let e = rel_err(&widen(&data.to_vec().unwrap()), &want);
    assert!(e < 1e-5, "r2c in place: relative error {e}");
    inv.c2r_in_place(&mut data).unwrap();
    let back = data.reinterpret::<f32>().unwrap().to_vec().unwrap();
    let got: Vec<Complex64> = (0..rows)
        .flat_map(|r| {
            back[r * padded..r * padded + n]
                .iter()
                .map(|v| Complex64::new(*v as f64 / (rows * n) as f64, 0.0))
                .collect::<Vec<_>>()
        })
        .collect();
    let e = rel_err(
        &got,
        &x.iter()
            .map(|v| Complex64::new(*v as f64, 0.0))
            .collect::<Vec<_>>(),
    );
    assert!(e < 1e-5, "c2r in place: relative error {e}");
    // Too short, and a plan with a layout, are refused.
    let mut short = DeviceBuffer::<Complex<f32>>::zeroed(&d, rows * half - 1).unwrap();
    assert!(matches!(
        fwd.r2c_in_place(&mut short),
        Err(Error::InvalidArgument {
            what: "FFT data",
            ..
        })
    ));
    let laid = Plan::<f32>::new(
        &s,
        Transform::R2C,
        &shape.clone().output_layout(Layout {
            embed: vec![rows, half],
            stride: 1,
            dist: rows * half,
        }),
    )
    .unwrap();
    assert!(matches!(
        laid.r2c_in_place(&mut data),
        Err(Error::InvalidArgument {
            what: "in-place FFT",
            ..
        })
    ));
}

#[test]
fn strided_batched_layouts_read_and_write_where_they_say() {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let (n, batch) = (128, 5);
    // Input: every second element, transforms 300 apart. Output: contiguous rows padded to 130.
    let input = Layout {
        embed: vec![n],
        stride: 2,
        dist: 300,
    };
    let output = Layout {
        embed: vec![n],
        stride: 1,
        dist: 130,
    };
    let shape = Shape::new(&[n])
        .batch(batch)
        .input_layout(input)
        .output_layout(output);
    let plan = Plan::<f64>::new(&s, Transform::C2C, &shape).unwrap();
    assert_eq!(
        (plan.input_len(), plan.output_len()),
        (4 * 300 + 2 * 127 + 1, 4 * 130 + n)
    );
    let x = complex::<f64>(plan.input_len(), 9);
    let dx = DeviceBuffer::from_slice(&d, &x).unwrap();
    let sentinel = Complex::new(-9.0, 9.0);
    let mut dy = DeviceBuffer::from_slice(&d, &vec![sentinel; plan.output_len()]).unwrap();
    plan.c2c(Direction::Forward, &dx, &mut dy).unwrap();
    let got = widen(&dy.to_vec().unwrap());
    for b in 0..batch {
        let mut want: Vec<Complex64> = (0..n)
            .map(|k| Complex64::new(x[b * 300 + 2 * k].re, x[b * 300 + 2 * k].im))
            .collect();
        host_fft(&mut want, &[n], false);
        let e = rel_err(&got[b * 130..b * 130 + n], &want);
        assert!(e < 1e-12, "transform {b}: relative error {e}");
        if b + 1 < batch {
            assert_eq!(
                &got[b * 130 + n..(b + 1) * 130],
                &[Complex64::new(-9.0, 9.0); 2],
                "padding after {b}"
            );
        }
    }
}

#[test]
fn wrong_sizes_and_kinds_are_refused_with_nothing_written() {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let plan = Plan::<f32>::new(&s, Transform::C2C, &Shape::new(&[64]).batch(2)).unwrap();
    let short = DeviceBuffer::<Complex<f32>>::zeroed(&d, 127).unwrap();
    let sentinel = vec![Complex::new(1.0f32, -1.0); 128];
    let mut out = DeviceBuffer::from_slice(&d, &sentinel).unwrap();
    let what = |r: hip::Result<()>| match r {
        Err(Error::InvalidArgument { what, .. }) => what,
        other => panic!("expected InvalidArgument, got {other:?}"),
    };
    assert_eq!(
        what(plan.c2c(Direction::Forward, &short, &mut out)),
        "FFT input"
    );
    let mut short_out = DeviceBuffer::<Complex<f32>>::zeroed(&d, 100).unwrap();
    assert_eq!(
        what(plan.c2c(Direction::Forward, &out.slice(..).unwrap(), &mut short_out)),
        "FFT output"
    );
    let reals = DeviceBuffer::<f32>::zeroed(&d, 128).unwrap();
    assert_eq!(what(plan.r2c(&reals, &mut out)), "FFT execution");
    // A real plan over 64 points wants 33 complex values per transform on the complex side.
    let r2c = Plan::<f32>::new(&s, Transform::R2C, &Shape::new(&[64]).batch(2)).unwrap();
    let mut spec = DeviceBuffer::<Complex<f32>>::zeroed(&d, 65).unwrap();
    assert_eq!(what(r2c.r2c(&reals, &mut spec)), "FFT output");
    // In place needs one layout.
    let strided = Shape::new(&[64]).input_layout(Layout {
        embed: vec![64],
        stride: 2,
        dist: 128,
    });
    let p = Plan::<f32>::new(&s, Transform::C2C, &strided).unwrap();
    assert_eq!(
        what(p.c2c_in_place(Direction::Forward, &mut out)),
        "in-place FFT"
    );
    assert_eq!(
        what(Plan::<f32>::new(&s, Transform::C2C, &Shape::new(&[64, 0])).map(|_| ())),
        "FFT dimensions"
    );
    s.synchronize().unwrap();
    assert_eq!(
        out.to_vec().unwrap(),
        sentinel,
        "a refused execution wrote nothing"
    );
    assert!(
        plan.work_size() < 1 << 30,
        "work area of a 64-point plan: {} bytes",
        plan.work_size()
    );
}

/// Program order across streams through hipFFT, many rounds: a slow kernel on stream A writes x (every
/// element v + vi) and another copies y to z; the plan on B then transforms x into y. The transform must
/// see the kernel's x (read after write: bin 0 is n (v + vi), the others 0) and the copy y's old values
/// (write after read). `HIP_RS_TEST_UNTRACKED=1` is the control without the ordering.
#[test]
fn transforms_on_another_stream_keep_program_order_with_kernels() {
    let d = device();
    let slow = common::slow::Slow::new(&d);
    let (a, b) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    let n: usize = 1 << 20;
    let plan = Plan::<f32>::new(&b, Transform::C2C, &Shape::new(&[n])).unwrap();
    let old = Complex::new(7.0f32, 7.0);
    let mut bad = Vec::new();
    for round in 0..20 {
        let v = 1.0 + round as f32;
        let mut x = slow.buffer(DeviceBuffer::<Complex<f32>>::zeroed(&d, n).unwrap());
        let mut y = slow.buffer(DeviceBuffer::from_slice(&d, &vec![old; n]).unwrap());
        let mut z = slow.buffer(DeviceBuffer::<Complex<f32>>::zeroed(&d, n).unwrap());
        slow.fill(&a, &mut x, v);
        slow.copy(&a, &y, &mut z);
        plan.c2c(Direction::Forward, &x, &mut y).unwrap();
        let out = y.to_vec().unwrap();
        let sum = n as f32 * v;
        // A constant's transform: bin 0 holds the sum, the others cancel to rounding.
        let early_read = usize::from(
            (out[0].re - sum).abs() > 1e-3 * sum || (out[0].im - sum).abs() > 1e-3 * sum,
        ) + out[1..]
            .iter()
            .filter(|c| c.re.abs().max(c.im.abs()) > 1e-3 * sum)
            .count();
        let late_copy = z.to_vec().unwrap().iter().filter(|&&c| c != old).count();
        if early_read + late_copy > 0 {
            bad.push((round, early_read, late_copy));
        }
        slow.end_round(&d);
    }
    assert!(
        bad.is_empty(),
        "rounds that saw another order (round, transform read x early, copy saw the transform): {bad:?}"
    );
}

/// The first transform after `set_stream` must wait for the plan's work on the old stream (issue 42): on
/// stream A the plan transforms x1 -> y1 once (its first execution, outside the timed part), then a spin
/// (about 20 ms, touching no memory) holds back the same transform again; after `set_stream(B)` the plan
/// transforms x2 -> y2 on B. The two share no buffer written, so only `set_stream`'s wait orders them;
/// they share the plan's work area (asserted non-empty for the prime length, which goes through
/// Bluestein's algorithm). Timing: an event on B right after `set_stream` must complete no earlier than
/// one on A after the transform there. Without the wait, B's event and transform run at once, about 20
/// ms before A's transform ends (the raw control below measures that), and the two transforms use the
/// work area in either order. Both results are checked against a plan of the same shape on one stream.
/// The streams do not block on the default stream: nothing the library queues there orders them either.
#[test]
fn set_stream_orders_the_plan_after_its_work_on_the_old_stream() {
    use common::slow::{Slow, Timeline, SPIN_CYCLES};
    let d = device();
    let slow = Slow::new(&d);
    for n in [1usize << 20, 999_983] {
        let shape = Shape::new(&[n]);
        let one = Stream::new(&d).unwrap();
        let reference = Plan::<f32>::new(&one, Transform::C2C, &shape).unwrap();
        let (h1, h2) = (complex::<f32>(n, 1), complex::<f32>(n, 2));
        let (x1, x2) = (
            DeviceBuffer::from_slice(&d, &h1).unwrap(),
            DeviceBuffer::from_slice(&d, &h2).unwrap(),
        );
        let zeroed = || DeviceBuffer::<Complex<f32>>::zeroed(&d, n).unwrap();
        let (mut r1, mut r2, mut y1, mut y2) = (zeroed(), zeroed(), zeroed(), zeroed());
        reference.c2c(Direction::Forward, &x1, &mut r1).unwrap();
        reference.c2c(Direction::Forward, &x2, &mut r2).unwrap();

        let (a, b) = (
            Stream::non_blocking(&d).unwrap(),
            Stream::non_blocking(&d).unwrap(),
        );
        let mut plan = Plan::<f32>::new(&a, Transform::C2C, &shape).unwrap();
        eprintln!("{n} points: work area {} bytes", plan.work_size());
        if n == 999_983 {
            assert!(
                plan.work_size() > 0,
                "Bluestein's transform has a work area"
            );
        }
        plan.c2c(Direction::Forward, &x1, &mut y1).unwrap();
        let t = Timeline::start(&d, &a, &b);
        slow.spin(&a, SPIN_CYCLES);
        plan.c2c(Direction::Forward, &x1, &mut y1).unwrap();
        let old_done = t.mark(&a);
        plan.set_stream(&b).unwrap();
        let new_start = t.mark(&b);
        plan.c2c(Direction::Forward, &x2, &mut y2).unwrap();
        let (old_done, new_start) = (t.ms(&old_done), t.ms(&new_start));
        assert!(
            old_done > 5.0,
            "{n} points: the spin held the old stream's transform back only to {old_done} ms"
        );
        // Timestamps are exact to about 0.5 us; unordered, B starts about 20 ms early.
        assert!(
            new_start >= old_done - 0.01,
            "{n} points: work on the new stream began at {new_start} ms, before the transform on the \
             old stream ended at {old_done} ms"
        );
        for (which, y, r) in [("old", &y1, &r1), ("new", &y2, &r2)] {
            let e = rel_err(&widen(&y.to_vec().unwrap()), &widen(&r.to_vec().unwrap()));
            assert!(
                e < f32::TOL,
                "{n} points: the {which} stream's transform, relative error {e}"
            );
        }
    }
}

/// The control for the test above: the same on a raw hipFFT plan moved with `hipfftSetStream` alone,
/// with nothing ordering B after A. Work on B then begins before the transform on A ends (by about the
/// spin's 20 ms): the timing check above fails without `set_stream`'s wait.
#[test]
fn a_raw_stream_change_alone_lets_the_new_stream_run_first() {
    use common::slow::{Slow, Timeline, SPIN_CYCLES};
    use hip::fft::hipfft_sys as sys;
    let d = device();
    let slow = Slow::new(&d);
    let n: usize = 999_983;
    let x = DeviceBuffer::from_slice(&d, &complex::<f32>(n, 1)).unwrap();
    let (y1, y2) = (
        DeviceBuffer::<Complex<f32>>::zeroed(&d, n).unwrap(),
        DeviceBuffer::<Complex<f32>>::zeroed(&d, n).unwrap(),
    );
    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    // The buffers were written on other streams: complete before the raw plan uses them.
    d.synchronize().unwrap();
    // SAFETY: the handle is plain data (an int on the NVIDIA backend, a pointer on AMD's), written by
    // hipfftPlan1d before any use.
    let mut raw: sys::hipfftHandle = unsafe { std::mem::zeroed() };
    // SAFETY: a plan made, used on A then B and destroyed here; x, y1 and y2 hold n complex floats each
    // (hipFFT's out-of-place C2C reads x only), dropped only after the device is synchronized.
    let (t, old_done, new_start) = unsafe {
        let c = i32::try_from(n).unwrap();
        assert_eq!(sys::hipfftPlan1d(&mut raw, c, sys::HIPFFT_C2C, 1).0, 0);
        assert_eq!(sys::hipfftSetStream(raw, a.raw()).0, 0);
        let exec = |y: &DeviceBuffer<Complex<f32>>| {
            let (x, y) = (x.device_ptr().cast(), y.device_ptr().cast());
            assert_eq!(sys::hipfftExecC2C(raw, x, y, sys::HIPFFT_FORWARD).0, 0);
        };
        // The first execution, outside the timed part, as above.
        exec(&y1);
        let t = Timeline::start(&d, &a, &b);
        slow.spin(&a, SPIN_CYCLES);
        exec(&y1);
        let old_done = t.mark(&a);
        assert_eq!(sys::hipfftSetStream(raw, b.raw()).0, 0);
        let new_start = t.mark(&b);
        exec(&y2);
        d.synchronize().unwrap();
        assert_eq!(sys::hipfftDestroy(raw).0, 0);
        (t, old_done, new_start)
    };
    let (old_done, new_start) = (t.ms(&old_done), t.ms(&new_start));
    eprintln!(
        "raw hipfftSetStream: the old stream's transform ended at {old_done:.3} ms, the new stream began \
         at {new_start:.3} ms"
    );
    assert!(
        new_start < old_done - 5.0,
        "unordered, work on the new stream began at {new_start} ms, not well before the old stream's \
         transform ended at {old_done} ms: the timing check could not tell"
    );
}
