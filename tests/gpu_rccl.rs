//! Collectives over two GPUs (RCCL, or NCCL on HIP's NVIDIA platform), checked against the host: one
//! process driving both devices, and two processes joined by a unique id exchanged through a file. Needs
//! two devices; compiled only with `--features gpu-multi,rccl`.
#![cfg(all(feature = "gpu-multi", feature = "rccl"))]
mod common;

use hip::prelude::*;
use hip::rccl::half::{bf16, f16};
use hip::rccl::{group, Comm, NcclType, ReduceOp, UniqueId};
use hip::Error;

struct Two {
    devices: Vec<Device>,
    comms: Vec<Comm>,
    streams: Vec<Stream>,
}

fn two() -> Two {
    assert!(
        Device::count().unwrap() >= 2,
        "--features gpu-multi needs two devices"
    );
    let devices = vec![Device::get(0).unwrap(), Device::get(1).unwrap()];
    let comms = Comm::init_all(&devices).unwrap();
    let streams = devices.iter().map(|d| Stream::new(d).unwrap()).collect();
    Two {
        devices,
        comms,
        streams,
    }
}

impl Two {
    fn sync(&self) {
        for s in &self.streams {
            s.synchronize().unwrap();
        }
        for c in &self.comms {
            c.async_error().unwrap();
        }
    }
}

/// Deterministic pseudo-random numbers (xorshift64*), seeded per rank.
fn random(seed: u64, n: usize) -> Vec<u64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D)
        })
        .collect()
}

fn random_f32(seed: u64, n: usize) -> Vec<f32> {
    random(seed, n)
        .into_iter()
        .map(|v| (v >> 40) as f32 / (1u64 << 24) as f32 - 0.5)
        .collect()
}

fn random_i32(seed: u64, n: usize) -> Vec<i32> {
    random(seed, n)
        .into_iter()
        .map(|v| (v >> 44) as i32 - (1 << 19))
        .collect()
}

fn upload<T: NcclType>(t: &Two, data: &[Vec<T>]) -> Vec<DeviceBuffer<T>> {
    t.devices
        .iter()
        .zip(data)
        .map(|(d, v)| DeviceBuffer::from_slice(d, v).unwrap())
        .collect()
}

/// A destination of `n` elements on each device, every element `sentinel` (a value no result holds).
fn filled<T: NcclType>(t: &Two, n: usize, sentinel: T) -> Vec<DeviceBuffer<T>> {
    t.devices
        .iter()
        .map(|d| DeviceBuffer::from_slice(d, &vec![sentinel; n]).unwrap())
        .collect()
}

#[test]
fn all_reduce_sum_and_max_of_random_data_match_the_host() {
    let t = two();
    let n = 1 << 20;
    let f: Vec<Vec<f32>> = (0..2).map(|r| random_f32(r + 1, n)).collect();
    let i: Vec<Vec<i32>> = (0..2).map(|r| random_i32(r + 11, n)).collect();
    let fin = upload(&t, &f);
    let iin = upload(&t, &i);
    // Sums of two values in [-0.5, 0.5) and maxima of values in [-2^19, 2^19) are never these.
    let mut fout = filled(&t, n, 7.0f32);
    let mut imax = filled(&t, n, i32::MIN);
    let mut isum = upload(&t, &i);
    group(|| {
        for r in 0..2 {
            t.comms[r].all_reduce(&fin[r], &mut fout[r], ReduceOp::Sum, &t.streams[r])?;
            t.comms[r].all_reduce(&iin[r], &mut imax[r], ReduceOp::Max, &t.streams[r])?;
            t.comms[r].all_reduce_in_place(&mut isum[r], ReduceOp::Sum, &t.streams[r])?;
        }
        Ok(())
    })
    .unwrap();
    t.sync();
    for r in 0..2 {
        let got = fout[r].to_vec().unwrap();
        for k in 0..n {
            // Two addends: the sum is exact in either order.
            assert_eq!(got[k], f[0][k] + f[1][k], "f32 sum, rank {r}, element {k}");
        }
        let want_max: Vec<i32> = (0..n).map(|k| i[0][k].max(i[1][k])).collect();
        assert_eq!(imax[r].to_vec().unwrap(), want_max, "i32 max, rank {r}");
        let want_sum: Vec<i32> = (0..n).map(|k| i[0][k] + i[1][k]).collect();
        assert_eq!(
            isum[r].to_vec().unwrap(),
            want_sum,
            "i32 in-place sum, rank {r}"
        );
    }
}

