//! The cost of the `dynamic-loading` feature per call: the same HIP runtime functions called through the
//! linked symbol (the raw baseline, declared here and linked to libamdhip64) and through hip-sys's table of
//! function pointers, in one process, interleaved.
//!
//! `cargo run --release -p hip-rs-bench --features dynamic-loading --bin dispatch`. Needs no GPU: the calls
//! are `hipGetErrorName` and `hipGetErrorString`, which the runtime answers on any machine without
//! initialising a device (on a machine without one, calls that initialise cost ~16 us each); the
//! difference is the wrapper's own cost (a once-initialised table read, a branch, an indirect call), which
//! does not depend on what the callee does. It is then set against the per-call cost of a kernel launch and
//! of an event record + query measured on an H200 (docs/BENCHMARKS.md).
#![cfg_attr(not(feature = "dynamic-loading"), allow(unused))]
#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;
use std::hint::black_box;
use std::time::Instant;

#[link(name = "amdhip64")]
unsafe extern "C" {
    #[link_name = "hipGetErrorName"]
    fn linked_get_error_name(e: hip_sys::hipError_t) -> *const std::ffi::c_char;
    #[link_name = "hipGetErrorString"]
    fn linked_get_error_string(e: hip_sys::hipError_t) -> *const std::ffi::c_char;
}

const CALLS: u32 = 2_000_000;
const ROUNDS: usize = 15;
/// Raw `hipModuleLaunchKernel` and C++ event record + query on an NVIDIA H200 (docs/BENCHMARKS.md).
const LAUNCH_NS: f64 = 2650.0;
const EVENT_NS: f64 = 310.0;

fn per_call(f: impl Fn()) -> f64 {
    let t = Instant::now();
    for _ in 0..CALLS {
        f();
    }
    t.elapsed().as_nanos() as f64 / CALLS as f64
}

fn main() {
    let mut v = 0;
    // Open the library (the first call through the table) before timing anything.
    let rc = unsafe { hip_sys::hipRuntimeGetVersion(&mut v) };
    assert_eq!(rc, hip_sys::hipSuccess, "the runtime answers");
    println!("HIP runtime {v}; {CALLS} calls per sample, {ROUNDS} rounds, interleaved");
    let mut table = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for round in 0..ROUNDS {
        let order: [usize; 4] = if round % 2 == 0 {
            [0, 1, 2, 3]
        } else {
            [3, 2, 1, 0]
        };
        for i in order {
            let ns = match i {
                0 => per_call(|| {
                    black_box(unsafe {
                        linked_get_error_name(black_box(hip_sys::hipErrorNoDevice))
                    });
                }),
                1 => per_call(|| {
                    black_box(unsafe {
                        hip_sys::hipGetErrorName(black_box(hip_sys::hipErrorNoDevice))
                    });
                }),
                2 => per_call(|| {
                    black_box(unsafe {
                        linked_get_error_string(black_box(hip_sys::hipErrorNoDevice))
                    });
                }),
                _ => per_call(|| {
                    black_box(unsafe {
                        hip_sys::hipGetErrorString(black_box(hip_sys::hipErrorNoDevice))
                    });
                }),
            };
            table[i].push(ns);
        }
    }
    let [a, b, c, d] = table.map(|v| stats::median(&v));
    println!("| call | linked, ns | dynamic-loading, ns | difference, ns | of a launch ({LAUNCH_NS} ns) | of event record+query ({EVENT_NS} ns) |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, linked, dynamic) in [("hipGetErrorName", a, b), ("hipGetErrorString", c, d)] {
        let diff = dynamic - linked;
        println!(
            "| {name} | {linked:.2} | {dynamic:.2} | {diff:+.2} | {:+.3}% | {:+.3}% |",
            100.0 * diff / LAUNCH_NS,
            100.0 * 2.0 * diff / EVENT_NS
        );
    }
}
