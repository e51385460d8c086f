//! `#[kernel]`: a GPU kernel written as a plain, safe Rust function, and its safe, typed host launcher,
//! both generated from the function's own signature.
//!
//! ```ignore
//! use hip_kernel_macros::kernel;
//! use hip_rs_kernel_types::device::{In, Out};
//!
//! /// `y[i] = a * x[i] + y[i]`.
//! #[kernel]
//! pub fn saxpy(a: f32, x: In<f32>, mut y: Out<f32>) {
//!     if let Some(y_i) = y.mine() {
//!         let i = hip_rs_kernel_types::gpu::global_linear_id();
//!         *y_i += a * x.get(i).unwrap_or(0.0);
//!     }
//! }
//! ```
//!
//! Parameters are `In<T>` (read-only, every read checked), `Out<T>` (each thread reaches only the elements
//! its 64-bit global index gives it: writes are disjoint by construction) and scalars by value, with `T`
//! a primitive number. Anything else (`&mut [T]`, raw pointers, structs, generics, a return value) is a
//! compile error naming the parameter.
//!
//! **On the GPU** (`target_arch` `amdgpu` or `nvptx64`) the macro emits the `extern "gpu-kernel"` entry
//! point: each `In`/`Out` as a thin pointer and a `u64` length, scalars by value, exported under
//! `NAME_hkFINGERPRINT` (a hash of the signature's roles and types), building the `In`/`Out` values inside
//! its own `unsafe`; the body is compiled under `forbid(unsafe_code)`.
//!
//! **On the host** it emits a handle type named after the kernel, with `load(&module)` (the fingerprinted
//! name, so a code object built from another version of the kernel is refused with a clear error) and a
//! safe `launch(&stream, &config, ...)` taking `&` buffers for `In` and `&mut` buffers for `Out`: it
//! records the reads and writes with hip's memory model exactly as `LaunchArgs::arg`/`arg_mut` do,
//! checks the configuration (including that the grid's threads fit the kernel's 64-bit index), and
//! returns `hip::Result`. The body is type-checked on the host too.
//!
//! The generated code names `::hip` (the `hiprs` package) on the host and `::hip_rs_kernel_types` on both
//! sides: the crate using `#[kernel]` depends on them under those names.
//!
//! # What does not compile
//!
//! An output aliased with an input of the same launch (borrowck):
//!
//! ```compile_fail,E0502
//! # mod k {
//! # use hip_kernel_macros::kernel;
//! # use hip_rs_kernel_types::device::{In, Out};
//! #[kernel]
//! pub fn copy(x: In<f32>, mut y: Out<f32>) {
//!     if let Some(y_i) = y.mine() {
//!         *y_i = x.get(hip_rs_kernel_types::gpu::global_linear_id()).unwrap_or(0.0);
//!     }
//! }
//! # }
//! # fn f(m: &hip::Module, s: &hip::Stream, b: &mut hip::DeviceBuffer<f32>) -> hip::Result<()> {
//! let k = k::copy::load(m)?;
//! k.launch(s, &hip::LaunchConfig::for_num_elems(b.len()), &*b, b)?;
//! # Ok(()) }
//! ```
//!
//! A `&mut [T]` parameter (every thread would see every element):
//!
//! ```compile_fail
//! # use hip_kernel_macros::kernel;
//! #[kernel]
//! pub fn fill(y: &mut [f32], v: f32) {
//!     for e in y.iter_mut() { *e = v; }
//! }
//! ```
//!
//! A wrong type at the call site (an `f64` buffer for `In<f32>`, or a `u64` for a `u32` scalar):
//!
//! ```compile_fail,E0277
//! # mod k {
//! # use hip_kernel_macros::kernel;
//! # use hip_rs_kernel_types::device::{In, Out};
//! #[kernel]
//! pub fn scale(x: In<f32>, mut y: Out<f32>, s: f32) {
//!     if let Some(y_i) = y.mine() { *y_i = s * x.get(0).unwrap_or(0.0); }
//! }
//! # }
//! # fn f(m: &hip::Module, s: &hip::Stream, x: &hip::DeviceBuffer<f64>, y: &mut hip::DeviceBuffer<f32>) -> hip::Result<()> {
//! k::scale::load(m)?.launch(s, &hip::LaunchConfig::for_num_elems(y.len()), x, y, 2.0)?;
//! # Ok(()) }
//! ```
//!
//! ```compile_fail,E0308
//! # mod k {
//! # use hip_kernel_macros::kernel;
//! # use hip_rs_kernel_types::device::{In, Out};
//! #[kernel]
//! pub fn scale(x: In<f32>, mut y: Out<f32>, s: f32) {
//!     if let Some(y_i) = y.mine() { *y_i = s * x.get(0).unwrap_or(0.0); }
//! }
//! # }
//! # fn f(m: &hip::Module, s: &hip::Stream, x: &hip::DeviceBuffer<f32>, y: &mut hip::DeviceBuffer<f32>) -> hip::Result<()> {
//! k::scale::load(m)?.launch(s, &hip::LaunchConfig::for_num_elems(y.len()), x, y, 2.0f64)?;
//! # Ok(()) }
//! ```
//!
//! Writing another thread's element: `Out` has no index operator and no method taking an index.
//!
//! ```compile_fail,E0608
//! # use hip_kernel_macros::kernel;
//! # use hip_rs_kernel_types::device::Out;
//! #[kernel]
//! pub fn neighbour(mut y: Out<f32>) {
//!     let i = hip_rs_kernel_types::gpu::global_linear_id();
//!     y[i + 1] = 1.0;
//! }
//! ```
//!
//! ```compile_fail,E0624
//! # use hip_kernel_macros::kernel;
//! # use hip_rs_kernel_types::device::Out;
//! #[kernel]
//! pub fn neighbour(mut y: Out<f32>) {
//!     let i = hip_rs_kernel_types::gpu::global_linear_id();
//!     if let Some(e) = y.slot(i + 1) { *e = 1.0; }
//! }
//! ```
//!
//! `unsafe` in the body:
//!
//! ```compile_fail
//! # use hip_kernel_macros::kernel;
//! # use hip_rs_kernel_types::device::Out;
//! #[kernel]
//! pub fn sneaky(mut y: Out<f32>) {
//!     let p = y.mine().map(|e| e as *mut f32);
//!     if let Some(p) = p { unsafe { *p.add(1) = 1.0 } }
//! }
//! ```
//!
//! And the positive control of the cases above, which compiles (the launch itself needs a GPU):
//!
//! ```no_run
//! mod k {
//!     use hip_kernel_macros::kernel;
//!     use hip_rs_kernel_types::device::{In, Out};
//!     /// `y[i] = s * x[i]`.
//!     #[kernel]
//!     pub fn scale(x: In<f32>, mut y: Out<f32>, s: f32) {
//!         if let Some(y_i) = y.mine() {
//!             *y_i = s * x.get(hip_rs_kernel_types::gpu::global_linear_id()).unwrap_or(0.0);
//!         }
//!     }
//! }
//! # fn f(m: &hip::Module, s: &hip::Stream, x: &hip::DeviceBuffer<f32>, y: &mut hip::DeviceBuffer<f32>) -> hip::Result<()> {
//! use hip::{DeviceMemory, DeviceMemoryMut}; // slice, slice_mut
//! let scale = k::scale::load(m)?;
//! assert!(k::scale::NAME.starts_with("scale_hk"));
//! scale.launch(s, &hip::LaunchConfig::for_num_elems(y.len()), x, y, 2.0)?;
//! scale.launch(s, &hip::LaunchConfig::for_num_elems(2), &x.slice(..2)?, &mut y.slice_mut(1..3)?, 0.5)?;
//! # Ok(()) }
//! ```

