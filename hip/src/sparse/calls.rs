//! The products and conversions: operands checked, descriptors made, the scratch buffer asked for and
//! grown, the call queued.

use super::descr::{csr_descr, DnMat, DnVec, SparseMatrix};
use super::plan::{SpmvKey, SpmvPlan};
use super::{check, raw_op, sys, Csr, Handle, Op, SparseScalar};
use crate::dense_shape::{matrix, read, vector, write};
use crate::error::{Error, Result};
use crate::library::HostScalar;
use crate::memory::{DeviceBuffer, DeviceCopy, DeviceMemory, DeviceMemoryMut};
use std::ffi::c_void;

impl Handle {
    /// `y = alpha op(A) x + beta y` (`hipsparseSpMV`, the library's default algorithm): `x` holds at
    /// least `op(A)`'s columns, `y` its rows (longer buffers are fine: the product uses their start).
    #[allow(clippy::too_many_arguments)]
    pub fn spmv<T: SparseScalar>(
        &mut self,
        op: Op,
        alpha: T,
        a: &impl SparseMatrix<T>,
        x: &impl DeviceMemory<T>,
        beta: T,
        y: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        let (xn, yn) = match op {
            Op::N => (a.cols(), a.rows()),
            _ => (a.rows(), a.cols()),
        };
        vector("spmv: x", x.len(), xn)?;
        vector("spmv: y", y.len(), yn)?;
        if yn == 0 {
            return Ok(());
        }
        let (alpha, beta) = (HostScalar(alpha), HostScalar(beta));
        let (o, ty, alg) = (
            raw_op(op),
            T::DATA_TYPE as _,
            sys::HIPSPARSE_SPMV_ALG_DEFAULT,
        );
        let key = SpmvKey {
            matrix: a.id(),
            op: o as i64,
            data_type: T::DATA_TYPE as i64,
            x_len: xn,
            y_len: yn,
        };
        let (px, py) = (x.device_ptr(), y.device_ptr());
        let plan = match self.spmv.take() {
            Some(mut plan) if plan.key == key => {
                plan.point_at(px, py)?;
                plan
            }
            _ => {
                let (matrix, vx, vy) = (
                    a.descr()?,
                    DnVec::new::<T>(px, xn)?,
                    DnVec::new::<T>(py, yn)?,
                );
                self.device.bind()?;
                let mut bytes = 0usize;
                // SAFETY: a live handle and live descriptors; host scalars; the query reads no device
                // memory.
                check("hipsparseSpMV_bufferSize", unsafe {
                    sys::hipsparseSpMV_bufferSize(
                        self.raw,
                        o,
                        alpha.ptr(),
                        matrix.0 as _,
                        vx.0 as _,
                        beta.ptr(),
                        vy.0 as _,
                        ty,
                        alg,
                        &mut bytes,
                    )
                })?;
                SpmvPlan {
                    key,
                    matrix,
                    x: vx,
                    y: vy,
                    at: (px, py),
                    bytes,
                }
            }
        };
        let (ma, vx, vy) = (plan.matrix.0, plan.x.0, plan.y.0);
        let bytes = plan.bytes;
        // Kept only once the call is queued below: a failed call makes the next one start afresh.
        let buffer = self.scratch(bytes)?;
        let [r0, r1, r2] = a.reads();
        let op = self.begin("hipsparseSpMV", &[r0, r1, r2, read(x), write(&*y)])?;
        // SAFETY: the matrix is valid by construction (indices in range), `x` and `y` hold what `op(A)`
        // reaches (checked) and the descriptors point at them (`point_at` or made for them), the scratch
        // buffer `bytes`; all on the handle's device, ordered and kept alive by the memory model
        // (recorded above). Host scalars are read during the call.
        check("hipsparseSpMV", unsafe {
            sys::hipsparseSpMV(
                self.raw,
                o,
                alpha.ptr(),
                ma as _,
                vx as _,
                beta.ptr(),
                vy as _,
                ty,
                alg,
                buffer,
            )
        })?;
        drop(op);
        self.spmv = Some(plan);
        Ok(())
    }

