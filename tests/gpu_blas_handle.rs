//! hip::blas's handle on a device: device scalars read when the call runs, one handle on two streams and
//! on another thread, wrong shapes refused with nothing written, the caller's workspace (hipBLAS 3.x;
//! refused before), and program order with kernels on another stream. The products themselves are
//! checked against a host reference in `gpu_blas.rs`. Compiled only with `--features gpu,blas`.
#![cfg(all(feature = "gpu", feature = "blas"))]
mod common;

use common::device;
use hip::blas::{Gemm, Gemv, Handle, Scalar, StridedBatch};
use hip::prelude::*;
use hip::Error;

/// `n` f32 values in [-2, 2] (multiples of 1/7), different for each seed.
fn data(n: usize, seed: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (((i * 13 + seed) * 37 % 29) as f32 - 14.0) / 7.0)
        .collect()
}

fn setup() -> (Device, Stream, Handle) {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let h = Handle::new(&s).unwrap();
    (d, s, h)
}

#[test]
fn device_scalars_are_read_when_the_call_runs() {
    let (d, s, blas) = setup();
    let (m, n, k) = (8, 8, 8);
    let a = data(m * k, 1);
    let b = data(k * n, 2);
    let da = DeviceBuffer::from_slice(&d, &a).unwrap();
    let db = DeviceBuffer::from_slice(&d, &b).unwrap();
    let mut scalars = DeviceBuffer::from_slice(&d, &[3.0f32, 0.0]).unwrap();
    let mut via_device = DeviceBuffer::<f32>::zeroed(&d, m * n).unwrap();
    let mut via_host = DeviceBuffer::<f32>::zeroed(&d, m * n).unwrap();
    {
        let (alpha, beta) = scalars.split_at_mut(1).unwrap();
        let (alpha, beta) = (
            Scalar::device(&alpha).unwrap(),
            Scalar::device(&beta).unwrap(),
        );
        blas.gemm(&Gemm::new(m, n, k), alpha, &da, &db, beta, &mut via_device)
            .unwrap();
    }
    blas.gemm(&Gemm::new(m, n, k), 3.0f32, &da, &db, 0.0f32, &mut via_host)
        .unwrap();
    assert_eq!(via_device.to_vec().unwrap(), via_host.to_vec().unwrap());
    // A device alpha with a host beta is refused before anything is queued.
    let alpha = Scalar::device(&scalars).unwrap();
    let e = blas
        .gemm(&Gemm::new(m, n, k), alpha, &da, &db, 0.0f32, &mut via_host)
        .unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { what: "beta", .. }),
        "{e}"
    );
    let empty = DeviceBuffer::<f32>::zeroed(&d, 0).unwrap();
    assert!(Scalar::device(&empty).is_err());
    // axpy with a device alpha, then a host-mode call on the same handle: the mode follows each call.
    let x = DeviceBuffer::from_slice(&d, &[1.0f32; 4]).unwrap();
    let mut y = DeviceBuffer::from_slice(&d, &[1.0f32; 4]).unwrap();
    blas.axpy(4, Scalar::device(&scalars).unwrap(), &x, 1, &mut y, 1)
        .unwrap();
    blas.axpy(4, 1.0f32, &x, 1, &mut y, 1).unwrap();
    assert_eq!(y.to_vec().unwrap(), [5.0f32; 4]);
    s.synchronize().unwrap();
}

