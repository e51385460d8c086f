//! What a handle keeps between [`Handle::spmv`](super::Handle::spmv) calls of one problem, so that a
//! repeated product costs no more host work than the raw C call with descriptors made once: the
//! descriptors and the scratch size the library asked for.

use super::descr::{DnVec, SpMat};
use crate::memory::DevicePtr;

/// The problem a plan is for: the matrix (by its number, [`next_id`](super::matrix::next_id)), the
/// operation, the element type and the vectors' lengths. The vectors' addresses are not part of it:
/// their descriptors are pointed at each call's vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SpmvKey {
    pub(super) matrix: u64,
    pub(super) op: i64,
    pub(super) data_type: i64,
    pub(super) x_len: usize,
    pub(super) y_len: usize,
}

/// The descriptors of one SpMV problem and its scratch size. The matrix descriptor stays the same
/// object across calls, so a library that keeps an analysis in it (rocSPARSE) analyses once.
pub(super) struct SpmvPlan {
    pub(super) key: SpmvKey,
    pub(super) matrix: SpMat,
    pub(super) x: DnVec,
    pub(super) y: DnVec,
    /// Where `x` and `y` point now.
    pub(super) at: (DevicePtr, DevicePtr),
    /// `hipsparseSpMV_bufferSize`'s answer.
    pub(super) bytes: usize,
}

impl SpmvPlan {
    /// Point the vector descriptors at `x` and `y` (only those that moved).
    pub(super) fn point_at(&mut self, x: DevicePtr, y: DevicePtr) -> crate::error::Result<()> {
        if self.at.0 != x {
            self.x.set_values(x)?;
            self.at.0 = x;
        }
        if self.at.1 != y {
            self.y.set_values(y)?;
            self.at.1 = y;
        }
        Ok(())
    }
}
