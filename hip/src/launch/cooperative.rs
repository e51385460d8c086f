//! Cooperative launches: a grid whose blocks are all resident at once, so that a kernel may wait at a
//! grid-wide barrier (`cooperative_groups::this_grid().sync()`).
//!
//! [`Function::launch_cooperative`] checks what [`Function::launch`] checks, then that the device supports
//! cooperative launches (`hipDeviceAttributeCooperativeLaunch`) and that the grid can be co-resident:
//! at most [`Function::max_cooperative_grid`] blocks, the occupancy query's blocks per multiprocessor
//! times the multiprocessor count. A grid past that would wait forever at its first barrier for blocks
//! that cannot start; it is refused with the numbers, never sent. The launch is
//! `hipModuleLaunchCooperativeKernel` on AMD (HIP 5.7 and later: HIP 5.2's headers lack it, and it is
//! [`Error::NotSupported`] there) and `cuLaunchCooperativeKernel` on HIP's NVIDIA platform.

use super::{Dim3, LaunchArgs, LaunchConfig, ThreadIndex};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::module::Function;
use crate::result;
use crate::stream::Stream;
use hip_sys as sys;

/// Whether this build has a cooperative launch of a module's kernel: `hipModuleLaunchCooperativeKernel`
/// in the HIP headers (5.7 and later; not 5.2), or HIP's NVIDIA platform (`cuLaunchCooperativeKernel`).
/// Without it [`Function::launch_cooperative`] is [`Error::NotSupported`].
pub const HAS_COOPERATIVE_LAUNCH: bool = result::module::HAS_MODULE_LAUNCH_COOPERATIVE;

/// The call a cooperative launch makes, as errors name it.
pub const CALL: &str = "hipModuleLaunchCooperativeKernel";

/// [`Error::NotSupported`] naming the cooperative launch unless this build has it and the device's
/// `hipDeviceAttributeCooperativeLaunch` (`cooperative`) is nonzero.
///
/// # Errors
///
/// [`Error::NotSupported`] naming `hipModuleLaunchCooperativeKernel`, saying why.
///
/// ```
/// use hip::launch::cooperative::{supported, HAS_COOPERATIVE_LAUNCH};
/// assert!(supported(0).is_err());
/// assert_eq!(supported(1).is_ok(), HAS_COOPERATIVE_LAUNCH);
/// ```
pub fn supported(cooperative: i32) -> Result<()> {
    if !HAS_COOPERATIVE_LAUNCH {
        return Err(Error::NotSupported {
            what: CALL,
            reason: "the HIP headers this crate was built with (5.2) declare no \
                     hipModuleLaunchCooperativeKernel; HIP 5.7 added it",
        });
    }
    if cooperative == 0 {
        return Err(Error::NotSupported {
            what: CALL,
            reason: "the device does not support cooperative launches \
                     (hipDeviceAttributeCooperativeLaunch is 0)",
        });
    }
    Ok(())
}

/// Check that `grid` can be co-resident: at most `per_multiprocessor * multiprocessors` blocks (the
/// occupancy query's answer for the launch's block size and dynamic shared memory, and the device's
/// multiprocessor count). `kernel` names the kernel in the error.
///
/// # Errors
///
/// [`Error::InvalidLaunch`] giving the grid's blocks, the blocks per multiprocessor, the multiprocessor
/// count and their product.
///
/// ```
/// use hip::launch::cooperative::check_co_resident;
/// assert!(check_co_resident("k", (8, 4).into(), 2, 16).is_ok()); // 32 blocks, 2 x 16 fit
/// let e = check_co_resident("k", 33.into(), 2, 16).unwrap_err();
/// assert!(e.to_string().contains("33 blocks"), "{e}");
/// ```
pub fn check_co_resident(
    kernel: &str,
    grid: Dim3,
    per_multiprocessor: u32,
    multiprocessors: u32,
) -> Result<()> {
    let blocks = grid.volume();
    let max = u128::from(per_multiprocessor) * u128::from(multiprocessors);
    if blocks <= max {
        return Ok(());
    }
    Err(Error::InvalidLaunch(format!(
        "cooperative launch of `{kernel}`: the grid of {blocks} blocks ({} x {} x {}) cannot be \
         co-resident: {per_multiprocessor} active blocks per multiprocessor (for this block size and \
         dynamic shared memory) x {multiprocessors} multiprocessors = {max} blocks at most",
        grid.x, grid.y, grid.z
    )))
}

