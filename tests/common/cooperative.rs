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

/// On HIP's NVIDIA platform, the folder holding CUDA's `cooperative_groups.h`, which NVRTC needs: the
/// first of `HIP_RS_CUDA_INCLUDE`, `$CUDA_PATH/include`, `$CUDA_HOME/include`, `$CUDA_ROOT/include`,
/// `/usr/local/cuda/include`, `/usr/include` that holds it (the folders `ProgramBuilder::half_types`
/// searches); `Err` lists them.
pub fn cuda_include() -> Result<std::path::PathBuf, Vec<std::path::PathBuf>> {
    let mut dirs: Vec<std::path::PathBuf> = Vec::new();
    if let Some(v) = std::env::var_os("HIP_RS_CUDA_INCLUDE") {
        dirs.push(v.into());
    }
    for var in ["CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"] {
        if let Some(v) = std::env::var_os(var) {
            dirs.push(std::path::Path::new(&v).join("include"));
        }
    }
    dirs.push("/usr/local/cuda/include".into());
    dirs.push("/usr/include".into());
    match dirs
        .iter()
        .find(|d| d.join("cooperative_groups.h").is_file())
    {
        Some(d) => Ok(d.clone()),
        None => Err(dirs),
    }
}

/// [`SOURCE`] ready to compile for `arch`: on NVIDIA with `-I` of [`cuda_include`] (panics without it).
pub fn builder(arch: &str) -> hip::rtc::ProgramBuilder {
    let builder = hip::rtc::ProgramBuilder::new(SOURCE).arch(arch);
    if hip::PLATFORM != "nvidia" {
        return builder;
    }
    let dir = cuda_include().unwrap_or_else(|tried| {
        panic!("no cooperative_groups.h in {tried:?}: set HIP_RS_CUDA_INCLUDE to CUDA's include folder")
    });
    let builder = builder.option(format!("-I{}", dir.display()));
    // Newer CUDA toolkits keep libcu++ (`cuda/std/...`, which cooperative_groups includes) under
    // include/cccl: the H100's /usr/local/cuda did (2026-12-06), NVRTC failing on `cuda/std/type_traits`.
    let cccl = dir.join("cccl");
    if cccl.join("cuda").is_dir() {
        return builder.option(format!("-I{}", cccl.display()));
    }
    builder
}
