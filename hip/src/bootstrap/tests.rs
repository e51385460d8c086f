//! The environment's order and defaults, and the rendezvous with ranks as threads of one process (the
//! process-level tests, a killed rank among them, are tests/bootstrap.rs).

use super::env::first_slurm_host;
use super::*;
use std::collections::HashMap;
use std::net::TcpListener;
use std::time::{Duration, Instant};

#[path = "test_port.rs"]
mod test_port;
use test_port::free_port;

fn vars(list: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let m: HashMap<String, String> = list
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |n| m.get(n).cloned()
}

#[test]
fn torchrun_first_then_slurm_then_open_mpi() {
    let all = [
        ("RANK", "1"),
        ("WORLD_SIZE", "2"),
        ("LOCAL_RANK", "1"),
        ("MASTER_ADDR", "node0"),
        ("MASTER_PORT", "29500"),
        ("TORCHELASTIC_RUN_ID", "run7"),
        ("SLURM_PROCID", "5"),
        ("SLURM_NTASKS", "8"),
        ("OMPI_COMM_WORLD_RANK", "3"),
        ("OMPI_COMM_WORLD_SIZE", "4"),
    ];
    let l = Launch::from_vars(vars(&all)).unwrap();
    assert_eq!(l.launcher(), Launcher::Torchrun);
    assert_eq!((l.rank(), l.world_size(), l.local_rank()), (1, 2, Some(1)));
    assert_eq!((l.addr(), l.job()), ("node0:29500".into(), Some("run7")));
    let l = Launch::from_vars(vars(&all[5..])).unwrap_err();
    assert!(l.to_string().contains("MASTER_ADDR"), "{l}"); // Slurm without a node list
    let mut slurm = all[6..].to_vec();
    slurm.push(("SLURM_JOB_NODELIST", "gpu[003-004,9],cpu1"));
    slurm.push(("SLURM_JOB_ID", "123"));
    let l = Launch::from_vars(vars(&slurm)).unwrap();
    assert_eq!(l.launcher(), Launcher::Slurm);
    assert_eq!(
        (l.rank(), l.world_size(), l.addr()),
        (5, 8, "gpu003:20123".into())
    );
    let ompi = [
        ("OMPI_COMM_WORLD_RANK", "3"),
        ("OMPI_COMM_WORLD_SIZE", "4"),
        ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
        ("OMPI_COMM_WORLD_LOCAL_SIZE", "4"),
        ("MASTER_PORT", "4000"),
    ];
    let l = Launch::from_vars(vars(&ompi)).unwrap();
    assert_eq!(l.launcher(), Launcher::OpenMpi);
    assert_eq!(
        (l.rank(), l.local_rank(), l.addr()),
        (3, Some(1), "127.0.0.1:4000".into())
    );
    // Across machines Open MPI needs MASTER_ADDR.
    let e = Launch::from_vars(vars(&[ompi[0], ompi[1], ompi[4]])).unwrap_err();
    assert!(e.to_string().contains("mpirun -x MASTER_ADDR"), "{e}");
}

#[test]
fn environment_errors_name_the_variable() {
    let e = Launch::from_vars(vars(&[])).unwrap_err();
    assert!(e.to_string().contains("RANK and WORLD_SIZE"), "{e}");
    let base = [("MASTER_ADDR", "h"), ("MASTER_PORT", "1")];
    for (list, word) in [
        (vec![("RANK", "x"), ("WORLD_SIZE", "2")], "RANK"),
        (
            vec![("RANK", "2"), ("WORLD_SIZE", "2")],
            "below the world size",
        ),
        (vec![("RANK", "0"), ("WORLD_SIZE", "0")], "world size"),
        (
            vec![("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_PORT", "0")],
            "MASTER_PORT",
        ),
        (
            vec![("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_PORT", "70000")],
            "MASTER_PORT",
        ),
    ] {
        let mut l = list.clone();
        for b in base {
            if !l.iter().any(|v| v.0 == b.0) {
                l.push(b);
            }
        }
        let e = Launch::from_vars(vars(&l)).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e:?}");
        assert!(e.to_string().contains(word), "{list:?}: {e}");
    }
    assert!(Launch::from_vars(vars(&[
        ("RANK", "0"),
        ("WORLD_SIZE", "1"),
        ("MASTER_ADDR", "h")
    ]))
    .unwrap_err()
    .to_string()
    .contains("MASTER_PORT"));
}

#[test]
fn slurm_node_lists() {
    assert_eq!(first_slurm_host("n1").as_deref(), Some("n1"));
    assert_eq!(first_slurm_host("n[07-09]").as_deref(), Some("n07"));
    assert_eq!(first_slurm_host("a[3,5-6],b2").as_deref(), Some("a3"));
    assert_eq!(first_slurm_host("x1,y[1-2]").as_deref(), Some("x1"));
    assert_eq!(first_slurm_host(""), None);
}

