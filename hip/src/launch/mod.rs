//! Kernel launches: a launch configuration, typed arguments, and the (unsafe) launch itself.

use crate::code_object::signature::ArgInfo;
use crate::code_object::Signature;
use crate::device::{Device, Limits};
use crate::error::{Error, Result};
use crate::memory::{Access, Allocation, DeviceCopy};
use crate::module::Function;
use crate::result;
use crate::stream::{Stream, StreamOp};
use std::ffi::c_void;

mod check;
pub mod cooperative;
mod devices;
pub(crate) mod node;
pub mod typed;
#[cfg(test)]
pub(crate) use check::check_config;
pub use check::ThreadIndex;
pub(crate) use check::{check_config_for, Platform};
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::sync::Arc;

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
    /// `x * y * z`, exactly: a `u128` holds the product of three `u32`s, so this never overflows (a `u64`
    /// does not: `u32::MAX` cubed is about 2^96).
    pub fn volume(self) -> u128 {
        u128::from(self.x) * u128::from(self.y) * u128::from(self.z)
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

/// A number of elements a launch covers, in whichever integer type the caller holds (`u32`, `u64` or
/// `usize`: a buffer's `len()` needs no cast; `i32` for integer literals, a negative count covering
/// nothing).
pub trait ElementCount: Copy {
    /// The count, widened.
    fn to_u64(self) -> u64;
}

impl ElementCount for i32 {
    fn to_u64(self) -> u64 {
        u64::try_from(self).unwrap_or(0)
    }
}

impl ElementCount for u32 {
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
}

impl ElementCount for u64 {
    fn to_u64(self) -> u64 {
        self
    }
}

impl ElementCount for usize {
    fn to_u64(self) -> u64 {
        // usize is at most 64 bits on every target Rust supports.
        self as u64
    }
}

/// Blocks of `block` threads covering `n` elements, at least one; `u32::MAX` when more would be needed
/// (no device has such a grid: the launch check refuses it, naming the device's limit).
pub(crate) fn blocks_for(n: u64, block: u32) -> u32 {
    let blocks = n.div_ceil(u64::from(block.max(1))).max(1);
    u32::try_from(blocks).unwrap_or(u32::MAX)
}

impl LaunchConfig {
    /// A 1-D launch covering `n` elements with 256-thread blocks (at least one block). A count that would
    /// need more than `u32::MAX` blocks gives `u32::MAX`, which every device's grid limit refuses at launch.
    pub fn for_num_elems(n: impl ElementCount) -> LaunchConfig {
        const BLOCK: u32 = 256;
        LaunchConfig {
            grid: blocks_for(n.to_u64(), BLOCK).into(),
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
///
/// - [`as_kernel_param`](KernelArg::as_kernel_param) returns a pointer to the bytes the kernel receives
///   for this parameter, valid for reading [`kernel_param_size`](KernelArg::kernel_param_size) bytes as
///   long as `self` is borrowed;
/// - where an implementation overrides them, [`is_device_pointer`](KernelArg::is_device_pointer) and
///   `allocation` tell the truth: the launch's device check and the memory model rely on them (a wrapper
///   of this crate's memory forwards the inner buffer's).
pub unsafe trait KernelArg {
    /// Pointer to the argument's bytes.
    fn as_kernel_param(&self) -> *mut c_void;

    /// How many bytes the kernel receives for it (checked against the kernel's signature). By default the
    /// size of `self`.
    fn kernel_param_size(&self) -> usize {
        std::mem::size_of_val(self)
    }

    /// Whether it is a device address (a buffer or view), for a kernel's pointer parameter, rather than a
    /// value. By default not.
    fn is_device_pointer(&self) -> bool {
        false
    }

    /// The allocation the argument points into, which the memory model orders the launch by (this
    /// crate's buffers and views); `None` for values. An implementation for a wrapper of this crate's
    /// memory forwards the inner buffer's.
    #[doc(hidden)]
    fn allocation(&self) -> Option<&Arc<Allocation>> {
        None
    }

    /// What a graph that records a launch with this argument must keep alive besides its allocation
    /// (a texture or surface object: the runtime object the kernel reads through); `None` for
    /// everything else.
    #[doc(hidden)]
    fn keep_alive(&self) -> Option<&KeepAlive> {
        None
    }
}

/// An owner a graph keeps for an argument ([`KernelArg::keep_alive`]).
#[doc(hidden)]
pub type KeepAlive = Arc<dyn std::any::Any + Send + Sync>;

// SAFETY: `as_kernel_param` points at `self`, a DeviceCopy value whose size_of::<T>() bytes (the default
// `kernel_param_size`) are all initialised (no padding), valid as long as `self` is borrowed; it is a
// value, not a device pointer, and has no allocation, as the other defaults say.
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
    // Entries `..len` are written by `arg`; the rest are never read by this crate, and HIP reads as many as
    // the kernel has parameters, which the signature check (or the launch's safety contract, for kernels
    // without one) makes `len`. Left uninitialised: zeroing 512 bytes was a measurable part of a launch.
    params: [MaybeUninit<*mut c_void>; MAX_KERNEL_ARGS],
    info: [MaybeUninit<ArgInfo>; MAX_KERNEL_ARGS],
    /// The tracked allocations among the arguments (entries `..uses`), each borrowed for `'a`; bit `i` of
    /// `writes` says entry `i` is written.
    tracked: [MaybeUninit<*const Arc<Allocation>>; MAX_KERNEL_ARGS],
    /// The parameter (index into `params`) of each tracked allocation, entries `..uses`.
    tracked_param: [MaybeUninit<u8>; MAX_KERNEL_ARGS],
    /// What a graph recording the launch keeps besides the allocations (entries `..keeps`), each
    /// borrowed for `'a` ([`KernelArg::keep_alive`]).
    kept: [MaybeUninit<*const KeepAlive>; MAX_KERNEL_ARGS],
    keeps: usize,
    uses: usize,
    writes: u32,
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
            params: [const { MaybeUninit::uninit() }; MAX_KERNEL_ARGS],
            info: [const { MaybeUninit::uninit() }; MAX_KERNEL_ARGS],
            tracked: [const { MaybeUninit::uninit() }; MAX_KERNEL_ARGS],
            tracked_param: [const { MaybeUninit::uninit() }; MAX_KERNEL_ARGS],
            kept: [const { MaybeUninit::uninit() }; MAX_KERNEL_ARGS],
            keeps: 0,
            uses: 0,
            writes: 0,
            len: 0,
            overflow: false,
            _borrows: PhantomData,
        }
    }

    /// Append an argument the kernel only reads. A buffer or view is a read for the memory model: the
    /// launch is ordered after the other streams' writes to it.
    /// Past [`MAX_KERNEL_ARGS`] the launch fails with [`Error::TooManyArguments`].
    pub fn arg<A: KernelArg + ?Sized>(&mut self, value: &'a A) -> &mut Self {
        self.push(value, value.allocation().map(|a| (a, Access::Read)))
    }

    /// Append an argument the kernel writes through (an output buffer). The exclusive borrow keeps the
    /// host from reading or changing it while these arguments exist, and the launch is a write for the
    /// memory model: ordered after the other streams' reads and writes of it.
    pub fn arg_mut<A: KernelArg + ?Sized>(&mut self, value: &'a mut A) -> &mut Self {
        let value = &*value;
        self.push(value, value.allocation().map(|a| (a, Access::Write)))
    }

    /// Append an argument the memory model does not see: the launch is not ordered by it, and it is not
    /// recorded as a user of its memory (nor kept alive by a graph that captures the launch).
    ///
    /// # Safety
    /// The caller orders this launch against every other operation on the argument's memory that
    /// conflicts with what the kernel does to it (events, one stream), and keeps the memory alive until
    /// the kernel (and every replay of a graph that captured it) has finished.
    pub unsafe fn arg_untracked<A: KernelArg + ?Sized>(&mut self, value: &'a A) -> &mut Self {
        self.push(value, None)
    }

    fn push<A: KernelArg + ?Sized>(
        &mut self,
        value: &'a A,
        used: Option<(&'a Arc<Allocation>, Access)>,
    ) -> &mut Self {
        if self.len < MAX_KERNEL_ARGS {
            self.params[self.len].write(value.as_kernel_param());
            self.info[self.len].write(ArgInfo {
                size: u32::try_from(value.kernel_param_size()).unwrap_or(u32::MAX),
                pointer: value.is_device_pointer(),
            });
            if let Some((alloc, access)) = used {
                // uses <= len < MAX_KERNEL_ARGS = 32: the indices and the bit fit.
                self.tracked[self.uses].write(alloc);
                self.tracked_param[self.uses].write(self.len as u8);
                self.writes |= u32::from(access == Access::Write) << self.uses;
                self.uses += 1;
            }
            if let Some(keep) = value.keep_alive() {
                // keeps <= len < MAX_KERNEL_ARGS.
                self.kept[self.keeps].write(keep);
                self.keeps += 1;
            }
            self.len += 1;
        } else {
            self.overflow = true;
        }
        self
    }

    /// The owners a graph recording these arguments keeps ([`KernelArg::keep_alive`]), cloned.
    pub(crate) fn kept_alive(&self) -> impl Iterator<Item = KeepAlive> + '_ {
        // SAFETY: `push` wrote entries `..keeps` from `&'a KeepAlive` references; 'a outlives `&self`.
        (0..self.keeps).map(|i| unsafe { (*self.kept[i].assume_init()).clone() })
    }

    /// Tracked allocation `i` (`i < uses`).
    fn tracked_allocation(&self, i: usize) -> &Arc<Allocation> {
        // SAFETY: `push` wrote entries `..uses` (uses <= MAX_KERNEL_ARGS) from `&'a Arc<Allocation>`
        // references; 'a outlives `&self`, so the entry is initialised and points at a live Arc.
        unsafe { &*self.tracked[i].assume_init() }
    }

    /// The device address the kernel receives for tracked allocation `i` (`i < uses`), where its
    /// argument is a device pointer (this crate's buffers and views); `None` for anything else.
    fn tracked_address(&self, i: usize) -> Option<crate::memory::DevicePtr> {
        // SAFETY: `push` wrote entry `i` with the index of its argument, below `len`.
        let p = usize::from(unsafe { self.tracked_param[i].assume_init() });
        let info = self.infos()[p];
        if !info.pointer || info.size as usize != std::mem::size_of::<crate::memory::DevicePtr>() {
            return None;
        }
        // SAFETY: `push` wrote `params[p]` from `as_kernel_param` of an argument borrowed for 'a, which
        // points at the `size` bytes the kernel receives (KernelArg's contract): here a device address.
        // Read unaligned: the contract promises the bytes, not their alignment.
        Some(unsafe {
            self.params[p]
                .assume_init()
                .cast::<crate::memory::DevicePtr>()
                .read_unaligned()
        })
    }

    /// The indices of the tracked arguments in address order of their allocations (see
    /// memory::tracking: two launches using the same buffers record them in the same order).
    fn use_order(&self) -> [u8; MAX_KERNEL_ARGS] {
        let mut order = [0u8; MAX_KERNEL_ARGS];
        for (i, o) in order.iter_mut().enumerate().take(self.uses) {
            *o = i as u8; // i < MAX_KERNEL_ARGS = 32
        }
        let addr = |i: u8| Arc::as_ptr(self.tracked_allocation(usize::from(i))) as usize;
        if self.uses == 2 {
            // The common case (a kernel with an input and an output): one comparison, no sort.
            if addr(1) < addr(0) {
                order.swap(0, 1);
            }
        } else {
            order[..self.uses].sort_unstable_by_key(|&i| addr(i));
        }
        order
    }

    /// Order a launch (the operation `op`) by the tracked arguments and record it as their user.
    #[inline]
    fn order_on(&self, op: &StreamOp<'_>) -> Result<()> {
        match self.uses {
            0 => Ok(()),
            // One allocation needs no address order.
            1 => self.tracked_allocation(0).use_on(op, self.access(0)),
            _ => self.order_on_sorted(op),
        }
    }

    /// Whether tracked allocation `i` is written or only read.
    #[inline]
    fn access(&self, i: usize) -> Access {
        if self.writes >> i & 1 == 1 {
            Access::Write
        } else {
            Access::Read
        }
    }

    /// [`order_on`](Self::order_on) for two or more allocations, taken in address order.
    fn order_on_sorted(&self, op: &StreamOp<'_>) -> Result<()> {
        let order = self.use_order();
        for &i in &order[..self.uses] {
            let i = usize::from(i);
            self.tracked_allocation(i).use_on(op, self.access(i))?;
        }
        Ok(())
    }

    /// Number of arguments.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Check these arguments against `function`'s signature, as [`Function::launch`] does, without
    /// launching: [`Error::ArgumentMismatch`] on a mismatch, `Ok` when they match or the code object carries
    /// no signature ([`Function::signature`] is `None`).
    ///
    /// # Errors
    ///
    /// [`Error::ArgumentMismatch`] naming the first argument that does not match (a missing or extra one,
    /// a size that differs, a buffer for a value or a value for a pointer).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(module: &Module, x: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// let scale = module.function("scale")?; // __global__ void scale(float* x, float s, unsigned n)
    /// let n = x.len() as u32;
    /// let mut args = LaunchArgs::new();
    /// args.arg_mut(x).arg(&2.0f32).arg(&n);
    /// args.check_against(&scale)?; // what the launch would check first
    /// # Ok(()) }
    /// ```
    pub fn check_against(&self, function: &Function) -> Result<()> {
        match function.checked_signature() {
            Some(sig) => self.check(sig),
            None => Ok(()),
        }
    }

    /// Check these arguments against `signature` (no GPU needed): [`Error::ArgumentMismatch`] naming the
    /// first parameter that does not match. Allocates nothing unless it fails.
    ///
    /// # Errors
    ///
    /// [`Error::ArgumentMismatch`] naming the first argument that does not match the signature (or the
    /// count, when there are more or fewer arguments than parameters).
    ///
    /// ```no_run
    /// use hip::code_object::{CodeObject, Signature};
    /// # fn f(x: &mut hip::DeviceBuffer<f32>) -> hip::Result<()> {
    /// let image = std::fs::read("scale.hsaco").expect("the code object");
    /// let code = CodeObject::parse(&image)?;
    /// let kernel = code.kernel("scale", None).expect("a kernel named scale");
    /// let signature = Signature::new(kernel.clone()); // scale(float* x, float s, unsigned n)
    /// let mut args = hip::LaunchArgs::new();
    /// args.arg_mut(x).arg(&2.0f32); // `n` is missing
    /// assert!(args.check(&signature).is_err()); // Error::ArgumentMismatch
    /// # Ok(()) }
    /// ```
    pub fn check(&self, signature: &Signature) -> Result<()> {
        signature.check(self.infos())
    }

    /// What each argument is (size, pointer or value).
    pub(crate) fn infos(&self) -> &[ArgInfo] {
        // SAFETY: `push` initialised entries `..len` (len <= MAX_KERNEL_ARGS, the array's length), and
        // MaybeUninit<ArgInfo> has ArgInfo's layout, so the first `len` entries are `len` valid ArgInfo,
        // borrowed with `self`.
        unsafe { std::slice::from_raw_parts(self.info.as_ptr().cast::<ArgInfo>(), self.len) }
    }

    /// The parameter array HIP reads (`kernelParams`).
    pub(crate) fn params_ptr(&mut self) -> *mut *mut c_void {
        self.params.as_mut_ptr().cast::<*mut c_void>()
    }
}

impl Function {
    /// Queue this kernel on `stream`.
    ///
    /// The configuration is checked first against the device's limits (block extents, threads per block,
    /// grid extents, shared memory: static plus dynamic) and the kernel's own thread limit: a configuration
    /// the device cannot run is [`Error::InvalidLaunch`], never sent. So is a grid whose grid x block along
    /// an axis passes `u32::MAX`: AMD's dispatch packet cannot hold it, and on NVIDIA a kernel computing
    /// `blockIdx.x * blockDim.x + threadIdx.x` in 32 bits would give two threads one index (a kernel with
    /// 64-bit indices launches through [`launch_with_index`](Function::launch_with_index)). Where the code
    /// object carries the kernel's signature ([`Function::signature`]), the arguments are checked against it: their count, each
    /// one's size, and a buffer passed for a value or a value for a pointer are [`Error::ArgumentMismatch`],
    /// never sent.
    ///
    /// Every buffer or view in `args` must be memory the stream's device can reach, or the launch is
    /// [`Error::DeviceMismatch`], never sent (a kernel given memory its device cannot reach faults the
    /// GPU; on AMD the process aborts): memory of the stream's device; managed memory
    /// ([`ManagedBuffer`](crate::ManagedBuffer), of any device); device memory of another device to
    /// which the stream's device was given access with
    /// [`Device::enable_peer_access`](crate::Device::enable_peer_access) or
    /// [`ensure_peer_access`](crate::Device::ensure_peer_access) (not stream-ordered memory
    /// from [`DeviceBuffer::alloc_async`](crate::DeviceBuffer::alloc_async): peer access does not reach
    /// memory pools). Peer access enabled only by raw calls is not known to the crate: pass such memory
    /// with [`LaunchArgs::arg_untracked`].
    ///
    /// # Errors
    ///
    /// Nothing is sent when the launch is refused: [`Error::InvalidLaunch`] for a configuration the device
    /// cannot run or a stream of another device, [`Error::ArgumentMismatch`] for arguments that do not
    /// match the signature, [`Error::DeviceMismatch`] for memory the device cannot reach,
    /// [`Error::TooManyArguments`], and what `hipModuleLaunchKernel` returns.
    ///
    /// # Safety
    ///
    /// The signature check cannot see types of equal size (`f32` for `u32`), a missing signature (a cubin)
    /// skips it, and no code object says what memory a pointer may reach. The caller guarantees:
    ///
    /// - `args` matches the kernel's parameters in number, order and type;
    /// - the kernel stays inside the memory it is given;
    /// - it **writes only memory passed with [`LaunchArgs::arg_mut`]**; memory passed with
    ///   [`LaunchArgs::arg`] is only read (the memory model orders the launch by exactly that);
    /// - memory it reaches any other way (a pointer inside a struct, a module global,
    ///   [`LaunchArgs::arg_untracked`]) is ordered by the caller: not read or written by the host or other
    ///   work until the kernel completes, and reachable from the stream's device;
    /// - peer access the device check relies on is not disabled behind the crate's back (a raw
    ///   `hipDeviceDisablePeerAccess` or `hipDeviceReset`) while work that uses it may still run;
    /// - on a stream being captured (the launch is recorded, not run), all of the above holds for every
    ///   launch of every [`GraphExec`](crate::GraphExec) made from the capture, as
    ///   [`Capture::launch`](crate::Capture::launch) states (the capture keeps this function and the
    ///   crate's buffers in `args` alive itself).
    ///
    /// ```no_run
    /// use hip::prelude::*;
    ///
    /// # fn f(device: &Device, module: &Module) -> hip::Result<()> {
    /// let kernel = module.function("scale")?; // extern "C" __global__ void scale(float* x, float s, unsigned n)
    /// let stream = Stream::new(device)?;
    /// let mut x = DeviceBuffer::from_slice(device, &[1.0f32, 2.0, 3.0])?;
    /// let n = x.len() as u32;
    /// let mut args = LaunchArgs::new();
    /// args.arg_mut(&mut x).arg(&2.0f32).arg(&n);
    /// // SAFETY: the arguments match `scale`'s parameters; it writes x[..n] only, passed with arg_mut.
    /// unsafe { kernel.launch(&stream, &LaunchConfig::for_num_elems(n), &mut args)? };
    /// assert_eq!(x.to_vec()?, [2.0, 4.0, 6.0]); // waits for the kernel, which wrote x
    /// # Ok(()) }
    /// ```
    pub unsafe fn launch(
        &self,
        stream: &Stream,
        config: &LaunchConfig,
        args: &mut LaunchArgs<'_>,
    ) -> Result<()> {
        // SAFETY: the caller's contract above, which is launch_with_index's with a 32-bit index.
        unsafe { self.launch_with_index(stream, config, args, ThreadIndex::Bits32) }
    }

    /// [`launch`](Function::launch) for a kernel that numbers its threads with `index`: with
    /// [`ThreadIndex::Bits64`] (a kernel computing 64-bit indices over every dimension, as
    /// `#[kernel]` functions do) a grid past 2^32 threads along an axis is allowed on NVIDIA, where
    /// [`launch`](Function::launch) refuses it because a 32-bit index would wrap. AMD devices take at most
    /// 2^32 - 1 work-items per axis either way.
    ///
    /// # Errors
    ///
    /// As [`launch`](Function::launch); [`Error::InvalidLaunch`] also for a grid whose threads `index`
    /// cannot number distinctly.
    ///
    /// # Safety
    ///
    /// As [`launch`](Function::launch), and: the kernel computes its thread indices as `index` says.
    ///
    /// ```no_run
    /// use hip::launch::ThreadIndex;
    /// use hip::prelude::*;
    ///
    /// # fn f(stream: &Stream, kernel: &Function, x: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// let n = x.len() as u64;
    /// let mut args = LaunchArgs::new();
    /// args.arg_mut(x).arg(&n);
    /// let config = LaunchConfig::new(1 << 23, 1024); // 2^33 threads along x
    /// // SAFETY: (x, n) as the kernel takes them; it indexes in 64 bits and writes x[..n] only.
    /// unsafe { kernel.launch_with_index(stream, &config, &mut args, ThreadIndex::Bits64)? };
    /// # Ok(()) }
    /// ```
    pub unsafe fn launch_with_index(
        &self,
        stream: &Stream,
        config: &LaunchConfig,
        args: &mut LaunchArgs<'_>,
        index: ThreadIndex,
    ) -> Result<()> {
        // SAFETY: the caller's contract above.
        unsafe { self.launch_via(stream, config, args, index, false) }
    }

    /// The refusal of a stream of another device than the kernel's (`stream_device`).
    #[cold]
    #[inline(never)]
    fn refuse_stream_of(&self, stream_device: &Device) -> Error {
        Error::InvalidLaunch(format!(
            "stream is on device {} but kernel `{}` is loaded on device {}",
            stream_device.ordinal(),
            self.name(),
            self.module().device().ordinal()
        ))
    }

    /// The checked launch: [`launch_with_index`](Function::launch_with_index), or with `cooperative` a
    /// co-residency check after the others and `hipModuleLaunchCooperativeKernel` (see [`cooperative`]).
    ///
    /// # Safety
    /// As [`launch_with_index`](Function::launch_with_index); cooperative, as
    /// [`launch_cooperative`](Function::launch_cooperative).
    pub(super) unsafe fn launch_via(
        &self,
        stream: &Stream,
        config: &LaunchConfig,
        args: &mut LaunchArgs<'_>,
        index: ThreadIndex,
        cooperative: bool,
    ) -> Result<()> {
        if args.overflow {
            return Err(Error::TooManyArguments {
                max: MAX_KERNEL_ARGS,
            });
        }
        args.check_against(self)?;
        let device = self.module().device();
        if stream.device().ordinal() != device.ordinal() {
            return Err(self.refuse_stream_of(stream.device()));
        }
        // Held until the kernel is queued (memory of another device only).
        let _peer_gate = args.check_devices(device)?;
        check_config_for(
            Platform::CURRENT,
            index,
            config,
            device.limits(),
            self.max_threads_per_block(),
            self.static_shared_bytes(),
            dynamic_shared_opt_in(self, config, device.limits()),
            self.name(),
        )?;
        if cooperative {
            self.check_cooperative_grid(config)?;
        }
        let op = stream.begin_op();
        args.order_on(&op)?;
        if op.is_capturing() {
            // The kernel node refers to the module's code: the graph must keep the module loaded.
            if let Some(log) = op.capture_log() {
                let mut kept = crate::stream::lock(&log.kept);
                kept.push(Arc::new(self.clone()));
                // Texture and surface objects: their runtime objects must outlive every replay.
                kept.extend(args.kept_alive());
            }
        }
        device.bind()?;
        let (f, s, p) = (self.raw(), stream.raw(), args.params_ptr());
        let (g, b) = (
            (config.grid.x, config.grid.y, config.grid.z),
            (config.block.x, config.block.y, config.block.z),
        );
        let shared = config.shared_mem_bytes;
        // SAFETY: `self.raw()` is a live function (`self` keeps its module loaded; a capture keeps a
        // clone) of the stream's device (checked), which is current, and `stream.raw()` is live while
        // borrowed. `params_ptr` is an array of `args.len()` pointers, each to the bytes of an argument
        // borrowed for the `LaunchArgs`' lifetime (KernelArg's contract), which outlives this call; HIP
        // copies the arguments before returning. Where the code object carries the signature the count
        // and sizes were checked; otherwise they are the caller's (`# Safety`). The configuration is
        // within the device's limits (checked). Every buffer in `args` is reachable from this device
        // (checked) and was ordered under `op`, held through this call: the stream waited for its
        // conflicting users and is recorded as its user (or, capturing, the capture keeps it), so it is
        // neither freed nor used in conflict before the kernel is done. What the kernel does beyond its
        // arguments is the caller's contract; cooperative, the grid is co-resident (checked).
        unsafe {
            if cooperative {
                result::module::module_launch_cooperative_kernel(f, g, b, shared, s, p)
            } else {
                result::module_launch_kernel(f, g, b, shared, s, p)
            }
        }
    }
}

#[cfg(test)]
mod tests;

/// `KernelArg` for this crate's device memory (a device pointer the model tracks).
macro_rules! memory_kernel_arg {
    ($ty:ident $(<$lt:lifetime>)?) => {
        // SAFETY: `as_kernel_param` points at the memory's `ptr` field, a device address (the value a
        // kernel's pointer parameter takes) of `kernel_param_size()` = size_of::<DevicePtr>() bytes,
        // stored in `self`: valid as long as `self` is borrowed, as the trait asks.
        unsafe impl<$($lt,)? T: DeviceCopy> KernelArg for crate::memory::$ty<$($lt,)? T> {
            fn as_kernel_param(&self) -> *mut std::ffi::c_void {
                self.device_ptr_field() as *const crate::memory::DevicePtr as *mut std::ffi::c_void
            }
            fn kernel_param_size(&self) -> usize {
                std::mem::size_of::<crate::memory::DevicePtr>()
            }
            fn is_device_pointer(&self) -> bool {
                true
            }
            fn allocation(&self) -> Option<&Arc<Allocation>> {
                Some(crate::memory::DeviceMemory::allocation(self))
            }
        }
    };
}

memory_kernel_arg!(DeviceBuffer);
memory_kernel_arg!(DeviceSlice<'a>);
memory_kernel_arg!(DeviceSliceMut<'a>);
memory_kernel_arg!(ManagedBuffer);
memory_kernel_arg!(ForeignBuffer);
memory_kernel_arg!(GrowableBuffer);
memory_kernel_arg!(PitchedBuffer);

// SAFETY: `as_kernel_param` points at the stored device address of the pinned memory's mapping (the
// value a kernel's pointer parameter takes), of size_of::<DevicePtr>() bytes, valid while `self` is
// borrowed; it is a device address of `alloc`'s memory, which the launch is ordered and recorded by.
unsafe impl<T: DeviceCopy> KernelArg for crate::memory::MappedPinned<'_, T> {
    fn as_kernel_param(&self) -> *mut c_void {
        self.device_ptr_field() as *const crate::memory::DevicePtr as *mut c_void
    }
    fn kernel_param_size(&self) -> usize {
        std::mem::size_of::<crate::memory::DevicePtr>()
    }
    fn is_device_pointer(&self) -> bool {
        true
    }
    fn allocation(&self) -> Option<&Arc<Allocation>> {
        Some(self.alloc())
    }
}

/// The dynamic shared memory `f` opted in to, asked of the runtime only when `config` needs more than
/// the device's plain per-block limit (on NVIDIA; 0 otherwise, and 0 if the runtime cannot say, which
/// leaves the plain limit standing).
fn dynamic_shared_opt_in(f: &Function, config: &LaunchConfig, limits: &Limits) -> u32 {
    let shared = u64::from(config.shared_mem_bytes) + u64::from(f.static_shared_bytes());
    if !cfg!(hip_platform = "nvidia") || shared <= limits.max_shared_mem_per_block as u64 {
        return 0;
    }
    f.attribute(hip_sys::HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        .ok()
        .and_then(|v| u32::try_from(v).ok())
        .unwrap_or(0)
}
