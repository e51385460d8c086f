//! `#[kernel]` functions (kernels/src/typed.rs, committed code objects in kernels/prebuilt/) launched
//! through their generated, safe launchers on a real device: results against the host over 1-D, 2-D and
//! 3-D grids and views, the memory model's ordering across streams (a slow producer on one stream, the
//! typed kernel on another), a stale artifact refused by name, and (NVIDIA) a grid past 2^32 threads,
//! each element reached by exactly one thread; the kernels with shared memory (`block_sum_u32`, a tiled
//! `matmul_f32`) over many block shapes, and their launcher refusing too little shared memory. No
//! `unsafe` at any typed call site.
#![cfg(feature = "gpu")]

mod common;

#[path = "../kernels/src/typed.rs"]
mod typed;

use common::{device, load};
use hip::prelude::*;
use hip_rs_kernel_types::Affine;
use typed::{
    affine_f32, block_sum_u32, count_once, linear_ids, matmul_f32, saxpy_f32, saxpy_f64,
    scale_chunks_f32, vector_add,
};

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

#[test]
fn scale_chunks_covers_every_element_once_with_any_grid() {
    let d = device();
    let m = module(&d);
    let s = Stream::new(&d).unwrap();
    let k = scale_chunks_f32::load(&m).unwrap();
    let n = 100_003u32; // not a multiple of the chunk: the last chunk is short
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let dx = DeviceBuffer::from_slice(&d, &x).unwrap();
    let few = [
        LaunchConfig::new(3, 64),
        LaunchConfig::new((3, 5), (8, 8)),
        LaunchConfig::new((2, 3, 4), (4, 4, 4)),
    ];
    for config in few.iter().chain(&grids(n.div_ceil(4))) {
        let mut dy = DeviceBuffer::from_slice(&d, &vec![f32::NAN; n as usize]).unwrap();
        k.launch(&s, config, -1.5, &dx, &mut dy).unwrap();
        let y = dy.to_vec().unwrap();
        let bad = (0..n as usize).filter(|&i| y[i] != -1.5 * x[i]).count();
        assert_eq!(bad, 0, "{config:?}");
    }
}

#[test]
fn affine_reads_the_struct_the_host_wrote() {
    let d = device();
    let m = module(&d);
    let s = Stream::new(&d).unwrap();
    let k = affine_f32::load(&m).unwrap();
    let n = 4097u32;
    let params = Affine {
        scale: -2.0,
        offset: 0.25,
        len: u64::from(n - 1), // the last element must stay untouched
    };
    let dp = DeviceBuffer::from_slice(&d, &[params]).unwrap();
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let dx = DeviceBuffer::from_slice(&d, &x).unwrap();
    for config in [
        LaunchConfig::for_num_elems(n),
        LaunchConfig::new((2, 2), (8, 8)),
    ] {
        let mut dy = DeviceBuffer::from_slice(&d, &vec![7.0f32; n as usize]).unwrap();
        k.launch(&s, &config, &dp, &dx, &mut dy).unwrap();
        let y = dy.to_vec().unwrap();
        // Written out, not `Affine::apply` (the kernel calls that). Exact for every i here.
        assert!(
            (0..(n - 1) as usize).all(|i| y[i] == x[i] * -2.0 + 0.25),
            "{config:?}"
        );
        assert_eq!(y[(n - 1) as usize], 7.0);
    }
    // An empty parameter buffer: the kernel finds no Affine and writes nothing.
    let none = DeviceBuffer::<Affine>::zeroed(&d, 1).unwrap();
    let mut dy = DeviceBuffer::from_slice(&d, &[7.0f32; 8]).unwrap();
    k.launch(
        &s,
        &LaunchConfig::for_num_elems(8),
        &none.slice(..0).unwrap(),
        &dx,
        &mut dy,
    )
    .unwrap();
    assert_eq!(dy.to_vec().unwrap(), vec![7.0; 8]);
}

