//! Random numbers on the device through hipRAND (over rocRAND on AMD, cuRAND on HIP's NVIDIA platform).
//! Feature `rand`: `hip = { features = ["rand"] }`, over `hiprand-sys` (bindgen over the installed
//! `hiprand/hiprand.h`).
//!
//! ```no_run
//! use hip::prelude::*;
//! use hip::rand::{Generator, RngType};
//!
//! let device = Device::get(0)?;
//! let stream = Stream::new(&device)?;
//! let mut rng = Generator::new(&stream, RngType::Philox4x32_10)?;
//! rng.set_seed(42)?;
//! let mut x = DeviceBuffer::<f32>::zeroed(&device, 1 << 20)?;
//! rng.normal(&mut x, 0.0, 1.0)?;
//! # Ok::<(), hip::Error>(())
//! ```
//!
//! # What is checked
//!
//! Before any call: the buffer is on the generator's device; a quasi-random generator fills a multiple of
//! its dimension count; normal and log-normal fills of a pseudo-random generator have an even length and
//! start at a two-element boundary (cuRAND's rules, applied on every platform so a program behaves the same
//! everywhere); `stddev` is positive and finite, `lambda` positive and finite; seeds only go to
//! pseudo-random generators, dimensions (1 to 20000) only to quasi-random ones. A failed check is
//! [`Error::InvalidArgument`] naming the rule, and nothing is queued. Every `hiprandStatus_t` other than
//! success is an [`Error::Rand`] keeping the raw status.
//!
//! Fills are queued on the generator's stream through the memory model, like every other operation of
//! this crate: ordered after other streams' conflicting work on the buffer, before later work on it.
//!
//! # Generators and fills
//!
//! [`RngType`]: the library's pseudo-random default, XORWOW, MRG32k3a, MTGP32, MT19937, Philox4x32-10,
//! and the quasi-random Sobol32, scrambled Sobol32, Sobol64 and scrambled Sobol64
//! ([`Generator::set_dimensions`], 1 to 20000). [`Generator::set_seed`] (pseudo-random only),
//! [`Generator::set_offset`], [`Generator::set_stream`], and [`Generator::set_ordering`]
//! (`hiprandSetGeneratorOrdering`, in hipRAND of ROCm 6 and later; built against ROCm 5's headers it is
//! [`Error::NotSupported`]). Fills: [`Generator::uniform`] in (0, 1], [`Generator::normal`] and
//! [`Generator::log_normal`] (`f32` or `f64`), [`Generator::poisson`] and raw [`Generator::u32`] (`u32`,
//! `unsigned int` in a kernel). In 16 bits ([`f16`](crate::half::f16), [`bf16`](crate::half::bf16)): [`Generator::uniform_half`],
//! [`Generator::normal_half`], [`Generator::log_normal_half`], generated in `f32` and rounded on the
//! device (the same values on every platform: hipRAND's own half generators exist on AMD only). A `Generator` is `Send`, not `Sync`. Every `hiprandStatus_t` maps to a
//! DTL status by [`RandErrorCode::status`](crate::RandErrorCode::status).
//!
//! # Versions, finding hipRAND, deploying
//!
//! | Debian | hipRAND (`HIPRAND_VERSION`) | soname |
//! | --- | --- | --- |
//! | bookworm | 5.3.3 (2.10.9) | `libhiprand.so.1` |
//! | trixie | 5.7.1 | `libhiprand.so.1` |
//! | sid | 6.4.3 (2.12.0) | `libhiprand.so.1` |
//! | experimental | 7.2.4 | `libhiprand.so.1` |
//! | NVIDIA build | 5.2.3 source (2.10.9) | `libhiprand.so.1` |
//!
//! hipRAND's header parses only as C++ (it names rocRAND's C++ types and `__half`): `hiprand-sys` runs
//! bindgen in C++ mode, and needs rocRAND's headers beside hipRAND's (Debian: `librocrand-dev` with
//! `libhiprand-dev`). It looks for `include/hiprand/hiprand.h` under `HIPRAND_PATH`, the HIP root
//! `hip-sys` found, `ROCM_PATH`, `HIP_PATH`, `/opt/rocm`, `/usr`, and stops the build with a message
//! listing every place tried and what to install, unless `dynamic-loading` is on: then the committed
//! bindings are used and `libhiprand.so.1` is opened at run time (`HIP_RS_HIPRAND` names a file).
//!
//! Without `dynamic-loading` a program is linked to hipRAND: the system's loader must find
//! `libhiprand.so.1`, and what it runs on (rocRAND on AMD; on HIP's NVIDIA platform hipRAND's NVIDIA
//! backend with cuRAND, `libcurand`, and the CUDA runtime, NVRTC and the driver's `libcuda.so.1` every
//! program of this crate needs there), before `main` starts, or the program dies with "error while
//! loading shared libraries" (exit status 127). With `hip`'s `dynamic-loading` feature each library is
//! opened on first use, and a missing one is [`Error::LibraryNotFound`] listing every path tried.

