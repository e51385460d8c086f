//! HIPRTC -> module -> launch -> verify: c = a + b over a million floats.
//!
//! Without a usable GPU it says why (no device, no driver, an old driver), then compiles the kernel offline
//! for an explicit architecture and reports the code object.
use hip::prelude::*;
use hip::Report;

const SOURCE: &str = r#"
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"#;

fn main() -> Result<(), Report> {
    let Some(device) = Device::first_usable(|why| println!("{why}"))? else {
        // No usable GPU (the reason is printed above): compile offline for an explicit architecture.
        let arch = if hip::PLATFORM == "amd" {
            "gfx90a"
        } else {
            "compute_90"
        };
        let compiled = ProgramBuilder::new(SOURCE)
            .name("vector_add.hip")
            .arch(arch)
            .compile()?;
        println!(
            "compiled vector_add offline for {arch}: {} bytes of code object; nothing to launch",
            compiled.code().len()
        );
        return Ok(());
    };
    let props = device.properties()?;
    println!("device 0: {} ({})", props.name, props.arch_name);

    let compiled = ProgramBuilder::new(SOURCE)
        .name("vector_add.hip")
        .compile()?;
    let module = Module::load_data(&device, compiled.code())?;
    let kernel = module.function("vector_add")?;

    let n: u32 = 1 << 20;
    let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 777) as f32 * 0.25).collect();
    let d_a = DeviceBuffer::from_slice(&device, &a)?;
    let d_b = DeviceBuffer::from_slice(&device, &b)?;
    let mut d_c = DeviceBuffer::<f32>::zeroed(&device, n as usize)?;

    let stream = Stream::new(&device)?;
    let mut args = LaunchArgs::new();
    args.arg(&d_a).arg(&d_b).arg_mut(&mut d_c).arg(&n);
    // SAFETY: the arguments match vector_add's parameters, and the kernel touches only i < n.
    unsafe { kernel.launch(&stream, &LaunchConfig::for_num_elems(n), &mut args)? };
    stream.synchronize()?;

    let c = d_c.to_vec()?;
    let wrong = c
        .iter()
        .zip(a.iter().zip(&b))
        .filter(|(c, (a, b))| **c != **a + **b)
        .count();
    if wrong > 0 {
        return Err(Report::msg(format!("{wrong} of {n} results are wrong")));
    }
    println!("vector_add of {n} elements: all results correct");
    Ok(())
}
