//! Work that program order does not order overlaps (issue 42's table 1 and its mirrors, and the
//! semantics of cudarc's `test_par_launch` / `test_multi_stream_concurrent_reads`, written as ours).
//!
//! Each test times a pair of slow one-block kernels (about 20 ms each, spinning on `clock64()`) on two
//! streams, after the setup of its pattern, and asserts the pair took less than 1.4x one kernel (1x:
//! overlapped, 2x: serialized), with every value checked. The one-kernel time is measured in the same
//! test, on the same stream kind. `HIP_RS_TEST_OVERLAP_REPORT=1` prints each factor.
#![cfg(feature = "gpu")]

mod common;

use common::{device, load};
use hip::prelude::*;
use std::time::{Duration, Instant};

const N: usize = 4096;
/// Overlapped pairs measure about 1.0x; serialized ones 2.0x.
const LIMIT: f64 = 1.4;

const SOURCE: &str = r#"
__device__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
}
extern "C" __global__ void slow_write(unsigned* x, unsigned value, unsigned n, long long cycles) {
    spin(cycles);
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) x[i] = value;
}
extern "C" __global__ void slow_read(const unsigned* x, unsigned* out, unsigned n, long long cycles) {
    spin(cycles);
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) out[i] = x[i] + 1;
}
extern "C" __global__ void fast_write(unsigned* x, unsigned value, unsigned n) {
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) x[i] = value;
}
"#;

struct F {
    device: Device,
    module: Module,
    a: Stream,
    b: Stream,
    /// Cycles for about 20 ms.
    cycles: i64,
}

fn fixture() -> F {
    let device = device();
    let module = load(&device, SOURCE);
    let a = Stream::non_blocking(&device).unwrap();
    let b = Stream::non_blocking(&device).unwrap();
    let khz = device.properties().unwrap().clock_rate_khz.max(1_000_000) as i64;
    let f = F {
        device,
        module,
        a,
        b,
        cycles: khz * 20,
    };
    f.warm_up();
    f
}

fn one_block() -> LaunchConfig {
    LaunchConfig::new(1, 256)
}

impl F {
    fn buffer(&self, v: u32) -> DeviceBuffer<u32> {
        DeviceBuffer::from_slice(&self.device, &vec![v; N]).unwrap()
    }

    fn slow_write(&self, s: &Stream, x: &mut DeviceBuffer<u32>, v: u32) {
        let (n, c) = (N as u32, self.cycles);
        let mut args = LaunchArgs::new();
        args.arg_mut(x).arg(&v).arg(&n).arg(&c);
        let k = self.module.function("slow_write").unwrap();
        // SAFETY: slow_write(unsigned*, unsigned, unsigned, long long) writes x[..n].
        unsafe { k.launch(s, &one_block(), &mut args).unwrap() };
    }

    fn slow_read(&self, s: &Stream, x: &DeviceBuffer<u32>, out: &mut DeviceBuffer<u32>) {
        let (n, c) = (N as u32, self.cycles);
        let mut args = LaunchArgs::new();
        args.arg(x).arg_mut(out).arg(&n).arg(&c);
        let k = self.module.function("slow_read").unwrap();
        // SAFETY: slow_read reads x[..n] and writes out[..n].
        unsafe { k.launch(s, &one_block(), &mut args).unwrap() };
    }

    fn fast_write(&self, s: &Stream, x: &mut DeviceBuffer<u32>, v: u32) {
        let n = N as u32;
        let mut args = LaunchArgs::new();
        args.arg_mut(x).arg(&v).arg(&n);
        let k = self.module.function("fast_write").unwrap();
        // SAFETY: fast_write(unsigned*, unsigned, unsigned) writes x[..n].
        unsafe { k.launch(s, &one_block(), &mut args).unwrap() };
    }

