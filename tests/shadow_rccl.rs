//! RCCL groups under the shadow runtime, which also stands in for `librccl.so.1` (scripts/shadow.sh runs
//! this in the experimental chroot with a `librccl.so.1` link to the shadow first in `LD_LIBRARY_PATH`,
//! `HIP_RS_SHADOW_DEVICES=2`). The shadow queues a group's calls only at the outermost `ncclGroupEnd`, as
//! NCCL does, and a collective's parts meet across the ranks' streams: so the crate's group bookkeeping
//! (refusals of other uses, memory and communicators kept until the group ends, nested groups, a panic
//! inside a group) is checked here with real deferral, values and the race detector, without a GPU.
//! The patterns of tests/gpu_rccl_one_rank.rs, then two ranks. `the_shadow_sees_what_the_refusals_prevent`
//! (ignored: run alone, it makes reports) checks that the shadow would catch the holes the refusals close.
#![cfg(all(feature = "shadow", feature = "rccl"))]

mod shadow;

#[path = "shadow_rccl/config.rs"]
mod config;

use hip::prelude::*;
use hip::rccl::{group, rccl_sys, Comm, ReduceOp};
use hip::Error;
use shadow::assert_no_reports;
use std::time::{Duration, Instant};

const N: usize = 4096;
const ROUNDS: u32 = 6;

fn one() -> (Device, Comm, Stream) {
    let device = Device::get(0).unwrap();
    let comm = Comm::init_all(std::slice::from_ref(&device))
        .unwrap()
        .pop()
        .unwrap();
    let stream = Stream::non_blocking(&device).unwrap();
    (device, comm, stream)
}

fn two() -> ([Device; 2], Vec<Comm>, [Stream; 2]) {
    assert_eq!(
        Device::count().unwrap(),
        2,
        "run with HIP_RS_SHADOW_DEVICES=2 (scripts/shadow.sh does)"
    );
    let d = [Device::get(0).unwrap(), Device::get(1).unwrap()];
    let comms = Comm::init_all(&d).unwrap();
    let s = [
        Stream::non_blocking(&d[0]).unwrap(),
        Stream::non_blocking(&d[1]).unwrap(),
    ];
    (d, comms, s)
}

fn refused_in_group(e: &Error) -> bool {
    matches!(e, Error::InvalidArgument { what, .. } if what.contains("RCCL group"))
}

#[test]
fn the_shadow_is_one_library_for_hip_and_nccl() {
    // The test binary needs librccl.so.1 (the link to the shadow); the hip crate opened HIP_RS_AMDHIP64.
    // One object: the global scope's NCCL and shadow symbols are the opened library's.
    let global = libloading::os::unix::Library::this();
    for name in ["ncclAllReduce", "hip_rs_shadow_reports", "hipMalloc"] {
        let c = std::ffi::CString::new(name).unwrap();
        // SAFETY: only the address is taken.
        let g = unsafe { global.get::<unsafe extern "C" fn()>(c.as_bytes_with_nul()) }
            .map(|s| *s as usize)
            .ok();
        assert!(g.is_some(), "{name} is not in the global scope");
        assert_eq!(
            g,
            shadow::symbol_address(name),
            "{name}: librccl.so.1 and HIP_RS_AMDHIP64 are two copies of the shadow"
        );
    }
    assert_eq!(hip::rccl::version().unwrap(), (2, 27, 7));
}

#[test]
fn other_uses_inside_a_group_are_refused_and_the_result_is_right_after() {
    let (device, comm, stream) = one();
    let other = Stream::non_blocking(&device).unwrap();
    for round in 0..ROUNDS {
        let v = round as f32 + 4.0;
        let send = DeviceBuffer::from_slice(&device, &vec![v; N]).unwrap();
        let mut recv = DeviceBuffer::from_slice(&device, &vec![-7.0f32; N]).unwrap();
        let (mut host_read, mut fill) = (None, None);
        group(|| {
            comm.all_reduce(&send, &mut recv, ReduceOp::Sum, &stream)?;
            host_read = Some(recv.to_vec());
            fill = Some(other.fill_async(&mut recv, 1.0));
            Ok(())
        })
        .unwrap();
        for (what, r) in [
            ("host read", host_read.unwrap().map(|_| ())),
            ("fill on another stream", fill.unwrap()),
        ] {
            let e = r.expect_err(what);
            assert!(refused_in_group(&e), "{what}: {e}");
        }
        assert_eq!(recv.to_vec().unwrap(), vec![v; N]);
        other.fill_async(&mut recv, 1.0).unwrap();
        assert_eq!(recv.to_vec().unwrap(), vec![1.0; N]);
    }
    assert_no_reports();
}

