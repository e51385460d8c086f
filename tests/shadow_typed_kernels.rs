//! `#[kernel]` launchers under the shadow HIP runtime (scripts/shadow.sh): the shadow runs no kernel body,
//! but each launch makes the memory accesses declared for its entry point (by its fingerprinted name),
//! `In` as a read and `Out` as a write, for a declared time. What these tests check is that the generated
//! launcher orders itself by the memory model exactly as `LaunchArgs::arg`/`arg_mut` do: a slow writer on
//! one stream, then the typed kernel on another (read after write, write after write), and the typed
//! kernel reading slowly, then a write on another stream (write after read), with no race reported and
//! the copies around them seeing program order.
#![cfg(feature = "shadow")]

mod shadow;

#[path = "../kernels/src/typed.rs"]
#[allow(dead_code)]
mod typed;

use hip::prelude::*;
use shadow::assert_no_reports;
use std::sync::Once;
use typed::{block_sum_u32, matmul_f32, saxpy_f32, vector_add};

const N: usize = 4096;
const ROUNDS: u32 = 6;
/// The Rust-built code objects: the shadow loads any image, and the launch check reads their metadata.
const IMAGE: &[u8] = include_bytes!("../kernels/prebuilt/hip_rs_kernels.hipfb");

fn declare() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // In<f32>, In<f32>, Out<f32>: pointer (read) + length, twice, then pointer (write) + length.
        shadow::declare_kernel(vector_add::NAME, b"r\0r\0w\0");
        shadow::declare_kernel_duration(vector_add::NAME, 1500);
        // f32, In<f32>, Out<f32>: a value, pointer (read) + length, pointer (written: y += a x) + length.
        shadow::declare_kernel(saxpy_f32::NAME, b"\0r\0b\0");
        shadow::declare_kernel_duration(saxpy_f32::NAME, 1500);
        // In<u32>, OutBlock<u32> (Shared<u32> takes no argument): read + length, written + length.
        shadow::declare_kernel(block_sum_u32::NAME, b"r\0w\0");
        shadow::declare_kernel_duration(block_sum_u32::NAME, 1500);
        // m, n, k, In<f32> x2, Out2d<f32> (pointer, length, row length).
        shadow::declare_kernel(matmul_f32::NAME, b"\0\0\0r\0r\0w\0\0");
        shadow::declare_kernel_duration(matmul_f32::NAME, 1500);
    });
}

fn setup() -> (Device, Module, Stream, Stream) {
    declare();
    let d = Device::get(0).unwrap();
    let m = Module::load_data(&d, IMAGE).unwrap();
    let a = Stream::non_blocking(&d).unwrap();
    let b = Stream::non_blocking(&d).unwrap();
    (d, m, a, b)
}

#[test]
fn a_typed_kernel_after_a_slow_typed_writer_on_another_stream() {
    let (d, m, a, b) = setup();
    let add = vector_add::load(&m).unwrap();
    let axpy = saxpy_f32::load(&m).unwrap();
    let one = DeviceBuffer::from_slice(&d, &vec![1.0f32; N]).unwrap();
    let config = LaunchConfig::for_num_elems(N);
    for round in 0..ROUNDS {
        let mut x = DeviceBuffer::from_slice(&d, &vec![round as f32; N]).unwrap();
        let mut c = DeviceBuffer::<f32>::zeroed(&d, N).unwrap();
        // Read after write: A writes x (slowly), B's kernel reads it.
        axpy.launch(&a, &config, 2.0, &one, &mut x).unwrap();
        add.launch(&b, &config, &x, &one, &mut c).unwrap();
        // Write after write: A's kernel writes c again after B's did.
        add.launch(&a, &config, &one, &one, &mut c).unwrap();
        // Write after read: A fills x, which B's kernel read.
        a.fill_async(&mut x, 0.0).unwrap();
        // The shadow ran no body: the host reads the fills and copies in program order.
        assert_eq!(x.to_vec().unwrap(), vec![0.0; N]);
        drop(c); // freed after the kernels that write it
    }
    assert_no_reports();
}

