//! One process per GPU, on one machine or many, launched the same way as a PyTorch job:
//!
//! ```text
//! # one machine, two GPUs (torchrun-style variables, set by hand here):
//! for r in 0 1; do RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 \
//!     target/release/examples/multi_node & done; wait
//! # two machines, 8 GPUs each:
//! torchrun --nnodes=2 --nproc-per-node=8 --master-addr=node0 --master-port=29500 --no-python \
//!     target/release/examples/multi_node
//! # Slurm:  srun -N2 --ntasks-per-node=8 --gpus-per-task=1 target/release/examples/multi_node
//! # Open MPI, without the `mpi` feature: mpirun -np 16 -x MASTER_ADDR=node0 -x MASTER_PORT=29500 ...
//! # Open MPI, with it (cargo build --release --features rccl,mpi --example multi_node):
//! mpirun -np 16 --map-by ppr:8:node target/release/examples/multi_node
//! ```
//!
//! Every rank all-reduces a buffer holding its rank, all-gathers the ranks, and checks both.
//! Build: `cargo build --release --features rccl --example multi_node` (add `mpi` for the MPI path).
//! See docs/MULTI_GPU.md.
use hip::prelude::*;
use hip::rccl::{Comm, ReduceOp};
use std::time::Duration;

fn comm() -> hip::Result<Comm> {
    let timeout = Duration::from_secs(120);
    #[cfg(feature = "mpi")]
    if std::env::var_os("OMPI_COMM_WORLD_RANK").is_some() || std::env::var_os("PMI_RANK").is_some()
    {
        // Started by mpirun: the id goes over MPI, the device by node-local rank. MPI stays
        // initialised for the process's life (the universe is leaked on purpose: finalising it here
        // would end MPI before the communicator is used).
        let universe = Box::leak(Box::new(
            hip::bootstrap::mpi::mpi::initialize().expect("MPI initialised once"),
        ));
        return Comm::from_mpi_local_device(&universe.world());
    }
    Comm::from_env_local_device(timeout)
}

fn main() -> hip::Result<()> {
    let comm = match comm() {
        Ok(c) => c,
        Err(e) if e.is_no_device() => {
            println!("multi_node: no GPU here ({e}); nothing to run");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let (rank, n) = (comm.rank(), comm.size());
    let device = comm.device().clone();
    let stream = Stream::new(&device)?;
    let mut sum = DeviceBuffer::from_slice(&device, &vec![rank as f32; 1 << 20])?;
    comm.all_reduce_in_place(&mut sum, ReduceOp::Sum, &stream)?;
    let mine = DeviceBuffer::from_slice(&device, &[rank as i32])?;
    let mut all = DeviceBuffer::<i32>::zeroed(&device, n)?;
    comm.all_gather(&mine, &mut all, &stream)?;
    stream.synchronize()?;
    let want = (n * (n - 1) / 2) as f32;
    let got = sum.to_vec()?;
    assert!(
        got.iter().all(|&v| v == want),
        "rank {rank}: sum {} != {want}",
        got[0]
    );
    assert_eq!(all.to_vec()?, (0..n as i32).collect::<Vec<_>>());
    println!(
        "rank {rank} of {n} on device {}: all_reduce and all_gather checked",
        device.ordinal()
    );
    Ok(())
}
