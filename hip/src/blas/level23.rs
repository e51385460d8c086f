//! The calls beyond the first set: level 1 `asum`, `iamax`, `iamin`; level 2 `ger` / `gerc`; level 3
//! `geam`, `trsm`, `syrk`, `herk`; and the handle's math and atomics modes.

use super::calls::{positive_vector, read, write};
use super::shape::{holds, int, Op};
use super::shape23::{ger_len, Diag, Geam, Side, Syrk, Trsm, Uplo};
use super::types::BlasScalar;
use super::types23::BlasComplex;
use super::{check, raw_op, scalar_mode, Handle, Scalar};
#[cfg(not(hipblas_math_mode))]
use crate::error::Error;
use crate::error::Result;
use crate::memory::{Access, DeviceMemory, DeviceMemoryMut};
use hipblas_sys as sys;

fn raw_side(side: Side) -> sys::hipblasSideMode_t {
    match side {
        Side::Left => sys::HIPBLAS_SIDE_LEFT,
        Side::Right => sys::HIPBLAS_SIDE_RIGHT,
    }
}

fn raw_uplo(uplo: Uplo) -> sys::hipblasFillMode_t {
    match uplo {
        Uplo::Upper => sys::HIPBLAS_FILL_MODE_UPPER,
        Uplo::Lower => sys::HIPBLAS_FILL_MODE_LOWER,
    }
}

fn raw_diag(diag: Diag) -> sys::hipblasDiagType_t {
    match diag {
        Diag::NonUnit => sys::HIPBLAS_DIAG_NON_UNIT,
        Diag::Unit => sys::HIPBLAS_DIAG_UNIT,
    }
}

/// hipBLAS's 1-based index of `iamax` / `iamin` as a 0-based one; `None` for an empty vector (hipBLAS
/// answers 0 there).
pub(crate) fn zero_based(index: i32) -> Option<usize> {
    usize::try_from(index).ok()?.checked_sub(1)
}

impl Handle {
    /// `sum(|re x[i]| + |im x[i]|)` over `n` elements `incx` (at least 1) apart (`hipblas?asum`,
    /// `hipblasScasum` / `hipblasDzasum`: for complex types the sum of the absolute real and imaginary
    /// parts, not of the moduli), returned to the host once the call has run.
    pub fn asum<T: BlasScalar>(
        &self,
        n: usize,
        x: &impl DeviceMemory<T>,
        incx: i32,
    ) -> Result<T::Real> {
        positive_vector("asum operand x", x.len(), n, incx)?;
        let ni = int("n", n)?;
        let name = T::NAMES23.asum;
        let _op = self.begin_host_result::<T>(name, &[read(x)])?;
        let mut r = T::Real::default();
        // SAFETY: live handle on x's device (checked, current), pointer mode host: hipBLAS writes one
        // T::Real (the type asum returns for T) to `r` before returning; x spans what n and incx reach
        // (checked), ordered and kept alive by the model.
        check(name, unsafe {
            T::asum(
                self.raw,
                ni,
                x.device_ptr(),
                incx,
                (&mut r as *mut T::Real).cast(),
            )
        })?;
        Ok(r)
    }

    /// [`asum`](Self::asum) into the first element of `result`, on the device, without waiting.
    pub fn asum_into<T: BlasScalar>(
        &self,
        n: usize,
        x: &impl DeviceMemory<T>,
        incx: i32,
        result: &mut impl DeviceMemoryMut<T::Real>,
    ) -> Result<()> {
        positive_vector("asum operand x", x.len(), n, incx)?;
        holds("asum result", result.len(), 1, &|| "one element".into())?;
        let ni = int("n", n)?;
        let name = T::NAMES23.asum;
        let res = (result.device(), result.allocation(), Access::Write);
        let _op = self.begin_device_result(name, &[read(x), res])?;
        // SAFETY: as in asum; pointer mode device: hipBLAS writes one T::Real to `result`'s first
        // element (it holds one, checked), ordered by the model like x.
        check(name, unsafe {
            T::asum(
                self.raw,
                ni,
                x.device_ptr(),
                incx,
                result.device_ptr().cast(),
            )
        })
    }

    /// The position of the first element of largest `|re| + |im|` among `n` elements `incx` (at least 1)
    /// apart (`hipblasI?amax`), returned to the host once the call has run.
    ///
    /// **0-based**, counted in elements of the vector (the `i` of `x[i * incx]`), where hipBLAS answers
    /// 1-based; `None` when `n` is 0.
    pub fn iamax<T: BlasScalar>(
        &self,
        n: usize,
        x: &impl DeviceMemory<T>,
        incx: i32,
    ) -> Result<Option<usize>> {
        self.iamax_min(false, n, x, incx)
    }