#[test]
fn sixteen_bit_floats_and_other_element_types_reduce() {
    let t = two();
    let n = 4096;
    let h: Vec<Vec<f16>> = (0..2)
        .map(|r| {
            (0..n)
                .map(|k| f16::from_f32((k % 512) as f32 + r as f32))
                .collect()
        })
        .collect();
    // In place, each rank's buffer starts as its own input: the maximum alternates between the ranks
    // (and the minimum of random data falls on either), so neither rank already holds every answer.
    let b: Vec<Vec<bf16>> = (0..2)
        .map(|r| {
            (0..n)
                .map(|k| bf16::from_f32((k % 64) as f32 * if (k + r) % 2 == 0 { 2.0 } else { 1.0 }))
                .collect()
        })
        .collect();
    let d: Vec<Vec<f64>> = (0..2)
        .map(|r| random_f32(r + 5, n).into_iter().map(f64::from).collect())
        .collect();
    let u: Vec<Vec<u64>> = (0..2)
        .map(|r| random(r + 9, n).into_iter().map(|v| v >> 2).collect())
        .collect();
    let mut hb = upload(&t, &h);
    let mut bb = upload(&t, &b);
    let mut db = upload(&t, &d);
    let mut ub = upload(&t, &u);
    group(|| {
        for r in 0..2 {
            let (c, s) = (&t.comms[r], &t.streams[r]);
            c.all_reduce_in_place(&mut hb[r], ReduceOp::Sum, s)?;
            c.all_reduce_in_place(&mut bb[r], ReduceOp::Max, s)?;
            c.all_reduce_in_place(&mut db[r], ReduceOp::Min, s)?;
            c.all_reduce_in_place(&mut ub[r], ReduceOp::Sum, s)?;
        }
        Ok(())
    })
    .unwrap();
    t.sync();
    for r in 0..2 {
        let want: Vec<f16> = (0..n)
            .map(|k| f16::from_f32(h[0][k].to_f32() + h[1][k].to_f32()))
            .collect();
        assert_eq!(hb[r].to_vec().unwrap(), want, "f16 sum, rank {r}");
        let want: Vec<bf16> = (0..n).map(|k| b[0][k].max(b[1][k])).collect();
        assert_eq!(bb[r].to_vec().unwrap(), want, "bf16 max, rank {r}");
        let want: Vec<f64> = (0..n).map(|k| d[0][k].min(d[1][k])).collect();
        assert_eq!(db[r].to_vec().unwrap(), want, "f64 min, rank {r}");
        let want: Vec<u64> = (0..n).map(|k| u[0][k].wrapping_add(u[1][k])).collect();
        assert_eq!(ub[r].to_vec().unwrap(), want, "u64 sum, rank {r}");
    }
}

#[test]
fn broadcast_reduce_all_gather_and_reduce_scatter_match_the_host() {
    let t = two();
    let n = 100_003; // odd, so nothing lines up by luck
    let a: Vec<Vec<i32>> = (0..2).map(|r| random_i32(r + 21, n)).collect();
    let mut bc = upload(&t, &a);
    let ain = upload(&t, &a);
    // Values in [-2^19, 2^19) and their sums are never i32::MIN.
    let mut red = filled(&t, n, i32::MIN);
    let mut gathered = filled(&t, 2 * n, i32::MIN);
    let big: Vec<Vec<i32>> = (0..2).map(|r| random_i32(r + 31, 2 * n)).collect();
    let bigb = upload(&t, &big);
    let mut scattered = filled(&t, n, i32::MIN);
    group(|| {
        for r in 0..2 {
            let (c, s) = (&t.comms[r], &t.streams[r]);
            c.broadcast(&mut bc[r], 1, s)?;
            c.reduce(&ain[r], &mut red[r], ReduceOp::Sum, 0, s)?;
            c.all_gather(&ain[r], &mut gathered[r], s)?;
            c.reduce_scatter(&bigb[r], &mut scattered[r], ReduceOp::Sum, s)?;
        }
        Ok(())
    })
    .unwrap();
    t.sync();
    let sum: Vec<i32> = (0..n).map(|k| a[0][k] + a[1][k]).collect();
    let cat: Vec<i32> = a[0].iter().chain(&a[1]).copied().collect();
    for r in 0..2 {
        assert_eq!(
            bc[r].to_vec().unwrap(),
            a[1],
            "broadcast from rank 1, rank {r}"
        );
        assert_eq!(gathered[r].to_vec().unwrap(), cat, "all_gather, rank {r}");
        let block: Vec<i32> = (r * n..(r + 1) * n)
            .map(|k| big[0][k] + big[1][k])
            .collect();
        assert_eq!(
            scattered[r].to_vec().unwrap(),
            block,
            "reduce_scatter, rank {r}"
        );
    }
    assert_eq!(red[0].to_vec().unwrap(), sum, "reduce to root 0");
    assert_eq!(
        red[1].to_vec().unwrap(),
        vec![i32::MIN; n],
        "reduce leaves the non-root's buffer alone"
    );
}

