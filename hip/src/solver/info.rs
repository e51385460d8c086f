//! A call's `info` result, kept on the device until the caller asks for it.

use super::reuse::InfoPool;
use crate::error::{Error, Result, SolverFailure};
use crate::memory::{DeviceBuffer, DeviceMemory};
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// What a positive `info` means for the call that wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Meaning {
    /// `potrf`: the leading minor of order `info` is not positive definite.
    NotPositiveDefinite,
    /// `getrf`: `U(info, info)` is zero.
    Singular,
    /// `syevd`, `gesvd`: `info` elements did not converge.
    NotConverged,
    /// The call has only argument checks (`potrs`, `getrs`, `geqrf`, `ormqr`): a positive value is not
    /// documented, and is reported as the raw value.
    ArgumentsOnly,
}

/// The `info` result of a queued hipSOLVER call: one `int` per problem, written on the device by the
/// call. Nothing reads it unless the caller does; dropped unread it waits for nothing (it is freed in the
/// stream's order).
///
/// [`check`](Info::check) and [`values`](Info::values) block: they read the values back with a
/// synchronous copy on the device's null stream, ordered after the call that wrote them. Like every
/// `hipMemcpy` on the null stream, that copy also waits for the work queued so far on every *blocking*
/// stream of the device (streams made by [`Stream::new`](crate::Stream::new)); streams made by
/// [`Stream::non_blocking`](crate::Stream::non_blocking) are not waited for. To wait for the writer
/// only, read [`buffer`](Info::buffer) with `to_vec_future` on a non-blocking stream.
#[must_use = "a factorization's outcome (positive definite, singular, converged) is known only by checking its Info"]
pub struct Info {
    call: &'static str,
    meaning: Meaning,
    batched: bool,
    /// Taken out only in `drop`.
    values: ManuallyDrop<DeviceBuffer<i32>>,
    /// The handle's pool, where `values` goes back on drop. Held, not weak: the pool (a few small
    /// buffers) outlives the handle while `Info`s of its calls do, and a drop costs no upgrade.
    home: Arc<InfoPool>,
}

impl Info {
    pub(super) fn new(
        call: &'static str,
        meaning: Meaning,
        batched: bool,
        values: DeviceBuffer<i32>,
        home: Arc<InfoPool>,
    ) -> Info {
        Info {
            call,
            meaning,
            batched,
            values: ManuallyDrop::new(values),
            home,
        }
    }

    /// Wait for the call, and `Ok` if every problem had an answer; else [`Error::NoSolution`] for the
    /// first that had none (naming its place in the batch for a batched call).
    ///
    /// Blocks, on the null stream: see [`Info`] for what else it waits for.
    ///
    /// # Errors
    /// [`Error::NoSolution`] as above; the error of the copy back (the stream's error if the call
    /// failed on the device).
    pub fn check(&self) -> Result<()> {
        let values = self.values()?;
        match failure(self.meaning, &values) {
            None => Ok(()),
            Some((i, failure)) => Err(Error::NoSolution {
                call: self.call,
                batch: self.batched.then_some(i),
                failure,
            }),
        }
    }

    /// Wait for the call and read the raw `info` values, one per problem (LAPACK's meaning: 0 success,
    /// `-i` argument `i` refused, positive values as [`check`](Info::check) explains).
    pub fn values(&self) -> Result<Vec<i32>> {
        self.values.to_vec()
    }

    /// The device buffer the call writes, for reading it in a kernel or asynchronously
    /// (`to_vec_future`).
    pub fn buffer(&self) -> &DeviceBuffer<i32> {
        &self.values
    }

    /// The hipSOLVER function that writes it.
    pub fn call(&self) -> &'static str {
        self.call
    }
}

impl Drop for Info {
    /// The buffer goes back to the handle's pool for a later call (no HIP call: safe inside a host
    /// function). The pool's buffers are freed in stream order when the handle and its last `Info` are
    /// gone.
    fn drop(&mut self) {
        // SAFETY: `values` is taken once, here, and never used again.
        let values = unsafe { ManuallyDrop::take(&mut self.values) };
        self.home.put(values);
    }
}

impl std::fmt::Debug for Info {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Info")
            .field("call", &self.call)
            .field("problems", &self.values.len())
            .finish()
    }
}

/// The first non-zero `info` and what it means, with its index.
pub(super) fn failure(meaning: Meaning, values: &[i32]) -> Option<(usize, SolverFailure)> {
    let (i, &v) = values.iter().enumerate().find(|(_, &v)| v != 0)?;
    let n = v.unsigned_abs() as usize;
    let failure = if v < 0 {
        SolverFailure::IllegalArgument { position: n }
    } else {
        match meaning {
            Meaning::NotPositiveDefinite => SolverFailure::NotPositiveDefinite { order: n },
            Meaning::Singular => SolverFailure::Singular { pivot: n },
            Meaning::NotConverged => SolverFailure::NotConverged { count: n },
            Meaning::ArgumentsOnly => SolverFailure::Undocumented { info: v },
        }
    };
    Some((i, failure))
}
