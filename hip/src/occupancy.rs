//! Occupancy: how many blocks of a function fit on one multiprocessor, the block size that fills the
//! device best, and [`LaunchConfig::for_occupancy`] built from it.

use crate::error::{Error, Result};
use crate::launch::{blocks_for, ElementCount, LaunchConfig};
use crate::module::Function;
use crate::result;
use hip_sys as sys;

/// Flags of an occupancy query ([`Function::max_active_blocks_per_multiprocessor_with_flags`]):
/// `hipOccupancyDefault` and `hipOccupancyDisableCachingOverride` (CUDA's values; HIP 5.2's headers do
/// not name the second).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OccupancyFlags(u32);

impl OccupancyFlags {
    /// The default query (`hipOccupancyDefault`).
    pub const DEFAULT: Self = Self(0);
    /// The occupancy without the runtime's override of the global-load caching preference
    /// (`hipOccupancyDisableCachingOverride`: CUDA's `cudaOccupancyDisableCachingOverride`, which matters
    /// where the default would cache global loads in L1 at the cost of occupancy).
    pub const DISABLE_CACHING_OVERRIDE: Self = Self(1);

    /// The raw flags.
    ///
    /// ```
    /// use hip::OccupancyFlags;
    /// assert_eq!(OccupancyFlags::DISABLE_CACHING_OVERRIDE.bits(), 1);
    /// ```
    pub fn bits(self) -> u32 {
        self.0
    }
}

impl Function {
    /// Blocks of `block_size` threads, each with `dynamic_shared_bytes` of dynamic shared memory, that can
    /// be resident on one multiprocessor at once
    /// (`hipModuleOccupancyMaxActiveBlocksPerMultiprocessor`). A block size of 0 is
    /// [`Error::InvalidArgument`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a block size of 0 or above `i32::MAX`; otherwise [`Error::Hip`] with
    /// what HIP returns for making the device current and for the occupancy call.
    ///
    /// ```no_run
    /// # fn f(kernel: &hip::Function, device: &hip::Device) -> hip::Result<()> {
    /// let blocks = kernel.max_active_blocks_per_multiprocessor(256, 0)?;
    /// let per_sm = device.attribute(hip::sys::hipDeviceAttributeMaxThreadsPerMultiProcessor)?;
    /// println!("occupancy at 256 threads: {:.0}%", 100.0 * (blocks * 256) as f64 / per_sm as f64);
    /// # Ok(()) }
    /// ```
    pub fn max_active_blocks_per_multiprocessor(
        &self,
        block_size: u32,
        dynamic_shared_bytes: usize,
    ) -> Result<u32> {
        let block = checked_block_size(block_size)?;
        self.module().device().bind()?;
        // SAFETY: `self.raw()` is live (`self` holds its module), and the module's device is current, as
        // the call asks.
        let n = unsafe {
            result::occupancy::max_active_blocks_per_multiprocessor(
                self.raw(),
                block,
                dynamic_shared_bytes,
            )?
        };
        Ok(n.max(0) as u32)
    }

    /// As [`max_active_blocks_per_multiprocessor`](Self::max_active_blocks_per_multiprocessor), with
    /// `flags` (`hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags`).
    ///
    /// # Errors
    ///
    /// As [`max_active_blocks_per_multiprocessor`](Self::max_active_blocks_per_multiprocessor), naming
    /// the call with flags.
    ///
    /// ```no_run
    /// use hip::OccupancyFlags;
    /// # fn f(kernel: &hip::Function) -> hip::Result<()> {
    /// let plain = kernel.max_active_blocks_per_multiprocessor_with_flags(256, 0, OccupancyFlags::DEFAULT)?;
    /// let uncached = kernel.max_active_blocks_per_multiprocessor_with_flags(
    ///     256,
    ///     0,
    ///     OccupancyFlags::DISABLE_CACHING_OVERRIDE,
    /// )?;
    /// println!("{plain} blocks, {uncached} without the caching override");
    /// # Ok(()) }
    /// ```
    pub fn max_active_blocks_per_multiprocessor_with_flags(
        &self,
        block_size: u32,
        dynamic_shared_bytes: usize,
        flags: OccupancyFlags,
    ) -> Result<u32> {
        let block = checked_block_size(block_size)?;
        self.module().device().bind()?;
        // SAFETY: `self.raw()` is live (`self` holds its module), and the module's device is current, as
        // the call asks.
        let n = unsafe {
            result::occupancy::max_active_blocks_per_multiprocessor_with_flags(
                self.raw(),
                block,
                dynamic_shared_bytes,
                flags.0,
            )?
        };
        Ok(n.max(0) as u32)
    }

