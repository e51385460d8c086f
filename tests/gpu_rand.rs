//! hip::rand on a device: reproducible sequences (twice, and against raw hipRAND calls), moments of 10^7
//! samples, Kolmogorov-Smirnov tests of uniform and normal values, Poisson, quasi-random points, and wrong
//! lengths refused with nothing written, program order across streams, and `set_stream` ordering the
//! generator after its work on the old stream. Compiled only with `--features gpu,rand`.
//!
//! Statistical bounds: a sample mean is within 6 standard errors of the true mean (a false failure about
//! once in 5e8 runs); sample variances within 6 standard errors of theirs (fourth moments known for each
//! distribution); the KS statistic `D * sqrt(n)` below 1.95, the 0.1% critical value.
#![cfg(all(feature = "gpu", feature = "rand"))]
mod common;

use common::device;
use hip::prelude::*;
use hip::rand::{hiprand_sys as sys, Generator, RngType};
use hip::Error;

const N: usize = 10_000_000;

fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// `|got - want| <= 6 * se`, with what was measured in the message.
fn within(what: &str, got: f64, want: f64, se: f64) {
    assert!(
        (got - want).abs() <= 6.0 * se,
        "{what}: {got} vs {want} (standard error {se})"
    );
}

/// The KS statistic `sup |F_n - F| * sqrt(n)` of `v` against `cdf`.
fn ks(mut v: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len() as f64;
    let d = v
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let f = cdf(*x);
            (f - i as f64 / n).max((i + 1) as f64 / n - f)
        })
        .fold(0.0, f64::max);
    d * n.sqrt()
}

/// The standard normal CDF through erfc (Abramowitz and Stegun 7.1.26, error below 1.5e-7).
fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.3275911 * z);
    let poly = t
        * (0.254829592
            + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    let erfc = poly * (-z * z).exp();
    if x >= 0.0 {
        1.0 - 0.5 * erfc
    } else {
        0.5 * erfc
    }
}

fn setup(kind: RngType, seed: u64) -> (Device, Stream, Generator) {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let mut g = Generator::new(&s, kind).unwrap();
    if !kind.is_quasi() {
        g.set_seed(seed).unwrap();
    }
    (d, s, g)
}

#[test]
fn the_same_seed_gives_the_same_numbers_twice_and_through_raw_hiprand() {
    for kind in [
        RngType::Xorwow,
        RngType::Philox4x32_10,
        RngType::Mrg32k3a,
        RngType::Mtgp32,
    ] {
        let n = 1 << 16;
        let (d, s, mut g) = setup(kind, 1234);
        let mut first = DeviceBuffer::<u32>::zeroed(&d, n).unwrap();
        g.u32(&mut first).unwrap();
        let (_, _, mut again) = setup(kind, 1234);
        let mut second = DeviceBuffer::<u32>::zeroed(&d, n).unwrap();
        again.u32(&mut second).unwrap();
        let first = first.to_vec().unwrap();
        assert_eq!(
            first,
            second.to_vec().unwrap(),
            "{kind:?}: same seed, same values"
        );
        let (_, _, mut other) = setup(kind, 1235);
        let mut third = DeviceBuffer::<u32>::zeroed(&d, n).unwrap();
        other.u32(&mut third).unwrap();
        assert_ne!(
            first,
            third.to_vec().unwrap(),
            "{kind:?}: another seed, other values"
        );

        // The same through hipRAND's C API on a raw generator.
        let raw_buf = DeviceBuffer::<u32>::zeroed(&d, n).unwrap();
        let mut raw: sys::hiprandGenerator_t = std::ptr::null_mut();
        // SAFETY: a generator made, seeded, used on `s` and destroyed here; the buffer holds n u32s and is
        // read only after the stream is synchronised.
        unsafe {
            assert_eq!(sys::hiprandCreateGenerator(&mut raw, kind.raw()).0, 0);
            assert_eq!(sys::hiprandSetStream(raw, s.raw()).0, 0);
            assert_eq!(sys::hiprandSetPseudoRandomGeneratorSeed(raw, 1234).0, 0);
            assert_eq!(
                sys::hiprandGenerate(raw, raw_buf.device_ptr().cast(), n).0,
                0
            );
            s.synchronize().unwrap();
            assert_eq!(sys::hiprandDestroyGenerator(raw).0, 0);
        }
        assert_eq!(
            first,
            raw_buf.to_vec().unwrap(),
            "{kind:?}: safe and raw hipRAND agree"
        );
    }
}