#[test]
fn memory_and_a_communicator_dropped_inside_a_group_outlive_its_call() {
    let device = Device::get(0).unwrap();
    let stream = Stream::non_blocking(&device).unwrap();
    for round in 0..ROUNDS {
        let comm = Comm::init_all(std::slice::from_ref(&device))
            .unwrap()
            .pop()
            .unwrap();
        let input = DeviceBuffer::from_slice(&device, &vec![round as f32 + 0.5; N]).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&device, N).unwrap();
        group(|| {
            // A stream-ordered buffer and a hipMalloc one, dropped inside the group right after the
            // calls that use them, and the communicator after the calls on it.
            let mut pool = DeviceBuffer::<f32>::zeroed_async(&stream, N)?;
            pool.copy_from_device(&input)?;
            let mut plain = DeviceBuffer::<f32>::zeroed(&device, N)?;
            comm.all_reduce(&pool, &mut plain, ReduceOp::Sum, &stream)?;
            comm.all_reduce(&pool, &mut out, ReduceOp::Sum, &stream)?;
            drop(pool);
            drop(plain);
            drop(comm);
            Ok(())
        })
        .unwrap();
        assert_eq!(
            out.to_vec().unwrap(),
            vec![round as f32 + 0.5; N],
            "round {round}"
        );
    }
    assert_no_reports();
}

#[test]
fn nested_groups_are_queued_with_the_outermost() {
    let (device, comm, stream) = one();
    let a = DeviceBuffer::from_slice(&device, &vec![2u32; N]).unwrap();
    let mut b = DeviceBuffer::<u32>::zeroed(&device, N).unwrap();
    let mut c = DeviceBuffer::<u32>::zeroed(&device, N).unwrap();
    let mut inner_read = None;
    group(|| {
        group(|| comm.all_reduce(&a, &mut b, ReduceOp::Sum, &stream))?;
        // The inner group ended, but its call is queued only with the outer one: still refused.
        inner_read = Some(b.to_vec());
        comm.all_reduce(&a, &mut c, ReduceOp::Sum, &stream)
    })
    .unwrap();
    let e = inner_read
        .unwrap()
        .expect_err("a read inside the outer group");
    assert!(refused_in_group(&e), "{e}");
    assert_eq!(b.to_vec().unwrap(), vec![2; N]);
    assert_eq!(c.to_vec().unwrap(), vec![2; N]);
    assert_no_reports();
}

#[test]
fn a_group_left_by_a_panic_is_ended_and_the_next_one_works() {
    let (device, comm, stream) = one();
    let a = DeviceBuffer::from_slice(&device, &vec![3.0f32; N]).unwrap();
    let mut b = DeviceBuffer::<f32>::zeroed(&device, N).unwrap();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        group(|| -> hip::Result<()> {
            comm.all_reduce(&a, &mut b, ReduceOp::Sum, &stream)?;
            panic!("a panic inside the group");
        })
    }));
    assert!(panicked.is_err());
    // The shadow, as NCCL, answers ncclInvalidUsage to an ncclGroupEnd outside a group.
    // SAFETY: no arguments; outside a group it changes nothing.
    let end = unsafe { rccl_sys::ncclGroupEnd() };
    assert_ne!(
        end,
        rccl_sys::ncclResult_t::ncclSuccess,
        "a group was still open after the panic"
    );
    assert_eq!(b.to_vec().unwrap(), vec![3.0; N]);
    let mut c = DeviceBuffer::<f32>::zeroed(&device, N).unwrap();
    group(|| comm.all_reduce(&b, &mut c, ReduceOp::Sum, &stream)).unwrap();
    assert_eq!(c.to_vec().unwrap(), vec![3.0; N]);
    assert_no_reports();
}

