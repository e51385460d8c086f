//! Program order across streams (the memory model): each test queues a slow kernel (spinning on
//! `clock64()`) on one stream and the conflicting operation on another, in program order, many rounds,
//! and checks every element. Without the ordering each pattern sees another order on every round (measured
//! on an H100 before the memory model existed).
//!
//! `HIP_RS_TEST_UNTRACKED=1` turns tracking off for the test buffers (`DeviceBuffer::set_untracked`): the
//! control run that shows these tests fail without the ordering (docs/MEMORY_MODEL.md records it).
#![cfg(feature = "gpu")]

mod common;

use common::{device, load, ORDERING_KERNELS as KERNELS};
use hip::prelude::*;
use hip::{CaptureMode, DeviceSlice, KernelArg};

const N: usize = 1 << 20;
const ROUNDS: usize = 20;
/// About a millisecond per wave of blocks on current GPUs.
const SPIN: i64 = 2_000_000;

struct Fixture {
    device: Device,
    module: Module,
    a: Stream,
    b: Stream,
}

fn fixture() -> Fixture {
    let device = device();
    let module = load(&device, KERNELS);
    let a = Stream::non_blocking(&device).unwrap();
    let b = Stream::non_blocking(&device).unwrap();
    Fixture {
        device,
        module,
        a,
        b,
    }
}

fn untracked_control() -> bool {
    std::env::var("HIP_RS_TEST_UNTRACKED").is_ok_and(|v| v == "1")
}

/// A buffer of `N` elements, all `value` (set synchronously).
fn buffer(f: &Fixture, value: u32) -> DeviceBuffer<u32> {
    let mut b = DeviceBuffer::from_slice(&f.device, &vec![value; N]).unwrap();
    if untracked_control() {
        // SAFETY: the control run only shows wrong values; every buffer lives until the device is idle.
        unsafe { b.set_untracked(true) };
    }
    b
}

fn config() -> LaunchConfig {
    LaunchConfig::for_num_elems(N as u32)
}

fn slow_fill(f: &Fixture, x: &mut DeviceBuffer<u32>, value: u32, s: &Stream) {
    let k = f.module.function("slow_fill").unwrap();
    let n = N as u32;
    let mut args = LaunchArgs::new();
    args.arg_mut(x).arg(&value).arg(&n).arg(&SPIN);
    // SAFETY: slow_fill(unsigned*, unsigned, unsigned, long long) writes x[..n].
    unsafe { k.launch(s, &config(), &mut args).unwrap() };
}

fn slow_copy(f: &Fixture, src: &impl KernelArg, dst: &mut DeviceBuffer<u32>, s: &Stream) {
    let k = f.module.function("slow_copy").unwrap();
    let n = N as u32;
    let mut args = LaunchArgs::new();
    args.arg(src).arg_mut(dst).arg(&n).arg(&SPIN);
    // SAFETY: slow_copy reads src[..n] and writes dst[..n].
    unsafe { k.launch(s, &config(), &mut args).unwrap() };
}

fn spin(f: &Fixture, s: &Stream) {
    let k = f.module.function("spin").unwrap();
    let mut args = LaunchArgs::new();
    args.arg(&SPIN);
    // SAFETY: spin(long long) touches no memory.
    unsafe { k.launch(s, &LaunchConfig::new(1, 1), &mut args).unwrap() };
}

/// Count the elements of `got` that are not `want` (0 means the round saw program order).
fn wrong(got: &[u32], want: u32) -> usize {
    got.iter().filter(|&&v| v != want).count()
}

fn assert_every_round(pattern: &str, bad_rounds: Vec<(usize, usize)>) {
    assert!(
        bad_rounds.is_empty(),
        "{pattern}: {} of {ROUNDS} rounds saw another order than the program's (round, wrong elements): \
         {bad_rounds:?}",
        bad_rounds.len()
    );
}

#[test]
fn kernel_write_then_async_copy_to_host_on_another_stream() {
    let f = fixture();
    let mut bad = Vec::new();
    for round in 0..ROUNDS {
        let v = 1000 + round as u32;
        let mut x = buffer(&f, 7);
        let mut host = PinnedBuffer::from_slice(&f.device, &vec![0xdead_beef; N]).unwrap();
        slow_fill(&f, &mut x, v, &f.a);
        f.b.copy_to_host_async(&x, &mut host).unwrap();
        let w = wrong(host.as_slice().unwrap(), v);
        if w > 0 {
            bad.push((round, w));
        }
    }
    assert_every_round("kernel writes x on A; copy_to_host_async(x) on B", bad);
}

