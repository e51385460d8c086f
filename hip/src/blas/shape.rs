//! What each operand of a BLAS call must hold, worked out before hipBLAS is called: the checks that keep
//! hipBLAS inside the buffers. Pure arithmetic, tested without a device.

use crate::error::{Error, Result};

/// How an operand enters the product: as stored, transposed, or conjugate-transposed
/// (`hipblasOperation_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Op {
    /// `HIPBLAS_OP_N`: as stored.
    #[default]
    N,
    /// `HIPBLAS_OP_T`: transposed.
    T,
    /// `HIPBLAS_OP_C`: conjugate-transposed (the same as [`Op::T`] for real types).
    C,
}

impl Op {
    /// `(rows, cols)` of the stored matrix whose `op` is `rows_op x cols_op`.
    pub(crate) fn stored(self, rows_op: usize, cols_op: usize) -> (usize, usize) {
        match self {
            Op::N => (rows_op, cols_op),
            Op::T | Op::C => (cols_op, rows_op),
        }
    }
}

/// A value as hipBLAS's `int`, or an error naming it.
///
/// The checks below run before every call: each is inlined, its error built out of line (`#[cold]`), so a
/// call's hot path stays a few cache lines of code (the GEMM host-cost benchmark measures what it adds).
#[inline]
pub(crate) fn int(what: &'static str, v: usize) -> Result<i32> {
    match i32::try_from(v) {
        Ok(v) => Ok(v),
        Err(_) => Err(not_int(what, v)),
    }
}

#[cold]
#[inline(never)]
fn not_int(what: &'static str, v: usize) -> Error {
    Error::InvalidArgument {
        what,
        value: v.to_string(),
        reason: format!("hipBLAS takes it as a C int: at most {}", i32::MAX),
    }
}

/// Elements a vector of `n` elements `inc` apart spans: `1 + (n - 1) * |inc|` (0 for `n == 0`).
/// A zero increment is refused (an output would be written by every element at once).
pub(crate) fn vector_len(what: &'static str, n: usize, inc: i32) -> Result<usize> {
    if inc == 0 {
        return Err(Error::InvalidArgument {
            what,
            value: "increment 0".into(),
            reason: "the increment between elements must be non-zero".into(),
        });
    }
    if n == 0 {
        return Ok(0);
    }
    (n - 1)
        .checked_mul(inc.unsigned_abs() as usize)
        .and_then(|v| v.checked_add(1))
        .ok_or_else(|| overflow(what))
}

/// [`vector_len`] for the calls BLAS defines for positive increments only (`nrm2`, `scal`: with any other
/// they compute nothing and return 0 or leave the vector as it was).
pub(crate) fn positive_vector_len(what: &'static str, n: usize, inc: i32) -> Result<usize> {
    if inc < 1 {
        return Err(Error::InvalidArgument {
            what,
            value: format!("increment {inc}"),
            reason:
                "BLAS defines this call for positive increments only (with others it does nothing)"
                    .into(),
        });
    }
    vector_len(what, n, inc)
}

pub(crate) use crate::dense_shape::{matrix_len, overflow};

/// `len` must hold `need` elements.
#[inline]
pub(crate) fn holds(
    what: &'static str,
    len: usize,
    need: usize,
    shape: &dyn Fn() -> String,
) -> Result<()> {
    if len >= need {
        Ok(())
    } else {
        Err(too_short(what, len, need, shape))
    }
}

#[cold]
#[inline(never)]
fn too_short(what: &'static str, len: usize, need: usize, shape: &dyn Fn() -> String) -> Error {
    Error::InvalidArgument {
        what,
        value: format!("a buffer of {len} elements"),
        reason: format!("{} spans {need} elements", shape()),
    }
}

/// The shape of a matrix product `C = alpha * op(A) * op(B) + beta * C`, with `op(A)` `m x k`, `op(B)`
/// `k x n` and `C` `m x n`, for [`Handle::gemm`](super::Handle::gemm) and its batched forms.
///
/// Column-major (BLAS's order) by default: element `(i, j)` of a matrix with leading dimension `ld` is at
/// `i + j * ld`. [`Gemm::row_major`] takes every operand row-major instead (element `(i, j)` at
/// `i * ld + j`, C and NumPy order) and runs the same product as hipBLAS's column-major
/// `C^T = op(B)^T * op(A)^T`, which is the same memory. Leading dimensions default to the tight value
/// (the stored rows, or the stored columns in row-major) and may be larger, for sub-matrices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gemm {
    m: usize,
    n: usize,
    k: usize,
    op_a: Op,
    op_b: Op,
    ld: [Option<usize>; 3],
    row_major: bool,
}

