//! Forming a job of several processes without a GPU or RCCL: who this process is ([`Launch`], from a
//! launcher's environment) and a small TCP rendezvous ([`Rendezvous`]) through which rank 0 hands an
//! opaque byte blob, such as RCCL's 128-byte unique id, to every other rank. `std::net` only; with the
//! `mpi` feature also `bootstrap::mpi`, the same exchange over an MPI communicator.
//!
//! `rccl::Comm::from_env` (feature `rccl`) is built on it; the module itself needs no
//! feature, so its exchange is tested on any machine.
//!
//! ```no_run
//! use hip::bootstrap::{Launch, Rendezvous};
//! use std::time::Duration;
//!
//! // torchrun / srun / mpirun set the variables (see Launch::from_vars for the order and defaults).
//! let rv = Rendezvous::new(&Launch::from_env()?, Duration::from_secs(60))?;
//! let key = rv.next_key("my-blob");
//! // Rank 0 makes the blob; every rank returns it.
//! let blob = rv.broadcast(&key, || Ok(b"hello from rank 0".to_vec()))?;
//! assert_eq!(blob, b"hello from rank 0");
//! # Ok::<(), hip::Error>(())
//! ```
//!
//! # How the exchange behaves
//!
//! Rank 0 listens on `MASTER_PORT` from [`Rendezvous::new`] until the value is dropped; every other rank
//! connects (again and again until rank 0 is up, within the timeout), says its key, rank and world size,
//! takes the blob, confirms, and returns only when every rank has confirmed. So either every rank goes
//! on with the blob or every rank gets an [`Error::Rendezvous`] within the timeout:
//!
//! | what happened | [`RendezvousFailure`] | on which ranks |
//! | --- | --- | --- |
//! | a rank never arrived | `Timeout` (rank 0 lists the missing ranks) | all that are running |
//! | two ranks disagree on the world size | `WorldSizeMismatch` | all |
//! | two processes have the same rank | `DuplicateRank` | all |
//! | `MASTER_PORT` is taken on rank 0's machine | `AddressInUse` | rank 0 at once, the others at the timeout |
//! | `MASTER_ADDR` does not resolve, or nothing answers there | `Unreachable` | the ranks that connect |
//! | a rank died or closed its connection mid-exchange | `PeerLost` | all others |
//!
//! Every exchange has a key, and rank 0 hands a blob only to a rank that asks for the same key: one
//! key per communicator ([`Rendezvous::next_key`]) means two communicators set up one after the other,
//! or at once from several threads under distinct keys, never get each other's id (PyTorch #178493).
//! The key starts with the launcher's job id where it gives one ([`Launch::job`]), so a rank never takes
//! an id from another job's rank 0 still holding the port.

mod client;
mod env;
#[cfg(feature = "mpi")]
#[cfg_attr(docsrs, doc(cfg(feature = "mpi")))]
pub mod mpi;
mod server;
#[cfg(test)]
mod tests;
mod wire;

pub use env::{Launch, Launcher};

use crate::error::{Error, RendezvousFailure, Result};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Keys taken in this process, in order (see [`Rendezvous::next_key`]).
static NEXT_KEY: AtomicU64 = AtomicU64::new(0);

/// One process's part of a rendezvous: on rank 0 a listener on `MASTER_PORT` (from [`Rendezvous::new`]
/// until drop), on the others where to find it. Serves any number of keys, one after the other or at
/// once from several threads.
#[derive(Debug)]
pub struct Rendezvous {
    launch: Launch,
    timeout: Duration,
    server: Option<ServerHandle>,
}

/// Rank 0's listener (not `Debug` itself).
struct ServerHandle(server::Server);

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Server")
    }
}

