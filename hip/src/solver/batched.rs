//! The batched Cholesky calls: many matrices in one call, through a device table of their addresses.

use super::calls::{int, matrix, read, write};
use super::info::Meaning;
use super::sizes::InfoCall;
use super::types::SolverScalar;
use super::{check, raw_uplo, Handle, Info, Operand, Uplo};
use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, DeviceMemory, DeviceMemoryMut, DevicePtr};
use std::os::raw::c_int;

/// What one `n x n` matrix with leading dimension `lda` spans (`lda >= n` checked by the caller).
fn span(n: usize, lda: usize) -> usize {
    if n == 0 {
        0
    } else {
        lda * (n - 1) + n
    }
}

impl Handle {
    /// Cholesky factorizations of many `n x n` matrices, one per buffer of `a`, each with leading
    /// dimension `lda` (`?potrfBatched`). The returned [`Info`] has one value per matrix; [`Info::check`]
    /// names the first that is not positive definite. Unlike [`potrf`](Self::potrf), the triangle
    /// `uplo` does not name may be overwritten too: cuSOLVER's batched Cholesky does (measured on an
    /// H200, CUDA 11.8).
    pub fn potrf_batched<T: SolverScalar, M: DeviceMemoryMut<T>>(
        &mut self,
        uplo: Uplo,
        n: usize,
        a: &mut [&mut M],
        lda: usize,
    ) -> Result<Info> {
        let name = T::NAMES.potrf_batched;
        let mut ld = int("potrf_batched: lda", lda.max(1))?;
        for m in a.iter() {
            ld = matrix("potrf_batched: a", m.len(), n, n, lda)?;
        }
        let count = int("potrf_batched: batch count", a.len())?;
        if a.is_empty() || n == 0 {
            return self.answered(name, Meaning::NotPositiveDefinite, true, a.len());
        }
        let info = self.info(InfoCall::PotrfBatched, a.len())?;
        let pa = self.pointer_table(&[a.iter().map(|m| m.device_ptr()).collect()])?;
        let (u, n) = (raw_uplo(uplo), n as c_int);
        // SAFETY: a live handle; the query reads no memory.
        let answer = self.query(
            name,
            [u as i64, n as i64, ld as i64, count as i64],
            |h, lw| unsafe { T::potrf_batched_bs(h, u, n, pa, ld, lw, count) },
        )?;
        let (w, lw, _) = self.work::<T>(name, answer, 0, 0)?;
        let mut ops: Vec<Operand<'_>> = a.iter().map(|m| write(&**m)).collect();
        ops.extend([read(self.table()?), write(&info)]);
        let _op = self.begin(name, &ops)?;
        // SAFETY: the table holds `count` pointers, each to a distinct `&mut` buffer spanning `n x n` with
        // `lda` (checked), on the handle's device (checked in begin), ordered and kept alive by the memory
        // model; the table is ordered after its upload on this stream and freed in its order.
        check(name, unsafe {
            T::potrf_batched(self.raw, u, n, pa, ld, w, lw, info.device_ptr(), count)
        })?;
        Ok(self.outcome(name, Meaning::NotPositiveDefinite, true, info))
    }

