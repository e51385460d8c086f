//! The description of a hipBLASLt product ([`Matmul`]) and what each operand must hold, worked out before
//! hipBLASLt is called. Pure arithmetic, tested without a device.

use super::Algo;
use crate::dense_shape::{matrix_len, overflow};
use crate::error::{Error, Result};

/// How an operand enters the product: as stored or transposed (`hipblasOperation_t`; hipBLASLt's real
/// types have no conjugate).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Op {
    /// `HIPBLAS_OP_N`: as stored.
    #[default]
    N,
    /// `HIPBLAS_OP_T`: transposed.
    T,
}

impl Op {
    /// `(rows, cols)` of the stored matrix whose `op` is `rows_op x cols_op`.
    pub(crate) fn stored(self, rows_op: usize, cols_op: usize) -> (usize, usize) {
        match self {
            Op::N => (rows_op, cols_op),
            Op::T => (cols_op, rows_op),
        }
    }
}

/// A strided batch: `count` products, operand `i` of each starting `i * stride` elements after the
/// first (strides in elements, per operand). Inputs may share one matrix (stride 0); C and D strides must
/// keep the products apart (at least the elements one matrix spans).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StridedBatch {
    /// How many products (at least 1).
    pub count: usize,
    /// Elements between consecutive A matrices.
    pub stride_a: usize,
    /// Elements between consecutive B matrices.
    pub stride_b: usize,
    /// Elements between consecutive C (and D) matrices.
    pub stride_c: usize,
}

/// A matrix product `D = epilogue(alpha * op(A) * op(B) + beta * C)` with `op(A)` `m x k`, `op(B)`
/// `k x n`, C and D `m x n` (one layout for both), for [`Handle::matmul`](super::Handle::matmul).
///
/// Column-major by default: element `(i, j)` of a matrix with leading dimension `ld` is at `i + j * ld`.
/// [`Matmul::row_major`] takes every operand row-major instead (element `(i, j)` at `i * ld + j`, C and
/// NumPy order) and runs hipBLASLt's column-major `D^T = op(B)^T * op(A)^T`, the same memory. Leading
/// dimensions default to the tight value (the stored rows, or the stored columns in row-major) and may
/// be larger; smaller is an error. `m`, `n`, `k` must be at least 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matmul {
    pub(super) m: usize,
    pub(super) n: usize,
    pub(super) k: usize,
    pub(super) op_a: Op,
    pub(super) op_b: Op,
    pub(super) ld: [Option<usize>; 3],
    pub(super) row_major: bool,
    pub(super) batch: Option<StridedBatch>,
    pub(super) algo: Option<Algo>,
}

impl Matmul {
    /// An `m x n` product over `k`, column-major, no transposes, tight leading dimensions, one product,
    /// the algorithm chosen by hipBLASLt's heuristic.
    pub fn new(m: usize, n: usize, k: usize) -> Matmul {
        Matmul {
            m,
            n,
            k,
            op_a: Op::N,
            op_b: Op::N,
            ld: [None; 3],
            row_major: false,
            batch: None,
            algo: None,
        }
    }

    /// [`Matmul::new`] with every operand row-major. The bias of an epilogue then has one element per
    /// column of D (`n`), and the auxiliary output is row-major like D.
    pub fn row_major(m: usize, n: usize, k: usize) -> Matmul {
        Matmul {
            row_major: true,
            ..Matmul::new(m, n, k)
        }
    }

    /// How A enters the product (default [`Op::N`]).
    pub fn op_a(self, op: Op) -> Matmul {
        Matmul { op_a: op, ..self }
    }

    /// How B enters the product (default [`Op::N`]).
    pub fn op_b(self, op: Op) -> Matmul {
        Matmul { op_b: op, ..self }
    }

    /// A's leading dimension (default: tight).
    pub fn lda(mut self, ld: usize) -> Matmul {
        self.ld[0] = Some(ld);
        self
    }

    /// B's leading dimension (default: tight).
    pub fn ldb(mut self, ld: usize) -> Matmul {
        self.ld[1] = Some(ld);
        self
    }

    /// The leading dimension of C and D (default: tight).
    pub fn ldc(mut self, ld: usize) -> Matmul {
        self.ld[2] = Some(ld);
        self
    }

    /// Run `batch.count` products at once (hipBLASLt's strided batch). The bias of an epilogue is
    /// shared by every product; the auxiliary output has one matrix per product, `ld * n` elements
    /// apart (`ld * m` in row-major).
    pub fn batch(self, batch: StridedBatch) -> Matmul {
        Matmul {
            batch: Some(batch),
            ..self
        }
    }

    /// Run with `algo` (from [`Handle::algorithms`](super::Handle::algorithms) for this description,
    /// element type and epilogue kind) instead of the heuristic's first answer. A call whose problem is
    /// not the one `algo` was found for is refused ([`Error::InvalidArgument`]).
    pub fn algo(self, algo: Algo) -> Matmul {
        Matmul {
            algo: Some(algo),
            ..self
        }
    }

    /// `(m, n, k)` as given.
    pub fn dims(&self) -> (usize, usize, usize) {
        (self.m, self.n, self.k)
    }

