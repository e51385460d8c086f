//! The work-item queries and the barrier the kernels use: `hip_rs_kernel_types::gpu`, where the
//! `#[kernel]` macro's generated code finds them too (64-bit indices from every launch dimension).
pub use hip_rs_kernel_types::gpu::*;
