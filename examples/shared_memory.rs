//! A block reduction with dynamic shared memory that grows with the block size: the occupancy calculator
//! picks the block size for that shared size, the kernel opts in to more than 48 KiB of shared memory
//! where the device needs it (NVIDIA), and the sum is checked against the host.
//!
//! Without a usable GPU it says why (no device, no driver, an old driver) and what to check.
use hip::prelude::*;
use hip::Report;

/// Each block copies `items` elements per thread into shared memory, each thread adds up its own
/// `items`, and the block reduces the per-thread sums in shared memory: one partial sum per block.
const SOURCE: &str = r#"
extern "C" __global__ void block_sum(const float* x, float* partial, unsigned int n, unsigned int items) {
    extern __shared__ float tile[];
    unsigned int per_block = blockDim.x * items;
    unsigned int base = blockIdx.x * per_block;
    for (unsigned int i = threadIdx.x; i < per_block; i += blockDim.x)
        tile[i] = base + i < n ? x[base + i] : 0.0f;
    __syncthreads();
    float sum = 0.0f;
    for (unsigned int k = 0; k < items; ++k) sum += tile[threadIdx.x * items + k];
    __syncthreads();
    tile[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (threadIdx.x % (2 * s) == 0 && threadIdx.x + s < blockDim.x) tile[threadIdx.x] += tile[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = tile[0];
}
"#;

/// Elements each thread loads: 16 floats, so a block of 1024 threads needs 64 KiB.
const ITEMS: u32 = 16;

fn main() -> Result<(), Report> {
    let Some(device) = Device::first_usable(|why| println!("{why}"))? else {
        return Ok(());
    };
    println!(
        "device 0: {}; shared memory per block {} bytes, {} after opting in",
        device.properties()?.name,
        device.max_shared_mem_per_block(),
        device.max_shared_mem_per_block_optin()
    );
    let compiled = ProgramBuilder::new(SOURCE)
        .name("block_sum.hip")
        .compile()?;
    let module = Module::load_data(&device, compiled.code())?;
    let kernel = module.function("block_sum")?;

    let n: usize = 10_000_000;
    let x: Vec<f32> = (0..n).map(|i| ((i % 17) as f32) * 0.125).collect();
    let expected: f64 = x.iter().map(|&v| f64::from(v)).sum();
    let d_x = DeviceBuffer::from_slice(&device, &x)?;
    let stream = Stream::new(&device)?;

    // The occupancy calculator, told how the shared memory grows with the block.
    let shared_for = |block: u32| block as usize * ITEMS as usize * std::mem::size_of::<f32>();
    let suggestion = kernel.suggested_block_size_with(shared_for, 0)?;
    println!(
        "occupancy: {} threads per block, {} bytes of shared memory each, {} blocks fill the device",
        suggestion.block_size, suggestion.dynamic_shared_bytes, suggestion.min_grid_size
    );
    let sum = reduce(&kernel, &stream, &d_x, suggestion.block_size, shared_for)?;
    check(sum, expected, suggestion.block_size)?;

    // The largest block: 64 KiB of shared memory, above the 48 KiB a kernel gets on NVIDIA without
    // opting in: `reduce` shows the launch check's refusal, opts in and launches again.
    let mut big = device.properties()?.max_threads_per_block;
    if kernel.max_threads_per_block() > 0 {
        big = big.min(kernel.max_threads_per_block());
    }
    let sum = reduce(&kernel, &stream, &d_x, big, shared_for)?;
    check(sum, expected, big)?;
    println!("block sums over {n} elements match the host ({expected})");
    Ok(())
}

/// Opt the kernel in to the shared memory `block` threads need, launch, and add the partial sums.
fn reduce(
    kernel: &Function,
    stream: &Stream,
    x: &DeviceBuffer<f32>,
    block: u32,
    shared_for: impl Fn(u32) -> usize,
) -> Result<f64, Report> {
    let shared = shared_for(block);
    let per_block = block as usize * ITEMS as usize;
    let blocks = x.len().div_ceil(per_block);
    let mut partial = DeviceBuffer::<f32>::zeroed(x.device(), blocks)?;
    let (n, items) = (x.len() as u32, ITEMS);
    let mut args = LaunchArgs::new();
    args.arg(x).arg_mut(&mut partial).arg(&n).arg(&items);
    let config = LaunchConfig {
        shared_mem_bytes: shared as u32,
        ..LaunchConfig::new(blocks as u32, block)
    };
    // SAFETY: the arguments match block_sum's parameters; each block reads x only below n and writes
    // partial[blockIdx.x] for blockIdx.x < blocks; it uses blockDim.x * items floats of shared memory,
    // which is `shared`.
    match unsafe { kernel.launch(stream, &config, &mut args) } {
        Err(hip::Error::InvalidLaunch(msg)) if msg.contains("set_max_dynamic_shared_bytes") => {
            println!("{msg}");
            kernel.set_max_dynamic_shared_bytes(shared)?;
            println!("opted block_sum in to {shared} bytes of dynamic shared memory");
            // SAFETY: as above.
            unsafe { kernel.launch(stream, &config, &mut args)? };
        }
        r => r?,
    }
    Ok(partial.to_vec()?.iter().map(|&v| f64::from(v)).sum())
}

fn check(sum: f64, expected: f64, block: u32) -> Result<(), Report> {
    if (sum - expected).abs() > expected * 1e-5 {
        return Err(Report::msg(format!(
            "blocks of {block}: {sum}, the host says {expected}"
        )));
    }
    println!("blocks of {block} threads: {sum} (host {expected})");
    Ok(())
}
