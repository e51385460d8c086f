//! GPU work as futures (issue 45): many concurrent futures on one executor thread, cancellation without
//! leaks or frees under work, errors, captures refused, and ordering with other streams through the
//! memory model. The executor is tokio's current-thread runtime (the `hip` crate depends on none).
#![cfg(feature = "gpu")]

mod common;

use common::child::run_test_in_child;
use common::{device, load, runtime, slow_fill, ORDERING_KERNELS};
use hip::prelude::*;
use hip::MemPool;
use std::time::{Duration, Instant};

/// `hipMemPoolAttrUsedMemCurrent` (HIP's NVIDIA headers define it as a macro over CUDA's value, which
/// bindgen drops; both are 7).
#[cfg(hip_platform = "nvidia")]
const USED_MEM_CURRENT: hip::sys::hipMemPoolAttr = hip::sys::cudaMemPoolAttrUsedMemCurrent;
#[cfg(not(hip_platform = "nvidia"))]
const USED_MEM_CURRENT: hip::sys::hipMemPoolAttr = hip::sys::hipMemPoolAttrUsedMemCurrent;

/// Bytes in use in the device's default memory pool.
fn pool_used(device: &Device) -> u64 {
    let pool = MemPool::default_for(device).unwrap();
    let mut used = 0u64;
    // SAFETY: a live pool and an out-pointer to a u64, the attribute's type.
    let r = unsafe {
        hip::sys::hipMemPoolGetAttribute(
            pool.raw(),
            USED_MEM_CURRENT,
            (&mut used as *mut u64).cast(),
        )
    };
    assert_eq!(r, hip::sys::hipSuccess);
    used
}

