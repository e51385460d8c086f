//! Kernels under the shadow HIP runtime: the kernels are compiled for real (HIPRTC of the real
//! libamdhip64, `HIP_RS_HIPRTC`, for the shadow device's gfx90a), but the shadow runs no kernel body: a
//! launch makes the memory accesses each test declares for the kernel (`declare_kernel`: per parameter
//! read, write or not a pointer) and holds its stream for the declared time. What these tests check is
//! the order the `hip` crate gives kernels through `LaunchArgs::arg` (read) and `arg_mut` (write):
//! no report, and the values of the copies around them.
#![cfg(feature = "shadow")]

mod shadow;

use hip::prelude::*;
use shadow::{assert_no_reports, ShadowKernel};
use std::sync::OnceLock;

const N: usize = 4096;
const ROUNDS: u32 = 6;
const KERNELS: &str = r#"
extern "C" __global__ void produce(unsigned int* x, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = i;
}
extern "C" __global__ void consume(const unsigned int* x, unsigned int* y, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
"#;

fn code() -> &'static [u8] {
    static CODE: OnceLock<Vec<u8>> = OnceLock::new();
    CODE.get_or_init(|| {
        shadow::compile(
            KERNELS,
            &[
                ShadowKernel("produce", b"w\0", 1500),
                ShadowKernel("consume", b"rw\0", 800),
            ],
        )
    })
}

struct Fixture {
    device: Device,
    module: Module,
}

fn fixture() -> Fixture {
    let device = Device::get(0).unwrap();
    let module = Module::load_data(&device, code()).unwrap();
    Fixture { device, module }
}

fn produce(f: &Fixture, x: &mut DeviceBuffer<u32>, s: &Stream) {
    let k = f.module.function("produce").unwrap();
    let n = x.len() as u32;
    let mut args = LaunchArgs::new();
    args.arg_mut(x).arg(&n);
    // SAFETY: produce(unsigned*, unsigned) writes x[..n].
    unsafe {
        k.launch(s, &LaunchConfig::for_num_elems(n), &mut args)
            .unwrap()
    };
}

fn consume(f: &Fixture, x: &DeviceBuffer<u32>, y: &mut DeviceBuffer<u32>, s: &Stream) {
    let k = f.module.function("consume").unwrap();
    let n = x.len() as u32;
    let mut args = LaunchArgs::new();
    args.arg(x).arg_mut(y).arg(&n);
    // SAFETY: consume(const unsigned*, unsigned*, unsigned) reads x[..n], writes y[..n].
    unsafe {
        k.launch(s, &LaunchConfig::for_num_elems(n), &mut args)
            .unwrap()
    };
}

#[test]
fn kernel_write_then_copies_on_other_streams() {
    let f = fixture();
    let a = Stream::non_blocking(&f.device).unwrap();
    let b = Stream::non_blocking(&f.device).unwrap();
    for round in 0..ROUNDS {
        let mut x = DeviceBuffer::from_slice(&f.device, &vec![round; N]).unwrap();
        produce(&f, &mut x, &a);
        let mut host = PinnedBuffer::<u32>::zeroed(&f.device, N).unwrap();
        b.copy_to_host_async(&x, &mut host).unwrap();
        let s = host.as_slice().unwrap();
        shadow::host_access(s, false);
        // The shadow ran no kernel body: the bytes are those from_host wrote.
        assert_eq!(s, &vec![round; N][..]);
    }
    assert_no_reports();
}

#[test]
fn copy_then_kernel_reads_then_kernel_writes_on_other_streams() {
    let f = fixture();
    let a = Stream::non_blocking(&f.device).unwrap();
    let b = Stream::non_blocking(&f.device).unwrap();
    let c = Stream::non_blocking(&f.device).unwrap();
    for round in 0..ROUNDS {
        let src = PinnedBuffer::from_slice(&f.device, &vec![round; N]).unwrap();
        let mut x = DeviceBuffer::<u32>::zeroed(&f.device, N).unwrap();
        let mut y1 = DeviceBuffer::<u32>::zeroed(&f.device, N).unwrap();
        let mut y2 = DeviceBuffer::<u32>::zeroed(&f.device, N).unwrap();
        a.copy_from_host_async(&src, &mut x).unwrap();
        consume(&f, &x, &mut y1, &b); // reads x after A's copy
        consume(&f, &x, &mut y2, &c); // a second reader
        produce(&f, &mut x, &a); // a writer after both readers
        b.fill_async(&mut x, round + 1).unwrap();
        assert_eq!(x.to_vec().unwrap(), vec![round + 1; N]);
        drop(y1);
        drop(y2); // freed after the kernels that write them
    }
    assert_no_reports();
}

#[test]
fn captured_kernels_replayed_then_read_elsewhere() {
    let f = fixture();
    let s = Stream::non_blocking(&f.device).unwrap();
    let other = Stream::non_blocking(&f.device).unwrap();
    let x = std::sync::Arc::new(DeviceBuffer::from_slice(&f.device, &vec![3u32; N]).unwrap());
    let mut y = DeviceBuffer::<u32>::zeroed(&f.device, N).unwrap();
    let graph = {
        let mut cap = s.begin_capture(hip::CaptureMode::ThreadLocal).unwrap();
        let k = f.module.function("consume").unwrap();
        let n = N as u32;
        let mut args = LaunchArgs::new();
        args.arg(&*x).arg_mut(&mut y).arg(&n);
        // SAFETY: consume reads x, writes y; the graph keeps x, y outlives every launch below.
        unsafe {
            cap.launch(&k, &LaunchConfig::for_num_elems(n), &mut args)
                .unwrap()
        };
        cap.keep(x.clone());
        cap.end().unwrap()
    };
    assert_eq!(graph.kernel_node_count().unwrap(), 1);
    let mut exec = graph.instantiate().unwrap();
    for round in 0..ROUNDS {
        exec.launch(&s).unwrap();
        let mut z = DeviceBuffer::<u32>::zeroed(&f.device, N).unwrap();
        other.copy_device_async(&y, &mut z).unwrap();
        other.fill_async(&mut y, round).unwrap();
        assert_eq!(
            z.to_vec().unwrap(),
            vec![if round == 0 { 0 } else { round - 1 }; N]
        );
    }
    assert_no_reports();
}