    /// [`potrf_batched`](Self::potrf_batched) of `count` `n x n` matrices stored in one buffer, `stride`
    /// elements apart (each with leading dimension `lda`): the usual layout of many small matrices.
    /// `stride` must keep the matrices apart (at least what one spans, `lda * (n - 1) + n`), and `a` must
    /// hold them all.
    pub fn potrf_strided_batched<T: SolverScalar>(
        &mut self,
        uplo: Uplo,
        n: usize,
        a: &mut impl DeviceMemoryMut<T>,
        lda: usize,
        (stride, count): (usize, usize),
    ) -> Result<Info> {
        let name = T::NAMES.potrf_batched;
        let ld = matrix("potrf_strided_batched: one matrix", stride, n, n, lda)?;
        let count_int = int("potrf_strided_batched: batch count", count)?;
        let need = match count {
            0 => Some(0),
            // One matrix spans `lda * (n - 1) + n` <= stride (checked above): no overflow.
            c => stride
                .checked_mul(c - 1)
                .and_then(|x| x.checked_add(span(n, lda))),
        };
        match need {
            Some(need) if a.len() >= need => {}
            _ => {
                return Err(Error::InvalidArgument {
                    what: "potrf_strided_batched: a",
                    value: format!("a buffer of {} elements", a.len()),
                    reason: format!("{count} matrices {stride} elements apart do not fit"),
                })
            }
        }
        if count == 0 || n == 0 {
            return self.answered(name, Meaning::NotPositiveDefinite, true, count);
        }
        let info = self.info(InfoCall::PotrfBatched, count)?;
        let base = a.device_ptr().cast::<T>();
        let strided = (base as usize, stride * std::mem::size_of::<T>(), count);
        let pa = match &self.table {
            // The same matrices as the last call: no table to build on the host, nothing to upload.
            Some(t) if t.strided == Some(strided) => t.device.device_ptr(),
            _ => {
                let pa = self.pointer_table(&[(0..count)
                    .map(|i| base.wrapping_add(i * stride).cast())
                    .collect()])?;
                if let Some(t) = &mut self.table {
                    t.strided = Some(strided);
                }
                pa
            }
        };
        let (u, n) = (raw_uplo(uplo), n as c_int);
        // SAFETY: a live handle; the query reads no memory.
        let answer = self.query(
            name,
            [u as i64, n as i64, ld as i64, count_int as i64],
            |h, lw| unsafe { T::potrf_batched_bs(h, u, n, pa, ld, lw, count_int) },
        )?;
        let (w, lw, _) = self.work::<T>(name, answer, 0, 0)?;
        let _op = self.begin(name, &[write(&*a), read(self.table()?), write(&info)])?;
        // SAFETY: the table holds `count` pointers into `a`, `stride` apart; each matrix spans at most
        // `stride` elements (checked: `stride` holds one `n x n` matrix with `lda`), so no two overlap,
        // and the last ends inside `a` (checked); all ordered on the handle's stream.
        check(name, unsafe {
            T::potrf_batched(self.raw, u, n, pa, ld, w, lw, info.device_ptr(), count_int)
        })?;
        Ok(self.outcome(name, Meaning::NotPositiveDefinite, true, info))
    }

    /// Solve `A_i X_i = B_i` for each pair of buffers, with each `a[i]` a factor from
    /// [`potrf_batched`](Self::potrf_batched) and each `b[i]` an `n x nrhs` matrix overwritten with
    /// `X_i` (`?potrsBatched`). cuSOLVER (HIP's NVIDIA platform) takes `nrhs == 1` only: more is
    /// [`Error::NotSupported`] there. The returned [`Info`] holds one value per matrix (zeroed before
    /// the call): the call only checks its arguments, and cuSOLVER reports a refused one in the first.
    #[allow(clippy::too_many_arguments)]
    pub fn potrs_batched<T: SolverScalar, A: DeviceMemory<T>, B: DeviceMemoryMut<T>>(
        &mut self,
        uplo: Uplo,
        n: usize,
        nrhs: usize,
        a: &[&A],
        lda: usize,
        b: &mut [&mut B],
        ldb: usize,
    ) -> Result<Info> {
        let name = T::NAMES.potrs_batched;
        if cfg!(hip_platform = "nvidia") && nrhs != 1 {
            return Err(Error::NotSupported {
                what: "potrs_batched with more than one right-hand side",
                reason: "cuSOLVER's potrsBatched (HIP's NVIDIA platform) takes nrhs == 1 only",
            });
        }
        crate::memory::check_len(
            "potrs_batched: b (one buffer per matrix of a)",
            a.len(),
            b.len(),
        )?;
        let (mut la, mut lb) = (
            int("potrs_batched: lda", lda.max(1))?,
            int("potrs_batched: ldb", ldb.max(1))?,
        );
        for (x, y) in a.iter().zip(b.iter()) {
            la = matrix("potrs_batched: a", x.len(), n, n, lda)?;
            lb = matrix("potrs_batched: b", y.len(), n, nrhs, ldb)?;
        }
        int("potrs_batched: nrhs", nrhs)?;
        let count = int("potrs_batched: batch count", a.len())?;
        if a.is_empty() || n == 0 || nrhs == 0 {
            return self.answered(name, Meaning::ArgumentsOnly, false, a.len());
        }
        // One `info` per matrix, zeroed: hipSOLVER's rocSOLVER backend zeroes `batch_count` ints here
        // (`hipsolverZeroInfo(handle, devInfo, batch_count)`), cuSOLVER writes only the first
        // (see `sizes`). One int, as before, was a device write past the allocation on AMD.
        let info = self.info(InfoCall::PotrsBatched, a.len())?;
        let pa = self.pointer_table(&[
            a.iter().map(|m| m.device_ptr()).collect(),
            b.iter().map(|m| m.device_ptr()).collect(),
        ])?;
        let pb = pa.cast::<usize>().wrapping_add(a.len()).cast();
        let (u, n, nrhs) = (raw_uplo(uplo), n as c_int, nrhs as c_int);
        // SAFETY: a live handle; the query reads no memory.
        let answer = self.query(
            name,
            [
                u as i64,
                n as i64,
                nrhs as i64,
                la as i64,
                lb as i64,
                count as i64,
            ],
            |h, lw| unsafe { T::potrs_batched_bs(h, u, n, nrhs, pa, la, pb, lb, lw, count) },
        )?;
        let (w, lw, _) = self.work::<T>(name, answer, 0, 0)?;
        let mut ops: Vec<Operand<'_>> = a.iter().map(|m| read(*m)).collect();
        ops.extend(b.iter().map(|m| write(&**m)));
        ops.extend([read(self.table()?), write(&info)]);
        let _op = self.begin(name, &ops)?;
        // SAFETY: as in potrf_batched; the table's second half points at the distinct `&mut` buffers of
        // `b`, each spanning `n x nrhs` with `ldb` (checked).
        check(name, unsafe {
            T::potrs_batched(
                self.raw,
                u,
                n,
                nrhs,
                pa,
                la,
                pb,
                lb,
                w,
                lw,
                info.device_ptr(),
                count,
            )
        })?;
        Ok(self.outcome(name, Meaning::ArgumentsOnly, false, info))
    }

