//! hip::solver and hip::sparse under the memory model, across streams: a factorization and a sparse
//! product wait for a slow kernel on another stream that writes their input (the values come out right
//! only if they do), and do not wait for a slow writer of memory they do not touch (their stream's work
//! completes while the other stream is still busy). `HIP_RS_TEST_UNTRACKED=1` turns the tracking of the
//! slow kernels' buffers off: the control run, where the first two fail. Compiled only with
//! `--features gpu,solver,sparse`.
#![cfg(all(feature = "gpu", feature = "solver", feature = "sparse"))]
mod common;

use common::device;
use common::slow::{Slow, SPIN_CYCLES};
use hip::prelude::*;
use hip::solver::{Handle as Solver, Uplo};
use hip::sparse::{Csr, Handle as Sparse, Op};

const N: usize = 64;

/// A diagonally dominant symmetric matrix (positive definite), column-major N x N.
fn spd() -> Vec<f64> {
    (0..N * N)
        .map(|k| {
            let (i, j) = (k % N, k / N);
            if i == j {
                N as f64 + 1.0
            } else {
                (((i + j) * 7 % 11) as f64 - 5.0) / 10.0
            }
        })
        .collect()
}

/// The tridiagonal [-1 2 -1] matrix, N x N, as CSR.
fn laplacian(d: &Device) -> (Csr<f64>, impl Fn(&[f64]) -> Vec<f64>) {
    let (mut offsets, mut indices, mut values) = (vec![0i32], vec![], vec![]);
    for i in 0..N {
        for (j, v) in [(i.wrapping_sub(1), -1.0), (i, 2.0), (i + 1, -1.0)] {
            if j < N {
                indices.push(j as i32);
                values.push(v);
            }
        }
        offsets.push(indices.len() as i32);
    }
    let a = Csr::from_host(d, N, N, &offsets, &indices, &values).unwrap();
    let host = move |x: &[f64]| -> Vec<f64> {
        (0..N)
            .map(|i| {
                let left = if i > 0 { x[i - 1] } else { 0.0 };
                let right = if i + 1 < N { x[i + 1] } else { 0.0 };
                2.0 * x[i] - left - right
            })
            .collect()
    };
    (a, host)
}

/// Cholesky on s2 of a matrix a slow kernel on s1 is still copying in: the factor solves A x = b.
/// Everything is allocated, and the handle warmed up, before the slow kernel is queued: an allocation
/// may synchronize the device, which would hide a missing order.
#[test]
fn a_factorization_waits_for_the_slow_writer_of_its_matrix() {
    let d = device();
    let (s1, s2) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    let slow = Slow::new(&d);
    let host = spd();
    let src = DeviceBuffer::from_slice(&d, &host).unwrap();
    let mut a = slow.buffer(DeviceBuffer::<f64>::zeroed(&d, N * N).unwrap());
    let mut solver = Solver::new(&s2).unwrap();
    let x: Vec<f64> = (0..N).map(|i| i as f64 - 30.0).collect();
    let b: Vec<f64> = (0..N)
        .map(|i| (0..N).map(|j| host[i + j * N] * x[j]).sum())
        .collect();
    let mut db = DeviceBuffer::from_slice(&d, &b).unwrap();
    let mut warm = DeviceBuffer::from_slice(&d, &host).unwrap();
    solver
        .potrf(Uplo::Lower, N, &mut warm, N)
        .unwrap()
        .check()
        .unwrap();
    d.synchronize().unwrap();

    slow.copy(&s1, &src, &mut a);
    let factored = solver.potrf(Uplo::Lower, N, &mut a, N).unwrap();
    let solved = solver.potrs(Uplo::Lower, N, 1, &a, N, &mut db, N).unwrap();
    let (f, s) = (factored.check(), solved.check());
    let got = db.to_vec().unwrap();
    slow.end_round(&d);
    f.unwrap();
    s.unwrap();
    let err = got
        .iter()
        .zip(&x)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0, f64::max);
    assert!(
        err < 1e-9,
        "x off by {err}: the factorization ran before its matrix was written"
    );
}