#[test]
fn kernel_write_then_device_copy_on_another_stream() {
    let f = fixture();
    let mut bad = Vec::new();
    for round in 0..ROUNDS {
        let v = 2000 + round as u32;
        let mut x = buffer(&f, 7);
        let mut y = buffer(&f, 0xdead_beef);
        slow_fill(&f, &mut x, v, &f.a);
        f.b.copy_device_async(&x, &mut y).unwrap();
        let w = wrong(&y.to_vec().unwrap(), v);
        if w > 0 {
            bad.push((round, w));
        }
    }
    assert_every_round(
        "kernel writes x on A; copy_device_async(&x, &mut y) on B",
        bad,
    );
}

#[test]
fn async_copy_to_device_then_kernel_reads_on_another_stream() {
    let f = fixture();
    let mut bad = Vec::new();
    for round in 0..ROUNDS {
        let v = 3000 + round as u32;
        let mut x = buffer(&f, 7);
        let mut y = buffer(&f, 0xdead_beef);
        let src = PinnedBuffer::from_slice(&f.device, &vec![v; N]).unwrap();
        spin(&f, &f.a); // the copy below waits behind it on A
        f.a.copy_from_host_async(&src, &mut x).unwrap();
        slow_copy(&f, &x, &mut y, &f.b);
        let w = wrong(&y.to_vec().unwrap(), v);
        if w > 0 {
            bad.push((round, w));
        }
    }
    assert_every_round("copy_from_host_async(x) on A; kernel reads x on B", bad);
}

#[test]
fn kernel_read_then_fill_on_another_stream_write_after_read() {
    let f = fixture();
    let mut bad = Vec::new();
    for round in 0..ROUNDS {
        let v = 4000 + round as u32;
        let mut x = buffer(&f, v);
        let mut y = buffer(&f, 0xdead_beef);
        slow_copy(&f, &x, &mut y, &f.a);
        f.b.fill_async(&mut x, 0).unwrap();
        let w = wrong(&y.to_vec().unwrap(), v) + wrong(&x.to_vec().unwrap(), 0);
        if w > 0 {
            bad.push((round, w));
        }
    }
    assert_every_round("kernel reads x on A; x.fill_async(0) on B", bad);
}

#[test]
fn kernel_write_then_fill_on_another_stream_last_writer_wins() {
    let f = fixture();
    let mut bad = Vec::new();
    for round in 0..ROUNDS {
        let v = 5000 + round as u32;
        let mut x = buffer(&f, 7);
        slow_fill(&f, &mut x, 1, &f.a);
        f.b.fill_async(&mut x, v).unwrap();
        let w = wrong(&x.to_vec().unwrap(), v);
        if w > 0 {
            bad.push((round, w));
        }
    }
    assert_every_round("kernel writes x on A; x.fill_async(v) on B", bad);
}

#[test]
fn async_copy_to_host_then_fill_on_another_stream_write_after_read() {
    let f = fixture();
    let mut bad = Vec::new();
    for round in 0..ROUNDS {
        let v = 6000 + round as u32;
        let mut x = buffer(&f, v);
        let mut host = PinnedBuffer::from_slice(&f.device, &vec![0xdead_beef; N]).unwrap();
        spin(&f, &f.a);
        f.a.copy_to_host_async(&x, &mut host).unwrap();
        f.b.memset_async(&mut x, 0).unwrap();
        let w = wrong(host.as_slice().unwrap(), v) + wrong(&x.to_vec().unwrap(), 0);
        if w > 0 {
            bad.push((round, w));
        }
    }
    assert_every_round("copy_to_host_async(x) on A; memset_async(x) on B", bad);
}

#[test]
fn synchronous_operations_see_other_streams_work_and_are_seen_by_it() {
    let f = fixture();
    let mut bad = Vec::new();
    for round in 0..ROUNDS {
        let v = 7000 + round as u32;
        let mut x = buffer(&f, 7);
        // Kernel on A, then synchronous reads and a device-to-device copy.
        slow_fill(&f, &mut x, v, &f.a);
        let mut y = buffer(&f, 0xdead_beef);
        y.copy_from_device(&x).unwrap();
        let mut w = wrong(&x.to_vec().unwrap(), v) + wrong(&y.to_vec().unwrap(), v);
        // Synchronous write, then a kernel on B reads it.
        let mut z = buffer(&f, 0xdead_beef);
        slow_fill(&f, &mut x, 1, &f.a);
        x.copy_from_host(&vec![v + 1; N]).unwrap();
        slow_copy(&f, &x, &mut z, &f.b);
        w += wrong(&z.to_vec().unwrap(), v + 1);
        if w > 0 {
            bad.push((round, w));
        }
    }
    assert_every_round("synchronous copies between kernels on A and B", bad);
}

