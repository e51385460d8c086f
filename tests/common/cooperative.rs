//! The cooperative-groups kernels of tests/gpu_cooperative.rs, also compiled offline by
//! tests/cooperative_absent.rs (a grid barrier needs no -rdc: HIPRTC on AMD, NVRTC 11+ on NVIDIA).

/// `exchange`, `grid_sum`, `slow_fill`, `gather`: see each kernel's comment.
pub const SOURCE: &str = r#"
#ifdef __CUDACC_RTC__
#include <cooperative_groups.h>
#else
#include <hip/hip_cooperative_groups.h>
#endif
namespace cg = cooperative_groups;

// Phase 1: every thread writes its slot. Grid barrier. Phase 2: every thread reads the slot of the same
// thread in the next block (the last block reads block 0's), which another block wrote.
extern "C" __global__ void exchange(unsigned int* slots, unsigned int* out, unsigned int salt) {
    cg::grid_group grid = cg::this_grid();
    unsigned int total = gridDim.x * blockDim.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    slots[i] = i * 2654435761u + salt;
    grid.sync();
    out[i] = slots[(i + blockDim.x) % total];
}

// hip-tests' test_gws: each block sums its elements into partial[blockIdx.x]; after the grid barrier
// block 0 adds the partial sums.
extern "C" __global__ void grid_sum(const unsigned int* x, unsigned int n, unsigned int* partial,
                                    unsigned long long* total) {
    cg::grid_group grid = cg::this_grid();
    __shared__ unsigned int acc;
    if (threadIdx.x == 0) acc = 0;
    __syncthreads();
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&acc, x[i]);
    }
    __syncthreads();
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
    grid.sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned long long s = 0;
        for (unsigned int b = 0; b < gridDim.x; ++b) s += partial[b];
        *total = s;
    }
}

// Spins about `cycles` clock cycles, then writes value + i to x[i]: the slow producer.
extern "C" __global__ void slow_fill(unsigned int* x, unsigned int value, unsigned int n, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = value + i;
}

// Reads what slow_fill wrote, through a grid barrier: y[i] = x[i] + x[next block's i].
extern "C" __global__ void gather(const unsigned int* x, unsigned int* y) {
    cg::grid_group grid = cg::this_grid();
    unsigned int total = gridDim.x * blockDim.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int mine = x[i];
    grid.sync();
    y[i] = mine + x[(i + blockDim.x) % total];
}
"#;