/// Run `world` ranks as threads (`worlds[r]` the world size rank `r` claims), each broadcasting `key`.
fn run(ranks: &[(usize, usize)], port: u16, timeout: Duration, key: &str) -> Vec<Result<Vec<u8>>> {
    let threads: Vec<_> = ranks
        .iter()
        .map(|&(rank, world)| {
            let key = key.to_string();
            std::thread::spawn(move || {
                let rv = Rendezvous::new(&Launch::new(rank, world, "127.0.0.1", port)?, timeout)?;
                rv.broadcast(&key, || Ok(format!("id of {key}").into_bytes()))
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

fn failure(r: &Result<Vec<u8>>) -> RendezvousFailure {
    match r {
        Err(Error::Rendezvous { failure, .. }) => (**failure).clone(),
        other => panic!("expected a rendezvous error, got {other:?}"),
    }
}

#[test]
fn every_rank_gets_rank_0s_blob() {
    let port = free_port();
    let ranks: Vec<_> = (0..6).map(|r| (r, 6)).collect();
    for r in run(&ranks, port, Duration::from_secs(20), "k/0") {
        assert_eq!(r.unwrap(), b"id of k/0");
    }
    // One rank alone needs nobody.
    assert_eq!(
        run(&[(0, 1)], port, Duration::from_secs(1), "k/1")[0]
            .as_ref()
            .unwrap(),
        b"id of k/1"
    );
}

/// Rank 0 returns only once every rank's commit is written: its process may end right after (a CI run
/// caught a rank told "rank 0 was lost mid-exchange" by a rank 0 that had returned the blob and exited).
#[test]
fn rank_0_returns_after_every_commit_is_written() {
    for world in [2, 8] {
        let port = free_port();
        let others: Vec<_> = (1..world)
            .map(|rank| {
                std::thread::spawn(move || {
                    let l = Launch::new(rank, world, "127.0.0.1", port)?;
                    Rendezvous::new(&l, Duration::from_secs(20))?
                        .broadcast("c/0", || unreachable!())
                })
            })
            .collect();
        let l = Launch::new(0, world, "127.0.0.1", port).unwrap();
        let rv = Rendezvous::new(&l, Duration::from_secs(20)).unwrap();
        assert_eq!(rv.broadcast("c/0", || Ok(b"id".to_vec())).unwrap(), b"id");
        let server = &rv.server.as_ref().unwrap().0;
        assert_eq!(server.commits_written("c/0"), world - 1);
        for t in others {
            assert_eq!(t.join().unwrap().unwrap(), b"id");
        }
    }
}

#[test]
fn a_rank_that_never_arrives_times_out_everywhere() {
    let t0 = Instant::now();
    let out = run(
        &[(0, 3), (1, 3)],
        free_port(),
        Duration::from_millis(800),
        "k",
    );
    assert!(t0.elapsed() < Duration::from_secs(5));
    match failure(&out[0]) {
        RendezvousFailure::Timeout { missing, .. } => assert_eq!(missing, vec![2]),
        f => panic!("{f:?}"),
    }
    assert!(
        matches!(failure(&out[1]), RendezvousFailure::Timeout { .. }),
        "{:?}",
        out[1]
    );
    assert_eq!(
        out[0].as_ref().unwrap_err().status(),
        crate::Status::OperationFailed
    );
}

#[test]
fn world_size_mismatch_and_duplicate_rank_fail_every_rank() {
    let out = run(
        &[(0, 3), (1, 3), (2, 4)],
        free_port(),
        Duration::from_secs(10),
        "k",
    );
    for r in &out {
        let f = failure(r);
        assert!(
            matches!(f, RendezvousFailure::WorldSizeMismatch { rank: 2, theirs: 4, ours: 3 })
                // rank 2 may be refused before rank 0 published; the others then see the same
                || matches!(f, RendezvousFailure::WorldSizeMismatch { .. }),
            "{f:?}"
        );
    }
    // Rank 0 stays until every rank was told, or the timeout: rank 2 does not exist here.
    let out = run(
        &[(0, 3), (1, 3), (1, 3)],
        free_port(),
        Duration::from_secs(2),
        "k",
    );
    for r in &out {
        assert_eq!(
            failure(r),
            RendezvousFailure::DuplicateRank { rank: 1 },
            "{r:?}"
        );
        assert_eq!(
            r.as_ref().unwrap_err().status(),
            crate::Status::InvalidArgument
        );
    }
}

#[test]
fn port_in_use_and_unreachable_address() {
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let e = Rendezvous::new(
        &Launch::new(0, 2, "127.0.0.1", port).unwrap(),
        Duration::from_secs(1),
    )
    .unwrap_err();
    assert!(e.to_string().contains("MASTER_PORT"), "{e}");
    let r: Result<Vec<u8>> = Err(e);
    assert!(
        matches!(failure(&r), RendezvousFailure::AddressInUse { .. }),
        "{r:?}"
    );
    drop(held);
    let t0 = Instant::now();
    let out = run(&[(1, 2)], free_port(), Duration::from_millis(500), "k");
    assert!(
        matches!(failure(&out[0]), RendezvousFailure::Unreachable { .. }),
        "{:?}",
        out[0]
    );
    assert!(t0.elapsed() < Duration::from_secs(3));
    let rv = Rendezvous::new(
        &Launch::new(1, 2, "no-such-host.invalid", 1).unwrap(),
        Duration::from_millis(500),
    )
    .unwrap();
    let e = rv.broadcast("k", || Ok(vec![])).unwrap_err();
    assert!(
        e.to_string()
            .contains("cannot resolve no-such-host.invalid"),
        "{e}"
    );
}

#[test]
fn communicators_in_sequence_and_at_once_get_their_own_ids() {
    // In sequence: each exchange a fresh rendezvous on the same port, a rank racing ahead to the next key
    // while rank 0 still serves the previous one.
    let port = free_port();
    let ranks: Vec<_> = (0..3)
        .map(|rank| {
            std::thread::spawn(move || {
                for i in 0..5 {
                    let key = format!("seq/{i}");
                    let l = Launch::new(rank, 3, "127.0.0.1", port).unwrap();
                    let rv = Rendezvous::new(&l, Duration::from_secs(20)).unwrap();
                    let got = rv.broadcast(&key, || Ok(key.clone().into_bytes())).unwrap();
                    assert_eq!(got, key.into_bytes(), "rank {rank}");
                }
            })
        })
        .collect();
    for t in ranks {
        t.join().unwrap();
    }
    // At once: one rendezvous per rank, four keys from four threads each.
    let port = free_port();
    let rvs: Vec<_> = (0..3)
        .map(|r| {
            std::sync::Arc::new(
                Rendezvous::new(
                    &Launch::new(r, 3, "127.0.0.1", port).unwrap(),
                    Duration::from_secs(20),
                )
                .unwrap(),
            )
        })
        .collect();
    let mut threads = Vec::new();
    for rv in &rvs {
        for k in 0..4 {
            let rv = rv.clone();
            threads.push(std::thread::spawn(move || {
                let key = format!("at-once/{k}");
                let got = rv.broadcast(&key, || Ok(key.clone().into_bytes())).unwrap();
                assert_eq!(got, key.into_bytes());
            }));
        }
    }
    for t in threads {
        t.join().unwrap();
    }
    // A key used twice on rank 0 is refused.
    let e = rvs[0].broadcast("at-once/0", || Ok(vec![1])).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
}

#[test]
fn rank_0_failing_to_make_the_blob_fails_the_others_at_once() {
    let port = free_port();
    let t = std::thread::spawn(move || {
        let rv = Rendezvous::new(
            &Launch::new(1, 2, "127.0.0.1", port)?,
            Duration::from_secs(30),
        )?;
        rv.broadcast("k", || unreachable!("only rank 0 makes the blob"))
    });
    let rv = Rendezvous::new(
        &Launch::new(0, 2, "127.0.0.1", port).unwrap(),
        Duration::from_secs(30),
    )
    .unwrap();
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_millis(200));
    let e = rv
        .broadcast("k", || {
            Err(Error::InvalidArgument {
                what: "test",
                value: String::new(),
                reason: "no id".into(),
            })
        })
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }));
    let other = t.join().unwrap();
    assert!(
        matches!(
            failure(&other),
            RendezvousFailure::PeerLost { rank: Some(0), .. }
        ),
        "{other:?}"
    );
    assert!(other.unwrap_err().to_string().contains("no id"));
    assert!(t0.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_stranger_on_the_port_is_a_protocol_error_and_does_not_disturb() {
    use std::io::{Read, Write};
    let port = free_port();
    let rv = Rendezvous::new(
        &Launch::new(0, 2, "127.0.0.1", port).unwrap(),
        Duration::from_secs(20),
    )
    .unwrap();
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    assert_eq!(answer.first(), Some(&1), "a failure reply: {answer:?}");
    let t = std::thread::spawn(move || run(&[(1, 2)], port, Duration::from_secs(20), "k"));
    assert_eq!(rv.broadcast("k", || Ok(vec![9])).unwrap(), vec![9]);
    assert_eq!(t.join().unwrap()[0].as_ref().unwrap(), &vec![9]);
}

#[test]
fn zero_timeout_and_bad_keys_are_refused() {
    let l = Launch::new(1, 2, "127.0.0.1", 1).unwrap();
    assert!(matches!(
        Rendezvous::new(&l, Duration::ZERO),
        Err(Error::InvalidArgument { .. })
    ));
    let rv = Rendezvous::new(&l, Duration::from_secs(1)).unwrap();
    assert!(matches!(
        rv.broadcast("", || Ok(vec![])),
        Err(Error::InvalidArgument { .. })
    ));
    let long = "k".repeat(5000);
    assert!(matches!(
        rv.broadcast(&long, || Ok(vec![])),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(Launch::new(2, 2, "h", 1).is_err());
    assert!(Launch::new(0, 2, "", 1).is_err());
    assert!(Launch::new(0, 2, "h", 0).is_err());
}
