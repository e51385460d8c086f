//! `#[kernel]` functions (kernels/src/typed.rs, committed code objects in kernels/prebuilt/) launched
//! through their generated, safe launchers on a real device: results against the host over 1-D, 2-D and
//! 3-D grids and views, the memory model's ordering across streams (a slow producer on one stream, the
//! typed kernel on another), a stale artifact refused by name, and (NVIDIA) a grid past 2^32 threads,
//! each element reached by exactly one thread. No `unsafe` at any typed call site.
#![cfg(feature = "gpu")]

mod common;

#[path = "../kernels/src/typed.rs"]
mod typed;

use common::{device, load};
use hip::prelude::*;
use typed::{count_once, linear_ids, saxpy_f32, saxpy_f64, vector_add};

const BUNDLE: &[u8] = include_bytes!("../kernels/prebuilt/hip_rs_kernels.hipfb");
const PTX: &[u8] = include_bytes!("../kernels/prebuilt/hip_rs_kernels-sm_70.ptx");

fn module(d: &Device) -> Module {
    let image = if hip::PLATFORM == "amd" { BUNDLE } else { PTX };
    Module::load_data(d, image).unwrap()
}

/// 1-D, 2-D and 3-D configurations, each with at least `n` threads (and blocks of several shapes).
fn grids(n: u32) -> Vec<LaunchConfig> {
    vec![
        LaunchConfig::new(n.div_ceil(256), 256),
        LaunchConfig::new((n.div_ceil(16 * 16 * 64), 64), (16, 16)),
        LaunchConfig::new((13, 9, n.div_ceil(208 * 72 * 2)), (16, 8, 2)),
        LaunchConfig::new((1, 1, n.div_ceil(64)), (1, 1, 64)),
    ]
}

fn threads(c: &LaunchConfig) -> u128 {
    c.grid.volume() * c.block.volume()
}

#[test]
fn vector_add_matches_the_host_on_1d_2d_3d_grids_and_views() {
    let d = device();
    let m = module(&d);
    let s = Stream::new(&d).unwrap();
    let k = vector_add::load(&m).unwrap();
    let n = 100_003u32;
    let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 777) as f32 * -0.25).collect();
    let (da, db) = (
        DeviceBuffer::from_slice(&d, &a).unwrap(),
        DeviceBuffer::from_slice(&d, &b).unwrap(),
    );
    for config in grids(n) {
        assert!(threads(&config) >= u128::from(n), "{config:?}");
        let mut dc = DeviceBuffer::from_slice(&d, &vec![f32::NAN; n as usize]).unwrap();
        k.launch(&s, &config, &da, &db, &mut dc).unwrap();
        let c = dc.to_vec().unwrap();
        let bad = (0..n as usize).filter(|&i| c[i] != a[i] + b[i]).count();
        assert_eq!(bad, 0, "{config:?}");
    }
    // Views: c[5..1005] = a[10..] + b[20..], element for element; the rest untouched.
    let mut dc = DeviceBuffer::from_slice(&d, &vec![7.0f32; n as usize]).unwrap();
    let (va, vb) = (da.slice(10..).unwrap(), db.slice(20..).unwrap());
    k.launch(
        &s,
        &LaunchConfig::for_num_elems(1000),
        &va,
        &vb,
        &mut dc.slice_mut(5..1005).unwrap(),
    )
    .unwrap();
    let c = dc.to_vec().unwrap();
    for (i, &v) in c.iter().enumerate() {
        let want = if (5..1005).contains(&i) {
            a[i + 5] + b[i + 15]
        } else {
            7.0
        };
        assert_eq!(v, want, "element {i}");
    }
}

#[test]
fn each_thread_of_a_2d_or_3d_grid_writes_its_own_linear_index_once() {
    let d = device();
    let m = module(&d);
    let s = Stream::new(&d).unwrap();
    let k = linear_ids::load(&m).unwrap();
    for config in grids(50_000) {
        // Five threads fewer elements than threads: the last threads find no element.
        let len = (threads(&config) - 5) as usize;
        let mut y = DeviceBuffer::from_slice(&d, &vec![u64::MAX; len]).unwrap();
        k.launch(&s, &config, &mut y).unwrap();
        let got = y.to_vec().unwrap();
        let bad: Vec<usize> = (0..len).filter(|&i| got[i] != i as u64).take(5).collect();
        assert!(
            bad.is_empty(),
            "{config:?}: elements {bad:?} hold {:?}",
            bad.iter().map(|&i| got[i]).collect::<Vec<_>>()
        );
    }
}