    /// `C = alpha op(A) B + beta C` (`hipsparseSpMM`, the library's default algorithm) for dense
    /// column-major `B` (`k x n`, `k` being `op(A)`'s columns, leading dimension `ldb`) and `C` (`m x
    /// n`, `m` being `op(A)`'s rows, leading dimension `ldc`).
    #[allow(clippy::too_many_arguments)]
    pub fn spmm<T: SparseScalar>(
        &mut self,
        op: Op,
        alpha: T,
        a: &impl SparseMatrix<T>,
        (b, n, ldb): (&impl DeviceMemory<T>, usize, usize),
        beta: T,
        (c, ldc): (&mut impl DeviceMemoryMut<T>, usize),
    ) -> Result<()> {
        let (m, k) = match op {
            Op::N => (a.rows(), a.cols()),
            _ => (a.cols(), a.rows()),
        };
        matrix("spmm: b", b.len(), k, n, ldb)?;
        matrix("spmm: c", c.len(), m, n, ldc)?;
        if m == 0 || n == 0 {
            return Ok(());
        }
        let (alpha, beta) = (HostScalar(alpha), HostScalar(beta));
        let ma = a.descr()?;
        let mb = DnMat::new::<T>(b.device_ptr(), k, n, ldb)?;
        let mc = DnMat::new::<T>(c.device_ptr(), m, n, ldc)?;
        let (oa, ob) = (raw_op(op), sys::HIPSPARSE_OPERATION_NON_TRANSPOSE);
        let (ty, alg) = (T::DATA_TYPE as _, sys::HIPSPARSE_SPMM_ALG_DEFAULT);
        self.device.bind()?;
        let mut bytes = 0usize;
        // SAFETY: as in spmv.
        check("hipsparseSpMM_bufferSize", unsafe {
            sys::hipsparseSpMM_bufferSize(
                self.raw,
                oa,
                ob,
                alpha.ptr(),
                ma.0 as _,
                mb.0 as _,
                beta.ptr(),
                mc.0 as _,
                ty,
                alg,
                &mut bytes,
            )
        })?;
        let buffer = self.scratch(bytes)?;
        let [r0, r1, r2] = a.reads();
        let _op = self.begin("hipsparseSpMM", &[r0, r1, r2, read(b), write(&*c)])?;
        // SAFETY: as in spmv; `b` spans `k x n` with `ldb`, `c` `m x n` with `ldc` (checked).
        check("hipsparseSpMM", unsafe {
            sys::hipsparseSpMM(
                self.raw,
                oa,
                ob,
                alpha.ptr(),
                ma.0 as _,
                mb.0 as _,
                beta.ptr(),
                mc.0 as _,
                ty,
                alg,
                buffer,
            )
        })
    }

