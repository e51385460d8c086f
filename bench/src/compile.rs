//! HIPRTC compile time: the safe ProgramBuilder (cache off) against the C++ baseline's create / compile /
//! get code / destroy, for the same source and architecture.
use crate::baseline::{checked, Baseline};
use crate::stats::{self, ratio};
use crate::{e, interleave, Plan, LARGE, VECTOR_ADD};
use hip::rtc::ProgramBuilder;
use std::ffi::CString;
use std::fmt::Write as _;
use std::time::Instant;

/// One safe compile: nanoseconds and the code size.
pub fn safe(source: &str, name: &str, arch: &str) -> hip::Result<(f64, usize)> {
    let t = Instant::now();
    let out = ProgramBuilder::new(source)
        .name(name)
        .arch(arch)
        .no_cache()
        .compile()?;
    Ok((t.elapsed().as_nanos() as f64, out.code().len()))
}

/// One C++ compile: nanoseconds and the code size.
pub fn cpp(b: &Baseline, source: &str, name: &str, arch: &str) -> Result<(f64, usize), String> {
    let c = |s: &str| CString::new(s).map_err(|_| "NUL in compile input".to_string());
    let (source, name, option) = (
        c(source)?,
        c(name)?,
        c(&format!("--gpu-architecture={arch}"))?,
    );
    let mut size = 0usize;
    let ns = unsafe { (b.compile)(source.as_ptr(), name.as_ptr(), option.as_ptr(), &mut size) };
    Ok((checked("compile", ns)?, size))
}

/// The HIPRTC compile-time section of the report: each kernel's safe and C++ compiles interleaved, code
/// sizes compared, a MISS verdict when the safe API is slower within the same round.
pub fn section(
    out: &mut String,
    verdicts: &mut Vec<String>,
    baseline: Option<&Baseline>,
    arch: &str,
    plan: &Plan,
) -> Result<(), String> {
    writeln!(out, "## HIPRTC compile time\n").unwrap();
    writeln!(out, "One compile for `{arch}` (create, compile, get code, destroy; the safe API with its cache off), ms, median (min-max) of {} runs, interleaved (order alternating); the last column is safe minus C++ within each round, mean ± 95% interval; code sizes compared.\n", plan.compile_runs).unwrap();
    writeln!(
        out,
        "| kernel | lines | safe ms | C++ ms | safe / C++ | safe - C++ per round, ms |"
    )
    .unwrap();
    writeln!(out, "|---|---:|---:|---:|---:|---:|").unwrap();
    for (name, src) in [("vector_add", VECTOR_ADD), ("large.hip", LARGE)] {
        let mut sizes = [0usize; 2];
        // Each contender's times in round order, for the per-round differences.
        let mut rounds: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        let mut one = |c: usize| -> Result<f64, String> {
            let (ns, size) = if c == 0 {
                safe(src, name, arch).map_err(e)?
            } else {
                cpp(baseline.unwrap(), src, name, arch)?
            };
            sizes[c] = size;
            rounds[c].push(ns / 1e6);
            Ok(ns / 1e6)
        };
        one(0)?; // warm-up: loads the compiler (rounds[0][0], left out of the differences)
        let [safe, cpp] = interleave(plan.compile_runs, &mut one, [true, baseline.is_some()])?;
        let differences: Vec<f64> = rounds[0][1..]
            .iter()
            .zip(&rounds[1])
            .map(|(s, c)| s - c)
            .collect();
        let safe = safe.unwrap();
        if baseline.is_some() && sizes[0] != sizes[1] {
            return Err(format!(
                "{name}: code sizes differ (safe {} bytes, C++ {})",
                sizes[0], sizes[1]
            ));
        }
        let (c, r, d) = match &cpp {
            Some(c) => {
                let (m, ci) = stats::mean_ci(&differences);
                (c.show(1), ratio(&safe, c), format!("{m:+.1} ± {ci:.1}"))
            }
            None => ("-".into(), "-".into(), "-".into()),
        };
        writeln!(
            out,
            "| {name} | {} | {} | {c} | {r} | {d} |",
            src.lines().count(),
            safe.show(1)
        )
        .unwrap();
        if cpp.is_some() {
            let (m, ci) = stats::mean_ci(&differences);
            if m - ci > 0.0 {
                verdicts.push(format!("MISS compile ({name}): the safe API is slower than C++ in the same round by {m:.1} ± {ci:.1} ms (95%)"));
            }
        }
    }
    writeln!(out).unwrap();
    Ok(())
}
