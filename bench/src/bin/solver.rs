//! Dense solvers and sparse products: safe `hip::solver` / `hip::sparse` against raw C++ through the same
//! hipSOLVER and hipSPARSE (bench/baseline/solver_baseline.cpp), on the same stream and the same device
//! data, timed with events. Then the host time of one small call, safe against the same C function called
//! raw through the sys crate.
//!
//! ```text
//! solver --baseline libhiprs_solver_baseline.so [--quick] [--host-only]
//! ```
//! Each dense repetition restores the input (a device copy, on both sides) and factors it; each row is the
//! median of five rounds (sides alternating), ms per repetition, and `safe/raw` is the median of the
//! per-round throughput ratios (raw ms / safe ms: above 1 the safe side is faster). `--quick`: the small
//! sizes only; `--host-only`: the host-cost rows only (bench/src/math_host.rs: potrf, getrf, SpMV).
use hip::prelude::*;
use hip::solver::{Eigen, Handle as Solver, Uplo};
use hip::sparse::{Csr, Handle as Sparse, Op};
#[path = "../baseline_arg.rs"]
mod baseline_arg;
#[path = "../math_host.rs"]
mod math_host;
#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;
use stats::median;
use std::ffi::{c_char, c_int, c_void, CStr};

type Dense = unsafe extern "C" fn(
    *mut c_void,
    c_int,
    c_int,
    *const c_void,
    *mut c_void,
    c_int,
    c_int,
) -> f64;
type Syevd = unsafe extern "C" fn(
    *mut c_void,
    c_int,
    c_int,
    *const c_void,
    *mut c_void,
    c_int,
    *mut c_void,
    c_int,
) -> f64;
type Batched = unsafe extern "C" fn(
    *mut c_void,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *mut c_void,
    c_int,
) -> f64;
type Spmv = unsafe extern "C" fn(
    *mut c_void,
    c_int,
    i64,
    i64,
    i64,
    *const c_int,
    *const c_int,
    *const c_void,
    *const c_void,
    *mut c_void,
    c_int,
) -> f64;
type Spmm = unsafe extern "C" fn(
    *mut c_void,
    c_int,
    i64,
    i64,
    i64,
    *const c_int,
    *const c_int,
    *const c_void,
    c_int,
    *const c_void,
    *mut c_void,
    c_int,
) -> f64;
type Shape = unsafe extern "C" fn(c_int, c_int, *mut i64, *mut i64, *mut i64) -> c_int;
type Fill = unsafe extern "C" fn(c_int, c_int, *mut c_int, *mut c_int, *mut f64) -> c_int;
type SpdFill = unsafe extern "C" fn(c_int, c_int, *mut f64);

/// The baseline library's functions and its context on our stream.
struct Raw {
    lib: libloading::Library,
    ctx: *mut c_void,
}

impl Raw {
    fn open(path: &str, stream: &Stream) -> Result<Raw, String> {
        // SAFETY: the baseline library runs no code at load beyond C++ static initialisation.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| format!("{path}: {e}"))?;
        // SAFETY: the baseline's documented signature; `stream.raw()` is live for the whole run.
        let ctx = unsafe {
            let create: libloading::Symbol<unsafe extern "C" fn(*mut c_void) -> *mut c_void> = lib
                .get(b"hiprs_solver_baseline_create")
                .map_err(|e| e.to_string())?;
            create(stream.raw().cast())
        };
        if ctx.is_null() {
            return Err("hiprs_solver_baseline_create failed".into());
        }
        Ok(Raw { lib, ctx })
    }

    fn get<F: Copy>(&self, name: &str) -> F {
        // SAFETY: every name below is declared with its documented signature (the file header of
        // solver_baseline.cpp).
        unsafe {
            *self
                .lib
                .get::<F>(name.as_bytes())
                .unwrap_or_else(|e| panic!("{name}: {e}"))
        }
    }

    fn check(&self, what: &str, ms: f64) -> Result<f64, String> {
        if ms >= 0.0 {
            return Ok(ms);
        }
        let error: unsafe extern "C" fn(*mut c_void) -> *const c_char =
            self.get("hiprs_solver_baseline_error");
        // SAFETY: the context is live; the message is a C string it owns.
        let msg = unsafe { CStr::from_ptr(error(self.ctx)) }
            .to_string_lossy()
            .into_owned();
        Err(format!("raw {what}: {ms} ({msg})"))
    }
}

/// Rounds of (raw, safe) ms per repetition, alternating which goes first: medians and the median ratio.
fn paired(
    rounds: usize,
    mut raw: impl FnMut() -> Result<f64, String>,
    mut safe: impl FnMut() -> Result<f64, String>,
) -> Result<(f64, f64, f64), String> {
    let (mut r, mut s, mut ratio) = (vec![], vec![], vec![]);
    for round in 0..rounds {
        let (a, b) = if round % 2 == 0 {
            (raw()?, safe()?)
        } else {
            let b = safe()?;
            (raw()?, b)
        };
        r.push(a);
        s.push(b);
        ratio.push(a / b);
    }
    Ok((median(&r), median(&s), median(&ratio)))
}