#[test]
fn send_and_recv_in_a_group_swap_buffers_and_views() {
    let t = two();
    let n = 65_536;
    let a: Vec<Vec<u32>> = (0..2)
        .map(|r| random(r + 41, n).into_iter().map(|v| v as u32).collect())
        .collect();
    let src = upload(&t, &a);
    // Random u32s: one of them could be any sentinel, so the view's part is checked against the data and
    // its surroundings against the sentinel, which nothing may write.
    let mut dst = filled(&t, n + 10, 0xdead_beefu32);
    let (d0, d1) = dst.split_at_mut(1);
    let mut views = [
        d0[0].slice_mut(5..n + 5).unwrap(),
        d1[0].slice_mut(5..n + 5).unwrap(),
    ];
    group(|| {
        for r in 0..2 {
            let (c, s) = (&t.comms[r], &t.streams[r]);
            c.send(&src[r], 1 - r, s)?;
            c.recv(&mut views[r], 1 - r, s)?;
        }
        Ok(())
    })
    .unwrap();
    t.sync();
    for r in 0..2 {
        let got = dst[r].to_vec().unwrap();
        assert_eq!(
            &got[5..n + 5],
            &a[1 - r][..],
            "rank {r} received its peer's data into the view"
        );
        assert_eq!(
            &got[..5],
            &[0xdead_beef; 5],
            "nothing written before the view"
        );
        assert_eq!(
            &got[n + 5..],
            &[0xdead_beef; 5],
            "nothing written after the view"
        );
    }
}

#[test]
fn wrong_lengths_devices_streams_and_ranks_are_clear_errors_before_rccl() {
    let t = two();
    let s0 = &t.streams[0];
    // Every operand holds its own value, so a refused operation that ran anyway would show in a0m.
    let a0 = DeviceBuffer::from_slice(&t.devices[0], &[1.0f32; 100]).unwrap();
    let mut b0 = DeviceBuffer::<f32>::zeroed(&t.devices[0], 99).unwrap();
    let mut on1 = DeviceBuffer::<f32>::zeroed(&t.devices[1], 100).unwrap();
    let c0 = &t.comms[0];
    let err = c0.all_reduce(&a0, &mut b0, ReduceOp::Sum, s0).unwrap_err();
    assert!(
        matches!(
            err,
            Error::LengthMismatch {
                expected: 100,
                actual: 99,
                ..
            }
        ),
        "{err}"
    );
    let err = c0.all_reduce(&a0, &mut on1, ReduceOp::Sum, s0).unwrap_err();
    assert!(
        matches!(
            err,
            Error::DeviceMismatch {
                stream: 0,
                other: 1,
                ..
            }
        ),
        "{err}"
    );
    let err = c0
        .all_reduce_in_place(&mut on1, ReduceOp::Sum, s0)
        .unwrap_err();
    assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
    let mut a0m = DeviceBuffer::from_slice(&t.devices[0], &[7.0f32; 100]).unwrap();
    let err = c0
        .all_reduce_in_place(&mut a0m, ReduceOp::Sum, &t.streams[1])
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::DeviceMismatch {
                stream: 1,
                other: 0,
                ..
            }
        ),
        "{err}"
    );
    let mut g = DeviceBuffer::from_slice(&t.devices[0], &[3.0f32; 150]).unwrap();
    let err = c0.all_gather(&a0, &mut g, s0).unwrap_err();
    assert!(
        matches!(
            err,
            Error::LengthMismatch {
                expected: 200,
                actual: 150,
                ..
            }
        ),
        "{err}"
    );
    let err = c0
        .reduce_scatter(&g, &mut a0m, ReduceOp::Sum, s0)
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::LengthMismatch {
                expected: 200,
                actual: 150,
                ..
            }
        ),
        "{err}"
    );
    let err = c0.broadcast(&mut a0m, 2, s0).unwrap_err();
    assert!(
        err.to_string().contains("not a rank of this communicator"),
        "{err}"
    );
    let err = c0.send(&a0, 7, s0).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidArgument {
                what: "send peer",
                ..
            }
        ),
        "{err}"
    );
    let err = Comm::init_all(&[t.devices[0].clone(), t.devices[0].clone()]).unwrap_err();
    assert!(err.to_string().contains("appears twice"), "{err}");
    // Nothing was queued: the communicators still work and report no asynchronous error.
    t.sync();
    assert_eq!(a0m.to_vec().unwrap(), vec![7.0; 100]);
}