    /// The block size that reaches the highest occupancy with `dynamic_shared_bytes` of dynamic shared
    /// memory per block, and the smallest grid that fills the device with it
    /// (`hipModuleOccupancyMaxPotentialBlockSize`). `block_size_limit` 0 means no limit.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a `block_size_limit` above `i32::MAX`; otherwise [`Error::Hip`] with
    /// what HIP returns for making the device current and for the occupancy call.
    ///
    /// ```no_run
    /// # fn f(kernel: &hip::Function) -> hip::Result<()> {
    /// let s = kernel.suggested_block_size(0, 0)?;
    /// let config = s.config_for(1u32 << 20)?; // 2^20 elements at the suggested block size
    /// println!("{} threads per block, {} blocks fill the device", s.block_size, s.min_grid_size);
    /// # Ok(()) }
    /// ```
    pub fn suggested_block_size(
        &self,
        dynamic_shared_bytes: usize,
        block_size_limit: u32,
    ) -> Result<BlockSizeSuggestion> {
        let limit = i32::try_from(block_size_limit).map_err(|_| Error::InvalidArgument {
            what: "block size limit",
            value: block_size_limit.to_string(),
            reason: format!("at most {}", i32::MAX),
        })?;
        self.module().device().bind()?;
        // SAFETY: as in max_active_blocks_per_multiprocessor.
        let (grid, block) = unsafe {
            result::occupancy::max_potential_block_size(self.raw(), dynamic_shared_bytes, limit)?
        };
        Ok(BlockSizeSuggestion {
            block_size: block.max(0) as u32,
            min_grid_size: grid.max(0) as u32,
            dynamic_shared_bytes,
        })
    }

    /// [`suggested_block_size`](Self::suggested_block_size) for a kernel whose dynamic shared memory grows
    /// with its block size: `shared_bytes_for(block_size)` says how much a block of that size needs (CUDA's
    /// `cudaOccupancyMaxPotentialBlockSizeVariableSMem`). Every multiple of the warp size up to the
    /// kernel's and the device's thread limit (and `block_size_limit`, 0 for none) is tried, largest first,
    /// and the one with the most resident threads per multiprocessor wins. A block size whose shared
    /// memory the device cannot give is skipped; none left is [`Error::InvalidArgument`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when no block size fits; otherwise [`Error::Hip`] with what HIP returns
    /// for the device attributes and the occupancy calls.
    ///
    /// ```no_run
    /// # fn f(kernel: &hip::Function) -> hip::Result<()> {
    /// // One f32 of shared memory per thread.
    /// let s = kernel.suggested_block_size_with(|block| block as usize * 4, 0)?;
    /// let config = s.config_for(1u32 << 20)?; // its shared_mem_bytes is the suggestion's
    /// # Ok(()) }
    /// ```
    pub fn suggested_block_size_with(
        &self,
        shared_bytes_for: impl Fn(u32) -> usize,
        block_size_limit: u32,
    ) -> Result<BlockSizeSuggestion> {
        let device = self.module().device();
        let attr = |a| -> Result<u32> { Ok(device.attribute(a)?.max(0) as u32) };
        let warp = attr(sys::hipDeviceAttributeWarpSize)?.max(1);
        let per_sm = attr(sys::hipDeviceAttributeMaxThreadsPerMultiProcessor)?;
        let sms = attr(sys::hipDeviceAttributeMultiprocessorCount)?;
        let mut max_block = device.limits().max_threads_per_block;
        if self.max_threads_per_block() > 0 {
            max_block = max_block.min(self.max_threads_per_block());
        }
        if block_size_limit > 0 {
            max_block = max_block.min(block_size_limit);
        }
        let optin = device.limits().max_shared_mem_optin;
        let static_shared = self.static_shared_bytes() as usize;
        let best = best_block_size(max_block, warp, per_sm, |block| {
            let bytes = shared_bytes_for(block);
            if bytes.saturating_add(static_shared) > optin {
                return Ok(None);
            }
            Ok(Some((
                self.max_active_blocks_per_multiprocessor(block, bytes)?,
                bytes,
            )))
        })?;
        match best {
            Some((block_size, active, dynamic_shared_bytes)) => Ok(BlockSizeSuggestion {
                block_size,
                min_grid_size: active.saturating_mul(sms),
                dynamic_shared_bytes,
            }),
            None => Err(Error::InvalidArgument {
                what: "shared memory per block size",
                value: format!("kernel `{}`, block sizes up to {max_block}", self.name()),
                reason: format!(
                    "no block size fits: at each one the kernel's shared memory is more than the {optin} \
                     bytes per block the device has, or no block of it fits on a multiprocessor"
                ),
            }),
        }
    }
}

/// What the occupancy calculator suggests for a kernel ([`Function::suggested_block_size`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSizeSuggestion {
    /// Threads per block that give the most resident threads per multiprocessor.
    pub block_size: u32,
    /// The smallest grid that fills every multiprocessor at that block size.
    pub min_grid_size: u32,
    /// The dynamic shared memory per block the suggestion was made for (what a launch should ask for).
    pub dynamic_shared_bytes: usize,
}