/// What `block_sum_u32` computes, on the host: for each block (x fastest), the wrapping sum of the input
/// at its threads' global linear ids (x fastest over the grid's threads), 0 past the end.
fn block_sums_on_host(input: &[u32], c: &LaunchConfig) -> Vec<u32> {
    let (g, b) = (c.grid, c.block);
    let (nx, ny) = (u64::from(g.x * b.x), u64::from(g.y * b.y));
    let mut sums = vec![0u32; (g.x * g.y * g.z) as usize];
    for (bz, by, bx) in itertools3(g.z, g.y, g.x) {
        let block = ((bz * g.y + by) * g.x + bx) as usize;
        for (tz, ty, tx) in itertools3(b.z, b.y, b.x) {
            let (x, y, z) = (bx * b.x + tx, by * b.y + ty, bz * b.z + tz);
            let i = (u64::from(z) * ny + u64::from(y)) * nx + u64::from(x);
            let v = input.get(i as usize).copied().unwrap_or(0);
            sums[block] = sums[block].wrapping_add(v);
        }
    }
    sums
}

/// `(z, y, x)` over `0..nz x 0..ny x 0..nx`.
fn itertools3(nz: u32, ny: u32, nx: u32) -> impl Iterator<Item = (u32, u32, u32)> {
    (0..nz).flat_map(move |z| (0..ny).flat_map(move |y| (0..nx).map(move |x| (z, y, x))))
}

#[test]
fn block_sum_in_shared_memory_matches_the_host_for_many_block_shapes() {
    let d = device();
    let m = module(&d);
    let s = Stream::new(&d).unwrap();
    let k = block_sum_u32::load(&m).unwrap();
    let n = 200_003u32;
    let input: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761) >> 4).collect();
    let din = DeviceBuffer::from_slice(&d, &input).unwrap();
    let configs = [
        LaunchConfig::new(n.div_ceil(2), 2),
        LaunchConfig::new(n.div_ceil(64), 64),
        LaunchConfig::new(n.div_ceil(100), 100), // not a power of two
        LaunchConfig::new(n.div_ceil(1024), 1024),
        LaunchConfig::new(1, 1),
        LaunchConfig::new((40, 20), (16, 16)),
        LaunchConfig::new((7, 5, 3), (10, 6, 3)), // 180 threads, 3 wavefronts or 6 warps, the last partial
        LaunchConfig::new((3, 3, 3), (8, 4, 4)),
    ];
    for config in configs {
        let config = block_sum_u32::with_shared(config).unwrap();
        assert_eq!(
            u128::from(config.shared_mem_bytes),
            4 * config.block.volume()
        );
        let want = block_sums_on_host(&input, &config);
        let not_yet: Vec<u32> = want.iter().map(|v| !v).collect();
        let mut partial = DeviceBuffer::from_slice(&d, &not_yet).unwrap();
        k.launch(&s, &config, &din, &mut partial).unwrap();
        assert_eq!(partial.to_vec().unwrap(), want, "{config:?}");
    }
}

#[test]
fn too_little_shared_memory_is_refused_before_launch() {
    let d = device();
    let m = module(&d);
    let s = Stream::new(&d).unwrap();
    let k = block_sum_u32::load(&m).unwrap();
    let din = DeviceBuffer::from_slice(&d, &[1u32; 256]).unwrap();
    let mut partial = DeviceBuffer::from_slice(&d, &[9u32]).unwrap();
    for shared_mem_bytes in [0, 1020] {
        let config = LaunchConfig {
            shared_mem_bytes,
            ..LaunchConfig::new(1, 256)
        };
        match k.launch(&s, &config, &din, &mut partial) {
            Err(Error::InvalidLaunch(msg)) => assert!(
                msg.contains("kernel `block_sum_u32`") && msg.contains("1024 bytes"),
                "{msg}"
            ),
            other => panic!("{shared_mem_bytes}: {other:?}"),
        }
    }
    assert_eq!(partial.to_vec().unwrap(), vec![9]);
    let mm = matmul_f32::load(&m).unwrap();
    let (a, b) = (
        DeviceBuffer::from_slice(&d, &[1.0f32; 256]).unwrap(),
        DeviceBuffer::from_slice(&d, &[1.0f32; 256]).unwrap(),
    );
    let mut c = DeviceBuffer::from_slice(&d, &[5.0f32; 256]).unwrap();
    // One tile's worth (4 bytes per thread) where the kernel needs two (8).
    let config = LaunchConfig {
        shared_mem_bytes: 1024,
        ..LaunchConfig::new(1, (16, 16))
    };
    assert!(matches!(
        mm.launch(&s, &config, 16, 16, 16, &a, &b, &mut c, 16),
        Err(Error::InvalidLaunch(_))
    ));
    assert_eq!(c.to_vec().unwrap(), vec![5.0; 256]);
}

