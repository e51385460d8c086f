//! Two processes, one GPU each, forming their communicator with no exchange code: through torchrun's
//! variables (`Comm::from_env_local_device`), then checking the collectives, `split`, and a peer killed
//! mid-run (the survivor's wait ends in an error, and an abort, within a timeout). This binary starts
//! copies of itself as the ranks. Needs two devices; compiled only with `--features gpu-multi,rccl`.
//! (The same through `mpirun` is examples/multi_node.rs built with `--features rccl,mpi`.)
//! Written without a two-GPU machine to run it on: see docs/MULTI_GPU.md, "What ran where".
#![cfg(all(feature = "gpu-multi", feature = "rccl"))]

use hip::prelude::*;
use hip::rccl::{Comm, ReduceOp};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CHILD: &str = "HIP_RS_RCCL_LAUNCH_CHILD";

fn comm() -> Comm {
    Comm::from_env_local_device(Duration::from_secs(60)).unwrap()
}

/// Every collective, checked on each rank.
#[test]
fn collectives_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let comm = comm();
    let (rank, n) = (comm.rank(), comm.size());
    let d = comm.device().clone();
    let s = Stream::new(&d).unwrap();
    let mut x = DeviceBuffer::from_slice(&d, &[rank as f32 + 1.0; 4096]).unwrap();
    comm.all_reduce_in_place(&mut x, ReduceOp::Sum, &s).unwrap();
    let mut b = DeviceBuffer::from_slice(&d, &[rank as u64 * 7; 64]).unwrap();
    comm.broadcast(&mut b, 1, &s).unwrap();
    let mine = DeviceBuffer::from_slice(&d, &[rank as i32; 3]).unwrap();
    let mut all = DeviceBuffer::<i32>::zeroed(&d, 3 * n).unwrap();
    comm.all_gather(&mine, &mut all, &s).unwrap();
    let big = DeviceBuffer::from_slice(&d, &vec![1.0f64; 8 * n]).unwrap();
    let mut part = DeviceBuffer::<f64>::zeroed(&d, 8).unwrap();
    comm.reduce_scatter(&big, &mut part, ReduceOp::Sum, &s)
        .unwrap();
    s.synchronize().unwrap();
    let total = (1..=n).sum::<usize>() as f32;
    assert!(x.to_vec().unwrap().iter().all(|&v| v == total));
    assert_eq!(b.to_vec().unwrap(), vec![7; 64]);
    let want: Vec<i32> = (0..n as i32).flat_map(|r| [r; 3]).collect();
    assert_eq!(all.to_vec().unwrap(), want);
    assert_eq!(part.to_vec().unwrap(), vec![n as f64; 8]);
    // split: every rank in its own communicator of one, then all in one again.
    match comm.split(Some(rank as u32), 0) {
        Err(hip::Error::NotSupported { what, .. }) => println!("split: {what} not in this library"),
        r => {
            let alone = r.unwrap().unwrap();
            assert_eq!((alone.rank(), alone.size()), (0, 1));
            let again = comm.split(Some(0), -(rank as i32)).unwrap().unwrap();
            assert_eq!((again.rank(), again.size()), (n - 1 - rank, n));
            assert!(comm.split(None, 0).unwrap().is_none());
        }
    }
    println!("\nRCCL-OK rank {rank}");
}

/// Rank 1 exits after joining; rank 0's all-reduce cannot complete: its wait watches the communicator's
/// error and gives up (aborting it) at the timeout.
#[test]
fn peer_killed_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let comm = comm();
    let d = comm.device().clone();
    let s = Stream::new(&d).unwrap();
    if comm.rank() == 1 {
        std::process::exit(0);
    }
    std::thread::sleep(Duration::from_millis(500));
    let mut x = DeviceBuffer::from_slice(&d, &[1.0f32; 1 << 20]).unwrap();
    comm.all_reduce_in_place(&mut x, ReduceOp::Sum, &s).unwrap();
    let t0 = Instant::now();
    let outcome = loop {
        if s.query().unwrap() {
            break "completed";
        }
        if let Err(e) = comm.async_error() {
            println!("async error: {e}");
            break "error";
        }
        if t0.elapsed() > Duration::from_secs(20) {
            break "timeout";
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_ne!(
        outcome, "completed",
        "an all-reduce without its peer completed"
    );
    comm.abort().unwrap();
    println!("\nRCCL-OK survivor: {outcome} after {:?}", t0.elapsed());
    // The stream's queued all-reduce was stopped by the abort; exit without waiting for it.
    std::process::exit(0);
}

fn ranks(test: &str) -> Vec<Child> {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    (0..2)
        .map(|r| {
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", test, "--nocapture", "--test-threads=1"])
                .env(CHILD, "1")
                .env("RANK", r.to_string())
                .env("LOCAL_RANK", r.to_string())
                .env("WORLD_SIZE", "2")
                .env("MASTER_ADDR", "127.0.0.1")
                .env("MASTER_PORT", port.to_string())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect()
}

fn finish(c: Child, limit: Duration) -> String {
    let t0 = Instant::now();
    let mut c = c;
    while c.try_wait().unwrap().is_none() {
        assert!(t0.elapsed() < limit, "a rank hung");
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = c.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", out.status);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn two_processes_from_the_environment() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    for c in ranks("collectives_child") {
        assert!(finish(c, Duration::from_secs(120)).contains("RCCL-OK"));
    }
}

#[test]
fn a_killed_peer_ends_in_an_error_within_the_timeout() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let mut cs = ranks("peer_killed_child");
    let survivor = cs.remove(0);
    finish(cs.remove(0), Duration::from_secs(60));
    assert!(finish(survivor, Duration::from_secs(60)).contains("RCCL-OK survivor"));
}
