//! hip::sparse on a device, checked against host arithmetic: SpMV (CSR and COO, transposed, complex),
//! SpMM with padded leading dimensions, SpGEMM, the CSR/COO/dense conversions, wrong shapes and broken
//! structures refused with nothing written, one handle moved between two streams, and a graph launch
//! that cannot rewrite a checked matrix's indices. Compiled only with `--features gpu,sparse`.
#![cfg(all(feature = "gpu", feature = "sparse"))]
mod common;

use common::dense::max_diff;
use common::device;
use hip::prelude::*;
use hip::sparse::{Complex32, Coo, Csr, Handle, Op};
use hip::Error;

/// A deterministic `rows x cols` sparse matrix, about `per_row` entries a row, as CSR arrays with sorted
/// columns, and its dense column-major form.
fn random(
    rows: usize,
    cols: usize,
    per_row: usize,
    seed: u64,
) -> (Vec<i32>, Vec<i32>, Vec<f64>, Vec<f64>) {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    let (mut offsets, mut indices, mut values) = (vec![0i32], vec![], vec![]);
    let mut dense = vec![0.0; rows * cols];
    for i in 0..rows {
        let mut cols_here: Vec<usize> = (0..per_row).map(|_| next() % cols).collect();
        cols_here.sort_unstable();
        cols_here.dedup();
        for j in cols_here {
            // Never zero: a dense round trip keeps exactly these entries.
            let v = ((next() % 16) as f64 + 1.0) / 4.0 - 2.125;
            indices.push(j as i32);
            values.push(v);
            dense[i + j * rows] = v;
        }
        offsets.push(indices.len() as i32);
    }
    (offsets, indices, values, dense)
}

/// `op(A) x` on the host for a dense column-major `rows x cols` `A`.
fn host_mv(a: &[f64], rows: usize, cols: usize, transpose: bool, x: &[f64]) -> Vec<f64> {
    if transpose {
        (0..cols)
            .map(|j| (0..rows).map(|i| a[i + j * rows] * x[i]).sum())
            .collect()
    } else {
        (0..rows)
            .map(|i| (0..cols).map(|j| a[i + j * rows] * x[j]).sum())
            .collect()
    }
}

/// The `n x n` shift matrix, `(A x)[i] = x[i + 1]`, and the ramp `x[i] = i` on the device: after `k`
/// products, element `i` holds `i + k` (for `i < n - k`), so an unordered product shows.
fn shift_and_ramp(d: &Device, n: usize) -> (Csr<f64>, DeviceBuffer<f64>) {
    let offsets: Vec<i32> = (0..=n as i32).map(|i| i.min(n as i32 - 1)).collect();
    let indices: Vec<i32> = (1..n as i32).collect();
    let a = Csr::from_host(d, n, n, &offsets, &indices, &vec![1.0f64; n - 1]).unwrap();
    let x: Vec<f64> = (0..n).map(|i| i as f64).collect();
    (a, DeviceBuffer::from_slice(d, &x).unwrap())
}

fn setup() -> (Device, Stream, Handle) {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let h = Handle::new(&s).unwrap();
    (d, s, h)
}

#[test]
fn spmv_matches_the_host_for_csr_coo_and_the_transpose() {
    let (d, _s, mut sparse) = setup();
    let (m, n) = (1000, 800);
    let (offsets, indices, values, dense) = random(m, n, 12, 1);
    let a = Csr::from_host(&d, m, n, &offsets, &indices, &values).unwrap();
    let x: Vec<f64> = (0..n.max(m)).map(|i| (i % 13) as f64 - 6.0).collect();
    let dx = DeviceBuffer::from_slice(&d, &x).unwrap();
    let y0: Vec<f64> = (0..m.max(n)).map(|i| (i % 5) as f64).collect();
    // y = 2 A x + 0.5 y: f64 sums of at most 12 small terms, exact to 1e-12.
    let mut dy = DeviceBuffer::from_slice(&d, &y0).unwrap();
    sparse.spmv(Op::N, 2.0, &a, &dx, 0.5, &mut dy).unwrap();
    let want: Vec<f64> = host_mv(&dense, m, n, false, &x[..n])
        .iter()
        .zip(&y0)
        .map(|(ax, y)| 2.0 * ax + 0.5 * y)
        .collect();
    let got = dy.to_vec().unwrap();
    assert!(max_diff(&got[..m], &want) < 1e-12);
    assert_eq!(&got[m..], &y0[m..], "spmv wrote past op(A)'s rows");
    // The transpose, and the same through COO.
    let coo = a.to_coo(&mut sparse).unwrap();
    for (name, t) in [("csr", true), ("coo", true), ("coo", false)] {
        let mut dy = DeviceBuffer::<f64>::zeroed(&d, m.max(n)).unwrap();
        let op = if t { Op::T } else { Op::N };
        if name == "csr" {
            sparse.spmv(op, 1.0, &a, &dx, 0.0, &mut dy).unwrap();
        } else {
            sparse.spmv(op, 1.0, &coo, &dx, 0.0, &mut dy).unwrap();
        }
        let (xn, yn) = if t { (m, n) } else { (n, m) };
        let want = host_mv(&dense, m, n, t, &x[..xn]);
        assert!(
            max_diff(&dy.to_vec().unwrap()[..yn], &want) < 1e-12,
            "{name} transpose {t}"
        );
    }
}

