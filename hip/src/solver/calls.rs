//! The calls: shapes checked against the buffers, workspace asked for and grown, the call queued.

use super::info::Meaning;
use super::types::SolverScalar;
use super::{
    check, raw_op, raw_side, raw_uplo, sys, Eigen, Handle, Info, Op, Operand, Side, SvdVectors,
    Uplo,
};
use crate::error::{Error, Result};
use crate::memory::{Access, DeviceBuffer, DeviceMemory, DeviceMemoryMut, DevicePtr};
use std::os::raw::c_int;

pub(super) use crate::dense_shape::{int, matrix};

fn read<T: crate::memory::DeviceCopy>(m: &impl DeviceMemory<T>) -> Operand<'_> {
    (m.device(), m.allocation(), Access::Read)
}

fn write<T: crate::memory::DeviceCopy>(m: &impl DeviceMemory<T>) -> Operand<'_> {
    (m.device(), m.allocation(), Access::Write)
}

/// A vector of at least `need` elements.
pub(super) fn vector(what: &'static str, len: usize, need: usize) -> Result<()> {
    if len >= need {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            what,
            value: format!("a buffer of {len} elements"),
            reason: format!("the call writes {need} elements"),
        })
    }
}

/// The workspace in bytes for `elements` of `T`.
fn bytes_of<T>(what: &'static str, elements: usize) -> Result<usize> {
    elements
        .checked_mul(std::mem::size_of::<T>())
        .ok_or(Error::InvalidArgument {
            what,
            value: elements.to_string(),
            reason: "the workspace in bytes overflows usize".into(),
        })
}

/// `lwork` for the library (its elements, which were its answer, so they fit an `int`).
fn lwork<T>(bytes: usize) -> c_int {
    (bytes / std::mem::size_of::<T>().max(1)) as c_int
}

impl Handle {
    /// Grow the workspace to `elements` of `T` (plus `extra` bytes after them, 256-byte aligned), and
    /// return it with `lwork`.
    fn work<T>(
        &mut self,
        what: &'static str,
        elements: usize,
        extra: usize,
    ) -> Result<(DevicePtr, c_int, usize)> {
        let main = bytes_of::<T>(what, elements)?;
        let offset = main.div_ceil(256) * 256;
        let ptr = self.workspace(offset + extra)?;
        Ok((ptr, lwork::<T>(main), offset))
    }

    /// Cholesky factorization of the `n x n` Hermitian positive definite matrix `a` (`?potrf`): the
    /// `uplo` triangle is overwritten with `L` (`A = L L^H`) or `U` (`A = U^H U`); the other triangle is
    /// not touched. `info`: [`SolverFailure::NotPositiveDefinite`](crate::SolverFailure).
    pub fn potrf<T: SolverScalar>(
        &mut self,
        uplo: Uplo,
        n: usize,
        a: &mut impl DeviceMemoryMut<T>,
        lda: usize,
    ) -> Result<Info> {
        let name = T::NAMES.potrf;
        let lda = matrix("potrf: a", a.len(), n, n, lda)?;
        let n = n as c_int;
        let (u, pa) = (raw_uplo(uplo), a.device_ptr());
        // SAFETY: a live handle; the query reads no memory.
        let elements = self.query(name, |lw| unsafe {
            T::potrf_bs(self.raw, u, n, pa, lda, lw)
        })?;
        let (w, lw, _) = self.work::<T>(name, elements, 0)?;
        let info = self.info(1)?;
        let _op = self.begin(name, &[write(&*a), write(&info)])?;
        // SAFETY: `a` spans the `n x n` matrix with leading dimension `lda` (checked); the workspace
        // holds `lw` elements, `info` one; all on the handle's device (checked), ordered and kept alive
        // by the memory model (recorded above) until the call is done.
        check(name, unsafe {
            T::potrf(self.raw, u, n, pa, lda, w, lw, info.device_ptr())
        })?;
        Ok(Info::new(name, Meaning::NotPositiveDefinite, false, info))
    }