/// Issue 43: after a fill, `set_seed` with the same seed gave other values (hipRAND's seed call keeps the
/// offset, which the fill advanced: 3 of 16,777,216 values equal for Philox, 1 for XORWOW, 0 for
/// MRG32k3a). `set_seed` now restarts the sequence, also after `set_offset`.
#[test]
fn set_seed_restarts_the_sequence_of_a_generator_already_used() {
    let n = 1 << 24;
    for kind in [
        RngType::PseudoDefault,
        RngType::Xorwow,
        RngType::Philox4x32_10,
        RngType::Mrg32k3a,
        RngType::Mtgp32,
    ] {
        let (d, _s, mut g) = setup(kind, 1234);
        let mut first = DeviceBuffer::<u32>::zeroed(&d, n).unwrap();
        g.u32(&mut first).unwrap();
        let first = first.to_vec().unwrap();
        // Sentinels: a fill that wrote nothing would leave them.
        let mut again = DeviceBuffer::from_slice(&d, &vec![0xdead_beefu32; n]).unwrap();
        g.set_seed(1234).unwrap();
        g.u32(&mut again).unwrap();
        let again = again.to_vec().unwrap();
        let equal = first.iter().zip(&again).filter(|(a, b)| a == b).count();
        assert_eq!(equal, n, "{kind:?}: {equal} of {n} values restarted");
        // A generator moved on by an offset, then seeded: from the start again.
        if kind.has_offset() {
            g.set_offset(1000).unwrap();
        }
        let mut third = DeviceBuffer::from_slice(&d, &vec![0xdead_beefu32; n]).unwrap();
        g.set_seed(1234).unwrap();
        g.u32(&mut third).unwrap();
        assert!(third.to_vec().unwrap() == first, "{kind:?} after an offset");
        // Another seed: another sequence, not the old one continued.
        g.set_seed(1235).unwrap();
        g.u32(&mut third).unwrap();
        let other = third.to_vec().unwrap();
        let equal = first.iter().zip(&other).filter(|(a, b)| a == b).count();
        assert!(
            equal < n / 1000,
            "{kind:?}: seed 1235 gave {equal} equal values"
        );
    }
}

#[test]
fn offsets_reproduce_and_change_the_sequence() {
    let (d, _s, mut g) = setup(RngType::Philox4x32_10, 7);
    let mut a = DeviceBuffer::<u32>::zeroed(&d, 4096).unwrap();
    let mut b = DeviceBuffer::<u32>::zeroed(&d, 4096).unwrap();
    g.set_offset(1000).unwrap();
    g.u32(&mut a).unwrap();
    let (_, _, mut h) = setup(RngType::Philox4x32_10, 7);
    h.set_offset(1000).unwrap();
    h.u32(&mut b).unwrap();
    assert_eq!(a.to_vec().unwrap(), b.to_vec().unwrap());
    let (_, _, mut k) = setup(RngType::Philox4x32_10, 7);
    k.set_offset(1001).unwrap();
    k.u32(&mut b).unwrap();
    assert_ne!(a.to_vec().unwrap(), b.to_vec().unwrap());
}

#[test]
fn uniform_and_normal_moments_and_ks_tests() {
    let (d, _s, mut g) = setup(RngType::Philox4x32_10, 99);
    let n = N as f64;
    // Uniform f32 in (0, 1]: mean 1/2, variance 1/12, fourth central moment 1/80.
    let mut u = DeviceBuffer::<f32>::zeroed(&d, N).unwrap();
    g.uniform(&mut u).unwrap();
    let uv: Vec<f64> = u.to_vec().unwrap().iter().map(|x| *x as f64).collect();
    assert!(
        uv.iter().all(|x| *x > 0.0 && *x <= 1.0),
        "uniform values in (0, 1]"
    );
    let (m, v) = mean_var(&uv);
    within("uniform mean", m, 0.5, (1.0 / 12.0 / n).sqrt());
    within(
        "uniform variance",
        v,
        1.0 / 12.0,
        ((1.0 / 80.0 - 1.0 / 144.0) / n).sqrt(),
    );
    let d_u = ks(uv[..1_000_000].to_vec(), |x| x.clamp(0.0, 1.0));
    assert!(d_u < 1.95, "uniform KS: {d_u}");

    // Normal f64 (3, 2^2): fourth central moment 3 sigma^4.
    let mut x = DeviceBuffer::<f64>::zeroed(&d, N).unwrap();
    g.normal(&mut x, 3.0, 2.0).unwrap();
    let xv = x.to_vec().unwrap();
    let (m, v) = mean_var(&xv);
    within("normal mean", m, 3.0, (4.0 / n).sqrt());
    within("normal variance", v, 4.0, ((3.0 * 16.0 - 16.0) / n).sqrt());
    let d_n = ks(xv[..1_000_000].to_vec(), |t| normal_cdf((t - 3.0) / 2.0));
    assert!(d_n < 1.95, "normal KS: {d_n}");

    // Normal f32 and log-normal f32: mean of exp(N(0.5, 0.25^2)) is exp(0.5 + 0.25^2 / 2).
    let mut y = DeviceBuffer::<f32>::zeroed(&d, N).unwrap();
    g.normal(&mut y, -1.0, 0.5).unwrap();
    let (m, _) = mean_var(
        &y.to_vec()
            .unwrap()
            .iter()
            .map(|t| *t as f64)
            .collect::<Vec<_>>(),
    );
    within("normal f32 mean", m, -1.0, (0.25 / n).sqrt());
    g.log_normal(&mut y, 0.5, 0.25).unwrap();
    let lv: Vec<f64> = y.to_vec().unwrap().iter().map(|t| *t as f64).collect();
    assert!(lv.iter().all(|t| *t > 0.0));
    let s2: f64 = 0.0625;
    let want = (0.5 + s2 / 2.0).exp();
    let var = (s2.exp() - 1.0) * (1.0 + s2).exp();
    within("log-normal mean", mean_var(&lv).0, want, (var / n).sqrt());
}