mod checks;
mod half;

use crate::device::Device;
use crate::error::{Error, RandErrorCode, Result};
use crate::event::same_device;
use crate::library::{HandleUse, Owner};
use crate::memory::{Access, DeviceCopy, DeviceMemoryMut};
use crate::stream::{Stream, StreamHandle};
use hiprand_sys as sys;
use std::sync::Arc;

pub use self::checks::{Ordering, RngType};
/// The raw bindings (`hiprand-sys`).
pub use hiprand_sys;

/// A hipRAND generator (`hiprandGenerator_t`) on one device, queueing on a stream. Destroyed on drop.
///
/// `Send`, not `Sync`: hipRAND generators are for one thread at a time.
pub struct Generator {
    raw: sys::hiprandGenerator_t,
    kind: RngType,
    dimensions: u32,
    /// The ordering set by [`set_ordering`](Generator::set_ordering), kept for a remade generator.
    #[cfg_attr(not(hiprand_ordering), allow(dead_code))]
    ordering: Option<Ordering>,
    device: Device,
    stream: Arc<StreamHandle>,
    /// Owns `raw`: destroyed when the generator (or its remake) and every graph that captured a fill on
    /// it are gone.
    owner: Arc<Owner<sys::hiprandGenerator_t>>,
    /// Written by every fill: orders the generator's fills (and its state) across streams.
    uses: HandleUse,
}

// SAFETY: a hipRAND generator may be used from any thread, one at a time; `&mut self` on every call that
// uses it, and `Generator` is not `Sync` (the raw pointer), so it never is used from two threads at once.
unsafe impl Send for Generator {}

