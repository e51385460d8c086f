//! Safe Rust for AMD's HIP runtime and HIPRTC.
//!
//! ```no_run
//! use hip::prelude::*;
//!
//! let src = r#"extern "C" __global__ void scale(float* x, float s, unsigned n) {
//!     unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
//!     if (i < n) x[i] *= s;
//! }"#;
//! let device = Device::get(0)?; // Error::NoDevice where there is none (see "Finding a GPU")
//! let code = ProgramBuilder::new(src).compile()?; // for the current device's architecture
//! let module = Module::load_data(&device, code.code())?;
//! let kernel = module.function("scale")?; // Error::UnknownName if the module has no `scale`
//!
//! let mut x = DeviceBuffer::from_slice(&device, &[1.0f32, 2.0, 3.0])?;
//! let n = x.len() as u32;
//! let stream = Stream::new(&device)?;
//! let mut args = LaunchArgs::new();
//! args.arg_mut(&mut x).arg(&2.0f32).arg(&n);
//! // SAFETY: the arguments match `scale`'s parameters and the kernel stays inside `x`.
//! unsafe { kernel.launch(&stream, &LaunchConfig::for_num_elems(n), &mut args)? };
//! // No synchronize needed: the read waits for the kernel that wrote `x` (the memory model, below).
//! assert_eq!(x.to_vec()?, [2.0, 4.0, 6.0]);
//! # Ok::<(), hip::Error>(())
//! ```
//!
//! # Installing
//!
//! The package is `hiprs`; the crate is `hip` (crates.io holds unrelated crates named `hip`, `hip-sys`
//! and `hip-rs`):
//!
//! ```toml
//! [dependencies]
//! hiprs = "0.1" # then `use hip::prelude::*;`
//! # or with features:
//! # hiprs = { version = "0.1", features = ["blas", "dynamic-loading"] }
//! ```
//!
//! Building needs HIP's headers (`libamdhip64-dev` on Debian and Ubuntu, or a ROCm install found through
//! `HIP_PATH`, `ROCM_PATH` or `/opt/rocm`) and libclang (`libclang-dev`, for bindgen); running needs HIP's
//! runtime, and a GPU for anything but compiling and reading code objects.
//!
//! | feature | module | needs installed |
//! | --- | --- | --- |
//! | `blas` | `blas` | hipBLAS (`libhipblas-dev`) and rocBLAS, or cuBLAS on HIP's NVIDIA platform |
//! | `rand` | `rand` | hipRAND (`libhiprand-dev`) and rocRAND, or cuRAND |
//! | `fft` | `fft` | hipFFT (`libhipfft-dev`) and rocFFT, or cuFFT |
//! | `solver` | `solver` | hipSOLVER (`libhipsolver-dev`) and rocSOLVER, or cuSOLVER |
//! | `sparse` | `sparse` | hipSPARSE (`libhipsparse-dev`) and rocSPARSE, or cuSPARSE |
//! | `blaslt` | `blaslt` | hipBLASLt (`libhipblaslt-dev`); AMD only (no NVIDIA backend) |
//! | `rccl` | `rccl` | RCCL (`librccl-dev`), or NCCL on HIP's NVIDIA platform; always linked |
//! | `dynamic-loading` | - | nothing at build time beyond headers; each library opened on first use (below) |
//!
//! With `dynamic-loading` the math libraries' committed bindings are used where their headers are
//! missing, so every feature but `rccl` builds without them. The minimum supported Rust version is
//! **1.85** (checked in CI). Licensed under either of MIT or Apache-2.0, at your option.
//!
//! # The memory model: program order on any number of streams
//!
//! Safe code that uses one buffer from several streams sees the order it wrote, as if every operation
//! ran in program order, while work that does not conflict still overlaps. Every allocation remembers the
//! last stream that wrote it and the streams that read it since; every safe operation first makes its
//! stream wait on the GPU (`hipStreamWaitEvent`, never the host) for the conflicting work of other
//! streams: a read waits for the last writer, a write for the last writer and every reader. Kernels say
//! what they do through their arguments ([`LaunchArgs::arg`] reads, [`LaunchArgs::arg_mut`] writes); host
//! accesses ([`PinnedBuffer::as_slice`], [`DeviceMemory::to_vec`]) wait only for the writers they conflict
//! with; nothing is freed while a stream may still use it. While a buffer stays on one stream a use costs
//! one atomic load and one compare-and-swap, and nothing is recorded.
//!
//! ```no_run
//! use hip::prelude::*;
//! # fn kernels(m: &Module) -> hip::Result<(Function, Function)> { Ok((m.function("produce")?, m.function("consume")?)) }
//! # fn run(device: &Device, module: &Module) -> hip::Result<()> {
//! let (produce, consume) = kernels(module)?; // `produce(float* x, unsigned n)`, `consume(const float* x, float* y, unsigned n)`
//! let (a, b) = (Stream::new(device)?, Stream::new(device)?);
//! let n = 1u32 << 20;
//! let cfg = LaunchConfig::for_num_elems(n);
//! let mut x = DeviceBuffer::<f32>::zeroed(device, n as usize)?;
//! let mut y = DeviceBuffer::<f32>::zeroed(device, n as usize)?;
//! let mut z = DeviceBuffer::<f32>::zeroed(device, n as usize)?;
//! {
//!     let mut args = LaunchArgs::new();
//!     args.arg_mut(&mut x).arg(&n);
//!     // SAFETY: `produce` takes (float*, unsigned) and writes x[..n] only.
//!     unsafe { produce.launch(&a, &cfg, &mut args)? };
//! }
//! {
//!     // On stream `b`, reading `x`: `b` waits (on the GPU) for `produce` on `a`. No event, no sync.
//!     let mut args = LaunchArgs::new();
//!     args.arg(&x).arg_mut(&mut y).arg(&n);
//!     // SAFETY: `consume` takes (const float*, float*, unsigned), reads x[..n] and writes y[..n].
//!     unsafe { consume.launch(&b, &cfg, &mut args)? };
//! }
//! {
//!     // On stream `a` again, writing `z`: nothing orders it after `consume`, so the two overlap.
//!     let mut args = LaunchArgs::new();
//!     args.arg_mut(&mut z).arg(&n);
//!     // SAFETY: as for the first launch.
//!     unsafe { produce.launch(&a, &cfg, &mut args)? };
//! }
//! // The host read waits for `consume` (the writer of `y`), not for the second `produce`.
//! let y = y.to_vec()?;
//! # let _ = y; Ok(()) }
//! ```
//!
//! What each operation waits for and records, captures and graphs, and the escape hatch (untracked
//! uses, `unsafe`): the [`memory`] module.
//!
//! # Layers
//!
//! - [`hip_sys`] / [`hiprtc_sys`]: the raw generated bindings, re-exported as [`sys`] and [`rtc_sys`].
//! - [`result`] and `rtc::result`: each HIP call once, returning [`Result`], owning nothing.
//! - The safe types: [`Device`], [`Stream`], [`Event`], [`DeviceBuffer`], [`PinnedBuffer`],
//!   [`ManagedBuffer`], [`Module`], [`Function`], [`rtc::ProgramBuilder`], [`rtc::Linker`], and
//!   [`Graph`] / [`GraphExec`] (stream capture), [`MemPool`] (stream-ordered allocation), host functions
//!   ([`Stream::launch_host_fn`]), occupancy ([`LaunchConfig::for_occupancy`]), stream flags
//!   ([`StreamFlag`]: streams write and wait on a value, no event), pointer queries ([`pointer`](mod@pointer)) and
//!   device limits ([`limits`]). Ownership points
//!   upward with `Arc`: buffers, streams and events hold their [`Device`]; functions and globals hold their
//!   [`Module`]. Nothing panics in `Drop`, and nothing is freed while queued work may use it.
//!
//! # Finding a GPU
//!
//! [`Device::get`] opens a device by ordinal and fails with [`Error::NoDevice`] where this machine has no
//! usable GPU (no device, no driver, a driver too old: said in words). A program that must run either
//! way asks [`Device::first_usable`]: device 0, or `None` after telling why not. A program's `main` may
//! return [`Report`], which prints a failure in words with its [`Status`]:
//!
//! ```no_run
//! fn main() -> Result<(), hip::Report> {
//!     let Some(device) = hip::Device::first_usable(|why| println!("{why}"))? else {
//!         return Ok(()); // nothing to do without a GPU
//!     };
//!     println!("{} ({})", device.properties()?.name, device.uuid()?);
//!     Ok(())
//! }
//! ```
//!
//! [`Device::select`] picks a device by what a user writes: an ordinal, `GPU-<uuid>` or a PCI bus id.
//! Each device is used through its primary context; non-primary contexts (`hipCtxCreate`), deprecated
//! in HIP, stay out of this crate.
//!
//! # Half precision and model code
//!
//! [`half::f16`] and [`half::bf16`] (re-exported as [`half`]) are element types of every buffer.
//! [`elementwise`] converts between them and `f32` on the device (bit-exact with the `half` crate) and
//! applies a bias and ReLU / GELU over a matrix, with no kernel or `unsafe` of your own;
//! [`ProgramBuilder::half_precision`](rtc::ProgramBuilder::half_precision) gives your HIPRTC / NVRTC
//! programs `__half` and a bfloat16 type on both platforms. `examples/mlp.rs` puts them together with
//! hipBLAS (`blas` feature).
//!
//! # Several GPUs
//!
//! Peer copies ([`Stream::copy_peer_async`], [`Device::enable_peer_access`]) are always there; collectives
//! over RCCL (NCCL on HIP's NVIDIA platform) are the `rccl` module, behind the `rccl` feature.
//!
//! # Deploying a program
//!
//! By default a program is linked to HIP's runtime: on AMD `libamdhip64.so.N` (and HIPRTC, inside it on
//! ROCm 5, `libhiprtc.so.N` from ROCm 6); on HIP's NVIDIA platform the CUDA runtime (`libcudart`), NVRTC
//! (`libnvrtc`) and the driver's `libcuda.so.1` (not the CUDA toolkit's `stubs/` copy, which makes every
//! call fail). The `blas`, `rand` and `fft` features add hipBLAS, hipRAND or hipFFT and what they run on
//! (rocBLAS, rocRAND, rocFFT; on NVIDIA the libraries' NVIDIA backends with cuBLAS, cuRAND, cuFFT), and
//! `rccl` RCCL or NCCL; `blaslt` adds hipBLASLt (AMD only: it has no NVIDIA backend, and the feature's
//! build stops with a message saying so on HIP's NVIDIA platform). Where one is missing the system's loader stops the program before `main` ("error
//! while loading shared libraries", exit status 127).
//!
//! With the `dynamic-loading` feature nothing of HIP, CUDA or the math libraries is linked (RCCL / NCCL
//! still is): each library is opened on first use, from `HIP_RS_AMDHIP64`, `HIP_RS_HIPRTC`,
//! `HIP_RS_CUDART`, `HIP_RS_CUDA_DRIVER`, `HIP_RS_NVRTC`, `HIP_RS_HIPBLAS`, `HIP_RS_HIPRAND`,
//! `HIP_RS_HIPFFT`, `HIP_RS_HIPSOLVER`, `HIP_RS_HIPSPARSE`, `HIP_RS_HIPBLASLT` (a file) or the usual places, and a missing one is [`Error::LibraryNotFound`] (status
//! `backend_not_available`) from every call, listing each path tried: the program starts and can say
//! what to install. A library that opened but has no usable driver behind it is [`Error::NoDevice`].
//!
//! # Errors
//!
//! Every failure is an [`Error`] that keeps the raw `hipError_t` / `hiprtcResult` (unknown values
//! included) and answers [`Error::status`] with a DTL-style [`Status`]; see [`error`] for the table.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]
#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(feature = "blas")]
#[cfg_attr(docsrs, doc(cfg(feature = "blas")))]
pub mod blas;
#[cfg(feature = "blaslt")]
#[cfg_attr(docsrs, doc(cfg(feature = "blaslt")))]
pub mod blaslt;
pub mod bootstrap;
pub mod code_object;
mod dense_shape;
pub mod device;
mod device_select;
pub mod elementwise;
pub mod error;
pub mod event;
#[cfg(feature = "fft")]
#[cfg_attr(docsrs, doc(cfg(feature = "fft")))]
pub mod fft;
pub mod future;
pub mod graph;
pub mod graph_builder;
pub mod host_fn;
mod host_fn_memory;
pub mod ipc;
pub mod launch;
#[cfg(any(
    feature = "blas",
    feature = "blaslt",
    feature = "solver",
    feature = "sparse",
    feature = "rand",
    feature = "fft"
))]
mod library;
pub mod limits;
pub mod memory;
pub mod module;
mod occupancy;
pub mod pointer;
mod queue;
#[cfg(feature = "rand")]
#[cfg_attr(docsrs, doc(cfg(feature = "rand")))]
pub mod rand;
#[cfg(feature = "rccl")]
#[cfg_attr(docsrs, doc(cfg(feature = "rccl")))]
pub mod rccl;
mod release;
pub mod result;
pub mod rtc;
#[cfg(feature = "solver")]
#[cfg_attr(docsrs, doc(cfg(feature = "solver")))]
pub mod solver;
#[cfg(feature = "sparse")]
#[cfg_attr(docsrs, doc(cfg(feature = "sparse")))]
pub mod sparse;
pub mod stream;
pub mod stream_memop;
#[cfg(all(test, any(feature = "blas", feature = "fft")))]
mod test_fuzz;
#[cfg(all(test, any(unix, windows)))]
mod test_time;
pub mod texture;

