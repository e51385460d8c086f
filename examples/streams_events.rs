//! Two streams overlapping copy-in / kernel / copy-out over chunks, timed with events against one stream.
use hip::prelude::*;
use hip::Report;

const SOURCE: &str = r#"
extern "C" __global__ void work(float* x, unsigned int n, int rounds) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        for (int r = 0; r < rounds; ++r) v = v * 0.999f + 0.5f;
        x[i] = v;
    }
}
"#;

const CHUNKS: usize = 8;
const CHUNK: usize = 1 << 22; // 4 Mi floats, 16 MiB per chunk
const ROUNDS: i32 = 200;

fn expected(x: f32) -> f32 {
    (0..ROUNDS).fold(x, |v, _| v * 0.999 + 0.5)
}

fn main() -> Result<(), Report> {
    let Some(device) = Device::first_usable(|why| println!("{why}\nstreams and events need one"))?
    else {
        return Ok(());
    };
    let module = Module::load_data(&device, ProgramBuilder::new(SOURCE).compile()?.code())?;
    let kernel = module.function("work")?;
    let input: Vec<f32> = (0..CHUNKS * CHUNK).map(|i| (i % 1024) as f32).collect();
    let streams = [
        Stream::non_blocking(&device)?,
        Stream::non_blocking(&device)?,
    ];

    let pinned_in: Vec<PinnedBuffer<f32>> = input
        .chunks(CHUNK)
        .map(|c| PinnedBuffer::from_slice(&device, c))
        .collect::<hip::Result<_>>()?;
    let mut pinned_out: Vec<PinnedBuffer<f32>> = (0..CHUNKS)
        .map(|_| PinnedBuffer::zeroed(&device, CHUNK))
        .collect::<hip::Result<_>>()?;
    let mut dev: Vec<DeviceBuffer<f32>> = (0..CHUNKS)
        .map(|_| DeviceBuffer::zeroed(&device, CHUNK))
        .collect::<hip::Result<_>>()?;

    let mut time = |n_streams: usize| -> hip::Result<f32> {
        let start = Event::with_timing(&device)?;
        let end = Event::with_timing(&device)?;
        start.record(&streams[0])?;
        // Every stream starts after `start`.
        for s in &streams[1..n_streams] {
            s.wait_event(&start)?;
        }
        for c in 0..CHUNKS {
            let s = &streams[c % n_streams];
            s.copy_from_host_async(&pinned_in[c], &mut dev[c])?;
            let n = CHUNK as u32;
            let mut args = LaunchArgs::new();
            args.arg(&dev[c]).arg(&n).arg(&ROUNDS);
            // SAFETY: work(float*, unsigned, int) and i < n.
            unsafe { kernel.launch(s, &LaunchConfig::for_num_elems(n), &mut args)? };
            s.copy_to_host_async(&dev[c], &mut pinned_out[c])?;
        }
        for s in &streams[1..n_streams] {
            streams[0].wait_event(&s.record_event()?)?;
        }
        end.record(&streams[0])?;
        end.synchronize()?;
        start.elapsed_ms(&end)
    };
    time(2)?; // warm-up
    let one = time(1)?;
    let two = time(2)?;
    for (c, out) in pinned_out.iter_mut().enumerate() {
        let out = out.as_slice()?;
        let base = c * CHUNK;
        if (0..CHUNK)
            .step_by(997)
            .any(|i| (out[i] - expected(input[base + i])).abs() > 1e-3)
        {
            return Err(Report::msg(format!("chunk {c} has wrong results")));
        }
    }
    println!("one stream:  {one:.3} ms");
    println!("two streams: {two:.3} ms");
    println!("overlap speed-up: {:.2}x (results verified)", one / two);
    Ok(())
}