#[test]
fn a_write_on_the_same_stream_after_a_send_in_the_group_is_refused() {
    // Issue 54, hole 4: without the refusal the fill is queued at once, before the send NCCL queues at
    // the group's end, and the receiver gets 9s (the shadow shows it: the ignored self-check below).
    let (device, comm, stream) = one();
    for round in 0..ROUNDS {
        let mut x = DeviceBuffer::from_slice(&device, &vec![3.0f32; N]).unwrap();
        stream.fill_async(&mut x, 5.0 + round as f32).unwrap(); // x's sole user: `stream`
        let mut y = DeviceBuffer::from_slice(&device, &vec![-1.0f32; N]).unwrap();
        let mut fill = None;
        group(|| {
            comm.send(&x, 0, &stream)?;
            comm.recv(&mut y, 0, &stream)?;
            fill = Some(stream.fill_async(&mut x, 9.0));
            Ok(())
        })
        .unwrap();
        let e = fill
            .unwrap()
            .expect_err("a fill of x after send(&x) inside the group");
        assert!(refused_in_group(&e), "{e}");
        assert_eq!(y.to_vec().unwrap(), vec![5.0 + round as f32; N]);
        stream.fill_async(&mut x, 9.0).unwrap();
        assert_eq!(x.to_vec().unwrap(), vec![9.0; N]);
    }
    assert_no_reports();
}

/// `Comm::wait` bounds a wait on a collective whose peer has not joined: rank 0's all-reduce stays
/// queued (its part waits for rank 1's), so the wait gives up with `Error::Timeout` (status 600) after
/// its bound and not much later; once rank 1 joins, both waits return and both ranks hold the sum.
#[test]
fn wait_gives_up_within_its_bound_while_a_peer_is_missing() {
    let (d, comms, s) = two();
    let mut x: Vec<DeviceBuffer<f32>> = (0..2)
        .map(|r| DeviceBuffer::from_slice(&d[r], &vec![r as f32 + 1.0; N]))
        .collect::<hip::Result<_>>()
        .unwrap();
    let (x0, x1) = x.split_at_mut(1);
    group(|| comms[0].all_reduce_in_place(&mut x0[0], ReduceOp::Sum, &s[0])).unwrap();
    let bound = Duration::from_millis(200);
    let t = Instant::now();
    let e = comms[0].wait(&s[0], bound).unwrap_err();
    let waited = t.elapsed();
    assert!(matches!(e, Error::Timeout { .. }), "{e}");
    assert_eq!(e.status().code(), 600);
    assert!(
        waited >= bound && waited < Duration::from_secs(2),
        "gave up after {waited:?} for a bound of {bound:?}"
    );
    group(|| comms[1].all_reduce_in_place(&mut x1[0], ReduceOp::Sum, &s[1])).unwrap();
    for r in 0..2 {
        comms[r].wait(&s[r], Duration::from_secs(60)).unwrap();
    }
    for (r, b) in x.iter().enumerate() {
        assert!(b.to_vec().unwrap().iter().all(|&v| v == 3.0), "rank {r}");
    }
    assert_no_reports();
}

#[test]
fn two_ranks_all_reduce_in_a_group() {
    let (d, comms, s) = two();
    for round in 0..ROUNDS {
        let mut f: Vec<DeviceBuffer<f32>> = (0..2)
            .map(|r| DeviceBuffer::from_slice(&d[r], &vec![(r + 1) as f32 * 0.5 + round as f32; N]))
            .collect::<hip::Result<_>>()
            .unwrap();
        let i: Vec<DeviceBuffer<i32>> = (0..2)
            .map(|r| DeviceBuffer::from_slice(&d[r], &vec![r as i32 * 10 - 7 - round as i32; N]))
            .collect::<hip::Result<_>>()
            .unwrap();
        let mut io: Vec<DeviceBuffer<i32>> = (0..2)
            .map(|r| DeviceBuffer::zeroed(&d[r], N))
            .collect::<hip::Result<_>>()
            .unwrap();
        let mut u: Vec<DeviceBuffer<u32>> = (0..2)
            .map(|r| DeviceBuffer::from_slice(&d[r], &vec![(r as u32 + 2) * (round + 1); N]))
            .collect::<hip::Result<_>>()
            .unwrap();
        group(|| {
            for r in 0..2 {
                comms[r].all_reduce_in_place(&mut f[r], ReduceOp::Sum, &s[r])?;
                comms[r].all_reduce(&i[r], &mut io[r], ReduceOp::Sum, &s[r])?;
                comms[r].all_reduce_in_place(&mut u[r], ReduceOp::Max, &s[r])?;
            }
            Ok(())
        })
        .unwrap();
        let fr = 0.5 + 1.0 + 2.0 * round as f32;
        let ir = -7 - round as i32 + 3 - round as i32;
        for r in 0..2 {
            assert_eq!(
                f[r].to_vec().unwrap(),
                vec![fr; N],
                "f32 sum, round {round}"
            );
            assert_eq!(
                io[r].to_vec().unwrap(),
                vec![ir; N],
                "i32 sum, round {round}"
            );
            assert_eq!(u[r].to_vec().unwrap(), vec![3 * (round + 1); N], "u32 max");
        }
        // Inputs untouched by an out-of-place all-reduce.
        assert_eq!(i[1].to_vec().unwrap(), vec![3 - round as i32; N]);
    }
    assert_no_reports();
}