    /// A device table of the pointer arrays, one after the other ([`Handle::table`] then lends it): the
    /// handle's last table when it holds the same pointers (a batch factored again costs no upload),
    /// else a new one allocated and uploaded in the stream's order (the old one freed in its order:
    /// dropping it waits for nothing). Returns the table's device address.
    fn pointer_table(&mut self, arrays: &[Vec<DevicePtr>]) -> Result<DevicePtr> {
        let host: Vec<usize> = arrays.iter().flatten().map(|&p| p as usize).collect();
        if let Some(t) = &self.table {
            if t.host == host {
                return Ok(t.device.device_ptr());
            }
        }
        self.table = None;
        // SAFETY: every element is written by the upload below, queued on the same stream before any
        // reader (the memory model records the upload as the writer); on failure it is dropped unread.
        let table = unsafe { DeviceBuffer::<usize>::alloc_async_on(&self.stream, host.len())? };
        let op = self.begin("solver pointer table", &[write(&table)])?;
        // SAFETY: `table` holds `host.len()` elements on the handle's device (current), ordered on the
        // stream (recorded under `op`). `host` is pageable memory: both runtimes copy a pageable source
        // out before hipMemcpyAsync returns (CUDA stages it at once; HIP copies synchronously), so it
        // may be dropped after the call (it is kept, to compare the next table with).
        unsafe {
            crate::result::memcpy_async(
                table.device_ptr(),
                host.as_ptr().cast(),
                std::mem::size_of_val(host.as_slice()),
                hip_sys::hipMemcpyHostToDevice,
                self.stream.raw,
            )?
        };
        drop(op);
        let ptr = table.device_ptr();
        self.table = Some(PointerTable {
            host,
            device: table,
            strided: None,
        });
        Ok(ptr)
    }

    /// The table [`pointer_table`](Self::pointer_table) made or kept.
    fn table(&self) -> Result<&DeviceBuffer<usize>> {
        self.table
            .as_ref()
            .map(|t| &t.device)
            .ok_or_else(|| Error::InvalidArgument {
                what: "solver pointer table",
                value: "none".into(),
                reason: "a batched call lost its table: please report this defect".into(),
            })
    }
}

/// The device table of a batched call's matrix addresses, with the host copy it was uploaded from.
pub(super) struct PointerTable {
    host: Vec<usize>,
    device: DeviceBuffer<usize>,
    /// `(base address, stride in bytes, count)` when the table holds one strided batch's addresses:
    /// a strided call of the same batch reuses the table without building its addresses again.
    strided: Option<(usize, usize, usize)>,
}
