//! GEMM throughput and per-call host cost: safe `hip::blas` against raw C++ through hipBLAS
//! (bench/baseline/blas_baseline.cpp, on the safe side's own handle: same stream, same buffers, same cuBLAS
//! state) and, with the `cudarc` feature, cudarc's cuBLAS (its own stream and buffers in the same primary
//! context). All three call the same cuBLAS on HIP's NVIDIA platform (the run prints which file).
//!
//! ```text
//! blas --baseline libhiprs_blas_baseline.so [--host-steps] [--host-atomics] [--host-only] [--host-rounds N] [--pool]
//! ```
//! Throughput (bench/src/blas_throughput.rs): f32 (`hipblasSgemm`), f16 and bf16 (`gemm_ex`, f32
//! compute, output of the input type, as cudarc's `Gemm<f16>` calls cuBLAS) at 1024, 4096 and 8192
//! square and one tall-skinny shape. The contenders run in rounds (order rotating), each a batch of about
//! 25 ms of products timed from the host around a stream synchronize; TFLOPS are the median round's,
//! ratios the median of the per-round ratios (with their range), so slow drifts of the clock cancel.
//! Operands hold random values (zeros run faster on tensor cores).
//!
//! Host cost (bench/src/blas_host.rs): a 64x64x64 f32 GEMM, paired method as in the launch benchmark:
//! rounds of one batch of 32 calls per contender (order rotating), each timed alone and followed by a
//! synchronize (not timed), so the queue never fills; the per-round differences to raw C++: mean with a
//! 95% interval, and median. Then call by call: raw C++ and each contender alternating, every call timed
//! alone, the difference taken between neighbouring calls.
//! `--host-steps` adds cudarc and the safe call's steps through the public API (bind, `track_use`).
//! `--host-atomics` instead adds the same C call inside a read lock (as the capture gate), followed by an
//! atomic read-modify-write, and followed by a plain atomic store: what atomics cost right after cuBLAS.
//! `--host-only` skips the throughput part. `--host-rounds N`: N rounds call by call and 2N in batches
//! (default 8000), for many short runs in separate processes (scripts/blas-host-runs.py pools them).
//! `--pool` takes the safe and raw sides' operands from the device's stream-ordered pool, as cudarc
//! allocates its own (cuMemAllocAsync), instead of hipMalloc.
use hip::blas::{ComputeType, Gemm, Handle};
use hip::half::{bf16, f16};
use hip::prelude::*;
#[path = "../baseline_arg.rs"]
mod baseline_arg;
#[path = "../blas_host.rs"]
mod host;
#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;
#[path = "../blas_throughput.rs"]
mod throughput;
use std::ffi::{c_int, c_void};
use throughput::{throughput, SHAPES};

type RawGemm = unsafe extern "C" fn(
    *mut c_void,
    c_int,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    *mut c_void,
    c_int,
) -> c_int;

/// The C++ side: `blas_raw_gemm` from the baseline library, called on the safe side's own handle.
struct Raw {
    _lib: libloading::Library,
    gemm: RawGemm,
}

impl Raw {
    fn open(path: &str) -> Result<Raw, String> {
        // SAFETY: the library is this project's baseline, built by scripts/gpu-bundle-blas.sh;
        // blas_raw_gemm has the signature above.
        unsafe {
            let lib = libloading::Library::new(path).map_err(|e| format!("open {path}: {e}"))?;
            let gemm = *lib
                .get::<RawGemm>(b"blas_raw_gemm\0")
                .map_err(|e| e.to_string())?;
            Ok(Raw { _lib: lib, gemm })
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Type {
    F32,
    F16,
    Bf16,
}

impl Type {
    fn name(self) -> &'static str {
        match self {
            Type::F32 => "f32",
            Type::F16 => "f16 (f32 compute)",
            Type::Bf16 => "bf16 (f32 compute)",
        }
    }
    fn code(self) -> c_int {
        self as c_int
    }
    /// Dense peak of the H100 / H200 SXM (NVIDIA's datasheet): FP32 67 TFLOPS (no tensor cores),
    /// FP16 / BF16 tensor 989.
    fn peak(self) -> f64 {
        match self {
            Type::F32 => 66.9,
            _ => 989.4,
        }
    }
}

/// One set of operands per type, sized for the largest shape.
struct Operands {
    f32: [DeviceBuffer<f32>; 3],
    f16: [DeviceBuffer<f16>; 3],
    bf16: [DeviceBuffer<bf16>; 3],
}

fn random(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        })
        .collect()
}