    /// Launch every kernel once on each stream, with no spin: CUDA loads a kernel at its first launch
    /// (lazy loading, CUDA 12's default), and a load while another kernel runs waits for it, which
    /// would serialize the first pair that uses a new kernel whatever the memory model does.
    fn warm_up(&self) {
        let (mut x, mut y) = (self.buffer(0), self.buffer(0));
        for s in [&self.a, &self.b] {
            let (n, c) = (N as u32, 0i64);
            let mut args = LaunchArgs::new();
            args.arg_mut(&mut x).arg(&0u32).arg(&n).arg(&c);
            let k = self.module.function("slow_write").unwrap();
            // SAFETY: slow_write(unsigned*, unsigned, unsigned, long long) writes x[..n]; no spin.
            unsafe { k.launch(s, &one_block(), &mut args).unwrap() };
            let mut args = LaunchArgs::new();
            args.arg(&x).arg_mut(&mut y).arg(&n).arg(&c);
            let k = self.module.function("slow_read").unwrap();
            // SAFETY: slow_read reads x[..n] and writes y[..n]; no spin.
            unsafe { k.launch(s, &one_block(), &mut args).unwrap() };
            self.fast_write(s, &mut x, 0);
            s.synchronize().unwrap();
        }
    }

    /// One slow kernel alone, on a fresh buffer: the unit of the factors.
    fn one_kernel(&self) -> Duration {
        let mut x = self.buffer(0);
        self.a.synchronize().unwrap();
        let t = Instant::now();
        self.slow_write(&self.a, &mut x, 1);
        self.a.synchronize().unwrap();
        let one = t.elapsed();
        assert_eq!(x.to_vec().unwrap(), vec![1; N]);
        one
    }

    /// Time `pair` (queueing two slow kernels), up to both streams done.
    fn time(&self, pair: impl FnOnce()) -> Duration {
        let t = Instant::now();
        pair();
        self.a.synchronize().unwrap();
        self.b.synchronize().unwrap();
        t.elapsed()
    }
}

fn assert_overlap(pattern: &str, one: Duration, pair: Duration) {
    let factor = pair.as_secs_f64() / one.as_secs_f64();
    if std::env::var("HIP_RS_TEST_OVERLAP_REPORT").is_ok_and(|v| v == "1") {
        println!("overlap {factor:.2}x  {pattern}");
    }
    assert!(
        factor < LIMIT,
        "{pattern}: the pair took {factor:.2}x one kernel ({pair:?} against {one:?}): serialized, \
         though program order does not order it"
    );
}

fn all(x: &DeviceBuffer<u32>, v: u32) -> bool {
    x.to_vec().unwrap().iter().all(|&e| e == v)
}

/// Table 1, rows 1-3: `x`, `y` last written on A, the host learns that (three ways), then a writer of `x`
/// on A and one of `y` on B overlap.
fn after_host_knows(pattern: &str, learn: impl Fn(&F, &DeviceBuffer<u32>)) {
    let f = fixture();
    let one = f.one_kernel();
    let (mut x, mut y) = (f.buffer(0), f.buffer(0));
    f.fast_write(&f.a, &mut x, 1);
    f.fast_write(&f.a, &mut y, 2);
    learn(&f, &y);
    let pair = f.time(|| {
        f.slow_write(&f.a, &mut x, 3);
        f.slow_write(&f.b, &mut y, 4);
    });
    assert!(all(&x, 3) && all(&y, 4));
    assert_overlap(pattern, one, pair);
    // The mirror: the writers swap streams.
    f.fast_write(&f.a, &mut x, 5);
    f.fast_write(&f.a, &mut y, 6);
    learn(&f, &y);
    let pair = f.time(|| {
        f.slow_write(&f.b, &mut x, 7);
        f.slow_write(&f.a, &mut y, 8);
    });
    assert!(all(&x, 7) && all(&y, 8));
    assert_overlap(&format!("{pattern} (mirrored)"), one, pair);
}

#[test]
fn writers_overlap_after_the_stream_was_synchronized() {
    after_host_knows("after A.synchronize()", |f, _| f.a.synchronize().unwrap());
}

