//! The values collectives take: element types ([`NcclType`]), reduction operators ([`ReduceOp`]) and the
//! id that joins ranks of several processes ([`UniqueId`]).

use super::{result, sys};
use crate::error::Result;
use crate::memory::{check_len, DeviceCopy};

/// Element types RCCL / NCCL reduce and move: `i8`, `u8`, `i32`, `u32`, `i64`, `u64`, `f32`, `f64`,
/// [`half::f16`] and [`half::bf16`].
///
/// # Safety
/// `DATA_TYPE` is the `ncclDataType_t` whose element has exactly this type's size and representation.
pub unsafe trait NcclType: DeviceCopy {
    /// The `ncclDataType_t` of this type.
    const DATA_TYPE: sys::ncclDataType_t;
}

macro_rules! nccl_type {
    ($($t:ty => $v:ident),* $(,)?) => {
        $(
            // SAFETY: each `ncclDataType_t` named below is the element type of the same width and
            // representation (two's-complement integers, IEEE binary32/64, binary16, bfloat16).
            unsafe impl NcclType for $t { const DATA_TYPE: sys::ncclDataType_t = sys::$v; }
        )*
    };
}
nccl_type!(i8 => ncclInt8, u8 => ncclUint8, i32 => ncclInt32, u32 => ncclUint32, i64 => ncclInt64,
    u64 => ncclUint64, f32 => ncclFloat32, f64 => ncclFloat64, half::f16 => ncclFloat16,
    half::bf16 => ncclBfloat16);

/// A reduction operator (`ncclRedOp_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// `ncclSum`.
    Sum,
    /// `ncclProd`.
    Prod,
    /// `ncclMax`.
    Max,
    /// `ncclMin`.
    Min,
    /// `ncclAvg` (sum divided by the number of ranks).
    Avg,
}

impl ReduceOp {
    /// The C value.
    pub fn raw(self) -> sys::ncclRedOp_t {
        match self {
            ReduceOp::Sum => sys::ncclSum,
            ReduceOp::Prod => sys::ncclProd,
            ReduceOp::Max => sys::ncclMax,
            ReduceOp::Min => sys::ncclMin,
            ReduceOp::Avg => sys::ncclAvg,
        }
    }
}

/// The id that joins ranks of several processes into one communicator (`ncclUniqueId`, 128 bytes).
///
/// Made on one rank ([`UniqueId::new`]) and passed to the others as bytes.
#[derive(Clone, Copy)]
pub struct UniqueId(pub(super) sys::ncclUniqueId);

impl UniqueId {
    /// Size of the id in bytes (`NCCL_UNIQUE_ID_BYTES`).
    pub const BYTES: usize = 128;

    /// A fresh id (`ncclGetUniqueId`): call on rank 0, then send [`as_bytes`](Self::as_bytes) to the others.
    pub fn new() -> Result<UniqueId> {
        Ok(UniqueId(result::get_unique_id()?))
    }

    /// The id's bytes, to pass to the other ranks.
    pub fn as_bytes(&self) -> [u8; Self::BYTES] {
        self.0.internal.map(|c| c as u8)
    }

    /// The id from the bytes rank 0 sent; exactly [`UniqueId::BYTES`] of them.
    pub fn from_bytes(bytes: &[u8]) -> Result<UniqueId> {
        check_len("UniqueId::from_bytes", Self::BYTES, bytes.len())?;
        let mut id = sys::ncclUniqueId::default();
        for (d, s) in id.internal.iter_mut().zip(bytes) {
            *d = *s as _;
        }
        Ok(UniqueId(id))
    }
}

impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UniqueId(..)")
    }
}
