//! Built-in element-wise kernels: precision conversions between `f32`, [`f16`](struct@f16) and [`bf16`] buffers,
//! and a bias plus activation over a column-major matrix. Nothing to write, compile or launch by hand,
//! and no `unsafe`.
//!
//! ```no_run
//! use hip::prelude::*;
//! use hip::elementwise::{self, Activation, ColumnMajor};
//! use hip::half::f16;
//!
//! let device = Device::get(0)?;
//! let stream = Stream::new(&device)?;
//! let x = DeviceBuffer::from_slice(&device, &[1.5f32, -2.0, 65504.0, 1e-8])?;
//! let mut h = DeviceBuffer::<f16>::zeroed(&device, 4)?;
//! elementwise::convert(&stream, &x, &mut h)?;
//! assert_eq!(h.to_vec()?[0], f16::from_f32(1.5));
//!
//! // A 2 x 3 column-major matrix: add a bias per row, then ReLU.
//! let mut c = DeviceBuffer::from_slice(&device, &[1.0f32, -1.0, 2.0, -2.0, 3.0, -3.0])?;
//! let bias = DeviceBuffer::from_slice(&device, &[0.5f32, 0.5])?;
//! elementwise::bias_activation(&stream, &ColumnMajor::new(2, 3), &bias, Activation::Relu, &mut c)?;
//! assert_eq!(c.to_vec()?, [1.5, 0.0, 2.5, 0.0, 3.5, 0.0]);
//! # Ok::<(), hip::Error>(())
//! ```
//!
//! # How it runs
//!
//! The kernels are one small program this crate carries as source, compiled with HIPRTC (NVRTC on HIP's
//! NVIDIA platform) the first time a device uses one of them, then kept loaded for the rest of the
//! process (the [compile cache](crate::rtc::CompileCache) keeps the code between processes). The source
//! includes no header, so it compiles the same with every HIPRTC and NVRTC this crate supports. Calls
//! are queued on the stream given and return at once, ordered by the memory model like every other
//! operation: the source is read, the destination written. [`prepare`] compiles and loads them ahead
//! of time, e.g. before capturing a graph that uses them.
//!
//! # Conversions
//!
//! [`convert`] rounds exactly as the [`half`] crate does on the host (round to nearest, ties to even;
//! out of range to infinity; NaN stays NaN, quiet, with its high payload bits): a buffer converted on
//! the device holds the same bits as `f16::from_f32` / `bf16::from_f32` of each element. Widening
//! (`f16`/`bf16` to `f32`) is exact. `f16` <-> `bf16` goes through `f32`, rounding once.
//!
//! # Bias and activation
//!
//! [`bias_activation`] is `C = act(C + bias)` ([`activation`] is `C = act(C)`) over a column-major `rows x cols` matrix with leading
//! dimension `ld` (`bias` has one element per row, so a row-major `batch x features` activation
//! matrix is `ColumnMajor::new(features, batch)`), computed in `f32` for every element type. This is
//! what hipBLASLt's epilogues fuse into the GEMM (`hip::blaslt`, AMD only); here it is a separate pass
//! over `C`, for hipBLAS GEMMs and for platforms without hipBLASLt.
//!
//! # Element types in your own kernels
//!
//! For kernels you write, [`ProgramBuilder::half_precision`](crate::rtc::ProgramBuilder::half_precision)
//! gives HIPRTC / NVRTC programs `__half` and the bfloat16 type on both platforms.

mod kernels;
#[cfg(test)]
mod tests;

use crate::error::{Error, Result};
use crate::launch::{KernelArg, LaunchArgs, LaunchConfig};
use crate::memory::{check_len, DeviceCopy, DeviceMemory, DeviceMemoryMut};
use crate::module::{Function, Module};
use crate::rtc::ProgramBuilder;
use crate::stream::Stream;
use half::{bf16, f16};
use std::sync::{Arc, Mutex};

mod sealed {
    pub trait Sealed {}
}

/// An element type of the built-in kernels: `f32`, [`f16`](struct@f16), [`bf16`].
pub trait Element: DeviceCopy + sealed::Sealed {
    /// The kernels' name for it (`f32`, `f16`, `bf16`).
    const NAME: &'static str;
}

impl sealed::Sealed for f32 {}
impl sealed::Sealed for f16 {}
impl sealed::Sealed for bf16 {}
impl Element for f32 {
    const NAME: &'static str = "f32";
}
impl Element for f16 {
    const NAME: &'static str = "f16";
}
impl Element for bf16 {
    const NAME: &'static str = "bf16";
}

/// The activation [`bias_activation`] applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// None: only the bias is added.
    Identity,
    /// `max(x, 0)` (NaN becomes 0).
    Relu,
    /// GELU, tanh approximation: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`, as hipBLASLt's and
    /// cuBLASLt's GELU epilogues compute it.
    Gelu,
}

