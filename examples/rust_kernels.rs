//! Kernels written in Rust (`kernels/`), built for AMD GPUs (an offload bundle of gfx90a and gfx1100) and
//! NVIDIA GPUs (sm_70 PTX), loaded with `Module::load_data`; every result is checked on the host.
//!
//! Every kernel here is a `#[kernel]` function (kernels/src/typed.rs, included here so the macro generates
//! their host launchers): `vector_add`, `saxpy`, `block_sum_u32` (a tree reduction in shared memory
//! through `Shared<u32>`, whose launcher checks the configuration gives it), `affine_f32` (a `#[repr(C)]`
//! struct shared with the host, read through `In<Affine>`) and `matmul_f32` (tiled in shared memory).
//! No `unsafe` anywhere: the kernels' signatures proved the arguments, the memory model orders the
//! buffers.
//!
//! The code objects are the committed ones in `kernels/prebuilt/` (rebuilt by
//! `scripts/build-rust-kernels.sh`), or with `HIP_RS_BUILD_KERNELS=1` ones built by this package's build.rs
//! through `hip-kernel-build`. Without a GPU it lists the kernels the code object holds, with their
//! arguments' sizes, after saying why there is no usable GPU.
use hip::prelude::*;
use hip::Report;
use hip_rs_kernel_types::Affine;

/// The `#[kernel]` functions: on the host, their typed launchers.
#[path = "../kernels/src/typed.rs"]
mod typed;

/// gfx90a + gfx1100 code objects in one clang offload bundle.
const AMDGPU: &[u8] = include_bytes!(env!("HIP_RS_KERNELS_AMDGPU"));
/// The same kernels as PTX (ISA 7.0, sm_70), for HIP's NVIDIA platform.
const PTX: &[u8] = include_bytes!(env!("HIP_RS_KERNELS_PTX"));

fn image() -> &'static [u8] {
    if hip::PLATFORM == "amd" {
        AMDGPU
    } else {
        PTX
    }
}

fn main() -> Result<(), Report> {
    let Some(device) = Device::first_usable(|why| println!("{why}"))? else {
        // No usable GPU: list what the code object holds; nothing to launch.
        return list_kernels();
    };
    let props = device.properties()?;
    println!("device 0: {} ({})", props.name, props.arch_name);
    let module = Module::load_data(&device, image())?;
    let stream = Stream::new(&device)?;
    vector_add(&device, &module, &stream)?;
    saxpy_f32(&device, &module, &stream)?;
    saxpy_f64(&device, &module, &stream)?;
    block_sum(&device, &module, &stream)?;
    affine(&device, &module, &stream)?;
    matmul(&device, &module, &stream)?;
    println!("all Rust-built kernels gave correct results");
    Ok(())
}

/// What the code object says, read without a device.
fn list_kernels() -> Result<(), Report> {
    let parsed = hip::CodeObject::parse(image())?;
    let kernels = parsed.kernels();
    println!(
        "Rust-built code object for {} ({} bytes): {} kernels",
        hip::PLATFORM,
        image().len(),
        kernels.len()
    );
    for k in kernels {
        let sizes: Vec<String> = k.explicit_params().map(|a| a.size.to_string()).collect();
        println!(
            "  {:<14} {:<8} argument sizes [{}]",
            k.name,
            k.target,
            sizes.join(", ")
        );
    }
    Ok(())
}

/// Elements per test: not a multiple of the block size, so the bounds checks are exercised.
const N: u32 = (1 << 20) + 123;

fn wrong(what: &str, bad: usize) -> Result<(), Report> {
    if bad == 0 {
        println!("{what}: {N} results correct");
        Ok(())
    } else {
        Err(Report::msg(format!("{what}: {bad} of {N} results wrong")))
    }
}

fn vector_add(device: &Device, module: &Module, stream: &Stream) -> Result<(), Report> {
    // Found by its fingerprinted name: a code object built from another signature is an error here.
    let kernel = typed::vector_add::load(module)?;
    let a: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.5).collect();
    let b: Vec<f32> = (0..N).map(|i| (i % 777) as f32 * 0.25).collect();
    let (d_a, d_b) = (
        DeviceBuffer::from_slice(device, &a)?,
        DeviceBuffer::from_slice(device, &b)?,
    );
    let mut d_c = DeviceBuffer::<f32>::zeroed(device, N as usize)?;
    // No `unsafe`: the kernel's signature proved the arguments; a and b are read, c written.
    kernel.launch(
        stream,
        &LaunchConfig::for_num_elems(N),
        &d_a,
        &d_b,
        &mut d_c,
    )?;
    let c = d_c.to_vec()?; // waits for the kernel, which wrote c
    let bad = (0..N as usize).filter(|&i| c[i] != a[i] + b[i]).count();
    wrong("vector_add", bad)
}

/// `y = 1.5 x + y` over `f32`, a grid-stride loop launched with a quarter of the threads it has elements.
fn saxpy_f32(device: &Device, module: &Module, stream: &Stream) -> Result<(), Report> {
    let kernel = typed::saxpy_f32::load(module)?;
    let x: Vec<f32> = (0..N).map(|i| (i % 313) as f32).collect();
    let y: Vec<f32> = (0..N).map(|i| (i % 101) as f32 - 50.0).collect();
    let d_x = DeviceBuffer::from_slice(device, &x)?;
    let mut d_y = DeviceBuffer::from_slice(device, &y)?;
    kernel.launch(
        stream,
        &LaunchConfig::for_num_elems(N / 4),
        1.5,
        &d_x,
        &mut d_y,
    )?;
    let out = d_y.to_vec()?;
    let bad = (0..N as usize)
        .filter(|&i| out[i] != 1.5 * x[i] + y[i])
        .count();
    wrong("saxpy_f32", bad)
}