/// SpMV on s2 of a vector a slow kernel on s1 is still copying in (allocations and the handle's first
/// call before the slow kernel, as above).
#[test]
fn a_sparse_product_waits_for_the_slow_writer_of_its_vector() {
    let d = device();
    let (s1, s2) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    let slow = Slow::new(&d);
    let (a, host) = laplacian(&d);
    let x: Vec<f64> = (0..N).map(|i| (i * i % 17) as f64).collect();
    let src = DeviceBuffer::from_slice(&d, &x).unwrap();
    let mut dx = slow.buffer(DeviceBuffer::<f64>::zeroed(&d, N).unwrap());
    let mut sparse = Sparse::new(&s2).unwrap();
    let mut y = DeviceBuffer::<f64>::zeroed(&d, N).unwrap();
    sparse.spmv(Op::N, 1.0, &a, &src, 0.0, &mut y).unwrap();
    d.synchronize().unwrap();

    slow.copy(&s1, &src, &mut dx);
    sparse.spmv(Op::N, 1.0, &a, &dx, 0.0, &mut y).unwrap();
    let got = y.to_vec().unwrap();
    slow.end_round(&d);
    assert_eq!(
        got,
        host(&x),
        "the product ran before its vector was written"
    );
}

/// With s1 busy for ~20 ms (a spin, then a slow writer of a buffer neither library touches), a
/// factorization and a sparse product on s2 complete before s1 does: nothing orders them after it.
#[test]
fn solver_and_sparse_calls_overlap_a_writer_of_other_memory() {
    let d = device();
    let (s1, s2) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    let slow = Slow::new(&d);
    let (a, host) = laplacian(&d);
    let mut solver = Solver::new(&s2).unwrap();
    let mut sparse = Sparse::new(&s2).unwrap();
    // Warm both libraries up first (first calls may allocate and synchronize).
    let mut m = DeviceBuffer::from_slice(&d, &spd()).unwrap();
    solver
        .potrf(Uplo::Lower, N, &mut m, N)
        .unwrap()
        .check()
        .unwrap();
    let x: Vec<f64> = (0..N).map(|i| i as f64).collect();
    let dx = DeviceBuffer::from_slice(&d, &x).unwrap();
    let mut y = DeviceBuffer::<f64>::zeroed(&d, N).unwrap();
    sparse.spmv(Op::N, 1.0, &a, &dx, 0.0, &mut y).unwrap();
    s2.synchronize().unwrap();

    // Everything allocated first: an allocation may synchronize the device. The slow kernels run once
    // too: on the H200's driver (580) a kernel's first launch loads it lazily, and work queued after that
    // on other streams waited for s1 (measured: s2 done at 20 ms on a kernel's first launch, 0.2 ms after).
    let mut other = DeviceBuffer::<f64>::zeroed(&d, 1 << 16).unwrap();
    slow.spin(&s1, 1);
    slow.fill(&s1, &mut other, 0.0);
    let mut m = DeviceBuffer::from_slice(&d, &spd()).unwrap();
    let (s1_done, s2_done) = (Event::new(&d).unwrap(), Event::new(&d).unwrap());
    d.synchronize().unwrap();

    slow.spin(&s1, SPIN_CYCLES);
    slow.fill(&s1, &mut other, 1.0);
    s1_done.record(&s1).unwrap();
    let info = solver.potrf(Uplo::Lower, N, &mut m, N).unwrap();
    sparse.spmv(Op::N, 1.0, &a, &dx, 0.0, &mut y).unwrap();
    s2_done.record(&s2).unwrap();
    s2_done.synchronize().unwrap();
    let s1_finished_first = s1_done.query().unwrap();
    s1_done.synchronize().unwrap();
    info.check().unwrap();
    assert_eq!(y.to_vec().unwrap(), host(&x));
    assert!(
        !s1_finished_first,
        "s2's calls waited for s1's unrelated ~20 ms of work"
    );
}
