//! The shapes of `ger`, `geam`, `trsm`, `syrk` / `herk`, and what each of their operands must hold, worked
//! out before hipBLAS is called. Pure arithmetic, tested without a device (`tests23.rs`).

use super::shape::{int, matrix_len, vector_len, Op};
use crate::error::{Error, Result};

/// Which side of B the triangular matrix of [`Handle::trsm`](super::Handle::trsm) stands on
/// (`hipblasSideMode_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Side {
    /// `HIPBLAS_SIDE_LEFT`: `op(A) X = alpha B`, A is `m x m`.
    #[default]
    Left,
    /// `HIPBLAS_SIDE_RIGHT`: `X op(A) = alpha B`, A is `n x n`.
    Right,
}

/// Which triangle of a matrix is read or written (`hipblasFillMode_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Uplo {
    /// `HIPBLAS_FILL_MODE_UPPER`.
    #[default]
    Upper,
    /// `HIPBLAS_FILL_MODE_LOWER`.
    Lower,
}

/// Whether a triangular matrix has ones on its diagonal (`hipblasDiagType_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Diag {
    /// `HIPBLAS_DIAG_NON_UNIT`: the stored diagonal is used.
    #[default]
    NonUnit,
    /// `HIPBLAS_DIAG_UNIT`: the diagonal is taken as ones and not read.
    Unit,
}

/// `ger`: A (`m x n`, leading dimension `lda`), x (`m` elements `incx` apart), y (`n` elements `incy`
/// apart): the elements each spans (A, x, y).
pub(crate) fn ger_len(m: usize, n: usize, lda: usize, incx: i32, incy: i32) -> Result<[usize; 3]> {
    let a = matrix_len("ger operand a", m, n, lda)?;
    let x = vector_len("ger operand x", m, incx)?;
    let y = vector_len("ger operand y", n, incy)?;
    for (what, v) in [("m", m), ("n", n), ("lda", lda)] {
        int(what, v)?;
    }
    Ok([a, x, y])
}

/// The shape of `C = alpha * op(A) + beta * op(B)` ([`Handle::geam`](super::Handle::geam)): C is a
/// column-major `m x n` matrix, `op(A)` and `op(B)` too. Leading dimensions default to the stored rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geam {
    /// Rows of C.
    pub m: usize,
    /// Columns of C.
    pub n: usize,
    /// How A enters the sum.
    pub op_a: Op,
    /// How B enters the sum.
    pub op_b: Op,
    /// A's leading dimension; `None`: its stored rows.
    pub lda: Option<usize>,
    /// B's leading dimension; `None`: its stored rows.
    pub ldb: Option<usize>,
    /// C's leading dimension; `None`: `m`.
    pub ldc: Option<usize>,
}

impl Geam {
    /// `m x n`, no transposes, tight leading dimensions.
    pub fn new(m: usize, n: usize) -> Geam {
        Geam {
            m,
            n,
            op_a: Op::N,
            op_b: Op::N,
            lda: None,
            ldb: None,
            ldc: None,
        }
    }

    /// The leading dimensions used (A, B, C) and the elements each operand spans.
    pub(crate) fn resolve(&self) -> Result<([usize; 3], [usize; 3])> {
        let stored = [
            self.op_a.stored(self.m, self.n),
            self.op_b.stored(self.m, self.n),
            (self.m, self.n),
        ];
        let given = [self.lda, self.ldb, self.ldc];
        let names = ["geam operand a", "geam operand b", "geam operand c"];
        let (mut ld, mut len) = ([0usize; 3], [0usize; 3]);
        for i in 0..3 {
            let (rows, cols) = stored[i];
            ld[i] = given[i].unwrap_or(rows.max(1));
            len[i] = matrix_len(names[i], rows, cols, ld[i])?;
        }
        for (what, v) in [
            ("m", self.m),
            ("n", self.n),
            ("lda", ld[0]),
            ("ldb", ld[1]),
            ("ldc", ld[2]),
        ] {
            int(what, v)?;
        }
        Ok((ld, len))
    }
}

/// The shape of a triangular solve `op(A) X = alpha B` (or `X op(A) = alpha B`), X overwriting B
/// ([`Handle::trsm`](super::Handle::trsm)): B is a column-major `m x n` matrix, A a triangular `m x m`
/// ([`Side::Left`]) or `n x n` ([`Side::Right`]) one, of which only the `uplo` triangle is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trsm {
    /// Which side of X the matrix A stands on.
    pub side: Side,
    /// Which triangle of A is stored.
    pub uplo: Uplo,
    /// How A enters the equation.
    pub op: Op,
    /// Whether A's diagonal is taken as ones.
    pub diag: Diag,
    /// Rows of B.
    pub m: usize,
    /// Columns of B.
    pub n: usize,
    /// A's leading dimension; `None`: its order (`m` or `n`).
    pub lda: Option<usize>,
    /// B's leading dimension; `None`: `m`.
    pub ldb: Option<usize>,
}