    /// The column-major call hipBLASLt makes, with every leading dimension, span and stride checked.
    pub(super) fn resolve(&self) -> Result<Call> {
        for (what, v) in [
            ("matmul m", self.m),
            ("matmul n", self.n),
            ("matmul k", self.k),
        ] {
            if v == 0 {
                return Err(Error::InvalidArgument {
                    what,
                    value: "0".into(),
                    reason: "hipBLASLt multiplies non-empty matrices: m, n and k are at least 1"
                        .into(),
                });
            }
            fits_i64(what, v)?;
        }
        // Stored shapes as the user sees them.
        let (ar, ac) = self.op_a.stored(self.m, self.k);
        let (br, bc) = self.op_b.stored(self.k, self.n);
        let (cr, cc) = (self.m, self.n);
        // In row-major the column-major view of each operand is its transpose: rows and columns swap.
        let view = |r: usize, c: usize| if self.row_major { (c, r) } else { (r, c) };
        let operands = [
            ("matmul operand a", view(ar, ac), self.ld[0]),
            ("matmul operand b", view(br, bc), self.ld[1]),
            ("matmul operand c/d", view(cr, cc), self.ld[2]),
        ];
        let (count, strides) = match self.batch {
            None => (1, [0; 3]),
            Some(b) => {
                if b.count == 0 || i32::try_from(b.count).is_err() {
                    return Err(Error::InvalidArgument {
                        what: "matmul batch count",
                        value: b.count.to_string(),
                        reason: format!("a batch holds 1 to {} products", i32::MAX),
                    });
                }
                (b.count, [b.stride_a, b.stride_b, b.stride_c])
            }
        };
        let mut layouts = [Layout::default(); 3];
        for (i, (what, (rows, cols), ld)) in operands.into_iter().enumerate() {
            let ld = ld.unwrap_or(rows);
            let span = matrix_len(what, rows, cols, ld)?;
            fits_i64(what, ld)?;
            fits_i64(what, strides[i])?;
            if i == 2 && count > 1 && strides[i] < span {
                return Err(Error::InvalidArgument {
                    what: "matmul batch stride_c",
                    value: strides[i].to_string(),
                    reason: format!(
                        "the products of a batch would write the same elements: each C/D spans {span}"
                    ),
                });
            }
            let need = strides[i]
                .checked_mul(count - 1)
                .and_then(|v| v.checked_add(span))
                .ok_or_else(|| overflow(what))?;
            layouts[i] = Layout {
                rows,
                cols,
                ld,
                stride: strides[i],
                need,
            };
        }
        let [a, b, c] = layouts;
        // The call: row-major runs D^T = op(B)^T op(A)^T, with B first.
        Ok(if self.row_major {
            Call {
                m: self.n,
                n: self.m,
                k: self.k,
                ops: [self.op_b, self.op_a],
                first: b,
                second: a,
                c,
                count,
                swapped: true,
            }
        } else {
            Call {
                m: self.m,
                n: self.n,
                k: self.k,
                ops: [self.op_a, self.op_b],
                first: a,
                second: b,
                c,
                count,
                swapped: false,
            }
        })
    }
}

/// One operand's column-major layout in the call, and how many elements its buffer must hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct Layout {
    pub rows: usize,
    pub cols: usize,
    pub ld: usize,
    pub stride: usize,
    /// Elements the operand's buffer must hold (every product of the batch).
    pub need: usize,
}

/// The column-major call hipBLASLt makes for a [`Matmul`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Call {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// Operations of the call's first and second operand.
    pub ops: [Op; 2],
    /// The call's first operand: the user's A, or B in row-major.
    pub first: Layout,
    /// The call's second operand: the user's B, or A in row-major.
    pub second: Layout,
    /// C and D.
    pub c: Layout,
    pub count: usize,
    /// Whether the call's operands are the user's B and A (row-major).
    pub swapped: bool,
}

impl Call {
    /// The buffers' lengths in the call's order, from the user's A and B lengths.
    pub fn ordered<X>(&self, a: X, b: X) -> (X, X) {
        if self.swapped {
            (b, a)
        } else {
            (a, b)
        }
    }

    /// The user's names of the call's first and second operands.
    pub fn names(&self) -> (&'static str, &'static str) {
        self.ordered("matmul operand a", "matmul operand b")
    }

    /// A bias has one element per row of the call's D: `m` of the call (`n` of a row-major description).
    pub fn bias_len(&self) -> usize {
        self.m
    }

    /// The elements an auxiliary output with leading dimension `ld` must hold: one `m x n` matrix (of
    /// the call) per product, `ld * n` apart. Returns `(need, batch stride)`.
    pub fn aux_need(&self, ld: usize) -> Result<(usize, usize)> {
        const WHAT: &str = "matmul epilogue aux";
        let span = matrix_len(WHAT, self.m, self.n, ld)?;
        fits_i64(WHAT, ld)?;
        let stride = ld.checked_mul(self.n).ok_or_else(|| overflow(WHAT))?;
        fits_i64(WHAT, stride)?;
        let need = stride
            .checked_mul(self.count - 1)
            .and_then(|v| v.checked_add(span))
            .ok_or_else(|| overflow(WHAT))?;
        Ok((need, stride))
    }
}

/// `len` must hold `need` elements, or an error naming the operand.
pub(super) fn holds(what: &'static str, len: usize, need: usize) -> Result<()> {
    if len >= need {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            what,
            value: format!("a buffer of {len} elements"),
            reason: format!("the product reaches {need} elements of it"),
        })
    }
}

fn fits_i64(what: &'static str, v: usize) -> Result<()> {
    match i64::try_from(v) {
        Ok(_) => Ok(()),
        Err(_) => Err(Error::InvalidArgument {
            what,
            value: v.to_string(),
            reason: format!(
                "hipBLASLt takes it as a 64-bit signed value: at most {}",
                i64::MAX
            ),
        }),
    }
}
