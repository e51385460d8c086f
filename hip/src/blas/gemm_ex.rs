//! `gemm_ex`: GEMM over `f16` / `bf16` (and `f32`) inputs with an explicit compute type
//! (`hipblasGemmEx`). Its signature changed across hipBLAS: 0.x takes `hipblasDatatype_t` throughout,
//! 2.x adds `hipblasGemmEx_v2` taking `hipDataType` and `hipblasComputeType_t`, 3.x has only the latter
//! under the plain name. The build script picks one (`cfg(hipblas_api)`).

use super::calls::check_operands;
use super::shape::Gemm;
use super::{check, raw_op, Handle, Scalar};
use crate::error::{Error, Result};
use crate::memory::{Access, DeviceCopy, DeviceMemory, DeviceMemoryMut};
use half::{bf16, f16};
use hipblas_sys as sys;

mod sealed {
    pub trait Sealed {}
}

#[cfg(hipblas_api = "v1")]
type DataType = sys::hipblasDatatype_t;
#[cfg(not(hipblas_api = "v1"))]
type DataType = sys::hipDataType;

/// An element type of [`Handle::gemm_ex`]'s matrices: [`half::f16`], [`half::bf16`] and `f32`.
pub trait GemmExType: DeviceCopy + sealed::Sealed {
    #[doc(hidden)]
    const DATA_TYPE: DataType;
}

macro_rules! ex_type {
    ($($t:ty => $v1:ident, $v2:ident);* $(;)?) => { $(
        impl sealed::Sealed for $t {}
        impl GemmExType for $t {
            #[cfg(hipblas_api = "v1")]
            const DATA_TYPE: DataType = sys::$v1;
            #[cfg(not(hipblas_api = "v1"))]
            const DATA_TYPE: DataType = sys::$v2;
        }
    )* };
}
ex_type!(f16 => HIPBLAS_R_16F, HIP_R_16F; bf16 => HIPBLAS_R_16B, HIP_R_16BF; f32 => HIPBLAS_R_32F, HIP_R_32F);

/// The precision `gemm_ex` computes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComputeType {
    /// Single precision (`HIPBLAS_COMPUTE_32F`): f16 / bf16 inputs with f32 accumulation.
    F32,
    /// Half precision (`HIPBLAS_COMPUTE_16F`): f16 inputs and output only.
    F16,
}

/// `alpha` or `beta` of [`Handle::gemm_ex`]: a host value (`f32` or [`half::f16`], converted to the
/// compute type), or a device scalar ([`Scalar::device`]) already in the compute type's representation:
/// `f32` for [`ComputeType::F32`], [`half::f16`] for [`ComputeType::F16`], read when the call runs.
pub struct ExScalar<'a>(ExKind<'a>);

enum ExKind<'a> {
    F32(Scalar<'a, f32>),
    F16(Scalar<'a, f16>),
}

impl From<f32> for ExScalar<'_> {
    fn from(v: f32) -> Self {
        ExScalar(ExKind::F32(v.into()))
    }
}

impl From<f16> for ExScalar<'_> {
    fn from(v: f16) -> Self {
        ExScalar(ExKind::F16(v.into()))
    }
}

impl<'a> From<Scalar<'a, f32>> for ExScalar<'a> {
    fn from(v: Scalar<'a, f32>) -> Self {
        ExScalar(ExKind::F32(v))
    }
}

impl<'a> From<Scalar<'a, f16>> for ExScalar<'a> {
    fn from(v: Scalar<'a, f16>) -> Self {
        ExScalar(ExKind::F16(v))
    }
}