#[test]
fn comm_new_ranks_in_one_process_and_abort() {
    let devices = [Device::get(0).unwrap(), Device::get(1).unwrap()];
    let id = UniqueId::new().unwrap();
    let comms = group(|| {
        devices
            .iter()
            .enumerate()
            .map(|(r, d)| Comm::new(d, &id, r, 2))
            .collect::<hip::Result<Vec<_>>>()
    })
    .unwrap();
    assert_eq!(
        (
            comms[1].rank(),
            comms[1].size(),
            comms[1].device().ordinal()
        ),
        (1, 2, 1)
    );
    let streams: Vec<Stream> = devices.iter().map(|d| Stream::new(d).unwrap()).collect();
    let mut bufs: Vec<DeviceBuffer<f32>> = (0..2)
        .map(|r| DeviceBuffer::from_slice(&devices[r], &[r as f32 + 1.0; 1000]).unwrap())
        .collect();
    group(|| {
        for r in 0..2 {
            comms[r].all_reduce_in_place(&mut bufs[r], ReduceOp::Avg, &streams[r])?;
        }
        Ok(())
    })
    .unwrap();
    for s in &streams {
        s.synchronize().unwrap();
    }
    assert_eq!(bufs[1].to_vec().unwrap(), vec![1.5; 1000]);
    let err = Comm::new(&devices[0], &id, 2, 2).unwrap_err();
    assert!(
        matches!(err, Error::InvalidArgument { what: "rank", .. }),
        "{err}"
    );
    for c in comms {
        c.async_error().unwrap();
        c.abort().unwrap();
    }
}

const ID_FILE: &str = "HIP_RS_RCCL_ID_FILE";

/// The second process of `two_processes_exchange_the_unique_id_through_a_file`: run only by it.
#[test]
#[ignore = "spawned by two_processes_exchange_the_unique_id_through_a_file"]
fn rank_one_child() {
    let path = std::env::var(ID_FILE).expect("run by the two-process test");
    let id = UniqueId::from_bytes(&std::fs::read(path).unwrap()).unwrap();
    let d1 = Device::get(1).unwrap();
    let comm = Comm::new(&d1, &id, 1, 2).unwrap();
    let s = Stream::new(&d1).unwrap();
    let mut buf = DeviceBuffer::from_slice(&d1, &random_i32(2, 1 << 16)).unwrap();
    comm.all_reduce_in_place(&mut buf, ReduceOp::Sum, &s)
        .unwrap();
    // Random i32s may be 0; i32::MIN is never one (they lie in [-2^19, 2^19)).
    let mut got = DeviceBuffer::from_slice(&d1, &vec![i32::MIN; 1 << 16]).unwrap();
    comm.broadcast(&mut got, 0, &s).unwrap();
    s.synchronize().unwrap();
    comm.async_error().unwrap();
    let want: Vec<i32> = random_i32(1, 1 << 16)
        .iter()
        .zip(random_i32(2, 1 << 16))
        .map(|(a, b)| a + b)
        .collect();
    assert_eq!(buf.to_vec().unwrap(), want, "child: all-reduce");
    assert_eq!(
        got.to_vec().unwrap(),
        random_i32(1, 1 << 16),
        "child: broadcast from rank 0"
    );
}

#[test]
fn two_processes_exchange_the_unique_id_through_a_file() {
    let dir = common::tempdir::TempDir::new("rccl-id");
    let path = dir.path().join("unique-id");
    let id = UniqueId::new().unwrap();
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, id.as_bytes()).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "rank_one_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ID_FILE, &path)
        .spawn()
        .unwrap();
    // Rank 0's Comm::new blocks until rank 1 joins: if the child dies first, fail instead of hanging.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let status = child.wait_with_output().map(|o| o.status);
        match &status {
            Ok(s) if s.success() => {}
            other => {
                eprintln!("the rank-1 process failed: {other:?}");
                std::process::exit(1);
            }
        }
        let _ = tx.send(status);
    });
    let d0 = Device::get(0).unwrap();
    let comm = Comm::new(&d0, &id, 0, 2).unwrap();
    let s = Stream::new(&d0).unwrap();
    let mine = random_i32(1, 1 << 16);
    let mut buf = DeviceBuffer::from_slice(&d0, &mine).unwrap();
    comm.all_reduce_in_place(&mut buf, ReduceOp::Sum, &s)
        .unwrap();
    let mut root = DeviceBuffer::from_slice(&d0, &mine).unwrap();
    comm.broadcast(&mut root, 0, &s).unwrap();
    s.synchronize().unwrap();
    let status = rx.recv().unwrap().unwrap();
    assert!(status.success(), "the rank-1 process failed: {status:?}");
    let want: Vec<i32> = mine
        .iter()
        .zip(random_i32(2, 1 << 16))
        .map(|(a, b)| a + b)
        .collect();
    assert_eq!(buf.to_vec().unwrap(), want, "parent: all-reduce");
}