#[test]
fn writers_overlap_after_the_device_was_synchronized() {
    after_host_knows("after Device::synchronize()", |f, _| {
        f.device.synchronize().unwrap()
    });
}

#[test]
fn writers_overlap_after_the_host_read_the_buffer_back() {
    after_host_knows("after y.to_vec()", |_, y| {
        assert!(y.to_vec().unwrap().iter().all(|&v| v == 2 || v == 6));
    });
}

#[test]
fn readers_of_synchronized_weights_overlap() {
    let f = fixture();
    let one = f.one_kernel();
    let mut w = f.buffer(0);
    f.fast_write(&f.a, &mut w, 41);
    f.a.synchronize().unwrap();
    let (mut o1, mut o2) = (f.buffer(0), f.buffer(0));
    let pair = f.time(|| {
        f.slow_read(&f.a, &w, &mut o1);
        f.slow_read(&f.b, &w, &mut o2);
    });
    assert!(all(&o1, 42) && all(&o2, 42));
    assert_overlap("readers of w on A and B", one, pair);
    // cudarc's test_multi_stream_concurrent_reads: weights last written by the null stream.
    let w = f.buffer(9);
    let pair = f.time(|| {
        f.slow_read(&f.a, &w, &mut o1);
        f.slow_read(&f.b, &w, &mut o2);
    });
    assert!(all(&o1, 10) && all(&o2, 10));
    assert_overlap("readers of a buffer written by from_host", one, pair);
}

#[test]
fn a_consumer_waits_for_its_producer_not_for_later_work() {
    let f = fixture();
    let one = f.one_kernel();
    let (mut x, mut z, mut out) = (f.buffer(0), f.buffer(0), f.buffer(0));
    // Unsynchronized: A writes x (fast) then z (slow); B reads x.
    let pair = f.time(|| {
        f.fast_write(&f.a, &mut x, 11);
        f.slow_write(&f.a, &mut z, 12);
        f.slow_read(&f.b, &x, &mut out);
    });
    assert!(all(&out, 12) && all(&z, 12));
    assert_overlap("A writes x then z (slow); B reads x", one, pair);
    // The mirror for write after read: A reads x (fast) then writes z (slow); B writes x.
    let mut y = f.buffer(0);
    let pair = f.time(|| {
        let mut args = LaunchArgs::new();
        let n = N as u32;
        args.arg(&x).arg_mut(&mut y).arg(&n).arg(&0i64);
        let k = f.module.function("slow_read").unwrap();
        // SAFETY: slow_read reads x[..n] and writes y[..n]; no spin.
        unsafe { k.launch(&f.a, &one_block(), &mut args).unwrap() };
        f.slow_write(&f.a, &mut z, 13);
        f.slow_write(&f.b, &mut x, 14);
    });
    assert!(all(&y, 12) && all(&x, 14) && all(&z, 13));
    assert_overlap("A reads x then writes z (slow); B writes x", one, pair);
}

#[test]
fn writers_overlap_after_a_stream_waited_for_an_event() {
    let f = fixture();
    let one = f.one_kernel();
    let (mut x, mut y) = (f.buffer(0), f.buffer(0));
    f.fast_write(&f.a, &mut x, 1);
    f.fast_write(&f.a, &mut y, 2);
    f.b.wait_event(&f.a.record_event().unwrap()).unwrap();
    let pair = f.time(|| {
        f.slow_write(&f.a, &mut x, 3);
        f.slow_write(&f.b, &mut y, 4);
    });
    assert!(all(&x, 3) && all(&y, 4));
    assert_overlap(
        "B.wait_event(A's event), then writers on A and B",
        one,
        pair,
    );
    // An event waited for on the host teaches the same.
    f.fast_write(&f.a, &mut x, 5);
    f.fast_write(&f.a, &mut y, 6);
    f.a.record_event().unwrap().synchronize().unwrap();
    let pair = f.time(|| {
        f.slow_write(&f.a, &mut x, 7);
        f.slow_write(&f.b, &mut y, 8);
    });
    assert!(all(&x, 7) && all(&y, 8));
    assert_overlap("A's event synchronized, then writers on A and B", one, pair);
}

