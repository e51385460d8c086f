//! Build-script helpers shared by the hip-rs sys crates (`hip-sys`, `hiprtc-sys`, `hipblas-sys`, ...).
//!
//! - [`find`]: where a ROCm library's header and shared library are, in one documented order, with the
//!   list of places tried for the build error when it is missing;
//! - [`dynamic`]: the `dynamic-loading` rewrite of bindgen's `extern "C"` block into a function table;
//! - [`library`]: the whole build script of a math library's sys crate (hipBLAS, hipRAND, hipFFT).
//!
//! Build glue only: nothing here runs in a user's program.

pub mod dynamic;
pub mod find;
pub mod library;
