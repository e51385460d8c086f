//! hip::solver's batched Cholesky on a device: the failing matrix named by its batch index, strided
//! batches in one buffer, and `potrs_batched` on many matrices with one `info` per matrix and the memory
//! around its operands untouched (hipSOLVER's rocSOLVER backend zeroes `batch_count` ints of `info`).
//! Compiled only with `--features gpu,solver`.
#![cfg(all(feature = "gpu", feature = "solver"))]
mod common;

use common::dense::{matvec, max_diff, spd, spd_shifted};
use common::device;
use hip::prelude::*;
use hip::solver::{Handle, Uplo};
use hip::{Error, SolverFailure};

fn setup() -> (Device, Stream, Handle) {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let h = Handle::new(&s).unwrap();
    (d, s, h)
}

#[test]
fn batched_cholesky_names_the_matrix_that_failed() {
    let (d, _s, mut solver) = setup();
    let (n, count) = (8, 100);
    let mut mats: Vec<DeviceBuffer<f64>> = (0..count)
        .map(|k| {
            let mut a = spd(n, n);
            if k == 37 {
                a[0] = -1.0; // the first minor is negative
            }
            DeviceBuffer::from_slice(&d, &a).unwrap()
        })
        .collect();
    let mut refs: Vec<&mut DeviceBuffer<f64>> = mats.iter_mut().collect();
    let info = solver.potrf_batched(Uplo::Lower, n, &mut refs, n).unwrap();
    match info.check() {
        Err(Error::NoSolution {
            batch: Some(37),
            failure: SolverFailure::NotPositiveDefinite { order: 1 },
            ..
        }) => {}
        other => panic!("expected matrix 37 at order 1, got {other:?}"),
    }
    let values = info.values().unwrap();
    assert_eq!(values.len(), count);
    assert_eq!(values.iter().filter(|&&v| v != 0).count(), 1);
    // The others were factored: solve with matrix 5 (one right-hand side, what every platform takes).
    let x: Vec<f64> = (0..n).map(|i| i as f64 - 3.0).collect();
    let b = matvec(&spd(n, n), n, n, n, &x);
    let mut bs: Vec<DeviceBuffer<f64>> = (0..2)
        .map(|_| DeviceBuffer::from_slice(&d, &b).unwrap())
        .collect();
    let a_refs: Vec<&DeviceBuffer<f64>> = vec![&mats[5], &mats[6]];
    let mut b_refs: Vec<&mut DeviceBuffer<f64>> = bs.iter_mut().collect();
    solver
        .potrs_batched(Uplo::Lower, n, 1, &a_refs, n, &mut b_refs, n)
        .unwrap()
        .check()
        .unwrap();
    for b in &bs {
        assert!(max_diff(&b.to_vec().unwrap(), &x) < 1e-10);
    }
}

#[test]
fn strided_batches_factor_in_one_buffer_and_refuse_overlap() {
    let (d, _s, mut solver) = setup();
    let (n, count) = (6, 500);
    let one = spd(n, n);
    let mut host: Vec<f64> = (0..count).flat_map(|_| one.iter().copied()).collect();
    host[41 * n * n + 2 + 2 * n] = -50.0; // matrix 41's third diagonal element: order 3 fails
    let mut a = DeviceBuffer::from_slice(&d, &host).unwrap();
    let info = solver
        .potrf_strided_batched(Uplo::Upper, n, &mut a, n, (n * n, count))
        .unwrap();
    match info.check() {
        Err(Error::NoSolution {
            batch: Some(41),
            failure: SolverFailure::NotPositiveDefinite { order: 3 },
            ..
        }) => {}
        other => panic!("expected matrix 41 at order 3, got {other:?}"),
    }
    // The same batch again (the handle's table of addresses is reused): the same outcome.
    let factored = a.to_vec().unwrap();
    a.copy_from_host(&host).unwrap();
    let again = solver
        .potrf_strided_batched(Uplo::Upper, n, &mut a, n, (n * n, count))
        .unwrap();
    assert_eq!(again.values().unwrap(), info.values().unwrap());
    // Bit for bit (matrix 41's failed factor holds NaNs, which no float comparison calls equal).
    let bits = |v: Vec<f64>| v.into_iter().map(f64::to_bits).collect::<Vec<_>>();
    assert_eq!(bits(a.to_vec().unwrap()), bits(factored));
    // Matrix 0's factor (its upper triangle: cuSOLVER's batched Cholesky also writes the other one)
    // against the single call's.
    let mut single = DeviceBuffer::from_slice(&d, &one).unwrap();
    solver
        .potrf(Uplo::Upper, n, &mut single, n)
        .unwrap()
        .check()
        .unwrap();
    let (batched, single) = (a.to_vec().unwrap(), single.to_vec().unwrap());
    for j in 0..n {
        for i in 0..=j {
            assert_eq!(batched[i + j * n], single[i + j * n], "U({i}, {j})");
        }
    }
    // A stride shorter than a matrix would make two factorizations write the same elements.
    let e = solver
        .potrf_strided_batched(Uplo::Upper, n, &mut a, n, (n * n - 1, count))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                what: "potrf_strided_batched: one matrix",
                ..
            }
        ),
        "{e}"
    );
    let e = solver
        .potrf_strided_batched(Uplo::Upper, n, &mut a, n, (n * n, count + 1))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                what: "potrf_strided_batched: a",
                ..
            }
        ),
        "{e}"
    );
}

