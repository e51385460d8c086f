//! Host functions, occupancy, graphs and stream-ordered pools on a real device. Compiled only with
//! `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use hip::prelude::*;
use hip::{CaptureMode, Error, HostFnState, MemPool};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const KERNELS: &str = r#"
extern "C" __global__ void inc(unsigned int* x, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
}
"#;

fn device() -> Device {
    Device::get(0).expect("--features gpu needs a HIP device")
}

fn kernels(d: &Device) -> Module {
    let code = ProgramBuilder::new(KERNELS).compile().unwrap();
    Module::load_data(d, code.code()).unwrap()
}

/// Queue `inc` over `x` on `stream`.
unsafe fn inc(f: &Function, stream: &Stream, x: &DeviceBuffer<u32>) {
    let n = x.len() as u32;
    let mut args = LaunchArgs::new();
    args.arg(x).arg(&n);
    f.launch(stream, &LaunchConfig::for_num_elems(n), &mut args)
        .unwrap();
}

struct Tracked(Arc<AtomicUsize>);
impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn host_fns_run_in_stream_order_once_and_report_panics() {
    let d = device();
    let m = kernels(&d);
    let spin = m.function("spin").unwrap();
    let s = Stream::new(&d).unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let drops = Arc::new(AtomicUsize::new(0));
    // A long kernel first: the host functions must wait for it.
    let cycles = 50_000_000i64;
    let mut args = LaunchArgs::new();
    args.arg(&cycles);
    unsafe {
        spin.launch(&s, &LaunchConfig::new(1, 1), &mut args)
            .unwrap()
    };
    let (o, t) = (order.clone(), Tracked(drops.clone()));
    let first = s
        .launch_host_fn(move || {
            let _t = &t;
            o.lock().unwrap().push(1)
        })
        .unwrap();
    let panicking = s.launch_host_fn(|| panic!("host fn boom")).unwrap();
    let o = order.clone();
    let third = s.launch_host_fn(move || o.lock().unwrap().push(3)).unwrap();
    assert_eq!(
        first.state(),
        HostFnState::Pending,
        "ran before the kernel finished"
    );
    s.synchronize().unwrap();
    assert_eq!(*order.lock().unwrap(), [1, 3]);
    assert_eq!(first.state(), HostFnState::Done);
    assert_eq!(third.state(), HostFnState::Done);
    assert_eq!(panicking.panic_message().as_deref(), Some("host fn boom"));
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "closure freed exactly once"
    );
    // The stream still works after the panic.
    let after = s.launch_host_fn(|| ()).unwrap();
    s.synchronize().unwrap();
    assert_eq!(after.state(), HostFnState::Done);
}

#[test]
fn occupancy_queries_and_config_compute_right() {
    let d = device();
    let m = kernels(&d);
    let f = m.function("inc").unwrap();
    let per_sm = f.max_active_blocks_per_multiprocessor(256, 0).unwrap();
    assert!(per_sm >= 1, "{per_sm}");
    let big = f.max_active_blocks_per_multiprocessor(1024, 0).unwrap();
    assert!(
        big <= per_sm,
        "bigger blocks fit no more often: {big} > {per_sm}"
    );
    assert!(matches!(
        f.max_active_blocks_per_multiprocessor(0, 0),
        Err(Error::InvalidArgument { .. })
    ));
    let (grid, block) = f.suggested_block_size(0, 0).unwrap();
    assert!(
        grid >= 1 && block >= 32 && block <= f.max_threads_per_block(),
        "{grid} {block}"
    );
    let (_, limited) = f.suggested_block_size(0, 64).unwrap();
    assert!((1..=64).contains(&limited), "{limited}");
    let n = 1_000_003u32;
    let cfg = LaunchConfig::for_occupancy(&f, n).unwrap();
    assert_eq!(cfg.block.x, block);
    assert!(u64::from(cfg.grid.x) * u64::from(cfg.block.x) >= u64::from(n));
    let x = DeviceBuffer::<u32>::zeroed(&d, n as usize).unwrap();
    let s = Stream::new(&d).unwrap();
    let mut args = LaunchArgs::new();
    args.arg(&x).arg(&n);
    unsafe { f.launch(&s, &cfg, &mut args).unwrap() };
    s.synchronize().unwrap();
    assert!(x.to_vec().unwrap().iter().all(|&v| v == 1));
}

/// On HIP's NVIDIA platform graphs are refused with a clear reason; the graph tests check that and stop.
fn graphs_unsupported_here(d: &Device) -> bool {
    if hip::graph::SUPPORTED {
        return false;
    }
    let s = Stream::new(d).unwrap();
    match s.begin_capture(CaptureMode::Global) {
        Err(Error::NotSupported { what, reason }) => {
            assert!(
                what.contains("NVIDIA") && reason.contains("__CUDACC__"),
                "{what}: {reason}"
            );
        }
        other => panic!("expected NotSupported, got {:?}", other.map(|_| ())),
    }
    assert!(
        !s.is_capturing(),
        "a refused capture leaves the stream usable"
    );
    s.synchronize().unwrap();
    true
}

