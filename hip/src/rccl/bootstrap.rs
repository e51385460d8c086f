//! Communicators formed with no exchange code of the user's: from a launcher's environment through
//! [`crate::bootstrap`]'s rendezvous, or over MPI (feature `mpi`).

use super::{Comm, UniqueId};
use crate::bootstrap::{Launch, Rendezvous};
use crate::device::Device;
use crate::error::{Error, Result};
use std::time::Duration;

/// Rank 0 makes the id; its bytes, as the blob to broadcast.
fn make_id() -> Result<Vec<u8>> {
    Ok(UniqueId::new()?.as_bytes().to_vec())
}

/// The device of local rank `local`: device `local`, or device 0 where
/// the launcher made one device visible per process (`HIP_VISIBLE_DEVICES`, Slurm's `--gpus-per-task`).
fn local_device(local: usize) -> Result<Device> {
    let count = Device::count()?;
    match count {
        1 => Device::get(0),
        n if local < n => Device::get(local),
        n => Err(Error::DeviceOutOfRange {
            ordinal: local,
            count: n,
        }),
    }
}

impl Comm {
    /// This process's rank of a job launched by torchrun, Slurm or Open MPI, on `device`: the rank,
    /// world size and rank 0's address come from the environment ([`Launch::from_vars`] gives the order
    /// and defaults), rank 0 makes the id ([`UniqueId::new`]) and hands it to every rank through the
    /// rendezvous at `MASTER_ADDR:MASTER_PORT` within `timeout`, and every rank joins
    /// ([`Comm::new`]). Each call takes a fresh key: make the job's communicators in the same order on
    /// every rank (or use [`Comm::from_rendezvous`] with keys of your own).
    ///
    /// The timeout bounds the exchange of the id; joining the clique afterwards is RCCL's (it waits for
    /// every rank to join).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a missing or malformed variable, [`Error::Rendezvous`] for a failed
    /// exchange (a rank that never arrives, ranks that disagree, a port in use, an unreachable address, a
    /// peer lost), [`Error::Nccl`] from the library.
    ///
    /// ```no_run
    /// // torchrun --nnodes=2 --nproc-per-node=8 --rdzv-endpoint=node0:29500 prog
    /// // (or srun, or mpirun -x MASTER_ADDR -x MASTER_PORT)
    /// use std::time::Duration;
    /// let launch = hip::bootstrap::Launch::from_env()?;
    /// let device = hip::Device::get(launch.local_rank().unwrap_or(0))?;
    /// let comm = hip::rccl::Comm::from_env(&device, Duration::from_secs(120))?;
    /// assert_eq!(comm.rank(), launch.rank());
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn from_env(device: &Device, timeout: Duration) -> Result<Comm> {
        let rv = Rendezvous::new(&Launch::from_env()?, timeout)?;
        let key = rv.next_key("rccl");
        Comm::from_rendezvous(&rv, &key, device)
    }

    /// [`Comm::from_env`] on the device of this process's local rank (`LOCAL_RANK`, `SLURM_LOCALID`,
    /// `OMPI_COMM_WORLD_LOCAL_RANK`): device `local_rank`, or device 0 where the process sees one device
    /// only (the launcher bound one per process).
    ///
    /// # Errors
    ///
    /// As [`Comm::from_env`]; [`Error::InvalidArgument`] where the launcher gives no local rank,
    /// [`Error::DeviceOutOfRange`] where the local rank has no device.
    ///
    /// ```no_run
    /// let comm = hip::rccl::Comm::from_env_local_device(std::time::Duration::from_secs(120))?;
    /// println!("rank {} of {} on device {}", comm.rank(), comm.size(), comm.device().ordinal());
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn from_env_local_device(timeout: Duration) -> Result<Comm> {
        let launch = Launch::from_env()?;
        let local = launch.local_rank().ok_or_else(|| Error::InvalidArgument {
            what: "LOCAL_RANK",
            value: String::new(),
            reason: "the launcher gives no local rank (LOCAL_RANK, SLURM_LOCALID, \
                     OMPI_COMM_WORLD_LOCAL_RANK): pick the device and call Comm::from_env"
                .into(),
        })?;
        let device = local_device(local)?;
        let rv = Rendezvous::new(&launch, timeout)?;
        let key = rv.next_key("rccl");
        Comm::from_rendezvous(&rv, &key, &device)
    }

