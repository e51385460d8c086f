//! FFTs on the device through hipFFT (over rocFFT on AMD, cuFFT on HIP's NVIDIA platform). Feature
//! `fft`: `hip = { features = ["fft"] }`, over `hipfft-sys` (bindgen over the installed
//! `hipfft/hipfft.h`).
//!
//! ```no_run
//! use hip::prelude::*;
//! use hip::fft::{Complex32, Direction, Plan, Shape, Transform};
//!
//! let device = Device::get(0)?;
//! let stream = Stream::new(&device)?;
//! // 16 transforms of 1024 points each.
//! let plan = Plan::<f32>::new(&stream, Transform::C2C, &Shape::new(&[1024]).batch(16))?;
//! let x = DeviceBuffer::<Complex32>::zeroed(&device, 16 * 1024)?;
//! let mut y = DeviceBuffer::<Complex32>::zeroed(&device, 16 * 1024)?;
//! plan.c2c(Direction::Forward, &x, &mut y)?;
//! # Ok::<(), hip::Error>(())
//! ```
//!
//! # What is checked
//!
//! A plan's shape is checked when it is made: 1 to 3 dimensions of at least one element, a batch of at least
//! one, advanced layouts whose embed sizes hold their dimensions, non-zero strides, outputs of the batch that
//! never share elements (nor the inputs of a complex-to-real plan, which overwrites them), every value within
//! hipFFT's C `int`, every size computed without overflow. Each execution then checks the buffers against the
//! plan: each must hold every element its side spans (real sides `n`, complex sides `n / 2 + 1` in the last
//! dimension), be on the plan's device; an in-place complex transform needs one layout for both sides, an
//! in-place real one the basic layout (rows padded to `2 * (n / 2 + 1)` reals). A failed check is
//! [`Error::InvalidArgument`] (or [`Error::DeviceMismatch`]) and nothing is queued. Every `hipfftResult`
//! other than success is an [`Error::Fft`] keeping the raw code.
//!
//! Executions are queued on the plan's stream through the memory model. A complex-to-real transform may
//! overwrite its input (cuFFT and rocFFT both do): [`Plan::c2r`] takes the input as `&mut`.
//! Unnormalised, as in hipFFT: a forward then inverse transform gives `n` times the input.
//!
//! # Plans
//!
//! 1, 2 or 3 dimensions (the last fastest, as in C), complex-to-complex, real-to-complex and
//! complex-to-real ([`Transform`]), `f32` and `f64`, batched, with optional advanced layouts
//! ([`Layout`]: `embed`, `stride`, `dist`) for each side; [`Plan::work_size`] reports hipFFT's work area,
//! [`Plan::input_len`] / [`Plan::output_len`] what each side must hold. In place: complex-to-complex
//! ([`Plan::c2c_in_place`], one layout for both sides) and real ([`Plan::r2c_in_place`],
//! [`Plan::c2r_in_place`]: plans of the basic layout, the reals in rows padded to `2 * (n / 2 + 1)`
//! values, written and read through `reinterpret_mut::<f32>()`). A `hipfftResult` maps to its DTL status
//! by [`FftErrorCode::status`](crate::FftErrorCode::status).
//!
//! # Element types in a kernel
//!
//! [`Complex32`] / [`Complex64`] (`num_complex::Complex`, `#[repr(C)] { re, im }`) are `float2` /
//! `double2` in a kernel (`hipFloatComplex` / `hipDoubleComplex` of `hip/hip_complex.h`, hipFFT's
//! `hipfftComplex` / `hipfftDoubleComplex`): `re` is `.x`, `im` is `.y`. Real sides are `float` /
//! `double`. The whole table is in the [`memory`](crate::memory#element-types-in-a-kernel) module.
//!
//! # Versions, finding hipFFT, deploying
//!
//! | Debian | hipFFT | soname |
//! | --- | --- | --- |
//! | bookworm | none | |
//! | trixie | 6.1.2 (1.0.14) | `libhipfft.so.0` |
//! | sid | 6.4.3 (1.0.18) | `libhipfft.so.0` |
//! | experimental | 7.2.4 (1.0.22) | `libhipfft.so.0` |
//! | NVIDIA build | 5.2.3 source (1.0.8) | `libhipfft.so.0` |
//!
//! `hipfftHandle` is a pointer on AMD and an `int` on NVIDIA (cuFFT's): this module never depends on
//! which. `hipfft-sys` looks for `include/hipfft/hipfft.h` under `HIPFFT_PATH`, the HIP root `hip-sys`
//! found, `ROCM_PATH`, `HIP_PATH`, `/opt/rocm`, `/usr`, and stops the build with a message listing every
//! place tried and what to install (Debian trixie or newer: `libhipfft-dev`), unless `dynamic-loading`
//! is on: then the committed bindings are used and `libhipfft.so.0` is opened at run time
//! (`HIP_RS_HIPFFT` names a file).
//!
//! Without `dynamic-loading` a program is linked to hipFFT: the system's loader must find
//! `libhipfft.so.0`, and what it runs on (rocFFT on AMD; on HIP's NVIDIA platform hipFFT's NVIDIA backend
//! with cuFFT, `libcufft`, and the CUDA runtime, NVRTC and the driver's `libcuda.so.1` every program of
//! this crate needs there), before `main` starts, or the program dies with "error while loading shared
//! libraries" (exit status 127). With `hip`'s `dynamic-loading` feature each library is opened on first
//! use, and a missing one is [`Error::LibraryNotFound`] listing every path tried.

