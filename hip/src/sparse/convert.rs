//! Conversions between CSR, COO and dense column-major matrices, on the device.

use super::calls::spmat_nnz;
use super::descr::{csr_descr, DnMat, SparseMatrix};
use super::{check, sys, Coo, Csr, Handle, SparseScalar};
use crate::dense_shape::{matrix, read, write};
use crate::error::Result;
use crate::memory::{DeviceBuffer, DeviceMemory, DeviceMemoryMut};

impl<T: SparseScalar> Csr<T> {
    /// The same matrix in COO form (`hipsparseXcsr2coo` for the rows; indices and values copied), queued
    /// on `handle`'s stream.
    pub fn to_coo(&self, handle: &mut Handle) -> Result<Coo<T>> {
        let nnz = self.nnz();
        // SAFETY: every element is written by the conversion below (one row index per entry).
        let rows = unsafe { DeviceBuffer::<i32>::alloc_async_on(&handle.stream, nnz)? };
        if nnz > 0 {
            let _op = handle.begin("hipsparseXcsr2coo", &[read(&self.offsets), write(&rows)])?;
            // SAFETY: `offsets` holds `rows + 1` valid offsets ending at `nnz` (by construction), `rows`
            // `nnz` ints; both on the handle's device, ordered on its stream.
            check("hipsparseXcsr2coo", unsafe {
                sys::hipsparseXcsr2coo(
                    handle.raw,
                    self.offsets.device_ptr().cast(),
                    nnz as i32,
                    self.rows as i32,
                    rows.device_ptr().cast(),
                    sys::HIPSPARSE_INDEX_BASE_ZERO,
                )
            })?;
        }
        Ok(Coo {
            id: super::matrix::next_id(),
            rows: self.rows,
            cols: self.cols,
            row_indices: rows,
            col_indices: handle.copy(&self.indices)?,
            values: handle.copy(&self.values)?,
        })
    }

    /// Write the matrix into the dense column-major `rows x cols` matrix `out` (leading dimension `ld`),
    /// zeros included (`hipsparseSparseToDense`).
    pub fn to_dense(
        &self,
        handle: &mut Handle,
        out: &mut impl DeviceMemoryMut<T>,
        ld: usize,
    ) -> Result<()> {
        matrix("to_dense: out", out.len(), self.rows, self.cols, ld)?;
        if self.rows == 0 || self.cols == 0 {
            return Ok(());
        }
        let ma = self.descr()?;
        let mb = DnMat::new::<T>(out.device_ptr(), self.rows, self.cols, ld)?;
        let alg = sys::HIPSPARSE_SPARSETODENSE_ALG_DEFAULT;
        handle.device.bind()?;
        let mut bytes = 0usize;
        // SAFETY: a live handle and descriptors; the query reads no device memory.
        check("hipsparseSparseToDense_bufferSize", unsafe {
            sys::hipsparseSparseToDense_bufferSize(handle.raw, ma.0 as _, mb.0, alg, &mut bytes)
        })?;
        let buffer = handle.scratch(bytes)?;
        let [r0, r1, r2] = self.reads();
        let _op = handle.begin("hipsparseSparseToDense", &[r0, r1, r2, write(&*out)])?;
        // SAFETY: a valid matrix (by construction); `out` spans `rows x cols` with `ld` (checked); all
        // ordered on the handle's stream.
        check("hipsparseSparseToDense", unsafe {
            sys::hipsparseSparseToDense(handle.raw, ma.0 as _, mb.0, alg, buffer)
        })
    }