#[test]
fn saxpy_grid_stride_covers_every_element_with_any_grid() {
    let d = device();
    let m = module(&d);
    let s = Stream::new(&d).unwrap();
    let (k32, k64) = (saxpy_f32::load(&m).unwrap(), saxpy_f64::load(&m).unwrap());
    let n = 100_003u32;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let y0: Vec<f32> = (0..n).map(|i| (i % 777) as f32 * 0.25).collect();
    let dx = DeviceBuffer::from_slice(&d, &x).unwrap();
    let x64: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let y64: Vec<f64> = y0.iter().map(|&v| f64::from(v)).collect();
    let dx64 = DeviceBuffer::from_slice(&d, &x64).unwrap();
    // Far fewer threads than elements (each thread loops), and a 2-D and a 3-D grid.
    let small = [
        LaunchConfig::new(4, 64),
        LaunchConfig::new((3, 5), (8, 8)),
        LaunchConfig::new((2, 3, 4), (4, 4, 4)),
    ];
    for config in small.iter().chain(&grids(n)) {
        let mut dy = DeviceBuffer::from_slice(&d, &y0).unwrap();
        k32.launch(&s, config, 3.0, &dx, &mut dy).unwrap();
        let y = dy.to_vec().unwrap();
        assert_eq!(
            (0..n as usize)
                .filter(|&i| y[i] != 3.0 * x[i] + y0[i])
                .count(),
            0,
            "f32 {config:?}"
        );
        let mut dy = DeviceBuffer::from_slice(&d, &y64).unwrap();
        k64.launch(&s, config, -2.0, &dx64, &mut dy).unwrap();
        let y = dy.to_vec().unwrap();
        assert_eq!(
            (0..n as usize)
                .filter(|&i| y[i] != -2.0 * x64[i] + y64[i])
                .count(),
            0,
            "f64 {config:?}"
        );
    }
}

/// A producer that spins about `cycles` clock cycles in every thread, then writes `value`.
const SLOW_FILL: &str = r#"
extern "C" __global__ void slow_fill_f32(float* x, float value, unsigned long long n, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = value;
}
"#;

fn slow_fill(m: &Module, s: &Stream, x: &mut DeviceBuffer<f32>, value: f32) {
    let k = m.function("slow_fill_f32").unwrap();
    let n = x.len() as u64;
    let cycles = 2_000_000i64;
    let mut args = LaunchArgs::new();
    args.arg_mut(x).arg(&value).arg(&n).arg(&cycles);
    // SAFETY: slow_fill_f32(float*, float, unsigned long long, long long) writes x[..n].
    unsafe {
        k.launch(s, &LaunchConfig::for_num_elems(n), &mut args)
            .unwrap()
    };
}

#[test]
fn the_typed_launcher_is_ordered_after_a_slow_producer_on_another_stream() {
    let d = device();
    let m = module(&d);
    let producer = load(&d, SLOW_FILL);
    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let k = vector_add::load(&m).unwrap();
    let n = 1 << 20;
    let one = DeviceBuffer::from_slice(&d, &vec![1.0f32; n]).unwrap();
    let mut x = DeviceBuffer::<f32>::zeroed(&d, n).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed(&d, n).unwrap();
    let mut bad_rounds = Vec::new();
    for round in 0..20u16 {
        let v = f32::from(round) + 2.0;
        // Read after write: the typed kernel on B reads x, which the slow producer on A writes.
        slow_fill(&producer, &a, &mut x, v);
        k.launch(&b, &LaunchConfig::for_num_elems(n), &x, &one, &mut c)
            .unwrap();
        let got = c.to_vec().unwrap();
        let raw = got.iter().filter(|&&g| g != v + 1.0).count();
        // Write after write: the slow producer on A writes c, then the typed kernel on B does: the
        // kernel's values must be the last.
        slow_fill(&producer, &a, &mut c, -1.0);
        k.launch(&b, &LaunchConfig::for_num_elems(n), &x, &x, &mut c)
            .unwrap();
        let got = c.to_vec().unwrap();
        let waw = got.iter().filter(|&&g| g != 2.0 * v).count();
        if raw + waw > 0 {
            bad_rounds.push((round, raw, waw));
        }
    }
    assert!(
        bad_rounds.is_empty(),
        "(round, wrong after RAW, wrong after WAW): {bad_rounds:?}"
    );
}

