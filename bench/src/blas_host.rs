//! The host time per GEMM call (bench/src/bin/blas.rs): safe `hip::blas` and its steps against raw C++
//! hipBLAS on the same handle, paired two ways. `cost`: rounds of one batch of 32 calls per contender
//! (order rotating), the per-round differences of the batches' means. `cost_interleaved`: each call timed
//! alone, raw C++ and the other contender alternating call by call (which goes first alternating too), so
//! each difference is between neighbouring calls, both run right after a cuBLAS call: the machine's drift
//! over a batch (raw C++ took 11.7 to 18.3 us per call between runs of one machine start) cancels.
use super::{
    Bench, Type, CONTENDERS, SYS, SYS_BIND, SYS_GATE, SYS_RMW, SYS_STORE, SYS_TRACK, UNTRACKED,
};
use crate::stats::{mean_ci, Samples};
use std::time::Instant;

/// The host cost of a call of `shape`: 64x64x64 (a real product, cuBLAS's own ~15 us included), and
/// 0x0x0 (hipBLAS returns at once: the wrappers' cost alone, without cuBLAS's variation).
pub fn cost(
    b: &mut Bench,
    out: &mut String,
    shape: (usize, usize, usize),
    rounds: usize,
) -> Result<(), String> {
    use std::fmt::Write;
    let batch = 32;
    // Few contenders, so each round's pairs are close in time: raw C++, hipblas-sys from Rust, safe,
    // and the safe call without the memory model (cudarc and the intermediate steps: --host-steps).
    let steps = std::env::args().any(|a| a == "--host-steps");
    let atomics = std::env::args().any(|a| a == "--host-atomics");
    let who_all: Vec<usize> = if atomics {
        vec![0, 1, SYS, SYS_BIND, SYS_GATE, SYS_RMW, SYS_STORE]
    } else if steps {
        (0..CONTENDERS.len())
            .chain([SYS, SYS_BIND, SYS_TRACK, UNTRACKED])
            .collect()
    } else {
        vec![0, 1, SYS, UNTRACKED]
    };
    let mut per: Vec<Vec<f64>> = vec![Vec::new(); SYS_STORE + 1];
    for &who in &who_all {
        b.run(who, Type::F32, shape, 50)?;
        b.sync(who)?;
    }
    for round in 0..rounds {
        for i in 0..who_all.len() {
            let who = who_all[(i + round) % who_all.len()];
            let t0 = Instant::now();
            b.run(who, Type::F32, shape, batch)?;
            per[who].push(t0.elapsed().as_nanos() as f64 / batch as f64);
            b.sync(who)?;
        }
    }
    let _ = writeln!(out, "\nHost time per call, {}x{}x{} f32 GEMM ({rounds} rounds of {batch} calls per contender, order rotating, queue drained between batches):\n", shape.0, shape.1, shape.2);
    let _ = writeln!(
        out,
        "| contender | median ns/call | over raw C++, same round: mean ns (95% CI) | median of the differences |"
    );
    let _ = writeln!(out, "|---|---|---|---|");
    for &who in &who_all {
        let diffs: Vec<f64> = per[who].iter().zip(&per[0]).map(|(a, r)| a - r).collect();
        let (mean, ci) = mean_ci(&diffs);
        let median = Samples::new(per[who].clone()).median();
        let median_diff = Samples::new(diffs).median();
        let _ = writeln!(
            out,
            "| {} | {median:.0} | {mean:+.1} ± {ci:.1} | {median_diff:+.1} |",
            name(who)
        );
    }
    Ok(())
}

/// The host cost of a call of `shape`, call by call: `rounds` rounds of 32 pairs (raw C++ and one other
/// contender, each call timed alone, the first of each pair alternating) per contender, a synchronize
/// (not timed) after each batch of pairs. Reports each contender's mean difference to its paired raw
/// call (95% interval over the rounds' means) and the median of all pair differences. The hipblas-sys
/// contender (the same C call from Rust) is the method's control: it should read about 0.
pub fn cost_interleaved(
    b: &mut Bench,
    out: &mut String,
    shape: (usize, usize, usize),
    rounds: usize,
) -> Result<(), String> {
    use std::fmt::Write;
    let pairs = 32;
    let others: &[usize] = if std::env::args().any(|a| a == "--host-atomics") {
        &[1, SYS, SYS_GATE, SYS_RMW]
    } else {
        &[1, SYS, UNTRACKED]
    };
    let mut round_means: Vec<Vec<f64>> = vec![Vec::new(); others.len()];
    let mut all: Vec<Vec<f64>> = vec![Vec::new(); others.len()];
    for &who in others.iter().chain([&0]) {
        b.run(who, Type::F32, shape, 50)?;
    }
    b.sync(0)?;
    for round in 0..rounds {
        for j in 0..others.len() {
            let slot = (j + round) % others.len();
            let who = others[slot];
            let mut sum = 0.0;
            for i in 0..pairs {
                let order = if (i + round) % 2 == 0 {
                    [0, who]
                } else {
                    [who, 0]
                };
                let t0 = Instant::now();
                b.run(order[0], Type::F32, shape, 1)?;
                let t1 = Instant::now();
                b.run(order[1], Type::F32, shape, 1)?;
                let t2 = Instant::now();
                let (first, second) = ((t1 - t0).as_nanos() as f64, (t2 - t1).as_nanos() as f64);
                let diff = if order[0] == 0 {
                    second - first
                } else {
                    first - second
                };
                sum += diff;
                all[slot].push(diff);
            }
            round_means[slot].push(sum / pairs as f64);
            b.sync(0)?;
        }
    }
    let _ = writeln!(out, "\nHost time per call, {}x{}x{} f32 GEMM, call by call ({rounds} rounds of {pairs} pairs per contender, each call timed alone, raw C++ and the contender alternating, the first of each pair alternating; queue drained between batches):\n", shape.0, shape.1, shape.2);
    let _ = writeln!(out, "| contender | over raw C++ (the call next to it): mean ns (95% CI over rounds) | median of the pair differences |");
    let _ = writeln!(out, "|---|---|---|");
    for (slot, &who) in others.iter().enumerate() {
        let (mean, ci) = mean_ci(&round_means[slot]);
        let median = Samples::new(all[slot].clone()).median();
        let _ = writeln!(
            out,
            "| {} | {mean:+.1} ± {ci:.1} | {median:+.1} |",
            name(who)
        );
    }
    Ok(())
}

/// A contender's name in the host-cost tables.
fn name(w: usize) -> &'static str {
    match w {
        SYS => "hipblas-sys from Rust (same handle)",
        SYS_BIND => "hipblas-sys + Device::bind",
        SYS_TRACK => "hipblas-sys + bind + track_use of A, B, C",
        SYS_GATE => "hipblas-sys inside a read lock",
        SYS_RMW => "hipblas-sys, then an atomic read-modify-write",
        SYS_STORE => "hipblas-sys, then a plain atomic store",
        UNTRACKED => "safe hip::blas, operands untracked (no memory model)",
        _ => CONTENDERS[w],
    }
}