#[test]
fn one_handle_on_two_streams_keeps_program_order() {
    let d = device();
    let (s1, s2) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    let mut blas = Handle::new(&s1).unwrap();
    let n = 512;
    let a = data(n * n, 1);
    let da = DeviceBuffer::from_slice(&d, &a).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed(&d, n * n).unwrap();
    let mut e = DeviceBuffer::<f32>::zeroed(&d, n * n).unwrap();
    // C = A * A on s1; then, on s2, E = C * A: s2 must wait for s1's product.
    blas.gemm(&Gemm::new(n, n, n), 1.0f32, &da, &da, 0.0f32, &mut c)
        .unwrap();
    blas.set_stream(&s2).unwrap();
    blas.gemm(&Gemm::new(n, n, n), 1.0f32, &c, &da, 0.0f32, &mut e)
        .unwrap();
    // The same two products on one stream, for the reference.
    let one = Stream::new(&d).unwrap();
    let reference = Handle::new(&one).unwrap();
    let mut c2 = DeviceBuffer::<f32>::zeroed(&d, n * n).unwrap();
    let mut e2 = DeviceBuffer::<f32>::zeroed(&d, n * n).unwrap();
    reference
        .gemm(&Gemm::new(n, n, n), 1.0f32, &da, &da, 0.0f32, &mut c2)
        .unwrap();
    reference
        .gemm(&Gemm::new(n, n, n), 1.0f32, &c2, &da, 0.0f32, &mut e2)
        .unwrap();
    assert_eq!(e.to_vec().unwrap(), e2.to_vec().unwrap());
    // Dropping the streams the handle was made on and moved to leaves it working on its last one.
    drop(s1);
    drop(s2);
    blas.scal(n * n, 2.0f32, &mut e, 1).unwrap();
    let doubled: Vec<f32> = e2.to_vec().unwrap().iter().map(|v| v * 2.0).collect();
    assert_eq!(e.to_vec().unwrap(), doubled);
}

#[test]
fn a_handle_moves_to_another_thread() {
    let (d, _s, blas) = setup();
    let x = DeviceBuffer::from_slice(&d, &[3.0f64, 4.0]).unwrap();
    let norm = std::thread::spawn(move || blas.nrm2(2, &x, 1).unwrap())
        .join()
        .unwrap();
    assert_eq!(norm, 5.0);
}

#[test]
fn wrong_shapes_are_refused_with_nothing_written() {
    let (d, s, blas) = setup();
    let sentinel = vec![-7.0f32; 64];
    let a = DeviceBuffer::from_slice(&d, &[1.0f32; 64]).unwrap();
    let short = DeviceBuffer::from_slice(&d, &[1.0f32; 15]).unwrap();
    let mut c = DeviceBuffer::from_slice(&d, &sentinel).unwrap();
    let invalid = |e: Error| match e {
        Error::InvalidArgument { what, .. } => what,
        other => panic!("expected InvalidArgument, got {other}"),
    };
    // 4x4 over 4: B needs 16 elements.
    let e = blas
        .gemm(&Gemm::new(4, 4, 4), 1.0f32, &a, &short, 0.0f32, &mut c)
        .unwrap_err();
    assert!(e.to_string().contains("15 elements"), "{e}");
    assert_eq!(invalid(e), "gemm operand b");
    // C of 8x8 with ldc 9 needs 71 > 64.
    assert_eq!(
        invalid(
            blas.gemm(&Gemm::new(8, 8, 1).ldc(9), 1.0f32, &a, &a, 0.0f32, &mut c)
                .unwrap_err()
        ),
        "gemm operand c"
    );
    assert_eq!(
        invalid(
            blas.gemm(&Gemm::new(8, 8, 2).lda(7), 1.0f32, &a, &a, 0.0f32, &mut c)
                .unwrap_err()
        ),
        "gemm operand a"
    );
    // Products writing the same C elements, and a batch past the end of C.
    let batch = StridedBatch {
        count: 4,
        stride_a: Some(0),
        stride_b: Some(0),
        stride_c: Some(8),
    };
    assert_eq!(
        invalid(
            blas.gemm_strided_batched(&Gemm::new(4, 4, 1), &batch, 1.0f32, &a, &a, 0.0f32, &mut c)
                .unwrap_err()
        ),
        "stride_c"
    );
    let batch = StridedBatch {
        stride_c: Some(16),
        count: 5,
        ..batch
    };
    assert_eq!(
        invalid(
            blas.gemm_strided_batched(&Gemm::new(4, 4, 1), &batch, 1.0f32, &a, &a, 0.0f32, &mut c)
                .unwrap_err()
        ),
        "gemm operand c"
    );
    // Vectors: a zero increment, and an increment reaching past the end.
    assert_eq!(
        invalid(blas.axpy(8, 1.0f32, &a, 1, &mut c, 0).unwrap_err()),
        "axpy operand y"
    );
    assert_eq!(
        invalid(blas.axpy(9, 1.0f32, &short, 2, &mut c, 1).unwrap_err()),
        "axpy operand x"
    );
    assert_eq!(
        invalid(blas.scal(33, 1.0f32, &mut c, 2).unwrap_err()),
        "scal operand x"
    );
    // scal is defined for positive increments only: a negative one would silently do nothing.
    assert_eq!(
        invalid(blas.scal(4, 2.0f32, &mut c, -1).unwrap_err()),
        "scal operand x"
    );
    assert_eq!(
        invalid(
            blas.gemv(&Gemv::new(8, 9), 1.0f32, &a, &short, 0.0f32, &mut c)
                .unwrap_err()
        ),
        "gemv operand a"
    );
    assert_eq!(
        invalid(blas.dot(16, &a, 1, &short, 1).unwrap_err()),
        "dot operand y"
    );
    // Pointer-array batches: one list shorter than the other.
    let e = blas
        .gemm_batched(
            &Gemm::new(4, 4, 1),
            1.0f32,
            &[&a, &a],
            &[&a],
            0.0f32,
            &mut [&mut c],
        )
        .unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { .. }), "{e}");
    s.synchronize().unwrap();
    assert_eq!(
        c.to_vec().unwrap(),
        sentinel,
        "a refused call wrote nothing"
    );
}