    /// The CSR form of the dense column-major `rows x cols` matrix `a` (leading dimension `ld`): its
    /// non-zero entries (`hipsparseDenseToSparse_*`). The library counts the entries on the device and
    /// hands the count to the host before the arrays can be allocated: this call waits for that.
    pub fn from_dense(
        handle: &mut Handle,
        a: &impl DeviceMemory<T>,
        rows: usize,
        cols: usize,
        ld: usize,
    ) -> Result<Csr<T>> {
        matrix("from_dense: a", a.len(), rows, cols, ld)?;
        // SAFETY: written by the analysis below (the offsets) before any reader.
        let offsets = unsafe { DeviceBuffer::<i32>::alloc_async_on(&handle.stream, rows + 1)? };
        let ma = DnMat::new::<T>(a.device_ptr(), rows, cols, ld)?;
        let null = std::ptr::null_mut();
        let mb = csr_descr::<T>(rows, cols, 0, [offsets.device_ptr(), null, null])?;
        let alg = sys::HIPSPARSE_DENSETOSPARSE_ALG_DEFAULT;
        handle.device.bind()?;
        let mut bytes = 0usize;
        // SAFETY: a live handle and descriptors; the query reads no device memory.
        check("hipsparseDenseToSparse_bufferSize", unsafe {
            sys::hipsparseDenseToSparse_bufferSize(handle.raw, ma.0 as _, mb.0, alg, &mut bytes)
        })?;
        let buffer = handle.scratch(bytes)?;
        {
            let _op = handle.begin(
                "hipsparseDenseToSparse_analysis",
                &[read(a), write(&offsets)],
            )?;
            // SAFETY: `a` spans `rows x cols` with `ld` (checked), `offsets` `rows + 1`; ordered on the
            // handle's stream; the analysis records the count of entries in `mb`.
            check("hipsparseDenseToSparse_analysis", unsafe {
                sys::hipsparseDenseToSparse_analysis(handle.raw, ma.0 as _, mb.0, alg, buffer)
            })?;
        }
        let nnz = spmat_nnz(&mb)?;
        // SAFETY: written by the conversion below.
        let indices = unsafe { DeviceBuffer::<i32>::alloc_async_on(&handle.stream, nnz)? };
        // SAFETY: written by the conversion below.
        let values = unsafe { DeviceBuffer::<T>::alloc_async_on(&handle.stream, nnz)? };
        // SAFETY: live descriptor; the arrays hold `rows + 1` offsets and `nnz` entries.
        check("hipsparseCsrSetPointers", unsafe {
            sys::hipsparseCsrSetPointers(
                mb.0,
                offsets.device_ptr(),
                indices.device_ptr(),
                values.device_ptr(),
            )
        })?;
        let _op = handle.begin(
            "hipsparseDenseToSparse_convert",
            &[read(a), write(&offsets), write(&indices), write(&values)],
        )?;
        // SAFETY: as the analysis; the arrays are the sizes the analysis computed.
        check("hipsparseDenseToSparse_convert", unsafe {
            sys::hipsparseDenseToSparse_convert(handle.raw, ma.0 as _, mb.0, alg, buffer)
        })?;
        drop(_op);
        Ok(Csr {
            id: super::matrix::next_id(),
            rows,
            cols,
            offsets,
            indices,
            values,
        })
    }
}

impl<T: SparseScalar> Coo<T> {
    /// The same matrix in CSR form (`hipsparseXcoo2csr` for the offsets, which needs the rows sorted, as
    /// every [`Coo`] has them; indices and values copied), queued on `handle`'s stream.
    pub fn to_csr(&self, handle: &mut Handle) -> Result<Csr<T>> {
        let nnz = self.nnz();
        let offsets = if nnz == 0 {
            DeviceBuffer::<i32>::zeroed_async_on(&handle.stream, self.rows + 1)?
        } else {
            // SAFETY: every element is written by the conversion below (`rows + 1` offsets).
            let offsets =
                unsafe { DeviceBuffer::<i32>::alloc_async_on(&handle.stream, self.rows + 1)? };
            let _op = handle.begin(
                "hipsparseXcoo2csr",
                &[read(&self.row_indices), write(&offsets)],
            )?;
            // SAFETY: `row_indices` holds `nnz` sorted rows below `rows` (by construction), `offsets`
            // `rows + 1` ints; both on the handle's device, ordered on its stream.
            check("hipsparseXcoo2csr", unsafe {
                sys::hipsparseXcoo2csr(
                    handle.raw,
                    self.row_indices.device_ptr().cast(),
                    nnz as i32,
                    self.rows as i32,
                    offsets.device_ptr().cast(),
                    sys::HIPSPARSE_INDEX_BASE_ZERO,
                )
            })?;
            drop(_op);
            offsets
        };
        Ok(Csr {
            id: super::matrix::next_id(),
            rows: self.rows,
            cols: self.cols,
            offsets,
            indices: handle.copy(&self.col_indices)?,
            values: handle.copy(&self.values)?,
        })
    }
}