fn e(err: hip::Error) -> String {
    err.to_string()
}

struct Bench {
    device: Device,
    stream: Stream,
    safe: Handle,
    raw: Raw,
    ops: Operands,
    /// 64x64 f32 operands, untracked (the host-cost contender).
    untracked: [DeviceBuffer<f32>; 3],
    /// What the `--host-atomics` contenders lock and write.
    gate: std::sync::RwLock<()>,
    counter: std::sync::atomic::AtomicU64,
    #[cfg(feature = "cudarc")]
    cudarc: cuda::Side,
}

impl Bench {
    fn safe(
        &mut self,
        t: Type,
        (m, n, k): (usize, usize, usize),
        calls: usize,
    ) -> Result<(), String> {
        let g = Gemm::new(m, n, k);
        for _ in 0..calls {
            match t {
                Type::F32 => {
                    let [a, b, c] = &mut self.ops.f32;
                    self.safe.gemm(&g, 1.0f32, &*a, &*b, 0.0f32, c).map_err(e)?
                }
                Type::F16 => {
                    let [a, b, c] = &mut self.ops.f16;
                    self.safe
                        .gemm_ex(&g, 1.0, &*a, &*b, 0.0, c, ComputeType::F32)
                        .map_err(e)?
                }
                Type::Bf16 => {
                    let [a, b, c] = &mut self.ops.bf16;
                    self.safe
                        .gemm_ex(&g, 1.0, &*a, &*b, 0.0, c, ComputeType::F32)
                        .map_err(e)?
                }
            }
        }
        Ok(())
    }