/// hipBLAS 3.x takes the caller's workspace: products stay right with it, across a change of stream, and
/// it comes back. Older hipBLAS manages its own and refuses (`NotSupported`), the handle working as before.
#[test]
fn a_workspace_is_taken_where_hipblas_has_one() {
    let d = device();
    let (s1, s2) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    let mut blas = Handle::new(&s1).unwrap();
    let empty = DeviceBuffer::<u8>::zeroed(&d, 0).unwrap();
    match blas.set_workspace(empty) {
        Err(Error::InvalidArgument { what, .. }) => assert_eq!(what, "blas workspace"),
        other => panic!("an empty workspace: {:?}", other.err()),
    }
    let workspace = DeviceBuffer::<u8>::zeroed(&d, 32 << 20).unwrap();
    let ptr = workspace.device_ptr();
    let has_workspace = hip::blas::HEADER_VERSION.0 >= 3;
    match blas.set_workspace(workspace) {
        Ok(previous) => {
            assert!(
                has_workspace,
                "hipBLAS {:?} took a workspace",
                hip::blas::HEADER_VERSION
            );
            assert!(previous.is_none());
        }
        Err(Error::NotSupported { what, .. }) => {
            assert!(!has_workspace, "hipBLAS 3.x refused a workspace");
            assert!(what.contains("hipblasSetWorkspace"), "{what}");
        }
        Err(e) => panic!("set_workspace: {e}"),
    }
    // C = A * A on s1, then E = C * A on s2 (the workspace, if taken, is given again there).
    let n = 256;
    let a = data(n * n, 3);
    let da = DeviceBuffer::from_slice(&d, &a).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed(&d, n * n).unwrap();
    let mut e = DeviceBuffer::<f32>::zeroed(&d, n * n).unwrap();
    let shape = Gemm::new(n, n, n);
    blas.gemm(&shape, 1.0f32, &da, &da, 0.0f32, &mut c).unwrap();
    blas.set_stream(&s2).unwrap();
    blas.gemm(&shape, 1.0f32, &c, &da, 0.0f32, &mut e).unwrap();
    let one = Stream::new(&d).unwrap();
    let reference = Handle::new(&one).unwrap();
    let mut c2 = DeviceBuffer::<f32>::zeroed(&d, n * n).unwrap();
    let mut e2 = DeviceBuffer::<f32>::zeroed(&d, n * n).unwrap();
    reference
        .gemm(&shape, 1.0f32, &da, &da, 0.0f32, &mut c2)
        .unwrap();
    reference
        .gemm(&shape, 1.0f32, &c2, &da, 0.0f32, &mut e2)
        .unwrap();
    assert_eq!(e.to_vec().unwrap(), e2.to_vec().unwrap());
    let back = blas.take_workspace().unwrap();
    assert_eq!(back.map(|w| w.device_ptr()), has_workspace.then_some(ptr));
    // Back on hipBLAS's own workspace: still right.
    blas.scal(n * n, 2.0f32, &mut e, 1).unwrap();
    let doubled: Vec<f32> = e2.to_vec().unwrap().iter().map(|v| v * 2.0).collect();
    assert_eq!(e.to_vec().unwrap(), doubled);
}