impl Trsm {
    /// `side`, an `m x n` B, upper triangle, no transpose, non-unit diagonal, tight leading dimensions.
    pub fn new(side: Side, m: usize, n: usize) -> Trsm {
        Trsm {
            side,
            uplo: Uplo::Upper,
            op: Op::N,
            diag: Diag::NonUnit,
            m,
            n,
            lda: None,
            ldb: None,
        }
    }

    /// The leading dimensions used (A, B) and the elements A and B span.
    pub(crate) fn resolve(&self) -> Result<([usize; 2], [usize; 2])> {
        let k = match self.side {
            Side::Left => self.m,
            Side::Right => self.n,
        };
        let lda = self.lda.unwrap_or(k.max(1));
        let ldb = self.ldb.unwrap_or(self.m.max(1));
        // An empty B reads nothing of A, but BLAS still asks lda >= max(1, k).
        let a = matrix_len("trsm operand a", k, k, lda)?;
        let b = matrix_len("trsm operand b", self.m, self.n, ldb)?;
        let a = if self.m == 0 || self.n == 0 { 0 } else { a };
        for (what, v) in [("m", self.m), ("n", self.n), ("lda", lda), ("ldb", ldb)] {
            int(what, v)?;
        }
        Ok(([lda, ldb], [a, b]))
    }
}

/// The shape of a rank-k update of the `uplo` triangle of the `n x n` C
/// ([`Handle::syrk`](super::Handle::syrk): `C = alpha A A^T + beta C`;
/// [`Handle::herk`](super::Handle::herk): `C = alpha A A^H + beta C`). A is column-major `n x k` with
/// [`Op::N`], `k x n` with [`Op::T`] (syrk) or [`Op::C`] (herk): `C = alpha op(A)^T op(A) + beta C`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Syrk {
    /// Which triangle of C is written (the other is not touched).
    pub uplo: Uplo,
    /// How A enters: [`Op::N`], or [`Op::T`] (syrk) / [`Op::C`] (herk).
    pub op: Op,
    /// Order of C.
    pub n: usize,
    /// Columns of A ([`Op::N`]) or rows (otherwise).
    pub k: usize,
    /// A's leading dimension; `None`: its stored rows.
    pub lda: Option<usize>,
    /// C's leading dimension; `None`: `n`.
    pub ldc: Option<usize>,
}

impl Syrk {
    /// An `n x n` C from an `n x k` A: upper triangle, no transpose, tight leading dimensions.
    pub fn new(n: usize, k: usize) -> Syrk {
        Syrk {
            uplo: Uplo::Upper,
            op: Op::N,
            n,
            k,
            lda: None,
            ldc: None,
        }
    }

    /// The leading dimensions used (A, C) and the elements A and C span. `what` names the call
    /// (`"syrk"` / `"herk"`); `allowed` is the transpose the call takes besides [`Op::N`]
    /// ([`Op::T`] for a symmetric update of complex matrices, [`Op::C`] for a Hermitian one, `None` for
    /// real matrices, where both are the transpose).
    pub(crate) fn resolve(
        &self,
        what: &'static str,
        allowed: Option<Op>,
    ) -> Result<([usize; 2], [usize; 2])> {
        if let Some(allowed) = allowed {
            if self.op != Op::N && self.op != allowed {
                return Err(Error::InvalidArgument {
                    what,
                    value: format!("op {:?}", self.op),
                    reason: format!(
                        "for complex matrices this call takes Op::N or Op::{allowed:?}"
                    ),
                });
            }
        }
        let (names, (ra, ca)) = (
            [
                if what == "herk" {
                    "herk operand a"
                } else {
                    "syrk operand a"
                },
                if what == "herk" {
                    "herk operand c"
                } else {
                    "syrk operand c"
                },
            ],
            self.op.stored(self.n, self.k),
        );
        let lda = self.lda.unwrap_or(ra.max(1));
        let ldc = self.ldc.unwrap_or(self.n.max(1));
        let a = matrix_len(names[0], ra, ca, lda)?;
        let c = matrix_len(names[1], self.n, self.n, ldc)?;
        for (what, v) in [("n", self.n), ("k", self.k), ("lda", lda), ("ldc", ldc)] {
            int(what, v)?;
        }
        Ok(([lda, ldc], [a, c]))
    }
}
