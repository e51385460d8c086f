//! The id exchange over MPI (`hip::bootstrap::mpi`, feature `mpi`), no GPU: this test binary runs itself
//! under `mpirun -np 4 --oversubscribe`; each rank broadcasts rank 0's bytes, finds its node-local rank,
//! and sees rank 0's failure to make an id as an error, not a hang. Needs Open MPI (scripts/install-mpi.sh).
use hip::bootstrap::mpi;
use mpi::mpi::topology::Communicator;
use std::process::Command;
use std::time::{Duration, Instant};

const CHILD: &str = "HIP_RS_MPI_CHILD";

#[test]
fn mpi_rank_in_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let universe = mpi::mpi::initialize().expect("MPI initialised once");
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    // Rank 0's bytes everywhere: a 128-byte id (as RCCL's), then one of another size.
    let id: Vec<u8> = (0..128u8).map(|i| i ^ 0x5a).collect();
    let got = mpi::broadcast(&world, || Ok(id.clone())).unwrap();
    assert_eq!(got, id, "rank {rank}");
    let got = mpi::broadcast(&world, || Ok(b"second id, another length".to_vec())).unwrap();
    assert_eq!(got, b"second id, another length");
    // Only rank 0 makes it.
    let got = mpi::broadcast(&world, || {
        assert_eq!(rank, 0, "only rank 0 makes the id");
        Ok(vec![rank as u8; 3])
    })
    .unwrap();
    assert_eq!(got, vec![0; 3]);
    // Rank 0 fails to make one: every rank gets an error.
    let e = mpi::broadcast(&world, || {
        Err(hip::Error::InvalidArgument {
            what: "test id",
            value: String::new(),
            reason: "made to fail".into(),
        })
    })
    .unwrap_err();
    assert!(matches!(e, hip::Error::InvalidArgument { .. }), "{e}");
    // One machine: the node-local rank is the rank.
    assert_eq!(mpi::node_local(&world), (rank, size));
    println!("\nMPI-OK rank {rank} of {size}");
}

#[test]
fn four_ranks_under_mpirun() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let t0 = Instant::now();
    let out = Command::new("mpirun")
        .args(["-np", "4", "--oversubscribe"])
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "mpi_rank_in_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        // Open MPI refuses root without these (CI machines and containers run as root).
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("mpirun (Open MPI: scripts/install-mpi.sh)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!(
        "mpirun took {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        t0.elapsed()
    );
    assert!(out.status.success(), "{}", out.status);
    for r in 0..4 {
        assert!(
            stdout.contains(&format!("MPI-OK rank {r} of 4")),
            "rank {r}"
        );
    }
    assert!(t0.elapsed() < Duration::from_secs(120));
}