    /// As [`iamax`](Self::iamax), for the first element of smallest `|re| + |im|` (`hipblasI?amin`):
    /// 0-based, `None` when `n` is 0.
    pub fn iamin<T: BlasScalar>(
        &self,
        n: usize,
        x: &impl DeviceMemory<T>,
        incx: i32,
    ) -> Result<Option<usize>> {
        self.iamax_min(true, n, x, incx)
    }

    fn iamax_min<T: BlasScalar>(
        &self,
        min: bool,
        n: usize,
        x: &impl DeviceMemory<T>,
        incx: i32,
    ) -> Result<Option<usize>> {
        let what = if min {
            "iamin operand x"
        } else {
            "iamax operand x"
        };
        positive_vector(what, x.len(), n, incx)?;
        let ni = int("n", n)?;
        let name = if min {
            T::NAMES23.iamin
        } else {
            T::NAMES23.iamax
        };
        let _op = self.begin_host_result::<T>(name, &[read(x)])?;
        let mut r = 0i32;
        // SAFETY: as in asum: pointer mode host, one int written to `r` before returning.
        check(name, unsafe {
            let f = if min { T::iamin } else { T::iamax };
            f(self.raw, ni, x.device_ptr(), incx, &mut r)
        })?;
        Ok(zero_based(r))
    }

