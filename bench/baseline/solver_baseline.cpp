// The raw C++ side of the hipSOLVER / hipSPARSE benchmark (bench/src/bin/solver.rs): the libraries called
// directly, as a C++ program would, timed with hipEvents on one stream. Built as a shared library the Rust
// benchmark opens at run time (scripts/gpu-bundle-solver.sh: lib/libhiprs_solver_baseline.so), and, with
// -DHIPRS_SOLVER_BASELINE_MAIN, as a program of its own that prints the whole table (bin/baseline-solver).
// Written against hipSOLVER 1.4 / hipSPARSE 2.1 (ROCm 5.2.3: the `hipsolverXpotrf` names, which every later
// hipSOLVER keeps; `info` is a device int pointer; the caller passes the workspace: on NVIDIA, hipSOLVER
// 1.4 hands `work`/`lwork` straight to cuSOLVER and allocates nothing itself).
//
// The C interface (every function `extern "C"`; dtype 0 = f32, 1 = f64; matrices column-major):
//
//   void* hiprs_solver_baseline_create(void* stream)      a context: one hipSOLVER and one hipSPARSE handle
//                                                          on `stream` (a hipStream_t; null = the null
//                                                          stream) and two timing events; null on failure
//   void hiprs_solver_baseline_destroy(void* ctx)
//   const char* hiprs_solver_baseline_error(void* ctx)    what the last failing call of ctx said ("" if none)
//
// Timed calls on device data the caller prepared, so the Rust side and this side time identical work. Each
// returns milliseconds per repetition (the mean of `reps`, after one untimed warm-up repetition), or a
// negative number on failure (-1 HIP, -2 hipSOLVER, -3 hipSPARSE, -4 bad argument, -5 a nonzero `info`:
// the input was not positive definite / was singular / did not converge), with the message in
// hiprs_solver_baseline_error. Workspaces, pivots and `info` are allocated before the timed region and
// their sizes queried there too; `info` is read back (and checked) after it.
//
//   double hiprs_solver_baseline_copy(ctx, const void* src, void* dst, size_t bytes, int reps)
//       a device-to-device copy alone: what the dense calls below spend restoring their input
//   double hiprs_solver_baseline_potrf(ctx, int dtype, int n, const void* a0, void* a, int lda, int reps)
//       each repetition copies the n x n matrix a0 (leading dimension lda) into a, then Cholesky-factors
//       a in place (lower; hipsolverSpotrf / hipsolverDpotrf). The copy gives every repetition the same
//       input; subtract hiprs_solver_baseline_copy(a0, a, lda * n * size) for the factorization alone.
//   double hiprs_solver_baseline_getrf(ctx, int dtype, int n, const void* a0, void* a, int lda, int reps)
//       the same with LU and partial pivoting (hipsolverXgetrf; the pivots in a buffer of its own)
//   double hiprs_solver_baseline_syevd(ctx, int dtype, int n, const void* a0, void* a, int lda, void* w,
//                                      int reps)
//       the same with all eigenvalues (into w, n values) and eigenvectors (into a) of the symmetric a0
//       (lower; hipsolverXsyevd, HIPSOLVER_EIG_MODE_VECTOR)
//   double hiprs_solver_baseline_potrf_batched(ctx, int dtype, int n, int batch, const void* a0, void* a,
//                                              int reps)
//       `batch` n x n matrices stored one after another (leading dimension n, stride n * n) copied from
//       a0 into a, then hipsolverXpotrfBatched over a device array of their addresses (built once)
//   double hiprs_solver_baseline_spmv(ctx, int dtype, long long rows, long long cols, long long nnz,
//                                     const int* row_ptr, const int* col_ind, const void* values,
//                                     const void* x, void* y, int reps)
//       y = A x for the CSR matrix A (0-based, 32-bit indices, values of dtype) with hipsparseSpMV
//       (HIPSPARSE_SPMV_ALG_DEFAULT, compute type = dtype); descriptors and buffer made before timing
//   double hiprs_solver_baseline_spmm(ctx, int dtype, long long rows, long long cols, long long nnz,
//                                     const int* row_ptr, const int* col_ind, const void* values, int k,
//                                     const void* b, void* c, int reps)
//       C = A B with hipsparseSpMM: B is cols x k, C rows x k, column-major with tight leading dimensions
//
// The test matrices, so both sides use the same ones (host arrays; values in f64, convert for f32):
//
//   int hiprs_solver_baseline_csr_shape(int matrix, int size, long long* rows, long long* cols,
//                                       long long* nnz)
//   int hiprs_solver_baseline_csr_fill(int matrix, int size, int* row_ptr, int* col_ind, double* values)
//       matrix 0: `size` x `size`, 16 entries per row, one in each of 16 equal column bands at a random
//       column of it (so sorted and distinct; xorshift64 seeded with 1), values uniform in [-1, 1);
//       matrix 1: the 2D 5-point Laplacian of a size x size grid (size^2 rows: 4 on the diagonal, -1 for
//       each neighbour). row_ptr has rows + 1 entries. Both return 0, or -4 for a bad matrix or size.
//   void hiprs_solver_baseline_spd_fill(int n, int batch, double* a)
//       `batch` symmetric, strictly diagonally dominant (so positive definite) n x n matrices, one after
//       another: off-diagonal entries uniform in [-1, 1), the diagonal n + 1 (xorshift64 seeded with 2)
//
// And self-contained runs that build those inputs themselves (what the standalone program prints):
//
//   double hiprs_solver_baseline_dense_self(int op, int dtype, int n, int batch, int reps)
//       op 0 potrf, 1 getrf, 2 syevd (n x n), 3 potrf_batched (`batch` of n x n), 4 the copy alone
//   double hiprs_solver_baseline_sparse_self(int op, int matrix, int dtype, int size, int k, int reps)
//       op 0 SpMV, 1 SpMM with k right-hand columns (x, B all ones)
#include <hip/hip_runtime_api.h>
#include <hipsolver/hipsolver.h>
#include <hipsparse/hipsparse.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Ctx {
    hipStream_t stream = nullptr;
    hipsolverHandle_t solver = nullptr;
    hipsparseHandle_t sparse = nullptr;
    hipEvent_t start = nullptr, stop = nullptr;
    std::string error;
};

