//! Host functions and the memory model (issue 42): a buffer dropped inside a host function is freed
//! after the stream's work without the callback waiting on its own stream (a deadlock before), and a
//! host access inside one that would have to wait for the stream is refused with a clear error.
#![cfg(feature = "gpu")]

mod common;

use common::{device, load, within_30s, ORDERING_KERNELS};
use hip::host_fn::HostFnState;
use hip::prelude::*;
use std::sync::mpsc;

const N: usize = 1 << 16;

fn spin_fill(module: &Module, s: &Stream, x: &mut DeviceBuffer<u32>, value: u32) {
    let k = module.function("slow_fill").unwrap();
    let (n, spin) = (N as u32, 1_000_000i64);
    let mut args = LaunchArgs::new();
    args.arg_mut(x).arg(&value).arg(&n).arg(&spin);
    // SAFETY: slow_fill(unsigned*, unsigned, unsigned, long long) writes x[..n].
    unsafe {
        k.launch(s, &LaunchConfig::for_num_elems(N as u32), &mut args)
            .unwrap()
    };
}

#[test]
fn a_buffer_dropped_inside_a_host_function_is_freed_without_a_deadlock() {
    within_30s(|| {
        let device = device();
        let module = load(&device, ORDERING_KERNELS);
        let s = Stream::non_blocking(&device).unwrap();
        let other = Stream::non_blocking(&device).unwrap();
        for round in 0..20u32 {
            let mut x = DeviceBuffer::<u32>::zeroed(&device, N).unwrap();
            spin_fill(&module, &s, &mut x, round);
            // Another stream's use too: the free waits for both.
            let mut y = DeviceBuffer::<u32>::zeroed(&device, N).unwrap();
            spin_fill(&module, &other, &mut y, round);
            let h = s.launch_host_fn(move || drop((x, y))).unwrap();
            s.synchronize().unwrap();
            assert_eq!(h.state(), HostFnState::Done, "round {round}");
        }
        other.synchronize().unwrap();
        device.synchronize().unwrap();
    });
}

#[test]
fn a_host_access_inside_a_host_function_that_would_wait_is_refused() {
    within_30s(|| {
        let device = device();
        let module = load(&device, ORDERING_KERNELS);
        let s = Stream::non_blocking(&device).unwrap();
        let mut x = DeviceBuffer::<u32>::zeroed(&device, N).unwrap();
        spin_fill(&module, &s, &mut x, 7);
        let mut pinned = PinnedBuffer::<u32>::zeroed(&device, N).unwrap();
        s.copy_to_host_async(&x, &mut pinned).unwrap();
        let (tx, rx) = mpsc::channel();
        s.launch_host_fn(move || {
            let r = pinned.as_slice().map(|v| v[0]).map_err(|e| e.to_string());
            let _ = tx.send((r, pinned));
        })
        .unwrap();
        s.synchronize().unwrap();
        let (r, pinned) = rx.recv().unwrap();
        let e = r.expect_err("a host wait inside a host function must be refused");
        assert!(e.contains("host function"), "{e}");
        // Outside, the same access waits and sees the data.
        assert!(pinned.as_slice().unwrap().iter().all(|&v| v == 7));
    });
}
