//! Communicators made with a configuration (`Comm::with_config`): a non-blocking clique forms in the
//! background and is complete once every rank joined, its calls' `ncclInProgress` is waited out by the
//! crate (the shadow reports a call made before the last one finished), a missing rank ends in
//! `Error::Timeout`, and bad configurations are refused before the library sees them.

use super::N;
use crate::shadow::assert_no_reports;
use hip::prelude::*;
use hip::rccl::{group, Comm, CommConfig, ReduceOp, UniqueId};
use hip::Error;
use std::time::{Duration, Instant};

fn devices() -> [Device; 2] {
    [Device::get(0).unwrap(), Device::get(1).unwrap()]
}

#[test]
fn a_non_blocking_clique_is_ready_once_every_rank_joined_and_its_calls_complete() {
    let d = devices();
    let id = UniqueId::new().unwrap();
    let config = CommConfig::new().blocking(false).min_ctas(2).max_ctas(8);
    let p0 = Comm::with_config(&d[0], &id, 0, 2, &config).unwrap();
    assert_eq!((p0.rank(), p0.size()), (0, 2));
    assert!(!p0.is_ready().unwrap(), "rank 1 has not joined yet");
    let p1 = Comm::with_config(&d[1], &id, 1, 2, &config).unwrap();
    let comms = [
        p0.wait(Duration::from_secs(10)).unwrap(),
        p1.wait(Duration::from_secs(10)).unwrap(),
    ];
    let s = [
        Stream::non_blocking(&d[0]).unwrap(),
        Stream::non_blocking(&d[1]).unwrap(),
    ];
    for round in 0..3 {
        let mut x: Vec<DeviceBuffer<f32>> = (0..2)
            .map(|r| DeviceBuffer::from_slice(&d[r], &vec![(r + round) as f32; N]))
            .collect::<hip::Result<_>>()
            .unwrap();
        // The group's end answers ncclInProgress for both communicators: the crate waits for each.
        group(|| {
            for r in 0..2 {
                comms[r].all_reduce_in_place(&mut x[r], ReduceOp::Sum, &s[r])?;
            }
            Ok(())
        })
        .unwrap();
        // Dropped right after: freed only after the collective that uses it.
        let sums: Vec<Vec<f32>> = x.iter().map(|b| b.to_vec().unwrap()).collect();
        for (r, v) in sums.iter().enumerate() {
            assert_eq!(
                v,
                &vec![(1 + 2 * round) as f32; N],
                "rank {r}, round {round}"
            );
        }
    }
    // Calls on their own threads, outside groups: each answers ncclInProgress, which the crate waits out
    // before the next (else the shadow reports).
    std::thread::scope(|t| {
        for (r, (comm, stream)) in comms.into_iter().zip(&s).enumerate() {
            let device = d[r].clone();
            t.spawn(move || {
                let mut x = DeviceBuffer::from_slice(&device, &vec![r as f32 + 1.0; N]).unwrap();
                for _ in 0..4 {
                    comm.all_reduce_in_place(&mut x, ReduceOp::Max, stream)
                        .unwrap();
                }
                assert_eq!(x.to_vec().unwrap(), vec![2.0; N]);
            });
        }
    });
    assert_no_reports();
}

#[test]
fn a_rank_that_never_joins_ends_in_a_timeout_and_the_pending_rank_is_aborted() {
    let d = devices();
    let id = UniqueId::new().unwrap();
    let p0 = Comm::with_config(&d[0], &id, 0, 2, &CommConfig::new().blocking(false)).unwrap();
    let bound = Duration::from_millis(100);
    let t = Instant::now();
    let e = p0.wait(bound).unwrap_err();
    let waited = t.elapsed();
    assert!(matches!(e, Error::Timeout { .. }), "{e}");
    assert!(e.to_string().contains("never joined"), "{e}");
    assert_eq!(e.status().code(), 600);
    assert!(
        waited >= bound && waited < Duration::from_secs(2),
        "{waited:?}"
    );
    // A pending communicator dropped or aborted before it is ready is freed, not leaked.
    let id = UniqueId::new().unwrap();
    Comm::with_config(&d[0], &id, 0, 2, &CommConfig::new().blocking(false))
        .unwrap()
        .abort()
        .unwrap();
    drop(
        Comm::with_config(
            &d[1],
            &UniqueId::new().unwrap(),
            1,
            3,
            &CommConfig::new().blocking(false),
        )
        .unwrap(),
    );
    assert_no_reports();
}

#[test]
fn a_blocking_configuration_is_ready_at_once() {
    let d = devices();
    let id = UniqueId::new().unwrap();
    let config = CommConfig::new().net_name("Socket").unwrap();
    let p = Comm::with_config(&d[0], &id, 0, 1, &config).unwrap();
    assert!(p.is_ready().unwrap());
    let comm = p.wait(Duration::ZERO).unwrap();
    assert_eq!((comm.rank(), comm.size()), (0, 1));
    assert_no_reports();
}

#[test]
fn bad_configurations_and_ranks_are_refused_before_the_library_sees_them() {
    let d = devices();
    let id = UniqueId::new().unwrap();
    let refused = |config: CommConfig, what: &str| {
        let e = Comm::with_config(&d[0], &id, 0, 1, &config).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument { what: w, .. } if *w == what),
            "{what}: {e}"
        );
        assert_eq!(e.status().code(), 410, "{e}");
    };
    refused(CommConfig::new().min_ctas(0), "CommConfig::min_ctas");
    refused(CommConfig::new().max_ctas(u32::MAX), "CommConfig::max_ctas");
    refused(
        CommConfig::new().cga_cluster_size(1 << 31),
        "CommConfig::cga_cluster_size",
    );
    refused(
        CommConfig::new().min_ctas(9).max_ctas(8),
        "CommConfig::min_ctas",
    );
    let e = CommConfig::new().net_name("So\0cket").unwrap_err();
    assert!(e.to_string().contains("NUL"), "{e}");
    let e = Comm::with_config(&d[0], &id, 2, 2, &CommConfig::new()).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { what: "rank", .. }),
        "{e}"
    );
    let e =
        group(|| Comm::with_config(&d[0], &id, 0, 1, &CommConfig::new()).map(drop)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                what: "Comm::with_config",
                ..
            }
        ),
        "{e}"
    );
    assert_no_reports();
}