/// `c = a b` on the host in the kernel's order (k ascending, no fused multiply-add): the same bits.
fn matmul_on_host(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for r in 0..m {
        for col in 0..n {
            let mut acc = 0.0f32;
            for j in 0..k {
                acc += a[r * k + j] * b[j * n + col];
            }
            c[r * n + col] = acc;
        }
    }
    c
}

#[test]
fn tiled_matmul_matches_the_host_for_tiles_of_4_to_32() {
    let d = device();
    let md = module(&d);
    let s = Stream::new(&d).unwrap();
    let k = matmul_f32::load(&md).unwrap();
    for (m, n, kk) in [
        (100usize, 70usize, 33usize),
        (128, 128, 128),
        (1, 300, 5),
        (65, 1, 200),
    ] {
        let a: Vec<f32> = (0..m * kk).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
        let b: Vec<f32> = (0..kk * n).map(|i| ((i * 5) % 11) as f32 * 0.5).collect();
        let want = matmul_on_host(&a, &b, m, n, kk);
        let (da, db) = (
            DeviceBuffer::from_slice(&d, &a).unwrap(),
            DeviceBuffer::from_slice(&d, &b).unwrap(),
        );
        for t in [4u32, 8, 16, 32] {
            let config =
                LaunchConfig::new(((n as u32).div_ceil(t), (m as u32).div_ceil(t)), (t, t));
            let config = matmul_f32::with_shared(config).unwrap();
            let mut dc = DeviceBuffer::from_slice(&d, &vec![f32::NAN; m * n]).unwrap();
            let (m64, n64, k64) = (m as u64, n as u64, kk as u64);
            k.launch(&s, &config, m64, n64, k64, &da, &db, &mut dc, n64)
                .unwrap();
            let c = dc.to_vec().unwrap();
            let bad = (0..m * n).filter(|&i| c[i] != want[i]).count();
            assert_eq!(bad, 0, "{m}x{n}x{kk}, tile {t}");
        }
        // A block that is not square: the kernel writes nothing.
        let config = matmul_f32::with_shared(LaunchConfig::new((8, 8), (16, 8))).unwrap();
        let mut dc = DeviceBuffer::from_slice(&d, &vec![3.0f32; m * n]).unwrap();
        k.launch(
            &s, &config, m as u64, n as u64, kk as u64, &da, &db, &mut dc, n as u64,
        )
        .unwrap();
        assert_eq!(dc.to_vec().unwrap(), vec![3.0; m * n]);
    }
}

#[test]
fn a_shared_memory_kernel_is_ordered_after_a_slow_producer_on_another_stream() {
    let d = device();
    let m = module(&d);
    let producer = load(&d, SLOW_FILL);
    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let k = matmul_f32::load(&m).unwrap();
    let n = 64usize;
    let ones = DeviceBuffer::from_slice(&d, &vec![1.0f32; n * n]).unwrap();
    let mut x = DeviceBuffer::<f32>::zeroed(&d, n * n).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed(&d, n * n).unwrap();
    let config = matmul_f32::with_shared(LaunchConfig::new((4, 4), (16, 16))).unwrap();
    let mut bad_rounds = Vec::new();
    for round in 0..10u16 {
        let v = f32::from(round) + 1.0;
        // x = v everywhere (slowly, on A); then c = x * ones on B: every element n * v.
        slow_fill(&producer, &a, &mut x, v);
        k.launch(
            &b, &config, n as u64, n as u64, n as u64, &x, &ones, &mut c, n as u64,
        )
        .unwrap();
        let got = c.to_vec().unwrap();
        let wrong = got.iter().filter(|&&g| g != n as f32 * v).count();
        if wrong > 0 {
            bad_rounds.push((round, wrong));
        }
    }
    assert!(bad_rounds.is_empty(), "(round, wrong): {bad_rounds:?}");
}
