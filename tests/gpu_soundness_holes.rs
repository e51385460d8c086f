//! Issue 54's holes on one device, each as a user would hit it: an event re-recorded on another thread
//! while a stream waits for it (3), a graph launched while a staged copy is in flight (5), the second
//! future of a stream behind a dropped first one whose release would wait for a busy device (6), and HIP
//! objects dropped inside a host function (7). Hole 4 is in tests/gpu_rccl_one_rank.rs. Compiled only
//! with `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use common::child::run_test_in_child;
use common::{device, load, slow_fill, ORDERING_KERNELS, SPIN_FILL};
use hip::memory::staging::{self, StagingConfig};
use hip::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Hole 3. Thread W: `b.wait_event(&e)`, then copy `x` on B. Thread R: a slow fill of `x` on A with the
/// next value, announced, then `e.record(&a)`. A wait that binds to the old record must not teach the
/// memory model the new record's position: B's copy of `x` then waits for A's fill. Before the fix the
/// wait could store the new position after the HIP wait bound to the old record, and B's copy overtook
/// the slow fill: the copy saw a value older than one announced before it was queued.
#[test]
fn a_wait_racing_a_re_record_teaches_only_the_record_it_bound_to() {
    let d = device();
    let m = load(&d, ORDERING_KERNELS);
    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    // Small, so a round's check is short beside the millisecond fill: W spends most of its time
    // around its waits, where the race is.
    const N: usize = 1 << 16;
    const ROUNDS: u32 = 300;
    let x = Arc::new(std::sync::Mutex::new(
        DeviceBuffer::<u32>::zeroed(&d, N).unwrap(),
    ));
    let e = Arc::new(Event::new(&d).unwrap());
    e.record(&a).unwrap();
    let announced = Arc::new(AtomicU32::new(0));
    let start = Arc::new(Barrier::new(2));
    let recorder = {
        let (x, e, announced, start) = (x.clone(), e.clone(), announced.clone(), start.clone());
        std::thread::spawn(move || {
            start.wait();
            for v in 1..=ROUNDS {
                {
                    let mut x = x.lock().unwrap();
                    // About a millisecond of spinning before the write: B would overtake it.
                    slow_fill(&m, &a, &mut x, v, 2_000_000);
                }
                announced.store(v, Ordering::SeqCst);
                e.record(&a).unwrap();
                // One fill in flight at a time: W's rounds keep pace with the records.
                a.synchronize().unwrap();
            }
            a.synchronize().unwrap();
        })
    };
    start.wait();
    let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut checked = 0;
    while announced.load(Ordering::SeqCst) < ROUNDS {
        b.wait_event(&e).unwrap();
        let floor = announced.load(Ordering::SeqCst);
        {
            let x = x.lock().unwrap();
            b.copy_device_async(&*x, &mut y).unwrap();
        }
        let got = y.to_vec().unwrap();
        assert!(
            got.iter().all(|&v| v == got[0]),
            "a copy of x ran during a fill (torn)"
        );
        assert!(
            got[0] >= floor,
            "B's copy saw fill {} though fill {floor} was queued before it: B learnt a record it \
             did not wait for",
            got[0]
        );
        checked += 1;
    }
    recorder.join().unwrap();
    assert!(
        checked > 10,
        "only {checked} rounds overlapped the recorder"
    );
}

/// Hole 5. A staged pageable copy into `x` (eight 1 MiB chunks, two pinned buffers) on one thread, and a
/// graph that fills `x` launched on another thread while the copy is in flight. The staging ring's chunk
/// events carried the whole copy's label: waiting for the first chunk's event (before reusing its
/// buffer) told the memory model the copy was done, and the graph's fill ran under the later chunks (a
/// torn buffer). Now the launch waits for the whole copy, or the copy for the launch: `x` ends all one
/// value.
#[test]
fn a_graph_launched_during_a_staged_copy_waits_for_all_of_it() {
    let d = device();
    let saved = staging::config();
    staging::set_config(StagingConfig {
        enabled: true,
        threshold_bytes: 1 << 20,
        chunk_bytes: 1 << 20,
        buffers: 2,
        threads: 2,
        register_bytes: usize::MAX, // the ring's chunks are what this test is about
        ramp: false,
    });
    const N: usize = 2 << 20; // 8 MiB of u32
    const COPY: u32 = 0x1111_1111;
    const FILL: u32 = 0x2222_2222;
    let host: Vec<u32> = vec![COPY; N];
    let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let g = Stream::non_blocking(&d).unwrap();
    let mut exec = {
        let cap = g.begin_capture(CaptureMode::ThreadLocal).unwrap();
        g.fill_async(&mut x, FILL).unwrap();
        cap.end().unwrap().instantiate().unwrap()
    };
    let (mut after_copy, mut after_fill) = (0, 0);
    for round in 0..40u64 {
        let copying = AtomicBool::new(false);
        std::thread::scope(|t| {
            t.spawn(|| {
                copying.store(true, Ordering::SeqCst);
                x.copy_from_host(&host).unwrap();
            });
            t.spawn(|| {
                while !copying.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
                // Into the copy by a varying amount: some launches land mid-copy.
                std::thread::sleep(Duration::from_micros(50 * (round % 20)));
                exec.launch(&g).unwrap();
            });
        });
        g.synchronize().unwrap();
        let v = x.to_vec().unwrap();
        let torn = v.iter().position(|&w| w != v[0]);
        assert!(
            torn.is_none(),
            "round {round}: x is torn at element {} ({:#x} then {:#x})",
            torn.unwrap(),
            v[0],
            v[torn.unwrap()]
        );
        match v[0] {
            COPY => after_fill += 1,
            FILL => after_copy += 1,
            other => panic!("round {round}: x holds {other:#x}"),
        }
    }
    staging::set_config(saved);
    println!("the fill ran after the copy in {after_copy} rounds, before it in {after_fill}");
}