#[test]
fn complex_spmv_conjugates_for_op_c() {
    let (d, _s, mut sparse) = setup();
    let c = |re, im| Complex32::new(re, im);
    // [[1+i, 0], [2, -i]]
    let a = Csr::from_host(
        &d,
        2,
        2,
        &[0, 1, 3],
        &[0, 0, 1],
        &[c(1.0, 1.0), c(2.0, 0.0), c(0.0, -1.0)],
    )
    .unwrap();
    let x = DeviceBuffer::from_slice(&d, &[c(1.0, 0.0), c(0.0, 1.0)]).unwrap();
    let mut y = DeviceBuffer::<Complex32>::zeroed(&d, 2).unwrap();
    sparse
        .spmv(Op::N, c(1.0, 0.0), &a, &x, c(0.0, 0.0), &mut y)
        .unwrap();
    assert_eq!(y.to_vec().unwrap(), [c(1.0, 1.0), c(3.0, 0.0)]);
    // A^H x = [[1-i, 2], [0, i]] x = [1 - i + 2i, i * i] = [1 + i, -1].
    sparse
        .spmv(Op::C, c(1.0, 0.0), &a, &x, c(0.0, 0.0), &mut y)
        .unwrap();
    assert_eq!(y.to_vec().unwrap(), [c(1.0, 1.0), c(-1.0, 0.0)]);
}

#[test]
fn spmm_with_padded_leading_dimensions_matches_the_host() {
    let (d, _s, mut sparse) = setup();
    let (m, k, n) = (300, 200, 7);
    let (offsets, indices, values, dense) = random(m, k, 9, 2);
    let values32: Vec<f32> = values.iter().map(|&v| v as f32).collect();
    let a = Csr::from_host(&d, m, k, &offsets, &indices, &values32).unwrap();
    let (ldb, ldc) = (k + 3, m + 5);
    let b: Vec<f32> = (0..ldb * n).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
    let db = DeviceBuffer::from_slice(&d, &b).unwrap();
    let mut dc = DeviceBuffer::from_slice(&d, &vec![-9.0f32; ldc * n]).unwrap();
    sparse
        .spmm(Op::N, 1.0, &a, (&db, n, ldb), 0.0, (&mut dc, ldc))
        .unwrap();
    let got = dc.to_vec().unwrap();
    for j in 0..n {
        let col: Vec<f64> = (0..k).map(|p| b[p + j * ldb] as f64).collect();
        let want = host_mv(&dense, m, k, false, &col);
        let have: Vec<f64> = (0..m).map(|i| got[i + j * ldc] as f64).collect();
        // f32 sums of at most 9 products of small integers and quarters: exact.
        assert_eq!(max_diff(&have, &want), 0.0, "column {j}");
        assert!(
            got[m + j * ldc..(j + 1) * ldc].iter().all(|&v| v == -9.0),
            "padding of column {j} written"
        );
    }
}

