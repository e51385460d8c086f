//! hipBLASLt's descriptors, each destroyed on drop: the matmul description (`hipblasLtMatmulDesc_t`),
//! matrix layouts (`hipblasLtMatrixLayout_t`) and the heuristic's preference
//! (`hipblasLtMatmulPreference_t`), built from a checked [`Call`].

use super::shape::{Call, Layout, Op};
use super::{check, sys, EpilogueKind};
use crate::error::Result;
use std::ffi::c_void;

/// The four layouts and the description of one call, destroyed on drop.
pub(super) struct Descriptors {
    pub desc: MatmulDesc,
    pub a: MatrixLayout,
    pub b: MatrixLayout,
    pub c: MatrixLayout,
    pub d: MatrixLayout,
}

impl Descriptors {
    /// The descriptors of `call` with elements of `data_type`, computing in f32 with f32 scalars, and
    /// `epilogue` (its pointers are set by the caller, which has the buffers).
    pub fn new(call: &Call, data_type: u32, epilogue: EpilogueKind) -> Result<Descriptors> {
        let desc = MatmulDesc::new()?;
        desc.set(sys::HIPBLASLT_MATMUL_DESC_TRANSA, &raw_op(call.ops[0]))?;
        desc.set(sys::HIPBLASLT_MATMUL_DESC_TRANSB, &raw_op(call.ops[1]))?;
        desc.set(sys::HIPBLASLT_MATMUL_DESC_EPILOGUE, &epilogue.raw())?;
        if epilogue.has_bias() {
            desc.set(
                sys::HIPBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                &(data_type as i32),
            )?;
        }
        let layout = |l: &Layout| MatrixLayout::new(data_type, l, call.count);
        Ok(Descriptors {
            desc,
            a: layout(&call.first)?,
            b: layout(&call.second)?,
            c: layout(&call.c)?,
            d: layout(&call.c)?,
        })
    }
}

/// `hipblasLtMatmulDesc_t`.
pub(super) struct MatmulDesc(pub sys::hipblasLtMatmulDesc_t);

impl MatmulDesc {
    fn new() -> Result<MatmulDesc> {
        let mut raw: sys::hipblasLtMatmulDesc_t = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; the compute and scale types are enumerators of the header.
        check("hipblasLtMatmulDescCreate", unsafe {
            sys::hipblasLtMatmulDescCreate(&mut raw, sys::HIPBLAS_COMPUTE_32F, sys::HIP_R_32F)
        })?;
        Ok(MatmulDesc(raw))
    }

    /// Set attribute `attr` to `value`, whose type is the one hipBLASLt documents for it (`int32_t`,
    /// `uint32_t`, `int64_t` or a pointer).
    pub fn set<V: Copy>(
        &self,
        attr: sys::hipblasLtMatmulDescAttributes_t,
        value: &V,
    ) -> Result<()> {
        // SAFETY: live description; `value` is valid for reading `size_of::<V>()` bytes, which hipBLASLt
        // copies before returning.
        check("hipblasLtMatmulDescSetAttribute", unsafe {
            sys::hipblasLtMatmulDescSetAttribute(
                self.0,
                attr,
                (value as *const V).cast::<c_void>(),
                std::mem::size_of::<V>(),
            )
        })
    }
}

impl Drop for MatmulDesc {
    fn drop(&mut self) {
        // SAFETY: the live description, destroyed once; hipBLASLt keeps no reference to it after a call
        // returns. A status cannot be reported from drop.
        unsafe { sys::hipblasLtMatmulDescDestroy(self.0) };
    }
}

/// `hipblasLtMatrixLayout_t`.
pub(super) struct MatrixLayout(pub sys::hipblasLtMatrixLayout_t);

impl MatrixLayout {
    /// A column-major layout of `l` (values checked to fit `i64` by `resolve`), with the batch
    /// attributes for `count > 1`.
    fn new(data_type: u32, l: &Layout, count: usize) -> Result<MatrixLayout> {
        let mut raw: sys::hipblasLtMatrixLayout_t = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; the sizes were checked by `Matmul::resolve`.
        check("hipblasLtMatrixLayoutCreate", unsafe {
            sys::hipblasLtMatrixLayoutCreate(
                &mut raw,
                data_type,
                l.rows as u64,
                l.cols as u64,
                l.ld as i64,
            )
        })?;
        let layout = MatrixLayout(raw);
        if count > 1 {
            layout.set(sys::HIPBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &(count as i32))?;
            layout.set(
                sys::HIPBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                &(l.stride as i64),
            )?;
        }
        Ok(layout)
    }

    fn set<V: Copy>(&self, attr: sys::hipblasLtMatrixLayoutAttribute_t, value: &V) -> Result<()> {
        // SAFETY: live layout; `value` is valid for reading `size_of::<V>()` bytes (the attribute's
        // documented type), copied before the call returns.
        check("hipblasLtMatrixLayoutSetAttribute", unsafe {
            sys::hipblasLtMatrixLayoutSetAttribute(
                self.0,
                attr,
                (value as *const V).cast::<c_void>(),
                std::mem::size_of::<V>(),
            )
        })
    }
}

impl Drop for MatrixLayout {
    fn drop(&mut self) {
        // SAFETY: the live layout, destroyed once; a status cannot be reported from drop.
        unsafe { sys::hipblasLtMatrixLayoutDestroy(self.0) };
    }
}

/// `hipblasLtMatmulPreference_t` with a workspace limit.
pub(super) struct Preference(pub sys::hipblasLtMatmulPreference_t);

impl Preference {
    pub fn new(max_workspace: usize) -> Result<Preference> {
        let mut raw: sys::hipblasLtMatmulPreference_t = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer.
        check("hipblasLtMatmulPreferenceCreate", unsafe {
            sys::hipblasLtMatmulPreferenceCreate(&mut raw)
        })?;
        let pref = Preference(raw);
        let bytes = max_workspace as u64;
        // SAFETY: live preference; the attribute's type is `uint64_t`, read from `bytes` before return.
        check("hipblasLtMatmulPreferenceSetAttribute", unsafe {
            sys::hipblasLtMatmulPreferenceSetAttribute(
                pref.0,
                sys::HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&bytes as *const u64).cast::<c_void>(),
                std::mem::size_of::<u64>(),
            )
        })?;
        Ok(pref)
    }
}

impl Drop for Preference {
    fn drop(&mut self) {
        // SAFETY: the live preference, destroyed once; a status cannot be reported from drop.
        unsafe { sys::hipblasLtMatmulPreferenceDestroy(self.0) };
    }
}

/// `hipblasOperation_t` of an [`Op`], as the `int32_t` the TRANSA/TRANSB attributes take.
pub(super) fn raw_op(op: Op) -> i32 {
    (match op {
        Op::N => sys::HIPBLAS_OP_N,
        Op::T => sys::HIPBLAS_OP_T,
    }) as i32
}
