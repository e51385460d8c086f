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
//! Parameters are `In<T>` (read-only, every read checked), `Out<T>`, `OutChunk<T, N>`, `OutBlock<T, N>`
//! and `Out2d<T>` (each thread reaches only the elements its 64-bit global index gives it: writes are
//! disjoint by construction), at most one `Shared<T, K>` (the block's shared memory: each thread writes
//! its own `K` slots in a write phase, `sync()` is the barrier into a read phase where all read), and
//! scalars by value; `T` a primitive number or another `DeviceValue` (`Affine`), scalars primitive. Anything else (`&mut [T]`, raw pointers, structs, generics, a return value) is a
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
//! Shared memory: a thread writes only its own slots, in a write phase (`Shared`); another thread's
//! slot is out of reach (no index operator, no method taking a slot index):
//!
//! ```compile_fail,E0608
//! # use hip_kernel_macros::kernel;
//! # use hip_rs_kernel_types::device::{Out, Shared};
//! #[kernel]
//! pub fn poke(mut y: Out<u32>, mut tile: Shared<u32>) {
//!     tile[hip_rs_kernel_types::gpu::global_linear_id() + 1] = 1;
//!     if let Some(y_i) = y.mine() { *y_i = 0; }
//! }
//! ```
//!
//! Nor in a read phase (`SharedRead` is read-only):
//!
//! ```compile_fail,E0594
//! # use hip_kernel_macros::kernel;
//! # use hip_rs_kernel_types::device::{Out, Shared};
//! #[kernel]
//! pub fn poke(mut y: Out<u32>, tile: Shared<u32>) {
//!     let mut r = tile.sync();
//!     r[0] = 1;
//!     if let Some(y_i) = y.mine() { *y_i = 0; }
//! }
//! ```
//!
//! Reading the slots before the barrier (a write phase has no `get`):
//!
//! ```compile_fail,E0599
//! # use hip_kernel_macros::kernel;
//! # use hip_rs_kernel_types::device::{Out, Shared};
//! #[kernel]
//! pub fn early(mut y: Out<u32>, mut tile: Shared<u32>) {
//!     if let Some(s) = tile.mine(0) { *s = 1; }
//!     if let Some(y_i) = y.mine() { *y_i = tile.get(0).unwrap_or(0); }
//! }
//! ```
//!
//! Writing through the write phase after its barrier (`sync` consumed it):
//!
//! ```compile_fail,E0382
//! # use hip_kernel_macros::kernel;
//! # use hip_rs_kernel_types::device::{Out, Shared};
//! #[kernel]
//! pub fn stale(mut y: Out<u32>, mut tile: Shared<u32>) {
//!     let r = tile.sync();
//!     if let Some(s) = tile.mine(0) { *s = 1; }
//!     if let Some(y_i) = y.mine() { *y_i = r.get(0).unwrap_or(0); }
//! }
//! ```
//!
//! A barrier outside the handle (it would desynchronize the phases of the block's threads):
//!
//! ```compile_fail,E0133
//! # use hip_kernel_macros::kernel;
//! # use hip_rs_kernel_types::device::Out;
//! #[kernel]
//! pub fn barrier(mut y: Out<u32>) {
//!     hip_rs_kernel_types::gpu::sync_threads();
//!     if let Some(y_i) = y.mine() { *y_i = 0; }
//! }
//! ```
//!
//! Two `Shared` parameters (one barrier per block, counted by one handle), and a chunk of 0 elements:
//!
//! ```compile_fail
//! # use hip_kernel_macros::kernel;
//! # use hip_rs_kernel_types::device::{Out, Shared};
//! #[kernel]
//! pub fn two(mut y: Out<u32>, a: Shared<u32>, b: Shared<f32>) {
//!     if let Some(y_i) = y.mine() { *y_i = 0; }
//! }
//! ```
//!
//! ```compile_fail
//! # use hip_kernel_macros::kernel;
//! # use hip_rs_kernel_types::device::OutChunk;
//! #[kernel]
//! pub fn empty(mut y: OutChunk<u32, 0>) {}
//! ```
//!
//! Another block's element of an `OutBlock`, another chunk of an `OutChunk` (no index, no chunk number):
//!
//! ```compile_fail,E0608
//! # use hip_kernel_macros::kernel;
//! # use hip_rs_kernel_types::device::OutBlock;
//! #[kernel]
//! pub fn other_block(mut partial: OutBlock<u32>) {
//!     partial[hip_rs_kernel_types::gpu::block_linear_id() + 1] = 0;
//! }
//! ```
//!
//! ```compile_fail,E0624
//! # use hip_kernel_macros::kernel;
//! # use hip_rs_kernel_types::device::OutChunk;
//! #[kernel]
//! pub fn other_chunk(mut y: OutChunk<u32, 4>) {
//!     if let Some((_, c)) = y.chunk(hip_rs_kernel_types::gpu::global_linear_id() + 1) { c[0] = 0; }
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
//!
//! A kernel with shared memory, phases and barriers (the positive control of the shared cases): its
//! launcher checks that the configuration gives `K * size_of::<T>()` bytes per thread, which
//! `with_shared` sets.
//!
//! ```no_run
//! mod k {
//!     use hip_kernel_macros::kernel;
//!     use hip_rs_kernel_types::device::{In, OutBlock, Shared};
//!     use hip_rs_kernel_types::gpu;
//!     /// The largest element of each block.
//!     #[kernel]
//!     pub fn block_max(x: In<u32>, mut y: OutBlock<u32>, mut tile: Shared<u32>) {
//!         if let Some(s) = tile.mine(0) { *s = x.get(gpu::global_linear_id()).unwrap_or(0); }
//!         let all = tile.sync();
//!         if let Some(y_b) = y.mine() {
//!             *y_b = (0..all.len()).filter_map(|j| all.get(j)).max().unwrap_or(0);
//!         }
//!     }
//! }
//! # fn f(m: &hip::Module, s: &hip::Stream, x: &hip::DeviceBuffer<u32>, y: &mut hip::DeviceBuffer<u32>) -> hip::Result<()> {
//! assert_eq!(k::block_max::SHARED_BYTES_PER_THREAD, 4);
//! let config = k::block_max::with_shared(hip::LaunchConfig::new(y.len() as u32, 256))?;
//! k::block_max::load(m)?.launch(s, &config, x, y)?;
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
