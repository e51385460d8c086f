//! GEMM throughput (bench/src/bin/blas.rs): each type and shape, the contenders in rounds (order rotating),
//! each a batch of about 25 ms of products timed around a stream synchronize; a markdown row per product
//! with the median round's TFLOPS and the median of the per-round ratios with their range.
use super::{Bench, Type, CONTENDERS};
use crate::stats::{paired_ratio, Samples};
use std::time::Instant;

/// The products measured: three squares and one tall-skinny shape (m, n, k).
pub const SHAPES: [(usize, usize, usize); 4] = [
    (1024, 1024, 1024),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (32768, 128, 4096),
];

pub fn throughput(b: &mut Bench, out: &mut String) -> Result<(), String> {
    use std::fmt::Write;
    let heads: Vec<String> = CONTENDERS
        .iter()
        .map(|c| format!("{c} TFLOPS (% of peak)"))
        .collect();
    let cudarc_head = if CONTENDERS.len() > 2 {
        " safe / cudarc |"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "| type | m x n x k | {} | safe / raw |{cudarc_head}",
        heads.join(" | ")
    );
    let _ = writeln!(
        out,
        "|---|---|{}---|{}",
        "---|".repeat(CONTENDERS.len()),
        if CONTENDERS.len() > 2 { "---|" } else { "" }
    );
    for t in [Type::F32, Type::F16, Type::Bf16] {
        for shape in SHAPES {
            let flop = 2.0 * (shape.0 * shape.1 * shape.2) as f64;
            for who in 0..CONTENDERS.len() {
                b.run(who, t, shape, 2)?;
                b.sync(who)?;
            }
            // Calls per batch for about 25 ms, from three timed calls of the raw side.
            let t0 = Instant::now();
            b.run(0, t, shape, 3)?;
            b.sync(0)?;
            let per = t0.elapsed().as_secs_f64() / 3.0;
            let calls = ((0.025 / per) as usize).clamp(1, 2000);
            let mut tflops: Vec<Vec<f64>> = vec![Vec::new(); CONTENDERS.len()];
            for round in 0..ROUNDS {
                for i in 0..CONTENDERS.len() {
                    let who = (i + round) % CONTENDERS.len();
                    let t0 = Instant::now();
                    b.run(who, t, shape, calls)?;
                    b.sync(who)?;
                    tflops[who].push(flop * calls as f64 / t0.elapsed().as_secs_f64() / 1e12);
                }
            }
            let cells: Vec<String> = tflops
                .iter()
                .map(|x| {
                    let m = Samples::new(x.clone()).median();
                    format!("{m:.1} ({:.0}%)", 100.0 * m / t.peak())
                })
                .collect();
            let vs_cudarc = if CONTENDERS.len() > 2 {
                format!(" {} |", paired_ratio(&tflops[1], &tflops[2]))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "| {} | {}x{}x{} | {} | {} |{vs_cudarc}",
                t.name(),
                shape.0,
                shape.1,
                shape.2,
                cells.join(" | "),
                paired_ratio(&tflops[1], &tflops[0])
            );
            eprintln!("{} {:?} done", t.name(), shape);
        }
    }
    Ok(())
}

/// Rounds of the throughput measurement.
const ROUNDS: usize = 11;
