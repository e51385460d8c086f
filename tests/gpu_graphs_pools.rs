//! Host functions, occupancy and stream-ordered pools on a real device (graphs: gpu_graphs.rs). Compiled only with
//! `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use hip::prelude::*;
use hip::{Error, HostFnState, MemPool};
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

use common::device;

fn kernels(d: &Device) -> Module {
    common::load(d, KERNELS)
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

/// A host function on a capturing stream is refused before HIP sees it: the closure is dropped unrun, and
/// the capture stays valid (it ends into a graph that replays the captured kernel).
#[test]
fn a_host_fn_on_a_capturing_stream_is_refused_and_the_capture_stays_valid() {
    let d = device();
    let m = kernels(&d);
    let inc = m.function("inc").unwrap();
    let s = Stream::new(&d).unwrap();
    let n = 256u32;
    let mut x = DeviceBuffer::<u32>::zeroed(&d, n as usize).unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let ran = Arc::new(AtomicUsize::new(0));
    let mut capture = s.begin_capture(CaptureMode::Global).unwrap();
    let (t, r) = (Tracked(drops.clone()), ran.clone());
    let e = s
        .launch_host_fn(move || {
            let _t = &t;
            r.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument { value, .. } if value == "launch_host_fn"),
        "{e}"
    );
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "the refused closure is freed"
    );
    let mut args = LaunchArgs::new();
    args.arg_mut(&mut x).arg(&n);
    // SAFETY: inc(unsigned*, unsigned) adds 1 to x's n elements; x is kept by the graph.
    unsafe {
        capture
            .launch(&inc, &LaunchConfig::for_num_elems(n), &mut args)
            .unwrap()
    };
    let graph = capture.end().unwrap();
    let mut exec = graph.instantiate().unwrap();
    exec.launch(&s).unwrap();
    exec.launch(&s).unwrap();
    s.synchronize().unwrap();
    assert_eq!(
        ran.load(Ordering::SeqCst),
        0,
        "the refused closure never ran"
    );
    assert!(x.to_vec().unwrap().iter().all(|&v| v == 2));
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
        Err(Error::InvalidArgument {
            what: "block size",
            ..
        })
    ));
    // hip-tests: occupancy with flags. The default flag answers as the query without flags; without
    // the caching override a kernel that loads nothing from global memory fits as often or more.
    use hip::OccupancyFlags;
    let default = f
        .max_active_blocks_per_multiprocessor_with_flags(256, 0, OccupancyFlags::DEFAULT)
        .unwrap();
    assert_eq!(default, per_sm);
    let uncached = f
        .max_active_blocks_per_multiprocessor_with_flags(
            256,
            0,
            OccupancyFlags::DISABLE_CACHING_OVERRIDE,
        )
        .unwrap();
    assert!(uncached >= 1, "{uncached}");
    eprintln!(
        "occupancy at 256 threads: {default} blocks, {uncached} without the caching override"
    );
    assert!(f
        .max_active_blocks_per_multiprocessor_with_flags(0, 0, OccupancyFlags::DEFAULT)
        .is_err());
    let s = f.suggested_block_size(0, 0).unwrap();
    let (grid, block) = (s.min_grid_size, s.block_size);
    assert!(
        grid >= 1 && block >= 32 && block <= f.max_threads_per_block(),
        "{grid} {block}"
    );
    let limited = f.suggested_block_size(0, 64).unwrap().block_size;
    assert!((1..=64).contains(&limited), "{limited}");
    let n = 1_000_003u32;
    let cfg = LaunchConfig::for_occupancy(&f, n).unwrap();
    assert_eq!(cfg.block.x, block);
    assert!(u64::from(cfg.grid.x) * u64::from(cfg.block.x) >= u64::from(n));
    let mut x = DeviceBuffer::<u32>::zeroed(&d, n as usize).unwrap();
    let s = Stream::new(&d).unwrap();
    let mut args = LaunchArgs::new();
    args.arg_mut(&mut x).arg(&n);
    unsafe { f.launch(&s, &cfg, &mut args).unwrap() };
    s.synchronize().unwrap();
    assert!(x.to_vec().unwrap().iter().all(|&v| v == 1));
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
    // `zeroed_async` must zero: leave non-zero bytes in the pool first, where the next allocation of
    // this size on this stream is likely to land.
    let mut dirty = DeviceBuffer::<u32>::zeroed_async(&s, n).unwrap();
    s.memset_async(&mut dirty, 0xA5).unwrap();
    assert!(dirty.to_vec().unwrap().iter().all(|&v| v == 0xA5A5_A5A5));
    drop(dirty);
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
