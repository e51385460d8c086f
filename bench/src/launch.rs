//! Kernel launch overhead: host time per asynchronous launch, over a batch, synchronised at the end.
use crate::baseline::{checked, Baseline};
use crate::Kernels;
use hip::prelude::*;
use hip::sys;
use std::ffi::c_void;
use std::time::Instant;

/// Threads in the one block each launch runs.
pub const THREADS: u32 = 32;

/// The eight-argument kernel's inputs: four buffers of THREADS floats and four scalars.
pub struct EightArgs {
    pub a: DeviceBuffer<f32>,
    pub b: DeviceBuffer<f32>,
    pub c: DeviceBuffer<f32>,
    pub d: DeviceBuffer<f32>,
    pub alpha: f32,
    pub beta: f32,
    pub n: u32,
    pub stride: u32,
}

impl EightArgs {
    pub fn new(device: &Device, host: [&[f32]; 3]) -> hip::Result<EightArgs> {
        Ok(EightArgs {
            a: DeviceBuffer::from_slice(device, host[0])?,
            b: DeviceBuffer::from_slice(device, host[1])?,
            c: DeviceBuffer::from_slice(device, host[2])?,
            d: DeviceBuffer::zeroed(device, THREADS as usize)?,
            alpha: 1.5,
            beta: -0.25,
            n: THREADS,
            stride: 1,
        })
    }

    /// What `d` must hold after any number of launches.
    pub fn expected(&self, host: [&[f32]; 3]) -> Vec<f32> {
        (0..THREADS as usize)
            .map(|i| self.alpha * host[0][i] + self.beta * host[1][i] + host[2][i])
            .collect()
    }
}

fn config() -> LaunchConfig {
    LaunchConfig::new(1, THREADS)
}

/// The safe API: arguments built and the launch checked on every call, as a user writes it.
pub fn safe_empty(k: &Kernels, stream: &Stream, launches: usize) -> hip::Result<f64> {
    let cfg = config();
    let t = Instant::now();
    for _ in 0..launches {
        let mut args = LaunchArgs::new();
        // SAFETY: `empty` takes no parameters.
        unsafe { k.empty.launch(stream, &cfg, &mut args)? };
    }
    stream.synchronize()?;
    Ok(t.elapsed().as_nanos() as f64)
}

pub fn safe_eight(
    k: &Kernels,
    stream: &Stream,
    e: &mut EightArgs,
    launches: usize,
) -> hip::Result<f64> {
    let cfg = config();
    let t = Instant::now();
    for _ in 0..launches {
        let mut args = LaunchArgs::new();
        args.arg(&e.a)
            .arg(&e.b)
            .arg(&e.c)
            .arg_mut(&mut e.d)
            .arg(&e.alpha)
            .arg(&e.beta)
            .arg(&e.n)
            .arg(&e.stride);
        // SAFETY: the arguments match `eight`'s parameters; it touches i < n = the buffers' length.
        unsafe { k.eight.launch(stream, &cfg, &mut args)? };
    }
    stream.synchronize()?;
    Ok(t.elapsed().as_nanos() as f64)
}

/// The argument check `safe_eight` runs in each launch (`LaunchArgs::check_against` the kernel's signature),
/// alone: ns per check, the host-time-per-launch cost it adds. Fails if `eight` has no signature.
pub fn check_eight(k: &Kernels, e: &mut EightArgs, checks: usize) -> hip::Result<f64> {
    if k.eight.signature().is_none() {
        return Err(hip::Error::InvalidLaunch(
            "`eight` has no signature: nothing to time".into(),
        ));
    }
    let mut args = LaunchArgs::new();
    args.arg(&e.a)
        .arg(&e.b)
        .arg(&e.c)
        .arg_mut(&mut e.d)
        .arg(&e.alpha)
        .arg(&e.beta)
        .arg(&e.n)
        .arg(&e.stride);
    let t = Instant::now();
    for _ in 0..checks {
        std::hint::black_box(&args).check_against(std::hint::black_box(&k.eight))?;
    }
    Ok(t.elapsed().as_nanos() as f64 / checks as f64)
}

/// Raw hip-sys: hipModuleLaunchKernel in a loop, as a C programmer would write it in Rust.
pub fn raw_empty(k: &Kernels, stream: &Stream, launches: usize) -> hip::Result<f64> {
    let t = Instant::now();
    for _ in 0..launches {
        let rc = unsafe {
            sys::hipModuleLaunchKernel(
                k.empty.raw(),
                1,
                1,
                1,
                THREADS,
                1,
                1,
                0,
                stream.raw(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        hip::result::check("hipModuleLaunchKernel", rc)?;
    }
    stream.synchronize()?;
    Ok(t.elapsed().as_nanos() as f64)
}

pub fn raw_eight(
    k: &Kernels,
    stream: &Stream,
    e: &mut EightArgs,
    launches: usize,
) -> hip::Result<f64> {
    let (mut a, mut b, mut c, mut d) = (
        e.a.device_ptr(),
        e.b.device_ptr(),
        e.c.device_ptr(),
        e.d.device_ptr(),
    );
    let t = Instant::now();
    for _ in 0..launches {
        let mut params: [*mut c_void; 8] = [
            &mut a as *mut _ as *mut c_void,
            &mut b as *mut _ as *mut c_void,
            &mut c as *mut _ as *mut c_void,
            &mut d as *mut _ as *mut c_void,
            &mut e.alpha as *mut f32 as *mut c_void,
            &mut e.beta as *mut f32 as *mut c_void,
            &mut e.n as *mut u32 as *mut c_void,
            &mut e.stride as *mut u32 as *mut c_void,
        ];
        let rc = unsafe {
            sys::hipModuleLaunchKernel(
                k.eight.raw(),
                1,
                1,
                1,
                THREADS,
                1,
                1,
                0,
                stream.raw(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        hip::result::check("hipModuleLaunchKernel", rc)?;
    }
    stream.synchronize()?;
    Ok(t.elapsed().as_nanos() as f64)
}

pub fn cpp_empty(b: &Baseline, k: &Kernels, launches: usize) -> Result<f64, String> {
    checked("launch", unsafe {
        (b.launch_empty)(k.empty.raw(), launches as i32, THREADS)
    })
}

pub fn cpp_eight(b: &Baseline, k: &Kernels, e: &EightArgs, launches: usize) -> Result<f64, String> {
    checked("launch", unsafe {
        (b.launch_8)(
            k.eight.raw(),
            launches as i32,
            THREADS,
            e.a.device_ptr(),
            e.b.device_ptr(),
            e.c.device_ptr(),
            e.d.device_ptr(),
            e.alpha,
            e.beta,
            e.n,
            e.stride,
        )
    })
}
