// The raw C++ side of the hipRAND benchmark (bench/src/bin/rand.rs): hipRAND called directly, as a C++
// program would, with its own generator on the stream the Rust side passes. Loaded at run time from the
// shared library scripts/gpu-bundle-rand.sh builds.
#include <hip/hip_runtime_api.h>
#include <hiprand/hiprand.h>

extern "C" void* rand_raw_create(hipStream_t stream, unsigned long long seed) {
    hiprandGenerator_t g = nullptr;
    if (hiprandCreateGenerator(&g, HIPRAND_RNG_PSEUDO_PHILOX4_32_10) != HIPRAND_STATUS_SUCCESS) return nullptr;
    if (hiprandSetStream(g, stream) != HIPRAND_STATUS_SUCCESS) return nullptr;
    if (hiprandSetPseudoRandomGeneratorSeed(g, seed) != HIPRAND_STATUS_SUCCESS) return nullptr;
    return g;
}

// `calls` uniform f32 fills of `n` values at `out`; the first failing status.
extern "C" int rand_raw_uniform(void* g, float* out, size_t n, int calls) {
    for (int i = 0; i < calls; i++) {
        hiprandStatus_t s = hiprandGenerateUniform((hiprandGenerator_t)g, out, n);
        if (s != HIPRAND_STATUS_SUCCESS) return (int)s;
    }
    return 0;
}
