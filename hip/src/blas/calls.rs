//! The typed calls: level 1 (`axpy`, `dot`, `dotc`, `nrm2`, `scal`), level 2 (`gemv`) and level 3 (`gemm`
//! and its strided and pointer-array batches).

use super::shape::{holds, int, positive_vector_len, vector_len, Gemm, Gemv, StridedBatch};
use super::types::BlasScalar;
use super::{check, raw_op, scalar_mode, Handle, RelaxedCaptureMode, Scalar, Table};
use crate::device::Device;
use crate::error::Result;
use crate::memory::{Access, Allocation, DeviceMemory, DeviceMemoryMut};
use crate::stream::StreamOp;
use std::sync::Arc;

pub(super) type Operand<'a> = (&'a Device, &'a Arc<Allocation>, Access);

pub(super) fn read<'a, T: BlasScalar>(m: &'a impl DeviceMemory<T>) -> Operand<'a> {
    (m.device(), m.allocation(), Access::Read)
}

pub(super) fn write<'a, T: BlasScalar>(m: &'a impl DeviceMemory<T>) -> Operand<'a> {
    (m.device(), m.allocation(), Access::Write)
}

/// A vector operand of `n` elements `inc` apart must fit in `len`.
fn vector(what: &'static str, len: usize, n: usize, inc: i32) -> Result<()> {
    let need = vector_len(what, n, inc)?;
    holds(what, len, need, &|| {
        format!("a vector of {n} elements {inc} apart")
    })
}

/// [`vector`] for the calls BLAS defines for positive increments only.
pub(super) fn positive_vector(what: &'static str, len: usize, n: usize, inc: i32) -> Result<()> {
    let need = positive_vector_len(what, n, inc)?;
    holds(what, len, need, &|| {
        format!("a vector of {n} elements {inc} apart")
    })
}