/// `(blocks per multiprocessor, multiprocessors)` for `f` with `block` threads and `dynamic_shared` bytes.
fn residency(f: &Function, block: u32, dynamic_shared: usize) -> Result<(u32, u32)> {
    let per = f.max_active_blocks_per_multiprocessor(block, dynamic_shared)?;
    let sms = f
        .module()
        .device()
        .attribute(sys::hipDeviceAttributeMultiprocessorCount)?;
    Ok((per, sms.max(0) as u32))
}

/// Whether `device` can launch cooperatively ([`supported`] over its attribute).
fn device_supported(device: &Device) -> Result<()> {
    supported(1)?; // the headers first: no device query where the call does not exist
    supported(device.attribute(sys::hipDeviceAttributeCooperativeLaunch)?)
}

impl Function {
    /// The most blocks of `block` threads, each with `dynamic_shared` bytes of dynamic shared memory, that
    /// a cooperative launch of this kernel takes: the blocks that can be active on one multiprocessor
    /// (`hipModuleOccupancyMaxActiveBlocksPerMultiprocessor`) times the device's multiprocessor count.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a block size of 0 or above `i32::MAX`; what HIP returns for the
    /// occupancy query and `hipDeviceGetAttribute`; [`Error::InvalidLaunch`] if the product passes
    /// `u32::MAX`.
    ///
    /// ```no_run
    /// # fn f(kernel: &hip::Function) -> hip::Result<()> {
    /// let blocks = kernel.max_cooperative_grid(256, 0)?;
    /// let config = hip::LaunchConfig::new(blocks, 256); // the largest grid launch_cooperative accepts
    /// # Ok(()) }
    /// ```
    pub fn max_cooperative_grid(&self, block: u32, dynamic_shared: u32) -> Result<u32> {
        let (per, sms) = residency(self, block, dynamic_shared as usize)?;
        per.checked_mul(sms).ok_or_else(|| {
            Error::InvalidLaunch(format!(
                "cooperative grid of `{}`: {per} blocks per multiprocessor x {sms} multiprocessors \
                 passes u32::MAX",
                self.name()
            ))
        })
    }