    /// `C = A B` for CSR matrices (`hipsparseSpGEMM_*`, the library's default algorithm), a new CSR
    /// matrix. The library computes `C`'s number of entries on the device and hands it to the host
    /// before `C`'s arrays can be allocated: this call waits for that (for `A`, `B` and the work before
    /// them on the handle's stream), unlike the others.
    pub fn spgemm<T: SparseScalar>(&mut self, a: &Csr<T>, b: &Csr<T>) -> Result<Csr<T>> {
        if a.cols != b.rows {
            return Err(Error::InvalidArgument {
                what: "spgemm: b",
                value: format!("{} x {}", b.rows, b.cols),
                reason: format!("A is {} x {}: B needs {} rows", a.rows, a.cols, a.cols),
            });
        }
        let (m, n) = (a.rows, b.cols);
        let (alpha, beta) = (HostScalar(T::ONE), HostScalar(T::ZERO));
        // SAFETY: every element is written by the library's copy stage before C is handed out.
        let offsets = unsafe { DeviceBuffer::<i32>::alloc_async_on(&self.stream, m + 1)? };
        let (ma, mb) = (a.descr()?, b.descr()?);
        let mc = csr_descr::<T>(
            m,
            n,
            0,
            [
                offsets.device_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            ],
        )?;
        let spgemm = SpGemmDescr::new()?;
        let (o, ty, alg) = (
            sys::HIPSPARSE_OPERATION_NON_TRANSPOSE,
            T::DATA_TYPE as _,
            sys::HIPSPARSE_SPGEMM_DEFAULT,
        );
        let mut ops = a.reads().to_vec();
        ops.extend(b.reads());
        ops.push(write(&offsets));
        // Each stage asks for its buffer's size (null buffer), then runs with it; the buffers live until
        // the copy stage is queued and are freed in the stream's order.
        let mut stage_buffers: Vec<DeviceBuffer<u8>> = Vec::new();
        for stage in [Stage::WorkEstimation, Stage::Compute] {
            let mut bytes = 0usize;
            self.device.bind()?;
            // SAFETY: a live handle and descriptors; a null buffer asks for the size only.
            check(stage.name(), unsafe {
                stage.call(
                    self.raw,
                    o,
                    alpha.ptr(),
                    &ma,
                    &mb,
                    beta.ptr(),
                    &mc,
                    ty,
                    alg,
                    spgemm.0,
                    &mut bytes,
                    std::ptr::null_mut(),
                )
            })?;
            // SAFETY: scratch the library writes before it reads.
            let buffer = unsafe { DeviceBuffer::<u8>::alloc_async_on(&self.stream, bytes.max(1))? };
            let mut stage_ops = ops.clone();
            stage_ops.push(write(&buffer));
            stage_ops.extend(stage_buffers.iter().map(write));
            let _op = self.begin(stage.name(), &stage_ops)?;
            // SAFETY: valid CSR operands (by construction), `bytes` of scratch, C's offsets `m + 1`, all
            // ordered on the handle's stream by the memory model.
            check(stage.name(), unsafe {
                stage.call(
                    self.raw,
                    o,
                    alpha.ptr(),
                    &ma,
                    &mb,
                    beta.ptr(),
                    &mc,
                    ty,
                    alg,
                    spgemm.0,
                    &mut bytes,
                    buffer.device_ptr(),
                )
            })?;
            stage_buffers.push(buffer);
        }
        let nnz = spmat_nnz(&mc)?;
        // SAFETY: written by the copy stage below.
        let indices = unsafe { DeviceBuffer::<i32>::alloc_async_on(&self.stream, nnz)? };
        // SAFETY: written by the copy stage below.
        let values = unsafe { DeviceBuffer::<T>::alloc_async_on(&self.stream, nnz)? };
        // SAFETY: live descriptor; the arrays hold `m + 1` offsets and `nnz` entries, C's size.
        check("hipsparseCsrSetPointers", unsafe {
            sys::hipsparseCsrSetPointers(
                mc.0,
                offsets.device_ptr(),
                indices.device_ptr(),
                values.device_ptr(),
            )
        })?;
        ops.extend([write(&indices), write(&values)]);
        ops.extend(stage_buffers.iter().map(write));
        let _op = self.begin("hipsparseSpGEMM_copy", &ops)?;
        // SAFETY: as the stages; C's arrays are the sizes the library computed.
        check("hipsparseSpGEMM_copy", unsafe {
            sys::hipsparseSpGEMM_copy(
                self.raw,
                o,
                o,
                alpha.ptr(),
                ma.0 as _,
                mb.0 as _,
                beta.ptr(),
                mc.0,
                ty,
                alg,
                spgemm.0,
            )
        })?;
        drop(_op);
        Ok(Csr {
            id: super::matrix::next_id(),
            rows: m,
            cols: n,
            offsets,
            indices,
            values,
        })
    }