pub use code_object::CodeObject;
pub use device::{driver_version, runtime_version, Device, DeviceProperties};
pub use device_select::{DeviceSelector, DeviceUuid, PciBusId};
pub use error::{
    BlasErrorCode, Error, FailedGraphNode, FftErrorCode, GraphUpdateFailure, HipErrorCode,
    NcclErrorCode, NoDeviceReason, RandErrorCode, RendezvousFailure, Report, Result, RtcErrorCode,
    SolverErrorCode, SolverFailure, SparseErrorCode, Status,
};
pub use event::Event;
pub use future::{Completion, PinnedCopy, ReadFuture};
pub use graph::{
    Capture, CaptureMode, CaptureStatus, Graph, GraphExec, GraphInstantiateFlags, GraphNodeKind,
    GraphTopology, HostNodeHandle, MemsetNodeParams,
};
pub use graph_builder::{GraphBuilder, GraphNode};
pub use host_fn::{HostFnHandle, HostFnState};
pub use launch::{Dim3, ElementCount, KernelArg, LaunchArgs, LaunchConfig};
pub use memory::{
    Access, DeviceBuffer, DeviceCopy, DeviceMemory, DeviceMemoryMut, DevicePtr, DeviceSlice,
    DeviceSliceMut, GraphPinnedBuffer, GraphPinnedRef, GraphPinnedRefMut, GrowableBuffer,
    HostMemory, HostMemoryMut, ManagedBuffer, MemAdvice, MemAttach, MemPool, PinnedBuffer,
    PinnedFlags, PinnedSlice, PinnedSliceMut, PitchedBuffer, PoolAccess, ReusePolicy,
};
pub use module::{FuncCache, Function, Global, Module};
pub use occupancy::{BlockSizeSuggestion, OccupancyFlags};
pub use stream::Stream;
pub use stream_memop::StreamFlag;

/// The `half` crate: [`half::f16`] and [`half::bf16`] are [`DeviceCopy`] element types (buffers, kernel
/// arguments, collectives). In a kernel `f16` is `__half` and `bf16` `hip_bfloat16` (`__nv_bfloat16` on
/// NVIDIA), or an `unsigned short` holding the bits (the [table](memory#element-types-in-a-kernel)).
pub use half;
/// The raw HIP runtime bindings.
pub use hip_sys as sys;
/// The raw HIPRTC bindings.
pub use hiprtc_sys as rtc_sys;

/// The platform this crate was built for: `"amd"` or `"nvidia"`.
pub const PLATFORM: &str = hip_sys::HIP_PLATFORM;

/// Everything a typical program uses, traits included.
pub mod prelude {
    pub use crate::rtc::ProgramBuilder;
    pub use crate::{
        Access, CaptureMode, Device, DeviceBuffer, DeviceMemory, DeviceMemoryMut, Dim3, Error,
        Event, Function, HostMemory, HostMemoryMut, LaunchArgs, LaunchConfig, ManagedBuffer,
        Module, PinnedBuffer, Result, Status, Stream,
    };
}
