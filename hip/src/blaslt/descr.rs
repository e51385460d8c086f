//! hipBLASLt's descriptors, each destroyed on drop: the matmul description (`hipblasLtMatmulDesc_t`),
//! matrix layouts (`hipblasLtMatrixLayout_t`) and the heuristic's preference
//! (`hipblasLtMatmulPreference_t`), built from a checked [`Call`]; and the handle's cache of them
//! ([`DescriptorCache`]).

use super::shape::{Call, Layout, Op};
use super::{check, sys, EpilogueKind};
use crate::error::Result;
use crate::memory::DevicePtr;
use std::ffi::c_void;

/// How many problems' descriptors a handle keeps (the most recently used).
pub(super) const DESCRIPTOR_CACHE_LIMIT: usize = 16;

/// The description attributes that scale an operand (A, B, C, D, the auxiliary output), all set to null:
/// hipBLASLt's header, every version, says "If not specified, or set to NULL, the scaling factor is assumed
/// to be 1", and rocblaslt's sources (its October 2024 tree and today's) pass no scale to the kernel
/// while the A and B (and C and D) pointers are null.
pub(super) const SCALE_POINTERS: [sys::hipblasLtMatmulDescAttributes_t; 5] = [
    sys::HIPBLASLT_MATMUL_DESC_A_SCALE_POINTER,
    sys::HIPBLASLT_MATMUL_DESC_B_SCALE_POINTER,
    sys::HIPBLASLT_MATMUL_DESC_C_SCALE_POINTER,
    sys::HIPBLASLT_MATMUL_DESC_D_SCALE_POINTER,
    sys::HIPBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER,
];

/// The auxiliary output of one call: its address, leading dimension and batch stride (elements).
#[derive(Clone, Copy, Debug)]
pub(super) struct Aux {
    pub ptr: DevicePtr,
    pub ld: i64,
    pub stride: i64,
}

/// The problem an algorithm (and a set of descriptors) is found for: the checked call, element type, epilogue kind and device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Key {
    pub call: Call,
    pub data_type: u32,
    pub epilogue: EpilogueKind,
    pub device: usize,
}

/// The four layouts and the description of one problem (a [`Key`]), destroyed on drop.
///
/// Every attribute that decides what a call reads or writes, or how, is set here rather than left to
/// hipBLASLt's defaults, so a library whose default differs cannot make a call reach past what
/// [`Call`] checked: the operations, the epilogue, the host pointer mode of `alpha` / `beta`, no scaling
/// (every scale pointer null, and the amax output null where the header has it), the bias and auxiliary
/// output in the element type (`EPILOGUE_AUX_DATA_TYPE` where the header has it: before it existed,
/// hipBLASLt wrote the auxiliary output in D's type), null epilogue pointers the kind does not use, and
/// column-major layouts. The pointers of the epilogue's buffers are the call's: [`set_buffers`].
///
/// They hold values only (sizes, types, and the call's addresses as plain numbers; hipBLASLt's own host
/// state for the problem), never device memory of their own: the handle keeps them per problem
/// ([`DescriptorCache`]) and sets the buffers' pointers again for each call.
///
/// [`set_buffers`]: Descriptors::set_buffers
pub(super) struct Descriptors {
    pub desc: MatmulDesc,
    pub a: MatrixLayout,
    pub b: MatrixLayout,
    pub c: MatrixLayout,
    pub d: MatrixLayout,
    epilogue: EpilogueKind,
}

impl Descriptors {
    /// The descriptors of `key`'s call with elements of its type, computing in f32 with f32 scalars, and
    /// its epilogue (the buffers' pointers are set by [`set_buffers`](Self::set_buffers)).
    pub fn new(key: &Key) -> Result<Descriptors> {
        let (call, data_type, epilogue) = (&key.call, key.data_type, key.epilogue);
        let null: *const c_void = std::ptr::null();
        let desc = MatmulDesc::new()?;
        desc.set(sys::HIPBLASLT_MATMUL_DESC_TRANSA, &raw_op(call.ops[0]))?;
        desc.set(sys::HIPBLASLT_MATMUL_DESC_TRANSB, &raw_op(call.ops[1]))?;
        desc.set(sys::HIPBLASLT_MATMUL_DESC_EPILOGUE, &epilogue.raw())?;
        // `alpha` and `beta` are read from host memory, as f32 (the description's scale type).
        desc.set(
            sys::HIPBLASLT_MATMUL_DESC_POINTER_MODE,
            &(sys::HIPBLASLT_POINTER_MODE_HOST as i32),
        )?;
        for attr in SCALE_POINTERS {
            desc.set(attr, &null)?;
        }
        // A non-null amax pointer would make the call write a float there. ROCm 6.1's header has no such
        // attribute (nor does its library write one).
        #[cfg(hipblaslt_amax_d)]
        desc.set(sys::HIPBLASLT_MATMUL_DESC_AMAX_D_POINTER, &null)?;
        if epilogue.has_bias() {
            desc.set(
                sys::HIPBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                &(data_type as i32),
            )?;
        } else {
            desc.set(sys::HIPBLASLT_MATMUL_DESC_BIAS_POINTER, &null)?;
        }
        if epilogue.has_aux() {
            // The auxiliary output is checked as elements of D's type. Without this attribute (ROCm 6.2's
            // header and older lack it; hipBLASLt 1.1, ROCm 7.1, has it) the library writes it in D's type
            // (ROCm 6.2's rocblaslt, tensile_host.cpp: `setE(d_type, ...)`).
            #[cfg(hipblaslt_aux_data_type)]
            desc.set(
                sys::HIPBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE,
                &(data_type as i32),
            )?;
        } else {
            desc.set(sys::HIPBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &null)?;
        }
        let layout = |l: &Layout| MatrixLayout::new(data_type, l, call.count);
        Ok(Descriptors {
            desc,
            a: layout(&call.first)?,
            b: layout(&call.second)?,
            c: layout(&call.c)?,
            d: layout(&call.c)?,
            epilogue,
        })
    }