/// `potrs_batched` on 1000 matrices: every solution right, one `info` per matrix (all zero), and no
/// write outside the operands. Before the fix the call allocated one `info` int, which hipSOLVER's
/// rocSOLVER backend zeroes `batch_count` of (4000 bytes into the pool memory after it; on NVIDIA
/// cuSOLVER writes one, so there only the `info` length shows the old code: 1, not 1000). The memory
/// around is watched as far as a test can: the padding of each right-hand side, and small pool
/// buffers of the handle's stream filled with a marker, half of them freed just before so that the
/// call's own small allocations (its `info`) are likely to land between the others.
#[test]
fn potrs_batched_gives_every_matrix_its_info_and_writes_nothing_around() {
    let (d, s, mut solver) = setup();
    let (n, count, ldb) = (4, 1000, 7);
    let mats_host: Vec<Vec<f64>> = (0..count)
        .map(|k| spd_shifted(n, n, (k % 13) as f64))
        .collect();
    let xs: Vec<Vec<f64>> = (0..count)
        .map(|k| (0..n).map(|i| (i + k % 7) as f64 - 2.5).collect())
        .collect();
    let mut mats: Vec<DeviceBuffer<f64>> = mats_host
        .iter()
        .map(|a| DeviceBuffer::from_slice(&d, a).unwrap())
        .collect();
    let mut refs: Vec<&mut DeviceBuffer<f64>> = mats.iter_mut().collect();
    solver
        .potrf_batched(Uplo::Lower, n, &mut refs, n)
        .unwrap()
        .check()
        .unwrap();
    // Right-hand sides with leading dimension 7: rows 4..7 are padding, marked.
    let mut bs: Vec<DeviceBuffer<f64>> = (0..count)
        .map(|k| {
            let mut b = vec![-555.0; ldb];
            b[..n].copy_from_slice(&matvec(&mats_host[k], n, n, n, &xs[k]));
            DeviceBuffer::from_slice(&d, &b).unwrap()
        })
        .collect();
    // Canaries in the stream's pool: 128 small buffers marked -7, every other one freed again.
    let mut canaries: Vec<DeviceBuffer<i32>> = (0..128)
        .map(|_| {
            // SAFETY: filled on the same stream right after, before anything reads it.
            let mut c = unsafe { DeviceBuffer::<i32>::alloc_async(&s, 1) }.unwrap();
            s.fill_async(&mut c, -7).unwrap();
            c
        })
        .collect();
    let kept: Vec<DeviceBuffer<i32>> = canaries
        .drain(..)
        .enumerate()
        .filter_map(|(i, c)| (i % 2 == 1).then_some(c))
        .collect();
    let a_refs: Vec<&DeviceBuffer<f64>> = mats.iter().collect();
    let mut b_refs: Vec<&mut DeviceBuffer<f64>> = bs.iter_mut().collect();
    let info = solver
        .potrs_batched(Uplo::Lower, n, 1, &a_refs, n, &mut b_refs, ldb)
        .unwrap();
    let values = info.values().unwrap();
    assert_eq!(values.len(), count, "one info per matrix");
    assert!(values.iter().all(|&v| v == 0), "{values:?}");
    info.check().unwrap();
    for (k, b) in bs.iter().enumerate() {
        let got = b.to_vec().unwrap();
        assert!(
            max_diff(&got[..n], &xs[k]) < 1e-10,
            "matrix {k}: {:?}",
            &got[..n]
        );
        assert!(
            got[n..].iter().all(|&v| v == -555.0),
            "matrix {k}'s padding was written: {got:?}"
        );
    }
    for (i, c) in kept.iter().enumerate() {
        assert_eq!(c.to_vec().unwrap(), [-7], "canary {i} was written");
    }
}
