//! Slow kernels for the math libraries' ordering tests (hip::blas, hip::rand, hip::fft): each spins about
//! [`CYCLES`] clock cycles in every thread before it touches memory, so a library call queued after it on
//! another stream would overtake it without the memory model. They see buffers as `float`s: a buffer of
//! any element type works, `value` is written to each of its 4-byte words.
//!
//! [`Slow::spin`] and [`Timeline`] serve the `set_stream` tests: a spin that touches no memory (so the memory
//! model orders nothing after it by itself) holds back a library handle's call on its old stream, and
//! events timed from one start say when the handle's first call on the new stream could begin.
//!
//! `HIP_RS_TEST_UNTRACKED=1` turns tracking off for the buffers made through [`Slow::buffer`]: the control
//! run that shows a test fails without the ordering.
use hip::memory::DeviceCopy;
use hip::prelude::*;

/// About a millisecond on the GPUs used here.
pub const CYCLES: i64 = 2_000_000;

/// About 20 ms on the GPUs used here (at most 2 GHz): the old stream's spin in the `set_stream` tests.
pub const SPIN_CYCLES: i64 = 40_000_000;

const SOURCE: &str = r#"
extern "C" __global__ void slow_fill(float* x, float value, unsigned int n, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = value;
}
extern "C" __global__ void slow_copy(const float* src, float* dst, unsigned int n, long long cycles) {
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

/// The slow kernels, loaded on one device.
pub struct Slow {
    module: Module,
    untracked: bool,
}

impl Slow {
    pub fn new(device: &Device) -> Slow {
        Slow {
            module: super::load(device, SOURCE),
            untracked: std::env::var("HIP_RS_TEST_UNTRACKED").is_ok_and(|v| v == "1"),
        }
    }

    /// `b`, untracked in the control run.
    pub fn buffer<T: DeviceCopy>(&self, mut b: DeviceBuffer<T>) -> DeviceBuffer<T> {
        if self.untracked {
            // SAFETY: the control run only shows wrong values; `end_round` waits for the device before a
            // round's buffers are dropped.
            unsafe { b.set_untracked(true) };
        }
        b
    }

    /// On `s`: spin, then write `value` to every 4-byte word of `x`.
    pub fn fill<T: DeviceCopy>(&self, s: &Stream, x: &mut DeviceBuffer<T>, value: f32) {
        let n = words(x.byte_len());
        let mut args = LaunchArgs::new();
        args.arg_mut(x).arg(&value).arg(&n).arg(&CYCLES);
        // SAFETY: slow_fill(float*, float, unsigned, long long) writes x's n words.
        unsafe { self.launch("slow_fill", s, n, &mut args) };
    }

    /// On `s`: spin, then copy `src` into `dst` (the same size).
    pub fn copy<T: DeviceCopy>(
        &self,
        s: &Stream,
        src: &DeviceBuffer<T>,
        dst: &mut DeviceBuffer<T>,
    ) {
        assert_eq!(src.len(), dst.len());
        let n = words(src.byte_len());
        let mut args = LaunchArgs::new();
        args.arg(src).arg_mut(dst).arg(&n).arg(&CYCLES);
        // SAFETY: slow_copy(const float*, float*, unsigned, long long) reads src's n words, writes dst's.
        unsafe { self.launch("slow_copy", s, n, &mut args) };
    }

    /// On `s`: one block spins `cycles` clock cycles. It touches no memory: nothing the memory model
    /// tracks orders later work on another stream after it.
    pub fn spin(&self, s: &Stream, cycles: i64) {
        let mut args = LaunchArgs::new();
        args.arg(&cycles);
        // SAFETY: spin(long long) reads its argument only.
        unsafe { self.launch("spin", s, 1, &mut args) };
    }

    /// Launch `kernel` over `n` threads on `s`.
    ///
    /// # Safety
    /// `args` are `kernel`'s, and the memory they point at spans what it touches for `n` threads.
    unsafe fn launch(&self, kernel: &str, s: &Stream, n: u32, args: &mut LaunchArgs<'_>) {
        let f = self.module.function(kernel).unwrap();
        // SAFETY: the caller's contract.
        unsafe { f.launch(s, &LaunchConfig::for_num_elems(n), args).unwrap() };
    }

    /// The end of a round: in the control run, wait for the device (nothing orders the untracked buffers'
    /// frees after their users).
    pub fn end_round(&self, device: &Device) {
        if self.untracked {
            device.synchronize().unwrap();
        }
    }
}

fn words(bytes: usize) -> u32 {
    assert_eq!(bytes % 4, 0, "the slow kernels see 4-byte words");
    u32::try_from(bytes / 4).unwrap()
}

/// Events timed from one start event recorded on `old`, for the `set_stream` tests: when the handle's work
/// on its old stream ended, and when the first work on the new stream after `set_stream` could begin.
pub struct Timeline {
    device: Device,
    start: Event,
}

impl Timeline {
    /// The start, recorded on `old`; `new` waits for it (for nothing queued on `old` after it), so that a
    /// mark on `new` never comes before the start whatever else orders the streams.
    pub fn start(device: &Device, old: &Stream, new: &Stream) -> Timeline {
        let start = Event::with_timing(device).unwrap();
        start.record(old).unwrap();
        new.wait_event(&start).unwrap();
        Timeline {
            device: device.clone(),
            start,
        }
    }

    /// An event recorded on `s` now: it completes when the work queued there so far does.
    pub fn mark(&self, s: &Stream) -> Event {
        let e = Event::with_timing(&self.device).unwrap();
        e.record(s).unwrap();
        e
    }

    /// Milliseconds from the start to `e`, once `e` completed.
    pub fn ms(&self, e: &Event) -> f32 {
        e.synchronize().unwrap();
        self.start.elapsed_ms(e).unwrap()
    }
}