    fn raw(&self, t: Type, (m, n, k): (usize, usize, usize), calls: usize) -> Result<(), String> {
        let (a, b, c) = match t {
            Type::F32 => ptrs(&self.ops.f32),
            Type::F16 => ptrs(&self.ops.f16),
            Type::Bf16 => ptrs(&self.ops.bf16),
        };
        // SAFETY: the safe side's live handle (same stream); the operands hold m*k, k*n and m*n elements
        // of the type (sized for the largest shape).
        let rc = unsafe {
            (self.raw.gemm)(
                self.safe.raw(),
                t.code(),
                m as c_int,
                n as c_int,
                k as c_int,
                a,
                b,
                c,
                calls as c_int,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(format!("raw hipBLAS status {rc}"))
        }
    }

    /// The safe call on operands the memory model does not track: what the model costs.
    fn untracked(&mut self, (m, n, k): (usize, usize, usize), calls: usize) -> Result<(), String> {
        let g = Gemm::new(m, n, k);
        let [a, b, c] = &mut self.untracked;
        for _ in 0..calls {
            self.safe.gemm(&g, 1.0f32, &*a, &*b, 0.0f32, c).map_err(e)?;
        }
        Ok(())
    }

    /// hipBLAS's C function called from Rust through hipblas-sys on the same handle: the FFI cost alone
    /// (`who` = `SYS`). `SYS_BIND`: `Device::bind` first, as the safe call does; `SYS_TRACK`: also the
    /// memory model's ordering of the three operands (`track_use`), the safe call's steps through the
    /// public API. `--host-atomics`: the same call inside a read lock (`SYS_GATE`, as the capture gate),
    /// followed by one atomic read-modify-write (`SYS_RMW`), or by one plain atomic store (`SYS_STORE`).
    fn sys(
        &self,
        (m, n, k): (usize, usize, usize),
        calls: usize,
        who: usize,
    ) -> Result<(), String> {
        use hip::blas::hipblas_sys as sys;
        use hip::memory::Access;
        use std::sync::atomic::Ordering;
        let (a, b, c) = ptrs(&self.ops.f32);
        let (one, zero) = (1.0f32, 0.0f32);
        // Leading dimensions of at least 1, as BLAS requires (an empty product has m = 0).
        let ld = |v: usize| v.max(1) as c_int;
        for _ in 0..calls {
            let _gate = (who == SYS_GATE).then(|| self.gate.read());
            if matches!(who, SYS_BIND | SYS_TRACK) {
                self.device.bind().map_err(e)?;
            }
            if who == SYS_TRACK {
                let [da, db, dc] = &self.ops.f32;
                da.track_use(&self.stream, Access::Read).map_err(e)?;
                db.track_use(&self.stream, Access::Read).map_err(e)?;
                dc.track_use(&self.stream, Access::Write).map_err(e)?;
            }
            // SAFETY: as in `raw`, f32 operands.
            let s = unsafe {
                sys::hipblasSgemm(
                    self.safe.raw(),
                    sys::HIPBLAS_OP_N,
                    sys::HIPBLAS_OP_N,
                    m as c_int,
                    n as c_int,
                    k as c_int,
                    &one,
                    a.cast(),
                    ld(m),
                    b.cast(),
                    ld(k),
                    &zero,
                    c.cast(),
                    ld(m),
                )
            };
            match who {
                SYS_RMW => {
                    self.counter.fetch_add(1, Ordering::AcqRel);
                }
                SYS_STORE => self.counter.store(s.0 as u64, Ordering::Release),
                _ => {}
            }
            if s.0 != 0 {
                return Err(format!("hipblasSgemm status {}", s.0));
            }
        }
        Ok(())
    }

    fn run(
        &mut self,
        who: usize,
        t: Type,
        shape: (usize, usize, usize),
        calls: usize,
    ) -> Result<(), String> {
        match who {
            0 => self.raw(t, shape, calls),
            1 => self.safe(t, shape, calls),
            SYS | SYS_BIND | SYS_TRACK | SYS_GATE | SYS_RMW | SYS_STORE => {
                self.sys(shape, calls, who)
            }
            UNTRACKED => self.untracked(shape, calls),
            #[cfg(feature = "cudarc")]
            _ => self.cudarc.gemm(t, shape, calls),
            #[cfg(not(feature = "cudarc"))]
            _ => unreachable!("no cudarc contender in this build"),
        }
    }

    fn sync(&self, who: usize) -> Result<(), String> {
        match who {
            #[cfg(feature = "cudarc")]
            CUDARC => self.cudarc.sync(),
            _ => self.stream.synchronize().map_err(e),
        }
    }
}

fn ptrs<T: hip::memory::DeviceCopy>(
    b: &[DeviceBuffer<T>; 3],
) -> (*mut c_void, *mut c_void, *mut c_void) {
    (b[0].device_ptr(), b[1].device_ptr(), b[2].device_ptr())
}

#[cfg(feature = "cudarc")]
const CONTENDERS: [&str; 3] = ["raw C++ hipBLAS", "safe hip::blas", "cudarc cuBLAS"];
#[cfg(not(feature = "cudarc"))]
const CONTENDERS: [&str; 2] = ["raw C++ hipBLAS", "safe hip::blas"];
/// Index of cudarc among the contenders, and of the host-cost-only hipblas-sys contender.
#[cfg(feature = "cudarc")]
const CUDARC: usize = 2;
const SYS: usize = 3;
/// The host-cost-only contender: the safe call on operands the memory model does not track.
const UNTRACKED: usize = 4;
/// hipblas-sys after `Device::bind`, and after bind and `track_use` of the three operands.
const SYS_BIND: usize = 5;
const SYS_TRACK: usize = 6;
/// hipblas-sys inside a read lock, then with an atomic read-modify-write after, then with a plain atomic
/// store after (`--host-atomics`).
const SYS_GATE: usize = 7;
const SYS_RMW: usize = 8;
const SYS_STORE: usize = 9;

/// `--host-rounds N` (default 8000): the rounds of the call-by-call host cost.
fn host_rounds() -> Result<usize, String> {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--host-rounds") {
        None => Ok(8000),
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .filter(|&n: &usize| n > 0)
            .ok_or_else(|| "--host-rounds takes a positive number of rounds".to_string()),
    }
}