#[test]
fn peer_copies_move_random_data_with_and_without_peer_access() {
    let (d0, d1) = (Device::get(0).unwrap(), Device::get(1).unwrap());
    let err = d0.enable_peer_access(&d0).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidArgument {
                what: "peer device",
                ..
            }
        ),
        "{err}"
    );
    let data = random_i32(51, 1 << 20);
    let s1 = Stream::new(&d1).unwrap();
    for pass in 0..2 {
        if pass == 1 && d1.can_access_peer(&d0).unwrap() {
            d1.ensure_peer_access(&d0).unwrap();
            d1.ensure_peer_access(&d0).unwrap(); // twice is fine
        }
        let src = DeviceBuffer::from_slice(&d0, &data).unwrap();
        let mut dst = DeviceBuffer::from_slice(&d1, &vec![i32::MIN; data.len()]).unwrap();
        s1.copy_peer_async(&src, &mut dst).unwrap();
        drop(src); // freeing the source waits for the copy
        s1.synchronize().unwrap();
        assert_eq!(dst.to_vec().unwrap(), data, "pass {pass}");
        let mut short = DeviceBuffer::<i32>::zeroed(&d1, 10).unwrap();
        let src = DeviceBuffer::from_slice(&d0, &data).unwrap();
        let err = s1.copy_peer_async(&src, &mut short).unwrap_err();
        assert!(matches!(err, Error::LengthMismatch { .. }), "{err}");
        let mut wrong = DeviceBuffer::<i32>::zeroed(&d0, data.len()).unwrap();
        let err = s1.copy_peer_async(&src, &mut wrong).unwrap_err();
        assert!(
            matches!(
                err,
                Error::DeviceMismatch {
                    stream: 1,
                    other: 0,
                    ..
                }
            ),
            "{err}"
        );
    }
}

/// The memory model orders collectives: a slow kernel writes each rank's send buffer on another stream of
/// its device, the all-reduce on the rank's stream must see it; a fill on that other stream afterwards must
/// wait for the all-reduce that reads it (write after read). Every element, every round.
#[test]
fn collectives_are_ordered_after_and_before_other_streams() {
    let t = two();
    let n = 1 << 20;
    let spin: i64 = 2_000_000;
    let modules: Vec<Module> = t
        .devices
        .iter()
        .map(|d| common::load(d, common::ORDERING_KERNELS))
        .collect();
    let others: Vec<Stream> = t
        .devices
        .iter()
        .map(|d| Stream::non_blocking(d).unwrap())
        .collect();
    for round in 0..10u32 {
        let mut send: Vec<DeviceBuffer<u32>> =
            upload(&t, &[vec![0xdead_beef; n], vec![0xdead_beef; n]]);
        let mut recv: Vec<DeviceBuffer<u32>> = upload(&t, &[vec![7; n], vec![7; n]]);
        for r in 0..2 {
            let v = round + r as u32 + 1;
            let (k, count) = (modules[r].function("slow_fill").unwrap(), n as u32);
            let mut args = LaunchArgs::new();
            args.arg_mut(&mut send[r]).arg(&v).arg(&count).arg(&spin);
            // SAFETY: slow_fill(unsigned*, unsigned, unsigned, long long) writes send[r][..n].
            unsafe { k.launch(&others[r], &LaunchConfig::for_num_elems(count), &mut args) }
                .unwrap();
        }
        group(|| {
            for r in 0..2 {
                t.comms[r].all_reduce(&send[r], &mut recv[r], ReduceOp::Sum, &t.streams[r])?;
            }
            Ok(())
        })
        .unwrap();
        for r in 0..2 {
            others[r].fill_async(&mut send[r], 0).unwrap();
        }
        let want = 2 * round + 3; // (round + 1) + (round + 2)
        for r in 0..2 {
            let got = recv[r].to_vec().unwrap();
            let wrong = got.iter().filter(|&&x| x != want).count();
            assert_eq!(
                wrong, 0,
                "round {round}, rank {r}: {wrong} elements not {want}"
            );
            assert!(send[r].to_vec().unwrap().iter().all(|&x| x == 0));
        }
    }
}
