//! Occupancy: how many blocks of a function fit on one multiprocessor, the block size that fills the
//! device best, and [`LaunchConfig::for_occupancy`] built from it.

use crate::error::{Error, Result};
use crate::launch::LaunchConfig;
use crate::module::Function;
use crate::result;

impl Function {
    /// Blocks of `block_size` threads, each with `dynamic_shared_bytes` of dynamic shared memory, that can
    /// be resident on one multiprocessor at once
    /// (`hipModuleOccupancyMaxActiveBlocksPerMultiprocessor`). A block size of 0 is
    /// [`Error::InvalidArgument`].
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

    /// The block size that reaches the highest occupancy, and the smallest grid that fills the device with
    /// it, as `(min_grid_size, block_size)` (`hipModuleOccupancyMaxPotentialBlockSize`).
    /// `block_size_limit` 0 means no limit.
    pub fn suggested_block_size(
        &self,
        dynamic_shared_bytes: usize,
        block_size_limit: u32,
    ) -> Result<(u32, u32)> {
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
        Ok((grid.max(0) as u32, block.max(0) as u32))
    }
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
pub(crate) fn config_for(n: u32, block: u32) -> Result<LaunchConfig> {
    if block == 0 {
        return Err(Error::InvalidArgument {
            what: "suggested block size",
            value: "0".into(),
            reason: "the runtime suggested no block size for this function".into(),
        });
    }
    Ok(LaunchConfig::new(n.div_ceil(block).max(1), block))
}

impl LaunchConfig {
    /// A 1-D launch covering `n` elements with the block size that gives `function` the highest
    /// occupancy on its device ([`Function::suggested_block_size`], no dynamic shared memory, no limit).
    /// The grid covers `n` (at least one block): the kernel still checks its index against `n`.
    pub fn for_occupancy(function: &Function, n: u32) -> Result<LaunchConfig> {
        let (_, block) = function.suggested_block_size(0, 0)?;
        config_for(n, block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::Dim3;

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
