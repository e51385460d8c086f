//! The cudarc contender: the same PTX (from HIPRTC, i.e. NVRTC) loaded and launched through CUDA's driver
//! API by cudarc, on a stream of its own in the device's primary context (the one HIP uses too).
//!
//! Event tracking is off: with it on (cudarc's default once a second stream exists), every launch also
//! records an event per buffer argument, which is a safety feature the other contenders do not pay for.
use crate::launch::THREADS;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use std::sync::Arc;
use std::time::Instant;

pub struct Cudarc {
    stream: Arc<CudaStream>,
    empty: CudaFunction,
    eight: CudaFunction,
    bufs: [CudaSlice<f32>; 4],
    scalars: (f32, f32, u32, u32),
}

fn err(e: impl std::fmt::Debug) -> String {
    format!("cudarc: {e:?}")
}

fn config() -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

impl Cudarc {
    pub fn new(
        ordinal: usize,
        ptx: String,
        host: [&[f32]; 3],
        scalars: (f32, f32, u32, u32),
    ) -> Result<Cudarc, String> {
        let ctx = CudaContext::new(ordinal).map_err(err)?;
        // SAFETY: every buffer below is used by this one stream only.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(err)?;
        let module = ctx.load_module(Ptx::from_src(ptx)).map_err(err)?;
        let bufs = [
            stream.clone_htod(host[0]).map_err(err)?,
            stream.clone_htod(host[1]).map_err(err)?,
            stream.clone_htod(host[2]).map_err(err)?,
            stream.alloc_zeros::<f32>(THREADS as usize).map_err(err)?,
        ];
        Ok(Cudarc {
            empty: module.load_function("empty").map_err(err)?,
            eight: module.load_function("eight").map_err(err)?,
            stream,
            bufs,
            scalars,
        })
    }

    pub fn launch_empty(&self, launches: usize) -> Result<f64, String> {
        let t = Instant::now();
        for _ in 0..launches {
            // SAFETY: `empty` takes no parameters.
            unsafe { self.stream.launch_builder(&self.empty).launch(config()) }.map_err(err)?;
        }
        self.stream.synchronize().map_err(err)?;
        Ok(t.elapsed().as_nanos() as f64)
    }

    pub fn launch_eight(&mut self, launches: usize) -> Result<f64, String> {
        let (alpha, beta, n, stride) = self.scalars;
        let [a, b, c, d] = &mut self.bufs;
        let t = Instant::now();
        for _ in 0..launches {
            let mut builder = self.stream.launch_builder(&self.eight);
            builder.arg(&*a).arg(&*b).arg(&*c).arg(&mut *d);
            builder.arg(&alpha).arg(&beta).arg(&n).arg(&stride);
            // SAFETY: the arguments match `eight`'s parameters; it touches i < n = the buffers' length.
            unsafe { builder.launch(config()) }.map_err(err)?;
        }
        self.stream.synchronize().map_err(err)?;
        Ok(t.elapsed().as_nanos() as f64)
    }

    /// The eight-argument kernel's output.
    pub fn output(&self) -> Result<Vec<f32>, String> {
        self.stream.clone_dtoh(&self.bufs[3]).map_err(err)
    }
}

/// cudarc as its users get it: event tracking on (its default once a second stream exists), the `two`
/// kernel (one buffer read, one written) launched on one stream or alternating two.
pub struct Tracked {
    streams: [Arc<CudaStream>; 2],
    two: CudaFunction,
    a: CudaSlice<f32>,
    b: CudaSlice<f32>,
}

impl Tracked {
    pub fn new(ordinal: usize, ptx: String) -> Result<Tracked, String> {
        let ctx = CudaContext::new(ordinal).map_err(err)?;
        let streams = [
            ctx.new_stream().map_err(err)?,
            ctx.new_stream().map_err(err)?,
        ];
        let module = ctx.load_module(Ptx::from_src(ptx)).map_err(err)?;
        Ok(Tracked {
            a: streams[0].alloc_zeros::<f32>(64).map_err(err)?,
            b: streams[0].alloc_zeros::<f32>(64).map_err(err)?,
            two: module.load_function("two").map_err(err)?,
            streams,
        })
    }

    /// `n` launches, on stream 0 or alternating 0 and 1; the caller times around it.
    pub fn launch(&mut self, n: usize, alternate: bool) -> Result<(), String> {
        for i in 0..n {
            let s = &self.streams[if alternate { i & 1 } else { 0 }];
            let mut builder = s.launch_builder(&self.two);
            builder.arg(&self.a).arg(&mut self.b);
            // SAFETY: `two(const float*, float*)` touches nothing.
            unsafe { builder.launch(config()) }.map_err(err)?;
        }
        Ok(())
    }

    pub fn sync(&self) -> Result<(), String> {
        for s in &self.streams {
            s.synchronize().map_err(err)?;
        }
        Ok(())
    }
}