    /// Solve `A X = B` for the `n x nrhs` matrix `b` (overwritten with `X`), with `a` the Cholesky
    /// factor [`potrf`](Self::potrf) wrote for the same `uplo` (`?potrs`).
    #[allow(clippy::too_many_arguments)]
    pub fn potrs<T: SolverScalar>(
        &mut self,
        uplo: Uplo,
        n: usize,
        nrhs: usize,
        a: &impl DeviceMemory<T>,
        lda: usize,
        b: &mut impl DeviceMemoryMut<T>,
        ldb: usize,
    ) -> Result<Info> {
        let name = T::NAMES.potrs;
        let lda = matrix("potrs: a", a.len(), n, n, lda)?;
        let ldb = matrix("potrs: b", b.len(), n, nrhs, ldb)?;
        let (n, nrhs, u) = (n as c_int, nrhs as c_int, raw_uplo(uplo));
        let (pa, pb) = (a.device_ptr(), b.device_ptr());
        // SAFETY: a live handle; the query reads no memory.
        let elements = self.query(name, |lw| unsafe {
            T::potrs_bs(self.raw, u, n, nrhs, pa, lda, pb, ldb, lw)
        })?;
        let (w, lw, _) = self.work::<T>(name, elements, 0)?;
        let info = self.info(1)?;
        let _op = self.begin(name, &[read(a), write(&*b), write(&info)])?;
        // SAFETY: as in potrf; `b` spans `n x nrhs` with `ldb` (checked). `a` and `b` may be one
        // allocation only through two borrows, one `&mut`: they are distinct memory.
        check(name, unsafe {
            T::potrs(
                self.raw,
                u,
                n,
                nrhs,
                pa,
                lda,
                pb,
                ldb,
                w,
                lw,
                info.device_ptr(),
            )
        })?;
        Ok(Info::new(name, Meaning::ArgumentsOnly, false, info))
    }

    /// LU factorization with partial pivoting of the `m x n` matrix `a` (`?getrf`): `A = P L U`, `L`
    /// (unit diagonal) and `U` overwrite `a`; `ipiv` (at least `min(m, n)` elements) receives the
    /// 1-based pivot rows. `info`: [`SolverFailure::Singular`](crate::SolverFailure) when a pivot of
    /// `U` is exactly zero (the factorization still finished).
    pub fn getrf<T: SolverScalar>(
        &mut self,
        m: usize,
        n: usize,
        a: &mut impl DeviceMemoryMut<T>,
        lda: usize,
        ipiv: &mut impl DeviceMemoryMut<i32>,
    ) -> Result<Info> {
        let name = T::NAMES.getrf;
        let lda = matrix("getrf: a", a.len(), m, n, lda)?;
        vector("getrf: ipiv", ipiv.len(), m.min(n))?;
        let (m, n, pa) = (m as c_int, n as c_int, a.device_ptr());
        // SAFETY: a live handle; the query reads no memory.
        let elements = self.query(name, |lw| unsafe {
            T::getrf_bs(self.raw, m, n, pa, lda, lw)
        })?;
        let (w, lw, _) = self.work::<T>(name, elements, 0)?;
        let info = self.info(1)?;
        let _op = self.begin(name, &[write(&*a), write(&*ipiv), write(&info)])?;
        // SAFETY: as in potrf; `ipiv` holds `min(m, n)` ints (checked).
        check(name, unsafe {
            T::getrf(
                self.raw,
                m,
                n,
                pa,
                lda,
                w,
                lw,
                ipiv.device_ptr(),
                info.device_ptr(),
            )
        })?;
        Ok(Info::new(name, Meaning::Singular, false, info))
    }

