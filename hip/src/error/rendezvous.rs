//! What went wrong in an out-of-band exchange of a communicator's id ([`Error::Rendezvous`](super::Error)).

use super::Status;
use std::fmt;
use std::time::Duration;

/// Why a rendezvous ([`crate::bootstrap`]) failed. Each says what to check; the enclosing
/// [`Error::Rendezvous`](super::Error::Rendezvous) says where (address, key, this rank).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RendezvousFailure {
    /// The timeout passed first: ranks that never arrived (as rank 0 saw it), or rank 0 never answered.
    Timeout {
        /// How long was waited.
        waited: Duration,
        /// The ranks still missing, as rank 0 saw them (empty on the other ranks).
        missing: Vec<usize>,
        /// What was being waited for, e.g. `"rank 0 to accept the connection"`.
        waiting_for: String,
    },
    /// Two ranks disagree on the number of ranks.
    WorldSizeMismatch {
        /// The rank that said so.
        rank: usize,
        /// Its world size.
        theirs: usize,
        /// Rank 0's world size.
        ours: usize,
    },
    /// Two processes arrived with the same rank.
    DuplicateRank {
        /// The rank given twice.
        rank: usize,
    },
    /// Rank 0 could not listen on the port: another program (or another rendezvous) holds it.
    AddressInUse {
        /// The operating system's message.
        detail: String,
    },
    /// The address cannot be resolved or reached (the last connection error), or rank 0 cannot bind it.
    Unreachable {
        /// The last error.
        detail: String,
    },
    /// A peer closed its connection or died in the middle of the exchange; no rank goes on with the id.
    PeerLost {
        /// The rank that was lost (`None`: rank 0, seen from another rank, or one that never said who it is).
        rank: Option<usize>,
        /// What was seen.
        detail: String,
    },
    /// A peer spoke something else than this protocol (another program on the port), or asked for a key
    /// rank 0 has already finished.
    Protocol {
        /// What was wrong.
        detail: String,
    },
}

impl RendezvousFailure {
    /// The DTL-style status: `invalid_argument` (410) for a world-size mismatch, a duplicate rank or a
    /// port in use, `backend_not_available` (501) for an unreachable address, `operation_failed` (600)
    /// for a timeout, a lost peer or a protocol error.
    pub fn status(&self) -> Status {
        match self {
            RendezvousFailure::WorldSizeMismatch { .. }
            | RendezvousFailure::DuplicateRank { .. }
            | RendezvousFailure::AddressInUse { .. } => Status::InvalidArgument,
            RendezvousFailure::Unreachable { .. } => Status::BackendNotAvailable,
            RendezvousFailure::Timeout { .. }
            | RendezvousFailure::PeerLost { .. }
            | RendezvousFailure::Protocol { .. } => Status::OperationFailed,
        }
    }
}

impl fmt::Display for RendezvousFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RendezvousFailure::Timeout {
                waited,
                missing,
                waiting_for,
            } => {
                write!(f, "timed out after {waited:?} waiting for {waiting_for}")?;
                if !missing.is_empty() {
                    write!(f, "; ranks that did not arrive or confirm: {missing:?}")?;
                }
                Ok(())
            }
            RendezvousFailure::WorldSizeMismatch { rank, theirs, ours } => write!(
                f,
                "rank {rank} says the world has {theirs} ranks, rank 0 says {ours}: every rank must be \
                 launched with the same WORLD_SIZE"
            ),
            RendezvousFailure::DuplicateRank { rank } => write!(
                f,
                "rank {rank} arrived twice: two processes were given the same RANK"
            ),
            RendezvousFailure::AddressInUse { detail } => write!(
                f,
                "rank 0 cannot listen on the port ({detail}): another program holds it; choose another \
                 MASTER_PORT"
            ),
            RendezvousFailure::Unreachable { detail } => write!(
                f,
                "rank 0 cannot be reached ({detail}): check MASTER_ADDR, MASTER_PORT and that rank 0 runs"
            ),
            RendezvousFailure::PeerLost { rank, detail } => match rank {
                Some(r) => write!(f, "rank {r} was lost mid-exchange ({detail})"),
                None => write!(f, "a peer was lost mid-exchange ({detail})"),
            },
            RendezvousFailure::Protocol { detail } => write!(f, "protocol error: {detail}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use std::time::Duration;

    #[test]
    fn a_timeout_is_an_operation_failure_naming_what_and_how_long() {
        let e = Error::Timeout {
            what: "RCCL work on stream 3",
            waited: Duration::from_millis(1500),
        };
        assert_eq!(e.status(), Status::OperationFailed);
        assert_eq!(e.status().code(), 600);
        assert_eq!(
            e.to_string(),
            "RCCL work on stream 3: still not done after 1.5s"
        );
    }

    #[test]
    fn each_failure_has_its_status_and_says_what_went_wrong() {
        let d = || "why".to_string();
        let cases = [
            (
                RendezvousFailure::Timeout {
                    waited: Duration::from_secs(2),
                    missing: vec![],
                    waiting_for: "rank 0".into(),
                },
                600,
                "timed out after 2s waiting for rank 0",
            ),
            (
                RendezvousFailure::Timeout {
                    waited: Duration::from_secs(2),
                    missing: vec![1, 3],
                    waiting_for: "every rank".into(),
                },
                600,
                "timed out after 2s waiting for every rank; ranks that did not arrive or confirm: [1, 3]",
            ),
            (
                RendezvousFailure::WorldSizeMismatch {
                    rank: 2,
                    theirs: 4,
                    ours: 8,
                },
                410,
                "rank 2 says the world has 4 ranks, rank 0 says 8: every rank must be launched with \
                 the same WORLD_SIZE",
            ),
            (
                RendezvousFailure::DuplicateRank { rank: 5 },
                410,
                "rank 5 arrived twice: two processes were given the same RANK",
            ),
            (
                RendezvousFailure::AddressInUse { detail: d() },
                410,
                "rank 0 cannot listen on the port (why): another program holds it; choose another \
                 MASTER_PORT",
            ),
            (
                RendezvousFailure::Unreachable { detail: d() },
                501,
                "rank 0 cannot be reached (why): check MASTER_ADDR, MASTER_PORT and that rank 0 runs",
            ),
            (
                RendezvousFailure::PeerLost {
                    rank: Some(3),
                    detail: d(),
                },
                600,
                "rank 3 was lost mid-exchange (why)",
            ),
            (
                RendezvousFailure::PeerLost {
                    rank: None,
                    detail: d(),
                },
                600,
                "a peer was lost mid-exchange (why)",
            ),
            (
                RendezvousFailure::Protocol { detail: d() },
                600,
                "protocol error: why",
            ),
        ];
        for (failure, status, text) in cases {
            assert_eq!(failure.status().code(), status, "{failure}");
            assert_eq!(failure.to_string(), text);
        }
    }
}