impl Rendezvous {
    /// This process's part of the rendezvous of `launch`; each exchange waits at most `timeout`. Rank 0
    /// starts listening now (on the loopback address where `MASTER_ADDR` is one, else on every
    /// interface), so a port already taken is an error here.
    ///
    /// # Errors
    ///
    /// On rank 0, [`Error::Rendezvous`] with [`RendezvousFailure::AddressInUse`] for a port another
    /// program holds, [`RendezvousFailure::Unreachable`] for an address that does not resolve or
    /// cannot be listened on. [`Error::InvalidArgument`] for a zero timeout.
    ///
    /// ```no_run
    /// use hip::bootstrap::{Launch, Rendezvous};
    /// let rv = Rendezvous::new(&Launch::new(0, 2, "127.0.0.1", 29500)?, std::time::Duration::from_secs(30))?;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn new(launch: &Launch, timeout: Duration) -> Result<Rendezvous> {
        if timeout.is_zero() {
            return Err(Error::InvalidArgument {
                what: "rendezvous timeout",
                value: format!("{timeout:?}"),
                reason: "must be longer than zero".into(),
            });
        }
        let server = if launch.rank == 0 {
            let s = server::Server::bind(&launch.host, launch.port, launch.world_size, timeout)
                .map_err(|f| error(launch, "", f))?;
            Some(ServerHandle(s))
        } else {
            None
        };
        Ok(Rendezvous {
            launch: launch.clone(),
            timeout,
            server,
        })
    }

    /// [`Rendezvous::new`] over [`Launch::from_env`].
    ///
    /// # Errors
    ///
    /// As [`Launch::from_env`] and [`Rendezvous::new`].
    ///
    /// ```no_run
    /// let rv = hip::bootstrap::Rendezvous::from_env(std::time::Duration::from_secs(60))?;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn from_env(timeout: Duration) -> Result<Rendezvous> {
        Rendezvous::new(&Launch::from_env()?, timeout)
    }

    /// Who this process is.
    pub fn launch(&self) -> &Launch {
        &self.launch
    }

    /// The timeout of each exchange.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A fresh key: `<job>/<what>/<n>`, `n` counting the keys this process has taken (in any
    /// rendezvous). Ranks that take their keys in the same order get the same keys: set up communicators
    /// in the same order on every rank, or name the keys yourself (distinct per communicator) where
    /// threads set them up at once.
    ///
    /// ```
    /// let rv = hip::bootstrap::Rendezvous::new(
    ///     &hip::bootstrap::Launch::new(1, 2, "127.0.0.1", 29500)?, std::time::Duration::from_secs(1))?;
    /// assert_ne!(rv.next_key("comm"), rv.next_key("comm"));
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn next_key(&self, what: &str) -> String {
        let n = NEXT_KEY.fetch_add(1, Ordering::Relaxed);
        format!("{}/{what}/{n}", self.launch.job().unwrap_or("job"))
    }

    /// Rank 0 calls `make` and hands what it returns to every rank under `key`; every rank returns those
    /// bytes once every rank has them. Other ranks never call `make`. Blocks until then, a failure, or the
    /// timeout.
    ///
    /// # Errors
    ///
    /// [`Error::Rendezvous`] with the [`RendezvousFailure`] (see the [module table](self)), on every
    /// rank; [`Error::InvalidArgument`] for a key used before on rank 0, an empty or too long key
    /// (4096 bytes at most) or a blob of more than 1 MiB. An error `make` returns is rank 0's
    /// error; the other ranks get a `PeerLost` naming rank 0 that quotes it.
    ///
    /// ```no_run
    /// # let rv = hip::bootstrap::Rendezvous::from_env(std::time::Duration::from_secs(60))?;
    /// let id = rv.broadcast("job/comm/0", || Ok(vec![7u8; 128]))?;
    /// assert_eq!(id.len(), 128);
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn broadcast(&self, key: &str, make: impl FnOnce() -> Result<Vec<u8>>) -> Result<Vec<u8>> {
        if key.is_empty() || key.len() > wire::MAX_KEY {
            return Err(Error::InvalidArgument {
                what: "rendezvous key",
                value: key.chars().take(64).collect(),
                reason: format!("must be 1 to {} bytes", wire::MAX_KEY),
            });
        }
        let start = Instant::now();
        let deadline = start + self.timeout;
        let l = &self.launch;
        match &self.server {
            Some(ServerHandle(server)) => {
                let blob = make().inspect_err(|e| {
                    let detail = format!("rank 0 could not make the blob: {e}");
                    server.abandon(
                        key,
                        RendezvousFailure::PeerLost {
                            rank: Some(0),
                            detail,
                        },
                    );
                })?;
                if blob.len() > wire::MAX_BLOB {
                    return Err(Error::InvalidArgument {
                        what: "rendezvous blob",
                        value: format!("{} bytes", blob.len()),
                        reason: format!("at most {} bytes", wire::MAX_BLOB),
                    });
                }
                match server.publish(key, blob.clone(), deadline, start) {
                    Ok(true) => Ok(blob),
                    Ok(false) => Err(Error::InvalidArgument {
                        what: "rendezvous key",
                        value: key.to_string(),
                        reason: "used before on this rendezvous: take a fresh key per exchange"
                            .into(),
                    }),
                    Err(f) => Err(error(l, key, f)),
                }
            }
            None => {
                let hello = wire::Hello {
                    world: l.world_size,
                    rank: l.rank,
                    key: key.to_string(),
                };
                client::fetch(&l.host, l.port, &hello, start, deadline)
                    .map_err(|f| error(l, key, f))
            }
        }
    }
}

fn error(l: &Launch, key: &str, failure: RendezvousFailure) -> Error {
    Error::Rendezvous {
        addr: l.addr(),
        key: key.to_string(),
        rank: l.rank,
        world_size: l.world_size,
        failure: Box::new(failure),
    }
}