    /// Solve `op(A) X = B` for the `n x nrhs` matrix `b` (overwritten with `X`), with `a` and `ipiv`
    /// from [`getrf`](Self::getrf) of the `n x n` matrix `A` (`?getrs`).
    #[allow(clippy::too_many_arguments)]
    pub fn getrs<T: SolverScalar>(
        &mut self,
        op: Op,
        n: usize,
        nrhs: usize,
        a: &impl DeviceMemory<T>,
        lda: usize,
        ipiv: &impl DeviceMemory<i32>,
        b: &mut impl DeviceMemoryMut<T>,
        ldb: usize,
    ) -> Result<Info> {
        let name = T::NAMES.getrs;
        let lda = matrix("getrs: a", a.len(), n, n, lda)?;
        let ldb = matrix("getrs: b", b.len(), n, nrhs, ldb)?;
        vector("getrs: ipiv", ipiv.len(), n)?;
        let (n, nrhs, t) = (n as c_int, nrhs as c_int, raw_op(op));
        let (pa, pi, pb) = (a.device_ptr(), ipiv.device_ptr(), b.device_ptr());
        // SAFETY: a live handle; the query reads no memory.
        let elements = self.query(name, |lw| unsafe {
            T::getrs_bs(self.raw, t, n, nrhs, pa, lda, pi, pb, ldb, lw)
        })?;
        let (w, lw, _) = self.work::<T>(name, elements, 0)?;
        let info = self.info(1)?;
        let _op = self.begin(name, &[read(a), read(ipiv), write(&*b), write(&info)])?;
        // SAFETY: as in potrs; `ipiv` holds `n` ints (checked).
        check(name, unsafe {
            T::getrs(
                self.raw,
                t,
                n,
                nrhs,
                pa,
                lda,
                pi,
                pb,
                ldb,
                w,
                lw,
                info.device_ptr(),
            )
        })?;
        Ok(Info::new(name, Meaning::ArgumentsOnly, false, info))
    }

    /// QR factorization of the `m x n` matrix `a` (`?geqrf`): `R` overwrites the upper triangle, the
    /// Householder vectors of `Q` the part below it, and `tau` (at least `min(m, n)` elements) receives
    /// their scalars. [`ormqr`](Self::ormqr) applies `Q`.
    pub fn geqrf<T: SolverScalar>(
        &mut self,
        m: usize,
        n: usize,
        a: &mut impl DeviceMemoryMut<T>,
        lda: usize,
        tau: &mut impl DeviceMemoryMut<T>,
    ) -> Result<Info> {
        let name = T::NAMES.geqrf;
        let lda = matrix("geqrf: a", a.len(), m, n, lda)?;
        vector("geqrf: tau", tau.len(), m.min(n))?;
        let (m, n, pa) = (m as c_int, n as c_int, a.device_ptr());
        // SAFETY: a live handle; the query reads no memory.
        let elements = self.query(name, |lw| unsafe {
            T::geqrf_bs(self.raw, m, n, pa, lda, lw)
        })?;
        let (w, lw, _) = self.work::<T>(name, elements, 0)?;
        let info = self.info(1)?;
        let _op = self.begin(name, &[write(&*a), write(&*tau), write(&info)])?;
        // SAFETY: as in potrf; `tau` holds `min(m, n)` elements (checked).
        check(name, unsafe {
            T::geqrf(
                self.raw,
                m,
                n,
                pa,
                lda,
                tau.device_ptr(),
                w,
                lw,
                info.device_ptr(),
            )
        })?;
        Ok(Info::new(name, Meaning::ArgumentsOnly, false, info))
    }

