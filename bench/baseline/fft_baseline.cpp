// The raw C++ side of the hipFFT benchmark (bench/src/bin/fft.rs): hipFFT called directly, as a C++
// program would, with its own plan on the stream the Rust side passes. Loaded at run time from the shared
// library scripts/gpu-bundle-math.sh builds.
#include <hip/hip_runtime_api.h>
#include <hipfft/hipfft.h>

// A plan of `batch` contiguous transforms of `n` points: C2C (real = 0) or R2C (real = 1); null on failure.
extern "C" void* fft_raw_plan(hipStream_t stream, int n, int batch, int real) {
    hipfftHandle* plan = new hipfftHandle;
    if (hipfftPlanMany(plan, 1, &n, nullptr, 1, 0, nullptr, 1, 0, real ? HIPFFT_R2C : HIPFFT_C2C, batch) != HIPFFT_SUCCESS)
        return nullptr;
    if (hipfftSetStream(*plan, stream) != HIPFFT_SUCCESS) return nullptr;
    return plan;
}

// `calls` forward executions from `in` to `out`; the first failing result.
extern "C" int fft_raw_exec(void* plan, int real, void* in, void* out, int calls) {
    hipfftHandle p = *(hipfftHandle*)plan;
    for (int i = 0; i < calls; i++) {
        hipfftResult r = real ? hipfftExecR2C(p, (hipfftReal*)in, (hipfftComplex*)out)
                              : hipfftExecC2C(p, (hipfftComplex*)in, (hipfftComplex*)out, HIPFFT_FORWARD);
        if (r != HIPFFT_SUCCESS) return (int)r;
    }
    return 0;
}
