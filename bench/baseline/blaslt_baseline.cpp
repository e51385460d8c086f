// The raw C++ side of the hipBLASLt benchmark (bench/src/bin/blaslt.rs): a column-major n x n x n matmul
// with the bias + GELU epilogue, called as a C++ program would (its own handle, descriptors and heuristic
// choice, a workspace of its own), on the stream the Rust side gives, timed with events. Types: 1 f16,
// 2 bf16 (A, B, D and the bias of that type; f32 compute and scale). AMD only: hipBLASLt has no NVIDIA
// backend. Build: g++ -O2 -std=c++17 -shared -fPIC -D__HIP_PLATFORM_AMD__ blaslt_baseline.cpp
// -lhipblaslt -lamdhip64 -o libhiprs_blaslt_baseline.so
#include <hip/hip_runtime_api.h>
#include <hipblaslt/hipblaslt.h>

#define CHECK(x)                                                                                         \
    do {                                                                                                 \
        if ((x) != 0) return -1.0;                                                                       \
    } while (0)

// Milliseconds per matmul over `reps` after one warm-up; negative on any failure.
extern "C" double lt_raw_bias_gelu(void* stream, int type, int n, const void* A, const void* B,
                                   const void* bias, void* D, int reps) {
    hipStream_t s = (hipStream_t)stream;
    hipDataType t = type == 1 ? HIP_R_16F : HIP_R_16BF;
    hipblasLtHandle_t h;
    CHECK(hipblasLtCreate(&h));
    hipblasLtMatmulDesc_t desc;
    CHECK(hipblasLtMatmulDescCreate(&desc, HIPBLAS_COMPUTE_32F, HIP_R_32F));
    hipblasLtEpilogue_t epi = HIPBLASLT_EPILOGUE_GELU_BIAS;
    CHECK(hipblasLtMatmulDescSetAttribute(desc, HIPBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
    CHECK(hipblasLtMatmulDescSetAttribute(desc, HIPBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    CHECK(hipblasLtMatmulDescSetAttribute(desc, HIPBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &t, sizeof(t)));
    hipblasLtMatrixLayout_t la, lb, ld;
    CHECK(hipblasLtMatrixLayoutCreate(&la, t, n, n, n));
    CHECK(hipblasLtMatrixLayoutCreate(&lb, t, n, n, n));
    CHECK(hipblasLtMatrixLayoutCreate(&ld, t, n, n, n));
    size_t ws_size = 32u << 20;
    void* ws = nullptr;
    CHECK(hipMalloc(&ws, ws_size));
    hipblasLtMatmulPreference_t pref;
    CHECK(hipblasLtMatmulPreferenceCreate(&pref));
    CHECK(hipblasLtMatmulPreferenceSetAttribute(pref, HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_size,
                                                sizeof(ws_size)));
    hipblasLtMatmulHeuristicResult_t result;
    int found = 0;
    CHECK(hipblasLtMatmulAlgoGetHeuristic(h, desc, la, lb, ld, ld, pref, 1, &result, &found));
    if (found < 1) return -2.0;
    const float one = 1.0f, zero = 0.0f;
    hipEvent_t start, stop;
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreate(&stop));
    double ms = -1.0;
    for (int i = -1; i < reps; i++) {
        if (i == 0) CHECK(hipEventRecord(start, s));
        CHECK(hipblasLtMatmul(h, desc, &one, A, la, B, lb, &zero, D, ld, D, ld, &result.algo, ws, ws_size, s));
    }
    CHECK(hipEventRecord(stop, s));
    CHECK(hipEventSynchronize(stop));
    float elapsed = 0.0f;
    CHECK(hipEventElapsedTime(&elapsed, start, stop));
    ms = elapsed / reps;
    hipEventDestroy(start);
    hipEventDestroy(stop);
    hipblasLtMatmulPreferenceDestroy(pref);
    hipblasLtMatrixLayoutDestroy(la);
    hipblasLtMatrixLayoutDestroy(lb);
    hipblasLtMatrixLayoutDestroy(ld);
    hipblasLtMatmulDescDestroy(desc);
    hipFree(ws);
    hipblasLtDestroy(h);
    return ms;
}