/// ms per repetition of `body` on `stream`, after one untimed repetition.
fn timed(
    stream: &Stream,
    reps: usize,
    mut body: impl FnMut() -> hip::Result<()>,
) -> Result<f64, String> {
    let e = |x: hip::Error| x.to_string();
    body().map_err(e)?;
    let (start, end) = (
        Event::with_timing(stream.device()).map_err(e)?,
        Event::with_timing(stream.device()).map_err(e)?,
    );
    start.record(stream).map_err(e)?;
    for _ in 0..reps {
        body().map_err(e)?;
    }
    end.record(stream).map_err(e)?;
    end.synchronize().map_err(e)?;
    Ok(start.elapsed_ms(&end).map_err(e)? as f64 / reps as f64)
}

fn row(op: &str, ty: &str, size: &str, (raw, safe, ratio): (f64, f64, f64)) {
    println!("| {op} | {ty} | {size} | {raw:.3} | {safe:.3} | {ratio:.3} |");
}

fn run(baseline: &str) -> Result<(), String> {
    let quick = std::env::args().any(|a| a == "--quick");
    let e = |x: hip::Error| x.to_string();
    let device = Device::get(0).map_err(e)?;
    let stream = Stream::new(&device).map_err(e)?;
    let raw = Raw::open(baseline, &stream)?;
    let mut solver = Solver::new(&stream).map_err(e)?;
    let mut sparse = Sparse::new(&stream).map_err(e)?;
    println!(
        "device: {} (hipSOLVER {:?}, hipSPARSE {:?})",
        device.properties().map_err(e)?.name,
        hip::solver::HEADER_VERSION,
        hip::sparse::HEADER_VERSION
    );
    if std::env::args().any(|a| a == "--host-only") {
        return host_costs(&stream, &mut solver, &mut sparse);
    }
    println!();
    println!("| call | type | size | raw C++ ms | safe ms | safe/raw |");
    println!("| --- | --- | --- | --- | --- | --- |");
    let spd_fill: SpdFill = raw.get("hiprs_solver_baseline_spd_fill");
    let sizes: &[usize] = if quick {
        &[1024]
    } else {
        &[1024, 2048, 4096, 8192]
    };
    for &n in sizes {
        let mut host = vec![0.0f64; n * n];
        // SAFETY: `host` holds one n x n matrix.
        unsafe { spd_fill(n as c_int, 1, host.as_mut_ptr()) };
        let a0 = DeviceBuffer::from_slice(&device, &host).map_err(e)?;
        let mut a = DeviceBuffer::<f64>::zeroed(&device, n * n).map_err(e)?;
        let mut ipiv = DeviceBuffer::<i32>::zeroed(&device, n).map_err(e)?;
        let reps = if n >= 4096 { 3 } else { 10 };
        let (pa0, pa) = (a0.device_ptr(), a.device_ptr());
        for (name, f) in [
            ("potrf", "hiprs_solver_baseline_potrf"),
            ("getrf", "hiprs_solver_baseline_getrf"),
        ] {
            let call: Dense = raw.get(f);
            let result = paired(
                5,
                // SAFETY: a0 and a hold n x n f64 on the context's device, idle on this stream.
                || {
                    raw.check(name, unsafe {
                        call(raw.ctx, 1, n as c_int, pa0, pa, n as c_int, reps as c_int)
                    })
                },
                || {
                    timed(&stream, reps, || {
                        stream.copy_device_async(&a0, &mut a)?;
                        if name == "potrf" {
                            drop(solver.potrf(Uplo::Lower, n, &mut a, n)?);
                        } else {
                            drop(solver.getrf(n, n, &mut a, n, &mut ipiv)?);
                        }
                        Ok(())
                    })
                },
            )?;
            row(name, "f64", &n.to_string(), result);
        }
        {
            let call: Syevd = raw.get("hiprs_solver_baseline_syevd");
            let mut w = DeviceBuffer::<f64>::zeroed(&device, n).map_err(e)?;
            let reps = if n >= 4096 { 1 } else { 3 };
            let pw = w.device_ptr();
            let result = paired(
                3,
                // SAFETY: as above; w holds n f64.
                || {
                    raw.check("syevd", unsafe {
                        call(
                            raw.ctx,
                            1,
                            n as c_int,
                            pa0,
                            pa,
                            n as c_int,
                            pw,
                            reps as c_int,
                        )
                    })
                },
                || {
                    timed(&stream, reps, || {
                        stream.copy_device_async(&a0, &mut a)?;
                        drop(solver.syevd(Eigen::Vectors, Uplo::Lower, n, &mut a, n, &mut w)?);
                        Ok(())
                    })
                },
            )?;
            row("syevd", "f64", &n.to_string(), result);
        }
    }
    // Many small matrices.
    let (n, batch) = (8, 10_000);
    let mut host = vec![0.0f64; n * n * batch];
    // SAFETY: `host` holds `batch` n x n matrices.
    unsafe { spd_fill(n as c_int, batch as c_int, host.as_mut_ptr()) };
    let a0 = DeviceBuffer::from_slice(&device, &host).map_err(e)?;
    let mut a = DeviceBuffer::<f64>::zeroed(&device, host.len()).map_err(e)?;
    let call: Batched = raw.get("hiprs_solver_baseline_potrf_batched");
    let (pa0, pa) = (a0.device_ptr(), a.device_ptr());
    let result = paired(
        5,
        // SAFETY: a0 and a hold `batch` n x n f64.
        || {
            raw.check("potrf_batched", unsafe {
                call(raw.ctx, 1, n as c_int, batch as c_int, pa0, pa, 20)
            })
        },
        || {
            timed(&stream, 20, || {
                stream.copy_device_async(&a0, &mut a)?;
                drop(solver.potrf_strided_batched(Uplo::Lower, n, &mut a, n, (n * n, batch))?);
                Ok(())
            })
        },
    )?;
    row(
        "potrf_batched",
        "f64",
        &format!("{batch} x {n}x{n}"),
        result,
    );

    // Sparse: a large random CSR and a 2D Laplacian.
    let shape: Shape = raw.get("hiprs_solver_baseline_csr_shape");
    let fill: Fill = raw.get("hiprs_solver_baseline_csr_fill");
    let spmv: Spmv = raw.get("hiprs_solver_baseline_spmv");
    let spmm: Spmm = raw.get("hiprs_solver_baseline_spmm");
    let matrices: &[(c_int, c_int, &str)] = if quick {
        &[
            (0, 100_000, "random 100k, 16/row"),
            (1, 256, "Laplacian 256^2"),
        ]
    } else {
        &[
            (0, 1_000_000, "random 1M, 16/row"),
            (1, 2048, "Laplacian 2048^2"),
        ]
    };
    for &(matrix, size, label) in matrices {
        let (mut rows, mut cols, mut nnz) = (0i64, 0i64, 0i64);
        // SAFETY: three valid out-pointers.
        unsafe { shape(matrix, size, &mut rows, &mut cols, &mut nnz) };
        let (mut offsets, mut indices, mut values) = (
            vec![0i32; rows as usize + 1],
            vec![0i32; nnz as usize],
            vec![0f64; nnz as usize],
        );
        // SAFETY: the arrays have the sizes csr_shape gave.
        unsafe {
            fill(
                matrix,
                size,
                offsets.as_mut_ptr(),
                indices.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        let a = Csr::from_host(
            &device,
            rows as usize,
            cols as usize,
            &offsets,
            &indices,
            &values,
        )
        .map_err(e)?;
        let x = DeviceBuffer::from_slice(&device, &vec![1.0f64; cols as usize]).map_err(e)?;
        let mut y = DeviceBuffer::<f64>::zeroed(&device, rows as usize).map_err(e)?;
        let (px, py) = (x.device_ptr(), y.device_ptr());
        let ptrs = (
            a.offsets().device_ptr().cast::<c_int>(),
            a.indices().device_ptr().cast::<c_int>(),
            a.values().device_ptr(),
        );
        let result = paired(
            5,
            // SAFETY: the CSR arrays, x and y are live device buffers of the sizes given.
            || {
                raw.check("spmv", unsafe {
                    spmv(
                        raw.ctx, 1, rows, cols, nnz, ptrs.0, ptrs.1, ptrs.2, px, py, 50,
                    )
                })
            },
            || timed(&stream, 50, || sparse.spmv(Op::N, 1.0, &a, &x, 0.0, &mut y)),
        )?;
        row("SpMV", "f64", label, result);
        let k = 8;
        let b = DeviceBuffer::from_slice(&device, &vec![1.0f64; cols as usize * k]).map_err(e)?;
        let mut c = DeviceBuffer::<f64>::zeroed(&device, rows as usize * k).map_err(e)?;
        let (pb, pc) = (b.device_ptr(), c.device_ptr());
        let result = paired(
            5,
            // SAFETY: as above; b and c hold cols x k and rows x k.
            || {
                raw.check("spmm", unsafe {
                    spmm(
                        raw.ctx, 1, rows, cols, nnz, ptrs.0, ptrs.1, ptrs.2, k as c_int, pb, pc, 20,
                    )
                })
            },
            || {
                timed(&stream, 20, || {
                    sparse.spmm(
                        Op::N,
                        1.0,
                        &a,
                        (&b, k, cols as usize),
                        0.0,
                        (&mut c, rows as usize),
                    )
                })
            },
        )?;
        row("SpMM (8 columns)", "f64", label, result);
    }
    host_costs(&stream, &mut solver, &mut sparse)
}

/// The host-cost rows (`math_host`); an error when one misses its target, after all are printed.
fn host_costs(stream: &Stream, solver: &mut Solver, sparse: &mut Sparse) -> Result<(), String> {
    if math_host::run(stream, solver, sparse)? {
        Ok(())
    } else {
        Err("a host-cost row missed its target (above)".into())
    }
}

fn main() {
    baseline_arg::main("solver", "libhiprs_solver_baseline.so", run);
}