impl Gemm {
    /// An `m x n` product over `k`, column-major, no transposes, tight leading dimensions.
    pub fn new(m: usize, n: usize, k: usize) -> Gemm {
        Gemm {
            m,
            n,
            k,
            op_a: Op::N,
            op_b: Op::N,
            ld: [None; 3],
            row_major: false,
        }
    }

    /// [`Gemm::new`] with every operand row-major.
    pub fn row_major(m: usize, n: usize, k: usize) -> Gemm {
        Gemm {
            row_major: true,
            ..Gemm::new(m, n, k)
        }
    }

    /// How A enters the product (default [`Op::N`]).
    pub fn op_a(self, op: Op) -> Gemm {
        Gemm { op_a: op, ..self }
    }

    /// How B enters the product (default [`Op::N`]).
    pub fn op_b(self, op: Op) -> Gemm {
        Gemm { op_b: op, ..self }
    }

    /// A's leading dimension (default: tight).
    pub fn lda(mut self, ld: usize) -> Gemm {
        self.ld[0] = Some(ld);
        self
    }

    /// B's leading dimension (default: tight).
    pub fn ldb(mut self, ld: usize) -> Gemm {
        self.ld[1] = Some(ld);
        self
    }

    /// C's leading dimension (default: tight).
    pub fn ldc(mut self, ld: usize) -> Gemm {
        self.ld[2] = Some(ld);
        self
    }

    /// `(m, n, k)`.
    pub fn dims(&self) -> (usize, usize, usize) {
        (self.m, self.n, self.k)
    }

    /// The column-major call this shape is, with the elements each operand spans.
    #[inline(always)]
    pub(crate) fn resolve(&self) -> Result<GemmCall> {
        // Each operand as the user stores it: (rows, cols) of the stored matrix, in the user's order.
        let (ra, ca) = self.op_a.stored(self.m, self.k);
        let (rb, cb) = self.op_b.stored(self.k, self.n);
        let stored = [(ra, ca), (rb, cb), (self.m, self.n)];
        let names = ["gemm operand a", "gemm operand b", "gemm operand c"];
        let mut ld = [0usize; 3];
        let mut len = [0usize; 3];
        for i in 0..3 {
            let (rows, cols) = stored[i];
            // Row-major rows x cols with leading dimension ld is column-major cols x rows.
            let (cm_rows, cm_cols) = if self.row_major {
                (cols, rows)
            } else {
                (rows, cols)
            };
            ld[i] = self.ld[i].unwrap_or(cm_rows.max(1));
            len[i] = matrix_len(names[i], cm_rows, cm_cols, ld[i])?;
        }
        let call = if self.row_major {
            // C^T (n x m) = op(B)^T * op(A)^T: B's memory is the first operand.
            GemmCall {
                op: [self.op_b, self.op_a],
                mnk: [self.n, self.m, self.k],
                ld: [ld[1], ld[0], ld[2]],
                len,
                swapped: true,
            }
        } else {
            GemmCall {
                op: [self.op_a, self.op_b],
                mnk: [self.m, self.n, self.k],
                ld,
                len,
                swapped: false,
            }
        };
        for (what, v) in [("m", call.mnk[0]), ("n", call.mnk[1]), ("k", call.mnk[2])] {
            int(what, v)?;
        }
        for (what, v) in [("lda", ld[0]), ("ldb", ld[1]), ("ldc", ld[2])] {
            int(what, v)?;
        }
        Ok(call)
    }

    pub(crate) fn describe(&self, operand: usize) -> String {
        let (r, c) = match operand {
            0 => self.op_a.stored(self.m, self.k),
            1 => self.op_b.stored(self.k, self.n),
            _ => (self.m, self.n),
        };
        let order = if self.row_major {
            "row-major"
        } else {
            "column-major"
        };
        // The tight default, as in resolve: the stored rows (column-major) or columns (row-major).
        let ld = self.ld[operand].unwrap_or(if self.row_major { c } else { r }.max(1));
        format!("a {order} {r}x{c} matrix with leading dimension {ld}")
    }
}

/// A resolved column-major GEMM: what hipBLAS is called with. `len` is in the user's operand order
/// (A, B, C); `swapped` says the call's first operand is the user's B (row-major).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GemmCall {
    pub op: [Op; 2],
    pub mnk: [usize; 3],
    pub ld: [usize; 3],
    pub len: [usize; 3],
    pub swapped: bool,
}

impl GemmCall {
    /// The user's `a` and `b` (their pointers, strides, buffers) in the call's order.
    #[inline]
    pub fn ordered<P>(&self, a: P, b: P) -> (P, P) {
        if self.swapped {
            (b, a)
        } else {
            (a, b)
        }
    }