/// Floating-point element types of the uniform, normal and log-normal fills: `f32` and `f64`.
pub trait RandFloat: DeviceCopy + sealed::Sealed + Copy {
    #[doc(hidden)]
    const NAMES: [&'static str; 3];
    /// # Safety
    /// `g` is a live generator whose device is current; `out` is device memory of that device valid for
    /// writing `n` elements, ordered and kept alive by the caller until the queued fill is done.
    #[doc(hidden)]
    unsafe fn uniform(g: sys::hiprandGenerator_t, out: *mut Self, n: usize)
        -> sys::hiprandStatus_t;
    /// # Safety
    /// `g` is a live generator whose device is current; `out` is device memory of that device valid for
    /// writing `n` elements, ordered and kept alive by the caller until the queued fill is done.
    #[doc(hidden)]
    unsafe fn normal(
        g: sys::hiprandGenerator_t,
        out: *mut Self,
        n: usize,
        mean: Self,
        sd: Self,
    ) -> sys::hiprandStatus_t;
    /// # Safety
    /// `g` is a live generator whose device is current; `out` is device memory of that device valid for
    /// writing `n` elements, ordered and kept alive by the caller until the queued fill is done.
    #[doc(hidden)]
    unsafe fn log_normal(
        g: sys::hiprandGenerator_t,
        out: *mut Self,
        n: usize,
        mean: Self,
        sd: Self,
    ) -> sys::hiprandStatus_t;
    #[doc(hidden)]
    fn finite_positive(v: Self) -> bool;
    #[doc(hidden)]
    fn finite(v: Self) -> bool;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! rand_float {
    ($t:ty, $u:ident, $n:ident, $l:ident) => {
        impl sealed::Sealed for $t {}
        impl RandFloat for $t {
            const NAMES: [&'static str; 3] = [stringify!($u), stringify!($n), stringify!($l)];
            unsafe fn uniform(
                g: sys::hiprandGenerator_t,
                out: *mut Self,
                n: usize,
            ) -> sys::hiprandStatus_t {
                // SAFETY: the caller's (a live generator, `out` valid for `n` elements on its device).
                unsafe { sys::$u(g, out, n) }
            }
            unsafe fn normal(
                g: sys::hiprandGenerator_t,
                out: *mut Self,
                n: usize,
                mean: Self,
                sd: Self,
            ) -> sys::hiprandStatus_t {
                // SAFETY: as in uniform.
                unsafe { sys::$n(g, out, n, mean, sd) }
            }
            unsafe fn log_normal(
                g: sys::hiprandGenerator_t,
                out: *mut Self,
                n: usize,
                mean: Self,
                sd: Self,
            ) -> sys::hiprandStatus_t {
                // SAFETY: as in uniform.
                unsafe { sys::$l(g, out, n, mean, sd) }
            }
            fn finite_positive(v: Self) -> bool {
                v.is_finite() && v > 0.0
            }
            fn finite(v: Self) -> bool {
                v.is_finite()
            }
        }
    };
}
rand_float!(
    f32,
    hiprandGenerateUniform,
    hiprandGenerateNormal,
    hiprandGenerateLogNormal
);
rand_float!(
    f64,
    hiprandGenerateUniformDouble,
    hiprandGenerateNormalDouble,
    hiprandGenerateLogNormalDouble
);

impl Generator {
    /// A generator of `kind` on `stream`'s device, queueing on `stream` (`hiprandCreateGenerator`,
    /// `hiprandSetStream`). Quasi-random generators start with one dimension.
    ///
    /// # Errors
    ///
    /// [`Error::Rand`] with hipRAND's status (a kind the library does not have, no
    /// memory for its state); with `dynamic-loading`,
    /// [`Error::LibraryNotFound`] where hipRAND could not be opened.
    ///
    /// ```no_run
    /// use hip::prelude::*;
    /// use hip::rand::{Generator, RngType};
    ///
    /// let device = Device::get(0)?;
    /// let stream = Stream::new(&device)?;
    /// let mut rng = Generator::new(&stream, RngType::Philox4x32_10)?;
    /// let mut x = DeviceBuffer::<f32>::zeroed(&device, 1 << 20)?;
    /// rng.uniform(&mut x)?; // queued on `stream`
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn new(stream: &Stream, kind: RngType) -> Result<Generator> {
        let device = stream.device().clone();
        device.bind()?;
        let mut raw: sys::hiprandGenerator_t = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; the device is current, so the generator lives on it.
        check("hiprandCreateGenerator", unsafe {
            sys::hiprandCreateGenerator(&mut raw, kind.raw())
        })?;
        let g = Generator {
            raw,
            kind,
            dimensions: 1,
            ordering: None,
            // SAFETY: the live generator just made, owned by no one else; hiprandDestroyGenerator frees it.
            owner: unsafe { Owner::new(raw, &device, destroy) },
            uses: HandleUse::new(&device),
            device,
            stream: Arc::clone(stream.handle()),
        };
        // SAFETY: live generator; the stream is live (kept by `g.stream`) and on its device.
        check("hiprandSetStream", unsafe {
            sys::hiprandSetStream(raw, stream.raw())
        })?;
        Ok(g)
    }

    /// The generator's kind.
    pub fn kind(&self) -> RngType {
        self.kind
    }

    /// Queue later fills on `stream`, of the generator's device ([`Error::DeviceMismatch`] otherwise).
    ///
    /// # Errors
    ///
    /// [`Error::DeviceMismatch`] for a stream of another device; [`Error::Hip`] for making the device
    /// current and ordering the new stream after the generator's last fill; [`Error::Rand`] with what
    /// `hiprandSetStream` returns.
    ///
    /// ```no_run
    /// use hip::rand::{Generator, RngType};
    /// # fn f(a: &hip::Stream, b: &hip::Stream, x: &mut hip::DeviceBuffer<f32>) -> hip::Result<()> {
    /// let mut rng = Generator::new(a, RngType::PseudoDefault)?;
    /// rng.uniform(x)?; // on `a`
    /// rng.set_stream(b)?;
    /// rng.uniform(x)?; // on `b`, after the fill on `a`
    /// # Ok(()) }
    /// ```
    pub fn set_stream(&mut self, stream: &Stream) -> Result<()> {
        let raw = self.raw;
        self.uses.set_stream(
            "rand set_stream",
            &self.device,
            &mut self.stream,
            stream,
            |s| {
                // SAFETY: live generator; the stream is live and on its device (checked), kept alive
                // by the generator while used.
                check("hiprandSetStream", unsafe { sys::hiprandSetStream(raw, s) })
            },
        )?;
        Ok(())
    }

    /// The seed of a pseudo-random generator (`hiprandSetPseudoRandomGeneratorSeed`), and its offset
    /// back to 0 (`hiprandSetGeneratorOffset`): the sequence restarts from its beginning, the values a new
    /// generator of this kind and seed gives, whatever this one generated before. hipRAND's seed call
    /// alone keeps the offset, which each fill advances, so the next fill would continue at the old
    /// position of the new sequence. MTGP32 and MT19937 have no offset ([`RngType::has_offset`]): the
    /// generator is made anew (same kind, stream and ordering), since cuRAND, hipRAND's NVIDIA backend,
    /// keeps an MTGP32 generator's state on a new seed (on an H200 the fill after the seed call continued
    /// the old sequence: 0 of 16 Mi values restarted). To skip values, call
    /// [`set_offset`](Self::set_offset) after this. Quasi-random generators take no seed:
    /// [`Error::InvalidArgument`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a quasi-random generator; [`Error::Hip`] for making the device
    /// current; [`Error::Rand`] with what hipRAND returns for the seed and the offset (or, for MTGP32 and
    /// MT19937, for making the new generator).
    ///
    /// ```no_run
    /// use hip::prelude::*;
    /// use hip::rand::{Generator, RngType};
    /// # fn f(stream: &Stream, x: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// let mut rng = Generator::new(stream, RngType::Philox4x32_10)?;
    /// rng.set_seed(1234)?;
    /// rng.uniform(x)?;
    /// let first = x.to_vec()?;
    /// rng.set_seed(1234)?; // the sequence restarts
    /// rng.uniform(x)?;
    /// assert_eq!(x.to_vec()?, first);
    /// # Ok(()) }
    /// ```
    pub fn set_seed(&mut self, seed: u64) -> Result<()> {
        checks::pseudo_only(self.kind, "seed")?;
        self.device.bind()?;
        if !self.kind.has_offset() {
            return self.remake(seed);
        }
        // SAFETY: live generator.
        check("hiprandSetPseudoRandomGeneratorSeed", unsafe {
            sys::hiprandSetPseudoRandomGeneratorSeed(self.raw, seed)
        })?;
        if self.kind.has_offset() {
            // SAFETY: live generator, of a kind that has an offset.
            check("hiprandSetGeneratorOffset", unsafe {
                sys::hiprandSetGeneratorOffset(self.raw, 0)
            })?;
        }
        Ok(())
    }

    /// Replace the raw generator by a new one of the same kind seeded with `seed`, on the same stream and
    /// with the same ordering (the device is current). On an error the old one stays. The old one is
    /// destroyed as [`Drop`] does: fills it queued stay ordered on the stream.
    fn remake(&mut self, seed: u64) -> Result<()> {
        let mut raw: sys::hiprandGenerator_t = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; the device is current, so the generator lives on it.
        check("hiprandCreateGenerator", unsafe {
            sys::hiprandCreateGenerator(&mut raw, self.kind.raw())
        })?;
        let setup = || -> Result<()> {
            // SAFETY: `raw` is the live generator just made; the stream is live (kept by
            // `self.stream`) and on its device.
            check("hiprandSetStream", unsafe {
                sys::hiprandSetStream(raw, self.stream.raw)
            })?;
            // SAFETY: as above.
            check("hiprandSetPseudoRandomGeneratorSeed", unsafe {
                sys::hiprandSetPseudoRandomGeneratorSeed(raw, seed)
            })?;
            #[cfg(hiprand_ordering)]
            if let Some(order) = self.ordering {
                // SAFETY: as above; `order.raw()` is a hiprandOrdering_t value of the header.
                check("hiprandSetGeneratorOrdering", unsafe {
                    sys::hiprandSetGeneratorOrdering(raw, order.raw() as _)
                })?;
            }
            Ok(())
        };
        if let Err(e) = setup() {
            // SAFETY: the generator made above, used by nothing, destroyed once.
            unsafe { sys::hiprandDestroyGenerator(raw) };
            return Err(e);
        }
        // The old generator is destroyed when its owner goes: now, or after the last graph that
        // captured a fill on it; fills it queued may still run, as for a generator dropped.
        // SAFETY: the live generator made above, owned by no one else; hiprandDestroyGenerator frees it.
        self.owner = unsafe { Owner::new(raw, &self.device, destroy) };
        self.raw = raw;
        Ok(())
    }

    /// Skip the first `offset` values of the sequence (`hiprandSetGeneratorOffset`). MTGP32 and MT19937
    /// have none: hipRAND's `HIPRAND_STATUS_TYPE_ERROR` ([`Error::Rand`]).
    ///
    /// # Errors
    ///
    /// [`Error::Hip`] for making the device current; [`Error::Rand`] with what
    /// `hiprandSetGeneratorOffset` returns (`HIPRAND_STATUS_TYPE_ERROR` for MTGP32 and MT19937).
    ///
    /// ```no_run
    /// use hip::rand::{Generator, RngType};
    /// # fn f(stream: &hip::Stream, x: &mut hip::DeviceBuffer<u32>, worker: u64) -> hip::Result<()> {
    /// let mut rng = Generator::new(stream, RngType::Philox4x32_10)?;
    /// rng.set_seed(7)?;
    /// rng.set_offset(worker * x.len() as u64)?; // each worker its own part of one sequence
    /// rng.u32(x)?;
    /// # Ok(()) }
    /// ```
    pub fn set_offset(&mut self, offset: u64) -> Result<()> {
        self.device.bind()?;
        // SAFETY: live generator.
        check("hiprandSetGeneratorOffset", unsafe {
            sys::hiprandSetGeneratorOffset(self.raw, offset)
        })
    }

    /// The order in which the generator lays out its values (`hiprandSetGeneratorOrdering`, hipRAND of
    /// ROCm 6 and later): a pseudo-random ordering for a pseudo-random generator, `QuasiDefault` for a
    /// quasi-random one ([`Error::InvalidArgument`] otherwise). Built against an older hipRAND (ROCm 5,
    /// and the NVIDIA backend of 5.2.3) it is [`Error::NotSupported`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an ordering of the other family than the generator's,
    /// [`Error::NotSupported`] when built against hipRAND without orderings, [`Error::Hip`] for making
    /// the device current, and [`Error::Rand`] with what `hiprandSetGeneratorOrdering` returns.
    ///
    /// ```no_run
    /// use hip::rand::{Generator, Ordering, RngType};
    /// # fn f(stream: &hip::Stream) -> hip::Result<()> {
    /// let mut rng = Generator::new(stream, RngType::Philox4x32_10)?;
    /// rng.set_ordering(Ordering::PseudoSeeded)?;
    /// # Ok(()) }
    /// ```
    pub fn set_ordering(&mut self, order: Ordering) -> Result<()> {
        checks::ordering(self.kind, order)?;
        self.device.bind()?;
        #[cfg(hiprand_ordering)]
        {
            // SAFETY: live generator; `order.raw()` is a hiprandOrdering_t value of the header.
            check("hiprandSetGeneratorOrdering", unsafe {
                sys::hiprandSetGeneratorOrdering(self.raw, order.raw() as _)
            })?;
            self.ordering = Some(order);
            Ok(())
        }
        #[cfg(not(hiprand_ordering))]
        Err(Error::NotSupported {
            what: "hiprandSetGeneratorOrdering",
            reason: "the hipRAND headers this crate was built against (ROCm 5) have no generator ordering",
        })
    }

    /// The dimension count of a quasi-random generator, 1 to 20000
    /// (`hiprandSetQuasiRandomGeneratorDimensions`); fills are then multiples of it, dimension by
    /// dimension. Pseudo-random generators have none: [`Error::InvalidArgument`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a pseudo-random generator or a count outside 1 to 20000;
    /// [`Error::Hip`] for making the device current; [`Error::Rand`] with what
    /// `hiprandSetQuasiRandomGeneratorDimensions` returns.
    ///
    /// ```no_run
    /// use hip::rand::{Generator, RngType};
    /// # fn f(stream: &hip::Stream, points: &mut hip::DeviceBuffer<f32>) -> hip::Result<()> {
    /// let mut sobol = Generator::new(stream, RngType::Sobol32)?;
    /// sobol.set_dimensions(3)?;
    /// sobol.uniform(points)?; // a multiple of 3 values: all x, then all y, then all z
    /// # Ok(()) }
    /// ```
    pub fn set_dimensions(&mut self, dimensions: u32) -> Result<()> {
        checks::dimensions(self.kind, dimensions)?;
        self.device.bind()?;
        // SAFETY: live generator, a dimension count in hipRAND's range.
        check("hiprandSetQuasiRandomGeneratorDimensions", unsafe {
            sys::hiprandSetQuasiRandomGeneratorDimensions(self.raw, dimensions)
        })?;
        self.dimensions = dimensions;
        Ok(())
    }

    /// Raw 32-bit values (`hiprandGenerate`).
    ///
    /// # Errors
    ///
    /// [`Error::DeviceMismatch`] for `out` on another device than the generator's,
    /// [`Error::InvalidArgument`] for a length that is not a multiple of a quasi-random generator's
    /// dimensions, [`Error::Hip`] for making the device current and ordering the stream, and
    /// [`Error::Rand`] with what hipRAND returns.
    ///
    /// ```no_run
    /// use hip::rand::{Generator, RngType};
    /// # fn f(stream: &hip::Stream, bits: &mut hip::DeviceBuffer<u32>) -> hip::Result<()> {
    /// let mut rng = Generator::new(stream, RngType::Xorwow)?;
    /// rng.u32(bits)?; // every bit pattern equally likely
    /// # Ok(()) }
    /// ```
    pub fn u32(&mut self, out: &mut impl DeviceMemoryMut<u32>) -> Result<()> {
        let n = checks::length(self.kind, self.dimensions, out.len(), None)?;
        self.fill("hiprandGenerate", out, |g, p| {
            // SAFETY: `p` is `out`'s device address, valid for `n` u32s.
            unsafe { sys::hiprandGenerate(g, p.cast(), n) }
        })
    }

    /// Uniform values in (0, 1] (`hiprandGenerateUniform`, `...Double`).
    ///
    /// # Errors
    ///
    /// [`Error::DeviceMismatch`] for `out` on another device than the generator's,
    /// [`Error::InvalidArgument`] for a length that is not a multiple of a quasi-random generator's
    /// dimensions, [`Error::Hip`] for making the device current and ordering the stream, and
    /// [`Error::Rand`] with what hipRAND returns.
    ///
    /// ```no_run
    /// use hip::prelude::*;
    /// use hip::rand::{Generator, RngType};
    /// # fn f(stream: &Stream, x: &mut DeviceBuffer<f64>) -> hip::Result<()> {
    /// let mut rng = Generator::new(stream, RngType::Mrg32k3a)?;
    /// rng.uniform(x)?;
    /// rng.uniform(&mut x.slice_mut(..16)?)?; // a view: only its elements
    /// # Ok(()) }
    /// ```
    pub fn uniform<T: RandFloat>(&mut self, out: &mut impl DeviceMemoryMut<T>) -> Result<()> {
        let n = checks::length(self.kind, self.dimensions, out.len(), None)?;
        // SAFETY: `p` is `out`'s device address, valid for `n` elements.
        self.fill(T::NAMES[0], out, |g, p| unsafe {
            T::uniform(g, p.cast(), n)
        })
    }

    /// Normal values of `mean` and `stddev` (`hiprandGenerateNormal`, `...Double`).
    ///
    /// Checked before hipRAND is called ([`Error::InvalidArgument`] naming the rule, nothing queued):
    /// - a pseudo-random generator writes normal values in pairs (Box-Muller), so `out` must hold an even
    ///   number of elements and start at a two-element boundary (an address that is a multiple of
    ///   `2 * size_of::<T>()`): a whole buffer always does (allocations are aligned far beyond that); a
    ///   view does when it starts at an even element and has an even length (`slice_mut(2..10)`, not
    ///   `slice_mut(1..9)`). These are cuRAND's rules, applied on AMD too, so a program behaves the same
    ///   on both;
    /// - a quasi-random generator fills whole points instead: a multiple of its dimensions, from any
    ///   element;
    /// - `mean` finite, `stddev` positive and finite;
    /// - `out` on the generator's device ([`Error::DeviceMismatch`]).
    ///
    /// In a kernel the values are `float` (`f32`) or `double` (`f64`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a rule above that does not hold, [`Error::DeviceMismatch`] for
    /// `out` on another device, [`Error::Hip`] for making the device current and ordering the stream, and
    /// [`Error::Rand`] with what hipRAND returns.
    ///
    /// ```no_run
    /// use hip::rand::{Generator, RngType};
    /// # fn f(stream: &hip::Stream, weights: &mut hip::DeviceBuffer<f32>) -> hip::Result<()> {
    /// let mut rng = Generator::new(stream, RngType::Philox4x32_10)?;
    /// rng.set_seed(0)?;
    /// rng.normal(weights, 0.0, 0.02)?; // an even length, for a pseudo-random generator
    /// # Ok(()) }
    /// ```
    pub fn normal<T: RandFloat>(
        &mut self,
        out: &mut impl DeviceMemoryMut<T>,
        mean: T,
        stddev: T,
    ) -> Result<()> {
        self.fill_with_moments(T::NAMES[1], out, mean, stddev, T::normal)
    }

    /// Log-normal values whose logarithm has `mean` and `stddev` (`hiprandGenerateLogNormal`, `...Double`).
    /// The same rules as [`normal`](Self::normal): for a pseudo-random generator an even length starting
    /// at a two-element boundary; for a quasi-random one whole points.
    ///
    /// # Errors
    ///
    /// As [`normal`](Self::normal): [`Error::InvalidArgument`] for a rule that does not hold (`mean`
    /// finite, `stddev` positive and finite, the length and alignment), [`Error::DeviceMismatch`] for
    /// `out` on another device, [`Error::Hip`] for making the device current and ordering the stream, and
    /// [`Error::Rand`] with what hipRAND returns.
    ///
    /// ```no_run
    /// use hip::rand::{Generator, RngType};
    /// # fn f(stream: &hip::Stream, prices: &mut hip::DeviceBuffer<f64>) -> hip::Result<()> {
    /// let mut rng = Generator::new(stream, RngType::PseudoDefault)?;
    /// rng.log_normal(prices, 0.0, 0.25)?;
    /// # Ok(()) }
    /// ```
    pub fn log_normal<T: RandFloat>(
        &mut self,
        out: &mut impl DeviceMemoryMut<T>,
        mean: T,
        stddev: T,
    ) -> Result<()> {
        self.fill_with_moments(T::NAMES[2], out, mean, stddev, T::log_normal)
    }

    /// [`normal`](Self::normal) and [`log_normal`](Self::log_normal): the moments and the length checked,
    /// then `generate` (`T`'s function of the two) fills `out`.
    fn fill_with_moments<T: RandFloat>(
        &mut self,
        name: &'static str,
        out: &mut impl DeviceMemoryMut<T>,
        mean: T,
        stddev: T,
        generate: unsafe fn(sys::hiprandGenerator_t, *mut T, usize, T, T) -> sys::hiprandStatus_t,
    ) -> Result<()> {
        checks::moments(T::finite(mean), T::finite_positive(stddev))?;
        let n = checks::length(
            self.kind,
            self.dimensions,
            out.len(),
            Some(out.device_ptr() as usize / std::mem::size_of::<T>()),
        )?;
        // SAFETY: as in uniform.
        self.fill(name, out, |g, p| unsafe {
            generate(g, p.cast(), n, mean, stddev)
        })
    }

    /// Poisson-distributed counts of mean `lambda` (`hiprandGeneratePoisson`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a `lambda` that is not positive and finite, or a length that is not
    /// a multiple of a quasi-random generator's dimensions; [`Error::DeviceMismatch`] for `out` on another
    /// device; [`Error::Hip`] for making the device current and ordering the stream; [`Error::Rand`]
    /// with what hipRAND returns.
    ///
    /// ```no_run
    /// use hip::rand::{Generator, RngType};
    /// # fn f(stream: &hip::Stream, arrivals: &mut hip::DeviceBuffer<u32>) -> hip::Result<()> {
    /// let mut rng = Generator::new(stream, RngType::PseudoDefault)?;
    /// rng.poisson(arrivals, 4.5)?; // 4.5 on average
    /// # Ok(()) }
    /// ```
    pub fn poisson(&mut self, out: &mut impl DeviceMemoryMut<u32>, lambda: f64) -> Result<()> {
        checks::lambda(lambda)?;
        let n = checks::length(self.kind, self.dimensions, out.len(), None)?;
        self.fill("hiprandGeneratePoisson", out, |g, p| {
            // SAFETY: as in u32.
            unsafe { sys::hiprandGeneratePoisson(g, p.cast(), n, lambda) }
        })
    }

    /// Queue one fill of `out` on the generator's stream, ordered by the memory model.
    fn fill<T: DeviceCopy>(
        &mut self,
        call: &'static str,
        out: &mut impl DeviceMemoryMut<T>,
        f: impl FnOnce(sys::hiprandGenerator_t, *mut std::ffi::c_void) -> sys::hiprandStatus_t,
    ) -> Result<()> {
        same_device(call, &self.device, out.device())?;
        if out.is_empty() {
            return Ok(());
        }
        let op = self.stream.begin_op();
        if op.is_capturing() {
            // A graph replaying the fill needs the generator (and its state) alive.
            self.owner.keep_in_capture(&op);
        }
        // The generator's state is written too: the first fill on a new stream waits for the last one.
        crate::memory::tracking::use_both(
            &op,
            self.uses.operand(),
            (out.allocation(), Access::Write),
        )?;
        self.device.bind()?;
        // The guard `op` keeps captures from starting or ending until the fill is queued.
        let status = f(self.raw, out.device_ptr());
        drop(op);
        check(call, status)
    }
}

/// `hiprandDestroyGenerator`, for the generator's [`Owner`]. Fills it queued may still run: their output
/// buffers are freed only after their recorded users (the fill's stream among them); the generator's own
/// state is freed by the library with hipFree / cudaFree, which wait for the device's queued work, so no
/// queued fill reads freed state.
///
/// # Safety
/// `raw` is a live hipRAND generator, destroyed once.
unsafe fn destroy(raw: sys::hiprandGenerator_t) {
    // SAFETY: the caller's contract.
    unsafe { sys::hiprandDestroyGenerator(raw) };
}

/// `Ok` for success, else the error for `call`.
#[inline]
pub(crate) fn check(call: &'static str, status: sys::hiprandStatus_t) -> Result<()> {
    crate::error::math_status(&LIBRARY, call, status.0, |raw| Error::Rand {
        call,
        code: RandErrorCode(raw),
    })
}

const LIBRARY: crate::error::MathLibrary = crate::error::math_library!(
    sys,
    "hipRAND (libhiprand)",
    "Debian: apt-get install libhiprand-dev; ROCm: hiprand; or point HIP_RS_HIPRAND at the library",
    hiprandRsStatusLibraryNotFound,
    hiprandRsStatusSymbolNotFound,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_errors() {
        assert!(check("x", sys::hiprandStatus(0)).is_ok());
        let e = check("hiprandGenerateNormal", sys::hiprandStatus(105)).unwrap_err();
        assert_eq!(e.rand_code(), Some(RandErrorCode(105)));
        assert!(matches!(
            check("x", sys::hiprandRsStatusLibraryNotFound),
            Err(Error::LibraryNotFound { .. })
        ));
        assert!(matches!(
            check("x", sys::hiprandRsStatusSymbolNotFound),
            Err(Error::NotSupported { what: "x", .. })
        ));
    }
}
