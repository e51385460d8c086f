//! The calls: shapes checked against the buffers, workspace asked for and grown, the call queued.

use super::info::Meaning;
use super::sizes::{self, InfoCall};
use super::types::SolverScalar;
use super::{
    check, raw_op, raw_side, raw_uplo, sys, Eigen, Handle, Info, Op, Side, SvdVectors, Uplo,
};
use crate::error::{Error, Result};
use crate::memory::{DeviceMemory, DeviceMemoryMut, DevicePtr};
use std::os::raw::c_int;

pub(super) use crate::dense_shape::{int, matrix, read, vector, write};

/// `elements` of `T` in bytes (the `rwork` of `gesvd`).
fn bytes_of<T>(what: &'static str, elements: usize) -> Result<usize> {
    elements
        .checked_mul(std::mem::size_of::<T>())
        .ok_or_else(|| Error::InvalidArgument {
            what,
            value: elements.to_string(),
            reason: "the workspace in bytes overflows usize".into(),
        })
}

impl Handle {
    /// Grow the workspace for the `_bufferSize` `answer` of a call on elements of `T`
    /// ([`sizes::workspace`]: `answer` bytes on rocSOLVER, which takes `lwork` as bytes, plus the
    /// `carved` bytes hipSOLVER takes off its front first; `answer` elements of `T` on cuSOLVER), then
    /// `extra` bytes after it, 256-byte aligned. Returns the workspace, `lwork` (the answer, in the
    /// backend's own unit) and the offset of the extra bytes.
    pub(super) fn work<T>(
        &mut self,
        what: &'static str,
        answer: c_int,
        carved: usize,
        extra: usize,
    ) -> Result<(DevicePtr, c_int, usize)> {
        let need = sizes::workspace(
            sizes::BACKEND,
            what,
            answer,
            std::mem::size_of::<T>(),
            carved,
        )?;
        let offset = need.bytes.div_ceil(256) * 256;
        let total = offset
            .checked_add(extra)
            .ok_or_else(|| Error::InvalidArgument {
                what,
                value: format!("{offset} + {extra} bytes"),
                reason: "the workspace in bytes overflows usize".into(),
            })?;
        let ptr = self.workspace(total)?;
        Ok((ptr, need.lwork, offset))
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
        if n == 0 {
            return self.answered(name, Meaning::NotPositiveDefinite, false, 1);
        }
        let n = n as c_int;
        let (u, pa) = (raw_uplo(uplo), a.device_ptr());
        // SAFETY: a live handle; the query reads no memory.
        let answer = self.query(name, [u as i64, n as i64, lda as i64], |h, lw| unsafe {
            T::potrf_bs(h, u, n, pa, lda, lw)
        })?;
        let (w, lw, _) = self.work::<T>(name, answer, 0, 0)?;
        let info = self.info(InfoCall::Computed, 1)?;
        let _op = self.begin(name, &[write(&*a), write(&info)])?;
        // SAFETY: `a` spans the `n x n` matrix with leading dimension `lda` (checked); the workspace
        // holds what `lw` stands for on the backend (`sizes::workspace`), `info` one int; all on the
        // handle's device (checked), ordered and kept alive by the memory model (recorded above) until
        // the call is done.
        check(name, unsafe {
            T::potrf(self.raw, u, n, pa, lda, w, lw, info.device_ptr())
        })?;
        Ok(self.outcome(name, Meaning::NotPositiveDefinite, false, info))
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
        if n == 0 || nrhs == 0 {
            return self.answered(name, Meaning::ArgumentsOnly, false, 1);
        }
        let (n, nrhs, u) = (n as c_int, nrhs as c_int, raw_uplo(uplo));
        let (pa, pb) = (a.device_ptr(), b.device_ptr());
        // SAFETY: a live handle; the query reads no memory.
        let answer = self.query(
            name,
            [u as i64, n as i64, nrhs as i64, lda as i64, ldb as i64],
            |h, lw| unsafe { T::potrs_bs(h, u, n, nrhs, pa, lda, pb, ldb, lw) },
        )?;
        let (w, lw, _) = self.work::<T>(name, answer, 0, 0)?;
        let info = self.info(InfoCall::ArgumentsOnly, 1)?;
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
        Ok(self.outcome(name, Meaning::ArgumentsOnly, false, info))
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
        if m == 0 || n == 0 {
            return self.answered(name, Meaning::Singular, false, 1);
        }
        let (m, n, pa) = (m as c_int, n as c_int, a.device_ptr());
        // SAFETY: a live handle; the query reads no memory.
        let answer = self.query(name, [m as i64, n as i64, lda as i64], |h, lw| unsafe {
            T::getrf_bs(h, m, n, pa, lda, lw)
        })?;
        let (w, lw, _) = self.work::<T>(name, answer, 0, 0)?;
        let info = self.info(InfoCall::Computed, 1)?;
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
        Ok(self.outcome(name, Meaning::Singular, false, info))
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
        if n == 0 || nrhs == 0 {
            return self.answered(name, Meaning::ArgumentsOnly, false, 1);
        }
        let (n, nrhs, t) = (n as c_int, nrhs as c_int, raw_op(op));
        let (pa, pi, pb) = (a.device_ptr(), ipiv.device_ptr(), b.device_ptr());
        // SAFETY: a live handle; the query reads no memory.
        let answer = self.query(
            name,
            [t as i64, n as i64, nrhs as i64, lda as i64, ldb as i64],
            |h, lw| unsafe { T::getrs_bs(h, t, n, nrhs, pa, lda, pi, pb, ldb, lw) },
        )?;
        let (w, lw, _) = self.work::<T>(name, answer, 0, 0)?;
        let info = self.info(InfoCall::ArgumentsOnly, 1)?;
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
        Ok(self.outcome(name, Meaning::ArgumentsOnly, false, info))
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
        if m == 0 || n == 0 {
            return self.answered(name, Meaning::ArgumentsOnly, false, 1);
        }
        let (m, n, pa) = (m as c_int, n as c_int, a.device_ptr());
        // SAFETY: a live handle; the query reads no memory.
        let answer = self.query(name, [m as i64, n as i64, lda as i64], |h, lw| unsafe {
            T::geqrf_bs(h, m, n, pa, lda, lw)
        })?;
        let (w, lw, _) = self.work::<T>(name, answer, 0, 0)?;
        let info = self.info(InfoCall::ArgumentsOnly, 1)?;
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
        Ok(self.outcome(name, Meaning::ArgumentsOnly, false, info))
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
        if m == 0 || n == 0 || k == 0 {
            return self.answered(name, Meaning::ArgumentsOnly, false, 1);
        }
        let (s, t) = (raw_side(side), raw_op(op));
        let (m, n, k) = (m as c_int, n as c_int, k as c_int);
        let (pa, pt, pc) = (a.device_ptr(), tau.device_ptr(), c.device_ptr());
        // SAFETY: a live handle; the query reads no memory.
        let answer = self.query(
            name,
            [
                s as i64, t as i64, m as i64, n as i64, k as i64, lda as i64, ldc as i64,
            ],
            |h, lw| unsafe { T::ormqr_bs(h, s, t, m, n, k, pa, lda, pt, pc, ldc, lw) },
        )?;
        let (w, lw, _) = self.work::<T>(name, answer, 0, 0)?;
        let info = self.info(InfoCall::ArgumentsOnly, 1)?;
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
        Ok(self.outcome(name, Meaning::ArgumentsOnly, false, info))
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
        if n == 0 {
            return self.answered(name, Meaning::NotConverged, false, 1);
        }
        let j = match job {
            Eigen::Values => sys::HIPSOLVER_EIG_MODE_NOVECTOR,
            Eigen::Vectors => sys::HIPSOLVER_EIG_MODE_VECTOR,
        };
        // On rocSOLVER hipSOLVER keeps the tridiagonal form's off-diagonal (`n` reals) at the front of
        // the workspace and gives rocBLAS `lwork` bytes after it: those bytes come on top of the answer.
        let carved = bytes_of::<T::Real>(name, n)?;
        let (u, n, pa, pw) = (raw_uplo(uplo), n as c_int, a.device_ptr(), w.device_ptr());
        // SAFETY: a live handle; the query reads no memory.
        let answer = self.query(
            name,
            [j as i64, u as i64, n as i64, lda as i64],
            |h, lw| unsafe { T::syevd_bs(h, j, u, n, pa, lda, pw, lw) },
        )?;
        let (work, lw, _) = self.work::<T>(name, answer, carved, 0)?;
        let info = self.info(InfoCall::Computed, 1)?;
        let _op = self.begin(name, &[write(&*a), write(&*w), write(&info)])?;
        // SAFETY: as in potrf; `w` holds `n` real elements (checked).
        check(name, unsafe {
            T::syevd(self.raw, j, u, n, pa, lda, pw, work, lw, info.device_ptr())
        })?;
        Ok(self.outcome(name, Meaning::NotConverged, false, info))
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
        if m == 0 || n == 0 {
            return self.answered(name, Meaning::NotConverged, false, 1);
        }
        let (m, n) = (m as c_int, n as c_int);
        // SAFETY: a live handle; the query reads no memory.
        let answer = self.query(
            name,
            [ju as i64, jv as i64, m as i64, n as i64],
            |h, lw| unsafe { T::gesvd_bs(h, ju, jv, m, n, lw) },
        )?;
        // `rwork`: the superdiagonal of the bidiagonal form, `min(m, n) - 1` reals, after the workspace.
        let rwork_bytes = bytes_of::<T::Real>(name, k)?;
        let (w, lw, offset) = self.work::<T>(name, answer, 0, rwork_bytes)?;
        let rwork = w.cast::<u8>().wrapping_add(offset).cast();
        let info = self.info(InfoCall::Computed, 1)?;
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
        Ok(self.outcome(name, Meaning::NotConverged, false, info))
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
