//! A captured graph replayed with new inputs every step: the program keeps the buffers the graph reads and
//! writes, copies each step's input in, replays, and reads the output. The memory model orders the copies
//! and the replays (each copy after the replays still using the buffer, each replay after the copies),
//! so no synchronisation is written by hand.
//!
//! Without a usable GPU it says why (no device, no driver, an old driver) and what to check.
use hip::prelude::*;
use hip::Report;

/// Two kernels the graph runs each step: `y = 2 * x`, then `y += 1`.
const SOURCE: &str = r#"
extern "C" __global__ void twice(const float* x, float* y, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
extern "C" __global__ void plus_one(float* y, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += 1.0f;
}
"#;

fn main() -> Result<(), Report> {
    let Some(device) = Device::first_usable(|why| println!("{why}"))? else {
        return Ok(());
    };
    let module = Module::load_data(
        &device,
        ProgramBuilder::new(SOURCE)
            .name("graph_replay.hip")
            .compile()?
            .code(),
    )?;
    let (twice, plus_one) = (module.function("twice")?, module.function("plus_one")?);
    let n: usize = 1 << 20;
    let stream = Stream::new(&device)?;
    // The graph's input and output: ordinary buffers the program keeps.
    let mut x = DeviceBuffer::<f32>::zeroed(&device, n)?;
    let mut y = DeviceBuffer::<f32>::zeroed(&device, n)?;

    let config = LaunchConfig::for_num_elems(n);
    let len = n as u32;
    let mut capture = stream.begin_capture(CaptureMode::Global)?;
    {
        let mut args = LaunchArgs::new();
        args.arg(&x).arg_mut(&mut y).arg(&len);
        // SAFETY: twice(const float*, float*, unsigned) reads x[..n] and writes y[..n].
        unsafe { capture.launch(&twice, &config, &mut args)? };
        let mut args = LaunchArgs::new();
        args.arg_mut(&mut y).arg(&len);
        // SAFETY: plus_one(float*, unsigned) reads and writes y[..n].
        unsafe { capture.launch(&plus_one, &config, &mut args)? };
    }
    let mut graph = capture.end()?.instantiate()?;

    for step in 0..5 {
        let input: Vec<f32> = (0..n).map(|i| (i % 100) as f32 + step as f32).collect();
        x.copy_from_host(&input)?; // waits for nothing but the previous replay reading x
        graph.launch(&stream)?; // ordered after the copy
        let output = y.to_vec()?; // ordered after the replay
        if let Some(i) = (0..n).find(|&i| output[i] != 2.0 * input[i] + 1.0) {
            return Err(Report::msg(format!(
                "step {step}, element {i}: {} for input {}",
                output[i], input[i]
            )));
        }
        println!("step {step}: {n} outputs correct (y[1] = {})", output[1]);
    }
    Ok(())
}