    /// A copy of `src` queued on the handle's stream (freed in its order).
    pub(super) fn copy<U: DeviceCopy>(&self, src: &DeviceBuffer<U>) -> Result<DeviceBuffer<U>> {
        // SAFETY: written by the copy below before any reader (recorded as its writer on this stream).
        let dst = unsafe { DeviceBuffer::<U>::alloc_async_on(&self.stream, src.len())? };
        if src.is_empty() {
            return Ok(dst);
        }
        let _op = self.begin("sparse copy", &[read(src), write(&dst)])?;
        // SAFETY: both are `src.len()` elements on the handle's device (current), ordered on its stream.
        unsafe {
            crate::result::memcpy_async(
                dst.device_ptr(),
                src.device_ptr(),
                src.len() * std::mem::size_of::<U>(),
                hip_sys::hipMemcpyDeviceToDevice,
                self.stream.raw,
            )?
        };
        Ok(dst)
    }
}

/// The two stages of SpGEMM that ask for a buffer: the same C signature.
#[derive(Clone, Copy)]
enum Stage {
    WorkEstimation,
    Compute,
}

impl Stage {
    fn name(self) -> &'static str {
        match self {
            Stage::WorkEstimation => "hipsparseSpGEMM_workEstimation",
            Stage::Compute => "hipsparseSpGEMM_compute",
        }
    }

    /// # Safety
    /// As `hipsparseSpGEMM_workEstimation` / `_compute`: live handle and descriptors, host scalars, and
    /// `buffer` null (size query) or `*bytes` of device scratch ordered on the handle's stream.
    #[allow(clippy::too_many_arguments)]
    unsafe fn call(
        self,
        h: sys::hipsparseHandle_t,
        o: sys::hipsparseOperation_t,
        alpha: *const c_void,
        a: &super::descr::SpMat,
        b: &super::descr::SpMat,
        beta: *const c_void,
        c: &super::descr::SpMat,
        ty: sys::hipDataType,
        alg: sys::hipsparseSpGEMMAlg_t,
        d: sys::hipsparseSpGEMMDescr_t,
        bytes: &mut usize,
        buffer: *mut c_void,
    ) -> sys::hipsparseStatus_t {
        let f = match self {
            Stage::WorkEstimation => sys::hipsparseSpGEMM_workEstimation,
            Stage::Compute => sys::hipsparseSpGEMM_compute,
        };
        // SAFETY: the caller's contract.
        unsafe {
            f(
                h, o, o, alpha, a.0 as _, b.0 as _, beta, c.0, ty, alg, d, bytes, buffer,
            )
        }
    }
}

/// An SpGEMM descriptor (`hipsparseSpGEMMDescr_t`), destroyed on drop.
struct SpGemmDescr(sys::hipsparseSpGEMMDescr_t);

impl SpGemmDescr {
    fn new() -> Result<SpGemmDescr> {
        let mut d: sys::hipsparseSpGEMMDescr_t = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check("hipsparseSpGEMM_createDescr", unsafe {
            sys::hipsparseSpGEMM_createDescr(&mut d)
        })?;
        Ok(SpGemmDescr(d))
    }
}

impl Drop for SpGemmDescr {
    fn drop(&mut self) {
        // SAFETY: a live descriptor, destroyed once, after the calls that use it were queued. Its device
        // scratch (if any) the library frees itself: cuSPARSE and rocSPARSE both synchronize before freeing
        // device memory.
        unsafe { sys::hipsparseSpGEMM_destroyDescr(self.0) };
    }
}

/// The number of entries the library computed for a CSR descriptor, as a 32-bit-index size.
pub(super) fn spmat_nnz(d: &super::descr::SpMat) -> Result<usize> {
    let (mut rows, mut cols, mut nnz) = (0i64, 0i64, 0i64);
    // SAFETY: a live descriptor; three valid out-pointers.
    check("hipsparseSpMatGetSize", unsafe {
        sys::hipsparseSpMatGetSize(d.0 as _, &mut rows, &mut cols, &mut nnz)
    })?;
    match usize::try_from(nnz) {
        Ok(n) if i32::try_from(n).is_ok() => Ok(n),
        _ => Err(Error::InvalidArgument {
            what: "sparse result",
            value: format!("{nnz} entries"),
            reason: "this crate's sparse matrices use 32-bit indices (at most i32::MAX entries)"
                .into(),
        }),
    }
}