#[test]
fn poisson_counts_have_mean_and_variance_lambda() {
    let (d, _s, mut g) = setup(RngType::Xorwow, 5);
    let lambda = 4.5;
    let mut c = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    g.poisson(&mut c, lambda).unwrap();
    let cv: Vec<f64> = c.to_vec().unwrap().iter().map(|t| *t as f64).collect();
    let n = N as f64;
    let (m, v) = mean_var(&cv);
    within("Poisson mean", m, lambda, (lambda / n).sqrt());
    // Fourth central moment of a Poisson: lambda + 3 lambda^2.
    within(
        "Poisson variance",
        v,
        lambda,
        ((lambda + 3.0 * lambda * lambda - lambda * lambda) / n).sqrt(),
    );
}

#[test]
fn quasi_random_points_fill_each_dimension_evenly() {
    let (d, _s, mut g) = setup(RngType::Sobol32, 0);
    let dims = 3u32;
    g.set_dimensions(dims).unwrap();
    let per = 1 << 16;
    let mut p = DeviceBuffer::<f32>::zeroed(&d, per * dims as usize).unwrap();
    g.uniform(&mut p).unwrap();
    let pv = p.to_vec().unwrap();
    // Dimension by dimension: a low-discrepancy sequence's mean is 1/2 to within O(log n / n).
    for k in 0..dims as usize {
        let (m, _) = mean_var(
            &pv[k * per..(k + 1) * per]
                .iter()
                .map(|t| *t as f64)
                .collect::<Vec<_>>(),
        );
        assert!((m - 0.5).abs() < 1e-3, "dimension {k}: mean {m}");
    }
    let mut odd = DeviceBuffer::<f32>::zeroed(&d, 10).unwrap();
    assert!(matches!(
        g.uniform(&mut odd),
        Err(Error::InvalidArgument {
            what: "quasi-random fill length",
            ..
        })
    ));
}

#[test]
fn wrong_lengths_and_parameters_are_refused_with_nothing_written() {
    let (d, s, mut g) = setup(RngType::Xorwow, 1);
    let sentinel = vec![-3.0f32; 9];
    let mut buf = DeviceBuffer::from_slice(&d, &sentinel).unwrap();
    let what = |r: hip::Result<()>| match r {
        Err(Error::InvalidArgument { what, .. }) => what,
        other => panic!("expected InvalidArgument, got {other:?}"),
    };
    assert_eq!(what(g.normal(&mut buf, 0.0, 1.0)), "normal fill length");
    {
        let (_, mut tail) = buf.split_at_mut(1).unwrap();
        let mut view = tail.slice_mut(0..8).unwrap();
        assert_eq!(what(g.normal(&mut view, 0.0, 1.0)), "normal fill start");
        assert_eq!(what(g.log_normal(&mut view, 0.0, 1.0)), "normal fill start");
    }
    assert_eq!(what(g.normal(&mut buf, 0.0, 0.0)), "stddev");
    assert_eq!(what(g.normal(&mut buf, f32::NAN, 1.0)), "mean");
    let mut counts = DeviceBuffer::<u32>::zeroed(&d, 8).unwrap();
    assert_eq!(what(g.poisson(&mut counts, -1.0)), "Poisson lambda");
    assert_eq!(what(g.set_dimensions(2)), "quasi-random dimensions");
    let (_, _, mut sobol) = setup(RngType::Sobol32, 0);
    assert_eq!(what(sobol.set_seed(3)), "seed");
    assert_eq!(what(sobol.set_dimensions(0)), "quasi-random dimensions");
    s.synchronize().unwrap();
    assert_eq!(
        buf.to_vec().unwrap(),
        sentinel,
        "a refused fill wrote nothing"
    );
    assert_eq!(counts.to_vec().unwrap(), [0u32; 8]);
    // An even view at an even offset is fine.
    let (_, mut tail) = buf.split_at_mut(2).unwrap();
    g.normal(&mut tail.slice_mut(0..6).unwrap(), 0.0, 1.0)
        .unwrap();
}