impl Activation {
    fn code(self) -> i32 {
        match self {
            Activation::Identity => 0,
            Activation::Relu => 1,
            Activation::Gelu => 2,
        }
    }
}

/// A column-major matrix in a buffer: element `(i, j)` at `i + j * ld`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnMajor {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Leading dimension (elements from one column to the next), at least `rows`.
    pub ld: usize,
}

impl ColumnMajor {
    /// A `rows x cols` matrix stored densely (`ld = rows`).
    pub fn new(rows: usize, cols: usize) -> ColumnMajor {
        ColumnMajor {
            rows,
            cols,
            ld: rows,
        }
    }

    /// The same matrix with leading dimension `ld`.
    pub fn ld(self, ld: usize) -> ColumnMajor {
        ColumnMajor { ld, ..self }
    }

    /// Elements a buffer must hold: `ld * (cols - 1) + rows` (0 for an empty matrix), checked: an `ld`
    /// below `rows` or a size past `usize` is [`Error::InvalidArgument`].
    pub fn required_len(&self) -> Result<usize> {
        if self.rows == 0 {
            return Ok(0); // no rows: any leading dimension will do
        }
        crate::dense_shape::matrix_len("bias_activation matrix", self.rows, self.cols, self.ld)
    }
}

/// Pairs [`convert`] converts between: `f32` <-> `f16`, `f32` <-> `bf16`, `f16` <-> `bf16`.
pub trait ConvertTo<T: Element>: Element {}
impl ConvertTo<f16> for f32 {}
impl ConvertTo<bf16> for f32 {}
impl ConvertTo<f32> for f16 {}
impl ConvertTo<f32> for bf16 {}
impl ConvertTo<bf16> for f16 {}
impl ConvertTo<f16> for bf16 {}

/// Convert every element of `src` into `dst` on `stream` (see the [module](self) for the rounding).
/// The lengths must be equal ([`Error::LengthMismatch`]); both buffers on the stream's device
/// ([`Error::DeviceMismatch`]). Empty buffers queue nothing.
pub fn convert<F: ConvertTo<T>, T: Element>(
    stream: &Stream,
    src: &(impl DeviceMemory<F> + KernelArg),
    dst: &mut (impl DeviceMemoryMut<T> + KernelArg),
) -> Result<()> {
    check_len("convert destination", src.len(), dst.len())?;
    if src.is_empty() {
        return Ok(());
    }
    let kernel = kernel(stream, &["convert_", F::NAME, "_", T::NAME])?;
    let n = src.len() as u64;
    let mut args = LaunchArgs::new();
    args.arg(src).arg_mut(dst).arg(&n);
    let config = LaunchConfig::new(grid_for(src.len()), BLOCK);
    // SAFETY: convert_<F>_<T>(const F*, T*, u64 n) reads src[0..n) and writes dst[0..n): both hold n
    // elements (equal lengths, checked) of the types the kernel names (`Element::NAME`, sealed); dst is
    // passed with arg_mut, src with arg.
    unsafe { kernel.launch(stream, &config, &mut args) }
}

/// `C = act(C + bias)` on `stream`, `bias` one element per row, computed in `f32`. `c` must hold
/// `matrix.required_len()` elements and `bias` at least `matrix.rows` ([`Error::InvalidArgument`]
/// naming which, nothing queued); all on the stream's device ([`Error::DeviceMismatch`]). An empty
/// matrix queues nothing.
pub fn bias_activation<T: Element>(
    stream: &Stream,
    matrix: &ColumnMajor,
    bias: &(impl DeviceMemory<T> + KernelArg),
    activation: Activation,
    c: &mut (impl DeviceMemoryMut<T> + KernelArg),
) -> Result<()> {
    if bias.len() < matrix.rows {
        return Err(short(
            matrix,
            "bias_activation bias",
            bias.len(),
            matrix.rows,
        ));
    }
    run_matrix(
        stream,
        &["bias_act_", T::NAME],
        matrix,
        activation,
        "bias_activation operand c",
        c,
        Some(bias),
    )
}

/// `C = act(C)` on `stream`: [`bias_activation`] without a bias.
pub fn activation<T: Element>(
    stream: &Stream,
    matrix: &ColumnMajor,
    activation: Activation,
    c: &mut (impl DeviceMemoryMut<T> + KernelArg),
) -> Result<()> {
    run_matrix(
        stream,
        &["act_", T::NAME],
        matrix,
        activation,
        "activation operand c",
        c,
        None,
    )
}