#[test]
fn spgemm_matches_the_dense_product() {
    let (d, _s, mut sparse) = setup();
    let (m, k, n) = (60, 50, 40);
    let (ao, ai, av, ad) = random(m, k, 6, 3);
    let (bo, bi, bv, bd) = random(k, n, 5, 4);
    let a = Csr::from_host(&d, m, k, &ao, &ai, &av).unwrap();
    let b = Csr::from_host(&d, k, n, &bo, &bi, &bv).unwrap();
    let c = sparse.spgemm(&a, &b).unwrap();
    assert_eq!((c.rows(), c.cols()), (m, n));
    let mut dense = DeviceBuffer::<f64>::zeroed(&d, m * n).unwrap();
    c.to_dense(&mut sparse, &mut dense, m).unwrap();
    let got = dense.to_vec().unwrap();
    for j in 0..n {
        let col: Vec<f64> = (0..k).map(|p| bd[p + j * k]).collect();
        let want = host_mv(&ad, m, k, false, &col);
        assert!(
            max_diff(&got[j * m..(j + 1) * m], &want) < 1e-12,
            "column {j}"
        );
    }
    // The structure the library built is a valid CSR (checked on the host).
    let (o, i, v) = c.to_host().unwrap();
    let again = Csr::from_host(&d, m, n, &o, &i, &v);
    assert!(again.is_ok(), "{:?}", again.err());
}

#[test]
fn conversions_round_trip_through_coo_and_dense() {
    let (d, _s, mut sparse) = setup();
    let (m, n) = (40, 30);
    let (offsets, indices, values, dense) = random(m, n, 4, 5);
    let a = Csr::from_host(&d, m, n, &offsets, &indices, &values).unwrap();
    let coo = a.to_coo(&mut sparse).unwrap();
    let (rows, cols, vals) = coo.to_host().unwrap();
    for r in 0..m {
        for k in offsets[r] as usize..offsets[r + 1] as usize {
            assert_eq!(
                (rows[k], cols[k], vals[k]),
                (r as i32, indices[k], values[k])
            );
        }
    }
    let back = coo.to_csr(&mut sparse).unwrap();
    assert_eq!(
        back.to_host().unwrap(),
        (offsets.clone(), indices.clone(), values.clone())
    );
    // Dense, with a padded leading dimension, and back to CSR.
    let ld = m + 2;
    let mut out = DeviceBuffer::from_slice(&d, &vec![7.0f64; ld * n]).unwrap();
    a.to_dense(&mut sparse, &mut out, ld).unwrap();
    let got = out.to_vec().unwrap();
    for j in 0..n {
        assert_eq!(&got[j * ld..j * ld + m], &dense[j * m..(j + 1) * m]);
        assert_eq!(&got[j * ld + m..(j + 1) * ld], &[7.0, 7.0]);
    }
    let from = Csr::from_dense(&mut sparse, &out, m, n, ld).unwrap();
    assert_eq!(from.to_host().unwrap(), (offsets, indices, values));
}

#[test]
fn wrong_shapes_and_broken_structures_are_refused_with_nothing_written() {
    let (d, _s, mut sparse) = setup();
    let a = Csr::from_host(&d, 2, 3, &[0, 2, 3], &[0, 2, 1], &[2.0f32, 1.0, 3.0]).unwrap();
    let short = DeviceBuffer::from_slice(&d, &[1.0f32, 1.0]).unwrap();
    let mut y = DeviceBuffer::from_slice(&d, &[5.0f32, 5.0]).unwrap();
    let e = sparse
        .spmv(Op::N, 1.0, &a, &short, 0.0, &mut y)
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                what: "spmv: x",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(y.to_vec().unwrap(), [5.0, 5.0]);
    // Indices built on the device are read back and checked.
    let offsets = DeviceBuffer::from_slice(&d, &[0, 1, 2]).unwrap();
    let bad = DeviceBuffer::from_slice(&d, &[0, 3]).unwrap();
    let values = DeviceBuffer::from_slice(&d, &[1.0f32, 1.0]).unwrap();
    let e = Csr::from_device(2, 3, offsets, bad, values).err().unwrap();
    assert!(e.to_string().contains("column index 3"), "{e}");
    let e = Coo::from_host(&d, 2, 2, &[1, 0], &[0, 0], &[1.0f32, 1.0])
        .err()
        .unwrap();
    assert!(e.to_string().contains("sorted by row"), "{e}");
}

#[test]
fn one_handle_on_two_streams_keeps_program_order() {
    let (d, _s1, mut sparse) = setup();
    let s2 = Stream::new(&d).unwrap();
    let n = 100_000;
    let (a, dx) = shift_and_ramp(&d, n);
    let mut y = DeviceBuffer::<f64>::zeroed(&d, n).unwrap();
    let mut z = DeviceBuffer::<f64>::zeroed(&d, n).unwrap();
    sparse.spmv(Op::N, 1.0, &a, &dx, 0.0, &mut y).unwrap();
    sparse.set_stream(&s2).unwrap();
    sparse.spmv(Op::N, 1.0, &a, &y, 0.0, &mut z).unwrap();
    let z = z.to_vec().unwrap();
    assert!((0..n - 2).all(|i| z[i] == (i + 2) as f64));
    assert_eq!(&z[n - 2..], &[0.0, 0.0]);
}