    /// This process's rank of the clique exchanged under `key` on `rv` (one key per communicator: see
    /// [`Rendezvous::next_key`]), on `device`. With one [`Rendezvous`] kept for the job, threads may set
    /// up several communicators at once, each under its own key.
    ///
    /// # Errors
    ///
    /// As [`Comm::from_env`].
    ///
    /// ```no_run
    /// use hip::bootstrap::Rendezvous;
    /// let rv = Rendezvous::from_env(std::time::Duration::from_secs(120))?;
    /// let device = hip::Device::get(rv.launch().local_rank().unwrap_or(0))?;
    /// let a = hip::rccl::Comm::from_rendezvous(&rv, "tensor-parallel", &device)?;
    /// let b = hip::rccl::Comm::from_rendezvous(&rv, "data-parallel", &device)?;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn from_rendezvous(rv: &Rendezvous, key: &str, device: &Device) -> Result<Comm> {
        let bytes = rv.broadcast(key, make_id)?;
        let id = UniqueId::from_bytes(&bytes)?;
        let l = rv.launch();
        Comm::new(device, &id, l.rank(), l.world_size())
    }

    /// This rank of MPI communicator `comm` as a communicator on `device` (feature `mpi`): rank 0 makes
    /// the id, [`bootstrap::mpi::broadcast`](crate::bootstrap::mpi::broadcast) hands it out, every rank
    /// joins with its MPI rank and size. Collective over `comm`.
    ///
    /// # Errors
    ///
    /// As [`bootstrap::mpi::broadcast`](crate::bootstrap::mpi::broadcast) and [`Comm::new`].
    ///
    /// ```no_run
    /// // mpirun -np 16 --map-by ppr:8:node prog
    /// let universe = hip::bootstrap::mpi::mpi::initialize().unwrap();
    /// let world = universe.world();
    /// let (local, _) = hip::bootstrap::mpi::node_local(&world);
    /// let comm = hip::rccl::Comm::from_mpi(&world, &hip::Device::get(local)?)?;
    /// # Ok::<(), hip::Error>(())
    /// ```
    #[cfg(feature = "mpi")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mpi")))]
    pub fn from_mpi<C: ::mpi::topology::Communicator>(comm: &C, device: &Device) -> Result<Comm> {
        let bytes = crate::bootstrap::mpi::broadcast(comm, make_id)?;
        let id = UniqueId::from_bytes(&bytes)?;
        Comm::new(device, &id, comm.rank() as usize, comm.size() as usize)
    }

    /// [`Comm::from_mpi`] on the device of this rank's place on its machine
    /// ([`bootstrap::mpi::node_local`](crate::bootstrap::mpi::node_local)): device `local_rank`, or
    /// device 0 where the process sees one device only. Collective over `comm`.
    ///
    /// # Errors
    ///
    /// As [`Comm::from_mpi`]; [`Error::DeviceOutOfRange`] where the local rank has no device.
    ///
    /// ```no_run
    /// let universe = hip::bootstrap::mpi::mpi::initialize().unwrap();
    /// let comm = hip::rccl::Comm::from_mpi_local_device(&universe.world())?;
    /// # Ok::<(), hip::Error>(())
    /// ```
    #[cfg(feature = "mpi")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mpi")))]
    pub fn from_mpi_local_device<C: ::mpi::topology::Communicator>(comm: &C) -> Result<Comm> {
        let (local, _) = crate::bootstrap::mpi::node_local(comm);
        // Every rank reaches the broadcast even where its device is missing, so none waits forever.
        let device = local_device(local);
        let bytes = crate::bootstrap::mpi::broadcast(comm, make_id)?;
        let device = device?;
        let id = UniqueId::from_bytes(&bytes)?;
        Comm::new(&device, &id, comm.rank() as usize, comm.size() as usize)
    }
}