    /// Multiply the `m x n` matrix `c` by `op(Q)` from `side` (`?ormqr`, `?unmqr` for complex types),
    /// `Q` being the product of the first `k` reflectors [`geqrf`](Self::geqrf) left in `a` and `tau`.
    /// `a` is `m x k` for [`Side::Left`] (`k <= m`), `n x k` for [`Side::Right`] (`k <= n`). Real types
    /// take [`Op::N`] or [`Op::T`] ([`Op::C`] means `T` there); complex types [`Op::N`] or [`Op::C`]
    /// (an [`Op::T`] is refused: `Q^T` is not what they define).
    #[allow(clippy::too_many_arguments)]
    pub fn ormqr<T: SolverScalar>(
        &mut self,
        side: Side,
        op: Op,
        (m, n, k): (usize, usize, usize),
        a: &impl DeviceMemory<T>,
        lda: usize,
        tau: &impl DeviceMemory<T>,
        c: &mut impl DeviceMemoryMut<T>,
        ldc: usize,
    ) -> Result<Info> {
        let name = T::NAMES.ormqr;
        let q_order = if side == Side::Left { m } else { n };
        if k > q_order {
            return Err(Error::InvalidArgument {
                what: "ormqr: k",
                value: k.to_string(),
                reason: format!(
                    "Q of order {q_order} is a product of at most {q_order} reflectors"
                ),
            });
        }
        let op = match (op, T::COMPLEX) {
            (Op::C, false) => Op::T,
            (Op::T, true) => {
                return Err(Error::InvalidArgument {
                    what: "ormqr: op",
                    value: "Op::T".into(),
                    reason: "complex types apply Q or Q^H (Op::N or Op::C)".into(),
                })
            }
            (op, _) => op,
        };
        let lda = matrix("ormqr: a", a.len(), q_order, k, lda)?;
        let ldc = matrix("ormqr: c", c.len(), m, n, ldc)?;
        vector("ormqr: tau", tau.len(), k)?;
        let (s, t) = (raw_side(side), raw_op(op));
        let (m, n, k) = (m as c_int, n as c_int, k as c_int);
        let (pa, pt, pc) = (a.device_ptr(), tau.device_ptr(), c.device_ptr());
        // SAFETY: a live handle; the query reads no memory.
        let elements = self.query(name, |lw| unsafe {
            T::ormqr_bs(self.raw, s, t, m, n, k, pa, lda, pt, pc, ldc, lw)
        })?;
        let (w, lw, _) = self.work::<T>(name, elements, 0)?;
        let info = self.info(1)?;
        let _op = self.begin(name, &[read(a), read(tau), write(&*c), write(&info)])?;
        // SAFETY: as in potrs; `a` spans `q_order x k`, `tau` `k`, `c` `m x n` (checked).
        check(name, unsafe {
            T::ormqr(
                self.raw,
                s,
                t,
                m,
                n,
                k,
                pa,
                lda,
                pt,
                pc,
                ldc,
                w,
                lw,
                info.device_ptr(),
            )
        })?;
        Ok(Info::new(name, Meaning::ArgumentsOnly, false, info))
    }

    /// Eigenvalues (ascending, into `w`: at least `n` real elements) and optionally eigenvectors (into
    /// `a`'s columns) of the `n x n` symmetric / Hermitian matrix `a`, read from its `uplo` triangle
    /// (`?syevd`, `?heevd`). `a` is overwritten either way. `info`:
    /// [`SolverFailure::NotConverged`](crate::SolverFailure).
    pub fn syevd<T: SolverScalar>(
        &mut self,
        job: Eigen,
        uplo: Uplo,
        n: usize,
        a: &mut impl DeviceMemoryMut<T>,
        lda: usize,
        w: &mut impl DeviceMemoryMut<T::Real>,
    ) -> Result<Info> {
        let name = T::NAMES.syevd;
        let lda = matrix("syevd: a", a.len(), n, n, lda)?;
        vector("syevd: w", w.len(), n)?;
        let j = match job {
            Eigen::Values => sys::HIPSOLVER_EIG_MODE_NOVECTOR,
            Eigen::Vectors => sys::HIPSOLVER_EIG_MODE_VECTOR,
        };
        let (u, n, pa, pw) = (raw_uplo(uplo), n as c_int, a.device_ptr(), w.device_ptr());
        // SAFETY: a live handle; the query reads no memory.
        let elements = self.query(name, |lw| unsafe {
            T::syevd_bs(self.raw, j, u, n, pa, lda, pw, lw)
        })?;
        let (work, lw, _) = self.work::<T>(name, elements, 0)?;
        let info = self.info(1)?;
        let _op = self.begin(name, &[write(&*a), write(&*w), write(&info)])?;
        // SAFETY: as in potrf; `w` holds `n` real elements (checked).
        check(name, unsafe {
            T::syevd(self.raw, j, u, n, pa, lda, pw, work, lw, info.device_ptr())
        })?;
        Ok(Info::new(name, Meaning::NotConverged, false, info))
    }

