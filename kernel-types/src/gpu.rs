//! Work-item queries and the block barrier, for both GPU targets, under CUDA/HIP names, with the global
//! index computed in 64 bits from every launch dimension.
//!
//! A `u32` global index (`blockIdx.x * blockDim.x + threadIdx.x` in `unsigned int`) wraps past 2^32
//! threads along an axis, which an NVIDIA grid reaches (2^31 - 1 blocks of 1024 threads): two threads
//! would then compute the same index and write one element. Every index here is a `u64`.
//!
//! The only barrier a `#[kernel]` body reaches is [`Shared::sync`](crate::device::Shared::sync);
//! [`sync_threads`] is `unsafe` (see there why).
//!
//! On the host (any target that is not `amdgpu` or `nvptx64`) these functions exist only so that a kernel
//! body type-checks there (the `#[kernel]` macro compiles it on both sides); calling one on the host
//! panics.

/// One work-item query per axis: the GPU register or dispatch-packet field, or a panic on the host.
macro_rules! query {
    ($(#[$doc:meta])* $name:ident, amdgpu: $amd:expr, nvptx: $nv:expr) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() -> u32 {
            #[cfg(target_arch = "amdgpu")]
            return $amd;
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: reads a special register, defined in every thread of a kernel.
            return unsafe { $nv };
            #[cfg(not(any(target_arch = "amdgpu", target_arch = "nvptx64")))]
            panic!(concat!(stringify!($name), " is a GPU work-item query: it has no value on the host"))
        }
    };
}

/// Field `index` (in `u16`s) of the HSA kernel dispatch packet (`hsa_kernel_dispatch_packet_t`): the
/// work-group sizes are `u16` at 4, 6, 8 bytes; grid sizes (work-items, not groups) `u32` at 12, 16, 20.
#[cfg(target_arch = "amdgpu")]
#[inline(always)]
fn packet() -> *const u16 {
    core::intrinsics::gpu::amdgpu_dispatch_ptr() as *const u16
}

#[cfg(target_arch = "amdgpu")]
#[inline(always)]
fn packet_u16(index: usize) -> u32 {
    // SAFETY: a gpu-kernel on amdgpu always runs from a dispatch packet, valid for the whole kernel; the
    // indices used (2, 3, 4) are its work-group size fields.
    unsafe { u32::from(*packet().add(index)) }
}

#[cfg(target_arch = "amdgpu")]
#[inline(always)]
fn packet_u32(index: usize) -> u32 {
    // SAFETY: as above; the indices used (3, 4, 5, in u32s) are its grid size fields, 4-byte aligned.
    unsafe { *(packet() as *const u32).add(index) }
}

query!(
    /// Index of this thread in its block along x (`threadIdx.x`).
    thread_idx_x, amdgpu: core::arch::amdgpu::workitem_id_x(), nvptx: core::arch::nvptx::_thread_idx_x());
query!(
    /// Index of this thread in its block along y (`threadIdx.y`).
    thread_idx_y, amdgpu: core::arch::amdgpu::workitem_id_y(), nvptx: core::arch::nvptx::_thread_idx_y());
query!(
    /// Index of this thread in its block along z (`threadIdx.z`).
    thread_idx_z, amdgpu: core::arch::amdgpu::workitem_id_z(), nvptx: core::arch::nvptx::_thread_idx_z());
query!(
    /// Index of this block in the grid along x (`blockIdx.x`).
    block_idx_x, amdgpu: core::arch::amdgpu::workgroup_id_x(), nvptx: core::arch::nvptx::_block_idx_x());
query!(
    /// Index of this block in the grid along y (`blockIdx.y`).
    block_idx_y, amdgpu: core::arch::amdgpu::workgroup_id_y(), nvptx: core::arch::nvptx::_block_idx_y());
query!(
    /// Index of this block in the grid along z (`blockIdx.z`).
    block_idx_z, amdgpu: core::arch::amdgpu::workgroup_id_z(), nvptx: core::arch::nvptx::_block_idx_z());
query!(
    /// Threads per block along x (`blockDim.x`; on AMD read from the dispatch packet, as HIP does).
    block_dim_x, amdgpu: packet_u16(2), nvptx: core::arch::nvptx::_block_dim_x());
query!(
    /// Threads per block along y (`blockDim.y`).
    block_dim_y, amdgpu: packet_u16(3), nvptx: core::arch::nvptx::_block_dim_y());
query!(
    /// Threads per block along z (`blockDim.z`).
    block_dim_z, amdgpu: packet_u16(4), nvptx: core::arch::nvptx::_block_dim_z());

/// Threads of the whole grid along x (`gridDim.x * blockDim.x`), in 64 bits.
#[inline(always)]
pub fn grid_threads_x() -> u64 {
    #[cfg(target_arch = "amdgpu")]
    return u64::from(packet_u32(3));
    #[cfg(not(target_arch = "amdgpu"))]
    return u64::from(grid_dim(0)) * u64::from(block_dim_x());
}