use proc_macro::{Span, TokenStream, TokenTree};

mod emit;
mod parse;

/// Turn a safe Rust function into a GPU kernel (device) and a typed launcher (host): see the crate
/// documentation.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    if let Some(t) = attr.into_iter().next() {
        return compile_error(t.span(), "#[kernel] takes no arguments");
    }
    match parse::kernel(item) {
        Ok(k) => match emit::check(&k) {
            Ok(()) => emit::kernel(&k),
            Err(e) => compile_error(e.span, &e.message),
        },
        Err(e) => compile_error(e.span, &e.message),
    }
}

/// `compile_error!("message")` pointing at `span`.
fn compile_error(span: Span, message: &str) -> TokenStream {
    let text = format!("::core::compile_error!({message:?});");
    let tokens: TokenStream = text.parse().expect("a compile_error! invocation parses");
    tokens.into_iter().map(|t| respan(t, span)).collect()
}

fn respan(mut t: TokenTree, span: Span) -> TokenTree {
    if let TokenTree::Group(g) = &t {
        let inner = g.stream().into_iter().map(|t| respan(t, span)).collect();
        let mut ng = proc_macro::Group::new(g.delimiter(), inner);
        ng.set_span(span);
        return TokenTree::Group(ng);
    }
    t.set_span(span);
    t
}