#[test]
fn two_ranks_broadcast_reduce_gather_scatter_and_send_recv() {
    let (d, comms, s) = two();
    for round in 0..ROUNDS {
        let base = round * 100;
        let src: Vec<DeviceBuffer<u32>> = (0..2)
            .map(|r| {
                let v: Vec<u32> = (0..N as u32).map(|k| base + k + r as u32 * 1000).collect();
                DeviceBuffer::from_slice(&d[r], &v)
            })
            .collect::<hip::Result<_>>()
            .unwrap();
        let mut bc: Vec<DeviceBuffer<u32>> = (0..2)
            .map(|r| DeviceBuffer::from_slice(&d[r], &vec![r as u32 + 50; N]))
            .collect::<hip::Result<_>>()
            .unwrap();
        let zeros = |n| -> Vec<DeviceBuffer<u32>> {
            (0..2)
                .map(|r| DeviceBuffer::zeroed(&d[r], n))
                .collect::<hip::Result<_>>()
                .unwrap()
        };
        let (mut red, mut gath, mut scat, mut got) =
            (zeros(N), zeros(2 * N), zeros(N / 2), zeros(N));
        group(|| {
            for r in 0..2 {
                comms[r].broadcast(&mut bc[r], 1, &s[r])?;
                comms[r].reduce(&src[r], &mut red[r], ReduceOp::Sum, 0, &s[r])?;
                comms[r].all_gather(&src[r], &mut gath[r], &s[r])?;
                comms[r].reduce_scatter(&src[r], &mut scat[r], ReduceOp::Sum, &s[r])?;
                // A ring of two: each sends its source to the other.
                comms[r].send(&src[r], 1 - r, &s[r])?;
                comms[r].recv(&mut got[r], 1 - r, &s[r])?;
            }
            Ok(())
        })
        .unwrap();
        let host: Vec<Vec<u32>> = src.iter().map(|b| b.to_vec().unwrap()).collect();
        let sum: Vec<u32> = (0..N).map(|k| host[0][k] + host[1][k]).collect();
        for r in 0..2 {
            assert_eq!(
                bc[r].to_vec().unwrap(),
                vec![51; N],
                "broadcast from rank 1"
            );
            assert_eq!(
                gath[r].to_vec().unwrap(),
                [&host[0][..], &host[1][..]].concat()
            );
            assert_eq!(scat[r].to_vec().unwrap(), sum[r * N / 2..(r + 1) * N / 2]);
            assert_eq!(
                got[r].to_vec().unwrap(),
                host[1 - r],
                "received from the other rank"
            );
        }
        assert_eq!(red[0].to_vec().unwrap(), sum, "reduce to rank 0");
        assert_eq!(
            red[1].to_vec().unwrap(),
            vec![0; N],
            "rank 1 is not the root"
        );
    }
    assert_no_reports();
}

#[test]
fn two_ranks_made_by_comm_new_inside_a_group() {
    // One thread creating both ranks of a clique: inside a group (NCCL >= 2.14; the shadow says 2.27).
    let (d, _, s) = two();
    let id = hip::rccl::UniqueId::new().unwrap();
    let id = hip::rccl::UniqueId::from_bytes(&id.as_bytes()).unwrap();
    let comms = group(|| {
        (0..2)
            .map(|r| Comm::new(&d[r], &id, r, 2))
            .collect::<hip::Result<Vec<_>>>()
    })
    .unwrap();
    assert_eq!((comms[1].rank(), comms[1].size()), (1, 2));
    let mut x: Vec<DeviceBuffer<i32>> = (0..2)
        .map(|r| DeviceBuffer::from_slice(&d[r], &vec![r as i32 + 1; N]))
        .collect::<hip::Result<_>>()
        .unwrap();
    group(|| {
        for r in 0..2 {
            comms[r].all_reduce_in_place(&mut x[r], ReduceOp::Prod, &s[r])?;
        }
        Ok(())
    })
    .unwrap();
    for b in &x {
        assert_eq!(b.to_vec().unwrap(), vec![2; N]);
    }
    assert_no_reports();
}