/// Threads of the whole grid along y, in 64 bits.
#[inline(always)]
pub fn grid_threads_y() -> u64 {
    #[cfg(target_arch = "amdgpu")]
    return u64::from(packet_u32(4));
    #[cfg(not(target_arch = "amdgpu"))]
    return u64::from(grid_dim(1)) * u64::from(block_dim_y());
}

/// Threads of the whole grid along z, in 64 bits.
#[inline(always)]
pub fn grid_threads_z() -> u64 {
    #[cfg(target_arch = "amdgpu")]
    return u64::from(packet_u32(5));
    #[cfg(not(target_arch = "amdgpu"))]
    return u64::from(grid_dim(2)) * u64::from(block_dim_z());
}

/// Blocks in the grid along `axis` (`gridDim`), NVIDIA (and the host's panicking stand-in).
#[cfg(not(target_arch = "amdgpu"))]
#[inline(always)]
fn grid_dim(axis: u8) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: reads a special register.
    return unsafe {
        match axis {
            0 => core::arch::nvptx::_grid_dim_x(),
            1 => core::arch::nvptx::_grid_dim_y(),
            _ => core::arch::nvptx::_grid_dim_z(),
        }
    };
    #[cfg(not(target_arch = "nvptx64"))]
    panic!("grid_dim({axis}) is a GPU work-item query: it has no value on the host")
}

/// `blockIdx.x * blockDim.x + threadIdx.x`, in 64 bits: never wraps.
#[inline(always)]
pub fn global_id_x() -> u64 {
    u64::from(block_idx_x()) * u64::from(block_dim_x()) + u64::from(thread_idx_x())
}

/// `blockIdx.y * blockDim.y + threadIdx.y`, in 64 bits.
#[inline(always)]
pub fn global_id_y() -> u64 {
    u64::from(block_idx_y()) * u64::from(block_dim_y()) + u64::from(thread_idx_y())
}

/// `blockIdx.z * blockDim.z + threadIdx.z`, in 64 bits.
#[inline(always)]
pub fn global_id_z() -> u64 {
    u64::from(block_idx_z()) * u64::from(block_dim_z()) + u64::from(thread_idx_z())
}

/// This thread's index in the whole grid, x fastest: `(z * ny + y) * nx + x` over the grid's threads
/// per axis, in 64 bits. Distinct for every thread of a launch whose thread count fits in a `u64`
/// (the host's typed launcher checks that).
#[inline(always)]
pub fn global_linear_id() -> u64 {
    let (nx, ny) = (grid_threads_x(), grid_threads_y());
    (global_id_z() * ny + global_id_y()) * nx + global_id_x()
}

/// Threads in the whole grid (`nx * ny * nz`), in 64 bits: the stride of a grid-stride loop over
/// [`global_linear_id`].
#[inline(always)]
pub fn grid_threads() -> u64 {
    grid_threads_x() * grid_threads_y() * grid_threads_z()
}

/// The indices `global_linear_id(), + grid_threads(), + 2 * grid_threads(), ...` below `len`: each
/// thread's share of a grid-stride loop, disjoint from every other thread's. Stops rather than wrap.
#[inline(always)]
pub fn grid_stride(len: u64) -> GridStride {
    GridStride {
        next: global_linear_id(),
        stride: grid_threads(),
        len,
    }
}

/// Iterator of [`grid_stride`].
#[derive(Clone, Debug)]
pub struct GridStride {
    next: u64,
    stride: u64,
    len: u64,
}

impl GridStride {
    /// The indices from `first`, `stride` apart, below `len` (what [`grid_stride`] gives a thread).
    pub fn new(first: u64, stride: u64, len: u64) -> GridStride {
        GridStride {
            next: first,
            stride: stride.max(1),
            len,
        }
    }
}

impl Iterator for GridStride {
    type Item = u64;
    #[inline(always)]
    fn next(&mut self) -> Option<u64> {
        let i = self.next;
        if i >= self.len {
            return None;
        }
        // Past u64::MAX the sequence ends (the next index would wrap onto another thread's).
        self.next = i.saturating_add(self.stride);
        Some(i)
    }
}

/// Blocks in the grid along x (`gridDim.x`; on AMD the dispatch packet's work-items over the block's).
#[inline(always)]
pub fn grid_blocks_x() -> u64 {
    grid_threads_x() / u64::from(block_dim_x())
}

/// Blocks in the grid along y (`gridDim.y`).
#[inline(always)]
pub fn grid_blocks_y() -> u64 {
    grid_threads_y() / u64::from(block_dim_y())
}

/// This block's index in the grid, x fastest: `(bz * gy + by) * gx + bx`, in 64 bits. Distinct for
/// every block of a launch.
#[inline(always)]
pub fn block_linear_id() -> u64 {
    (u64::from(block_idx_z()) * grid_blocks_y() + u64::from(block_idx_y())) * grid_blocks_x()
        + u64::from(block_idx_x())
}

/// This thread's index in its block, x fastest: `(tz * by + ty) * bx + tx` (the order in which the
/// hardware packs threads into wavefronts and warps).
#[inline(always)]
pub fn thread_linear_id_in_block() -> u32 {
    (thread_idx_z() * block_dim_y() + thread_idx_y()) * block_dim_x() + thread_idx_x()
}