#[test]
fn captured_graph_replays_and_keeps_its_buffers() {
    let d = device();
    if graphs_unsupported_here(&d) {
        return;
    }
    let m = kernels(&d);
    let f = m.function("inc").unwrap();
    let s = Stream::new(&d).unwrap();
    let n = 4099u32;
    let x = Arc::new(DeviceBuffer::<u32>::zeroed(&d, n as usize).unwrap());
    let mut cap = s.begin_capture(CaptureMode::Global).unwrap();
    assert!(s.is_capturing());
    for _ in 0..10 {
        let mut args = LaunchArgs::new();
        args.arg(&*x).arg(&n);
        unsafe {
            cap.launch(&f, &LaunchConfig::for_num_elems(n), &mut args)
                .unwrap()
        };
    }
    cap.keep(x.clone());
    // Capturing ran nothing.
    let graph = cap.end().unwrap();
    assert!(!s.is_capturing());
    assert!(x.to_vec().unwrap().iter().all(|&v| v == 0));
    let mut exec = graph.instantiate().unwrap();
    drop(graph); // the executable graph stands alone
    let other = Stream::non_blocking(&d).unwrap();
    for _ in 0..3 {
        exec.launch(&other).unwrap();
    }
    other.synchronize().unwrap();
    assert!(x.to_vec().unwrap().iter().all(|&v| v == 30));
    assert_eq!(Arc::strong_count(&x), 2, "the graph holds the buffer");
    drop(exec);
    assert_eq!(
        Arc::strong_count(&x),
        1,
        "and lets go when the last GraphExec goes"
    );
}

#[test]
fn thread_local_capture_and_abandoned_capture() {
    let d = device();
    if graphs_unsupported_here(&d) {
        return;
    }
    let m = kernels(&d);
    let f = m.function("inc").unwrap();
    let s = Stream::new(&d).unwrap();
    let x = DeviceBuffer::<u32>::zeroed(&d, 64).unwrap();
    {
        let _cap = s.begin_capture(CaptureMode::ThreadLocal).unwrap();
        unsafe { inc(&f, &s, &x) };
        // dropped without end: the capture ends and the graph is thrown away
    }
    assert!(!s.is_capturing());
    unsafe { inc(&f, &s, &x) };
    s.synchronize().unwrap();
    assert!(
        x.to_vec().unwrap().iter().all(|&v| v == 1),
        "only the uncaptured launch ran"
    );
    let cap = s.begin_capture(CaptureMode::ThreadLocal).unwrap();
    unsafe { inc(&f, cap.stream(), &x) };
    let mut exec = cap.end().unwrap().instantiate().unwrap();
    exec.launch(&s).unwrap();
    s.synchronize().unwrap();
    assert!(x.to_vec().unwrap().iter().all(|&v| v == 2));
    assert!(matches!(
        Stream::new(&d)
            .unwrap()
            .begin_capture(CaptureMode::Global)
            .map(|_| ()),
        Ok(())
    ));
    assert!(matches!(
        d.default_stream()
            .begin_capture(CaptureMode::Global)
            .map(|_| ()),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn uncapturable_operations_give_clear_errors() {
    let d = device();
    if graphs_unsupported_here(&d) {
        return;
    }
    let s = Stream::new(&d).unwrap();
    let cap = s.begin_capture(CaptureMode::Global).unwrap();
    let e = s.synchronize().unwrap_err();
    assert!(e.to_string().contains("captured into a graph"), "{e}");
    assert!(matches!(s.query(), Err(Error::InvalidArgument { .. })));
    assert!(matches!(
        s.begin_capture(CaptureMode::Global).map(|_| ()),
        Err(Error::InvalidArgument { .. })
    ));
    // The refusal came before HIP: the capture is still good.
    cap.end().unwrap();

    // A synchronous copy while a global capture is under way is refused by HIP, and the capture fails.
    let x = DeviceBuffer::<u32>::zeroed(&d, 16).unwrap();
    let cap = s.begin_capture(CaptureMode::Global).unwrap();
    let copy = x.to_vec();
    let end = cap.end();
    assert!(
        copy.is_err() || end.is_err(),
        "a synchronous copy during a global capture must fail somewhere"
    );
    if let Err(e) = end {
        assert!(e.hip_code().is_some(), "the runtime's code is kept: {e}");
    }
    assert!(!s.is_capturing());
    s.synchronize().unwrap();
}

#[test]
fn stream_ordered_buffers_and_the_pool() {
    let d = device();
    let pools = d
        .attribute(hip::sys::hipDeviceAttributeMemoryPoolsSupported)
        .unwrap()
        != 0;
    let s = Stream::new(&d).unwrap();
    let n = 1 << 20;
    let b = DeviceBuffer::<u32>::zeroed_async(&s, n).unwrap();
    assert_eq!(b.is_stream_ordered(), pools);
    s.synchronize().unwrap();
    assert!(b.to_vec().unwrap().iter().all(|&v| v == 0));
    let mut c = unsafe { DeviceBuffer::<u32>::alloc_async(&s, n).unwrap() };
    let host: Vec<u32> = (0..n as u32).collect();
    c.copy_from_host(&host).unwrap();
    assert_eq!(c.to_vec().unwrap(), host);
    // The buffer outlives its stream: the free still goes in that stream's order.
    drop(s);
    drop(b);
    drop(c);
    let empty = DeviceBuffer::<u32>::zeroed_async(&Stream::new(&d).unwrap(), 0).unwrap();
    assert!(empty.is_empty());
    match MemPool::default_for(&d) {
        Ok(pool) => {
            assert!(pools);
            pool.set_release_threshold(64 << 20).unwrap();
            assert_eq!(pool.release_threshold().unwrap(), 64 << 20);
            pool.set_release_threshold(0).unwrap();
            assert_eq!(pool.release_threshold().unwrap(), 0);
            pool.trim_to(0).unwrap();
        }
        Err(e) => {
            assert!(!pools);
            assert!(matches!(e, Error::NotSupported { .. }), "{e}");
        }
    }
}
