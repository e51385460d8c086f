//! The id exchange over MPI (feature `mpi`, the `mpi` crate: rsmpi): a broadcast of rank 0's bytes over
//! any MPI communicator, and each rank's place on its own machine (`MPI_Comm_split_type` with
//! `MPI_COMM_TYPE_SHARED`), which picks its device. No GPU and no RCCL needed; with `rccl`,
//! `rccl::Comm::from_mpi` is built on it.
//!
//! ```no_run
//! use hip::bootstrap::mpi;
//! let universe = mpi::mpi::initialize().expect("MPI initialised once");
//! let world = universe.world();
//! let blob = mpi::broadcast(&world, || Ok(b"an id".to_vec()))?;
//! let (local_rank, local_size) = mpi::node_local(&world);
//! # Ok::<(), hip::Error>(())
//! ```

use crate::error::{Error, Result};
use ::mpi::collective::Root;
use ::mpi::topology::Communicator;

/// The `mpi` crate (rsmpi) this module is built with.
pub use ::mpi;

/// Marks "rank 0 could not make the blob" in place of a length.
const FAILED: u64 = u64::MAX;

/// Rank 0 of `comm` calls `make` and broadcasts what it returns (`MPI_Bcast` of its length, then of the
/// bytes); every rank returns those bytes. Collective: every rank of `comm` calls it, in the same order
/// as its other collectives.
///
/// # Errors
///
/// On rank 0, `make`'s error; the other ranks then get [`Error::InvalidArgument`] saying rank 0 failed
/// (they learn it from the broadcast, so none waits for bytes that never come). MPI's own failures follow
/// the communicator's error handler (by default MPI aborts the job).
///
/// ```no_run
/// # let universe = hip::bootstrap::mpi::mpi::initialize().unwrap();
/// let id = hip::bootstrap::mpi::broadcast(&universe.world(), || Ok(vec![1u8; 128]))?;
/// assert_eq!(id.len(), 128);
/// # Ok::<(), hip::Error>(())
/// ```
pub fn broadcast<C: Communicator>(
    comm: &C,
    make: impl FnOnce() -> Result<Vec<u8>>,
) -> Result<Vec<u8>> {
    let root = comm.process_at_rank(0);
    if comm.rank() == 0 {
        let made = make();
        let mut len = match &made {
            Ok(b) => b.len() as u64,
            Err(_) => FAILED,
        };
        root.broadcast_into(&mut len);
        let mut bytes = made?;
        root.broadcast_into(&mut bytes[..]);
        Ok(bytes)
    } else {
        let mut len = 0u64;
        root.broadcast_into(&mut len);
        if len == FAILED {
            return Err(Error::InvalidArgument {
                what: "MPI id broadcast",
                value: format!("rank {}", comm.rank()),
                reason: "rank 0 could not make the id (its own error says why)".into(),
            });
        }
        let len = usize::try_from(len).map_err(|_| Error::InvalidArgument {
            what: "MPI id broadcast",
            value: len.to_string(),
            reason: "a length this machine cannot hold".into(),
        })?;
        let mut bytes = vec![0u8; len];
        root.broadcast_into(&mut bytes[..]);
        Ok(bytes)
    }
}

/// This rank's place among the ranks of `comm` on its own machine: `(local rank, local size)`, from
/// `MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)` ordered by rank in `comm`. Collective.
///
/// ```no_run
/// # let universe = hip::bootstrap::mpi::mpi::initialize().unwrap();
/// let (local_rank, _) = hip::bootstrap::mpi::node_local(&universe.world());
/// let device = hip::Device::get(local_rank)?;
/// # Ok::<(), hip::Error>(())
/// ```
pub fn node_local<C: Communicator>(comm: &C) -> (usize, usize) {
    let node = comm.split_shared(comm.rank());
    (node.rank() as usize, node.size() as usize)
}
