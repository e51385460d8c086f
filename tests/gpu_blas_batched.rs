//! `Handle::gemm_batched` (pointer-array batches) as a queued operation: it returns before the work
//! queued ahead of it is done, and it can be captured into a graph that replays it after the handle's
//! table cache moved on. Products are checked against the host. Compiled only with `--features gpu,blas`.
//!
//! Before the pointer tables were uploaded in stream order, both failed: the table was a synchronous
//! `DeviceBuffer::from_slice` (on the null stream: it waited for the slow kernel, and in a capture it
//! invalidated the capture) dropped at the end of the call (which waited on the host for the GEMM).
#![cfg(all(feature = "gpu", feature = "blas"))]
mod common;

use common::device;
use common::slow::{Slow, SPIN_CYCLES};
use hip::blas::{Gemm, Handle};
use hip::prelude::*;

/// `count` column-major products of `m x k` by `k x n` with distinct small values, and the host's
/// `alpha * A_i B_i` for each.
struct Batch {
    shape: Gemm,
    a: Vec<DeviceBuffer<f32>>,
    b: Vec<DeviceBuffer<f32>>,
    c: Vec<DeviceBuffer<f32>>,
    want: Vec<Vec<f32>>,
}

impl Batch {
    fn new(d: &Device, (m, n, k): (usize, usize, usize), count: usize, alpha: f32) -> Batch {
        // Small integers over 4: exact in f32, so the products are exact too.
        let value = |i: usize, seed: usize| ((i * 7 + seed * 5) % 9) as f32 / 4.0 - 1.0;
        let (mut a, mut b, mut c, mut want) = (vec![], vec![], vec![], vec![]);
        for p in 0..count {
            let ha: Vec<f32> = (0..m * k).map(|i| value(i, 3 * p)).collect();
            let hb: Vec<f32> = (0..k * n).map(|i| value(i, 3 * p + 1)).collect();
            let mut hc = vec![0.0f32; m * n];
            for j in 0..n {
                for i in 0..m {
                    let sum: f32 = (0..k).map(|q| ha[i + q * m] * hb[q + j * k]).sum();
                    hc[i + j * m] = alpha * sum;
                }
            }
            a.push(DeviceBuffer::from_slice(d, &ha).unwrap());
            b.push(DeviceBuffer::from_slice(d, &hb).unwrap());
            c.push(DeviceBuffer::<f32>::zeroed(d, m * n).unwrap());
            want.push(hc);
        }
        Batch {
            shape: Gemm::new(m, n, k),
            a,
            b,
            c,
            want,
        }
    }

    /// `C_i = alpha A_i B_i + beta C_i` for every product, through `blas`.
    fn run(&mut self, blas: &Handle, alpha: f32, beta: f32) -> hip::Result<()> {
        let a: Vec<&DeviceBuffer<f32>> = self.a.iter().collect();
        let b: Vec<&DeviceBuffer<f32>> = self.b.iter().collect();
        let mut c: Vec<&mut DeviceBuffer<f32>> = self.c.iter_mut().collect();
        blas.gemm_batched(&self.shape, alpha, &a, &b, beta, &mut c)
    }

    /// Every `C_i` is `times` the host's product.
    fn check(&self, what: &str, times: f32) {
        for (i, (c, want)) in self.c.iter().zip(&self.want).enumerate() {
            let got = c.to_vec().unwrap();
            let want: Vec<f32> = want.iter().map(|w| times * w).collect();
            assert_eq!(got, want, "{what}: product {i}");
        }
    }
}

/// Captured in global mode on a handle that never made a table (so the table is allocated during the
/// capture, which CUDA allows only in relaxed mode), the batch runs nothing at capture time; each replay
/// uploads the table again and adds one product to C (beta 1). A live call in between takes another
/// table: the graph's stays its own.
#[test]
fn a_pointer_array_batch_is_captured_and_each_replay_adds_its_products() {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let blas = Handle::new(&s).unwrap();
    let mut batch = Batch::new(&d, (16, 12, 9), 5, 1.0);
    // One plain product first: the library's own lazy set-up (cuBLAS's workspace) happens outside the
    // capture; the handle still has no pointer table.
    let mut warm = Batch::new(&d, (4, 4, 4), 1, 1.0);
    blas.gemm(
        &warm.shape,
        1.0f32,
        &warm.a[0],
        &warm.b[0],
        0.0f32,
        &mut warm.c[0],
    )
    .unwrap();
    s.synchronize().unwrap();
    warm.check("the warm-up product", 1.0);
    let capture = s.begin_capture(CaptureMode::Global).unwrap();
    batch.run(&blas, 1.0, 1.0).unwrap();
    let graph = capture.end().unwrap();
    assert!(graph.node_count().unwrap() >= 2, "the upload and the GEMM");
    batch.check("after the capture, before any replay", 0.0);
    let mut exec = graph.instantiate().unwrap();
    exec.launch(&s).unwrap();
    exec.launch(&s).unwrap();
    s.synchronize().unwrap();
    batch.check("two replays", 2.0);
    // A live call of other products on the same handle: its table is not the graph's.
    let mut other = Batch::new(&d, (4, 4, 4), 3, 2.0);
    other.run(&blas, 2.0, 0.0).unwrap();
    exec.launch(&s).unwrap();
    s.synchronize().unwrap();
    other.check("a live call between replays", 1.0);
    batch.check("a third replay after the live call", 3.0);
    drop((exec, graph));
    // The handle still works after the graph (and the table it kept) went.
    batch.run(&blas, 1.0, 0.0).unwrap();
    s.synchronize().unwrap();
    batch.check("a live call after the graph was dropped", 1.0);
}