fn short(matrix: &ColumnMajor, what: &'static str, len: usize, need: usize) -> Error {
    Error::InvalidArgument {
        what,
        value: format!("{len} elements"),
        reason: format!("{matrix:?} needs at least {need}"),
    }
}

/// Check `c` against `matrix` and queue the kernel `name` over it (nothing for an empty matrix).
fn run_matrix<T: Element>(
    stream: &Stream,
    name: &[&str],
    matrix: &ColumnMajor,
    activation: Activation,
    what: &'static str,
    c: &mut (impl DeviceMemoryMut<T> + KernelArg),
    bias: Option<&dyn KernelArg>,
) -> Result<()> {
    let need = matrix.required_len()?;
    if c.len() < need {
        return Err(short(matrix, what, c.len(), need));
    }
    if need == 0 {
        return Ok(());
    }
    let kernel = kernel(stream, name)?;
    let [rows, cols, ld] = [matrix.rows, matrix.cols, matrix.ld].map(|v| v as u64);
    let act = activation.code();
    let mut args = LaunchArgs::new();
    args.arg_mut(c);
    if let Some(b) = bias {
        args.arg(b);
    }
    args.arg(&rows).arg(&cols).arg(&ld).arg(&act);
    let grid = (
        grid_for(matrix.rows),
        u32::try_from(matrix.cols)
            .unwrap_or(u32::MAX)
            .min(MAX_GRID_Y),
    );
    // SAFETY: [bias_]act_<T>(T* c, [const T* bias,] u64 rows, u64 cols, u64 ld, int act) writes
    // c[i + j ld] for i < rows, j < cols: below required_len() <= c.len() (checked here); reads
    // bias[i], i < rows <= bias.len() (checked by bias_activation, the one caller passing a bias of
    // element type T); T is the kernel's element type (sealed Element::NAME). c is passed with arg_mut,
    // bias with arg.
    unsafe { kernel.launch(stream, &LaunchConfig::new(grid, BLOCK), &mut args) }
}

const BLOCK: u32 = 256;
/// Grid rows / columns past these are covered by the kernels' grid-stride loops.
const MAX_GRID_X: u32 = 4096;
const MAX_GRID_Y: u32 = 65535;

fn grid_for(n: usize) -> u32 {
    let blocks = n.div_ceil(BLOCK as usize);
    u32::try_from(blocks)
        .unwrap_or(u32::MAX)
        .clamp(1, MAX_GRID_X)
}

/// The built-in program loaded on one device, and its kernels.
struct Loaded {
    ordinal: usize,
    functions: Vec<(&'static str, Function)>,
}

/// Programs loaded so far, one per device: each device compiles and loads once per process.
static LOADED: Mutex<Vec<Arc<Loaded>>> = Mutex::new(Vec::new());

/// Compile and load the built-in kernels on `device` now, rather than at their first use: before a
/// graph capture (loading a module while a stream is being captured may invalidate the capture on
/// HIP's NVIDIA platform), or before a timed loop. Does nothing when they are loaded already.
pub fn prepare(device: &crate::Device) -> Result<()> {
    loaded(device).map(drop)
}

/// The kernel named by the concatenation of `name` on `stream`'s device, compiling and loading the
/// program on first use. The name comes in parts so that a launch formats no string.
fn kernel(stream: &Stream, name: &[&str]) -> Result<Function> {
    loaded(stream.device())?
        .functions
        .iter()
        .find(|(n, _)| is_named(n, name))
        .map(|(_, f)| f.clone())
        .ok_or_else(|| Error::InvalidArgument {
            what: "built-in kernel",
            value: name.concat(),
            reason: "not in the built-in program".into(),
        })
}

/// Whether `name` is the concatenation of `parts`.
fn is_named(name: &str, parts: &[&str]) -> bool {
    let mut rest = name;
    for part in parts {
        match rest.strip_prefix(part) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    rest.is_empty()
}

/// The program loaded on `device`, compiled and loaded on first use.
fn loaded(device: &crate::Device) -> Result<Arc<Loaded>> {
    let loaded = {
        let mut all = LOADED.lock().unwrap_or_else(|p| p.into_inner());
        match all.iter().find(|l| l.ordinal == device.ordinal()) {
            Some(l) => l.clone(),
            None => {
                let l = Arc::new(load(device)?);
                all.push(l.clone());
                l
            }
        }
    };
    Ok(loaded)
}

fn load(device: &crate::Device) -> Result<Loaded> {
    device.bind()?;
    let compiled = ProgramBuilder::new(kernels::SOURCE)
        .name("hip_rs_elementwise.hip")
        .compile()?;
    let module = Module::load_data(device, compiled.code())?;
    let functions = kernels::NAMES
        .iter()
        .map(|&n| Ok((n, module.function(n)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(Loaded {
        ordinal: device.ordinal(),
        functions,
    })
}
