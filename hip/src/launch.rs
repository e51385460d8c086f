//! Kernel launches: a launch configuration, typed arguments, and the (unsafe) launch itself.

use crate::error::{Error, Result};
use crate::memory::DeviceCopy;
use crate::module::Function;
use crate::result;
use crate::stream::Stream;
use std::ffi::c_void;
use std::marker::PhantomData;

/// Grid or block extents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3 {
    /// Extent along x.
    pub x: u32,
    /// Extent along y.
    pub y: u32,
    /// Extent along z.
    pub z: u32,
}

impl Dim3 {
    /// `x * y * z`, without overflow.
    pub fn volume(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Self {
        Dim3 { x, y: 1, z: 1 }
    }
}
impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Self {
        Dim3 { x, y, z: 1 }
    }
}
impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Self {
        Dim3 { x, y, z }
    }
}

/// How to launch a kernel: grid and block extents and dynamic shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in the grid.
    pub grid: Dim3,
    /// Threads in a block.
    pub block: Dim3,
    /// Dynamic shared memory per block in bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// A 1-D launch covering `n` elements with 256-thread blocks (at least one block).
    pub fn for_num_elems(n: u32) -> LaunchConfig {
        const BLOCK: u32 = 256;
        LaunchConfig {
            grid: n.div_ceil(BLOCK).max(1).into(),
            block: BLOCK.into(),
            shared_mem_bytes: 0,
        }
    }

    /// A configuration from grid and block extents, without dynamic shared memory.
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> LaunchConfig {
        LaunchConfig {
            grid: grid.into(),
            block: block.into(),
            shared_mem_bytes: 0,
        }
    }
}

/// A value that can be passed as a kernel argument.
///
/// # Safety
/// [`as_kernel_param`](KernelArg::as_kernel_param) returns a pointer to the bytes the kernel receives for
/// this parameter, valid as long as `self` is borrowed.
pub unsafe trait KernelArg {
    /// Pointer to the argument's bytes.
    fn as_kernel_param(&self) -> *mut c_void;
}

// SAFETY: plain data is passed by value: a pointer to it.
unsafe impl<T: DeviceCopy> KernelArg for T {
    fn as_kernel_param(&self) -> *mut c_void {
        self as *const T as *mut c_void
    }
}

/// Most arguments one launch takes.
pub const MAX_KERNEL_ARGS: usize = 32;

/// Kernel arguments, in the kernel's parameter order. Borrows each argument until the launch, and allocates
/// nothing.
///
/// ```no_run
/// # use hip::{LaunchArgs, DeviceBuffer};
/// # fn f(a: &DeviceBuffer<f32>, b: &DeviceBuffer<f32>, c: &mut DeviceBuffer<f32>) {
/// let n = 1024u32;
/// let mut args = LaunchArgs::new();
/// args.arg(a).arg(b).arg_mut(c).arg(&n);
/// # }
/// ```
pub struct LaunchArgs<'a> {
    params: [*mut c_void; MAX_KERNEL_ARGS],
    len: usize,
    overflow: bool,
    _borrows: PhantomData<&'a ()>,
}

impl Default for LaunchArgs<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> LaunchArgs<'a> {
    /// No arguments yet.
    pub fn new() -> Self {
        LaunchArgs {
            params: [std::ptr::null_mut(); MAX_KERNEL_ARGS],
            len: 0,
            overflow: false,
            _borrows: PhantomData,
        }
    }

    /// Append an argument. Past [`MAX_KERNEL_ARGS`] the launch fails with [`Error::TooManyArguments`].
    pub fn arg<A: KernelArg + ?Sized>(&mut self, value: &'a A) -> &mut Self {
        if self.len < MAX_KERNEL_ARGS {
            self.params[self.len] = value.as_kernel_param();
            self.len += 1;
        } else {
            self.overflow = true;
        }
        self
    }

    /// Append an argument the kernel writes through (an output buffer). The exclusive borrow keeps the
    /// host from reading or changing it while these arguments exist.
    pub fn arg_mut<A: KernelArg + ?Sized>(&mut self, value: &'a mut A) -> &mut Self {
        self.arg(&*value)
    }

    /// Number of arguments.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Function {
    /// Queue this kernel on `stream`.
    ///
    /// The configuration is checked first against the device's limits (block extents, threads per block,
    /// grid extents, shared memory) and the kernel's own thread limit: a configuration the device cannot
    /// run is [`Error::InvalidLaunch`], never sent.
    ///
    /// # Safety
    /// Nothing can check the arguments against the kernel's parameters: HIP code objects for NVIDIA carry no
    /// signature, and no code object says what memory a pointer may reach. The caller guarantees that
    /// `args` matches the kernel's parameters in number, order and type, that the kernel stays inside the
    /// memory it is given, and that memory it writes is not read or written by the host (or by other
    /// work) until the kernel completes.
    pub unsafe fn launch(
        &self,
        stream: &Stream,
        config: &LaunchConfig,
        args: &mut LaunchArgs<'_>,
    ) -> Result<()> {
        if args.overflow {
            return Err(Error::TooManyArguments {
                max: MAX_KERNEL_ARGS,
            });
        }
        let device = self.module().device();
        if stream.device().ordinal() != device.ordinal() {
            return Err(Error::InvalidLaunch(format!(
                "stream is on device {} but kernel `{}` is loaded on device {}",
                stream.device().ordinal(),
                self.name(),
                device.ordinal()
            )));
        }
        self.check(config)?;
        device.bind()?;
        let (g, b) = (config.grid, config.block);
        result::module_launch_kernel(
            self.raw(),
            (g.x, g.y, g.z),
            (b.x, b.y, b.z),
            config.shared_mem_bytes,
            stream.raw(),
            args.params.as_mut_ptr(),
        )
    }

    fn check(&self, c: &LaunchConfig) -> Result<()> {
        let limits = self.module().device().limits();
        let (g, b) = (c.grid, c.block);
        let bad = |msg: String| Err(Error::InvalidLaunch(msg));
        if g.volume() == 0 || b.volume() == 0 {
            return bad(format!("empty grid {g:?} or block {b:?}"));
        }
        let max_block = limits.max_block_dim;
        if b.x > max_block[0] || b.y > max_block[1] || b.z > max_block[2] {
            return bad(format!(
                "block {:?} exceeds the device's block limits {max_block:?}",
                (b.x, b.y, b.z)
            ));
        }
        let mut max_threads = limits.max_threads_per_block;
        if self.max_threads_per_block() > 0 {
            max_threads = max_threads.min(self.max_threads_per_block());
        }
        if b.volume() > max_threads as u64 {
            return bad(format!(
                "block of {} threads exceeds the limit of {max_threads} for kernel `{}`",
                b.volume(),
                self.name()
            ));
        }
        let max_grid = limits.max_grid_dim;
        if g.x > max_grid[0] || g.y > max_grid[1] || g.z > max_grid[2] {
            return bad(format!(
                "grid {:?} exceeds the device's grid limits {max_grid:?}",
                (g.x, g.y, g.z)
            ));
        }
        if c.shared_mem_bytes as usize > limits.max_shared_mem_per_block {
            return bad(format!(
                "{} bytes of dynamic shared memory exceed the device's {} per block",
                c.shared_mem_bytes, limits.max_shared_mem_per_block
            ));
        }
        Ok(())
    }
}