/// `y = -0.75 x + y` over `f64` (BLAS's daxpy).
fn saxpy_f64(device: &Device, module: &Module, stream: &Stream) -> Result<(), Report> {
    let kernel = typed::saxpy_f64::load(module)?;
    let x: Vec<f64> = (0..N).map(|i| (i % 911) as f64 * 1e-3).collect();
    let y: Vec<f64> = (0..N).map(f64::from).collect();
    let d_x = DeviceBuffer::from_slice(device, &x)?;
    let mut d_y = DeviceBuffer::from_slice(device, &y)?;
    kernel.launch(
        stream,
        &LaunchConfig::for_num_elems(N),
        -0.75,
        &d_x,
        &mut d_y,
    )?;
    let out = d_y.to_vec()?;
    let bad = (0..N as usize)
        .filter(|&i| out[i] != -0.75 * x[i] + y[i])
        .count();
    wrong("saxpy_f64", bad)
}

fn block_sum(device: &Device, module: &Module, stream: &Stream) -> Result<(), Report> {
    let kernel = typed::block_sum_u32::load(module)?;
    const BLOCK: u32 = 256;
    let blocks = N.div_ceil(BLOCK);
    let input: Vec<u32> = (0..N)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 20)
        .collect();
    let d_in = DeviceBuffer::from_slice(device, &input)?;
    let mut d_partial = DeviceBuffer::<u32>::zeroed(device, blocks as usize)?;
    // One u32 of shared memory (LDS) per thread: the launcher refuses a configuration with less.
    let config = typed::block_sum_u32::with_shared(LaunchConfig::new(blocks, BLOCK))?;
    kernel.launch(stream, &config, &d_in, &mut d_partial)?;
    let partial = d_partial.to_vec()?;
    let bad = input
        .chunks(BLOCK as usize)
        .zip(&partial)
        .filter(|(chunk, &p)| chunk.iter().fold(0u32, |s, &v| s.wrapping_add(v)) != p)
        .count();
    let total = partial.iter().fold(0u64, |s, &p| s + p as u64);
    let expected = input.iter().map(|&v| v as u64).sum::<u64>();
    if bad != 0 || total != expected {
        return Err(Report::msg(format!(
            "block_sum_u32: {bad} of {blocks} block sums wrong; total {total}, expected {expected}"
        )));
    }
    println!("block_sum_u32: {blocks} block sums correct, total {total}");
    Ok(())
}

fn affine(device: &Device, module: &Module, stream: &Stream) -> Result<(), Report> {
    let kernel = typed::affine_f32::load(module)?;
    let params = Affine {
        scale: 0.5,
        offset: 3.0,
        len: u64::from(N),
    };
    // The struct goes to device memory, and the kernel reads it through `In<Affine>`.
    let d_params = DeviceBuffer::from_slice(device, &[params])?;
    let x: Vec<f32> = (0..N).map(|i| (i % 4096) as f32).collect();
    let d_x = DeviceBuffer::from_slice(device, &x)?;
    let mut d_y = DeviceBuffer::<f32>::zeroed(device, N as usize)?;
    kernel.launch(
        stream,
        &LaunchConfig::for_num_elems(N),
        &d_params,
        &d_x,
        &mut d_y,
    )?;
    let y = d_y.to_vec()?;
    let bad = (0..N as usize)
        .filter(|&i| y[i] != params.apply(x[i]))
        .count();
    wrong("affine_f32 (a #[repr(C)] struct shared with the host)", bad)
}

/// `c = a b` for 300 x 200 times 200 x 100 matrices, in 16 x 16 tiles of shared memory.
fn matmul(device: &Device, module: &Module, stream: &Stream) -> Result<(), Report> {
    let kernel = typed::matmul_f32::load(module)?;
    let (m, n, k) = (300usize, 100usize, 200usize);
    let a: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let b: Vec<f32> = (0..k * n).map(|i| ((i * 5) % 11) as f32 * 0.5).collect();
    let (d_a, d_b) = (
        DeviceBuffer::from_slice(device, &a)?,
        DeviceBuffer::from_slice(device, &b)?,
    );
    let mut d_c = DeviceBuffer::<f32>::zeroed(device, m * n)?;
    let grid = ((n as u32).div_ceil(16), (m as u32).div_ceil(16));
    let config = typed::matmul_f32::with_shared(LaunchConfig::new(grid, (16, 16)))?;
    let (m64, n64, k64) = (m as u64, n as u64, k as u64);
    // c's row length (n) goes with it: thread (x, y) owns c[y][x].
    kernel.launch(stream, &config, m64, n64, k64, &d_a, &d_b, &mut d_c, n64)?;
    let c = d_c.to_vec()?;
    let mut bad = 0;
    for r in 0..m {
        for col in 0..n {
            // The kernel's order, no fused multiply-add: the same bits.
            let mut acc = 0.0f32;
            for j in 0..k {
                acc += a[r * k + j] * b[j * n + col];
            }
            bad += usize::from(c[r * n + col] != acc);
        }
    }
    if bad != 0 {
        return Err(Report::msg(format!("matmul_f32: {bad} of {} wrong", m * n)));
    }
    println!(
        "matmul_f32: {m}x{k} times {k}x{n}: {} results correct",
        m * n
    );
    Ok(())
}