fn main() {
    baseline_arg::main("blas", "libhiprs_blas_baseline.so", run);
}

fn run(baseline: &str) -> Result<(), String> {
    let device = Device::get(0).map_err(e)?;
    let stream = Stream::new(&device).map_err(e)?;
    // --host-only: operands for the 64x64x64 host-cost product only (a short run starts in a second,
    // without the 8192-square operands).
    let host_only = std::env::args().any(|a| a == "--host-only");
    let max = if host_only {
        64 * 64
    } else {
        SHAPES
            .iter()
            .map(|&(m, n, k)| (m * k).max(k * n).max(m * n))
            .max()
            .unwrap_or(0)
    };
    let host = [random(max, 1), random(max, 2), random(max, 3)];
    // --pool: the operands from the device's stream-ordered pool, as cudarc allocates its own
    // (cuMemAllocAsync); otherwise hipMalloc.
    let pool = std::env::args().any(|a| a == "--pool");
    fn upload<T: hip::memory::DeviceCopy>(
        device: &Device,
        stream: &Stream,
        pool: bool,
        v: &[T],
    ) -> Result<DeviceBuffer<T>, String> {
        if !pool {
            return DeviceBuffer::from_slice(device, v).map_err(e);
        }
        let mut b = DeviceBuffer::zeroed_async(stream, v.len()).map_err(e)?;
        b.copy_from_host(v).map_err(e)?;
        Ok(b)
    }
    let up = |v: &[f32]| upload(&device, &stream, pool, v);
    let up16 = |v: &[f32]| {
        let v: Vec<f16> = v.iter().map(|x| f16::from_f32(*x)).collect();
        upload(&device, &stream, pool, &v)
    };
    let upb = |v: &[f32]| {
        let v: Vec<bf16> = v.iter().map(|x| bf16::from_f32(*x)).collect();
        upload(&device, &stream, pool, &v)
    };
    let ops = Operands {
        f32: [up(&host[0])?, up(&host[1])?, up(&host[2])?],
        f16: [up16(&host[0])?, up16(&host[1])?, up16(&host[2])?],
        bf16: [upb(&host[0])?, upb(&host[1])?, upb(&host[2])?],
    };
    let raw = Raw::open(baseline)?;
    let mut untracked = [
        up(&host[0][..4096])?,
        up(&host[1][..4096])?,
        up(&host[2][..4096])?,
    ];
    for u in &mut untracked {
        // SAFETY: these buffers are used only by the safe side, on its one stream, and read back by nothing.
        unsafe { u.set_untracked(true) };
    }
    let mut b = Bench {
        untracked,
        gate: std::sync::RwLock::new(()),
        counter: std::sync::atomic::AtomicU64::new(0),
        safe: Handle::new(&stream).map_err(e)?,
        raw,
        #[cfg(feature = "cudarc")]
        cudarc: cuda::Side::new(device.ordinal(), &host, max)?,
        device,
        stream,
        ops,
    };
    let props = b.device.properties().map_err(e)?;
    let mut out = format!(
        "GEMM on {} (HIP's {} platform, hipBLAS {:?}); peak: H100/H200 SXM datasheet (FP32 66.9, FP16/BF16 tensor 989.4 TFLOPS dense); safe and raw operands from {}\n\n",
        props.name,
        hip::PLATFORM,
        hip::blas::HEADER_VERSION,
        if pool { "the stream-ordered pool (--pool)" } else { "hipMalloc" }
    );
    if !host_only {
        throughput(&mut b, &mut out)?;
    }
    // Each part printed when done, so a later failure keeps the earlier results.
    print!("{out}");
    out.clear();
    let rounds = host_rounds()?;
    host::cost(&mut b, &mut out, (64, 64, 64), 2 * rounds)?;
    print!("{out}");
    out.clear();
    host::cost_interleaved(&mut b, &mut out, (64, 64, 64), rounds)?;
    print!("{out}");
    out.clear();
    host::cost(&mut b, &mut out, (0, 0, 0), 20000)?;
    // Which cuBLAS each side ran on (cudarc opens its own by name).
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let mut libs: Vec<&str> = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|p| p.contains("libcublas"))
        .collect();
    libs.sort_unstable();
    libs.dedup();
    out.push_str(&format!("\ncuBLAS libraries loaded: {}\n", libs.join(", ")));
    println!("{out}");
    Ok(())
}

