//! The one wait loop of the RCCL module: ask, and between answers sleep a pause that doubles up to a cap,
//! until the answer is yes, an error, or (where a limit is given) time is up. Initialization, a
//! communicator's work on a stream and a non-blocking call's `ncclInProgress` are all waited for so.

use crate::error::{Error, Result};
use std::time::{Duration, Instant};

/// How a wait pauses between questions, and for how long it may wait.
pub(super) struct Backoff {
    /// The first pause.
    pub first: Duration,
    /// The longest pause.
    pub cap: Duration,
    /// The time limit and what the [`Error::Timeout`] names; `None`: no limit.
    pub limit: Option<(Duration, &'static str)>,
}

/// Ask `done` until it answers `true` (then `Ok`) or an error (returned), sleeping per `backoff` between
/// questions; [`Error::Timeout`] once `backoff.limit` has passed without a yes. A pause never runs past
/// the limit.
pub(super) fn poll_until(backoff: Backoff, mut done: impl FnMut() -> Result<bool>) -> Result<()> {
    let start = Instant::now();
    let mut pause = backoff.first;
    loop {
        if done()? {
            return Ok(());
        }
        let mut sleep = pause;
        if let Some((timeout, what)) = backoff.limit {
            let waited = start.elapsed();
            if waited >= timeout {
                return Err(Error::Timeout { what, waited });
            }
            sleep = sleep.min(timeout - waited);
        }
        std::thread::sleep(sleep);
        pause = (pause * 2).min(backoff.cap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polls_until_yes_and_returns_errors_and_timeouts() {
        let quick = |limit| Backoff {
            first: Duration::from_micros(1),
            cap: Duration::from_micros(50),
            limit,
        };
        let mut asked = 0;
        poll_until(quick(None), || {
            asked += 1;
            Ok(asked == 5)
        })
        .unwrap();
        assert_eq!(asked, 5);
        let refused = || Error::NotSupported {
            what: "the test's call",
            reason: "asked to fail",
        };
        let e = poll_until(quick(None), || Err(refused())).unwrap_err();
        assert!(e.to_string().contains("the test's call"), "{e}");
        let limit = Duration::from_millis(20);
        let start = Instant::now();
        let e = poll_until(quick(Some((limit, "the test's wait"))), || Ok(false)).unwrap_err();
        let Error::Timeout { what, waited } = e else {
            panic!("{e}")
        };
        assert_eq!(what, "the test's wait");
        assert!(
            waited >= limit && start.elapsed() < limit * 50,
            "{waited:?}"
        );
    }
}