/// Program order across streams through hipRAND, many rounds: a slow kernel on stream A writes x and
/// another copies it to z; the generator on B then fills x. The copy must see the first kernel's values
/// (write after read), and x must end with the generator's (write after write: uniform values lie in
/// (0, 1], the kernel writes 5 and more). `HIP_RS_TEST_UNTRACKED=1` is the control without the ordering.
#[test]
fn fills_on_another_stream_keep_program_order_with_kernels() {
    let d = device();
    let slow = common::slow::Slow::new(&d);
    let (a, b) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    let mut g = Generator::new(&b, RngType::Philox4x32_10).unwrap();
    let n: usize = 1 << 20;
    let buffer = || slow.buffer(DeviceBuffer::<f32>::zeroed(&d, n).unwrap());
    let mut bad = Vec::new();
    for round in 0..20 {
        let v = 5.0 + round as f32;
        let (mut x, mut z) = (buffer(), buffer());
        slow.fill(&a, &mut x, v);
        slow.copy(&a, &x, &mut z);
        g.uniform(&mut x).unwrap();
        let copied_late = z.to_vec().unwrap().iter().filter(|&&e| e != v).count();
        let overwritten = x.to_vec().unwrap().iter().filter(|&&e| e > 1.0).count();
        if copied_late + overwritten > 0 {
            bad.push((round, copied_late, overwritten));
        }
        slow.end_round(&d);
    }
    assert!(
        bad.is_empty(),
        "rounds that saw another order (round, copy saw the fill, kernel's values left in x): {bad:?}"
    );
}

/// The first fill after `set_stream` must wait for the generator's work on the old stream (issue 42): on
/// stream A the generator fills w (setting up its engine states, outside the timed part), then a spin
/// (about 20 ms, touching no memory) holds back its fill of x1; after `set_stream(B)` it fills x2 on B.
/// x1 and x2 share no buffer, so only `set_stream`'s wait orders them; they share the generator's engine
/// states (cuRAND keeps them in device memory, each fill advancing them), and the values show it: w, x1
/// and x2 must equal three fills of a generator of the same kind and seed on one stream. Timing: an event
/// on B right after `set_stream` must complete no earlier than one on A after x1's fill. Without the
/// wait, B's event and fill run at once, about 20 ms before A's fill ends (the raw control below measures
/// that), and the stateful kinds fill x2 from the states x1's fill has not advanced yet. The streams do
/// not block on the default stream: nothing the libraries queue there orders them either.
#[test]
fn set_stream_orders_the_generator_after_its_work_on_the_old_stream() {
    use common::slow::{Slow, Timeline, SPIN_CYCLES};
    let d = device();
    let slow = Slow::new(&d);
    let n: usize = 1 << 20;
    for kind in [
        RngType::Xorwow,
        RngType::Mrg32k3a,
        RngType::Mtgp32,
        RngType::Philox4x32_10,
    ] {
        let zeroed = || DeviceBuffer::<f32>::zeroed(&d, n).unwrap();
        let (_, _, mut reference) = setup(kind, 42);
        let (mut r0, mut r1, mut r2) = (zeroed(), zeroed(), zeroed());
        reference.uniform(&mut r0).unwrap();
        reference.uniform(&mut r1).unwrap();
        reference.uniform(&mut r2).unwrap();
        let (r0, r1, r2) = (
            r0.to_vec().unwrap(),
            r1.to_vec().unwrap(),
            r2.to_vec().unwrap(),
        );
        assert!(
            r0 != r1 && r1 != r2,
            "{kind:?}: each fill continues the sequence"
        );

        let (a, b) = (
            Stream::non_blocking(&d).unwrap(),
            Stream::non_blocking(&d).unwrap(),
        );
        let mut g = Generator::new(&a, kind).unwrap();
        g.set_seed(42).unwrap();
        let (mut w, mut x1, mut x2) = (zeroed(), zeroed(), zeroed());
        g.uniform(&mut w).unwrap();
        let t = Timeline::start(&d, &a, &b);
        slow.spin(&a, SPIN_CYCLES);
        g.uniform(&mut x1).unwrap();
        let old_done = t.mark(&a);
        g.set_stream(&b).unwrap();
        let new_start = t.mark(&b);
        g.uniform(&mut x2).unwrap();
        let (old_done, new_start) = (t.ms(&old_done), t.ms(&new_start));
        assert!(
            old_done > 5.0,
            "{kind:?}: the spin held the old stream's fill back only to {old_done} ms"
        );
        // Timestamps are exact to about 0.5 us; unordered, B starts about 20 ms early.
        assert!(
            new_start >= old_done - 0.01,
            "{kind:?}: work on the new stream began at {new_start} ms, before the fill on the old stream \
             ended at {old_done} ms"
        );
        assert!(w.to_vec().unwrap() == r0, "{kind:?}: the first fill");
        assert!(
            x1.to_vec().unwrap() == r1,
            "{kind:?}: the old stream's fill"
        );
        assert!(
            x2.to_vec().unwrap() == r2,
            "{kind:?}: the new stream's fill continues the old one's sequence"
        );
    }
}