#[test]
fn a_module_without_the_fingerprinted_entry_point_is_refused_by_name() {
    let d = device();
    // A module with a `vector_add` of another signature (HIP C++, an unsigned length), as a stale or
    // foreign code object would have.
    let stale = load(&d, common::VECTOR_ADD);
    match vector_add::load(&stale) {
        Err(Error::InvalidLaunch(msg)) => {
            assert!(
                msg.contains(vector_add::NAME) && msg.contains("kernel `vector_add`"),
                "{msg}"
            )
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("loaded a launcher from a module without its entry point"),
    }
}

#[test]
fn configurations_the_device_cannot_run_are_refused_before_launch() {
    let d = device();
    let m = module(&d);
    let s = Stream::new(&d).unwrap();
    let mut y = DeviceBuffer::<u64>::zeroed(&d, 16).unwrap();
    let k = linear_ids::load(&m).unwrap();
    for config in [LaunchConfig::new(0, 64), LaunchConfig::new(1, 4096)] {
        assert!(
            matches!(k.launch(&s, &config, &mut y), Err(Error::InvalidLaunch(_))),
            "{config:?}"
        );
    }
    assert_eq!(y.to_vec().unwrap(), vec![0; 16]);
}

/// 2^32 + 2^20 threads along x, one `u8` each (4 GiB): on NVIDIA every element is reached exactly once
/// (a 32-bit index would wrap and reach the first 2^20 twice), and the raw launch, which assumes a 32-bit
/// index, is refused; on AMD the dispatch packet cannot hold that many work-items: refused either way.
#[test]
fn a_grid_past_2_pow_32_threads_reaches_each_element_once_on_nvidia() {
    let d = device();
    let m = module(&d);
    let s = Stream::new(&d).unwrap();
    let k = count_once::load(&m).unwrap();
    let n: usize = (1 << 32) + (1 << 20);
    let config = LaunchConfig::new((n / 1024) as u32, 1024);
    let mut y = DeviceBuffer::<u8>::zeroed(&d, n).unwrap();
    if hip::PLATFORM != "nvidia" {
        match k.launch(&s, &config, &mut y) {
            Err(Error::InvalidLaunch(m)) => assert!(m.contains("work-items"), "{m}"),
            other => panic!("{other:?}"),
        }
        return;
    }
    let n64 = n as u64;
    let mut args = LaunchArgs::new();
    args.arg_mut(&mut y).arg(&n64);
    // SAFETY: count_once's entry point takes (u8*, u64 length), given here; the launch is refused
    // before anything is sent (the assertion checks it).
    let raw = unsafe { k.function().launch(&s, &config, &mut args) };
    match raw {
        Err(Error::InvalidLaunch(m)) => assert!(m.contains("32-bit thread index"), "{m}"),
        other => panic!("{other:?}"),
    }
    k.launch(&s, &config, &mut y).unwrap();
    let got = y.to_vec().unwrap();
    // Compared whole first (a memcmp, fast in a debug build); the first wrong elements named only then.
    if got != vec![1u8; n] {
        let wrong: Vec<usize> = (0..n).filter(|&i| got[i] != 1).take(5).collect();
        panic!(
            "elements {wrong:?} hold {:?}",
            wrong.iter().map(|&i| got[i]).collect::<Vec<_>>()
        );
    }
}

/// A typed launch on a stream being captured is recorded in the graph (the graph keeps the buffers and
/// the module, and the memory model orders its replays): each replay computes from the inputs the host
/// copied in just before it.
#[test]
fn a_typed_launch_captured_in_a_graph_replays_on_new_inputs() {
    let d = device();
    let m = module(&d);
    let s = Stream::non_blocking(&d).unwrap();
    let k = vector_add::load(&m).unwrap();
    let n = 10_000usize;
    let mut a = DeviceBuffer::<f32>::zeroed(&d, n).unwrap();
    let b = DeviceBuffer::from_slice(&d, &vec![0.5f32; n]).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed(&d, n).unwrap();
    let graph = {
        let capture = s.begin_capture(CaptureMode::ThreadLocal).unwrap();
        k.launch(
            capture.stream(),
            &LaunchConfig::for_num_elems(n),
            &a,
            &b,
            &mut c,
        )
        .unwrap();
        capture.end().unwrap()
    };
    assert_eq!(graph.kernel_node_count().unwrap(), 1);
    let mut exec = graph.instantiate().unwrap();
    for round in 0..4u16 {
        let v = f32::from(round);
        a.copy_from_host(&vec![v; n]).unwrap();
        exec.launch(&s).unwrap();
        assert_eq!(c.to_vec().unwrap(), vec![v + 0.5; n], "replay {round}");
    }
}