#[test]
fn ten_thousand_concurrent_futures_on_one_thread_all_complete_right() {
    const N: usize = 10_000;
    const EACH: usize = 16;
    let device = device();
    let streams: Vec<Stream> = (0..4)
        .map(|_| Stream::non_blocking(&device).unwrap())
        .collect();
    let host: Vec<u32> = (0..(N * EACH) as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let buf = DeviceBuffer::from_slice(&device, &host).unwrap();
    let rt = runtime();
    let start = Instant::now();
    let (reads, completions) = rt.block_on(async {
        let mut reads = tokio::task::JoinSet::new();
        for i in 0..N {
            let f = buf
                .slice(i * EACH..(i + 1) * EACH)
                .unwrap()
                .to_vec_future(&streams[i % streams.len()]);
            reads.spawn(async move { (i, f.await) });
        }
        // Completions of whole streams, pending among the reads.
        let mut completions = tokio::task::JoinSet::new();
        for s in &streams {
            completions.spawn(s.completion());
        }
        let mut got = Vec::with_capacity(N);
        while let Some(r) = reads.join_next().await {
            got.push(r.unwrap());
        }
        let mut done = 0;
        while let Some(r) = completions.join_next().await {
            r.unwrap().unwrap();
            done += 1;
        }
        (got, done)
    });
    let elapsed = start.elapsed();
    assert_eq!(completions, streams.len());
    assert_eq!(reads.len(), N);
    for (i, v) in reads {
        let v = v.unwrap_or_else(|e| panic!("read {i}: {e}"));
        assert_eq!(v, host[i * EACH..(i + 1) * EACH], "read {i}");
    }
    println!("{N} concurrent to_vec_future on one thread: {elapsed:?}");
}

#[test]
fn a_future_dropped_mid_flight_frees_nothing_under_work_and_leaks_nothing() {
    let device = device();
    let module = load(&device, ORDERING_KERNELS);
    let stream = Stream::non_blocking(&device).unwrap();
    stream.synchronize().unwrap();
    let before = pool_used(&device);
    const LEN: usize = 1 << 20;
    let mut x = DeviceBuffer::<u32>::zeroed_async(&stream, LEN).unwrap();
    let pinned = PinnedBuffer::<u32>::zeroed(&device, LEN).unwrap();
    // About 0.1-0.5 s of spinning, then the write the copies read.
    slow_fill(&module, &stream, &mut x, 7, 200_000_000);
    let f = x.to_vec_future(&stream);
    let pinned_copy = stream.copy_to_pinned_future(&x, pinned);
    let t = Instant::now();
    drop(f);
    drop(pinned_copy);
    drop(x);
    let dropping = t.elapsed();
    assert!(
        !stream.query().unwrap(),
        "the kernel should still run: make it slower for this GPU"
    );
    // Nothing was freed under the kernel and the copies: the pool memory is still in use.
    assert!(
        pool_used(&device) >= before + (LEN * 4) as u64,
        "pool memory freed while queued work still uses it"
    );
    assert!(
        dropping < Duration::from_millis(50),
        "dropping pending futures blocked the thread for {dropping:?}"
    );
    stream.synchronize().unwrap();
    // The stream's waiting thread releases the memory once the work is done: it goes back shortly after.
    let deadline = Instant::now() + Duration::from_secs(10);
    while pool_used(&device) > before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(pool_used(&device), before, "pool memory leaked");
}

#[test]
fn deliberate_device_fault_resolves_pending_futures_with_the_error() {
    // A fault poisons the whole context: run it in a child process of this test binary.
    if std::env::var_os("HIP_RS_FUTURES_FAULT_CHILD").is_some() {
        fault_child();
        return;
    }
    // The child's fault is deliberate: the bundles' compute-sanitizer passes skip every test whose name
    // says `deliberate_device_fault` (scripts/gpu-bundle.sh), since the sanitizer follows the child.
    // A future that is never woken would hang the child: give it a minute.
    let child = run_test_in_child(
        "deliberate_device_fault_resolves_pending_futures_with_the_error",
        "HIP_RS_FUTURES_FAULT_CHILD",
        Duration::from_secs(60),
    );
    let stdout = child.stdout;
    let status = child
        .status
        .expect("the child hung: a future on a faulting stream was never woken");
    assert!(status.success(), "the child failed: {status:?}");
    assert!(stdout.contains("completion error: "), "{stdout}");
    assert!(stdout.contains("read error: "), "{stdout}");
}

fn fault_child() {
    const BAD: &str = r#"
    extern "C" __global__ void bad(unsigned long long address) {
        *(volatile unsigned int*)address = 1;
    }
    "#;
    let device = device();
    let module = load(&device, BAD);
    let stream = Stream::non_blocking(&device).unwrap();
    let x = DeviceBuffer::<u32>::from_slice(&device, &[1, 2, 3]).unwrap();
    let k = module.function("bad").unwrap();
    let mut args = LaunchArgs::new();
    let address = 16u64;
    args.arg(&address);
    // SAFETY: on purpose not safe for the device: it writes to address 16 (the test of a faulting stream);
    // the host's memory is untouched.
    unsafe { k.launch(&stream, &LaunchConfig::for_num_elems(1), &mut args) }.unwrap();
    let rt = runtime();
    let done = rt.block_on(stream.completion());
    let read = rt.block_on(x.to_vec_future(&stream));
    match (&done, &read) {
        (Err(e), Err(r)) => {
            println!("completion error: {e}");
            println!("read error: {r}");
        }
        _ => panic!("a faulting stream must resolve with errors: {done:?}, {read:?}"),
    }
    // The buffer's drop must not panic or hang on a broken device (it leaks instead).
    std::mem::forget(x);
}

#[test]
fn futures_on_a_capturing_stream_are_refused_with_a_clear_error() {
    let device = device();
    let stream = Stream::non_blocking(&device).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(&device, 64).unwrap();
    let rt = runtime();
    let capture = stream.begin_capture(CaptureMode::ThreadLocal).unwrap();
    stream.memset_async(&mut x, 1).unwrap();
    let event = stream.record_event().unwrap();
    let errors = [
        rt.block_on(stream.completion()).unwrap_err(),
        rt.block_on(x.to_vec_future(&stream)).unwrap_err(),
        // Empty memory: the refused future drops its pinned buffer without a HIP call (freeing pinned
        // memory is one of the calls a capture refuses).
        rt.block_on(stream.copy_to_pinned_future(
            &x.slice(..0).unwrap(),
            PinnedBuffer::<u32>::zeroed(&device, 0).unwrap(),
        ))
        .unwrap_err(),
        rt.block_on(event.completion()).unwrap_err(),
    ];
    for e in &errors {
        assert_eq!(e.status(), Status::InvalidArgument, "{e}");
        assert!(e.to_string().contains("captur"), "{e}");
    }
    // The capture is intact: it ends, instantiates and runs.
    let graph = capture.end().unwrap();
    graph.instantiate().unwrap().launch(&stream).unwrap();
    assert_eq!(
        rt.block_on(x.to_vec_future(&stream)).unwrap(),
        vec![0x0101_0101; 64]
    );
}

#[test]
fn a_read_on_another_stream_sees_the_kernel_that_wrote_it() {
    let device = device();
    let module = load(&device, ORDERING_KERNELS);
    let (a, b) = (
        Stream::non_blocking(&device).unwrap(),
        Stream::non_blocking(&device).unwrap(),
    );
    let rt = runtime();
    for round in 0..4u32 {
        let mut x = DeviceBuffer::<u32>::zeroed(&device, 1 << 16).unwrap();
        // A writes slowly; B's read is ordered after it by the memory model, not by the test.
        slow_fill(&module, &a, &mut x, 10 + round, 20_000_000);
        let read = x.to_vec_future(&b);
        let event = a.record_event().unwrap();
        let got = rt.block_on(read).unwrap();
        assert!(
            got.iter().all(|&v| v == 10 + round),
            "round {round}: {:?}",
            &got[..4]
        );
        // The event's completion follows A's write too.
        rt.block_on(event.completion()).unwrap();
        assert!(event.query().unwrap());
        // A pinned read on B of A's next write, the buffer reused.
        slow_fill(&module, &a, &mut x, 100 + round, 2_000_000);
        let pinned = PinnedBuffer::<u32>::zeroed(&device, x.len()).unwrap();
        let pinned = rt.block_on(b.copy_to_pinned_future(&x, pinned)).unwrap();
        assert!(pinned.as_slice().unwrap().iter().all(|&v| v == 100 + round));
    }
}

#[test]
fn completion_waits_for_the_work_and_the_host_then_reuses_memory_without_waiting() {
    let device = device();
    let module = load(&device, ORDERING_KERNELS);
    let stream = Stream::non_blocking(&device).unwrap();
    let rt = runtime();
    let mut x = DeviceBuffer::<u32>::zeroed(&device, 1 << 16).unwrap();
    let mut host = PinnedBuffer::<u32>::zeroed(&device, 1 << 16).unwrap();
    slow_fill(&module, &stream, &mut x, 5, 20_000_000);
    stream.copy_to_host_async(&x, &mut host).unwrap();
    rt.block_on(stream.completion()).unwrap();
    // The completion taught the memory model that the copy is done, so `as_slice` does not wait: had the
    // future resolved before the kernel and the copy, this would read zeros.
    assert!(host.as_slice().unwrap().iter().all(|&v| v == 5));
    // Zero-length reads resolve without queueing anything.
    let empty = DeviceBuffer::<u32>::zeroed(&device, 0).unwrap();
    assert_eq!(
        rt.block_on(empty.to_vec_future(&stream)).unwrap(),
        Vec::<u32>::new()
    );
    let none = rt
        .block_on(stream.copy_to_pinned_future(
            &x.slice(..0).unwrap(),
            PinnedBuffer::<u32>::zeroed(&device, 0).unwrap(),
        ))
        .unwrap();
    assert!(none.is_empty());
    // A length mismatch is the future's error.
    let small = PinnedBuffer::<u32>::zeroed(&device, 3).unwrap();
    let e = rt
        .block_on(stream.copy_to_pinned_future(&x, small))
        .unwrap_err();
    assert_eq!(e.status(), Status::ExtentMismatch, "{e}");
}

/// Issue 56: with the reactor chosen, futures on three streams resolve with the right values and the
/// reactor's counts say it woke them (or, on a device without 64-bit stream memory operations, that
/// every one fell back to the waiting thread: never neither).
#[test]
fn the_reactor_wakes_reads_and_completions_on_three_streams() {
    use hip::future::{reactor_stats, set_wake, wake, Wake};
    let device = device();
    let rt = runtime();
    let before_wake = wake();
    set_wake(Wake::Reactor);
    let before = reactor_stats();
    let streams: Vec<Stream> = (0..3)
        .map(|_| Stream::non_blocking(&device).unwrap())
        .collect();
    for round in 0..200u32 {
        let s = &streams[round as usize % 3];
        let mut x = DeviceBuffer::<u32>::zeroed(&device, 1024).unwrap();
        s.fill_async(&mut x, round).unwrap();
        let read = x.to_vec_future(s);
        let done = s.completion();
        let (v, d) = rt.block_on(async { (read.await, done.await) });
        assert_eq!(v.unwrap(), vec![round; 1024]);
        d.unwrap();
    }
    set_wake(before_wake);
    let after = reactor_stats();
    let (taken, fell) = (
        after.watched - before.watched,
        after.fell_back - before.fell_back,
    );
    println!("reactor: {taken} watched, {fell} fell back, {after:?}");
    assert!(
        taken + fell >= 400,
        "every future went one way or the other"
    );
}
