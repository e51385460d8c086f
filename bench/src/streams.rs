//! Event record + query cost, and two streams overlapping copy-in / kernel / copy-out over chunks.
use crate::baseline::{checked, Baseline};
use crate::stats::{beats_by_more_than_spread, ratio, Rng};
use crate::{e, interleave, Kernels, Plan};
use hip::prelude::*;
use hip::sys;
use std::fmt::Write as _;
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
        s.copy_from_host_async(input, dev)?;
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

pub fn event_section(
    out: &mut String,
    verdicts: &mut Vec<String>,
    device: &Device,
    baseline: Option<&Baseline>,
    plan: &Plan,
) -> Result<(), String> {
    let stream = Stream::new(device).map_err(e)?;
    let reps = plan.event_reps;
    let one = |c: usize| -> Result<f64, String> {
        match c {
            0 => safe_events(device, &stream, reps).map_err(e),
            1 => raw_events(device, &stream, reps).map_err(e),
            _ => cpp_events(baseline.unwrap(), reps),
        }
    };
    for c in 0..3 {
        if c < 2 || baseline.is_some() {
            one(c)?;
        }
    }
    let s = interleave(plan.rounds, one, [true, true, baseline.is_some()])?;
    let s = s.map(|s| s.map(|s| s.map(|ns| ns / reps as f64)));
    let safe = s[0].clone().unwrap();
    writeln!(out, "## Event record + query\n").unwrap();
    writeln!(out, "`record` then `query` of one event (timing off) on an idle stream, {reps} pairs; ns per pair, median (min-max) of {} rounds.\n", plan.rounds).unwrap();
    writeln!(out, "| contender | ns per record + query | / safe |").unwrap();
    writeln!(out, "|---|---:|---:|").unwrap();
    for (c, name) in ["hip (safe)", "hip-sys (raw Rust)", "C++ (raw HIP)"]
        .iter()
        .enumerate()
    {
        if let Some(x) = &s[c] {
            writeln!(out, "| {name} | {} | {} |", x.show(0), ratio(x, &safe)).unwrap();
            if c > 0 && beats_by_more_than_spread(x, &safe) {
                verdicts.push(format!("MISS events: {name} beats the safe API by {:.0} ns, more than its spread {:.0} ns", safe.median() - x.median(), x.spread()));
            }
        }
    }
    writeln!(out).unwrap();
    Ok(())
}

pub fn overlap_section(
    out: &mut String,
    device: &Device,
    k: &Kernels,
    baseline: Option<&Baseline>,
    plan: &Plan,
) -> Result<(), String> {
    let (n, chunks, iterations) = if plan.rounds < 5 {
        (4usize << 20, 8, 1000)
    } else {
        (32usize << 20, 16, 4000)
    };
    let mut data = vec![0f32; n];
    Rng::new(3).fill_f32(&mut data);
    let mut p = Pipeline::new(device, &data, chunks, iterations).map_err(e)?;
    let one_stream = [Stream::non_blocking(device).map_err(e)?];
    let two_streams = [
        Stream::non_blocking(device).map_err(e)?,
        Stream::non_blocking(device).map_err(e)?,
    ];
    let mut one = |c: usize| -> Result<f64, String> {
        match c {
            0 => safe_pipeline(k, &mut p, &one_stream).map_err(e),
            1 => safe_pipeline(k, &mut p, &two_streams).map_err(e),
            2 => cpp_pipeline(baseline.unwrap(), k, &mut p, 1),
            _ => cpp_pipeline(baseline.unwrap(), k, &mut p, 2),
        }
    };
    let have_cpp = baseline.is_some();
    for c in 0..4 {
        if c < 2 || have_cpp {
            one(c)?;
        }
    }
    let s = interleave(plan.rounds, &mut one, [true, true, have_cpp, have_cpp])?;
    p.verify()?;
    let ms = s.map(|s| s.map(|s| s.map(|ns| ns / 1e6)));
    writeln!(out, "## Stream overlap\n").unwrap();
    writeln!(out, "{} MiB of floats in {chunks} chunks: pinned copy in, a kernel of {iterations} dependent multiply-adds per element, copy out; chunks round-robin over 1 or 2 non-blocking streams. ms, median (min-max) of {} rounds; outputs checked against the host.\n", (n * 4) >> 20, plan.rounds).unwrap();
    writeln!(
        out,
        "| contender | 1 stream, ms | 2 streams, ms | speed-up |"
    )
    .unwrap();
    writeln!(out, "|---|---:|---:|---:|").unwrap();
    for (name, a, b) in [
        ("hip (safe)", &ms[0], &ms[1]),
        ("C++ (raw HIP)", &ms[2], &ms[3]),
    ] {
        if let (Some(a), Some(b)) = (a, b) {
            writeln!(
                out,
                "| {name} | {} | {} | {:.2}x |",
                a.show(2),
                b.show(2),
                a.median() / b.median()
            )
            .unwrap();
        }
    }
    writeln!(out).unwrap();
    Ok(())
}