    /// Queue this kernel on `stream` as a cooperative launch: every block of the grid is resident at
    /// once, so the kernel may synchronize the whole grid (`cooperative_groups::this_grid().sync()`).
    ///
    /// Checked as [`launch`](Function::launch) is (arguments against the signature, devices, the
    /// configuration against the device's limits), and ordered by the memory model exactly as it is;
    /// then, before anything is sent, the device must support cooperative launches and the grid must be
    /// co-resident: at most [`max_cooperative_grid`](Function::max_cooperative_grid) blocks for this
    /// block size and dynamic shared memory. A grid past that would hang at its first grid barrier.
    ///
    /// # Errors
    ///
    /// Nothing is sent when the launch is refused: [`Error::NotSupported`] naming
    /// `hipModuleLaunchCooperativeKernel` where the HIP headers lack it (5.2) or the device's
    /// `hipDeviceAttributeCooperativeLaunch` is 0; [`Error::InvalidLaunch`] for a grid that cannot be
    /// co-resident (giving the grid's blocks, the blocks per multiprocessor, the multiprocessor count and
    /// their product) and for what [`launch`](Function::launch) refuses; [`Error::ArgumentMismatch`],
    /// [`Error::DeviceMismatch`], [`Error::TooManyArguments`] as there; what HIP returns for the
    /// attribute and occupancy queries and for the launch.
    ///
    /// # Safety
    ///
    /// As [`launch`](Function::launch). Also: every block of the kernel reaches each grid barrier (a block
    /// returning early while others wait hangs the device, as in CUDA and HIP).
    ///
    /// ```no_run
    /// use hip::prelude::*;
    ///
    /// # fn f(device: &Device, module: &Module) -> hip::Result<()> {
    /// // extern "C" __global__ void sum_all(unsigned* x, unsigned* total): every block adds its
    /// // element, the grid syncs, then block 0 reads what all the others wrote.
    /// let kernel = module.function("sum_all")?;
    /// let stream = Stream::new(device)?;
    /// let blocks = kernel.max_cooperative_grid(64, 0)?;
    /// let mut x = DeviceBuffer::<u32>::zeroed(device, blocks as usize)?;
    /// let mut total = DeviceBuffer::<u32>::zeroed(device, 1)?;
    /// let mut args = LaunchArgs::new();
    /// args.arg_mut(&mut x).arg_mut(&mut total);
    /// // SAFETY: (x, total) as `sum_all` takes them; it writes only those, and every block reaches
    /// // the grid barrier.
    /// unsafe { kernel.launch_cooperative(&stream, &LaunchConfig::new(blocks, 64), &mut args)? };
    /// # Ok(()) }
    /// ```
    pub unsafe fn launch_cooperative(
        &self,
        stream: &Stream,
        config: &LaunchConfig,
        args: &mut LaunchArgs<'_>,
    ) -> Result<()> {
        device_supported(self.module().device())?;
        // SAFETY: the caller's contract above, which is `launch`'s and the barrier's; `launch_via`
        // checks co-residency before sending.
        unsafe { self.launch_via(stream, config, args, ThreadIndex::Bits32, true) }
    }

    /// The co-residency check of a cooperative launch of this kernel with `config`.
    pub(super) fn check_cooperative_grid(&self, config: &LaunchConfig) -> Result<()> {
        let threads = u32::try_from(config.block.volume()).unwrap_or(u32::MAX);
        let (per, sms) = residency(self, threads, config.shared_mem_bytes as usize)?;
        check_co_resident(self.name(), config.grid, per, sms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_co_resident_grid_passes_and_one_block_more_is_refused_with_the_numbers() {
        assert!(check_co_resident("k", 264.into(), 2, 132).is_ok());
        assert!(check_co_resident("k", (12, 11, 2).into(), 2, 132).is_ok());
        let e = check_co_resident("grid_sync", 265.into(), 2, 132).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, Error::InvalidLaunch(_)), "{e:?}");
        for part in [
            "`grid_sync`",
            "265 blocks",
            "2 active blocks per multiprocessor",
            "132 multiprocessors",
            "264 blocks at most",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
    }

    #[test]
    fn no_occupancy_means_no_grid() {
        // A block size or shared memory no multiprocessor can hold: occupancy 0, every grid refused.
        let e = check_co_resident("k", 1.into(), 0, 104).unwrap_err();
        assert!(e.to_string().contains("= 0 blocks at most"), "{e}");
    }

    #[test]
    fn grids_past_u32_are_counted_exactly() {
        let g = Dim3 {
            x: u32::MAX,
            y: u32::MAX,
            z: 2,
        };
        let e = check_co_resident("k", g, u32::MAX, u32::MAX).unwrap_err();
        assert!(e.to_string().contains(&g.volume().to_string()), "{e}");
    }

    #[test]
    fn not_supported_names_the_call_and_says_why() {
        for e in [supported(0).unwrap_err()]
            .into_iter()
            .chain(supported(1).err())
        {
            match &e {
                Error::NotSupported { what, reason } => {
                    assert_eq!(*what, CALL);
                    assert!(
                        reason.contains("hipDeviceAttributeCooperativeLaunch")
                            || reason.contains("5.2")
                    );
                }
                other => panic!("{other:?}"),
            }
        }
        let e = supported(0).unwrap_err();
        let why = if HAS_COOPERATIVE_LAUNCH {
            "hipDeviceAttributeCooperativeLaunch is 0"
        } else {
            "5.2"
        };
        assert!(e.to_string().contains(why), "{e}");
    }
}
