//! RCCL groups and the memory model on one GPU (issue 42), with a one-rank communicator: the crate's side
//! of a group on the machines that have one GPU. Other uses of a buffer a call of the open group uses
//! are refused, memory and communicators dropped inside are kept until the group ends, nested groups end
//! with the outermost, and a group left by a panic is ended (the thread is not left inside NCCL's group).
//! NCCL / RCCL run a one-rank call at once rather than at `ncclGroupEnd` (NCCL 2.21.5 here), so the
//! deferral itself, and what the crate keeps for it, is exercised by the two-device tests
//! (tests/gpu_rccl_group.rs) and, without a GPU, under the shadow runtime, which defers as NCCL does
//! (tests/shadow_rccl.rs); the panic test asks NCCL directly whether a group is still open.
//! Compiled with `--features gpu,rccl`.
#![cfg(all(feature = "rccl", feature = "gpu"))]

use hip::prelude::*;
use hip::rccl::{group, Comm, ReduceOp};
use hip::Error;

const N: usize = 1 << 16;

fn one() -> (Device, Comm, Stream) {
    let device = Device::get(0).unwrap();
    let comm = Comm::init_all(std::slice::from_ref(&device))
        .unwrap()
        .pop()
        .unwrap();
    let stream = Stream::non_blocking(&device).unwrap();
    (device, comm, stream)
}

fn refused_in_group(e: &Error) -> bool {
    matches!(e, Error::InvalidArgument { what, .. } if what.contains("RCCL group"))
}

#[test]
fn other_uses_inside_a_group_are_refused_and_the_result_is_right_after() {
    let (device, comm, stream) = one();
    let other = Stream::non_blocking(&device).unwrap();
    let send = DeviceBuffer::from_slice(&device, &vec![4.0f32; N]).unwrap();
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
    assert_eq!(recv.to_vec().unwrap(), vec![4.0; N]);
    other.fill_async(&mut recv, 1.0).unwrap();
    assert_eq!(recv.to_vec().unwrap(), vec![1.0; N]);
}

#[test]
fn memory_and_a_communicator_dropped_inside_a_group_outlive_its_call() {
    let device = Device::get(0).unwrap();
    let stream = Stream::non_blocking(&device).unwrap();
    for round in 0..5u32 {
        let comm = Comm::init_all(std::slice::from_ref(&device))
            .unwrap()
            .pop()
            .unwrap();
        let input = DeviceBuffer::from_slice(&device, &vec![round as f32 + 0.5; N]).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&device, N).unwrap();
        group(|| {
            // A stream-ordered buffer, dropped inside the group right after the call that reads it,
            // and the communicator after the call on it.
            let mut pool = DeviceBuffer::<f32>::zeroed_async(&stream, N)?;
            pool.copy_from_device(&input)?;
            comm.all_reduce(&pool, &mut out, ReduceOp::Sum, &stream)?;
            drop(pool);
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
}

#[test]
fn nested_groups_are_queued_with_the_outermost() {
    let (device, comm, stream) = one();
    let a = DeviceBuffer::from_slice(&device, &vec![2.0f32; N]).unwrap();
    let mut b = DeviceBuffer::<f32>::zeroed(&device, N).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed(&device, N).unwrap();
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
    assert_eq!(b.to_vec().unwrap(), vec![2.0; N]);
    assert_eq!(c.to_vec().unwrap(), vec![2.0; N]);
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
    // NCCL's own answer: ending a group now must fail, as no group is open on this thread. Had the panic
    // left NCCL's group open, this would close it (and succeed), and every later call of this thread
    // would have waited for a group end that never came.
    // SAFETY: no arguments; outside a group NCCL answers an error and changes nothing.
    let end = unsafe { hip::rccl::rccl_sys::ncclGroupEnd() };
    assert_ne!(
        end,
        hip::rccl::rccl_sys::ncclResult_t::ncclSuccess,
        "a group was still open after the panic"
    );
    assert_eq!(b.to_vec().unwrap(), vec![3.0; N]);
    // The buffer is usable again, and a new group's call is queued at its end.
    let mut c = DeviceBuffer::<f32>::zeroed(&device, N).unwrap();
    group(|| comm.all_reduce(&b, &mut c, ReduceOp::Sum, &stream)).unwrap();
    assert_eq!(c.to_vec().unwrap(), vec![3.0; N]);
}

#[test]
fn a_write_on_the_same_stream_after_a_send_in_the_group_is_refused() {
    // Issue 54, hole 4: `x` last written on `stream`; inside a group, send(&x) then x.fill_async on the
    // same stream took the memory model's fast path (the stream was x's sole user) and was queued
    // before NCCL queued the send at the group's end: the peer received the new values. Every other use
    // of memory a pending group call uses is refused, the group's own stream included.
    let (device, comm, stream) = one();
    let mut x = DeviceBuffer::from_slice(&device, &vec![3.0f32; N]).unwrap();
    stream.fill_async(&mut x, 5.0).unwrap(); // x's last writer: `stream`, its sole user
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
    assert_eq!(
        y.to_vec().unwrap(),
        vec![5.0; N],
        "the send must carry x as it was"
    );
    // After the group the same fill works and takes the fast path again.
    stream.fill_async(&mut x, 9.0).unwrap();
    assert_eq!(x.to_vec().unwrap(), vec![9.0; N]);
}