#[test]
fn two_ranks_on_their_own_threads_outside_groups() {
    // One thread per rank, each making its communicator and calling collectives outside any group: a
    // rank's part waits on its stream for the other thread's.
    let (d, _, _) = two();
    let id = hip::rccl::UniqueId::new().unwrap().as_bytes();
    let ranks: Vec<_> = (0..2)
        .map(|r| {
            let device = d[r].clone();
            std::thread::spawn(move || {
                let id = hip::rccl::UniqueId::from_bytes(&id).unwrap();
                let comm = Comm::new(&device, &id, r, 2).unwrap();
                let s = Stream::non_blocking(&device).unwrap();
                let mut x = DeviceBuffer::<f32>::zeroed(&device, N).unwrap();
                let mut y = DeviceBuffer::<f32>::zeroed(&device, 2 * N).unwrap();
                for round in 0..ROUNDS {
                    s.fill_async(&mut x, (r + 1) as f32 * round as f32).unwrap();
                    comm.all_reduce_in_place(&mut x, ReduceOp::Sum, &s).unwrap();
                    comm.all_gather(&x, &mut y, &s).unwrap();
                    assert_eq!(x.to_vec().unwrap(), vec![3.0 * round as f32; N]);
                    assert_eq!(y.to_vec().unwrap(), vec![3.0 * round as f32; 2 * N]);
                }
            })
        })
        .collect();
    for t in ranks {
        t.join().unwrap();
    }
    assert_no_reports();
}

#[test]
fn buffers_dropped_right_after_a_collective() {
    let (d, comms, s) = two();
    let mut out: Vec<DeviceBuffer<f32>> = (0..2)
        .map(|r| DeviceBuffer::zeroed(&d[r], N))
        .collect::<hip::Result<_>>()
        .unwrap();
    for round in 0..ROUNDS {
        // Inputs (one from a pool, one hipMalloc'd) and a scratch output dropped as soon as the group
        // returns, while the collectives may still be waiting for each other.
        let ins: Vec<DeviceBuffer<f32>> = (0..2)
            .map(|r| {
                if r == 0 {
                    let mut b = DeviceBuffer::zeroed_async(&s[0], N)?;
                    s[0].fill_async(&mut b, round as f32)?;
                    Ok(b)
                } else {
                    DeviceBuffer::from_slice(&d[1], &vec![1.0; N])
                }
            })
            .collect::<hip::Result<_>>()
            .unwrap();
        let mut scratch: Vec<DeviceBuffer<f32>> = (0..2)
            .map(|r| DeviceBuffer::zeroed(&d[r], N))
            .collect::<hip::Result<_>>()
            .unwrap();
        group(|| {
            for r in 0..2 {
                comms[r].all_reduce(&ins[r], &mut scratch[r], ReduceOp::Sum, &s[r])?;
                comms[r].all_reduce(&ins[r], &mut out[r], ReduceOp::Sum, &s[r])?;
            }
            Ok(())
        })
        .unwrap();
        drop(ins);
        drop(scratch);
        // New buffers of the same size may reuse the freed memory at once: a free before the
        // collectives ran would show as a race and as wrong values here.
        let mut reuse: Vec<DeviceBuffer<f32>> = (0..2)
            .map(|r| DeviceBuffer::zeroed(&d[r], N))
            .collect::<hip::Result<_>>()
            .unwrap();
        for r in 0..2 {
            s[r].fill_async(&mut reuse[r], -3.0).unwrap();
            assert_eq!(out[r].to_vec().unwrap(), vec![round as f32 + 1.0; N]);
        }
    }
    assert_no_reports();
}