/// Program order across streams through hipBLAS, many rounds: a slow kernel on stream A writes x, then
/// `axpy` on B reads it (read after write); a slow kernel on A reads x, then `scal` on B writes it (write
/// after read). Every element must show the program's order in every round. `HIP_RS_TEST_UNTRACKED=1`
/// turns tracking off for these buffers: the control run that shows the test fails without the ordering.
#[test]
fn blas_calls_on_another_stream_keep_program_order_with_kernels() {
    let d = device();
    let slow = common::slow::Slow::new(&d);
    let (a, b) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    let blas = Handle::new(&b).unwrap();
    let n: usize = 1 << 20;
    let buffer = || slow.buffer(DeviceBuffer::<f32>::zeroed(&d, n).unwrap());
    let mut bad = Vec::new();
    for round in 0..20 {
        let v = 1.0 + round as f32;
        // Read after write: y = 1 * x + y, with x written by the slow kernel on A.
        let mut x = buffer();
        let mut y = buffer();
        slow.fill(&a, &mut x, v);
        blas.axpy(n, 1.0f32, &x, 1, &mut y, 1).unwrap();
        let raw = y.to_vec().unwrap().iter().filter(|&&e| e != v).count();
        // Write after read: the slow kernel on A copies x to z; scal on B then doubles x.
        let mut z = buffer();
        slow.copy(&a, &x, &mut z);
        blas.scal(n, 2.0f32, &mut x, 1).unwrap();
        let war = z.to_vec().unwrap().iter().filter(|&&e| e != v).count();
        let doubled = x
            .to_vec()
            .unwrap()
            .iter()
            .filter(|&&e| e != 2.0 * v)
            .count();
        if raw + war + doubled > 0 {
            bad.push((round, raw, war, doubled));
        }
        slow.end_round(&d);
    }
    assert!(
        bad.is_empty(),
        "rounds that saw another order (round, axpy read early, scal wrote early, scal wrong): {bad:?}"
    );
}

/// The first call after `set_stream` must wait for the handle's work on the old stream (issue 42): on
/// stream A the handle multiplies once (setting its workspace up, outside the timed part), then a spin
/// (about 20 ms, touching no memory) holds back a product C1 = A1 B1; after `set_stream(B)` the handle
/// computes C2 = A2 B2 on B. The two products share no buffer (not even a read one: the memory model may
/// order two readers on two streams by itself), so only `set_stream`'s wait orders them; they share the
/// handle's workspace. Timing: an event on B right after `set_stream` must complete no earlier than one
/// on A after C1's product. Without the wait, B's event and product run at once, about 20 ms before A's
/// product ends (the raw control below measures that). Both products are checked against a handle on
/// one stream. The streams do not block on the default stream.
#[test]
fn set_stream_orders_the_handle_after_its_work_on_the_old_stream() {
    use common::slow::{Slow, Timeline, SPIN_CYCLES};
    let d = device();
    let slow = Slow::new(&d);
    let n = 512;
    let shape = Gemm::new(n, n, n);
    let operand = |seed| DeviceBuffer::from_slice(&d, &data(n * n, seed)).unwrap();
    let (a1, b1, a2, b2) = (operand(1), operand(2), operand(3), operand(4));
    let zeroed = || DeviceBuffer::<f32>::zeroed(&d, n * n).unwrap();
    let one = Stream::new(&d).unwrap();
    let reference = Handle::new(&one).unwrap();
    let (mut r1, mut r2) = (zeroed(), zeroed());
    reference
        .gemm(&shape, 1.0f32, &a1, &b1, 0.0f32, &mut r1)
        .unwrap();
    reference
        .gemm(&shape, 1.0f32, &a2, &b2, 0.0f32, &mut r2)
        .unwrap();

    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let mut blas = Handle::new(&a).unwrap();
    let (mut c1, mut c2) = (zeroed(), zeroed());
    blas.gemm(&shape, 1.0f32, &a1, &b1, 0.0f32, &mut c1)
        .unwrap();
    let t = Timeline::start(&d, &a, &b);
    slow.spin(&a, SPIN_CYCLES);
    blas.gemm(&shape, 1.0f32, &a1, &b1, 0.0f32, &mut c1)
        .unwrap();
    let old_done = t.mark(&a);
    blas.set_stream(&b).unwrap();
    let new_start = t.mark(&b);
    blas.gemm(&shape, 1.0f32, &a2, &b2, 0.0f32, &mut c2)
        .unwrap();
    let (old_done, new_start) = (t.ms(&old_done), t.ms(&new_start));
    assert!(
        old_done > 5.0,
        "the spin held the old stream's product back only to {old_done} ms"
    );
    // Timestamps are exact to about 0.5 us; unordered, B starts about 20 ms early.
    assert!(
        new_start >= old_done - 0.01,
        "work on the new stream began at {new_start} ms, before the product on the old stream ended at \
         {old_done} ms"
    );
    assert_eq!(
        c1.to_vec().unwrap(),
        r1.to_vec().unwrap(),
        "the old stream's product"
    );
    assert_eq!(
        c2.to_vec().unwrap(),
        r2.to_vec().unwrap(),
        "the new stream's product"
    );
}