    /// Set the call's epilogue buffers: the bias's address, and the auxiliary output's address, leading
    /// dimension and batch stride. Exactly those the epilogue kind uses (checked in debug builds); set
    /// for every call, and before the heuristic runs, so no call and no heuristic sees another call's
    /// values.
    pub fn set_buffers(&self, bias: Option<DevicePtr>, aux: Option<Aux>) -> Result<()> {
        debug_assert_eq!(bias.is_some(), self.epilogue.has_bias());
        debug_assert_eq!(aux.is_some(), self.epilogue.has_aux());
        if let Some(bias) = bias {
            self.desc
                .set(sys::HIPBLASLT_MATMUL_DESC_BIAS_POINTER, &bias.cast_const())?;
        }
        if let Some(aux) = aux {
            let d = &self.desc;
            d.set(sys::HIPBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux.ptr)?;
            d.set(sys::HIPBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux.ld)?;
            d.set(
                sys::HIPBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE,
                &aux.stride,
            )?;
        }
        Ok(())
    }

    /// For the heuristic without buffers ([`Handle::algorithms`](super::Handle::algorithms)): a
    /// placeholder address for the bias and the auxiliary output the kind uses, and the tight leading
    /// dimension and stride of `call`. hipBLASLt's heuristic checks these pointers are not null and never
    /// reads through them (it passes placeholder addresses of its own for A, B, C and D); with a null
    /// auxiliary pointer or leading dimension its argument check fails and the heuristic looks at an
    /// empty problem instead (rocblaslt's `construct_rocblaslt_problem`, ROCm 6.0 to today's sources).
    pub fn set_placeholders(&self, call: &Call) -> Result<()> {
        let ptr = std::ptr::addr_of!(PLACEHOLDER).cast_mut().cast::<c_void>();
        let bias = self.epilogue.has_bias().then_some(ptr);
        let aux = if self.epilogue.has_aux() {
            let (_, stride) = call.aux_need(call.m)?;
            Some(Aux {
                ptr,
                ld: call.m as i64,
                stride: stride as i64,
            })
        } else {
            None
        };
        self.set_buffers(bias, aux)
    }
}

/// What [`Descriptors::set_placeholders`] points at: host memory, aligned as any device buffer, never read.
#[repr(C, align(256))]
struct Placeholder([u8; 256]);
static PLACEHOLDER: Placeholder = Placeholder([0; 256]);

/// The descriptors of the problems a handle ran, most recent first, at most
/// [`DESCRIPTOR_CACHE_LIMIT`]: a call of a problem it holds reuses them (hipBLASLt's descriptors are made
/// for reuse: each keeps the library's host state for its problem, and `hipblasLtMatmul` builds the
/// kernels' arguments again from the description's values at every call), setting only the buffers'
/// pointers.
///
/// Dropped with the handle, inside a host function too: then the descriptors are destroyed on the
/// crate's releasing thread ([`crate::release`]), as every library object is.
pub(super) struct DescriptorCache(Vec<(Key, Descriptors)>);

/// The cache's descriptors on their way to the releasing thread.
struct Held(Vec<(Key, Descriptors)>);

// SAFETY: hipBLASLt's descriptors are host objects of the library, not tied to a thread; `Held` moves
// the only references to them, once, to the thread that destroys them.
unsafe impl Send for Held {}

impl Held {
    /// The descriptors. A method, not the field, in the releasing closure: a closure that named `.0`
    /// would capture the bare vector (edition 2021 captures fields), which is not `Send`.
    fn into_inner(self) -> Vec<(Key, Descriptors)> {
        self.0
    }
}

impl Drop for DescriptorCache {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            let held = Held(std::mem::take(&mut self.0));
            crate::release::now_or_later(move || drop(held.into_inner()));
        }
    }
}

impl DescriptorCache {
    pub fn new() -> DescriptorCache {
        DescriptorCache(Vec::new())
    }

    /// The descriptors of `key`, taken out of the cache (a call puts them back with [`put`](Self::put)
    /// once it is queued; a call that fails drops them).
    pub fn take(&mut self, key: &Key) -> Option<Descriptors> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(i).1)
    }

    /// Keep `descs` for `key` as the most recent; the least recent goes when the cache is full.
    pub fn put(&mut self, key: Key, descs: Descriptors) {
        self.0.retain(|(k, _)| *k != key);
        self.0.insert(0, (key, descs));
        self.0.truncate(DESCRIPTOR_CACHE_LIMIT);
    }

    /// The keys held, most recent first.
    #[cfg(test)]
    pub fn keys(&self) -> Vec<Key> {
        self.0.iter().map(|(k, _)| *k).collect()
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
        // Column-major, as every size was checked (hipBLASLt's default, set so no other default applies).
        layout.set(
            sys::HIPBLASLT_MATRIX_LAYOUT_ORDER,
            &(sys::HIPBLASLT_ORDER_COL as i32),
        )?;
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