impl Handle {
    /// `y = alpha * x + y` over `n` elements, `incx` / `incy` apart (`hipblas?axpy`).
    pub fn axpy<'s, T: BlasScalar>(
        &self,
        n: usize,
        alpha: impl Into<Scalar<'s, T>>,
        x: &impl DeviceMemory<T>,
        incx: i32,
        y: &mut impl DeviceMemoryMut<T>,
        incy: i32,
    ) -> Result<()> {
        let alpha = alpha.into();
        vector("axpy operand x", x.len(), n, incx)?;
        vector("axpy operand y", y.len(), n, incy)?;
        let ni = int("n", n)?;
        let _op = self.begin(T::NAMES.axpy, &[read(x), write(y)], &[&alpha])?;
        // SAFETY: live handle on the operands' device (checked, current); x and y span the elements n and
        // the increments reach (checked); alpha points at a live host value or device element. The stream
        // is ordered after the operands' conflicting users and recorded as their user, so neither is
        // freed or used conflictingly before the call is done.
        check(T::NAMES.axpy, unsafe {
            T::axpy(
                self.raw,
                ni,
                alpha.ptr(),
                x.device_ptr(),
                incx,
                y.device_ptr(),
                incy,
            )
        })
    }

    /// `alpha * x` in place over `n` elements `incx` (at least 1) apart (`hipblas?scal`).
    pub fn scal<'s, T: BlasScalar>(
        &self,
        n: usize,
        alpha: impl Into<Scalar<'s, T>>,
        x: &mut impl DeviceMemoryMut<T>,
        incx: i32,
    ) -> Result<()> {
        let alpha = alpha.into();
        positive_vector("scal operand x", x.len(), n, incx)?;
        let ni = int("n", n)?;
        let _op = self.begin(T::NAMES.scal, &[write(x)], &[&alpha])?;
        // SAFETY: as in axpy, with one vector.
        check(T::NAMES.scal, unsafe {
            T::scal(self.raw, ni, alpha.ptr(), x.device_ptr(), incx)
        })
    }

    /// `sum(x[i] * y[i])` over `n` elements (unconjugated for complex types: `hipblas?dotu`), returned
    /// to the host once the call has run.
    pub fn dot<T: BlasScalar>(
        &self,
        n: usize,
        x: &impl DeviceMemory<T>,
        incx: i32,
        y: &impl DeviceMemory<T>,
        incy: i32,
    ) -> Result<T> {
        self.dot_host(false, n, x, incx, y, incy)
    }

    /// `sum(conj(x[i]) * y[i])` (`hipblas?dotc`; the same as [`dot`](Self::dot) for real types).
    pub fn dotc<T: BlasScalar>(
        &self,
        n: usize,
        x: &impl DeviceMemory<T>,
        incx: i32,
        y: &impl DeviceMemory<T>,
        incy: i32,
    ) -> Result<T> {
        self.dot_host(true, n, x, incx, y, incy)
    }

    fn dot_host<T: BlasScalar>(
        &self,
        conj: bool,
        n: usize,
        x: &impl DeviceMemory<T>,
        incx: i32,
        y: &impl DeviceMemory<T>,
        incy: i32,
    ) -> Result<T> {
        let name = if conj { T::NAMES.dotc } else { T::NAMES.dot };
        vector("dot operand x", x.len(), n, incx)?;
        vector("dot operand y", y.len(), n, incy)?;
        let ni = int("n", n)?;
        let _op = self.begin_host_result::<T>(name, &[read(x), read(y)])?;
        let mut r = std::mem::MaybeUninit::<T>::zeroed();
        // SAFETY: as in axpy; pointer mode host: hipBLAS writes one T to `r` before returning (it waits
        // for the call), and all-zero bits are a valid T (DeviceCopy) should it write nothing (n == 0).
        let status = unsafe {
            let f = if conj { T::dotc } else { T::dot };
            f(
                self.raw,
                ni,
                x.device_ptr(),
                incx,
                y.device_ptr(),
                incy,
                r.as_mut_ptr(),
            )
        };
        check(name, status)?;
        // SAFETY: zero-initialised and possibly overwritten with a value: valid either way (DeviceCopy).
        Ok(unsafe { r.assume_init() })
    }

    /// [`dot`](Self::dot) (or [`dotc`](Self::dotc) with `conj`) into the first element of `result`, on
    /// the device, without waiting.
    #[allow(clippy::too_many_arguments)]
    pub fn dot_into<T: BlasScalar>(
        &self,
        conj: bool,
        n: usize,
        x: &impl DeviceMemory<T>,
        incx: i32,
        y: &impl DeviceMemory<T>,
        incy: i32,
        result: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        let name = if conj { T::NAMES.dotc } else { T::NAMES.dot };
        vector("dot operand x", x.len(), n, incx)?;
        vector("dot operand y", y.len(), n, incy)?;
        holds("dot result", result.len(), 1, &|| "one element".into())?;
        let ni = int("n", n)?;
        let _op = self.begin_device_result(name, &[read(x), read(y), write(result)])?;
        // SAFETY: as in axpy; pointer mode device: hipBLAS writes one T to `result`'s first element
        // (it holds at least one, checked), ordered by the model like the operands.
        check(name, unsafe {
            let f = if conj { T::dotc } else { T::dot };
            f(
                self.raw,
                ni,
                x.device_ptr(),
                incx,
                y.device_ptr(),
                incy,
                result.device_ptr().cast(),
            )
        })
    }

    /// The Euclidean norm of `n` elements `incx` (at least 1) apart (`hipblas?nrm2`), returned to the host once the
    /// call has run.
    pub fn nrm2<T: BlasScalar>(
        &self,
        n: usize,
        x: &impl DeviceMemory<T>,
        incx: i32,
    ) -> Result<T::Real> {
        positive_vector("nrm2 operand x", x.len(), n, incx)?;
        let ni = int("n", n)?;
        let _op = self.begin_host_result::<T>(T::NAMES.nrm2, &[read(x)])?;
        let mut r = T::Real::default();
        // SAFETY: as in dot: pointer mode host, one T::Real written to `r` before returning.
        check(T::NAMES.nrm2, unsafe {
            T::nrm2(self.raw, ni, x.device_ptr(), incx, &mut r)
        })?;
        Ok(r)
    }

    /// [`nrm2`](Self::nrm2) into the first element of `result`, on the device, without waiting.
    pub fn nrm2_into<T: BlasScalar>(
        &self,
        n: usize,
        x: &impl DeviceMemory<T>,
        incx: i32,
        result: &mut impl DeviceMemoryMut<T::Real>,
    ) -> Result<()> {
        positive_vector("nrm2 operand x", x.len(), n, incx)?;
        holds("nrm2 result", result.len(), 1, &|| "one element".into())?;
        let ni = int("n", n)?;
        let res = (result.device(), result.allocation(), Access::Write);
        let _op = self.begin_device_result(T::NAMES.nrm2, &[read(x), res])?;
        // SAFETY: as in dot_into.
        check(T::NAMES.nrm2, unsafe {
            T::nrm2(
                self.raw,
                ni,
                x.device_ptr(),
                incx,
                result.device_ptr().cast(),
            )
        })
    }

    /// `y = alpha * op(A) * x + beta * y` (`hipblas?gemv`), shaped by `shape`.
    pub fn gemv<'s, T: BlasScalar>(
        &self,
        shape: &Gemv,
        alpha: impl Into<Scalar<'s, T>>,
        a: &impl DeviceMemory<T>,
        x: &impl DeviceMemory<T>,
        beta: impl Into<Scalar<'s, T>>,
        y: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        let (alpha, beta) = (alpha.into(), beta.into());
        scalar_mode(&alpha, &beta)?;
        let (lda, [na, nx, ny]) = shape.resolve()?;
        let what = || format!("{shape:?}");
        holds("gemv operand a", a.len(), na, &what)?;
        holds("gemv operand x", x.len(), nx, &what)?;
        holds("gemv operand y", y.len(), ny, &what)?;
        let _op = self.begin(
            T::NAMES.gemv,
            &[read(a), read(x), write(y)],
            &[&alpha, &beta],
        )?;
        // SAFETY: as in axpy: A, x and y span what the shape reaches (checked; the values fit in int,
        // checked by resolve).
        check(T::NAMES.gemv, unsafe {
            T::gemv(
                self.raw,
                raw_op(shape.op),
                shape.m as i32,
                shape.n as i32,
                alpha.ptr(),
                a.device_ptr(),
                lda as i32,
                x.device_ptr(),
                shape.incx,
                beta.ptr(),
                y.device_ptr(),
                shape.incy,
            )
        })
    }

    /// `C = alpha * op(A) * op(B) + beta * C` (`hipblas?gemm`), shaped by `shape`.
    pub fn gemm<'s, T: BlasScalar>(
        &self,
        shape: &Gemm,
        alpha: impl Into<Scalar<'s, T>>,
        a: &impl DeviceMemory<T>,
        b: &impl DeviceMemory<T>,
        beta: impl Into<Scalar<'s, T>>,
        c: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        let (alpha, beta) = (alpha.into(), beta.into());
        scalar_mode(&alpha, &beta)?;
        let call = shape.resolve()?;
        check_operands(shape, &call.len, [a.len(), b.len(), c.len()])?;
        let _op = self.begin(
            T::NAMES.gemm,
            &[read(a), read(b), write(c)],
            &[&alpha, &beta],
        )?;
        let (x, y) = call.ordered(a.device_ptr(), b.device_ptr());
        let ([m, n, k], [lx, ly, lc]) = call.ints();
        // SAFETY: as in axpy: A, B and C span every element the shape reaches (checked; the dimensions and
        // leading dimensions fit in int, checked by resolve); in row-major the call's operands are the
        // user's B and A, with their own leading dimensions.
        check(T::NAMES.gemm, unsafe {
            T::gemm(
                self.raw,
                raw_op(call.op[0]),
                raw_op(call.op[1]),
                m,
                n,
                k,
                alpha.ptr(),
                x,
                lx,
                y,
                ly,
                beta.ptr(),
                c.device_ptr(),
                lc,
            )
        })
    }

    /// `count` products `C_i = alpha * op(A_i) * op(B_i) + beta * C_i`, the matrices of each operand
    /// `batch`'s strides apart in one buffer (`hipblas?gemmStridedBatched`).
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_strided_batched<'s, T: BlasScalar>(
        &self,
        shape: &Gemm,
        batch: &StridedBatch,
        alpha: impl Into<Scalar<'s, T>>,
        a: &impl DeviceMemory<T>,
        b: &impl DeviceMemory<T>,
        beta: impl Into<Scalar<'s, T>>,
        c: &mut impl DeviceMemoryMut<T>,
    ) -> Result<()> {
        let (alpha, beta) = (alpha.into(), beta.into());
        scalar_mode(&alpha, &beta)?;
        let call = shape.resolve()?;
        let (stride, need) = batch.resolve(call.len)?;
        check_operands_batched(shape, batch, &need, [a.len(), b.len(), c.len()])?;
        let name = T::NAMES.gemm_strided_batched;
        let _op = self.begin(name, &[read(a), read(b), write(c)], &[&alpha, &beta])?;
        let (x, y) = call.ordered(a.device_ptr(), b.device_ptr());
        let (sx, sy) = call.ordered(stride[0], stride[1]);
        let ([m, n, k], [lx, ly, lc]) = call.ints();
        // SAFETY: as in gemm, for `count` matrices per operand, each buffer holding the last one at
        // `stride * (count - 1)` (checked), strides fitting i64 and count in int (checked by resolve).
        check(name, unsafe {
            T::gemm_strided_batched(
                self.raw,
                raw_op(call.op[0]),
                raw_op(call.op[1]),
                m,
                n,
                k,
                alpha.ptr(),
                x,
                lx,
                sx as i64,
                y,
                ly,
                sy as i64,
                beta.ptr(),
                c.device_ptr(),
                lc,
                stride[2] as i64,
                batch.count as i32,
            )
        })
    }

    /// Products `C_i = alpha * op(A_i) * op(B_i) + beta * C_i` over separate buffers of one shape
    /// (`hipblas?gemmBatched`): `a`, `b` and `c` have one buffer per product.
    ///
    /// hipBLAS reads the buffers' addresses from arrays in device memory: the call writes them into a
    /// table of pinned memory the handle keeps and queues its upload (`hipMemcpyAsync`) on the handle's
    /// stream before the GEMM. Like every call it is queued and returns at once, and it can be captured:
    /// the graph keeps the table and uploads it again on each replay. A table is reused once the call
    /// that last used it is done; with [`MAX_TABLES`](Self::MAX_TABLES) calls of this handle still
    /// queued, the next waits on the host for the oldest. The tables are freed with the handle.
    pub fn gemm_batched<'s, T: BlasScalar, M: DeviceMemory<T>, N: DeviceMemoryMut<T>>(
        &self,
        shape: &Gemm,
        alpha: impl Into<Scalar<'s, T>>,
        a: &[&M],
        b: &[&M],
        beta: impl Into<Scalar<'s, T>>,
        c: &mut [&mut N],
    ) -> Result<()> {
        let (alpha, beta) = (alpha.into(), beta.into());
        scalar_mode(&alpha, &beta)?;
        let call = shape.resolve()?;
        crate::memory::check_len(
            "gemm_batched: b (one buffer per product of a)",
            a.len(),
            b.len(),
        )?;
        crate::memory::check_len(
            "gemm_batched: c (one buffer per product of a)",
            a.len(),
            c.len(),
        )?;
        let count = int("batch count", a.len())?;
        for i in 0..a.len() {
            check_operands(shape, &call.len, [a[i].len(), b[i].len(), c[i].len()])?;
        }
        if a.is_empty() {
            return Ok(());
        }
        let mut ops: Vec<Operand<'_>> = Vec::with_capacity(3 * a.len());
        ops.extend(a.iter().map(|m| read(*m)));
        ops.extend(b.iter().map(|m| read(*m)));
        ops.extend(c.iter().map(|m| write(&**m)));
        let name = T::NAMES.gemm_batched;
        let op = self.begin(name, &ops, &[&alpha, &beta])?;
        // The call's three pointer arrays, one after the other, in one table (count fits an int: 3 * count
        // fits a usize).
        let len = 3 * a.len();
        let mut table = self.take_table(len)?;
        let (first, second) = call.ordered(a, b);
        table.write(
            len,
            (first.iter().map(|m| m.device_ptr()))
                .chain(second.iter().map(|m| m.device_ptr()))
                .chain(c.iter().map(|m| m.device_ptr()))
                .map(|p| p as usize),
        );
        let ([m, n, k], [lx, ly, lc]) = call.ints();
        let array = |i: usize| table.array(i, a.len());
        let queued = table.upload(len, self.stream_raw).and_then(|()| {
            // SAFETY: as in gemm for each product. The table's three arrays hold `count` device pointers
            // each to those buffers (the C buffers are distinct `&mut` borrows, so no two products write
            // the same memory), uploaded just before on the same stream; the table lives until the call
            // is done (its event is recorded after it below, or the capture's graph keeps it).
            check(name, unsafe {
                T::gemm_batched(
                    self.raw,
                    raw_op(call.op[0]),
                    raw_op(call.op[1]),
                    m,
                    n,
                    k,
                    alpha.ptr(),
                    array(0),
                    lx,
                    array(1),
                    ly,
                    beta.ptr(),
                    array(2),
                    lc,
                    count,
                )
            })
        });
        self.give_back_table(table, &op);
        queued
    }

    /// Calls of [`gemm_batched`](Self::gemm_batched) a handle may have queued before the next waits on
    /// the host for the oldest (each holds a pointer table until it is done).
    pub const MAX_TABLES: usize = super::tables::MAX_TABLES;

    /// A table for `len` pointers that no queued work uses. Allocating and asking events are refused by
    /// CUDA while a capture in global (or this thread's) mode is under way: done in relaxed mode.
    fn take_table(&self, len: usize) -> Result<Table> {
        let _relaxed = RelaxedCaptureMode::enter();
        self.tables
            .borrow_mut()
            .take(len, |capacity| Table::new(&self.device, capacity))
    }

    /// After a call queued under `op` used `table`: live, its event is recorded and it goes back to the
    /// cache (or is set aside if that fails); captured, the graph keeps it.
    fn give_back_table(&self, mut table: Table, op: &StreamOp<'_>) {
        if op.is_capturing() {
            match op.capture_log() {
                Some(log) => crate::stream::lock(&log.kept).push(Arc::new(table)),
                None => self.tables.borrow_mut().retire(table),
            }
        } else if table.record(self.stream_raw) {
            self.tables.borrow_mut().put(table);
        } else {
            self.tables.borrow_mut().retire(table);
        }
    }
}

/// Each operand of a GEMM holds what the shape reaches.
#[inline]
pub(super) fn check_operands(shape: &Gemm, need: &[usize; 3], len: [usize; 3]) -> Result<()> {
    let names = ["gemm operand a", "gemm operand b", "gemm operand c"];
    for i in 0..3 {
        holds(names[i], len[i], need[i], &|| shape.describe(i))?;
    }
    Ok(())
}

/// Each operand of a strided batch holds its last matrix.
fn check_operands_batched(
    shape: &Gemm,
    batch: &StridedBatch,
    need: &[usize; 3],
    len: [usize; 3],
) -> Result<()> {
    let names = ["gemm operand a", "gemm operand b", "gemm operand c"];
    for i in 0..3 {
        holds(names[i], len[i], need[i], &|| {
            format!(
                "a batch of {} ({}, {batch:?})",
                batch.count,
                shape.describe(i)
            )
        })?;
    }
    Ok(())
}