/// Queued behind a kernel that spins about 20 ms (touching no memory), `gemm_batched` returns while the
/// kernel still runs: the stream is not idle right after the calls. Three calls in a row, each needing a
/// table of its own (the one before is still in use); the same three ran once before, so the handle has
/// three free tables and the measured calls allocate nothing.
#[test]
fn a_pointer_array_batch_returns_before_the_work_queued_ahead_of_it_is_done() {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let blas = Handle::new(&s).unwrap();
    let slow = Slow::new(&d);
    let mut batches: Vec<Batch> = (0..3)
        .map(|i| Batch::new(&d, (32, 24, 16), 4 + i, 1.0))
        .collect();
    // Warm up the handle (cuBLAS's own lazy set-up, three tables) outside the measured part.
    for batch in &mut batches {
        batch.run(&blas, 1.0, 0.0).unwrap();
    }
    s.synchronize().unwrap();
    slow.spin(&s, SPIN_CYCLES);
    for batch in &mut batches {
        batch.run(&blas, 1.0, 0.0).unwrap();
    }
    assert!(
        !s.query().unwrap(),
        "the stream is idle right after gemm_batched returned: the calls waited for the ~20 ms kernel"
    );
    s.synchronize().unwrap();
    for (i, batch) in batches.iter().enumerate() {
        batch.check(&format!("call {i} behind the slow kernel"), 1.0);
    }
}

/// A graph keeps the library's handle: replayed after its `Handle` was dropped, the captured product
/// still runs with the library's state (cuBLAS's workspace), not in freed memory (memcheck watches this
/// file).
#[test]
fn a_graph_replays_after_its_handle_was_dropped() {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let blas = Handle::new(&s).unwrap();
    let mut batch = Batch::new(&d, (64, 48, 32), 1, 1.0);
    // The library's lazy set-up outside the capture.
    batch.run(&blas, 1.0, 0.0).unwrap();
    s.synchronize().unwrap();
    batch.check("a live product", 1.0);
    let capture = s.begin_capture(CaptureMode::Global).unwrap();
    blas.gemm(
        &batch.shape,
        1.0f32,
        &batch.a[0],
        &batch.b[0],
        1.0f32,
        &mut batch.c[0],
    )
    .unwrap();
    let graph = capture.end().unwrap();
    drop(blas);
    let mut exec = graph.instantiate().unwrap();
    exec.launch(&s).unwrap();
    exec.launch(&s).unwrap();
    s.synchronize().unwrap();
    batch.check("two replays after the handle was dropped", 3.0);
}

/// A call whose result goes to host memory is refused while its stream is captured (every replay would
/// write it there later); its `_into` form, with a device result, is captured and replayed.
#[test]
fn host_results_are_refused_in_a_capture_and_device_results_are_not() {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let blas = Handle::new(&s).unwrap();
    let x = DeviceBuffer::from_slice(&d, &[1.0f32, 2.0, 3.0]).unwrap();
    let mut r = DeviceBuffer::<f32>::zeroed(&d, 1).unwrap();
    assert_eq!(blas.dot(3, &x, 1, &x, 1).unwrap(), 14.0);
    let capture = s.begin_capture(CaptureMode::Global).unwrap();
    let e = blas.dot(3, &x, 1, &x, 1).unwrap_err();
    assert!(
        matches!(e, hip::Error::InvalidArgument { .. }) && e.to_string().contains("_into"),
        "{e}"
    );
    assert!(blas.nrm2(3, &x, 1).is_err());
    blas.dot_into(false, 3, &x, 1, &x, 1, &mut r).unwrap();
    let graph = capture.end().unwrap();
    assert_eq!(r.to_vec().unwrap(), [0.0], "captured, not run");
    let mut exec = graph.instantiate().unwrap();
    exec.launch(&s).unwrap();
    s.synchronize().unwrap();
    assert_eq!(r.to_vec().unwrap(), [14.0]);
}
