//! hipSPARSE's descriptors of the generic API, destroyed on drop, and the matrices' side of a call.

use super::{check, sys, Coo, Csr, Operand, SparseScalar};
use crate::dense_shape::read;
use crate::error::Result;
use crate::memory::{DeviceMemory, DevicePtr};
use crate::release::{now_or_later, RawHandle};

/// A sparse matrix descriptor (`hipsparseSpMatDescr_t`).
#[doc(hidden)]
pub struct SpMat(pub(super) sys::hipsparseSpMatDescr_t);

impl Drop for SpMat {
    fn drop(&mut self) {
        let d = RawHandle(self.0);
        // A handle keeps descriptors (`plan`), and may drop inside a host function: rocSPARSE frees a
        // descriptor's analysis with HIP calls, so it goes on the releasing thread there.
        now_or_later(move || {
            // SAFETY: a live descriptor made by this type, destroyed once, after the calls that use it
            // were queued (the libraries keep no pointer to it in queued work).
            unsafe { sys::hipsparseDestroySpMat(d.get() as _) };
        });
    }
}

/// A dense vector descriptor (`hipsparseDnVecDescr_t`).
pub(super) struct DnVec(pub(super) sys::hipsparseDnVecDescr_t);

impl DnVec {
    /// `len` elements of `T` at `ptr`.
    pub(super) fn new<T: SparseScalar>(ptr: DevicePtr, len: usize) -> Result<DnVec> {
        let mut d: sys::hipsparseDnVecDescr_t = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the descriptor only records the pointer, used by later calls on
        // memory the caller checked and ordered.
        check("hipsparseCreateDnVec", unsafe {
            sys::hipsparseCreateDnVec(&mut d, len as i64, ptr as _, T::DATA_TYPE as _)
        })?;
        Ok(DnVec(d))
    }

    /// Point the descriptor at `ptr` (same length and type).
    pub(super) fn set_values(&mut self, ptr: DevicePtr) -> Result<()> {
        // SAFETY: a live descriptor; it only records the pointer, as in `new`.
        check("hipsparseDnVecSetValues", unsafe {
            sys::hipsparseDnVecSetValues(self.0 as _, ptr as _)
        })
    }
}

impl Drop for DnVec {
    fn drop(&mut self) {
        let d = RawHandle(self.0);
        // As SpMat's.
        now_or_later(move || {
            // SAFETY: a live descriptor made by this type, destroyed once.
            unsafe { sys::hipsparseDestroyDnVec(d.get() as _) };
        });
    }
}

/// A dense column-major matrix descriptor (`hipsparseDnMatDescr_t`).
pub(super) struct DnMat(pub(super) sys::hipsparseDnMatDescr_t);

impl DnMat {
    /// A `rows x cols` column-major matrix with leading dimension `ld` at `ptr`.
    pub(super) fn new<T: SparseScalar>(
        ptr: DevicePtr,
        rows: usize,
        cols: usize,
        ld: usize,
    ) -> Result<DnMat> {
        let mut d: sys::hipsparseDnMatDescr_t = std::ptr::null_mut();
        // Column-major is 1 in every hipSPARSE (`HIPSPARSE_ORDER_COLUMN` in 5.x, `HIPSPARSE_ORDER_COL`
        // from 5.7) and in cuSPARSE.
        // SAFETY: a valid out-pointer; the descriptor only records the pointer.
        check("hipsparseCreateDnMat", unsafe {
            sys::hipsparseCreateDnMat(
                &mut d,
                rows as i64,
                cols as i64,
                ld as i64,
                ptr as _,
                T::DATA_TYPE as _,
                1 as _,
            )
        })?;
        Ok(DnMat(d))
    }
}

impl Drop for DnMat {
    fn drop(&mut self) {
        // SAFETY: a live descriptor made by this type, destroyed once.
        unsafe { sys::hipsparseDestroyDnMat(self.0 as _) };
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A sparse operand of [`Handle::spmv`](super::Handle::spmv) and [`Handle::spmm`](super::Handle::spmm):
/// [`Csr`] or [`Coo`]. Sealed: only this crate's matrices, valid by construction.
pub trait SparseMatrix<T: SparseScalar>: sealed::Sealed {
    /// Rows.
    fn rows(&self) -> usize;
    /// Columns.
    fn cols(&self) -> usize;
    #[doc(hidden)]
    fn id(&self) -> u64;
    #[doc(hidden)]
    fn descr(&self) -> Result<SpMat>;
    #[doc(hidden)]
    fn reads(&self) -> [Operand<'_>; 3];
}

impl<T: SparseScalar> sealed::Sealed for Csr<T> {}
impl<T: SparseScalar> SparseMatrix<T> for Csr<T> {
    fn rows(&self) -> usize {
        self.rows
    }
    fn cols(&self) -> usize {
        self.cols
    }
    fn id(&self) -> u64 {
        self.id
    }
    fn descr(&self) -> Result<SpMat> {
        csr_descr::<T>(
            self.rows,
            self.cols,
            self.nnz(),
            [
                self.offsets.device_ptr(),
                self.indices.device_ptr(),
                self.values.device_ptr(),
            ],
        )
    }
    fn reads(&self) -> [Operand<'_>; 3] {
        [read(&self.offsets), read(&self.indices), read(&self.values)]
    }
}

impl<T: SparseScalar> sealed::Sealed for Coo<T> {}
impl<T: SparseScalar> SparseMatrix<T> for Coo<T> {
    fn rows(&self) -> usize {
        self.rows
    }
    fn cols(&self) -> usize {
        self.cols
    }
    fn id(&self) -> u64 {
        self.id
    }
    fn descr(&self) -> Result<SpMat> {
        let mut d: sys::hipsparseSpMatDescr_t = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the arrays are this matrix's (checked when it was made), recorded
        // by the descriptor for calls that order them.
        check("hipsparseCreateCoo", unsafe {
            sys::hipsparseCreateCoo(
                &mut d,
                self.rows as i64,
                self.cols as i64,
                self.nnz() as i64,
                self.row_indices.device_ptr() as _,
                self.col_indices.device_ptr() as _,
                self.values.device_ptr() as _,
                sys::HIPSPARSE_INDEX_32I,
                sys::HIPSPARSE_INDEX_BASE_ZERO,
                T::DATA_TYPE as _,
            )
        })?;
        Ok(SpMat(d))
    }
    fn reads(&self) -> [Operand<'_>; 3] {
        [
            read(&self.row_indices),
            read(&self.col_indices),
            read(&self.values),
        ]
    }
}

/// A CSR descriptor over `[offsets, indices, values]` (null pointers for a matrix whose structure the
/// library will compute).
pub(super) fn csr_descr<T: SparseScalar>(
    rows: usize,
    cols: usize,
    nnz: usize,
    [offsets, indices, values]: [DevicePtr; 3],
) -> Result<SpMat> {
    let mut d: sys::hipsparseSpMatDescr_t = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; the arrays (or nulls) are recorded for later calls, which check and
    // order them.
    check("hipsparseCreateCsr", unsafe {
        sys::hipsparseCreateCsr(
            &mut d,
            rows as i64,
            cols as i64,
            nnz as i64,
            offsets as _,
            indices as _,
            values as _,
            sys::HIPSPARSE_INDEX_32I,
            sys::HIPSPARSE_INDEX_32I,
            sys::HIPSPARSE_INDEX_BASE_ZERO,
            T::DATA_TYPE as _,
        )
    })?;
    Ok(SpMat(d))
}
