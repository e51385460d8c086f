//! Cold compile against warm compile-cache hit, for the vector-add kernel and a kernel library of a few
//! hundred lines (`bench/kernels/large.hip`).
//!
//! `cargo run --release -p hip-rs-bench --bin compile_cache [-- ARCH]`: ARCH defaults to `gfx90a` on AMD (no GPU needed) and
//! `compute_90` on NVIDIA. The cache lives in fresh directories under the system's temporary directory.
#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;
use hip::rtc::{CacheOutcome, CompileCache, ProgramBuilder};
use stats::Samples;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const VECTOR_ADD: &str = include_str!("../../kernels/vector_add.hip");
const LARGE: &str = include_str!("../../kernels/large.hip");

const COLD_RUNS: usize = 5;
const WARM_RUNS: usize = 500;

fn main() -> ExitCode {
    let arch = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_else(|| {
            if hip::PLATFORM == "amd" {
                "gfx90a"
            } else {
                "compute_90"
            }
            .into()
        });
    println!(
        "compile cache, platform {}, arch {arch}, HIPRTC {:?}",
        hip::PLATFORM,
        hip::rtc::version()
    );
    println!();
    println!("| kernel | lines | cold compile + store, ms (median, min-max of {COLD_RUNS}) | warm hit, ms (median, min-max of {WARM_RUNS}) | cold / warm |");
    println!("|---|---:|---:|---:|---:|");
    for (name, source) in [("vector_add", VECTOR_ADD), ("large.hip", LARGE)] {
        match measure(source, &arch) {
            Ok((cold, warm)) => {
                println!(
                    "| {name} | {} | {} | {} | {:.0}x |",
                    source.lines().count(),
                    cold.show(1),
                    warm.show(3),
                    cold.median() / warm.median()
                );
            }
            Err(e) => {
                eprintln!("{name}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// Cold and warm times, ms.
fn measure(source: &str, arch: &str) -> Result<(Samples, Samples), String> {
    let root = std::env::temp_dir().join(format!("hip-rs-bench-cache-{}", std::process::id()));
    let dir = |i: usize| -> PathBuf { root.join(i.to_string()) };
    let builder = |i: usize| {
        ProgramBuilder::new(source)
            .arch(arch)
            .cache(CompileCache::new(dir(i)))
    };

    // Warm-up: load HIPRTC and the compiler once, outside the timings.
    builder(usize::MAX)
        .no_cache()
        .compile()
        .map_err(|e| e.to_string())?;
    let mut cold = Vec::new();
    let mut reference = None;
    for i in 0..COLD_RUNS {
        let t = Instant::now();
        let out = builder(i).compile().map_err(|e| e.to_string())?;
        cold.push(ms(t.elapsed()));
        if out.cache_outcome() != &CacheOutcome::Stored {
            return Err(format!("cold compile {i}: {:?}", out.cache_outcome()));
        }
        reference = Some(out);
    }
    let reference = reference.unwrap();
    let mut warm = Vec::new();
    for _ in 0..WARM_RUNS {
        let t = Instant::now();
        let out = builder(0).compile().map_err(|e| e.to_string())?;
        warm.push(ms(t.elapsed()));
        if out.cache_outcome() != &CacheOutcome::Hit || out.code() != reference.code() {
            return Err(format!("warm compile: {:?}", out.cache_outcome()));
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    Ok((Samples::new(cold), Samples::new(warm)))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
