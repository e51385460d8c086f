//! Kernels written with `#[kernel]` (`hiprs-kernel-macros`): plain safe functions over `In<T>` (checked
//! reads) and `Out<T>` (each thread writes only its own elements), their indices 64-bit over every launch
//! dimension. Each is exported as `NAME_hkFINGERPRINT`; the host launches it safely through the handle
//! the same macro generates there (`tests/gpu_typed_kernels.rs`, `examples/rust_kernels.rs`, which
//! include this file).
//!
//! No `unsafe` here: the macro's entry points hold the only one.

use hip_kernel_macros::kernel;
use hip_rs_kernel_types::device::{In, Out};
use hip_rs_kernel_types::gpu;

/// `c[i] = a[i] + b[i]` for each `i < c.len()`, one element per thread at its linear index (so any 1-D,
/// 2-D or 3-D grid covers `c` x-fastest); a missing input element reads as 0.
#[kernel]
pub fn vector_add(a: In<f32>, b: In<f32>, mut c: Out<f32>) {
    let i = gpu::global_linear_id();
    if let Some(c_i) = c.mine() {
        *c_i = a.get(i).unwrap_or(0.0) + b.get(i).unwrap_or(0.0);
    }
}

/// `y[i] = a * x[i] + y[i]` over `f32`, in a grid-stride loop: any grid covers all of `y`.
#[kernel]
pub fn saxpy_f32(a: f32, x: In<f32>, mut y: Out<f32>) {
    y.for_each_mine(|i, y_i| *y_i += a * x.get(i).unwrap_or(0.0));
}

/// `y[i] = a * x[i] + y[i]` over `f64`, in a grid-stride loop.
#[kernel]
pub fn saxpy_f64(a: f64, x: In<f64>, mut y: Out<f64>) {
    y.for_each_mine(|i, y_i| *y_i += a * x.get(i).unwrap_or(0.0));
}

/// `y[i] = i` for `i < y.len()`, one element per thread: which index each thread of a 1-D, 2-D or 3-D
/// grid computed (the host checks each element was written once, by the thread it expects).
#[kernel]
pub fn linear_ids(mut y: Out<u64>) {
    let i = gpu::global_linear_id();
    if let Some(y_i) = y.mine() {
        *y_i = i;
    }
}

/// `y[i] += 1` for `i < y.len()`, one element per thread: after one launch every element is 1 exactly
/// when each was reached by one thread, which a grid past 2^32 threads tests (a 32-bit index would wrap
/// and reach the first elements twice).
#[kernel]
pub fn count_once(mut y: Out<u8>) {
    if let Some(y_i) = y.mine() {
        *y_i = y_i.wrapping_add(1);
    }
}