#[test]
fn views_order_with_their_parent() {
    let f = fixture();
    let mut bad = Vec::new();
    for round in 0..ROUNDS {
        let v = 8000 + round as u32;
        let mut x = buffer(&f, 7);
        slow_fill(&f, &mut x, v, &f.a);
        let mut host = PinnedBuffer::from_slice(&f.device, &vec![0xdead_beef; N / 2]).unwrap();
        let tail: DeviceSlice<'_, u32> = x.slice(N / 2..).unwrap();
        f.b.copy_to_host_async(&tail, &mut host).unwrap();
        let w = wrong(host.as_slice().unwrap(), v);
        if w > 0 {
            bad.push((round, w));
        }
    }
    assert_every_round(
        "kernel writes x on A; a view of x copied to the host on B",
        bad,
    );
}

#[test]
fn peer_copy_api_is_ordered_on_one_device_too() {
    let f = fixture();
    let mut bad = Vec::new();
    for round in 0..ROUNDS {
        let v = 8500 + round as u32;
        // Read after write: kernel writes x on A, peer copy reads it on B.
        let mut x = buffer(&f, 7);
        let mut y = buffer(&f, 0xdead_beef);
        slow_fill(&f, &mut x, v, &f.a);
        f.b.copy_peer_async(&x, &mut y).unwrap();
        // Write after read: the peer copy reads y on A behind a spin, a fill writes y on B.
        let mut z = buffer(&f, 0xdead_beef);
        spin(&f, &f.a);
        f.a.copy_peer_async(&y, &mut z).unwrap();
        f.b.fill_async(&mut y, 1).unwrap();
        let w = wrong(&z.to_vec().unwrap(), v) + wrong(&y.to_vec().unwrap(), 1);
        if w > 0 {
            bad.push((round, w));
        }
    }
    assert_every_round("copy_peer_async between kernels and fills on A and B", bad);
}

#[test]
fn stream_ordered_buffer_dropped_while_another_stream_writes_it() {
    let f = fixture();
    let mut bad = Vec::new();
    for round in 0..ROUNDS {
        let mut x = DeviceBuffer::<u32>::zeroed_async(&f.a, N).unwrap();
        if untracked_control() {
            // SAFETY: control run (see the module docs).
            unsafe { x.set_untracked(true) };
        }
        slow_fill(&f, &mut x, 0xbad, &f.b);
        drop(x); // freed in A's order: A must wait for B's kernel
        let sentinel = 9000 + round as u32;
        let mut fresh = DeviceBuffer::<u32>::zeroed_async(&f.a, N).unwrap();
        f.a.fill_async(&mut fresh, sentinel).unwrap();
        let w = wrong(&fresh.to_vec().unwrap(), sentinel);
        f.device.synchronize().unwrap();
        let w = w + wrong(&fresh.to_vec().unwrap(), sentinel);
        if w > 0 {
            bad.push((round, w));
        }
    }
    assert_every_round(
        "zeroed_async buffer on A written by a kernel on B, dropped, a new buffer allocated on A",
        bad,
    );
}

#[test]
fn graph_of_fills_replayed_after_its_buffer_was_dropped() {
    let f = fixture();
    let s = Stream::non_blocking(&f.device).unwrap();
    let mut bad = Vec::new();
    for round in 0..ROUNDS / 4 {
        let mut x = buffer(&f, 7);
        let capture = s.begin_capture(CaptureMode::ThreadLocal).unwrap();
        capture.stream().fill_async(&mut x, 0xbad).unwrap();
        let graph = capture.end().unwrap();
        let mut exec = graph.instantiate().unwrap();
        drop(graph);
        drop(x); // the graph keeps the memory
        let sentinel = 10_000 + round as u32;
        let fresh = buffer(&f, sentinel);
        exec.launch(&s).unwrap();
        s.synchronize().unwrap();
        let w = wrong(&fresh.to_vec().unwrap(), sentinel);
        if w > 0 {
            bad.push((round, w));
        }
    }
    assert_every_round(
        "graph holding fill_async replayed after its buffer was dropped",
        bad,
    );
}