/// Hole 6. `f1 = x.to_vec_future(&s); f2 = y.to_vec_future(&s); drop(x); drop(f1)` while another stream
/// still reads `x` behind about a second of spinning, and `s` spins 0.2 s first so that f1 is still
/// pending when dropped. f1's release frees `x` (the future held its last owner), which first waits for
/// that read. The stream's waiting thread did that release itself before it woke f2, so f2 resolved only
/// after the busy second; now the releasing thread does it (and f1's pinned staging buffer goes back to
/// the cache, not to `hipHostFree`).
#[test]
fn the_second_future_does_not_wait_for_the_first_ones_release() {
    let d = device();
    let m = load(&d, SPIN_FILL);
    let (s, busy) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    const N: usize = 1 << 20;
    common::runtime().block_on(async {
        let x = DeviceBuffer::from_slice(&d, &vec![1u32; N]).unwrap();
        let y = DeviceBuffer::from_slice(&d, &vec![2u32; N]).unwrap();
        let mut z = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        // Warm the waiting thread and the staging cache: the timing below is the release's alone.
        assert_eq!(y.to_vec_future(&s).await.unwrap()[0], 2);
        assert_eq!(x.to_vec_future(&s).await.unwrap()[0], 1);
        let spin = m.function("spin").unwrap();
        let cycles = 2_000_000_000i64; // about a second at 2 GHz
        let mut args = LaunchArgs::new();
        args.arg(&cycles);
        let start = Instant::now();
        // SAFETY: spin(long long) reads its argument only.
        unsafe { spin.launch(&busy, &LaunchConfig::new(1, 1), &mut args) }.unwrap();
        // `busy` reads x after the spin: freeing x waits for this read.
        busy.copy_device_async(&x, &mut z).unwrap();
        let short = cycles / 5;
        let mut args = LaunchArgs::new();
        args.arg(&short);
        // SAFETY: as above.
        unsafe { spin.launch(&s, &LaunchConfig::new(1, 1), &mut args) }.unwrap();
        let f1 = x.to_vec_future(&s);
        let f2 = y.to_vec_future(&s);
        drop(x);
        drop(f1);
        let v = f2.await.unwrap();
        let took = start.elapsed();
        assert_eq!(v, vec![2u32; N]);
        busy.synchronize().unwrap();
        let busy_for = start.elapsed();
        println!("f2 resolved after {took:?}; the device was busy for {busy_for:?}");
        assert!(
            busy_for > Duration::from_millis(500),
            "the busy kernel took only {busy_for:?}: the test shows nothing"
        );
        assert!(
            took < Duration::from_millis(600),
            "f2 resolved {took:?} after the busy kernel began (it should follow the 0.2 s spin on its \
             stream, not f1's release)"
        );
        assert_eq!(z.to_vec().unwrap(), vec![1u32; N]);
    });
}

/// Hole 7. A launched graph (holding the last owner of a 1 GiB buffer), a module, a stream and an event
/// dropped inside a host function. Dropping the graph synchronizes the device, which a host function
/// may not do (it waits for work queued behind the function, or HIP refuses it): the graph then leaked
/// what it kept. Now every one of them is released by the crate's releasing thread: the stream
/// completes, and the 1 GiB comes back. In a child process: a deadlock ends the child, not the run.
#[test]
fn hip_objects_dropped_inside_a_host_function_are_released_outside_it() {
    const MARKER: &str = "HIP_RS_TEST_HOST_FN_DROPS";
    if std::env::var(MARKER).is_ok() {
        host_fn_drops_child();
        return;
    }
    let run = run_test_in_child(
        "hip_objects_dropped_inside_a_host_function_are_released_outside_it",
        MARKER,
        Duration::from_secs(120),
    );
    let status = run
        .status
        .expect("the child hung: a drop inside the host function waited for the device");
    assert!(status.success(), "the child failed: {}", run.stderr);
    assert!(run.stdout.contains("HOST-FN-DROPS-OK"), "{}", run.stdout);
}

fn host_fn_drops_child() {
    const BIG: usize = 1 << 30;
    let d = device();
    let s = Stream::new(&d).unwrap();
    let g = Stream::non_blocking(&d).unwrap();
    let (free_before, _) = d.memory_info().unwrap();
    let mut x = DeviceBuffer::<u8>::zeroed(&d, BIG).unwrap();
    let mut exec = {
        let cap = g.begin_capture(CaptureMode::ThreadLocal).unwrap();
        g.fill_async(&mut x, 7).unwrap();
        cap.end().unwrap().instantiate().unwrap()
    };
    exec.launch(&g).unwrap();
    g.synchronize().unwrap();
    drop(x); // the graph now holds the last owner
    let module = load(&d, SPIN_FILL);
    let other = Stream::non_blocking(&d).unwrap();
    let event = other.record_event().unwrap();
    let handle = s
        .launch_host_fn(move || {
            drop(exec);
            drop(module);
            drop(event);
            drop(other);
        })
        .unwrap();
    s.synchronize().unwrap();
    assert_eq!(handle.state(), hip::HostFnState::Done);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (free, _) = d.memory_info().unwrap();
        if free + BIG / 4 >= free_before {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the graph's 1 GiB never came back ({free} free, {free_before} before): leaked"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // HIP still works on this thread and the device.
    d.synchronize().unwrap();
    println!("HOST-FN-DROPS-OK");
}
