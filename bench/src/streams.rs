//! Event record + query cost, and two streams overlapping copy-in / kernel / copy-out over chunks.
use crate::baseline::{checked, Baseline};
use crate::Kernels;
use hip::prelude::*;
use hip::sys;
use std::time::Instant;

/// `reps` pairs of record + query of one event (timing off) on an idle stream, safe API.
pub fn safe_events(device: &Device, stream: &Stream, reps: usize) -> hip::Result<f64> {
    let event = Event::new(device)?;
    let t = Instant::now();
    for _ in 0..reps {
        event.record(stream)?;
        let _ready: bool = event.query()?;
    }
    let ns = t.elapsed().as_nanos() as f64;
    event.synchronize()?;
    Ok(ns)
}

/// The same with raw hip-sys calls.
pub fn raw_events(device: &Device, stream: &Stream, reps: usize) -> hip::Result<f64> {
    let event = Event::new(device)?;
    let t = Instant::now();
    for _ in 0..reps {
        let rc = unsafe { sys::hipEventRecord(event.raw(), stream.raw()) };
        hip::result::check("hipEventRecord", rc)?;
        let rc = unsafe { sys::hipEventQuery(event.raw()) };
        if rc != sys::hipSuccess && rc != sys::hipErrorNotReady {
            hip::result::check("hipEventQuery", rc)?;
        }
    }
    let ns = t.elapsed().as_nanos() as f64;
    event.synchronize()?;
    Ok(ns)
}

pub fn cpp_events(b: &Baseline, reps: usize) -> Result<f64, String> {
    checked("events", unsafe { (b.event_record_query)(reps as i32) })
}

/// The pipeline's data: `chunks` pinned input and output chunks and a device buffer per chunk (the safe
/// API's asynchronous copies take whole pinned buffers), and contiguous buffers for the C++ baseline.
pub struct Pipeline {
    pub chunk: usize,
    pub inputs: Vec<PinnedBuffer<f32>>,
    pub outputs: Vec<PinnedBuffer<f32>>,
    pub dev: Vec<DeviceBuffer<f32>>,
    pub cpp_in: PinnedBuffer<f32>,
    pub cpp_out: PinnedBuffer<f32>,
    pub cpp_dev: DeviceBuffer<f32>,
    pub iterations: u32,
}

/// What the `work` kernel computes from one input value (the same operations, in the same order).
pub fn work_expected(x: f32, iterations: u32) -> f32 {
    let mut v = x;
    for _ in 0..iterations {
        v = v * 0.999 + 0.001;
    }
    v
}

impl Pipeline {
    pub fn new(
        device: &Device,
        data: &[f32],
        chunks: usize,
        iterations: u32,
    ) -> hip::Result<Pipeline> {
        let chunk = data.len() / chunks;
        let mut p = Pipeline {
            chunk,
            inputs: Vec::new(),
            outputs: Vec::new(),
            dev: Vec::new(),
            cpp_in: PinnedBuffer::from_slice(device, data)?,
            cpp_out: PinnedBuffer::zeroed(device, data.len())?,
            cpp_dev: DeviceBuffer::zeroed(device, data.len())?,
            iterations,
        };
        for c in 0..chunks {
            p.inputs.push(PinnedBuffer::from_slice(
                device,
                &data[c * chunk..(c + 1) * chunk],
            )?);
            p.outputs.push(PinnedBuffer::zeroed(device, chunk)?);
            p.dev.push(DeviceBuffer::zeroed(device, chunk)?);
        }
        Ok(p)
    }

    /// Compare a sample of outputs (safe and C++) with the host's computation of the same values.
    pub fn verify(&self) -> Result<(), String> {
        for c in 0..self.inputs.len() {
            let input = self.inputs[c].as_slice().map_err(|e| e.to_string())?;
            let safe = self.outputs[c].as_slice().map_err(|e| e.to_string())?;
            let cpp = &self.cpp_out.as_slice().map_err(|e| e.to_string())?[c * self.chunk..];
            for i in (0..self.chunk).step_by(4099) {
                let want = work_expected(input[i], self.iterations);
                for (who, got) in [("safe", safe[i]), ("C++", cpp[i])] {
                    if (got - want).abs() > 1e-3 * want.abs().max(1.0) {
                        return Err(format!(
                            "pipeline {who}: chunk {c} element {i}: {got} != {want}"
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Copy in, run `work`, copy out, chunk by chunk round-robin over `streams`; safe API.
pub fn safe_pipeline(k: &Kernels, p: &mut Pipeline, streams: &[Stream]) -> hip::Result<f64> {
    let len = p.chunk as u32;
    let cfg = LaunchConfig::new(len.div_ceil(256), 256);
    let t = Instant::now();
    for (c, ((input, output), dev)) in p
        .inputs
        .iter()
        .zip(&mut p.outputs)
        .zip(&mut p.dev)
        .enumerate()
    {
        let s = &streams[c % streams.len()];
        s.copy_to_device_async(input, dev)?;
        let mut args = LaunchArgs::new();
        args.arg_mut(dev).arg(&len).arg(&p.iterations);
        // SAFETY: `work(float* x, unsigned n, unsigned iterations)` touches x[i] for i < n = dev.len().
        unsafe { k.work.launch(s, &cfg, &mut args)? };
        s.copy_to_host_async(dev, output)?;
    }
    for s in streams {
        s.synchronize()?;
    }
    Ok(t.elapsed().as_nanos() as f64)
}

pub fn cpp_pipeline(
    b: &Baseline,
    k: &Kernels,
    p: &mut Pipeline,
    streams: usize,
) -> Result<f64, String> {
    let chunks = p.inputs.len();
    let n = p.chunk * chunks;
    let host_in = p
        .cpp_in
        .as_mut_slice()
        .map_err(|e| e.to_string())?
        .as_mut_ptr();
    let host_out = p
        .cpp_out
        .as_mut_slice()
        .map_err(|e| e.to_string())?
        .as_mut_ptr();
    let dev = p.cpp_dev.device_ptr() as *mut f32;
    checked("pipeline", unsafe {
        (b.pipeline)(
            k.work.raw(),
            host_in,
            host_out,
            dev,
            n,
            chunks as i32,
            streams as i32,
            p.iterations,
        )
    })
}