enum : int { E_HIP = -1, E_SOLVER = -2, E_SPARSE = -3, E_ARG = -4, E_INFO = -5 };

double fail(Ctx* c, int code, const char* what, int status) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s failed: %d", what, status);
    c->error = buf;
    return code;
}

#define HIP(call)                                                                                          \
    do {                                                                                                   \
        hipError_t e_ = (call);                                                                            \
        if (e_ != hipSuccess) return fail(c, E_HIP, #call, (int)e_);                                       \
    } while (0)
#define SOLVER(call)                                                                                       \
    do {                                                                                                   \
        hipsolverStatus_t s_ = (call);                                                                     \
        if (s_ != HIPSOLVER_STATUS_SUCCESS) return fail(c, E_SOLVER, #call, (int)s_);                      \
    } while (0)
#define SPARSE(call)                                                                                       \
    do {                                                                                                   \
        hipsparseStatus_t s_ = (call);                                                                     \
        if (s_ != HIPSPARSE_STATUS_SUCCESS) return fail(c, E_SPARSE, #call, (int)s_);                      \
    } while (0)

// Device memory freed on every way out.
struct Dev {
    void* p = nullptr;
    ~Dev() {
        if (p) (void)hipFree(p);
    }
};

size_t elem(int dtype) { return dtype == 0 ? sizeof(float) : sizeof(double); }

// The overloads hipSOLVER's C names hide.
hipsolverStatus_t potrf_size(hipsolverHandle_t h, int n, float* a, int lda, int* lw) {
    return hipsolverSpotrf_bufferSize(h, HIPSOLVER_FILL_MODE_LOWER, n, a, lda, lw);
}
hipsolverStatus_t potrf_size(hipsolverHandle_t h, int n, double* a, int lda, int* lw) {
    return hipsolverDpotrf_bufferSize(h, HIPSOLVER_FILL_MODE_LOWER, n, a, lda, lw);
}
hipsolverStatus_t potrf(hipsolverHandle_t h, int n, float* a, int lda, float* w, int lw, int* info) {
    return hipsolverSpotrf(h, HIPSOLVER_FILL_MODE_LOWER, n, a, lda, w, lw, info);
}
hipsolverStatus_t potrf(hipsolverHandle_t h, int n, double* a, int lda, double* w, int lw, int* info) {
    return hipsolverDpotrf(h, HIPSOLVER_FILL_MODE_LOWER, n, a, lda, w, lw, info);
}
hipsolverStatus_t getrf_size(hipsolverHandle_t h, int n, float* a, int lda, int* lw) {
    return hipsolverSgetrf_bufferSize(h, n, n, a, lda, lw);
}
hipsolverStatus_t getrf_size(hipsolverHandle_t h, int n, double* a, int lda, int* lw) {
    return hipsolverDgetrf_bufferSize(h, n, n, a, lda, lw);
}
hipsolverStatus_t getrf(hipsolverHandle_t h, int n, float* a, int lda, float* w, int lw, int* ipiv, int* info) {
    return hipsolverSgetrf(h, n, n, a, lda, w, lw, ipiv, info);
}
hipsolverStatus_t getrf(hipsolverHandle_t h, int n, double* a, int lda, double* w, int lw, int* ipiv, int* info) {
    return hipsolverDgetrf(h, n, n, a, lda, w, lw, ipiv, info);
}
hipsolverStatus_t syevd_size(hipsolverHandle_t h, int n, float* a, int lda, float* d, int* lw) {
    return hipsolverSsyevd_bufferSize(h, HIPSOLVER_EIG_MODE_VECTOR, HIPSOLVER_FILL_MODE_LOWER, n, a, lda, d, lw);
}
hipsolverStatus_t syevd_size(hipsolverHandle_t h, int n, double* a, int lda, double* d, int* lw) {
    return hipsolverDsyevd_bufferSize(h, HIPSOLVER_EIG_MODE_VECTOR, HIPSOLVER_FILL_MODE_LOWER, n, a, lda, d, lw);
}
hipsolverStatus_t syevd(hipsolverHandle_t h, int n, float* a, int lda, float* d, float* w, int lw, int* info) {
    return hipsolverSsyevd(h, HIPSOLVER_EIG_MODE_VECTOR, HIPSOLVER_FILL_MODE_LOWER, n, a, lda, d, w, lw, info);
}
hipsolverStatus_t syevd(hipsolverHandle_t h, int n, double* a, int lda, double* d, double* w, int lw, int* info) {
    return hipsolverDsyevd(h, HIPSOLVER_EIG_MODE_VECTOR, HIPSOLVER_FILL_MODE_LOWER, n, a, lda, d, w, lw, info);
}
hipsolverStatus_t batched_size(hipsolverHandle_t h, int n, float** a, int* lw, int batch) {
    return hipsolverSpotrfBatched_bufferSize(h, HIPSOLVER_FILL_MODE_LOWER, n, a, n, lw, batch);
}
hipsolverStatus_t batched_size(hipsolverHandle_t h, int n, double** a, int* lw, int batch) {
    return hipsolverDpotrfBatched_bufferSize(h, HIPSOLVER_FILL_MODE_LOWER, n, a, n, lw, batch);
}
hipsolverStatus_t batched(hipsolverHandle_t h, int n, float** a, float* w, int lw, int* info, int batch) {
    return hipsolverSpotrfBatched(h, HIPSOLVER_FILL_MODE_LOWER, n, a, n, w, lw, info, batch);
}
hipsolverStatus_t batched(hipsolverHandle_t h, int n, double** a, double* w, int lw, int* info, int batch) {
    return hipsolverDpotrfBatched(h, HIPSOLVER_FILL_MODE_LOWER, n, a, n, w, lw, info, batch);
}

// Times `body` (one repetition, returning 0 or a negative failure) `reps` times after one warm-up.
template <class F> double timed(Ctx* c, int reps, F body) {
    if (reps < 1) return fail(c, E_ARG, "reps < 1", reps);
    double r = body();
    if (r < 0) return r;
    HIP(hipEventRecord(c->start, c->stream));
    for (int i = 0; i < reps; i++) {
        r = body();
        if (r < 0) return r;
    }
    HIP(hipEventRecord(c->stop, c->stream));
    HIP(hipEventSynchronize(c->stop));
    float ms = 0;
    HIP(hipEventElapsedTime(&ms, c->start, c->stop));
    return (double)ms / reps;
}

// After the timed region: every `info` of the last repetition must be 0.
double check_info(Ctx* c, const int* info, int count, const char* what) {
    std::vector<int> host(count);
    HIP(hipMemcpyAsync(host.data(), info, count * sizeof(int), hipMemcpyDeviceToHost, c->stream));
    HIP(hipStreamSynchronize(c->stream));
    for (int i = 0; i < count; i++)
        if (host[i] != 0) {
            char buf[128];
            std::snprintf(buf, sizeof buf, "%s: info %d (batch index %d)", what, host[i], i);
            c->error = buf;
            return E_INFO;
        }
    return 0;
}

template <class T> double potrf_t(Ctx* c, int n, const void* a0, void* a, int lda, int reps) {
    T* A = (T*)a;
    int lw = 0;
    SOLVER(potrf_size(c->solver, n, A, lda, &lw));
    Dev work, info;
    HIP(hipMalloc(&work.p, (size_t)(lw > 0 ? lw : 1) * sizeof(T)));
    HIP(hipMalloc(&info.p, sizeof(int)));
    size_t bytes = (size_t)lda * n * sizeof(T);
    double ms = timed(c, reps, [&]() -> double {
        HIP(hipMemcpyAsync(a, a0, bytes, hipMemcpyDeviceToDevice, c->stream));
        SOLVER(potrf(c->solver, n, A, lda, (T*)work.p, lw, (int*)info.p));
        return 0;
    });
    if (ms < 0) return ms;
    double r = check_info(c, (int*)info.p, 1, "potrf");
    return r < 0 ? r : ms;
}

template <class T> double getrf_t(Ctx* c, int n, const void* a0, void* a, int lda, int reps) {
    T* A = (T*)a;
    int lw = 0;
    SOLVER(getrf_size(c->solver, n, A, lda, &lw));
    Dev work, info, ipiv;
    HIP(hipMalloc(&work.p, (size_t)(lw > 0 ? lw : 1) * sizeof(T)));
    HIP(hipMalloc(&info.p, sizeof(int)));
    HIP(hipMalloc(&ipiv.p, (size_t)n * sizeof(int)));
    size_t bytes = (size_t)lda * n * sizeof(T);
    double ms = timed(c, reps, [&]() -> double {
        HIP(hipMemcpyAsync(a, a0, bytes, hipMemcpyDeviceToDevice, c->stream));
        SOLVER(getrf(c->solver, n, A, lda, (T*)work.p, lw, (int*)ipiv.p, (int*)info.p));
        return 0;
    });
    if (ms < 0) return ms;
    double r = check_info(c, (int*)info.p, 1, "getrf");
    return r < 0 ? r : ms;
}

template <class T> double syevd_t(Ctx* c, int n, const void* a0, void* a, int lda, void* w, int reps) {
    T* A = (T*)a;
    int lw = 0;
    SOLVER(syevd_size(c->solver, n, A, lda, (T*)w, &lw));
    Dev work, info;
    HIP(hipMalloc(&work.p, (size_t)(lw > 0 ? lw : 1) * sizeof(T)));
    HIP(hipMalloc(&info.p, sizeof(int)));
    size_t bytes = (size_t)lda * n * sizeof(T);
    double ms = timed(c, reps, [&]() -> double {
        HIP(hipMemcpyAsync(a, a0, bytes, hipMemcpyDeviceToDevice, c->stream));
        SOLVER(syevd(c->solver, n, A, lda, (T*)w, (T*)work.p, lw, (int*)info.p));
        return 0;
    });
    if (ms < 0) return ms;
    double r = check_info(c, (int*)info.p, 1, "syevd");
    return r < 0 ? r : ms;
}

template <class T> double batched_t(Ctx* c, int n, int batch, const void* a0, void* a, int reps) {
    std::vector<T*> ptrs(batch);
    for (int i = 0; i < batch; i++) ptrs[i] = (T*)a + (size_t)i * n * n;
    Dev dptrs, work, info;
    HIP(hipMalloc(&dptrs.p, batch * sizeof(T*)));
    HIP(hipMemcpy(dptrs.p, ptrs.data(), batch * sizeof(T*), hipMemcpyHostToDevice));
    int lw = 0;
    SOLVER(batched_size(c->solver, n, (T**)dptrs.p, &lw, batch));
    HIP(hipMalloc(&work.p, (size_t)(lw > 0 ? lw : 1) * sizeof(T)));
    HIP(hipMalloc(&info.p, (size_t)batch * sizeof(int)));
    size_t bytes = (size_t)batch * n * n * sizeof(T);
    double ms = timed(c, reps, [&]() -> double {
        HIP(hipMemcpyAsync(a, a0, bytes, hipMemcpyDeviceToDevice, c->stream));
        SOLVER(batched(c->solver, n, (T**)dptrs.p, (T*)work.p, lw, (int*)info.p, batch));
        return 0;
    });
    if (ms < 0) return ms;
    double r = check_info(c, (int*)info.p, batch, "potrfBatched");
    return r < 0 ? r : ms;
}

// Descriptors freed on every way out.
struct SpMat {
    hipsparseSpMatDescr_t d = nullptr;
    ~SpMat() {
        if (d) (void)hipsparseDestroySpMat(d);
    }
};
struct DnVec {
    hipsparseDnVecDescr_t d = nullptr;
    ~DnVec() {
        if (d) (void)hipsparseDestroyDnVec(d);
    }
};
struct DnMat {
    hipsparseDnMatDescr_t d = nullptr;
    ~DnMat() {
        if (d) (void)hipsparseDestroyDnMat(d);
    }
};

hipDataType hip_type(int dtype) { return dtype == 0 ? HIP_R_32F : HIP_R_64F; }

double csr(Ctx* c, SpMat& m, int dtype, long long rows, long long cols, long long nnz, const int* row_ptr,
           const int* col_ind, const void* values) {
    SPARSE(hipsparseCreateCsr(&m.d, rows, cols, nnz, (void*)row_ptr, (void*)col_ind, (void*)values,
                              HIPSPARSE_INDEX_32I, HIPSPARSE_INDEX_32I, HIPSPARSE_INDEX_BASE_ZERO, hip_type(dtype)));
    return 0;
}

uint64_t next(uint64_t& s) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}
double uniform(uint64_t& s) { return (double)(next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0; }

bool bad_dtype(int dtype) { return dtype != 0 && dtype != 1; }

} // namespace

extern "C" {

void* hiprs_solver_baseline_create(void* stream) {
    Ctx* c = new Ctx;
    c->stream = (hipStream_t)stream;
    if (hipsolverCreate(&c->solver) != HIPSOLVER_STATUS_SUCCESS ||
        hipsolverSetStream(c->solver, c->stream) != HIPSOLVER_STATUS_SUCCESS ||
        hipsparseCreate(&c->sparse) != HIPSPARSE_STATUS_SUCCESS ||
        hipsparseSetStream(c->sparse, c->stream) != HIPSPARSE_STATUS_SUCCESS ||
        hipEventCreate(&c->start) != hipSuccess || hipEventCreate(&c->stop) != hipSuccess) {
        if (c->solver) hipsolverDestroy(c->solver);
        if (c->sparse) hipsparseDestroy(c->sparse);
        if (c->start) (void)hipEventDestroy(c->start);
        if (c->stop) (void)hipEventDestroy(c->stop);
        delete c;
        return nullptr;
    }
    return c;
}

void hiprs_solver_baseline_destroy(void* ctx) {
    Ctx* c = (Ctx*)ctx;
    if (!c) return;
    hipsolverDestroy(c->solver);
    hipsparseDestroy(c->sparse);
    (void)hipEventDestroy(c->start);
    (void)hipEventDestroy(c->stop);
    delete c;
}

const char* hiprs_solver_baseline_error(void* ctx) { return ctx ? ((Ctx*)ctx)->error.c_str() : "no context"; }

double hiprs_solver_baseline_copy(void* ctx, const void* src, void* dst, size_t bytes, int reps) {
    Ctx* c = (Ctx*)ctx;
    return timed(c, reps, [&]() -> double {
        HIP(hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToDevice, c->stream));
        return 0;
    });
}

double hiprs_solver_baseline_potrf(void* ctx, int dtype, int n, const void* a0, void* a, int lda, int reps) {
    Ctx* c = (Ctx*)ctx;
    if (bad_dtype(dtype) || n < 1 || lda < n) return fail(c, E_ARG, "potrf: dtype, n or lda", n);
    return dtype == 0 ? potrf_t<float>(c, n, a0, a, lda, reps) : potrf_t<double>(c, n, a0, a, lda, reps);
}

double hiprs_solver_baseline_getrf(void* ctx, int dtype, int n, const void* a0, void* a, int lda, int reps) {
    Ctx* c = (Ctx*)ctx;
    if (bad_dtype(dtype) || n < 1 || lda < n) return fail(c, E_ARG, "getrf: dtype, n or lda", n);
    return dtype == 0 ? getrf_t<float>(c, n, a0, a, lda, reps) : getrf_t<double>(c, n, a0, a, lda, reps);
}

double hiprs_solver_baseline_syevd(void* ctx, int dtype, int n, const void* a0, void* a, int lda, void* w,
                                   int reps) {
    Ctx* c = (Ctx*)ctx;
    if (bad_dtype(dtype) || n < 1 || lda < n) return fail(c, E_ARG, "syevd: dtype, n or lda", n);
    return dtype == 0 ? syevd_t<float>(c, n, a0, a, lda, w, reps) : syevd_t<double>(c, n, a0, a, lda, w, reps);
}

double hiprs_solver_baseline_potrf_batched(void* ctx, int dtype, int n, int batch, const void* a0, void* a,
                                           int reps) {
    Ctx* c = (Ctx*)ctx;
    if (bad_dtype(dtype) || n < 1 || batch < 1) return fail(c, E_ARG, "potrf_batched: dtype, n or batch", n);
    return dtype == 0 ? batched_t<float>(c, n, batch, a0, a, reps) : batched_t<double>(c, n, batch, a0, a, reps);
}

double hiprs_solver_baseline_spmv(void* ctx, int dtype, long long rows, long long cols, long long nnz,
                                  const int* row_ptr, const int* col_ind, const void* values, const void* x,
                                  void* y, int reps) {
    Ctx* c = (Ctx*)ctx;
    if (bad_dtype(dtype) || rows < 1 || cols < 1 || nnz < 0) return fail(c, E_ARG, "spmv: dtype or shape", (int)rows);
    SpMat a;
    DnVec vx, vy;
    double r = csr(c, a, dtype, rows, cols, nnz, row_ptr, col_ind, values);
    if (r < 0) return r;
    SPARSE(hipsparseCreateDnVec(&vx.d, cols, (void*)x, hip_type(dtype)));
    SPARSE(hipsparseCreateDnVec(&vy.d, rows, y, hip_type(dtype)));
    const float one_f = 1, zero_f = 0;
    const double one_d = 1, zero_d = 0;
    const void* one = dtype == 0 ? (const void*)&one_f : (const void*)&one_d;
    const void* zero = dtype == 0 ? (const void*)&zero_f : (const void*)&zero_d;
    size_t size = 0;
    SPARSE(hipsparseSpMV_bufferSize(c->sparse, HIPSPARSE_OPERATION_NON_TRANSPOSE, one, a.d, vx.d, zero, vy.d,
                                    hip_type(dtype), HIPSPARSE_SPMV_ALG_DEFAULT, &size));
    Dev buffer;
    HIP(hipMalloc(&buffer.p, size > 0 ? size : 1));
    return timed(c, reps, [&]() -> double {
        SPARSE(hipsparseSpMV(c->sparse, HIPSPARSE_OPERATION_NON_TRANSPOSE, one, a.d, vx.d, zero, vy.d, hip_type(dtype),
                             HIPSPARSE_SPMV_ALG_DEFAULT, buffer.p));
        return 0;
    });
}

double hiprs_solver_baseline_spmm(void* ctx, int dtype, long long rows, long long cols, long long nnz,
                                  const int* row_ptr, const int* col_ind, const void* values, int k, const void* b,
                                  void* cm, int reps) {
    Ctx* c = (Ctx*)ctx;
    if (bad_dtype(dtype) || rows < 1 || cols < 1 || nnz < 0 || k < 1)
        return fail(c, E_ARG, "spmm: dtype or shape", (int)rows);
    SpMat a;
    DnMat mb, mc;
    double r = csr(c, a, dtype, rows, cols, nnz, row_ptr, col_ind, values);
    if (r < 0) return r;
    SPARSE(hipsparseCreateDnMat(&mb.d, cols, k, cols, (void*)b, hip_type(dtype), HIPSPARSE_ORDER_COLUMN));
    SPARSE(hipsparseCreateDnMat(&mc.d, rows, k, rows, cm, hip_type(dtype), HIPSPARSE_ORDER_COLUMN));
    const float one_f = 1, zero_f = 0;
    const double one_d = 1, zero_d = 0;
    const void* one = dtype == 0 ? (const void*)&one_f : (const void*)&one_d;
    const void* zero = dtype == 0 ? (const void*)&zero_f : (const void*)&zero_d;
    size_t size = 0;
    SPARSE(hipsparseSpMM_bufferSize(c->sparse, HIPSPARSE_OPERATION_NON_TRANSPOSE, HIPSPARSE_OPERATION_NON_TRANSPOSE,
                                    one, a.d, mb.d, zero, mc.d, hip_type(dtype), HIPSPARSE_SPMM_ALG_DEFAULT, &size));
    Dev buffer;
    HIP(hipMalloc(&buffer.p, size > 0 ? size : 1));
    return timed(c, reps, [&]() -> double {
        SPARSE(hipsparseSpMM(c->sparse, HIPSPARSE_OPERATION_NON_TRANSPOSE, HIPSPARSE_OPERATION_NON_TRANSPOSE, one, a.d,
                             mb.d, zero, mc.d, hip_type(dtype), HIPSPARSE_SPMM_ALG_DEFAULT, buffer.p));
        return 0;
    });
}

int hiprs_solver_baseline_csr_shape(int matrix, int size, long long* rows, long long* cols, long long* nnz) {
    long long s = size;
    if (matrix == 0 && size >= 16 && s * 16 <= INT32_MAX) {
        *rows = *cols = s;
        *nnz = s * 16;
        return 0;
    }
    if (matrix == 1 && size >= 2 && s * s * 5 <= INT32_MAX) {
        *rows = *cols = s * s;
        *nnz = 5 * s * s - 4 * s; // every interior link twice, plus the diagonal
        return 0;
    }
    return E_ARG;
}

int hiprs_solver_baseline_csr_fill(int matrix, int size, int* row_ptr, int* col_ind, double* values) {
    long long rows, cols, nnz;
    if (hiprs_solver_baseline_csr_shape(matrix, size, &rows, &cols, &nnz) != 0) return E_ARG;
    long long at = 0;
    if (matrix == 0) {
        uint64_t s = 1;
        long long band = cols / 16;
        for (long long r = 0; r < rows; r++) {
            row_ptr[r] = (int)at;
            for (int j = 0; j < 16; j++) {
                long long width = j == 15 ? cols - 15 * band : band;
                col_ind[at] = (int)(j * band + (long long)(next(s) % (uint64_t)width));
                values[at++] = uniform(s);
            }
        }
    } else {
        long long g = size;
        for (long long i = 0; i < g; i++)
            for (long long j = 0; j < g; j++) {
                long long r = i * g + j;
                row_ptr[r] = (int)at;
                auto put = [&](long long col, double v) {
                    col_ind[at] = (int)col;
                    values[at++] = v;
                };
                if (i > 0) put(r - g, -1);
                if (j > 0) put(r - 1, -1);
                put(r, 4);
                if (j + 1 < g) put(r + 1, -1);
                if (i + 1 < g) put(r + g, -1);
            }
    }
    row_ptr[rows] = (int)at;
    return at == nnz ? 0 : E_ARG;
}

void hiprs_solver_baseline_spd_fill(int n, int batch, double* a) {
    uint64_t s = 2;
    for (long long b = 0; b < batch; b++) {
        double* m = a + b * (long long)n * n;
        for (int j = 0; j < n; j++) {
            m[(size_t)j * n + j] = n + 1.0;
            for (int i = j + 1; i < n; i++) m[(size_t)j * n + i] = m[(size_t)i * n + j] = uniform(s);
        }
    }
}

static Ctx* self_context() {
    Ctx* c = (Ctx*)hiprs_solver_baseline_create(nullptr);
    if (!c) std::fprintf(stderr, "solver baseline: no context (hipsolverCreate, hipsparseCreate or hipEventCreate failed)\n");
    return c;
}

double hiprs_solver_baseline_dense_self(int op, int dtype, int n, int batch, int reps) {
    Ctx* c = self_context();
    if (!c) return E_HIP;
    double r;
    {
        if (op != 3) batch = 1;
        if (bad_dtype(dtype) || n < 1 || batch < 1 || op < 0 || op > 4) {
            r = fail(c, E_ARG, "dense_self: op, dtype, n or batch", op);
        } else {
            size_t count = (size_t)n * n * batch, bytes = count * elem(dtype);
            std::vector<double> host(count);
            hiprs_solver_baseline_spd_fill(n, batch, host.data());
            std::vector<float> host_f;
            const void* src = host.data();
            if (dtype == 0) {
                host_f.assign(host.begin(), host.end());
                src = host_f.data();
            }
            Dev a0, a, w;
            if (hipMalloc(&a0.p, bytes) != hipSuccess || hipMalloc(&a.p, bytes) != hipSuccess ||
                hipMalloc(&w.p, (size_t)n * elem(dtype)) != hipSuccess ||
                hipMemcpy(a0.p, src, bytes, hipMemcpyHostToDevice) != hipSuccess) {
                r = fail(c, E_HIP, "dense_self: allocation or upload", n);
            } else if (op == 0) {
                r = hiprs_solver_baseline_potrf(c, dtype, n, a0.p, a.p, n, reps);
            } else if (op == 1) {
                r = hiprs_solver_baseline_getrf(c, dtype, n, a0.p, a.p, n, reps);
            } else if (op == 2) {
                r = hiprs_solver_baseline_syevd(c, dtype, n, a0.p, a.p, n, w.p, reps);
            } else if (op == 3) {
                r = hiprs_solver_baseline_potrf_batched(c, dtype, n, batch, a0.p, a.p, reps);
            } else {
                r = hiprs_solver_baseline_copy(c, a0.p, a.p, bytes, reps);
            }
        }
    }
    if (r < 0) std::fprintf(stderr, "solver baseline: %s\n", c->error.c_str());
    hiprs_solver_baseline_destroy(c);
    return r;
}

double hiprs_solver_baseline_sparse_self(int op, int matrix, int dtype, int size, int k, int reps) {
    Ctx* c = self_context();
    if (!c) return E_HIP;
    double r;
    long long rows, cols, nnz;
    if (bad_dtype(dtype) || (op != 0 && op != 1) || (op == 1 && k < 1) ||
        hiprs_solver_baseline_csr_shape(matrix, size, &rows, &cols, &nnz) != 0) {
        r = fail(c, E_ARG, "sparse_self: op, matrix, dtype, size or k", op);
    } else {
        if (op == 0) k = 1;
        std::vector<int> row_ptr(rows + 1), col_ind(nnz);
        std::vector<double> values(nnz);
        hiprs_solver_baseline_csr_fill(matrix, size, row_ptr.data(), col_ind.data(), values.data());
        size_t e = elem(dtype);
        std::vector<float> values_f;
        const void* vsrc = values.data();
        if (dtype == 0) {
            values_f.assign(values.begin(), values.end());
            vsrc = values_f.data();
        }
        std::vector<double> ones_d((size_t)cols * k, 1.0);
        std::vector<float> ones_f((size_t)cols * k, 1.0f);
        const void* ones = dtype == 0 ? (const void*)ones_f.data() : (const void*)ones_d.data();
        Dev drp, dci, dv, dx, dy;
        if (hipMalloc(&drp.p, (rows + 1) * sizeof(int)) != hipSuccess || hipMalloc(&dci.p, nnz * sizeof(int)) != hipSuccess ||
            hipMalloc(&dv.p, nnz * e) != hipSuccess || hipMalloc(&dx.p, (size_t)cols * k * e) != hipSuccess ||
            hipMalloc(&dy.p, (size_t)rows * k * e) != hipSuccess ||
            hipMemcpy(drp.p, row_ptr.data(), (rows + 1) * sizeof(int), hipMemcpyHostToDevice) != hipSuccess ||
            hipMemcpy(dci.p, col_ind.data(), nnz * sizeof(int), hipMemcpyHostToDevice) != hipSuccess ||
            hipMemcpy(dv.p, vsrc, nnz * e, hipMemcpyHostToDevice) != hipSuccess ||
            hipMemcpy(dx.p, ones, (size_t)cols * k * e, hipMemcpyHostToDevice) != hipSuccess) {
            r = fail(c, E_HIP, "sparse_self: allocation or upload", size);
        } else if (op == 0) {
            r = hiprs_solver_baseline_spmv(c, dtype, rows, cols, nnz, (int*)drp.p, (int*)dci.p, dv.p, dx.p, dy.p, reps);
        } else {
            r = hiprs_solver_baseline_spmm(c, dtype, rows, cols, nnz, (int*)drp.p, (int*)dci.p, dv.p, k, dx.p, dy.p,
                                           reps);
        }
        // The Laplacian's row sums are 0 inside and positive on the border: check one interior row of y.
        if (r >= 0 && matrix == 1 && size >= 3) {
            double got = 1;
            size_t at = (size_t)(size + 1); // row (1, 1) of the grid
            if (dtype == 0) {
                float f = 1;
                if (hipMemcpy(&f, (float*)dy.p + at, sizeof f, hipMemcpyDeviceToHost) == hipSuccess) got = f;
            } else if (hipMemcpy(&got, (double*)dy.p + at, sizeof got, hipMemcpyDeviceToHost) != hipSuccess) {
                got = 1;
            }
            if (got != 0) r = fail(c, E_ARG, "sparse_self: the Laplacian's interior row sum is not 0", (int)got);
        }
    }
    if (r < 0) std::fprintf(stderr, "solver baseline: %s\n", c->error.c_str());
    hiprs_solver_baseline_destroy(c);
    return r;
}

} // extern "C"

#ifdef HIPRS_SOLVER_BASELINE_MAIN
#include <chrono>
#include <cstdlib>
#include <functional>

// Runs once with 1 repetition to size the real run at about 0.3 s (3 to 100 repetitions).
static double adaptive(const std::function<double(int)>& f) {
    double one = f(1);
    if (one <= 0) return one;
    int reps = (int)(300.0 / one);
    reps = reps < 3 ? 3 : reps > 100 ? 100 : reps;
    return f(reps);
}

// `flops` over `busy_ms` (the call's time less what it spends restoring its input) as a rate.
static void row(const char* op, const char* type, const char* shape, double ms, double flops, double busy_ms) {
    if (ms < 0) {
        std::printf("| %s | %s | %s | failed (%g) | |\n", op, type, shape, ms);
    } else if (flops > 0 && busy_ms > 0) {
        std::printf("| %s | %s | %s | %.4f | %.1f GFLOP/s |\n", op, type, shape, ms, flops / (busy_ms * 1e6));
    } else {
        std::printf("| %s | %s | %s | %.4f | |\n", op, type, shape, ms);
    }
    std::fflush(stdout);
}

// The whole table: hipSOLVER / hipSPARSE timed by themselves. HIPRS_QUICK=1 leaves out syevd at 4096
// and the dense sizes above 4096.
int main() {
    bool quick = std::getenv("HIPRS_QUICK") && std::strcmp(std::getenv("HIPRS_QUICK"), "1") == 0;
    int devices = 0;
    if (hipGetDeviceCount(&devices) != hipSuccess || devices < 1) {
        std::fprintf(stderr, "baseline-solver: no device (hipGetDeviceCount)\n");
        return 1;
    }
    const char* types[2] = {"f32", "f64"};
    char shape[64];
    std::printf("hipSOLVER %d.%d.%d, hipSPARSE %d.%d.%d (raw C++, hipEvents; ms per call)\n\n", hipsolverVersionMajor,
                hipsolverVersionMinor, hipsolverVersionPatch, hipsparseVersionMajor, hipsparseVersionMinor,
                hipsparseVersionPatch);
    std::printf("| op | type | shape | ms | rate |\n| --- | --- | --- | ---: | ---: |\n");
    for (int op = 0; op < 2; op++)
        for (int t = 0; t < 2; t++)
            for (int n = 1024; n <= (quick ? 4096 : 8192); n *= 2) {
                double copy = adaptive([&](int r) { return hiprs_solver_baseline_dense_self(4, t, n, 1, r); });
                double ms = adaptive([&](int r) { return hiprs_solver_baseline_dense_self(op, t, n, 1, r); });
                double nn = n;
                double flops = op == 0 ? nn * nn * nn / 3 : 2 * nn * nn * nn / 3;
                std::snprintf(shape, sizeof shape, "%d (incl. a %.3f ms copy)", n, copy);
                row(op == 0 ? "potrf" : "getrf", types[t], shape, ms, flops, ms - copy);
            }
    for (int t = 0; t < 2; t++)
        for (int n = 1024; n <= (quick ? 2048 : 4096); n *= 2) {
            double ms = adaptive([&](int r) { return hiprs_solver_baseline_dense_self(2, t, n, 1, r); });
            std::snprintf(shape, sizeof shape, "%d", n);
            row("syevd (vectors)", types[t], shape, ms, 0, 0);
        }
    for (int t = 0; t < 2; t++) {
        double ms = adaptive([&](int r) { return hiprs_solver_baseline_dense_self(3, t, 8, 10000, r); });
        row("potrfBatched", types[t], "10000 x 8x8 (incl. the copy)", ms, 0, 0);
    }
    struct {
        int matrix, size;
        const char* name;
    } mats[2] = {{0, 1 << 20, "random 2^20 rows, 16/row"}, {1, 2048, "Laplacian 2048x2048 grid"}};
    for (auto& m : mats)
        for (int t = 0; t < 2; t++) {
            long long rows, cols, nnz;
            hiprs_solver_baseline_csr_shape(m.matrix, m.size, &rows, &cols, &nnz);
            double ms = adaptive([&](int r) { return hiprs_solver_baseline_sparse_self(0, m.matrix, t, m.size, 1, r); });
            row("SpMV", types[t], m.name, ms, 2.0 * nnz, ms);
            ms = adaptive([&](int r) { return hiprs_solver_baseline_sparse_self(1, m.matrix, t, m.size, 32, r); });
            std::snprintf(shape, sizeof shape, "%s, 32 columns", m.name);
            row("SpMM", types[t], shape, ms, 2.0 * nnz * 32, ms);
        }
    return 0;
}
#endif