#[test]
fn each_product_sees_the_vector_the_host_just_copied_in() {
    let (d, _s, mut sparse) = setup();
    // The 5-point Laplacian of a 16 x 16 grid, as examples/sparse.rs builds it.
    let g = 16;
    let n = g * g;
    let (mut offsets, mut indices, mut values) = (vec![0i32], vec![], vec![]);
    for r in 0..g {
        for c in 0..g {
            let mut row = vec![(r * g + c, 4.0)];
            if r > 0 {
                row.push(((r - 1) * g + c, -1.0));
            }
            if r + 1 < g {
                row.push(((r + 1) * g + c, -1.0));
            }
            if c > 0 {
                row.push((r * g + c - 1, -1.0));
            }
            if c + 1 < g {
                row.push((r * g + c + 1, -1.0));
            }
            row.sort_by_key(|e| e.0);
            for (j, v) in row {
                indices.push(j as i32);
                values.push(v);
            }
            offsets.push(indices.len() as i32);
        }
    }
    let a = Csr::from_host(&d, n, n, &offsets, &indices, &values).unwrap();
    let host_mv = |x: &[f64]| -> Vec<f64> {
        (0..n)
            .map(|i| {
                (offsets[i] as usize..offsets[i + 1] as usize)
                    .map(|k| values[k] * x[indices[k] as usize])
                    .sum()
            })
            .collect()
    };
    let mut x: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64 / 8.0).collect();
    let mut dx = DeviceBuffer::from_slice(&d, &x).unwrap();
    let mut dy = DeviceBuffer::<f64>::zeroed(&d, n).unwrap();
    for step in 0..200 {
        sparse.spmv(Op::N, 1.0, &a, &dx, 0.0, &mut dy).unwrap();
        let y = dy.to_vec().unwrap();
        let want = host_mv(&x);
        assert!(
            max_diff(&y, &want) < 1e-12,
            "step {step}: {}",
            max_diff(&y, &want)
        );
        let norm = y.iter().map(|v| v * v).sum::<f64>().sqrt();
        x = y.iter().map(|v| v / norm).collect();
        dx.copy_from_host(&x).unwrap();
    }
}