#[cfg(feature = "cudarc")]
mod cuda {
    use super::Type;
    use cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N;
    use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
    use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
    use hip::half::{bf16, f16};
    use std::sync::Arc;

    pub struct Side {
        stream: Arc<CudaStream>,
        blas: CudaBlas,
        f32: [CudaSlice<f32>; 3],
        f16: [CudaSlice<f16>; 3],
        bf16: [CudaSlice<bf16>; 3],
    }

    fn err(e: impl std::fmt::Debug) -> String {
        format!("cudarc: {e:?}")
    }

    impl Side {
        pub fn new(ordinal: usize, host: &[Vec<f32>; 3], max: usize) -> Result<Side, String> {
            let ctx = CudaContext::new(ordinal).map_err(err)?;
            // SAFETY: only this side's stream uses its buffers; no cross-stream events needed.
            unsafe { ctx.disable_event_tracking() };
            let stream = ctx.new_stream().map_err(err)?;
            let blas = CudaBlas::new(stream.clone()).map_err(err)?;
            let f = |v: &[f32]| stream.clone_htod(&v[..max]).map_err(err);
            let h = |v: &[f32]| {
                stream
                    .clone_htod(
                        &v[..max]
                            .iter()
                            .map(|x| f16::from_f32(*x))
                            .collect::<Vec<_>>(),
                    )
                    .map_err(err)
            };
            let b = |v: &[f32]| {
                stream
                    .clone_htod(
                        &v[..max]
                            .iter()
                            .map(|x| bf16::from_f32(*x))
                            .collect::<Vec<_>>(),
                    )
                    .map_err(err)
            };
            Ok(Side {
                f32: [f(&host[0])?, f(&host[1])?, f(&host[2])?],
                f16: [h(&host[0])?, h(&host[1])?, h(&host[2])?],
                bf16: [b(&host[0])?, b(&host[1])?, b(&host[2])?],
                stream,
                blas,
            })
        }

        pub fn gemm(
            &mut self,
            t: Type,
            (m, n, k): (usize, usize, usize),
            calls: usize,
        ) -> Result<(), String> {
            fn cfg<T>(m: usize, n: usize, k: usize, alpha: T, beta: T) -> GemmConfig<T> {
                GemmConfig {
                    transa: CUBLAS_OP_N,
                    transb: CUBLAS_OP_N,
                    m: m as i32,
                    n: n as i32,
                    k: k as i32,
                    alpha,
                    // At least 1, as BLAS requires (an empty product has m = 0).
                    lda: m.max(1) as i32,
                    ldb: k.max(1) as i32,
                    beta,
                    ldc: m.max(1) as i32,
                }
            }
            for _ in 0..calls {
                // SAFETY: the buffers hold the largest shape's operands; the configuration is tight
                // column-major (cudarc's contract for gemm).
                unsafe {
                    match t {
                        Type::F32 => {
                            let [a, b, c] = &mut self.f32;
                            self.blas
                                .gemm(cfg(m, n, k, 1.0f32, 0.0), &*a, &*b, c)
                                .map_err(err)?
                        }
                        Type::F16 => {
                            let [a, b, c] = &mut self.f16;
                            self.blas
                                .gemm(cfg(m, n, k, f16::ONE, f16::ZERO), &*a, &*b, c)
                                .map_err(err)?
                        }
                        Type::Bf16 => {
                            let [a, b, c] = &mut self.bf16;
                            self.blas
                                .gemm(cfg(m, n, k, bf16::ONE, bf16::ZERO), &*a, &*b, c)
                                .map_err(err)?
                        }
                    }
                }
            }
            Ok(())
        }

        pub fn sync(&self) -> Result<(), String> {
            self.stream.synchronize().map_err(err)
        }
    }
}