mod layout;

pub use self::layout::{Layout, Shape, Transform};
/// The raw bindings (`hipfft-sys`).
pub use hipfft_sys;
/// The `num-complex` crate: [`Complex32`] and [`Complex64`] are the complex element types.
pub use num_complex;
pub use num_complex::{Complex, Complex32, Complex64};

use crate::device::Device;
use crate::error::{Error, FftErrorCode, Result};
use crate::event::same_device;
use crate::library::{HandleUse, Owner};
use crate::memory::{Access, DeviceCopy, DeviceMemory, DeviceMemoryMut, DevicePtr};
use crate::stream::{Stream, StreamHandle};
use hipfft_sys as sys;
use std::marker::PhantomData;
use std::sync::Arc;

/// A transform's direction (`HIPFFT_FORWARD` -1, `HIPFFT_BACKWARD` 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// exp(-2 pi i jk / n).
    Forward,
    /// exp(+2 pi i jk / n), unnormalised.
    Inverse,
}

mod sealed {
    pub trait Sealed {}
}

/// The precisions of a plan: `f32` (C2C, R2C, C2R) and `f64` (Z2Z, D2Z, Z2D).
pub trait FftFloat: DeviceCopy + sealed::Sealed {
    #[doc(hidden)]
    const TYPES: [sys::hipfftType; 3];
    #[doc(hidden)]
    const NAMES: [&'static str; 3];
    /// # Safety
    /// `plan` is a live plan of this precision and of transform `t` (its layout as made), whose device is
    /// current; `input` and `output` are device memory of that device spanning what the plan's layout
    /// reaches on each side (the same address when in place), ordered and kept alive by the caller until
    /// the queued transform is done; `dir` is `HIPFFT_FORWARD` or `HIPFFT_BACKWARD` for C2C.
    #[doc(hidden)]
    unsafe fn exec(
        plan: sys::hipfftHandle,
        t: Transform,
        input: DevicePtr,
        output: DevicePtr,
        dir: i32,
    ) -> sys::hipfftResult;
}

macro_rules! fft_float {
    ($t:ty, [$c2c:ident, $r2c:ident, $c2r:ident], [$e1:ident, $e2:ident, $e3:ident]) => {
        impl sealed::Sealed for $t {}
        impl FftFloat for $t {
            const TYPES: [sys::hipfftType; 3] = [sys::$c2c, sys::$r2c, sys::$c2r];
            const NAMES: [&'static str; 3] = [stringify!($e1), stringify!($e2), stringify!($e3)];
            unsafe fn exec(
                plan: sys::hipfftHandle,
                t: Transform,
                input: DevicePtr,
                output: DevicePtr,
                dir: i32,
            ) -> sys::hipfftResult {
                // SAFETY: the caller's (a live plan of this precision and transform, buffers spanning what
                // it reaches); the casts name the header's element types, of this type's layout.
                unsafe {
                    match t {
                        Transform::C2C => sys::$e1(plan, input.cast(), output.cast(), dir),
                        Transform::R2C => sys::$e2(plan, input.cast(), output.cast()),
                        Transform::C2R => sys::$e3(plan, input.cast(), output.cast()),
                    }
                }
            }
        }
    };
}
fft_float!(
    f32,
    [HIPFFT_C2C, HIPFFT_R2C, HIPFFT_C2R],
    [hipfftExecC2C, hipfftExecR2C, hipfftExecC2R]
);
fft_float!(
    f64,
    [HIPFFT_Z2Z, HIPFFT_D2Z, HIPFFT_Z2D],
    [hipfftExecZ2Z, hipfftExecD2Z, hipfftExecZ2D]
);

/// A hipFFT plan (`hipfftHandle`) of one transform and shape, on one device, queueing on a stream.
/// Destroyed on drop. `Send`, not `Sync`.
pub struct Plan<T: FftFloat> {
    raw: sys::hipfftHandle,
    transform: Transform,
    spans: [usize; 2],
    same_layouts: bool,
    basic: bool,
    work_size: usize,
    device: Device,
    stream: Arc<StreamHandle>,
    /// Owns `raw`: destroyed when the plan and every graph that captured an execution are gone.
    owner: Arc<Owner<sys::hipfftHandle>>,
    /// Written by every execution: orders the plan's executions (and its work area) across streams.
    uses: HandleUse,
    _t: PhantomData<*const T>,
}

// SAFETY: a hipFFT plan may be used from any thread, one at a time; `Plan` is not `Sync` (the raw
// pointer marker), so `&Plan` never crosses threads.
unsafe impl<T: FftFloat> Send for Plan<T> {}

impl<T: FftFloat> Plan<T> {
    /// A plan of `transform` over `shape` on `stream`'s device, queueing on `stream` (`hipfftCreate`,
    /// `hipfftMakePlanMany`, `hipfftSetStream`). Planning is slow next to an execution (the library may
    /// allocate work space and build kernels): make a plan once per shape and keep it.
    ///
    /// # Errors
    ///
    /// [`Error::Fft`] with hipFFT's result for a shape hipFFT refuses (its handle is then destroyed);
    /// [`Error::InvalidArgument`] for a shape or layout this crate refuses before hipFFT sees it; with
    /// `dynamic-loading`, [`Error::LibraryNotFound`] where hipFFT could not be opened.
    ///
    /// ```no_run
    /// use hip::prelude::*;
    /// use hip::fft::{Plan, Shape, Transform};
    ///
    /// let device = Device::get(0)?;
    /// let stream = Stream::new(&device)?;
    /// let plan = Plan::<f32>::new(&stream, Transform::C2C, &Shape::new(&[1024]).batch(8))?;
    /// # let _ = plan;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn new(stream: &Stream, transform: Transform, shape: &Shape) -> Result<Plan<T>> {
        let checked = layout::check(transform, shape)?;
        let device = stream.device().clone();
        device.bind()?;
        let kind = T::TYPES[transform as usize];
        let mut dims = checked.dims.clone();
        // Null embeds: the basic layout (stride 1 and distance 0 are then ignored).
        let (mut ie, is, id, mut oe, os, od) = match &checked.layouts {
            None => (None, 1, 0, None, 1, 0),
            Some([(ie, is, id), (oe, os, od)]) => {
                (Some(ie.clone()), *is, *id, Some(oe.clone()), *os, *od)
            }
        };
        let ie = ie.as_mut().map_or(std::ptr::null_mut(), |e| e.as_mut_ptr());
        let oe = oe.as_mut().map_or(std::ptr::null_mut(), |e| e.as_mut_ptr());
        // hipfftMakePlanMany's out-parameter; the plan's size is read below with hipfftGetSize, as before.
        let mut work = 0usize;
        let raw = create_then_make(
            || {
                // SAFETY: zero is a valid hipfftHandle value on both platforms (a null pointer, or
                // cuFFT's int), and hipfftCreate overwrites it.
                let mut raw: sys::hipfftHandle = unsafe { std::mem::zeroed() };
                // SAFETY: `raw` is a valid out-pointer; the device is current.
                check("hipfftCreate", unsafe { sys::hipfftCreate(&mut raw) })?;
                Ok(raw)
            },
            |raw| {
                // SAFETY: `raw` was just created; `dims` has `rank` sizes; each embed is null (basic
                // layout) or has `rank` sizes (checked); the out-pointer is a live local.
                check("hipfftMakePlanMany", unsafe {
                    sys::hipfftMakePlanMany(
                        raw,
                        dims.len() as i32,
                        dims.as_mut_ptr(),
                        ie,
                        is,
                        id,
                        oe,
                        os,
                        od,
                        kind,
                        checked.batch,
                        &mut work,
                    )
                })
            },
            |raw| {
                // SAFETY: created above, its plan not made, used by nothing, destroyed once.
                unsafe { sys::hipfftDestroy(raw) };
            },
        )?;
        let mut plan = Plan {
            raw,
            transform,
            spans: checked.spans,
            same_layouts: shape.input == shape.output,
            basic: shape.input.is_none() && shape.output.is_none(),
            work_size: 0,
            // SAFETY: the live plan just made, owned by no one else; hipfftDestroy frees it.
            owner: unsafe { Owner::new(raw, &device, destroy) },
            uses: HandleUse::new(&device),
            device,
            stream: Arc::clone(stream.handle()),
            _t: PhantomData,
        };
        // SAFETY: live plan; the stream is live (kept by `plan.stream`) and on its device.
        check("hipfftSetStream", unsafe {
            sys::hipfftSetStream(raw, stream.raw())
        })?;
        // SAFETY: live plan, valid out-pointer.
        check("hipfftGetSize", unsafe {
            sys::hipfftGetSize(raw, &mut plan.work_size)
        })?;
        Ok(plan)
    }

    /// The bytes of device memory hipFFT set aside as the plan's work area (`hipfftGetSize`).
    pub fn work_size(&self) -> usize {
        self.work_size
    }

    /// Elements the input must hold (reals for R2C, complex values otherwise).
    pub fn input_len(&self) -> usize {
        self.spans[0]
    }

    /// Elements the output must hold (reals for C2R, complex values otherwise).
    pub fn output_len(&self) -> usize {
        self.spans[1]
    }

    /// Queue later executions on `stream`, of the plan's device ([`Error::DeviceMismatch`] otherwise).
    ///
    /// # Errors
    ///
    /// [`Error::DeviceMismatch`] for a stream of another device; [`Error::Hip`] for making the device
    /// current and ordering the new stream after the plan's last execution; [`Error::Fft`] with what
    /// `hipfftSetStream` returns.
    ///
    /// ```no_run
    /// use hip::fft::{Complex32, Direction, Plan};
    /// # fn f(plan: &mut Plan<f32>, other: &hip::Stream, x: &mut hip::DeviceBuffer<Complex32>) -> hip::Result<()> {
    /// plan.set_stream(other)?;
    /// plan.c2c_in_place(Direction::Forward, x)?; // queued on `other`
    /// # Ok(()) }
    /// ```
    pub fn set_stream(&mut self, stream: &Stream) -> Result<()> {
        let raw = self.raw;
        self.uses.set_stream(
            "fft set_stream",
            &self.device,
            &mut self.stream,
            stream,
            |s| {
                // SAFETY: live plan; the stream is live and on its device (checked), kept alive by the
                // plan while used.
                check("hipfftSetStream", unsafe { sys::hipfftSetStream(raw, s) })
            },
        )?;
        Ok(())
    }

    /// A complex-to-complex transform from `input` into `output` (`hipfftExecC2C` / `Z2Z`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a plan made for another transform or a buffer too short for
    /// the side it is (see [`input_len`](Self::input_len), [`output_len`](Self::output_len));
    /// [`Error::DeviceMismatch`] for a buffer of another device than the plan's; [`Error::Hip`] for
    /// making the device current and ordering the stream; [`Error::Fft`] with what hipFFT returns.
    ///
    /// ```no_run
    /// use hip::fft::{Complex32, Direction, Plan, Shape, Transform};
    /// # fn f(stream: &hip::Stream) -> hip::Result<()> {
    /// let plan = Plan::<f32>::new(stream, Transform::C2C, &Shape::new(&[256, 256]))?;
    /// let image = hip::DeviceBuffer::<Complex32>::zeroed(stream.device(), 256 * 256)?;
    /// let mut spectrum = hip::DeviceBuffer::<Complex32>::zeroed(stream.device(), 256 * 256)?;
    /// plan.c2c(Direction::Forward, &image, &mut spectrum)?;
    /// # Ok(()) }
    /// ```
    pub fn c2c(
        &self,
        dir: Direction,
        input: &impl DeviceMemory<Complex<T>>,
        output: &mut impl DeviceMemoryMut<Complex<T>>,
    ) -> Result<()> {
        self.exec(Transform::C2C, dir, (input, Access::Read), output)
    }

    /// A complex-to-complex transform in place (the plan's input and output layouts must be the same).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a plan made for another transform, for a plan whose input and
    /// output layouts differ, or a buffer too short for the side it is (see
    /// [`input_len`](Self::input_len), [`output_len`](Self::output_len)); [`Error::DeviceMismatch`]
    /// for a buffer of another device than the plan's; [`Error::Hip`] for making the device current
    /// and ordering the stream; [`Error::Fft`] with what hipFFT returns.
    ///
    /// ```no_run
    /// use hip::fft::{Complex32, Direction, Plan, Shape, Transform};
    /// # fn f(stream: &hip::Stream, x: &mut hip::DeviceBuffer<Complex32>) -> hip::Result<()> {
    /// let plan = Plan::<f32>::new(stream, Transform::C2C, &Shape::new(&[4096]))?;
    /// plan.c2c_in_place(Direction::Forward, x)?;
    /// plan.c2c_in_place(Direction::Inverse, x)?; // x is now 4096 times what it was: unnormalised
    /// # Ok(()) }
    /// ```
    pub fn c2c_in_place(
        &self,
        dir: Direction,
        data: &mut impl DeviceMemoryMut<Complex<T>>,
    ) -> Result<()> {
        self.expect(Transform::C2C)?;
        if !self.same_layouts {
            return Err(Error::InvalidArgument {
                what: "in-place FFT",
                value: "different input and output layouts".into(),
                reason: "a transform in place reads and writes one layout: make the plan with one (or none)".into(),
            });
        }
        self.check_len("FFT data", data.len(), self.spans[0].max(self.spans[1]))?;
        same_device("fft", &self.device, data.device())?;
        let op = self.stream.begin_op();
        if op.is_capturing() {
            // A graph replaying the execution needs the plan (and its work area) alive.
            self.owner.keep_in_capture(&op);
        }
        crate::memory::tracking::use_both(
            &op,
            self.uses.operand(),
            (data.allocation(), Access::Write),
        )?;
        self.device.bind()?;
        let call = T::NAMES[0];
        // SAFETY: live plan of this precision and C2C; `data` spans what both sides reach (checked), on
        // the plan's device (checked), ordered by the model (recorded as written by the stream).
        check(call, unsafe {
            T::exec(
                self.raw,
                Transform::C2C,
                data.device_ptr(),
                data.device_ptr(),
                raw_dir(dir),
            )
        })
    }

    /// A real-to-complex (forward) transform (`hipfftExecR2C` / `D2Z`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a plan made for another transform or a buffer too short for
    /// the side it is (see [`input_len`](Self::input_len), [`output_len`](Self::output_len));
    /// [`Error::DeviceMismatch`] for a buffer of another device than the plan's; [`Error::Hip`] for
    /// making the device current and ordering the stream; [`Error::Fft`] with what hipFFT returns.
    ///
    /// ```no_run
    /// use hip::fft::{Complex32, Plan, Shape, Transform};
    /// use hip::prelude::*;
    /// # fn f(stream: &Stream, signal: &DeviceBuffer<f32>) -> hip::Result<()> {
    /// let n = 1024;
    /// let plan = Plan::<f32>::new(stream, Transform::R2C, &Shape::new(&[n]))?;
    /// let mut spectrum = hip::DeviceBuffer::<Complex32>::zeroed(stream.device(), n / 2 + 1)?;
    /// plan.r2c(&signal.slice(..n)?, &mut spectrum)?;
    /// # Ok(()) }
    /// ```
    pub fn r2c(
        &self,
        input: &impl DeviceMemory<T>,
        output: &mut impl DeviceMemoryMut<Complex<T>>,
    ) -> Result<()> {
        self.exec(
            Transform::R2C,
            Direction::Forward,
            (input, Access::Read),
            output,
        )
    }

    /// A real-to-complex transform in place: `data` holds, for each transform, the reals with every row
    /// of the last dimension padded to `2 * (n / 2 + 1)` values (the complex row's size; write them
    /// through [`DeviceMemoryMut::reinterpret_mut`] as `T`), and the spectrum replaces them. Plans of the
    /// basic layout only (hipFFT's in-place real layout); `data` holds [`output_len`](Self::output_len)
    /// complex values.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a plan made for another transform, for a plan with an
    /// advanced layout, or a buffer too short for the side it is (see
    /// [`input_len`](Self::input_len), [`output_len`](Self::output_len)); [`Error::DeviceMismatch`]
    /// for a buffer of another device than the plan's; [`Error::Hip`] for making the device current
    /// and ordering the stream; [`Error::Fft`] with what hipFFT returns.
    ///
    /// ```no_run
    /// use hip::fft::{Complex32, Plan, Shape, Transform};
    /// use hip::prelude::*;
    /// # fn f(stream: &Stream, signal: &[f32; 1024]) -> hip::Result<()> {
    /// let plan = Plan::<f32>::new(stream, Transform::R2C, &Shape::new(&[1024]))?;
    /// let mut data = DeviceBuffer::<Complex32>::zeroed(stream.device(), plan.output_len())?; // 513
    /// data.reinterpret_mut::<f32>()?.slice_mut(..1024)?.copy_from_host(signal)?; // a padded row
    /// plan.r2c_in_place(&mut data)?;
    /// # Ok(()) }
    /// ```
    pub fn r2c_in_place(&self, data: &mut impl DeviceMemoryMut<Complex<T>>) -> Result<()> {
        self.real_in_place(Transform::R2C, Direction::Forward, data)
    }

    /// A complex-to-real transform in place: the spectrum in `data` ([`input_len`](Self::input_len)
    /// complex values) is replaced by the reals, each row of the last dimension padded to
    /// `2 * (n / 2 + 1)` values. Plans of the basic layout only.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a plan made for another transform, for a plan with an
    /// advanced layout, or a buffer too short for the side it is (see
    /// [`input_len`](Self::input_len), [`output_len`](Self::output_len)); [`Error::DeviceMismatch`]
    /// for a buffer of another device than the plan's; [`Error::Hip`] for making the device current
    /// and ordering the stream; [`Error::Fft`] with what hipFFT returns.
    ///
    /// ```no_run
    /// use hip::fft::{Complex32, Plan, Shape, Transform};
    /// use hip::prelude::*;
    /// # fn f(stream: &Stream, spectrum: &mut DeviceBuffer<Complex32>) -> hip::Result<()> {
    /// let plan = Plan::<f32>::new(stream, Transform::C2R, &Shape::new(&[1024]))?;
    /// plan.c2r_in_place(spectrum)?; // 513 complex values in, 1024 reals (row padded to 1026) out
    /// let reals = spectrum.reinterpret::<f32>()?.slice(..1024)?.to_vec()?;
    /// # Ok(()) }
    /// ```
    pub fn c2r_in_place(&self, data: &mut impl DeviceMemoryMut<Complex<T>>) -> Result<()> {
        self.real_in_place(Transform::C2R, Direction::Inverse, data)
    }

    fn real_in_place(
        &self,
        t: Transform,
        dir: Direction,
        data: &mut impl DeviceMemoryMut<Complex<T>>,
    ) -> Result<()> {
        self.expect(t)?;
        if !self.basic {
            return Err(Error::InvalidArgument {
                what: "in-place FFT",
                value: "an advanced layout".into(),
                reason: "real transforms in place use hipFFT's padded basic layout: make the plan without layouts"
                    .into(),
            });
        }
        // The complex side: the output of R2C, the input of C2R; the padded reals take the same bytes.
        let complex = if t == Transform::R2C {
            self.spans[1]
        } else {
            self.spans[0]
        };
        self.check_len("FFT data", data.len(), complex)?;
        same_device("fft", &self.device, data.device())?;
        let op = self.stream.begin_op();
        if op.is_capturing() {
            // A graph replaying the execution needs the plan (and its work area) alive.
            self.owner.keep_in_capture(&op);
        }
        crate::memory::tracking::use_both(
            &op,
            self.uses.operand(),
            (data.allocation(), Access::Write),
        )?;
        self.device.bind()?;
        // SAFETY: live plan of this precision and transform (checked), basic layout: in place it reads and
        // writes the padded real rows and the complex rows, both within `complex` complex values, which
        // `data` holds (checked), on the plan's device (checked), ordered by the model.
        check(T::NAMES[t as usize], unsafe {
            T::exec(
                self.raw,
                t,
                data.device_ptr(),
                data.device_ptr(),
                raw_dir(dir),
            )
        })
    }

    /// A complex-to-real (inverse) transform (`hipfftExecC2R` / `Z2D`). The libraries may overwrite the
    /// input, so it is taken as `&mut` and counts as written.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a plan made for another transform or a buffer too short for
    /// the side it is (see [`input_len`](Self::input_len), [`output_len`](Self::output_len));
    /// [`Error::DeviceMismatch`] for a buffer of another device than the plan's; [`Error::Hip`] for
    /// making the device current and ordering the stream; [`Error::Fft`] with what hipFFT returns.
    ///
    /// ```no_run
    /// use hip::fft::{Complex32, Plan, Shape, Transform};
    /// # fn f(stream: &hip::Stream, spectrum: &mut hip::DeviceBuffer<Complex32>) -> hip::Result<()> {
    /// let plan = Plan::<f32>::new(stream, Transform::C2R, &Shape::new(&[1024]))?;
    /// let mut signal = hip::DeviceBuffer::<f32>::zeroed(stream.device(), 1024)?;
    /// plan.c2r(spectrum, &mut signal)?; // `spectrum` (513 values) may be overwritten
    /// # Ok(()) }
    /// ```
    pub fn c2r(
        &self,
        input: &mut impl DeviceMemoryMut<Complex<T>>,
        output: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        self.exec(
            Transform::C2R,
            Direction::Inverse,
            (&*input, Access::Write),
            output,
        )
    }

    fn exec<I: DeviceCopy, O: DeviceCopy>(
        &self,
        t: Transform,
        dir: Direction,
        (input, in_access): (&impl DeviceMemory<I>, Access),
        output: &mut impl DeviceMemoryMut<O>,
    ) -> Result<()> {
        self.expect(t)?;
        self.check_len("FFT input", input.len(), self.spans[0])?;
        self.check_len("FFT output", output.len(), self.spans[1])?;
        same_device("fft", &self.device, input.device())?;
        same_device("fft", &self.device, output.device())?;
        let op = self.stream.begin_op();
        if op.is_capturing() {
            // A graph replaying the execution needs the plan (and its work area) alive.
            self.owner.keep_in_capture(&op);
        }
        let mut uses = [
            (input.allocation(), in_access),
            (output.allocation(), Access::Write),
            self.uses.operand(),
        ];
        crate::memory::tracking::by_address(&mut uses);
        for (allocation, access) in uses {
            allocation.use_on(&op, access)?;
        }
        self.device.bind()?;
        let call = T::NAMES[t as usize];
        // SAFETY: live plan of this precision and transform (checked); each buffer spans what its side
        // reaches (checked against the plan's layout), on the plan's device (checked); distinct borrows,
        // so the output does not overlap the input. Ordered by the model: the stream waits for their
        // conflicting users and is recorded as their user.
        check(call, unsafe {
            T::exec(
                self.raw,
                t,
                input.device_ptr(),
                output.device_ptr(),
                raw_dir(dir),
            )
        })
    }

    fn expect(&self, t: Transform) -> Result<()> {
        if self.transform == t {
            Ok(())
        } else {
            Err(Error::InvalidArgument {
                what: "FFT execution",
                value: format!("{t:?}"),
                reason: format!("the plan was made for {:?}", self.transform),
            })
        }
    }

    fn check_len(&self, what: &'static str, len: usize, need: usize) -> Result<()> {
        if len >= need {
            Ok(())
        } else {
            Err(Error::InvalidArgument {
                what,
                value: format!("a buffer of {len} elements"),
                reason: format!(
                    "the plan ({:?}) reaches {need} elements on this side",
                    self.transform
                ),
            })
        }
    }
}

/// `hipfftDestroy`, for the plan's [`Owner`]. Executions it queued may still run: their buffers are
/// freed only after their recorded users (the plan's stream among them); the plan's own work area is
/// freed by the library with hipFree / cudaFree, which wait for the device's queued work.
///
/// # Safety
/// `raw` is a live hipFFT plan, destroyed once.
unsafe fn destroy(raw: sys::hipfftHandle) {
    // SAFETY: the caller's contract.
    unsafe { sys::hipfftDestroy(raw) };
}

/// Make a plan in a handle of its own: `create` the handle (`hipfftCreate`), `make` the plan in it
/// (`hipfftMakePlanMany`), and give a handle whose plan could not be made to `destroy` (`hipfftDestroy`).
/// hipFFT's `hipfftPlanMany` does the first two but returns the second's error with the handle it
/// created, which nothing then destroys: every failed plan leaked one.
fn create_then_make<H: Copy>(
    create: impl FnOnce() -> Result<H>,
    make: impl FnOnce(H) -> Result<()>,
    destroy: impl FnOnce(H),
) -> Result<H> {
    let raw = create()?;
    match make(raw) {
        Ok(()) => Ok(raw),
        Err(e) => {
            destroy(raw);
            Err(e)
        }
    }
}

fn raw_dir(dir: Direction) -> i32 {
    match dir {
        // `#define HIPFFT_FORWARD -1` and `HIPFFT_BACKWARD 1`: bindgen types them differently.
        Direction::Forward => -1,
        Direction::Inverse => 1,
    }
}

/// `Ok` for success, else the error for `call`.
#[inline]
pub(crate) fn check(call: &'static str, status: sys::hipfftResult) -> Result<()> {
    crate::error::math_status(&LIBRARY, call, status.0, |raw| Error::Fft {
        call,
        code: FftErrorCode(raw),
    })
}

const LIBRARY: crate::error::MathLibrary = crate::error::math_library!(
    sys,
    "hipFFT (libhipfft)",
    "Debian trixie or newer: apt-get install libhipfft-dev; ROCm: hipfft; or point HIP_RS_HIPFFT at the library",
    hipfftRsResultLibraryNotFound,
    hipfftRsResultSymbolNotFound,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_are_the_header_values_and_results_map_to_errors() {
        // bindgen types the two macros differently (-1: i32, 1: u32): compare as i64.
        assert_eq!(
            i64::from(raw_dir(Direction::Forward)),
            sys::HIPFFT_FORWARD as i64
        );
        assert_eq!(
            i64::from(raw_dir(Direction::Inverse)),
            sys::HIPFFT_BACKWARD as i64
        );
        assert!(check("x", sys::hipfftResult_t(0)).is_ok());
        let e = check("hipfftPlanMany", sys::hipfftResult_t(8)).unwrap_err();
        assert_eq!(e.fft_code(), Some(FftErrorCode(8)));
        assert!(matches!(
            check("x", sys::hipfftRsResultLibraryNotFound),
            Err(Error::LibraryNotFound { .. })
        ));
        assert!(matches!(
            check("x", sys::hipfftRsResultSymbolNotFound),
            Err(Error::NotSupported { what: "x", .. })
        ));
        assert_eq!(
            <f32 as FftFloat>::TYPES,
            [sys::HIPFFT_C2C, sys::HIPFFT_R2C, sys::HIPFFT_C2R]
        );
        assert_eq!(
            <f64 as FftFloat>::TYPES,
            [sys::HIPFFT_Z2Z, sys::HIPFFT_D2Z, sys::HIPFFT_Z2D]
        );
    }

    #[test]
    fn a_handle_whose_plan_cannot_be_made_is_destroyed() {
        use std::cell::RefCell;
        let destroyed = RefCell::new(Vec::new());
        let refused = || -> Result<()> { check("hipfftMakePlanMany", sys::hipfftResult_t(4)) };
        // The plan cannot be made (HIPFFT_INVALID_VALUE): its handle goes, and make's error comes back.
        let e = create_then_make(|| Ok(7), |_| refused(), |h| destroyed.borrow_mut().push(h))
            .unwrap_err();
        assert_eq!(e.fft_code(), Some(FftErrorCode(4)));
        assert_eq!(*destroyed.borrow(), [7]);
        // Made: the handle is the plan's, not destroyed.
        let made = create_then_make(|| Ok(8), |_| Ok(()), |h| destroyed.borrow_mut().push(h));
        assert_eq!(made.unwrap(), 8);
        // Not created: nothing to destroy, and make is not called.
        let e = create_then_make(
            || -> Result<i32> { Err(check("hipfftCreate", sys::hipfftResult_t(2)).unwrap_err()) },
            |_| panic!("made without a handle"),
            |h| destroyed.borrow_mut().push(h),
        )
        .unwrap_err();
        assert_eq!(e.fft_code(), Some(FftErrorCode(2)));
        assert_eq!(*destroyed.borrow(), [7]);
    }
}
