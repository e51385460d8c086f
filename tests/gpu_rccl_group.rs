//! RCCL groups and the memory model (issue 42): NCCL queues a group's calls only when the group ends,
//! so inside a group any other use of a buffer a pending call uses is refused with a clear error (never
//! silently run before the call), memory and communicators dropped inside stay alive until the calls are
//! queued, and communicator creation inside a group is refused where the library is older than 2.14.
//! Needs two devices; compiled only with `--features gpu-multi,rccl`.
#![cfg(all(feature = "gpu-multi", feature = "rccl"))]

use hip::memory::Access;
use hip::prelude::*;
use hip::rccl::{group, version, Comm, ReduceOp, UniqueId};
use hip::Error;

const N: usize = 1 << 16;

struct Two {
    devices: Vec<Device>,
    comms: Vec<Comm>,
    streams: Vec<Stream>,
}

fn two() -> Two {
    assert!(Device::count().unwrap() >= 2, "needs two devices");
    let devices = vec![Device::get(0).unwrap(), Device::get(1).unwrap()];
    let comms = Comm::init_all(&devices).unwrap();
    let streams = devices
        .iter()
        .map(|d| Stream::non_blocking(d).unwrap())
        .collect();
    Two {
        devices,
        comms,
        streams,
    }
}

fn refused_in_group(e: &Error) -> bool {
    matches!(e, Error::InvalidArgument { what, .. } if what.contains("RCCL group"))
}

#[test]
fn host_reads_and_other_uses_inside_a_group_are_refused_and_the_result_is_right_after() {
    let t = two();
    let send: Vec<DeviceBuffer<f32>> = (0..2)
        .map(|r| DeviceBuffer::from_slice(&t.devices[r], &vec![r as f32 + 1.0; N]).unwrap())
        .collect();
    let mut recv: Vec<DeviceBuffer<f32>> = (0..2)
        .map(|r| DeviceBuffer::from_slice(&t.devices[r], &vec![-7.0; N]).unwrap())
        .collect();
    let other = Stream::non_blocking(&t.devices[0]).unwrap();
    let (mut host_read, mut copy_in, mut memset, mut reader, mut raw) =
        (None, None, None, None, None);
    group(|| {
        for r in 0..2 {
            t.comms[r].all_reduce(&send[r], &mut recv[r], ReduceOp::Sum, &t.streams[r])?;
        }
        // Each of these would run before the all-reduce that NCCL has not queued yet.
        host_read = Some(recv[0].to_vec());
        copy_in = Some(recv[0].copy_from_host(&vec![5.0; N]));
        memset = Some(other.fill_async(&mut recv[0], 1.0));
        let mut out = DeviceBuffer::<f32>::zeroed(&t.devices[0], N).unwrap();
        reader = Some(out.copy_from_device(&recv[0]));
        raw = Some(recv[0].track_use(&other, Access::Read));
        Ok(())
    })
    .unwrap();
    for (what, r) in [
        ("host read", host_read.unwrap().map(|_| ())),
        ("copy from the host", copy_in.unwrap()),
        ("fill on another stream", memset.unwrap()),
        ("device copy reading it", reader.unwrap()),
        ("track_use", raw.unwrap()),
    ] {
        let e = r.expect_err(what);
        assert!(refused_in_group(&e), "{what}: {e}");
        assert!(e.to_string().contains("buffer"), "{what}: {e}");
    }
    for s in &t.streams {
        s.synchronize().unwrap();
    }
    for (r, buf) in recv.iter().enumerate() {
        assert_eq!(buf.to_vec().unwrap(), vec![3.0; N], "rank {r}");
    }
    // After the group the same uses work.
    other.fill_async(&mut recv[0], 1.0).unwrap();
    assert_eq!(recv[0].to_vec().unwrap(), vec![1.0; N]);
}

#[test]
fn pool_memory_and_communicators_dropped_inside_a_group_outlive_its_calls() {
    let t = two();
    let Two {
        devices,
        comms,
        streams,
    } = t;
    let mut results = Vec::new();
    for round in 0..5u32 {
        let comms = Comm::init_all(&devices).unwrap();
        let outs: Vec<DeviceBuffer<f32>> = (0..2)
            .map(|r| DeviceBuffer::zeroed(&devices[r], N).unwrap())
            .collect();
        let ins: Vec<DeviceBuffer<f32>> = (0..2)
            .map(|r| {
                DeviceBuffer::from_slice(&devices[r], &vec![round as f32 + r as f32; N]).unwrap()
            })
            .collect();
        let mut outs = outs;
        group(|| {
            for r in 0..2 {
                // A stream-ordered input, dropped inside the group right after the call that reads it.
                let mut pool = DeviceBuffer::<f32>::zeroed_async(&streams[r], N)?;
                pool.copy_from_device(&ins[r])?;
                comms[r].all_reduce(&pool, &mut outs[r], ReduceOp::Sum, &streams[r])?;
                drop(pool);
            }
            // The communicators go too, after the calls on them.
            drop(comms);
            Ok(())
        })
        .unwrap();
        for s in &streams {
            s.synchronize().unwrap();
        }
        results.push((round, outs[0].to_vec().unwrap(), outs[1].to_vec().unwrap()));
    }
    for (round, a, b) in results {
        let want = vec![2.0 * round as f32 + 1.0; N];
        assert_eq!(a, want, "round {round}, rank 0");
        assert_eq!(b, want, "round {round}, rank 1");
    }
    drop(comms);
}

#[test]
fn communicators_created_inside_a_group_need_library_2_14() {
    let devices = [Device::get(0).unwrap(), Device::get(1).unwrap()];
    let id = UniqueId::new().unwrap();
    let made = group(|| {
        devices
            .iter()
            .enumerate()
            .map(|(r, d)| Comm::new(d, &id, r, 2))
            .collect::<hip::Result<Vec<_>>>()
    });
    let v = version().unwrap();
    if v >= (2, 14, 0) {
        let comms = made.unwrap();
        assert_eq!(comms[1].rank(), 1);
    } else {
        let e = made.unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument { what, .. } if what.contains("communicator creation")),
            "{v:?}: {e}"
        );
    }
}