#[test]
fn a_collectives_output_read_on_other_streams() {
    let (d, comms, s) = two();
    let o = [
        Stream::non_blocking(&d[0]).unwrap(),
        Stream::non_blocking(&d[1]).unwrap(),
    ];
    for round in 0..ROUNDS {
        let mut x: Vec<DeviceBuffer<i32>> = (0..2)
            .map(|r| DeviceBuffer::from_slice(&d[r], &vec![round as i32 + r as i32; N]))
            .collect::<hip::Result<_>>()
            .unwrap();
        group(|| {
            for r in 0..2 {
                comms[r].all_reduce_in_place(&mut x[r], ReduceOp::Sum, &s[r])?;
            }
            Ok(())
        })
        .unwrap();
        let want = vec![2 * round as i32 + 1; N];
        // Rank 0's output read on another stream of its device, and on rank 1's device (a peer copy).
        let mut z0 = DeviceBuffer::<i32>::zeroed(&d[0], N).unwrap();
        o[0].copy_device_async(&x[0], &mut z0).unwrap();
        let mut z1 = DeviceBuffer::<i32>::zeroed(&d[1], N).unwrap();
        o[1].copy_device_async(&x[0], &mut z1).unwrap();
        // Then written again on its own stream, after both reads.
        s[0].fill_async(&mut x[0], -1).unwrap();
        assert_eq!(z0.to_vec().unwrap(), want);
        assert_eq!(z1.to_vec().unwrap(), want);
        assert_eq!(x[0].to_vec().unwrap(), vec![-1; N]);
        assert_eq!(x[1].to_vec().unwrap(), want);
    }
    assert_no_reports();
}

/// The self-check (its own process: it makes reports). What the crate's refusals prevent, done with
/// the refusals bypassed, must show under the shadow: (1) hole 4 with an untracked buffer (the fill is
/// queued before the deferred send: wrong values received); (2) raw NCCL calls in a raw group, with a
/// stream ordered after an event recorded after the call was made but before it was queued: the
/// detector reports the race on the output.
#[test]
#[ignore = "makes reports: scripts/shadow.sh runs it alone"]
fn the_shadow_sees_what_the_refusals_prevent() {
    let (device, comm, stream) = one();
    let mut x = DeviceBuffer::from_slice(&device, &vec![3.0f32; N]).unwrap();
    stream.fill_async(&mut x, 5.0).unwrap();
    let mut y = DeviceBuffer::from_slice(&device, &vec![-1.0f32; N]).unwrap();
    // SAFETY: every use of x below is on `stream` (ordered) or after its synchronization.
    unsafe { x.set_untracked(true) };
    group(|| {
        comm.send(&x, 0, &stream)?;
        comm.recv(&mut y, 0, &stream)?;
        stream.fill_async(&mut x, 9.0) // not refused: x is untracked
    })
    .unwrap();
    assert_eq!(
        y.to_vec().unwrap(),
        vec![9.0; N],
        "the shadow queued the send before the fill: it does not model NCCL's deferral"
    );
    stream.synchronize().unwrap();
    assert_no_reports(); // same-stream order: wrong values, no race

    let other = Stream::non_blocking(&device).unwrap();
    let a = DeviceBuffer::from_slice(&device, &vec![1.0f32; N]).unwrap();
    let mut b = DeviceBuffer::<f32>::zeroed(&device, N).unwrap();
    device.synchronize().unwrap();
    // SAFETY: the test orders nothing on b on purpose; the shadow's memory is never unmapped.
    unsafe { b.set_untracked(true) };
    let event = Event::new(&device).unwrap();
    // SAFETY: raw calls on live buffers of N f32 each, a live communicator and live streams; the group
    // is ended below.
    unsafe {
        assert_eq!(
            rccl_sys::ncclGroupStart(),
            rccl_sys::ncclResult_t::ncclSuccess
        );
        let r = rccl_sys::ncclAllReduce(
            a.device_ptr(),
            b.device_ptr(),
            N,
            rccl_sys::ncclFloat32,
            rccl_sys::ncclSum,
            comm.raw(),
            stream.raw(),
        );
        assert_eq!(r, rccl_sys::ncclResult_t::ncclSuccess);
    }
    // Recorded before the all-reduce is queued: waiting for it does not wait for the all-reduce.
    event.record(&stream).unwrap();
    other.wait_event(&event).unwrap();
    other.fill_async(&mut b, 2.0).unwrap();
    // SAFETY: ends the group opened above.
    assert_eq!(
        unsafe { rccl_sys::ncclGroupEnd() },
        rccl_sys::ncclResult_t::ncclSuccess
    );
    stream.synchronize().unwrap();
    other.synchronize().unwrap();
    let n = shadow::reports();
    let text = shadow::report_text();
    eprintln!("self-check: {n} reports:\n{text}");
    assert!(
        n > 0 && text.contains("ncclAllReduce"),
        "the race of a stream ordered after an event recorded inside the group was not reported"
    );
}
