//! Occupancy queries (`hipModuleOccupancy*`): how many blocks of a function fit on one multiprocessor.

use super::check;
use crate::error::Result;
use hip_sys as sys;

/// `hipModuleOccupancyMaxActiveBlocksPerMultiprocessor`: blocks of `block_size` threads (and
/// `dynamic_shared_bytes` of dynamic shared memory each) that can be resident on one multiprocessor at once.
///
/// # Safety
/// `func` is a live function of a loaded module, on the current device.
pub unsafe fn max_active_blocks_per_multiprocessor(
    func: sys::hipFunction_t,
    block_size: i32,
    dynamic_shared_bytes: usize,
) -> Result<i32> {
    let mut blocks = 0;
    // SAFETY: the caller's contract (`# Safety`): `func` is a live function on the current device; `blocks`
    // is a live local HIP writes to.
    let status = unsafe {
        sys::hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(
            &mut blocks,
            func,
            block_size,
            dynamic_shared_bytes,
        )
    };
    check("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", status)?;
    Ok(blocks)
}

/// `hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags`: as
/// [`max_active_blocks_per_multiprocessor`], with `flags` (`hipOccupancyDefault`,
/// `hipOccupancyDisableCachingOverride`).
///
/// # Safety
/// `func` is a live function of a loaded module, on the current device.
pub unsafe fn max_active_blocks_per_multiprocessor_with_flags(
    func: sys::hipFunction_t,
    block_size: i32,
    dynamic_shared_bytes: usize,
    flags: u32,
) -> Result<i32> {
    let mut blocks = 0;
    // SAFETY: as in max_active_blocks_per_multiprocessor; unknown flags are an error code.
    let status = unsafe {
        sys::hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
            &mut blocks,
            func,
            block_size,
            dynamic_shared_bytes,
            flags,
        )
    };
    check(
        "hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
        status,
    )?;
    Ok(blocks)
}

/// `hipModuleOccupancyMaxPotentialBlockSize`: `(min_grid_size, block_size)`, the block size that reaches
/// the highest occupancy and the smallest grid that fills the device with it. `block_size_limit` 0 means
/// no limit.
///
/// # Safety
/// `func` is a live function of a loaded module, on the current device.
pub unsafe fn max_potential_block_size(
    func: sys::hipFunction_t,
    dynamic_shared_bytes: usize,
    block_size_limit: i32,
) -> Result<(i32, i32)> {
    let (mut grid, mut block) = (0, 0);
    // SAFETY: the caller's contract (`# Safety`): `func` is a live function on the current device; `grid`
    // and `block` are live locals HIP writes to.
    check("hipModuleOccupancyMaxPotentialBlockSize", unsafe {
        sys::hipModuleOccupancyMaxPotentialBlockSize(
            &mut grid,
            &mut block,
            func,
            dynamic_shared_bytes,
            block_size_limit,
        )
    })?;
    Ok((grid, block))
}
