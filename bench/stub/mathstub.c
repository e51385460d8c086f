/* hipSOLVER and hipSPARSE that do nothing, fast: stand-ins for libhipsolver and libhipsparse, beside the
 * HIP stub (hipstub.c), for measuring the hip crate's own host cost per small math-library call on a
 * machine without a GPU (bench/src/bin/math_host_cost.rs, scripts/host-cost.sh --math).
 *
 * The `dynamic-loading` feature opens the libraries HIP_RS_HIPSOLVER and HIP_RS_HIPSPARSE name; pointed
 * here (one file serves both), every call the host-cost rows make returns success at once, so a safe call's
 * time over the same raw call through this file is the crate's own work. Only the calls those rows make
 * exist (potrf, getrf, SpMV, and what making their handles and descriptors needs); any other is a missing
 * symbol, which the crate reports as such. Handles and descriptors are unique addresses, never read.
 *
 * Built by scripts/host-cost.sh: gcc -O2 -shared -fPIC; no header is needed (handles and descriptors are
 * pointers, the enums ints, as in the C headers). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

typedef int status_t; /* hipsolverStatus_t, hipsparseStatus_t: 0 is success */

static void* handle(void) { return malloc(16); }

/* hipSOLVER */
EXPORT status_t hipsolverCreate(void** h) { *h = handle(); return 0; }
EXPORT status_t hipsolverDestroy(void* h) { free(h); return 0; }
EXPORT status_t hipsolverSetStream(void* h, void* s) { (void)h; (void)s; return 0; }
/* The workspace answers are small and fixed, as cuSOLVER's are for 8 x 8 problems (in elements). */
EXPORT status_t hipsolverDpotrf_bufferSize(void* h, int uplo, int n, double* a, int lda, int* lwork) {
    (void)h; (void)uplo; (void)n; (void)a; (void)lda;
    *lwork = 64;
    return 0;
}
EXPORT status_t hipsolverDpotrf(void* h, int uplo, int n, double* a, int lda, double* work, int lwork,
                                int* info) {
    (void)h; (void)uplo; (void)n; (void)a; (void)lda; (void)work; (void)lwork; (void)info;
    return 0;
}
EXPORT status_t hipsolverDgetrf_bufferSize(void* h, int m, int n, double* a, int lda, int* lwork) {
    (void)h; (void)m; (void)n; (void)a; (void)lda;
    *lwork = 64;
    return 0;
}
EXPORT status_t hipsolverDgetrf(void* h, int m, int n, double* a, int lda, double* work, int lwork,
                                int* ipiv, int* info) {
    (void)h; (void)m; (void)n; (void)a; (void)lda; (void)work; (void)lwork; (void)ipiv; (void)info;
    return 0;
}

/* hipSPARSE */
EXPORT status_t hipsparseCreate(void** h) { *h = handle(); return 0; }
EXPORT status_t hipsparseDestroy(void* h) { free(h); return 0; }
EXPORT status_t hipsparseSetStream(void* h, void* s) { (void)h; (void)s; return 0; }
EXPORT status_t hipsparseCreateCsr(void** d, int64_t rows, int64_t cols, int64_t nnz, void* offsets,
                                   void* indices, void* values, int offset_type, int index_type, int base,
                                   int data_type) {
    (void)rows; (void)cols; (void)nnz; (void)offsets; (void)indices; (void)values; (void)offset_type;
    (void)index_type; (void)base; (void)data_type;
    *d = handle();
    return 0;
}
EXPORT status_t hipsparseCsrSetPointers(void* d, void* offsets, void* indices, void* values) {
    (void)d; (void)offsets; (void)indices; (void)values;
    return 0;
}
EXPORT status_t hipsparseDestroySpMat(void* d) { free(d); return 0; }
EXPORT status_t hipsparseCreateDnVec(void** d, int64_t size, void* values, int data_type) {
    (void)size; (void)values; (void)data_type;
    *d = handle();
    return 0;
}
EXPORT status_t hipsparseDnVecSetValues(void* d, void* values) { (void)d; (void)values; return 0; }
EXPORT status_t hipsparseDestroyDnVec(void* d) { free(d); return 0; }
EXPORT status_t hipsparseSpMV_bufferSize(void* h, int op, const void* alpha, void* a, void* x,
                                         const void* beta, void* y, int data_type, int alg, size_t* bytes) {
    (void)h; (void)op; (void)alpha; (void)a; (void)x; (void)beta; (void)y; (void)data_type; (void)alg;
    *bytes = 256;
    return 0;
}
EXPORT status_t hipsparseSpMV(void* h, int op, const void* alpha, void* a, void* x, const void* beta,
                              void* y, int data_type, int alg, void* buffer) {
    (void)h; (void)op; (void)alpha; (void)a; (void)x; (void)beta; (void)y; (void)data_type; (void)alg;
    (void)buffer;
    return 0;
}
