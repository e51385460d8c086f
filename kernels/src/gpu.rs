//! The few work-item queries and the barrier the kernels use, for both GPU targets, under CUDA/HIP names.

/// Index of this thread in its block (`threadIdx.x`).
#[inline(always)]
pub fn thread_idx_x() -> u32 {
    #[cfg(target_arch = "amdgpu")]
    return core::arch::amdgpu::workitem_id_x();
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: reads a special register.
    return unsafe { core::arch::nvptx::_thread_idx_x() };
}

/// Index of this block in the grid (`blockIdx.x`).
#[inline(always)]
pub fn block_idx_x() -> u32 {
    #[cfg(target_arch = "amdgpu")]
    return core::arch::amdgpu::workgroup_id_x();
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: reads a special register.
    return unsafe { core::arch::nvptx::_block_idx_x() };
}

/// Threads per block in x (`blockDim.x`).
///
/// `core::arch::amdgpu` has no work-group size: it is read from the HSA kernel dispatch packet
/// (`hsa_kernel_dispatch_packet_t::workgroup_size_x`, a `u16` at byte 4), as HIP's own `blockDim` does.
#[inline(always)]
pub fn block_dim_x() -> u32 {
    #[cfg(target_arch = "amdgpu")]
    // SAFETY: a gpu-kernel on amdgpu always runs from a dispatch packet, valid for the whole kernel.
    return unsafe {
        let packet = core::intrinsics::gpu::amdgpu_dispatch_ptr() as *const u16;
        *packet.add(2) as u32
    };
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: reads a special register.
    return unsafe { core::arch::nvptx::_block_dim_x() };
}

/// `blockIdx.x * blockDim.x + threadIdx.x`.
#[inline(always)]
pub fn global_id_x() -> u32 {
    block_idx_x() * block_dim_x() + thread_idx_x()
}

/// Wait until every thread of the block arrives here; makes their shared-memory writes visible
/// (`__syncthreads()`).
#[inline(always)]
pub fn sync_threads() {
    #[cfg(target_arch = "amdgpu")]
    {
        // As HIP's __syncthreads: release fence, barrier, acquire fence, all at work-group scope. Rust has
        // no work-group scope, so the fences are device-wide (stronger, still correct).
        core::sync::atomic::fence(core::sync::atomic::Ordering::Release);
        core::arch::amdgpu::s_barrier();
        core::sync::atomic::fence(core::sync::atomic::Ordering::Acquire);
    }
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: bar.sync 0, reached by every thread of the block (the kernels call it outside divergent code).
    unsafe {
        core::arch::nvptx::_syncthreads()
    };
}
