//! Kernels written in Rust for HIP: one source for AMD GPUs (`amdgcn-amd-amdhsa`, a linked ELF code object)
//! and NVIDIA GPUs (`nvptx64-nvidia-cuda`, PTX). `hip::Module::load_data` loads either.
//!
//! Each kernel is an `extern "gpu-kernel"` function exported under its plain name (`#[no_mangle]`), so the
//! host finds it with `Module::function("vector_add")`. Parameters are what the host passes through
//! `LaunchArgs`, in order: device pointers, scalars, and `#[repr(C)]` structs from `hip-rs-kernel-types`.
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
#![cfg_attr(target_arch = "nvptx64", feature(stdarch_nvptx))]
#![allow(internal_features)]

use hip_rs_kernel_types::Affine;

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

/// Sum of `input[..n]` per block: block `b` writes the sum of its `blockDim.x` elements to `partial[b]`.
///
/// A tree reduction in workgroup (shared, LDS) memory with a barrier between steps. The launch gives
/// `blockDim.x * 4` bytes of dynamic shared memory, and `blockDim.x` is a power of two.
///
/// # Safety
/// `input` points to `n` `u32`, `partial` to one `u32` per block; the launch gives the shared memory above.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn block_sum_u32(input: *const u32, partial: *mut u32, n: u64) {
    let shared: *mut u32 = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<u32>();
    let tid = gpu::thread_idx_x();
    let block = gpu::block_dim_x();
    let i = gpu::global_id_x();
    *shared.add(tid as usize) = if i < n { *input.add(i as usize) } else { 0 };
    gpu::sync_threads();
    let mut stride = block / 2;
    while stride > 0 {
        if tid < stride {
            *shared.add(tid as usize) += *shared.add((tid + stride) as usize);
        }
        gpu::sync_threads();
        stride /= 2;
    }
    if tid == 0 {
        *partial.add(gpu::block_idx_x() as usize) = *shared;
    }
}

/// `y[i] = x[i] * p.scale + p.offset` for `i < p.len`: reads its parameters from a `#[repr(C)]` struct
/// shared with the host ([`hip_rs_kernel_types::Affine`]), placed in device memory by the host.
///
/// The struct comes through a pointer, not by value: rustc lowers an aggregate `gpu-kernel` parameter to a
/// pointer to it (the code object's metadata shows an 8-byte `global_buffer`, and rustc warns with
/// `improper_gpu_kernel_arg`), so a 12-byte value passed by the host would be read as an address.
///
/// # Safety
/// `p` points to one `Affine` in device memory; `x` and `y` to at least `p.len` `f32`.
#[no_mangle]
pub unsafe extern "gpu-kernel" fn affine_f32(p: *const Affine, x: *const f32, y: *mut f32) {
    let p = *p;
    let i = gpu::global_id_x();
    if i < p.len {
        let i = i as usize;
        *y.add(i) = p.apply(*x.add(i));
    }
}