/// Threads in a block (`blockDim.x * blockDim.y * blockDim.z`, at most 1024 on every GPU HIP runs on).
#[inline(always)]
pub fn block_threads() -> u32 {
    block_dim_x() * block_dim_y() * block_dim_z()
}

/// Wait until every thread of the block arrives here; makes their shared-memory writes visible
/// (`__syncthreads()`).
///
/// # Safety
/// Every thread of the block reaches it (not in divergent code), and the kernel holds no
/// [`Shared`](crate::device::Shared) handle: its phases count this block's barriers, and a barrier
/// outside them would let one thread write a slot while another reads it. A `#[kernel]` body cannot call
/// this (it is compiled under `forbid(unsafe_code)`); it synchronizes through `Shared::sync`.
#[inline(always)]
pub unsafe fn sync_threads() {
    #[cfg(target_arch = "amdgpu")]
    {
        // As HIP's __syncthreads: release fence, barrier, acquire fence, all at work-group scope. Rust has
        // no work-group scope, so the fences are device-wide (stronger, still correct).
        core::sync::atomic::fence(core::sync::atomic::Ordering::Release);
        core::arch::amdgpu::s_barrier();
        core::sync::atomic::fence(core::sync::atomic::Ordering::Acquire);
    }
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: bar.sync 0, reached by every thread of the block (the caller's rule above).
    unsafe {
        core::arch::nvptx::_syncthreads()
    };
    #[cfg(not(any(target_arch = "amdgpu", target_arch = "nvptx64")))]
    panic!("sync_threads is a GPU barrier: it has no meaning on the host")
}

#[cfg(target_arch = "nvptx64")]
extern "C" {
    /// `barrier.sync 0` (not `.aligned`): each thread arrives on its own, so threads of one warp may reach
    /// it from different places (PTX ISA, `barrier`: sm_70 and later).
    #[link_name = "llvm.nvvm.barrier.cta.sync.all"]
    fn barrier_cta_sync_all(id: u32);
}

/// The barrier of [`Shared::sync`](crate::device::Shared::sync), safe in any control flow: every thread
/// of the block has, at any time, passed the same number of these barriers as every other thread that
/// can still touch shared memory, or the kernel stops.
///
/// - AMD: `s_barrier` is executed per wavefront, and the hardware pairs each wavefront's n-th barrier
///   with every other's (waves that ended are not waited for). A wavefront some of whose threads are
///   elsewhere (divergent code, or returned early) would count one barrier for threads that did not reach
///   it: before the barrier, every live thread of the wavefront must be here (`ballot(true)` counts them
///   all), or the kernel stops (`abort`, as a panic does).
/// - NVIDIA: `barrier.sync 0` without `.aligned` (sm_70 and later, the PTX this repository builds): a
///   thread waits for the non-exited threads of its warp to arrive wherever they are, then marks the
///   warp's arrival; exiting threads release a barrier they hold up (PTX ISA, `barrier` and `exit`).
///   `bar.sync` (aligned) would be undefined when threads reach different instructions.
#[inline(always)]
pub(crate) fn shared_barrier() {
    #[cfg(target_arch = "amdgpu")]
    {
        let wave = core::arch::amdgpu::wavefrontsize();
        let here = core::arch::amdgpu::ballot(true).count_ones();
        let me = thread_linear_id_in_block();
        // The live threads of this wavefront: the block's threads from its first lane, at most a wave.
        let first = me / wave * wave;
        let live = (block_threads() - first).min(wave);
        if here != live {
            core::intrinsics::abort();
        }
        core::sync::atomic::fence(core::sync::atomic::Ordering::Release);
        core::arch::amdgpu::s_barrier();
        core::sync::atomic::fence(core::sync::atomic::Ordering::Acquire);
    }
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the non-aligned barrier is defined for divergent threads on sm_70 and later.
    unsafe {
        barrier_cta_sync_all(0)
    };
    #[cfg(not(any(target_arch = "amdgpu", target_arch = "nvptx64")))]
    panic!("Shared::sync is a GPU barrier: it has no meaning on the host")
}

#[cfg(test)]
mod tests {
    use super::GridStride;

    #[test]
    fn grid_stride_gives_disjoint_indices_covering_the_range() {
        // 3 threads, 10 elements: 0,3,6,9 / 1,4,7 / 2,5,8.
        let mut seen = [0u8; 10];
        for t in 0..3 {
            for i in GridStride::new(t, 3, 10) {
                seen[i as usize] += 1;
            }
        }
        assert_eq!(seen, [1; 10]);
    }

    #[test]
    fn grid_stride_stops_instead_of_wrapping() {
        let v: [u64; 2] = [u64::MAX - 3, u64::MAX - 1];
        let got: Option<u64> = GridStride::new(v[0], u64::MAX - 1, u64::MAX).nth(1);
        // u64::MAX - 3 + (u64::MAX - 1) wraps: the sequence ends after the first index.
        assert_eq!(got, None);
        assert_eq!(GridStride::new(v[1], 1, u64::MAX).count(), 1);
    }
}