#[test]
fn copies_around_a_typed_kernel_on_other_streams_see_program_order() {
    let (d, m, a, b) = setup();
    let add = vector_add::load(&m).unwrap();
    let c_stream = Stream::non_blocking(&d).unwrap();
    for round in 0..ROUNDS {
        let src = PinnedBuffer::from_slice(&d, &vec![round as f32; N]).unwrap();
        let mut x = DeviceBuffer::<f32>::zeroed(&d, N).unwrap();
        let mut y = DeviceBuffer::<f32>::zeroed(&d, N).unwrap();
        a.copy_from_host_async(&src, &mut x).unwrap();
        // The kernel on B reads x after A's copy, and views of it order with their parent.
        add.launch(
            &b,
            &LaunchConfig::for_num_elems(N),
            &x.slice(..).unwrap(),
            &x,
            &mut y,
        )
        .unwrap();
        // A copy out of y on a third stream waits for the kernel that writes it.
        let mut host = PinnedBuffer::<f32>::zeroed(&d, N).unwrap();
        c_stream.copy_to_host_async(&y, &mut host).unwrap();
        let s = host.as_slice().unwrap();
        shadow::host_access(s, false);
        assert_eq!(s, &vec![0.0; N][..]);
        // A write to x on A after the kernel read it.
        a.fill_async(&mut x, 1.0).unwrap();
        assert_eq!(x.to_vec().unwrap(), vec![1.0; N]);
    }
    assert_no_reports();
}

#[test]
fn a_captured_typed_launch_replayed_then_read_and_written_elsewhere() {
    let (d, m, s, other) = setup();
    let add = vector_add::load(&m).unwrap();
    let x = DeviceBuffer::from_slice(&d, &vec![3.0f32; N]).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed(&d, N).unwrap();
    let graph = {
        let capture = s.begin_capture(hip::CaptureMode::ThreadLocal).unwrap();
        add.launch(
            capture.stream(),
            &LaunchConfig::for_num_elems(N),
            &x,
            &x,
            &mut y,
        )
        .unwrap();
        capture.end().unwrap()
    };
    assert_eq!(graph.kernel_node_count().unwrap(), 1);
    let mut exec = graph.instantiate().unwrap();
    for round in 0..ROUNDS {
        exec.launch(&s).unwrap();
        // Read after the replay's write, then write after it, on another stream.
        let mut z = DeviceBuffer::<f32>::zeroed(&d, N).unwrap();
        other.copy_device_async(&y, &mut z).unwrap();
        other.fill_async(&mut y, round as f32).unwrap();
        // The shadow ran no body: z holds the previous round's fill.
        let want = if round == 0 { 0.0 } else { (round - 1) as f32 };
        assert_eq!(z.to_vec().unwrap(), vec![want; N]);
    }
    drop(x); // the graph keeps it for its replays
    assert_no_reports();
}

#[test]
fn shared_memory_kernels_are_ordered_like_any_other_and_short_configs_never_launch() {
    let (d, m, a, b) = setup();
    let sum = block_sum_u32::load(&m).unwrap();
    let mm = matmul_f32::load(&m).unwrap();
    let axpy = saxpy_f32::load(&m).unwrap();
    let n = 64usize;
    let ones = DeviceBuffer::from_slice(&d, &vec![1.0f32; n * n]).unwrap();
    let tile = matmul_f32::with_shared(LaunchConfig::new((4, 4), (16, 16))).unwrap();
    let blocks = block_sum_u32::with_shared(LaunchConfig::new(16, 256)).unwrap();
    for round in 0..ROUNDS {
        let mut x = DeviceBuffer::from_slice(&d, &vec![round as f32; n * n]).unwrap();
        let mut c = DeviceBuffer::<f32>::zeroed(&d, n * n).unwrap();
        let (n64, len) = (n as u64, n * n);
        // Read after write: A writes x slowly, B's tiled kernel reads it.
        axpy.launch(&a, &LaunchConfig::for_num_elems(len), 2.0, &ones, &mut x)
            .unwrap();
        mm.launch(&b, &tile, n64, n64, n64, &x, &ones, &mut c, n64)
            .unwrap();
        // Write after read: A writes x again while B's kernel may still read it.
        a.fill_async(&mut x, 0.0).unwrap();
        // A block sum on A of data B's matmul writes (read after write across streams).
        let words = DeviceBuffer::from_slice(&d, &vec![1u32; 16 * 256]).unwrap();
        let mut partial = DeviceBuffer::<u32>::zeroed(&d, 16).unwrap();
        sum.launch(&a, &blocks, &words, &mut partial).unwrap();
        mm.launch(&a, &tile, n64, n64, n64, &ones, &ones, &mut c, n64)
            .unwrap();
        // A configuration short of shared memory is refused before anything is queued.
        let short = LaunchConfig {
            shared_mem_bytes: tile.shared_mem_bytes - 4,
            ..tile
        };
        assert!(matches!(
            mm.launch(&b, &short, n64, n64, n64, &ones, &ones, &mut c, n64),
            Err(hip::Error::InvalidLaunch(_))
        ));
        assert_eq!(x.to_vec().unwrap(), vec![0.0; len]);
        drop(c);
    }
    assert_no_reports();
}
