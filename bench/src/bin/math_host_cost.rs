//! The crate's own host cost per small math-library call (issue 55: potrf, getrf, SpMV), measured on a
//! CPU: the `dynamic-loading` feature opens a HIP runtime and hipSOLVER / hipSPARSE that do nothing
//! (bench/stub/hipstub.c, bench/stub/mathstub.c), so the safe call's time over the same raw C call
//! through those stubs is the crate's work alone. The rows are those of `bench-solver --host-only`
//! (bench/src/math_host.rs), which on a GPU run against the real libraries.
//!
//! `scripts/host-cost.sh --math` builds the stubs and this program and runs it. Arguments: `--spin CALL
//! SECONDS` (CALL: potrf, getrf or spmv) runs the safe call alone in a loop, for `perf record`.
#![cfg_attr(
    not(all(feature = "solver", feature = "dynamic-loading")),
    allow(unused)
)]
#[path = "../math_host.rs"]
mod math_host;
#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;

use hip::prelude::*;
use hip::solver::{Handle as Solver, Uplo};
use hip::sparse::{Csr, Handle as Sparse, Op};
use std::time::Instant;

fn e(x: hip::Error) -> String {
    x.to_string()
}

/// The safe call `which` alone, in a loop for `seconds` (synchronizing every 64 calls, as the rows do).
fn spin(
    stream: &Stream,
    solver: &mut Solver,
    sparse: &mut Sparse,
    which: &str,
    seconds: f64,
) -> Result<(), String> {
    let device = stream.device();
    let n = 8;
    let mut a = DeviceBuffer::<f64>::zeroed(device, n * n).map_err(e)?;
    let mut ipiv = DeviceBuffer::<i32>::zeroed(device, n).map_err(e)?;
    let m = 1024;
    let offsets: Vec<i32> = (0..=m as i32).collect();
    let indices: Vec<i32> = (0..m as i32).collect();
    let csr = Csr::from_host(device, m, m, &offsets, &indices, &vec![1.0f64; m]).map_err(e)?;
    let x = DeviceBuffer::<f64>::zeroed(device, m).map_err(e)?;
    let mut y = DeviceBuffer::<f64>::zeroed(device, m).map_err(e)?;
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed().as_secs_f64() < seconds {
        for _ in 0..64 {
            match which {
                "potrf" => drop(solver.potrf(Uplo::Lower, n, &mut a, n).map_err(e)?),
                "getrf" => drop(solver.getrf(n, n, &mut a, n, &mut ipiv).map_err(e)?),
                "spmv" => sparse.spmv(Op::N, 1.0, &csr, &x, 0.0, &mut y).map_err(e)?,
                _ => return Err(format!("--spin {which}: potrf, getrf or spmv")),
            }
        }
        calls += 64;
        stream.synchronize().map_err(e)?;
    }
    let ns = start.elapsed().as_secs_f64() * 1e9 / calls as f64;
    println!("{which}: {calls} calls, {ns:.1} ns per call (synchronize included)");
    Ok(())
}

fn main() {
    if let Err(msg) = run() {
        eprintln!("math_host_cost: {msg}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let device = Device::get(0).map_err(e)?;
    let stream = Stream::new(&device).map_err(e)?;
    let mut solver = Solver::new(&stream).map_err(e)?;
    let mut sparse = Sparse::new(&stream).map_err(e)?;
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--spin") {
        let usage = "--spin CALL SECONDS";
        let which = args.get(i + 1).ok_or(usage)?;
        let secs: f64 = args.get(i + 2).and_then(|s| s.parse().ok()).ok_or(usage)?;
        return spin(&stream, &mut solver, &mut sparse, which, secs);
    }
    println!(
        "device: {} (stubs: nothing runs; the crate's own host cost)",
        device.properties().map_err(e)?.name
    );
    math_host::run(&stream, &mut solver, &mut sparse)?;
    Ok(())
}
