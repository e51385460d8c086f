//! How many `info` ints and how many workspace bytes a call needs, for each backend hipSOLVER runs on:
//! pure functions of the call and of the library's `*_bufferSize` answer, unit-tested without a device.
//!
//! The facts come from hipSOLVER's two backends (`library/src/amd_detail/hipsolver.cpp` over rocSOLVER,
//! `library/src/nvidia_detail/hipsolver.cpp` over cuSOLVER), read at ROCm 5.2.3, 5.5.1, 5.7.1, 6.2.2,
//! the October 2024 tree and the 2026 `rocm-libraries` tree (`projects/hipsolver`):
//!
//! | call | rocSOLVER backend writes | cuSOLVER backend writes | allocated |
//! | --- | --- | --- | --- |
//! | `potrf`, `getrf`, `syevd`/`heevd`, `gesvd` | 1 (rocSOLVER itself) | 1 | 1 |
//! | `potrs`, `getrs`, `geqrf`, `ormqr`/`unmqr` | 1 (`hipsolverZeroInfo(.., 1)`, from 5.3; none before) | 1 | 1, zeroed first |
//! | `potrfBatched` | `batch_count` (rocSOLVER) | `batch_count` (cuSOLVER's `infoArray`) | `batch_count` |
//! | `potrsBatched` | `batch_count` (`hipsolverZeroInfo(.., batch_count)`, from 5.3; none before) | 1 (cuSOLVER's scalar `info`) | `batch_count`, zeroed first |
//!
//! Workspace (`*_bufferSize`): the rocSOLVER backend answers **bytes** (rocBLAS's device memory size
//! query, `rocblas_start/stop_device_memory_size_query`) and hands `work` to `rocblas_set_workspace`
//! with `lwork` as its size in bytes; the cuSOLVER backend forwards cuSOLVER's answer, a count of
//! **elements** of the call's type, and passes `lwork` on as elements. Calls whose query cuSOLVER does
//! not need (`potrs`, `getrs`, the batched ones) answer 0 there.

use crate::error::{Error, Result};
use std::os::raw::c_int;

/// The library under hipSOLVER.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Backend {
    /// AMD: rocSOLVER (over rocBLAS).
    RocSolver,
    /// HIP's NVIDIA platform: cuSOLVER.
    CuSolver,
}

/// The backend this build calls.
pub(super) const BACKEND: Backend = if cfg!(hip_platform = "nvidia") {
    Backend::CuSolver
} else {
    Backend::RocSolver
};

const BACKENDS: [Backend; 2] = [Backend::RocSolver, Backend::CuSolver];

/// A hipSOLVER call that takes `info`, by how its backends write it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum InfoCall {
    /// `potrf`, `getrf`, `syevd`/`heevd`, `gesvd`: the solver computes `info` (one problem).
    Computed,
    /// `potrs`, `getrs`, `geqrf`, `ormqr`/`unmqr`: rocSOLVER has no `info` for them; hipSOLVER zeroes
    /// one int (since 5.3), cuSOLVER reports argument errors there.
    ArgumentsOnly,
    /// `potrfBatched`: one computed `info` per matrix on both backends.
    PotrfBatched,
    /// `potrsBatched`: hipSOLVER zeroes `batch_count` ints on rocSOLVER; cuSOLVER writes one.
    PotrsBatched,
}

/// How many `info` ints `backend` writes for `call` on `batch_count` problems (1 for unbatched calls),
/// as the backends' sources do (see the module's table; hipSOLVER before 5.3 wrote none on rocSOLVER for
/// the argument-only calls, which [`info_zeroed`] covers).
pub(super) fn info_written(backend: Backend, call: InfoCall, batch_count: usize) -> usize {
    match (call, backend) {
        (InfoCall::Computed | InfoCall::ArgumentsOnly, _) => 1,
        (InfoCall::PotrfBatched, _) => batch_count,
        (InfoCall::PotrsBatched, Backend::RocSolver) => batch_count,
        (InfoCall::PotrsBatched, Backend::CuSolver) => 1,
    }
}

/// The `info` ints to allocate for `call`: the most any backend writes, so that no backend writes past
/// the allocation (a device write into neighbouring pool memory otherwise), on every platform alike.
pub(super) fn info_len(call: InfoCall, batch_count: usize) -> usize {
    BACKENDS
        .iter()
        .map(|&b| info_written(b, call, batch_count))
        .max()
        .unwrap_or(batch_count)
}

/// Whether the `info` buffer is zeroed before the call: where some backend (or an older hipSOLVER) writes
/// fewer ints than [`info_len`] allocates, the rest would be read back uninitialised. The argument-only
/// calls are zeroed always (hipSOLVER before 5.3 left their `info` untouched on rocSOLVER); computed ones
/// are written whole by every backend, and cost no memset.
pub(super) fn info_zeroed(call: InfoCall, batch_count: usize) -> bool {
    let len = info_len(call, batch_count);
    matches!(call, InfoCall::ArgumentsOnly | InfoCall::PotrsBatched)
        || BACKENDS
            .iter()
            .any(|&b| info_written(b, call, batch_count) < len)
}

/// What a call's workspace takes: the bytes to allocate before any `extra`, and the `lwork` to pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Workspace {
    /// Bytes the library may use from the start of `work`.
    pub(super) bytes: usize,
    /// The `lwork` argument: the query's answer, in the unit the backend takes it.
    pub(super) lwork: c_int,
}

/// The workspace for a `*_bufferSize` `answer` on `backend`, for elements of `elem_size` bytes.
///
/// - rocSOLVER: `answer` is bytes, and `lwork` goes to `rocblas_set_workspace` as bytes: allocate
///   `answer` bytes, plus `carved`: the bytes hipSOLVER takes off the front of `work` before handing
///   `lwork` bytes from there on to rocBLAS (`syevd`/`heevd` keep their off-diagonal `E` there: `n`
///   reals), so rocBLAS's region `[work + carved, work + carved + lwork)` stays inside the allocation.
/// - cuSOLVER: `answer` is elements: allocate `answer * elem_size` bytes; nothing is carved.
///
/// `lwork` is the answer on both. Errors: an answer whose bytes overflow `usize`.
pub(super) fn workspace(
    backend: Backend,
    what: &'static str,
    answer: c_int,
    elem_size: usize,
    carved: usize,
) -> Result<Workspace> {
    let overflow = || Error::InvalidArgument {
        what,
        value: answer.to_string(),
        reason: "the workspace in bytes overflows usize".into(),
    };
    let units = usize::try_from(answer).map_err(|_| Error::InvalidArgument {
        what,
        value: answer.to_string(),
        reason: "hipSOLVER answered a negative workspace size".into(),
    })?;
    let bytes = match backend {
        Backend::RocSolver if units == 0 => 0,
        Backend::RocSolver => units.checked_add(carved).ok_or_else(overflow)?,
        Backend::CuSolver => units.checked_mul(elem_size).ok_or_else(overflow)?,
    };
    Ok(Workspace {
        bytes,
        lwork: answer,
    })
}