    /// `m, n, k` and the leading dimensions as hipBLAS's `int` ([`Gemm::resolve`] checked they fit).
    #[inline]
    pub fn ints(&self) -> ([i32; 3], [i32; 3]) {
        (self.mnk.map(|v| v as i32), self.ld.map(|v| v as i32))
    }
}

/// Strides between the matrices of a strided batch, in elements (`hipblasStride`), and their count.
///
/// A stride of 0 for A or B uses one matrix for every product. C's stride must keep the products apart
/// (at least the elements one C spans) when there is more than one: two products writing the same
/// elements at once would race.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StridedBatch {
    /// Number of products.
    pub count: usize,
    /// Elements between consecutive A matrices; `None`: the elements one A spans.
    pub stride_a: Option<usize>,
    /// Elements between consecutive B matrices; `None`: the elements one B spans.
    pub stride_b: Option<usize>,
    /// Elements between consecutive C matrices; `None`: the elements one C spans.
    pub stride_c: Option<usize>,
}

impl StridedBatch {
    /// `count` products packed tightly, one after the other, in each buffer.
    pub fn packed(count: usize) -> StridedBatch {
        StridedBatch {
            count,
            stride_a: None,
            stride_b: None,
            stride_c: None,
        }
    }

    /// The strides used (user order A, B, C) and the elements each buffer must hold, for matrices that
    /// each span `one[i]` elements.
    pub(crate) fn resolve(&self, one: [usize; 3]) -> Result<([usize; 3], [usize; 3])> {
        int("batch count", self.count)?;
        let names = ["stride_a", "stride_b", "stride_c"];
        let given = [self.stride_a, self.stride_b, self.stride_c];
        let mut stride = [0usize; 3];
        let mut need = [0usize; 3];
        for i in 0..3 {
            stride[i] = given[i].unwrap_or(one[i]);
            if i64::try_from(stride[i]).is_err() {
                return Err(Error::InvalidArgument {
                    what: names[i],
                    value: stride[i].to_string(),
                    reason: "hipBLAS takes strides as a 64-bit signed integer".into(),
                });
            }
            need[i] = match self.count {
                0 => 0,
                c => stride[i]
                    .checked_mul(c - 1)
                    .and_then(|v| v.checked_add(one[i]))
                    .ok_or_else(|| overflow(names[i]))?,
            };
        }
        if self.count > 1 && stride[2] < one[2] {
            return Err(Error::InvalidArgument {
                what: "stride_c",
                value: stride[2].to_string(),
                reason: format!(
                    "each C spans {} elements: a smaller stride makes products write the same elements at once",
                    one[2]
                ),
            });
        }
        Ok((stride, need))
    }
}

/// The shape of `y = alpha * op(A) * x + beta * y` ([`Handle::gemv`](super::Handle::gemv)): A is a
/// column-major `m x n` matrix with leading dimension `lda` (default `m`); x has `n` elements (`m` under
/// a transpose) `incx` apart and y `m` (`n`) elements `incy` apart (default 1). Row-major A is the same
/// memory as its column-major transpose: pass `Gemv::new(n, m)` with [`Op::T`] for `y = A * x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gemv {
    /// Rows of A.
    pub m: usize,
    /// Columns of A.
    pub n: usize,
    /// How A enters the product.
    pub op: Op,
    /// A's leading dimension; `None`: `m`.
    pub lda: Option<usize>,
    /// Increment between x's elements.
    pub incx: i32,
    /// Increment between y's elements.
    pub incy: i32,
}

impl Gemv {
    /// `m x n`, no transpose, tight leading dimension, unit increments.
    pub fn new(m: usize, n: usize) -> Gemv {
        Gemv {
            m,
            n,
            op: Op::N,
            lda: None,
            incx: 1,
            incy: 1,
        }
    }

    /// With A entering as `op`.
    pub fn op(self, op: Op) -> Gemv {
        Gemv { op, ..self }
    }

    /// The leading dimension used, and the elements A, x and y span.
    pub(crate) fn resolve(&self) -> Result<(usize, [usize; 3])> {
        let lda = self.lda.unwrap_or(self.m.max(1));
        let a = matrix_len("gemv operand a", self.m, self.n, lda)?;
        let (nx, ny) = match self.op {
            Op::N => (self.n, self.m),
            Op::T | Op::C => (self.m, self.n),
        };
        let x = vector_len("gemv operand x", nx, self.incx)?;
        let y = vector_len("gemv operand y", ny, self.incy)?;
        for (what, v) in [("m", self.m), ("n", self.n), ("lda", lda)] {
            int(what, v)?;
        }
        Ok((lda, [a, x, y]))
    }
}

#[cfg(test)]
#[path = "shape_fuzz.rs"]
mod fuzz;