#[test]
fn graph_replay_is_ordered_with_other_streams_and_the_host() {
    let f = fixture();
    let s = Stream::non_blocking(&f.device).unwrap();
    let mut x = buffer(&f, 7);
    let mut y = buffer(&f, 0xdead_beef);
    // Allocated before the capture: pinned allocation is not allowed while this thread captures.
    let mut host = PinnedBuffer::from_slice(&f.device, &vec![0u32; N]).unwrap();
    let capture = s.begin_capture(CaptureMode::ThreadLocal).unwrap();
    capture.stream().copy_device_async(&x, &mut y).unwrap();
    // Pinned (host-visible) memory is refused in a capture: a replay would not be borrow-checked against
    // the host's slices of it.
    let err = capture
        .stream()
        .copy_to_host_async(&y, &mut host)
        .unwrap_err();
    assert!(
        matches!(&err, hip::Error::InvalidArgument { reason, .. } if reason.contains("borrow-checked")),
        "{err}"
    );
    let mut exec = capture.end().unwrap().instantiate().unwrap();
    let mut bad = Vec::new();
    for round in 0..ROUNDS {
        let v = 11_000 + round as u32;
        slow_fill(&f, &mut x, v, &f.a); // the replay on `s` reads x: after this write
        exec.launch(&s).unwrap();
        // The host reads y after the replay that writes it; then a kernel on B overwrites y after it.
        let w = wrong(&y.to_vec().unwrap(), v);
        slow_fill(&f, &mut y, 1, &f.b);
        let w = w + wrong(&y.to_vec().unwrap(), 1);
        if w > 0 {
            bad.push((round, w));
        }
    }
    assert_every_round(
        "kernel writes x on A; graph copies x to y on S; host reads y",
        bad,
    );
}

#[test]
fn a_capture_over_two_streams_records_both_and_keeps_their_buffers() {
    let f = fixture();
    let d = &f.b;
    let origin = Stream::non_blocking(&f.device).unwrap();
    let mut x = buffer(&f, 0xdead_beef);
    let mut y = buffer(&f, 0xdead_beef);
    let capture = origin.begin_capture(CaptureMode::ThreadLocal).unwrap();
    let fork = capture.stream().record_event().unwrap();
    d.wait_event(&fork).unwrap(); // d joins the capture
    assert!(d.is_capturing());
    d.fill_async(&mut y, 2).unwrap();
    capture.stream().fill_async(&mut x, 1).unwrap();
    let join = d.record_event().unwrap();
    capture.stream().wait_event(&join).unwrap();
    let graph = capture.end().unwrap();
    assert!(
        !d.is_capturing(),
        "the joined stream leaves the capture with it"
    );
    assert!(graph.node_count().unwrap() >= 2);
    let mut exec = graph.instantiate().unwrap();
    // Nothing ran at capture time.
    assert_eq!(wrong(&x.to_vec().unwrap(), 0xdead_beef), 0);
    assert_eq!(wrong(&y.to_vec().unwrap(), 0xdead_beef), 0);
    // A replay after a slow write on A to both: the replay's fills come last.
    slow_fill(&f, &mut x, 9, &f.a);
    slow_fill(&f, &mut y, 9, &f.a);
    exec.launch(&origin).unwrap();
    assert_eq!(wrong(&x.to_vec().unwrap(), 1), 0);
    assert_eq!(wrong(&y.to_vec().unwrap(), 2), 0);
    drop((x, y)); // kept by the graph
    let fresh = buffer(&f, 42);
    exec.launch(&origin).unwrap();
    origin.synchronize().unwrap();
    assert_eq!(wrong(&fresh.to_vec().unwrap(), 42), 0);
}

#[test]
fn a_stream_ordered_allocation_on_a_capturing_stream_is_refused() {
    let f = fixture();
    let s = Stream::non_blocking(&f.device).unwrap();
    let capture = s.begin_capture(CaptureMode::ThreadLocal).unwrap();
    let err = DeviceBuffer::<u32>::zeroed_async(capture.stream(), 64).unwrap_err();
    assert!(
        matches!(&err, hip::Error::InvalidArgument { reason, .. } if reason.contains("being captured")),
        "{err}"
    );
    // The capture is still usable and ends empty.
    assert_eq!(capture.end().unwrap().node_count().unwrap(), 0);
}

#[test]
fn a_graph_launch_on_a_capturing_stream_is_refused() {
    let f = fixture();
    let s = Stream::non_blocking(&f.device).unwrap();
    let mut x = buffer(&f, 7);
    let capture = s.begin_capture(CaptureMode::ThreadLocal).unwrap();
    capture.stream().fill_async(&mut x, 1).unwrap();
    let mut exec = capture.end().unwrap().instantiate().unwrap();
    let other = Stream::non_blocking(&f.device).unwrap();
    let capturing = other.begin_capture(CaptureMode::ThreadLocal).unwrap();
    let err = exec.launch(capturing.stream()).unwrap_err();
    assert!(
        matches!(&err, hip::Error::InvalidArgument { reason, .. } if reason.contains("being captured")),
        "{err}"
    );
    drop(capturing);
    exec.launch(&s).unwrap();
    assert_eq!(wrong(&x.to_vec().unwrap(), 1), 0);
}