/// cudarc's test_par_launch: fresh buffers, one kernel each on two streams.
#[test]
fn kernels_on_fresh_buffers_overlap() {
    let f = fixture();
    let one = f.one_kernel();
    let mut x = DeviceBuffer::<u32>::zeroed(&f.device, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&f.device, N).unwrap();
    let pair = f.time(|| {
        f.slow_write(&f.a, &mut x, 21);
        f.slow_write(&f.b, &mut y, 22);
    });
    assert!(all(&x, 21) && all(&y, 22));
    assert_overlap("fresh zeroed buffers, a kernel each on A and B", one, pair);
}

/// Program order is still kept where it orders: a reader on B of what A is writing waits for it (the
/// pair takes two kernels' time and reads the new values).
#[test]
fn ordered_work_still_waits() {
    let f = fixture();
    let one = f.one_kernel();
    let (mut x, mut out) = (f.buffer(0), f.buffer(0));
    let pair = f.time(|| {
        f.slow_write(&f.a, &mut x, 31);
        f.slow_read(&f.b, &x, &mut out);
    });
    assert!(all(&out, 32), "the read on B saw the write on A");
    let factor = pair.as_secs_f64() / one.as_secs_f64();
    assert!(
        factor > 1.6,
        "read after write took {factor:.2}x one kernel: not ordered"
    );
}

/// A node removed from a graph under construction takes its buffers out of the graph's uses
/// (`GraphBuilder::remove`): a launch of the graph (a slow kernel node writing `kept`) overlaps B's slow
/// write of `freed`, which only the removed node wrote. The control, the same graph with the node kept,
/// waits for B (about 2x) and writes `freed` after it.
#[test]
fn a_removed_graph_node_no_longer_orders_the_launch() {
    let f = fixture();
    let one = f.one_kernel();
    let k = f.module.function("slow_write").unwrap();
    let graph = |remove: bool, kept: &mut DeviceBuffer<u32>, freed: &mut DeviceBuffer<u32>| {
        let mut b = hip::GraphBuilder::new(&f.device).unwrap();
        let (n, c) = (N as u32, f.cycles);
        let mut args = LaunchArgs::new();
        args.arg_mut(kept).arg(&1u32).arg(&n).arg(&c);
        // SAFETY: slow_write(unsigned*, unsigned, unsigned, long long) writes kept[..n].
        unsafe { b.kernel(&[], &k, &one_block(), &mut args).unwrap() };
        let stray = b.memset(&[], freed, 2u32).unwrap();
        if remove {
            b.remove(stray).unwrap();
        }
        let mut exec = b.build().unwrap().instantiate().unwrap();
        // A first launch loads the graph (CUDA uploads it then), outside the timed pair.
        exec.launch(&f.a).unwrap();
        f.a.synchronize().unwrap();
        exec
    };
    for remove in [true, false] {
        let (mut kept, mut freed) = (f.buffer(0), f.buffer(0));
        let mut exec = graph(remove, &mut kept, &mut freed);
        let pair = f.time(|| {
            f.slow_write(&f.b, &mut freed, 5);
            exec.launch(&f.a).unwrap();
        });
        assert!(all(&kept, 1));
        let factor = pair.as_secs_f64() / one.as_secs_f64();
        if remove {
            assert!(all(&freed, 5), "the removed memset never ran");
            assert_overlap(
                "graph launch on A (its memset of `freed` removed); B writes `freed`",
                one,
                pair,
            );
        } else {
            assert!(all(&freed, 2), "the graph's memset ran after B's write");
            assert!(
                factor > 1.6,
                "the graph that still writes `freed` took {factor:.2}x one kernel with B's write: \
                 not ordered"
            );
        }
    }
}