impl BlockSizeSuggestion {
    /// A 1-D launch covering `n` elements with this block size and shared memory (at least one block). A
    /// shared size above `u32::MAX` cannot be launched: [`Error::InvalidArgument`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a block size of 0 (a suggestion made with none) or dynamic shared
    /// memory above `u32::MAX` bytes.
    ///
    /// ```no_run
    /// # fn f(kernel: &hip::Function, n: usize) -> hip::Result<()> {
    /// let config = kernel.suggested_block_size(0, 0)?.config_for(n)?;
    /// # Ok(()) }
    /// ```
    pub fn config_for(&self, n: impl ElementCount) -> Result<LaunchConfig> {
        let mut c = config_for(n, self.block_size)?;
        c.shared_mem_bytes =
            u32::try_from(self.dynamic_shared_bytes).map_err(|_| Error::InvalidArgument {
                what: "dynamic shared memory",
                value: format!("{} bytes", self.dynamic_shared_bytes),
                reason: format!("a launch takes at most {} bytes", u32::MAX),
            })?;
        Ok(c)
    }
}

/// The block size (a multiple of `warp`, largest first, up to `max_block`) whose `fit(block)` =
/// `Some((resident blocks per multiprocessor, shared bytes))` holds the most threads, with its resident
/// blocks and shared bytes; stops early at `per_sm` threads (a full multiprocessor). `None` if no size
/// fits (every `fit` was `None` or 0 blocks).
fn best_block_size(
    max_block: u32,
    warp: u32,
    per_sm: u32,
    mut fit: impl FnMut(u32) -> Result<Option<(u32, usize)>>,
) -> Result<Option<(u32, u32, usize)>> {
    let warp = warp.max(1);
    let mut best: Option<(u32, u32, usize)> = None;
    let mut best_threads = 0u64;
    let mut block = max_block - max_block % warp;
    while block > 0 {
        if let Some((active, bytes)) = fit(block)? {
            let threads = u64::from(active) * u64::from(block);
            if threads > best_threads {
                best_threads = threads;
                best = Some((block, active, bytes));
                if per_sm > 0 && threads >= u64::from(per_sm) {
                    break;
                }
            }
        }
        block -= warp;
    }
    Ok(best)
}

fn checked_block_size(block_size: u32) -> Result<i32> {
    match i32::try_from(block_size) {
        Ok(b) if b > 0 => Ok(b),
        _ => Err(Error::InvalidArgument {
            what: "block size",
            value: block_size.to_string(),
            reason: format!("must be 1 to {}", i32::MAX),
        }),
    }
}

/// A 1-D configuration covering `n` elements with `block` threads per block (at least one block).
/// `block` 0 (a runtime answer that should not happen) is [`Error::InvalidArgument`].
pub(crate) fn config_for(n: impl ElementCount, block: u32) -> Result<LaunchConfig> {
    if block == 0 {
        return Err(Error::InvalidArgument {
            what: "suggested block size",
            value: "0".into(),
            reason: "the runtime suggested no block size for this function".into(),
        });
    }
    Ok(LaunchConfig::new(blocks_for(n.to_u64(), block), block))
}