/// `alpha` and `beta` in the compute type's representation.
enum Resolved<'a> {
    F32([Scalar<'a, f32>; 2]),
    F16([Scalar<'a, f16>; 2]),
}

impl<'a> ExScalar<'a> {
    fn is_device(&self) -> bool {
        match &self.0 {
            ExKind::F32(s) => s.is_device(),
            ExKind::F16(s) => s.is_device(),
        }
    }

    /// As `compute` reads it: a host value converted, a device scalar of the compute type as is, a device
    /// scalar of the other type refused.
    fn resolve<T: DeviceCopy>(
        self,
        compute: ComputeType,
        which: &'static str,
        convert: impl Fn(&ExKind<'a>) -> Option<T>,
        keep: impl FnOnce(ExKind<'a>) -> Option<Scalar<'a, T>>,
    ) -> Result<Scalar<'a, T>> {
        if let Some(v) = convert(&self.0) {
            return Ok(v.into());
        }
        keep(self.0).ok_or_else(|| Error::InvalidArgument {
            what: which,
            value: "a device scalar of the other element type".into(),
            reason: format!(
                "compute type {compute:?} reads device scalars as {}",
                match compute {
                    ComputeType::F32 => "f32",
                    ComputeType::F16 => "f16",
                }
            ),
        })
    }
}

fn resolve<'a>(
    alpha: ExScalar<'a>,
    beta: ExScalar<'a>,
    compute: ComputeType,
) -> Result<Resolved<'a>> {
    if alpha.is_device() != beta.is_device() {
        return Err(super::mixed_scalars(beta.is_device()));
    }
    Ok(match compute {
        ComputeType::F32 => {
            let host = |k: &ExKind<'a>| match k {
                ExKind::F32(s) => s.host_value(),
                ExKind::F16(s) => s.host_value().map(f16::to_f32),
            };
            let keep = |k| match k {
                ExKind::F32(s) => Some(s),
                ExKind::F16(_) => None,
            };
            Resolved::F32([
                alpha.resolve(compute, "gemm_ex alpha", host, keep)?,
                beta.resolve(compute, "gemm_ex beta", host, keep)?,
            ])
        }
        ComputeType::F16 => {
            let host = |k: &ExKind<'a>| match k {
                ExKind::F32(s) => s.host_value().map(f16::from_f32),
                ExKind::F16(s) => s.host_value(),
            };
            let keep = |k| match k {
                ExKind::F16(s) => Some(s),
                ExKind::F32(_) => None,
            };
            Resolved::F16([
                alpha.resolve(compute, "gemm_ex alpha", host, keep)?,
                beta.resolve(compute, "gemm_ex beta", host, keep)?,
            ])
        }
    })
}

impl Handle {
    /// `C = alpha * op(A) * op(B) + beta * C` with A and B of type `I`, C of type `O`, computed in
    /// `compute` (`hipblasGemmEx`, default algorithm). `alpha` and `beta` ([`ExScalar`]) are host values
    /// (`f32` or `f16`, converted to the compute type) or both device scalars of the compute type
    /// (`Scalar::device` of an `f32` buffer for F32, of an `f16` buffer for F16; another is
    /// [`Error::InvalidArgument`]). Accepted by hipBLAS: `f16 x f16 -> f16 or f32` and
    /// `bf16 x bf16 -> bf16 or f32` in F32, `f32 x f32 -> f32` in F32, `f16 x f16 -> f16` in F16; others
    /// are an [`Error::Blas`] (not supported) from the library, or [`Error::InvalidArgument`] for F16
    /// with other types.
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_ex<'s, I: GemmExType, O: GemmExType>(
        &self,
        shape: &Gemm,
        alpha: impl Into<ExScalar<'s>>,
        a: &impl DeviceMemory<I>,
        b: &impl DeviceMemory<I>,
        beta: impl Into<ExScalar<'s>>,
        c: &mut impl DeviceMemoryMut<O>,
        compute: ComputeType,
    ) -> Result<()> {
        if compute == ComputeType::F16
            && (I::DATA_TYPE != f16::DATA_TYPE || O::DATA_TYPE != f16::DATA_TYPE)
        {
            return Err(Error::InvalidArgument {
                what: "gemm_ex compute type",
                value: "F16".into(),
                reason: "half-precision compute takes f16 inputs and an f16 output".into(),
            });
        }
        let scalars = resolve(alpha.into(), beta.into(), compute)?;
        let call = shape.resolve()?;
        check_operands(shape, &call.len, [a.len(), b.len(), c.len()])?;
        let ops = [
            (a.device(), a.allocation(), Access::Read),
            (b.device(), b.allocation(), Access::Read),
            (c.device(), c.allocation(), Access::Write),
        ];
        let (_op, alpha, beta) = match &scalars {
            Resolved::F32([al, be]) => (
                self.begin(NAME, &ops, &[al, be])?,
                al.ptr().cast(),
                be.ptr().cast(),
            ),
            Resolved::F16([al, be]) => (
                self.begin(NAME, &ops, &[al, be])?,
                al.ptr().cast(),
                be.ptr().cast(),
            ),
        };
        let (x, y) = call.ordered(a.device_ptr(), b.device_ptr());
        let ([m, n, k], [lx, ly, lc]) = call.ints();
        // SAFETY: as in gemm: A, B and C span every element the shape reaches (checked, values fit in int);
        // each data type names the element type of its buffer; alpha/beta point at host values or device
        // elements of the compute type (resolved above), live for the call (`scalars`), and the pointer mode
        // `begin` set matches them.
        check(NAME, unsafe {
            gemm_ex_raw(
                self.raw,
                raw_op(call.op[0]),
                raw_op(call.op[1]),
                m,
                n,
                k,
                alpha,
                x,
                I::DATA_TYPE,
                lx,
                y,
                ly,
                beta,
                c.device_ptr(),
                O::DATA_TYPE,
                lc,
                compute,
            )
        })
    }
}

