//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod array_host_copy;
pub mod bundle;
pub mod child;
pub mod cooperative;
pub mod dense;
pub mod elf;
pub mod graph_edits;
pub mod host_fn_memory;
pub mod mipmaps;
pub mod registered_vec;

pub mod rng;
pub mod slice_upload;
pub mod slow;
pub mod tempdir;
pub mod textures;
pub mod view_fills;

/// Device 0, for the `--features gpu` tests.
pub fn device() -> hip::Device {
    hip::Device::get(0).expect("--features gpu needs a HIP device")
}

/// Wait (at most `limit`) until `owner` is the only reference to its value, as once a graph dropped
/// what it kept (on the runtime's own time); the strong count then.
pub fn wait_sole_owner<T>(owner: &std::sync::Arc<T>, limit: std::time::Duration) -> usize {
    let start = std::time::Instant::now();
    while std::sync::Arc::strong_count(owner) > 1 && start.elapsed() < limit {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    std::sync::Arc::strong_count(owner)
}

/// `source` compiled by HIPRTC for `device` and loaded.
pub fn load(device: &hip::Device, source: &str) -> hip::Module {
    let code = hip::rtc::ProgramBuilder::new(source).compile().unwrap();
    hip::Module::load_data(device, code.code()).unwrap()
}

/// The vector-add kernel every test and example compiles.
pub const VECTOR_ADD: &str = r#"
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"#;

/// The offline target used where no GPU is present.
pub const OFFLINE_ARCH: &str = "gfx90a";

/// Kernels for timing-sensitive GPU tests: `spin` busy-waits about `cycles` clock cycles (so work queued
/// after it on the stream is still pending for a while), `fill` writes `value` to `n` elements.
pub const SPIN_FILL: &str = r#"
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
}
extern "C" __global__ void fill(unsigned int* x, unsigned int value, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = value;
}
"#;

/// The major version of the HIP runtime the tests run against (with `dynamic-loading` it can differ from
/// the headers they were built with). `HIP_VERSION = major * 10_000_000 + minor * 100_000 + patch`.
pub fn runtime_major() -> i32 {
    hip::runtime_version().expect("the runtime answers its version") / 10_000_000
}

/// Kernels for the ordering tests: `slow_fill` and `slow_copy` spin about `cycles` clock cycles in every
/// thread before they write (so a conflicting operation on another stream would overtake them without
/// ordering); `spin` only spins.
pub const ORDERING_KERNELS: &str = r#"
extern "C" __global__ void slow_fill(unsigned int* x, unsigned int value, unsigned int n, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = value;
}
extern "C" __global__ void slow_copy(const unsigned int* src, unsigned int* dst, unsigned int n, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
}
"#;

/// Launch `slow_fill` of [`ORDERING_KERNELS`] (loaded in `module`) on `s`: spin about `cycles` clock
/// cycles, then write `value` to every element of `x`.
pub fn slow_fill(
    module: &hip::Module,
    s: &hip::Stream,
    x: &mut hip::DeviceBuffer<u32>,
    value: u32,
    cycles: i64,
) {
    let k = module.function("slow_fill").unwrap();
    let n = x.len() as u32;
    let mut args = hip::LaunchArgs::new();
    args.arg_mut(x).arg(&value).arg(&n).arg(&cycles);
    // SAFETY: slow_fill(unsigned*, unsigned, unsigned, long long) writes x[..n].
    unsafe {
        k.launch(s, &hip::LaunchConfig::for_num_elems(n), &mut args)
            .unwrap()
    };
}

/// tokio's current-thread runtime: the futures tests' executor (the `hip` crate depends on none).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

/// Run `f` on a thread of its own and fail the test if it has not finished within 30 s: a stream stuck
/// behind a host function (a deadlock) fails instead of hanging the run.
pub fn within_30s(f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    rx.recv_timeout(std::time::Duration::from_secs(30))
        .expect("deadlocked: the stream never got past the host function");
}