impl LaunchConfig {
    /// A 1-D launch covering `n` elements with the block size that gives `function` the highest
    /// occupancy on its device ([`Function::suggested_block_size`], no dynamic shared memory, no limit).
    /// The grid covers `n` (at least one block): the kernel still checks its index against `n`.
    ///
    /// # Errors
    ///
    /// As [`Function::suggested_block_size`]: [`Error::Hip`] with what HIP returns; and
    /// [`Error::InvalidArgument`] if the runtime suggests no block size.
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # fn f(stream: &Stream, saxpy: &Function, y: &mut DeviceBuffer<f32>) -> hip::Result<()> {
    /// let n = y.len() as u32;
    /// let config = LaunchConfig::for_occupancy(saxpy, n)?; // instead of for_num_elems(n)
    /// # Ok(()) }
    /// ```
    pub fn for_occupancy(function: &Function, n: impl ElementCount) -> Result<LaunchConfig> {
        let s = function.suggested_block_size(0, 0)?;
        config_for(n, s.block_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::Dim3;

    #[test]
    fn occupancy_flags_are_the_runtimes_values() {
        assert_eq!(OccupancyFlags::DEFAULT.bits(), sys::hipOccupancyDefault);
        assert_eq!(OccupancyFlags::DISABLE_CACHING_OVERRIDE.bits(), 1);
    }

    #[test]
    fn grid_covers_n_with_the_suggested_block() {
        let c = config_for(1000, 256).unwrap();
        assert_eq!(c.block, Dim3 { x: 256, y: 1, z: 1 });
        assert_eq!(c.grid.x, 4);
        assert_eq!(config_for(1024, 256).unwrap().grid.x, 4);
        assert_eq!(config_for(1025, 256).unwrap().grid.x, 5);
        assert_eq!(config_for(0, 64).unwrap().grid.x, 1);
        assert_eq!(config_for(u32::MAX, 1024).unwrap().grid.x, 4_194_304);
        assert_eq!(config_for(u32::MAX, 1).unwrap().grid.x, u32::MAX);
        assert_eq!(c.shared_mem_bytes, 0);
    }

    /// `best_block_size` with `active(block)` resident blocks (no shared memory) at each size, and the
    /// sizes it tried, in order.
    fn search(
        max_block: u32,
        warp: u32,
        per_sm: u32,
        active: impl Fn(u32) -> u32,
    ) -> (Option<(u32, u32, usize)>, Vec<u32>) {
        let mut tried = Vec::new();
        let best = best_block_size(max_block, warp, per_sm, |b| {
            tried.push(b);
            Ok(Some((active(b), 0)))
        })
        .unwrap();
        (best, tried)
    }

    #[test]
    fn the_block_size_holding_the_most_threads_wins_largest_first() {
        // 2048 threads per multiprocessor; shared memory grows with the block: 4 blocks of 512 fit,
        // 1 block of 1024, 8 of 256 (all 2048 threads: the first full one found, from the top, is 512).
        let fit = |block: u32| -> Result<Option<(u32, usize)>> {
            Ok(Some((
                match block {
                    1024 => 1,
                    512 => 4,
                    256 => 8,
                    _ => 2048 / block / 2,
                },
                block as usize * 16,
            )))
        };
        assert_eq!(
            best_block_size(1024, 32, 2048, fit).unwrap(),
            Some((512, 4, 8192))
        );
        // A size that does not fit is skipped; none fitting is None; errors pass through.
        let only_small = |block: u32| {
            Ok(if block > 64 {
                None
            } else {
                Some((block / 32, 0))
            })
        };
        assert_eq!(
            best_block_size(1024, 32, 2048, only_small).unwrap(),
            Some((64, 2, 0))
        );
        assert_eq!(best_block_size(1024, 32, 2048, |_| Ok(None)).unwrap(), None);
        assert_eq!(
            best_block_size(1024, 32, 2048, |_| Ok(Some((0, 0)))).unwrap(),
            None
        );
        assert!(
            best_block_size(1024, 32, 2048, |_| Err(Error::InvalidLaunch("x".into()))).is_err()
        );
        // Sizes are multiples of the warp below the limit; a limit below one warp tries nothing.
        let mut tried = Vec::new();
        best_block_size(100, 32, 0, |b| {
            tried.push(b);
            Ok(None)
        })
        .unwrap();
        assert_eq!(tried, vec![96, 64, 32]);
        assert_eq!(best_block_size(31, 32, 0, fit).unwrap(), None);
        // A full multiprocessor stops the search (nothing smaller is tried); without a known
        // per-multiprocessor limit (0) every size is tried.
        assert_eq!(
            search(1024, 256, 2048, |b| if b == 512 { 4 } else { 9 }),
            (Some((1024, 9, 0)), vec![1024])
        );
        assert_eq!(
            search(128, 64, 0, |b| if b == 128 { 1 } else { 4 }),
            (Some((64, 4, 0)), vec![128, 64])
        );
        assert_eq!(
            search(1024, 512, 2048, |b| if b == 1024 { 1 } else { 4 }),
            (Some((512, 4, 0)), vec![1024, 512])
        );
        // Ties keep the larger block (found first).
        assert_eq!(search(128, 64, 0, |b| 256 / b).0, Some((128, 2, 0)));
    }

    #[test]
    fn a_suggestion_becomes_a_launch_with_its_shared_memory() {
        let s = BlockSizeSuggestion {
            block_size: 128,
            min_grid_size: 264,
            dynamic_shared_bytes: 70_000,
        };
        let c = s.config_for(1000usize).unwrap();
        assert_eq!((c.grid.x, c.block.x, c.shared_mem_bytes), (8, 128, 70_000));
        let huge = BlockSizeSuggestion {
            dynamic_shared_bytes: u32::MAX as usize + 1,
            ..s
        };
        assert!(huge.config_for(1u32).is_err());
    }

    #[test]
    fn zero_blocks_are_refused_by_name() {
        let e = config_for(10, 0).unwrap_err().to_string();
        assert!(e.contains("suggested block size"), "{e}");
        let e = checked_block_size(0).unwrap_err().to_string();
        assert!(
            e.contains("block size") && e.contains("must be 1 to"),
            "{e}"
        );
        assert!(checked_block_size(u32::MAX).is_err());
        assert_eq!(checked_block_size(256).unwrap(), 256);
    }
}
