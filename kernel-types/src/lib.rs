//! Types shared by the Rust-written kernels in `kernels/` (built for `amdgcn-amd-amdhsa` and
//! `nvptx64-nvidia-cuda`) and the host code that launches them.
//!
//! Every type is `#[repr(C)]` and plain data, so the host and the device agree on its layout whatever
//! target each is compiled for; the tests below pin the layout the kernels' metadata reports. With the
//! `hip` feature (host only) each type implements `hip::DeviceCopy` and passes straight to
//! `LaunchArgs::arg`.
//!
//! [`device`] holds the parameter types of `#[kernel]` functions (`In`, `Out`, `OutChunk`, `Shared`) and
//! [`gpu`] the work-item queries (64-bit global indices from every launch dimension): both compile for
//! the host too, so a kernel body type-checks there, but only the GPU targets run them.
#![no_std]
#![cfg_attr(
    target_arch = "amdgpu",
    feature(
        stdarch_amdgpu,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem
    ),
    allow(internal_features)
)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        stdarch_nvptx,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem,
        link_llvm_intrinsics
    ),
    allow(internal_features)
)]

pub mod device;
pub mod gpu;
mod shared;
mod value;

/// Keeps its tokens on the GPU targets (`amdgpu`, `nvptx64`) and drops them elsewhere: the `#[kernel]`
/// macro emits its device side through it, so the `cfg` naming the GPU targets is evaluated here, where it
/// is declared, not in every crate using the macro (compilers before `amdgpu` existed warn about it).
#[cfg(any(target_arch = "amdgpu", target_arch = "nvptx64"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __on_gpu {
    ($($t:tt)*) => { $($t)* };
}

/// See the GPU twin above: on the host, nothing.
#[cfg(not(any(target_arch = "amdgpu", target_arch = "nvptx64")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __on_gpu {
    ($($t:tt)*) => {};
}

/// The reverse of `__on_gpu`: keeps its tokens on the host only (the `#[kernel]` launcher).
#[cfg(any(target_arch = "amdgpu", target_arch = "nvptx64"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __on_host {
    ($($t:tt)*) => {};
}

/// See the GPU twin above: on the host, its tokens.
#[cfg(not(any(target_arch = "amdgpu", target_arch = "nvptx64")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __on_host {
    ($($t:tt)*) => { $($t)* };
}

/// `y[i] = x[i] * scale + offset` for `i < len`: the parameters of the `affine_f32` kernel, which reads them
/// from device memory (a pointer to one `Affine`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Affine {
    /// Factor applied to each element.
    pub scale: f32,
    /// Added after scaling.
    pub offset: f32,
    /// Number of elements to transform (64-bit, as the kernels' indices).
    pub len: u64,
}

impl Affine {
    /// The value the kernel computes for one element, for checking its results on the host.
    pub fn apply(&self, x: f32) -> f32 {
        x * self.scale + self.offset
    }
}

// SAFETY: `Affine` is `#[repr(C)]` plain data (two `f32` and a `u64`, no padding): every bit pattern is a
// valid value and it holds no pointers.
#[cfg(feature = "hip")]
unsafe impl hip::DeviceCopy for Affine {}

// No padding, as DeviceCopy requires: the fields' sizes add up to the struct's.
const _: () = assert!(core::mem::size_of::<Affine>() == 4 + 4 + 8);

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::{align_of, offset_of, size_of};

    #[test]
    fn affine_layout_is_what_the_kernel_reads() {
        // The kernel reads the three fields at these offsets from the device copy the host makes.
        assert_eq!(size_of::<Affine>(), 16);
        assert_eq!(align_of::<Affine>(), 8);
        assert_eq!(offset_of!(Affine, scale), 0);
        assert_eq!(offset_of!(Affine, offset), 4);
        assert_eq!(offset_of!(Affine, len), 8);
    }

    #[test]
    fn apply_scales_then_offsets() {
        let p = Affine {
            scale: 2.0,
            offset: -1.0,
            len: 1,
        };
        assert_eq!(p.apply(3.0), 5.0);
    }
}
