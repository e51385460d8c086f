//! Host time of the per-launch argument check (`LaunchArgs::check` against a kernel's signature), the work
//! `Function::launch` adds before calling HIP. Needs no GPU: the signature comes from the launch benchmark's
//! `eight` kernel (4 buffers, 2 floats, 2 unsigned ints) compiled offline with HIPRTC (AMD: gfx90a;
//! NVIDIA: compute_52 PTX).
//!
//! ```text
//! cargo run --release -p hip-rs-bench --bin launch_check [iterations]
//! ```
//! Prints ns per check (best of 5 rounds) and, for scale, ns per building the same `LaunchArgs`, and the
//! check as a share of the 2.65 us raw `hipModuleLaunchKernel` measured on an H200 (docs/DESIGN).
use hip::code_object::{CodeObject, Signature};
use hip::rtc::ProgramBuilder;
use hip::{KernelArg, LaunchArgs};
use std::hint::black_box;
use std::time::Instant;

const EIGHT: &str = r#"
extern "C" __global__ void eight(const float* a, const float* b, const float* c, float* d,
                                 float alpha, float beta, unsigned int n, unsigned int stride) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[i * stride] = alpha * a[i * stride] + beta * b[i * stride] + c[i * stride];
}
"#;

/// Stands in for a device buffer (an address the kernel takes as a pointer), so no GPU is needed.
struct Address(u64);
// SAFETY: points at its own 8 bytes, valid while borrowed.
unsafe impl KernelArg for Address {
    fn as_kernel_param(&self) -> *mut std::ffi::c_void {
        &self.0 as *const u64 as *mut std::ffi::c_void
    }
    fn kernel_param_size(&self) -> usize {
        8
    }
    fn is_device_pointer(&self) -> bool {
        true
    }
}

fn best_ns(rounds: usize, iterations: u64, mut f: impl FnMut()) -> f64 {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..iterations {
                f();
            }
            t.elapsed().as_nanos() as f64 / iterations as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let iterations: u64 = std::env::args()
        .nth(1)
        .map_or(Ok(10_000_000), |s| s.parse())?;
    let arch = if hip::PLATFORM == "amd" {
        "gfx90a"
    } else {
        "compute_52"
    };
    let code = ProgramBuilder::new(EIGHT).arch(arch).no_cache().compile()?;
    let parsed = Instant::now();
    let co = CodeObject::parse(code.code())?;
    let parse_us = parsed.elapsed().as_secs_f64() * 1e6;
    let kernel = co
        .kernel("eight", None)
        .ok_or("no kernel `eight` in the code object")?;
    let sig = Signature::new(kernel.clone());

    let (a, b, c, d) = (Address(1), Address(2), Address(3), Address(4));
    let (alpha, beta, n, stride) = (1.0f32, 2.0f32, 32u32, 1u32);
    let mut args = LaunchArgs::new();
    args.arg(&a).arg(&b).arg(&c).arg(&d);
    args.arg(&alpha).arg(&beta).arg(&n).arg(&stride);
    args.check(&sig)?;

    let check = best_ns(5, iterations, || {
        black_box(black_box(&args).check(black_box(&sig))).ok();
    });
    let build = best_ns(5, iterations, || {
        let mut args = LaunchArgs::new();
        args.arg(&a).arg(&b).arg(&c).arg(&d);
        args.arg(&alpha).arg(&beta).arg(&n).arg(&stride);
        black_box(&args);
    });
    println!("| what ({arch}, 8 arguments, {iterations} iterations, best of 5) | ns |");
    println!("| --- | --- |");
    println!("| `LaunchArgs::check` (the per-launch signature check) | {check:.2} |");
    println!("| building the same `LaunchArgs` (for scale) | {build:.2} |");
    println!(
        "| check / 2650 ns raw `hipModuleLaunchKernel` (H200) | {:.3} % |",
        check / 2650.0 * 100.0
    );
    println!(
        "| `CodeObject::parse` of the {} byte object, once per module | {parse_us:.1} us |",
        code.code().len()
    );
    Ok(())
}
