//! Event record + query, paired with raw C++ round by round (issue 56): the method of `launch_cost.rs`.
//! Each round times one batch per contender (order rotating): raw C++ `hipEventRecord` + `hipEventQuery`
//! (bench/baseline/baseline.cpp, `bl_event_record_query_on`), the same calls through hip-sys from Rust,
//! and the safe `Event::record` + `Event::query`, each on its own event (timing off) and all on one
//! stream, followed by a synchronise (not timed). The per-round differences to raw C++ are averaged.
use crate::baseline::Baseline;
use crate::e;
use crate::stats::{mean_ci, median};
use hip::prelude::*;
use hip::sys;
use std::fmt::Write as _;
use std::time::Instant;

const BATCH: usize = 8;
const CONTENDERS: [&str; 3] = ["raw C++", "hip-sys from Rust", "safe"];

struct Sides<'a> {
    stream: Stream,
    events: [Event; 3],
    b: &'a Baseline,
}

impl Sides<'_> {
    fn run(&self, who: usize, n: usize) -> Result<(), String> {
        let event = &self.events[who];
        match who {
            0 => {
                // SAFETY: a live event and stream of the device the baseline was initialised on.
                let rc = unsafe {
                    (self.b.event_record_query_on)(event.raw(), self.stream.raw(), n as i32)
                };
                if rc != 0 {
                    return Err(format!("C++ baseline: event record + query failed ({rc})"));
                }
            }
            1 => {
                for _ in 0..n {
                    // SAFETY: a live event and stream of the current device.
                    unsafe {
                        let rc = sys::hipEventRecord(event.raw(), self.stream.raw());
                        hip::result::check("hipEventRecord", rc).map_err(e)?;
                        let q = sys::hipEventQuery(event.raw());
                        if q != sys::hipSuccess && q != sys::hipErrorNotReady {
                            hip::result::check("hipEventQuery", q).map_err(e)?;
                        }
                    }
                }
            }
            _ => {
                for _ in 0..n {
                    event.record(&self.stream).map_err(e)?;
                    std::hint::black_box(event.query().map_err(e)?);
                }
            }
        }
        Ok(())
    }
}

/// The paired rounds, with the verdict on the <= 50 ns target.
pub fn section(
    out: &mut String,
    verdicts: &mut Vec<String>,
    device: &Device,
    baseline: Option<&Baseline>,
    quick: bool,
) -> Result<(), String> {
    writeln!(out, "## Event record + query, paired with raw C++\n").unwrap();
    let Some(b) = baseline else {
        writeln!(
            out,
            "Needs the C++ baseline (scripts/bench.sh builds it).\n"
        )
        .unwrap();
        return Ok(());
    };
    let ev = || Event::new(device).map_err(e);
    let sides = Sides {
        stream: Stream::new(device).map_err(e)?,
        events: [ev()?, ev()?, ev()?],
        b,
    };
    for who in 0..CONTENDERS.len() {
        sides.run(who, 200)?;
        sides.stream.synchronize().map_err(e)?;
    }
    let rounds = if quick { 300 } else { 20_000 };
    let mut raw_ns = Vec::with_capacity(rounds);
    let mut diffs = vec![Vec::with_capacity(rounds); CONTENDERS.len()];
    for i in 0..rounds {
        let mut ns = [0.0f64; CONTENDERS.len()];
        for turn in 0..CONTENDERS.len() {
            let who = (i + turn) % CONTENDERS.len();
            let t = Instant::now();
            sides.run(who, BATCH)?;
            ns[who] = t.elapsed().as_nanos() as f64 / BATCH as f64;
            sides.stream.synchronize().map_err(e)?;
        }
        raw_ns.push(ns[0]);
        for who in 1..CONTENDERS.len() {
            diffs[who].push(ns[who] - ns[0]);
        }
    }
    writeln!(
        out,
        "`hipEventRecord` then `hipEventQuery` of one event (timing off) on an idle stream, batches of \
         {BATCH} pairs, {rounds} rounds; each round one batch per contender (order rotating, each on its \
         own event, one stream), only the calls timed, a synchronise after each batch. ns per pair, \
         mean ± 95% interval of the per-round differences to raw C++:\n"
    )
    .unwrap();
    writeln!(out, "| contender | ns per record + query |\n|---|---:|").unwrap();
    writeln!(
        out,
        "| raw C++ (absolute, median) | {:.0} |",
        median(&raw_ns)
    )
    .unwrap();
    for who in 1..CONTENDERS.len() {
        let (m, ci) = mean_ci(&diffs[who]);
        writeln!(out, "| {} - raw C++ | {m:+.1} ± {ci:.1} |", CONTENDERS[who]).unwrap();
    }
    writeln!(out).unwrap();
    let (m, ci) = mean_ci(&diffs[2]);
    let verdict = if m + ci <= 50.0 {
        "met"
    } else if m - ci > 50.0 {
        "MISSED"
    } else {
        "not resolved: the interval straddles 50 ns"
    };
    verdicts.push(format!(
        "event record + query adds <= 50 ns over raw C++ (paired, batches of {BATCH}): {m:+.1} ± {ci:.1} ns \
         ({verdict})"
    ));
    Ok(())
}