    /// Singular value decomposition `A = U S V^H` of the `m x n` matrix `a` (`?gesvd`; `a` is
    /// overwritten): `s` receives the `min(m, n)` singular values, descending; `u` (`ldu`) and `vt`
    /// (`V^H`, `ldvt`) the vectors `jobs.0` and `jobs.1` ask for ([`SvdVectors`]; a buffer for
    /// [`SvdVectors::None`] is not touched and may be empty). On HIP's NVIDIA platform cuSOLVER takes
    /// `m >= n` only: a wider matrix is [`Error::NotSupported`] there (decompose its transpose).
    /// `info`: [`SolverFailure::NotConverged`](crate::SolverFailure).
    #[allow(clippy::too_many_arguments)]
    pub fn gesvd<T: SolverScalar>(
        &mut self,
        jobs: (SvdVectors, SvdVectors),
        m: usize,
        n: usize,
        a: &mut impl DeviceMemoryMut<T>,
        lda: usize,
        s: &mut impl DeviceMemoryMut<T::Real>,
        (u, ldu): (&mut impl DeviceMemoryMut<T>, usize),
        (vt, ldvt): (&mut impl DeviceMemoryMut<T>, usize),
    ) -> Result<Info> {
        let name = T::NAMES.gesvd;
        if cfg!(hip_platform = "nvidia") && m < n {
            return Err(Error::NotSupported {
                what: "gesvd of a matrix with fewer rows than columns",
                reason: "cuSOLVER's gesvd (HIP's NVIDIA platform) takes m >= n only: decompose the transpose",
            });
        }
        let k = m.min(n);
        let lda = matrix("gesvd: a", a.len(), m, n, lda)?;
        vector("gesvd: s", s.len(), k)?;
        let (ju, u_cols) = svd_job(jobs.0, m, k);
        let (jv, vt_rows) = svd_job(jobs.1, n, k);
        // A buffer the job does not write is not touched; its leading dimension is still given as
        // cuSOLVER checks it (at least the rows of a full U / V^H).
        let ldu = match jobs.0 {
            SvdVectors::None => int("gesvd: ldu", ldu.max(m.max(1)))?,
            _ => matrix("gesvd: u", u.len(), m, u_cols, ldu)?,
        };
        let ldvt = match jobs.1 {
            SvdVectors::None => int("gesvd: ldvt", ldvt.max(n.max(1)))?,
            _ => matrix("gesvd: vt", vt.len(), vt_rows, n, ldvt)?,
        };
        let (m, n) = (m as c_int, n as c_int);
        // SAFETY: a live handle; the query reads no memory.
        let elements = self.query(name, |lw| unsafe {
            T::gesvd_bs(self.raw, ju, jv, m, n, lw)
        })?;
        // `rwork`: the superdiagonal of the bidiagonal form, `min(m, n) - 1` reals, after the workspace.
        let rwork_bytes = bytes_of::<T::Real>(name, k)?;
        let (w, lw, offset) = self.work::<T>(name, elements, rwork_bytes)?;
        let rwork = w.cast::<u8>().wrapping_add(offset).cast();
        let info = self.info(1)?;
        let _op = self.begin(
            name,
            &[
                write(&*a),
                write(&*s),
                write(&*u),
                write(&*vt),
                write(&info),
            ],
        )?;
        // SAFETY: as in potrf; `s` holds `min(m, n)` reals, `u` and `vt` what their jobs write with their
        // leading dimensions (checked; untouched for 'N'), `rwork` `min(m, n)` reals of the workspace
        // after its `lw` elements (grown to hold both).
        check(name, unsafe {
            T::gesvd(
                self.raw,
                ju,
                jv,
                m,
                n,
                a.device_ptr(),
                lda,
                s.device_ptr(),
                u.device_ptr(),
                ldu,
                vt.device_ptr(),
                ldvt,
                w,
                lw,
                rwork,
                info.device_ptr(),
            )
        })?;
        Ok(Info::new(name, Meaning::NotConverged, false, info))
    }