    /// `A = alpha * x * y^T + A` (`hipblas?ger`; `hipblas?geru` for complex types), A a column-major
    /// `m x n` matrix with leading dimension `lda` (at least `max(1, m)`), x `m` elements `incx` apart,
    /// y `n` elements `incy` apart (non-zero increments).
    #[allow(clippy::too_many_arguments)]
    pub fn ger<'s, T: BlasScalar>(
        &self,
        m: usize,
        n: usize,
        alpha: impl Into<Scalar<'s, T>>,
        x: &impl DeviceMemory<T>,
        incx: i32,
        y: &impl DeviceMemory<T>,
        incy: i32,
        a: &mut impl DeviceMemoryMut<T>,
        lda: usize,
    ) -> Result<()> {
        self.ger_any(false, m, n, alpha.into(), (x, incx), (y, incy), a, lda)
    }

    /// `A = alpha * x * y^H + A` (`hipblas?gerc`; for real types the same as [`ger`](Self::ger)).
    #[allow(clippy::too_many_arguments)]
    pub fn gerc<'s, T: BlasScalar>(
        &self,
        m: usize,
        n: usize,
        alpha: impl Into<Scalar<'s, T>>,
        x: &impl DeviceMemory<T>,
        incx: i32,
        y: &impl DeviceMemory<T>,
        incy: i32,
        a: &mut impl DeviceMemoryMut<T>,
        lda: usize,
    ) -> Result<()> {
        self.ger_any(true, m, n, alpha.into(), (x, incx), (y, incy), a, lda)
    }

    #[allow(clippy::too_many_arguments)]
    fn ger_any<T: BlasScalar>(
        &self,
        conj: bool,
        m: usize,
        n: usize,
        alpha: Scalar<'_, T>,
        (x, incx): (&impl DeviceMemory<T>, i32),
        (y, incy): (&impl DeviceMemory<T>, i32),
        a: &mut impl DeviceMemoryMut<T>,
        lda: usize,
    ) -> Result<()> {
        let [na, nx, ny] = ger_len(m, n, lda, incx, incy)?;
        let shape =
            || format!("a ger of a column-major {m}x{n} matrix with leading dimension {lda}");
        holds("ger operand a", a.len(), na, &shape)?;
        holds("ger operand x", x.len(), nx, &|| {
            format!("a vector of {m} elements {incx} apart")
        })?;
        holds("ger operand y", y.len(), ny, &|| {
            format!("a vector of {n} elements {incy} apart")
        })?;
        let name = if conj {
            T::NAMES23.gerc
        } else {
            T::NAMES23.ger
        };
        let _op = self.begin(name, &[read(x), read(y), write(a)], &[&alpha])?;
        // SAFETY: live handle on the operands' device (checked, current); A, x and y span what the shape
        // reaches (checked; m, n, lda fit in int, checked by ger_len); alpha is a live host value or
        // device element, matching the pointer mode begin set.
        check(name, unsafe {
            T::ger(
                self.raw,
                conj,
                m as i32,
                n as i32,
                alpha.ptr(),
                x.device_ptr(),
                incx,
                y.device_ptr(),
                incy,
                a.device_ptr(),
                lda as i32,
            )
        })
    }

    /// `C = alpha * op(A) + beta * op(B)` (`hipblas?geam`), shaped by `shape`. C is a `&mut` borrow, so it
    /// is never A or B (hipBLAS allows that only with equal leading dimensions).
    pub fn geam<'s, T: BlasScalar>(
        &self,
        shape: &Geam,
        alpha: impl Into<Scalar<'s, T>>,
        a: &impl DeviceMemory<T>,
        beta: impl Into<Scalar<'s, T>>,
        b: &impl DeviceMemory<T>,
        c: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        let (alpha, beta) = (alpha.into(), beta.into());
        scalar_mode(&alpha, &beta)?;
        let (ld, need) = shape.resolve()?;
        let what = || format!("{shape:?}");
        holds("geam operand a", a.len(), need[0], &what)?;
        holds("geam operand b", b.len(), need[1], &what)?;
        holds("geam operand c", c.len(), need[2], &what)?;
        let name = T::NAMES23.geam;
        let _op = self.begin(name, &[read(a), read(b), write(c)], &[&alpha, &beta])?;
        // SAFETY: as in ger: A, B and C span what the shape reaches (checked; values fit in int, checked
        // by resolve); C is a distinct `&mut` borrow, so it is neither A nor B.
        check(name, unsafe {
            T::geam(
                self.raw,
                raw_op(shape.op_a),
                raw_op(shape.op_b),
                shape.m as i32,
                shape.n as i32,
                alpha.ptr(),
                a.device_ptr(),
                ld[0] as i32,
                beta.ptr(),
                b.device_ptr(),
                ld[1] as i32,
                c.device_ptr(),
                ld[2] as i32,
            )
        })
    }

    /// Solves `op(A) X = alpha B` ([`Side::Left`]) or `X op(A) = alpha B` ([`Side::Right`]) for X, which
    /// overwrites B (`hipblas?trsm`), A triangular, shaped by `shape`. A singular A (a zero on a non-unit
    /// diagonal) is not detected: the result holds infinities or NaNs, as in every BLAS.
    pub fn trsm<'s, T: BlasScalar>(
        &self,
        shape: &Trsm,
        alpha: impl Into<Scalar<'s, T>>,
        a: &impl DeviceMemory<T>,
        b: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        let alpha = alpha.into();
        let (ld, need) = shape.resolve()?;
        let what = || format!("{shape:?}");
        holds("trsm operand a", a.len(), need[0], &what)?;
        holds("trsm operand b", b.len(), need[1], &what)?;
        let name = T::NAMES23.trsm;
        let _op = self.begin(name, &[read(a), write(b)], &[&alpha])?;
        // SAFETY: as in ger: A and B span what the shape reaches (checked; values fit in int, checked by
        // resolve); hipBLAS reads only A's triangle, which lies inside that span.
        check(name, unsafe {
            T::trsm(
                self.raw,
                raw_side(shape.side),
                raw_uplo(shape.uplo),
                raw_op(shape.op),
                raw_diag(shape.diag),
                shape.m as i32,
                shape.n as i32,
                alpha.ptr(),
                a.device_ptr(),
                ld[0] as i32,
                b.device_ptr(),
                ld[1] as i32,
            )
        })
    }

    /// `C = alpha * A * A^T + beta * C` ([`Op::N`]) or `alpha * A^T * A + beta * C` ([`Op::T`])
    /// (`hipblas?syrk`), writing only the `shape.uplo` triangle of the `n x n` C. Complex matrices take
    /// [`Op::N`] or [`Op::T`] (a symmetric, not Hermitian, update: see [`herk`](Self::herk)); real ones
    /// [`Op::C`] too, as [`Op::T`].
    pub fn syrk<'s, T: BlasScalar>(
        &self,
        shape: &Syrk,
        alpha: impl Into<Scalar<'s, T>>,
        a: &impl DeviceMemory<T>,
        beta: impl Into<Scalar<'s, T>>,
        c: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        let (alpha, beta) = (alpha.into(), beta.into());
        scalar_mode(&alpha, &beta)?;
        let (ld, need) = shape.resolve("syrk", T::BLAS_COMPLEX.then_some(Op::T))?;
        let what = || format!("{shape:?}");
        holds("syrk operand a", a.len(), need[0], &what)?;
        holds("syrk operand c", c.len(), need[1], &what)?;
        // Real matrices: Op::C is the transpose; give hipBLAS the one every backend takes.
        let op = if T::BLAS_COMPLEX || shape.op == Op::N {
            shape.op
        } else {
            Op::T
        };
        let name = T::NAMES23.syrk;
        let _op = self.begin(name, &[read(a), write(c)], &[&alpha, &beta])?;
        // SAFETY: as in ger: A and C span what the shape reaches (checked; values fit in int, checked
        // by resolve).
        check(name, unsafe {
            T::syrk(
                self.raw,
                raw_uplo(shape.uplo),
                raw_op(op),
                shape.n as i32,
                shape.k as i32,
                alpha.ptr(),
                a.device_ptr(),
                ld[0] as i32,
                beta.ptr(),
                c.device_ptr(),
                ld[1] as i32,
            )
        })
    }

    /// `C = alpha * A * A^H + beta * C` ([`Op::N`]) or `alpha * A^H * A + beta * C` ([`Op::C`])
    /// (`hipblasCherk` / `hipblasZherk`), writing only the `shape.uplo` triangle of the Hermitian `n x n`
    /// C (the imaginary parts of its diagonal are set to zero). `alpha` and `beta` are real. [`Op::T`] is
    /// refused.
    pub fn herk<'s, T: BlasComplex>(
        &self,
        shape: &Syrk,
        alpha: impl Into<Scalar<'s, T::Real>>,
        a: &impl DeviceMemory<T>,
        beta: impl Into<Scalar<'s, T::Real>>,
        c: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        let (alpha, beta) = (alpha.into(), beta.into());
        scalar_mode(&alpha, &beta)?;
        let (ld, need) = shape.resolve("herk", Some(Op::C))?;
        let what = || format!("{shape:?}");
        holds("herk operand a", a.len(), need[0], &what)?;
        holds("herk operand c", c.len(), need[1], &what)?;
        let name = T::HERK;
        let _op = self.begin(name, &[read(a), write(c)], &[&alpha, &beta])?;
        // SAFETY: as in syrk, with real scalars of T's precision.
        check(name, unsafe {
            T::herk(
                self.raw,
                raw_uplo(shape.uplo),
                raw_op(shape.op),
                shape.n as i32,
                shape.k as i32,
                alpha.ptr(),
                a.device_ptr(),
                ld[0] as i32,
                beta.ptr(),
                c.device_ptr(),
                ld[1] as i32,
            )
        })
    }

    /// Whether hipBLAS may use atomic operations (`hipblasSetAtomicsMode`): faster on some calls, but
    /// results may differ from run to run in their last bits. rocBLAS allows them by default, cuBLAS does
    /// not.
    pub fn set_atomics_mode(&self, allowed: bool) -> Result<()> {
        let mode = if allowed {
            sys::HIPBLAS_ATOMICS_ALLOWED
        } else {
            sys::HIPBLAS_ATOMICS_NOT_ALLOWED
        };
        self.device.bind()?;
        // SAFETY: live handle, a valid mode; the handle's device is current.
        check("hipblasSetAtomicsMode", unsafe {
            sys::hipblasSetAtomicsMode(self.raw, mode)
        })
    }

    /// The math mode of later calls (`hipblasSetMathMode`, hipBLAS 2.x and newer: ROCm 6 and 7).
    /// Each backend takes only some modes (see [`MathMode`]) and answers a
    /// [`Blas`](crate::Error::Blas) error (not supported) for the others. hipBLAS 0.x (ROCm 5)
    /// has no math mode: [`NotSupported`](crate::Error::NotSupported) there, whatever the mode.
    pub fn set_math_mode(&self, mode: MathMode) -> Result<()> {
        self.math_mode(mode)
    }

    #[cfg(hipblas_math_mode)]
    fn math_mode(&self, mode: MathMode) -> Result<()> {
        let raw = match mode {
            MathMode::Default => sys::HIPBLAS_DEFAULT_MATH,
            MathMode::Xf32Xdl => sys::HIPBLAS_XF32_XDL_MATH,
            MathMode::Pedantic => sys::HIPBLAS_PEDANTIC_MATH,
            MathMode::Tf32TensorOp => sys::HIPBLAS_TF32_TENSOR_OP_MATH,
            MathMode::DisallowReducedPrecisionReduction => {
                sys::HIPBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION
            }
        };
        self.device.bind()?;
        // SAFETY: live handle, a valid mode; the handle's device is current.
        check("hipblasSetMathMode", unsafe {
            sys::hipblasSetMathMode(self.raw, raw)
        })
    }

    #[cfg(not(hipblas_math_mode))]
    fn math_mode(&self, _mode: MathMode) -> Result<()> {
        Err(Error::NotSupported {
            what: "hipblasSetMathMode",
            reason: "hipBLAS before 2.x (ROCm 5) has no math mode",
        })
    }
}

/// The math mode of a handle ([`Handle::set_math_mode`], `hipblasMath_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MathMode {
    /// `HIPBLAS_DEFAULT_MATH`: the backend's default.
    #[default]
    Default,
    /// `HIPBLAS_XF32_XDL_MATH`: xf32 on the matrix cores of AMD GPUs that have them (rocBLAS only).
    Xf32Xdl,
    /// `HIPBLAS_PEDANTIC_MATH`: no shortcuts (cuBLAS only).
    Pedantic,
    /// `HIPBLAS_TF32_TENSOR_OP_MATH`: TF32 tensor cores for f32 products (cuBLAS only).
    Tf32TensorOp,
    /// `HIPBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION` (cuBLAS only).
    DisallowReducedPrecisionReduction,
}