/// The attack a review found: a graph captures a copy into a buffer, the buffer becomes a checked
/// matrix's index array, and each launch of the graph writes `[0, 1000000, 1000000]` into it (for COO:
/// a row index of 1000000), no `unsafe` anywhere. `from_device` checks copies only the matrix holds
/// (see `Csr::from_device`), so the launches write the given buffers, never the matrix's: its indices
/// stay the checked ones, and SpMV and the conversions stay in bounds with the checked matrix's results.
/// On the old code (checked in place) the first assertion sees the hostile offsets.
#[test]
fn a_graph_launch_cannot_rewrite_a_checked_matrix() {
    let (d, _s, mut sparse) = setup();
    let replay = Stream::new(&d).unwrap();
    // [[2, 0, 1], [0, 3, 0]]
    let (offsets, indices, values) = ([0i32, 2, 3], [0i32, 2, 1], [2.0f64, 1.0, 3.0]);
    let hostile = DeviceBuffer::from_slice(&d, &[0i32, 1_000_000, 1_000_000]).unwrap();
    let mut target = DeviceBuffer::from_slice(&d, &offsets).unwrap();
    let capture = replay.begin_capture(CaptureMode::ThreadLocal).unwrap();
    replay.copy_device_async(&hostile, &mut target).unwrap();
    let mut exec = capture.end().unwrap().instantiate().unwrap();
    let a = Csr::from_device(
        2,
        3,
        target,
        DeviceBuffer::from_slice(&d, &indices).unwrap(),
        DeviceBuffer::from_slice(&d, &values).unwrap(),
    )
    .unwrap();
    // The same for COO: a graph that writes a row index far past the rows.
    let hostile_rows = DeviceBuffer::from_slice(&d, &[0i32, 0, 1_000_000]).unwrap();
    let mut rows = DeviceBuffer::from_slice(&d, &[0i32, 0, 1]).unwrap();
    let capture = replay.begin_capture(CaptureMode::ThreadLocal).unwrap();
    replay.copy_device_async(&hostile_rows, &mut rows).unwrap();
    let mut coo_exec = capture.end().unwrap().instantiate().unwrap();
    let c = Coo::from_device(
        2,
        3,
        rows,
        DeviceBuffer::from_slice(&d, &indices).unwrap(),
        DeviceBuffer::from_slice(&d, &values).unwrap(),
    )
    .unwrap();
    for _ in 0..3 {
        exec.launch(&replay).unwrap();
        coo_exec.launch(&replay).unwrap();
    }
    replay.synchronize().unwrap();
    assert_eq!(
        a.to_host().unwrap().0,
        offsets,
        "the CSR offsets were rewritten"
    );
    assert_eq!(
        c.to_host().unwrap().0,
        [0, 0, 1],
        "the COO rows were rewritten"
    );
    // The products and conversions see the checked structure.
    let x = DeviceBuffer::from_slice(&d, &[1.0f64, 1.0, 1.0]).unwrap();
    let mut y = DeviceBuffer::<f64>::zeroed(&d, 2).unwrap();
    sparse.spmv(Op::N, 1.0, &a, &x, 0.0, &mut y).unwrap();
    assert_eq!(y.to_vec().unwrap(), [3.0, 3.0]);
    sparse.spmv(Op::N, 1.0, &c, &x, 0.0, &mut y).unwrap();
    assert_eq!(y.to_vec().unwrap(), [3.0, 3.0]);
    let (coo_rows, coo_cols, coo_values) = a.to_coo(&mut sparse).unwrap().to_host().unwrap();
    assert_eq!(
        (coo_rows, coo_cols, coo_values),
        (vec![0, 0, 1], indices.to_vec(), values.to_vec())
    );
    assert_eq!(c.to_csr(&mut sparse).unwrap().to_host().unwrap().0, offsets);
    // Launching again after the matrices were used changes nothing either.
    exec.launch(&replay).unwrap();
    replay.synchronize().unwrap();
    assert_eq!(a.to_host().unwrap().0, offsets);
}

/// Issue 55: a graph that captured an SpMV keeps the hipSPARSE handle alive (it did not: only BLAS and
/// BLASLt handles were kept), and its replays and the handle's live calls on another stream are ordered
/// by the handle's use record: a replay after the handle was dropped gives the captured product, and a
/// live call queued while a replay runs sees the replay's output.
#[test]
fn a_graph_keeps_the_sparse_handle_and_orders_with_its_live_calls() {
    let (d, _s, mut sparse) = setup();
    let capture_on = Stream::new(&d).unwrap();
    let n = 100_000;
    let (a, dx) = shift_and_ramp(&d, n);
    let mut y = DeviceBuffer::<f64>::zeroed(&d, n).unwrap();
    let mut z = DeviceBuffer::<f64>::zeroed(&d, n).unwrap();
    // Warm the handle's scratch buffer outside the capture (a capture refuses allocations).
    sparse.spmv(Op::N, 1.0, &a, &dx, 0.0, &mut y).unwrap();
    sparse.set_stream(&capture_on).unwrap();
    let capture = capture_on.begin_capture(CaptureMode::ThreadLocal).unwrap();
    sparse.spmv(Op::N, 1.0, &a, &dx, 0.0, &mut y).unwrap();
    let mut exec = capture.end().unwrap().instantiate().unwrap();
    let live = Stream::new(&d).unwrap();
    sparse.set_stream(&live).unwrap();
    y.copy_from_host(&vec![-1.0; n]).unwrap();
    exec.launch(&capture_on).unwrap();
    // Live on another stream while the replay may still run: y is ordered by the memory model, the
    // handle's scratch buffer and state by the use record.
    sparse.spmv(Op::N, 1.0, &a, &y, 0.0, &mut z).unwrap();
    let z_host = z.to_vec().unwrap();
    assert!((0..n - 2).all(|i| z_host[i] == (i + 2) as f64));
    drop(sparse);
    y.copy_from_host(&vec![-1.0; n]).unwrap();
    for _ in 0..3 {
        exec.launch(&capture_on).unwrap();
    }
    let y_host = y.to_vec().unwrap();
    assert!((0..n - 1).all(|i| y_host[i] == (i + 1) as f64));
}
