//! Kernels written in Rust for HIP: one source for AMD GPUs (`amdgcn-amd-amdhsa`, a linked ELF code object)
//! and NVIDIA GPUs (`nvptx64-nvidia-cuda`, PTX). `hip::Module::load_data` loads either.
//!
//! The kernels here are raw `extern "gpu-kernel"` functions exported under their plain names
//! (`#[no_mangle]`), so the host finds them with `Module::function("vector_add")` and launches them under
//! `unsafe`: they stay as the unchecked twins of the `#[kernel]` ones in [`typed`] (`vector_add`,
//! `saxpy_f32`/`_f64`, `matmul_f32_unchecked` and `matmul_f32_unchecked_pb`), which benchmarks compare (the checks' cost) and the
//! HIPRTC comparison launches. Every other kernel is a safe `#[kernel]` in [`typed`].
//!
//! Built by `hip-kernel-build` (from a `build.rs`) or `scripts/build-rust-kernels.sh`; both need a nightly
//! compiler (or `RUSTC_BOOTSTRAP=1`) with the `rust-src` component for `-Zbuild-std=core`.
#![no_std]
#![feature(
    abi_gpu_kernel,
    core_intrinsics,
    gpu_intrinsics,
    gpu_launch_sized_workgroup_mem
)]
#![cfg_attr(target_arch = "amdgpu", feature(stdarch_amdgpu))]
#![cfg_attr(target_arch = "nvptx64", feature(stdarch_nvptx, link_llvm_intrinsics))]
#![allow(internal_features)]

mod gpu;
pub mod typed;

/// A kernel must not unwind, and there is nowhere to print: stop the wavefront (AMD) or trap (NVIDIA).
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::intrinsics::abort()
}

/// `c[i] = a[i] + b[i]` for `i < n`, one element per thread.
///
/// # Safety
/// `a`, `b` and `c` point to at least `n` `f32` in device memory; `c` overlaps neither `a` nor `b`.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn vector_add(a: *const f32, b: *const f32, c: *mut f32, n: u64) {
    let i = gpu::global_id_x();
    if i < n {
        let i = i as usize;
        *c.add(i) = *a.add(i) + *b.add(i);
    }
}

/// The arithmetic `saxpy` needs, for the two float types it is instantiated for.
trait Float: Copy + core::ops::Mul<Output = Self> + core::ops::Add<Output = Self> {}
impl Float for f32 {}
impl Float for f64 {}

/// `y[i] = a * x[i] + y[i]` for `i < n`, generic over the element type; exported per type below.
#[inline(always)]
unsafe fn saxpy<T: Float>(a: T, x: *const T, y: *mut T, n: u64) {
    let i = gpu::global_id_x();
    if i < n {
        let i = i as usize;
        *y.add(i) = a * *x.add(i) + *y.add(i);
    }
}

/// `saxpy` over `f32`: `y[i] = a * x[i] + y[i]` for `i < n`.
///
/// # Safety
/// `x` and `y` point to at least `n` `f32` in device memory and do not overlap.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn saxpy_f32(a: f32, x: *const f32, y: *mut f32, n: u64) {
    saxpy::<f32>(a, x, y, n)
}

/// `saxpy` over `f64` (BLAS's daxpy): `y[i] = a * x[i] + y[i]` for `i < n`.
///
/// # Safety
/// `x` and `y` point to at least `n` `f64` in device memory and do not overlap.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn saxpy_f64(a: f64, x: *const f64, y: *mut f64, n: u64) {
    saxpy::<f64>(a, x, y, n)
}

/// `c = a b` for row-major `a` (`m x k`), `b` (`k x n`), `c` (`m x n`), in tiles of `blockDim.x` squared
/// staged in shared memory: the unchecked twin of the `#[kernel]` `matmul_f32` (typed.rs), the same
/// algorithm with raw pointers and no bounds checks on shared memory, for the benchmark
/// (bench/src/bin/typed_launch.rs) to measure what the checks cost.
///
/// # Safety
/// Blocks of `T x T` threads, `2 T^2 * 4` bytes of dynamic shared memory; `a`, `b`, `c` hold `m k`,
/// `k n`, `m n` `f32`, `c` overlapping neither.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn matmul_f32_unchecked(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u64,
    n: u64,
    k: u64,
) {
    // SAFETY: the caller's contract, and every thread of the block reaches each barrier.
    unsafe { matmul_tiles(a, b, c, m, n, k, || gpu::sync_threads()) }
}

/// [`matmul_f32_unchecked`] with the `#[kernel]`s' barrier on NVIDIA: `barrier.sync 0`, where each thread
/// arrives on its own (what `Shared::sync` uses), instead of the aligned `bar.sync`. The benchmark's third
/// side, which tells the barrier's cost from the checks'. On AMD the same code as the twin.
///
/// # Safety
/// As [`matmul_f32_unchecked`].
#[no_mangle]
pub unsafe extern "gpu-kernel" fn matmul_f32_unchecked_pb(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u64,
    n: u64,
    k: u64,
) {
    // SAFETY: the caller's contract; the barrier is reached by every thread of the block.
    unsafe { matmul_tiles(a, b, c, m, n, k, per_thread_barrier) }
}

#[cfg(target_arch = "nvptx64")]
extern "C" {
    /// `barrier.sync 0` without `.aligned` (as `hip_rs_kernel_types::gpu`'s `Shared` barrier).
    #[link_name = "llvm.nvvm.barrier.cta.sync.all"]
    fn barrier_cta_sync_all(id: u32);
}

/// The per-thread barrier on NVIDIA; `gpu::sync_threads` elsewhere.
#[inline(always)]
fn per_thread_barrier() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a non-aligned barrier, defined for any arrival on sm_70 and later.
    unsafe {
        barrier_cta_sync_all(0)
    };
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: reached by every thread of the block (matmul_tiles' loop is uniform across the block).
    unsafe {
        gpu::sync_threads()
    };
}

/// The tiled product of both raw twins, with `barrier` between the tile's write and read phases.
///
/// # Safety
/// As [`matmul_f32_unchecked`]; `barrier` synchronizes the block.
#[inline(always)]
unsafe fn matmul_tiles(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    m: u64,
    n: u64,
    k: u64,
    barrier: impl Fn(),
) {
    let tiles: *mut f32 = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<f32>();
    let t = u64::from(gpu::block_dim_x());
    let (tx, ty) = (
        u64::from(gpu::thread_idx_x()),
        u64::from(gpu::thread_idx_y()),
    );
    let (row, col) = (gpu::global_id_y(), gpu::global_id_x());
    let mine = (ty * t + tx) as usize;
    let b_tile = (t * t) as usize;
    let mut acc = 0.0f32;
    let mut kt = 0;
    while kt < k {
        *tiles.add(mine) = if row < m && kt + tx < k {
            *a.add((row * k + kt + tx) as usize)
        } else {
            0.0
        };
        *tiles.add(b_tile + mine) = if col < n && kt + ty < k {
            *b.add(((kt + ty) * n + col) as usize)
        } else {
            0.0
        };
        barrier();
        for j in 0..t {
            acc += *tiles.add((ty * t + j) as usize) * *tiles.add(b_tile + (j * t + tx) as usize);
        }
        barrier();
        kt += t;
    }
    if row < m && col < n {
        *c.add((row * n + col) as usize) = acc;
    }
}