#[cfg(hipblas_api = "v2_suffix")]
const NAME: &str = "hipblasGemmEx_v2";
#[cfg(not(hipblas_api = "v2_suffix"))]
const NAME: &str = "hipblasGemmEx";

/// The one `Ex` call of this hipBLAS, the input type serving both A and B.
///
/// # Safety
/// As [`BlasScalar`](super::BlasScalar)'s calls: a live handle whose device is current and whose pointer
/// mode matches `alpha` / `beta`; A, B and C span what the shape and leading dimensions reach in the
/// element types named, on the handle's device, ordered and kept alive by the caller until the call is
/// done.
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_ex_raw(
    h: sys::hipblasHandle_t,
    oa: sys::hipblasOperation_t,
    ob: sys::hipblasOperation_t,
    m: i32,
    n: i32,
    k: i32,
    alpha: *const std::ffi::c_void,
    x: *mut std::ffi::c_void,
    in_type: DataType,
    lx: i32,
    y: *mut std::ffi::c_void,
    ly: i32,
    beta: *const std::ffi::c_void,
    c: *mut std::ffi::c_void,
    out_type: DataType,
    lc: i32,
    compute: ComputeType,
) -> sys::hipblasStatus_t {
    #[cfg(hipblas_api = "v1")]
    let compute = match compute {
        ComputeType::F32 => sys::HIPBLAS_R_32F,
        ComputeType::F16 => sys::HIPBLAS_R_16F,
    };
    #[cfg(not(hipblas_api = "v1"))]
    let compute = match compute {
        ComputeType::F32 => sys::HIPBLAS_COMPUTE_32F,
        ComputeType::F16 => sys::HIPBLAS_COMPUTE_16F,
    };
    #[cfg(not(hipblas_api = "v2_suffix"))]
    use sys::hipblasGemmEx as gemm_ex;
    #[cfg(hipblas_api = "v2_suffix")]
    use sys::hipblasGemmEx_v2 as gemm_ex;
    // SAFETY: the caller's (gemm_ex above).
    unsafe {
        gemm_ex(
            h,
            oa,
            ob,
            m,
            n,
            k,
            alpha,
            x,
            in_type,
            lx,
            y,
            in_type,
            ly,
            beta,
            c,
            out_type,
            lc,
            compute,
            sys::HIPBLAS_GEMM_DEFAULT,
        )
    }
}