/// The control for the test above: the same on a raw hipRAND generator moved with `hiprandSetStream`
/// alone, with nothing ordering B after A. Work on B then begins before the fill on A ends (by about the
/// spin's 20 ms): the timing check above fails without `set_stream`'s wait. The values the early fill
/// read are printed (their agreement with the ordered sequence is up to the race).
#[test]
fn a_raw_stream_change_alone_lets_the_new_stream_run_first() {
    use common::slow::{Slow, Timeline, SPIN_CYCLES};
    let d = device();
    let slow = Slow::new(&d);
    let n: usize = 1 << 20;
    let (_, _, mut reference) = setup(RngType::Xorwow, 42);
    let mut r = DeviceBuffer::<f32>::zeroed(&d, n).unwrap();
    for _ in 0..3 {
        reference.uniform(&mut r).unwrap();
    }
    let r2 = r.to_vec().unwrap();
    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let (x1, x2) = (
        DeviceBuffer::<f32>::zeroed(&d, n).unwrap(),
        DeviceBuffer::<f32>::zeroed(&d, n).unwrap(),
    );
    d.synchronize().unwrap();
    let mut raw: sys::hiprandGenerator_t = std::ptr::null_mut();
    // SAFETY: a generator made, used on A then B and destroyed here; x1 and x2 hold n floats each, read
    // and dropped only after the device is synchronized (also before: their zeroing is complete).
    let (t, old_done, new_start) = unsafe {
        assert_eq!(
            sys::hiprandCreateGenerator(&mut raw, RngType::Xorwow.raw()).0,
            0
        );
        assert_eq!(sys::hiprandSetStream(raw, a.raw()).0, 0);
        assert_eq!(sys::hiprandSetPseudoRandomGeneratorSeed(raw, 42).0, 0);
        // The first fill, into x1 (overwritten below), sets the engine states up.
        assert_eq!(
            sys::hiprandGenerateUniform(raw, x1.device_ptr().cast(), n).0,
            0
        );
        let t = Timeline::start(&d, &a, &b);
        slow.spin(&a, SPIN_CYCLES);
        assert_eq!(
            sys::hiprandGenerateUniform(raw, x1.device_ptr().cast(), n).0,
            0
        );
        let old_done = t.mark(&a);
        assert_eq!(sys::hiprandSetStream(raw, b.raw()).0, 0);
        let new_start = t.mark(&b);
        assert_eq!(
            sys::hiprandGenerateUniform(raw, x2.device_ptr().cast(), n).0,
            0
        );
        d.synchronize().unwrap();
        assert_eq!(sys::hiprandDestroyGenerator(raw).0, 0);
        (t, old_done, new_start)
    };
    let (old_done, new_start) = (t.ms(&old_done), t.ms(&new_start));
    let differ = x2
        .to_vec()
        .unwrap()
        .iter()
        .zip(&r2)
        .filter(|(x, r)| x != r)
        .count();
    eprintln!(
        "raw hiprandSetStream: the old stream's fill ended at {old_done:.3} ms, the new stream began at \
         {new_start:.3} ms; {differ} of {n} values of its fill differ from the ordered sequence's third fill"
    );
    assert!(
        new_start < old_done - 5.0,
        "unordered, work on the new stream began at {new_start} ms, not well before the old stream's fill \
         ended at {old_done} ms: the timing check could not tell"
    );
}
