// The raw C++ side of the hipBLAS benchmark (bench/src/bin/blas.rs): hipBLAS called directly, as a C++
// program would, on the handle the safe side made (so the same stream and the same cuBLAS state). Loaded at run time from the shared library
// scripts/bench-blas.sh builds. Types: 0 f32 (hipblasSgemm), 1 f16 and 2 bf16 (hipblasGemmEx with f32
// compute, f16 / bf16 output, as cudarc's Gemm<f16>/<bf16> call cuBLAS).
#include <hip/hip_runtime_api.h>
#include <hipblas/hipblas.h>

// `calls` column-major C = A * B (m x n over k, tight leading dimensions); the first failing status.
extern "C" int blas_raw_gemm(void* handle, int type, int m, int n, int k, const void* A, const void* B,
                             void* C, int calls) {
    hipblasHandle_t h = (hipblasHandle_t)handle;
    const float one = 1.0f, zero = 0.0f;
    // Leading dimensions of at least 1, as BLAS requires (an empty product has m = 0).
    const int ldm = m > 1 ? m : 1, ldk = k > 1 ? k : 1;
    for (int i = 0; i < calls; i++) {
        hipblasStatus_t s;
        if (type == 0) {
            s = hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_N, m, n, k, &one, (const float*)A, ldm,
                             (const float*)B, ldk, &zero, (float*)C, ldm);
        } else {
            hipblasDatatype_t t = type == 1 ? HIPBLAS_R_16F : HIPBLAS_R_16B;
            s = hipblasGemmEx(h, HIPBLAS_OP_N, HIPBLAS_OP_N, m, n, k, &one, A, t, ldm, B, t, ldk, &zero, C, t, ldm,
                              HIPBLAS_R_32F, HIPBLAS_GEMM_DEFAULT);
        }
        if (s != HIPBLAS_STATUS_SUCCESS) return (int)s;
    }
    return 0;
}