/// The control for the test above: the same on a raw hipBLAS handle moved with `hipblasSetStream` alone,
/// with nothing ordering B after A. Work on B then begins before the product on A ends (by about the
/// spin's 20 ms): the timing check above fails without `set_stream`'s wait.
#[test]
fn a_raw_stream_change_alone_lets_the_new_stream_run_first() {
    use common::slow::{Slow, Timeline, SPIN_CYCLES};
    use hip::blas::hipblas_sys as sys;
    let d = device();
    let slow = Slow::new(&d);
    let n = 512;
    let x = DeviceBuffer::from_slice(&d, &data(n * n, 1)).unwrap();
    let (c1, c2) = (
        DeviceBuffer::<f32>::zeroed(&d, n * n).unwrap(),
        DeviceBuffer::<f32>::zeroed(&d, n * n).unwrap(),
    );
    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    // The buffers were written on other streams: complete before the raw handle uses them.
    d.synchronize().unwrap();
    let mut raw: sys::hipblasHandle_t = std::ptr::null_mut();
    // SAFETY: a handle made, used on A then B and destroyed here; x, c1 and c2 hold n * n floats each (C =
    // X X reads x only), dropped only after the device is synchronized; alpha and beta are host values
    // (the default pointer mode) that outlive the calls.
    let (t, old_done, new_start) = unsafe {
        let ok = sys::hipblasStatus_t::HIPBLAS_STATUS_SUCCESS;
        assert_eq!(sys::hipblasCreate(&mut raw), ok);
        assert_eq!(sys::hipblasSetStream(raw, a.raw()), ok);
        let (alpha, beta, m) = (1.0f32, 0.0f32, i32::try_from(n).unwrap());
        let gemm = |c: &DeviceBuffer<f32>| {
            let (x, c) = (x.device_ptr().cast(), c.device_ptr().cast());
            let op = sys::HIPBLAS_OP_N;
            let status = sys::hipblasSgemm(raw, op, op, m, m, m, &alpha, x, m, x, m, &beta, c, m);
            assert_eq!(status, ok);
        };
        // The first product, outside the timed part, as above.
        gemm(&c1);
        let t = Timeline::start(&d, &a, &b);
        slow.spin(&a, SPIN_CYCLES);
        gemm(&c1);
        let old_done = t.mark(&a);
        assert_eq!(sys::hipblasSetStream(raw, b.raw()), ok);
        let new_start = t.mark(&b);
        gemm(&c2);
        d.synchronize().unwrap();
        assert_eq!(sys::hipblasDestroy(raw), ok);
        (t, old_done, new_start)
    };
    let (old_done, new_start) = (t.ms(&old_done), t.ms(&new_start));
    eprintln!(
        "raw hipblasSetStream: the old stream's product ended at {old_done:.3} ms, the new stream began \
         at {new_start:.3} ms"
    );
    assert!(
        new_start < old_done - 5.0,
        "unordered, work on the new stream began at {new_start} ms, not well before the old stream's \
         product ended at {old_done} ms: the timing check could not tell"
    );
}