    /// Cholesky factorizations of many `n x n` matrices, one per buffer of `a`, each with leading
    /// dimension `lda` (`?potrfBatched`). The returned [`Info`] has one value per matrix; [`Info::check`]
    /// names the first that is not positive definite.
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
        let info = self.info(a.len())?;
        if a.is_empty() {
            return Ok(Info::new(name, Meaning::NotPositiveDefinite, true, info));
        }
        let table = self.pointer_table(&[a.iter().map(|m| m.device_ptr()).collect()])?;
        let (u, n, pa) = (raw_uplo(uplo), n as c_int, table.device_ptr());
        // SAFETY: a live handle; the query reads no memory.
        let elements = self.query(name, |lw| unsafe {
            T::potrf_batched_bs(self.raw, u, n, pa, ld, lw, count)
        })?;
        let (w, lw, _) = self.work::<T>(name, elements, 0)?;
        let mut ops: Vec<Operand<'_>> = a.iter().map(|m| write(&**m)).collect();
        ops.extend([read(&table), write(&info)]);
        let _op = self.begin(name, &ops)?;
        // SAFETY: the table holds `count` pointers, each to a distinct `&mut` buffer spanning `n x n` with
        // `lda` (checked), on the handle's device (checked in begin), ordered and kept alive by the memory
        // model; the table is ordered after its upload on this stream and freed in its order.
        check(name, unsafe {
            T::potrf_batched(self.raw, u, n, pa, ld, w, lw, info.device_ptr(), count)
        })?;
        Ok(Info::new(name, Meaning::NotPositiveDefinite, true, info))
    }

    /// Solve `A_i X_i = B_i` for each pair of buffers, with each `a[i]` a factor from
    /// [`potrf_batched`](Self::potrf_batched) and each `b[i]` an `n x nrhs` matrix overwritten with
    /// `X_i` (`?potrsBatched`). cuSOLVER (HIP's NVIDIA platform) takes `nrhs == 1` only: more is
    /// [`Error::NotSupported`] there.
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
        let info = self.info(if a.is_empty() { 0 } else { 1 })?;
        if a.is_empty() {
            return Ok(Info::new(name, Meaning::ArgumentsOnly, false, info));
        }
        let table = self.pointer_table(&[
            a.iter().map(|m| m.device_ptr()).collect(),
            b.iter().map(|m| m.device_ptr()).collect(),
        ])?;
        let pa = table.device_ptr();
        let pb = pa.cast::<usize>().wrapping_add(a.len()).cast();
        let (u, n, nrhs) = (raw_uplo(uplo), n as c_int, nrhs as c_int);
        // SAFETY: a live handle; the query reads no memory.
        let elements = self.query(name, |lw| unsafe {
            T::potrs_batched_bs(self.raw, u, n, nrhs, pa, la, pb, lb, lw, count)
        })?;
        let (w, lw, _) = self.work::<T>(name, elements, 0)?;
        let mut ops: Vec<Operand<'_>> = a.iter().map(|m| read(*m)).collect();
        ops.extend(b.iter().map(|m| write(&**m)));
        ops.extend([read(&table), write(&info)]);
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
        Ok(Info::new(name, Meaning::ArgumentsOnly, false, info))
    }

    /// A device table of the pointer arrays, one after the other, allocated and uploaded in the stream's
    /// order (freed in its order too: dropping it waits for nothing).
    fn pointer_table(&self, arrays: &[Vec<DevicePtr>]) -> Result<DeviceBuffer<usize>> {
        let host: Vec<usize> = arrays.iter().flatten().map(|&p| p as usize).collect();
        // SAFETY: every element is written by the upload below, queued on the same stream before any
        // reader (the memory model records the upload as the writer); on failure it is dropped unread.
        let table = unsafe { DeviceBuffer::<usize>::alloc_async_on(&self.stream, host.len())? };
        let op = self.begin("solver pointer table", &[write(&table)])?;
        // SAFETY: `table` holds `host.len()` elements on the handle's device (current), ordered on the
        // stream (recorded under `op`). `host` is pageable memory: both runtimes copy a pageable source
        // out before hipMemcpyAsync returns (CUDA stages it at once; HIP copies synchronously), so it
        // may be dropped after the call.
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
        Ok(table)
    }
}

/// The job character for `vectors` of a dimension `dim`, and how many vectors it writes.
fn svd_job(vectors: SvdVectors, dim: usize, k: usize) -> (i8, usize) {
    match vectors {
        SvdVectors::All => (b'A' as i8, dim),
        SvdVectors::Thin => (b'S' as i8, k),
        SvdVectors::None => (b'N' as i8, 0),
    }
}
