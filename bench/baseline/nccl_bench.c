/* The raw baseline for hip-rs-bench's `rccl` binary: all-reduce and peer copies over two GPUs, written
 * straight against HIP and NCCL's C API (RCCL on AMD, NCCL on HIP's NVIDIA platform), with the same sizes,
 * iteration counts and timing as bench/src/bin/rccl.rs. Prints one line per measurement:
 *   allreduce BYTES SECONDS_PER_ITERATION
 *   peer BYTES SECONDS_PER_COPY
 * Build (NVIDIA): gcc -O2 -D__HIP_PLATFORM_NVIDIA__ -I/usr/include -I$CUDA/include nccl_bench.c \
 *                 -L$CUDA/lib -lnccl -lcudart -o nccl_bench
 * Build (AMD):    gcc -O2 -D__HIP_PLATFORM_AMD__ -DUSE_RCCL nccl_bench.c -lrccl -lamdhip64 -o nccl_bench */
#include <hip/hip_runtime_api.h>
#ifdef USE_RCCL
#include <rccl/rccl.h>
#else
#include <nccl.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define HIP(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { fprintf(stderr, "%s: %s\n", #x, hipGetErrorString(e_)); exit(1); } } while (0)
#define NCCL(x) do { ncclResult_t r_ = (x); if (r_ != ncclSuccess) { fprintf(stderr, "%s: %s\n", #x, ncclGetErrorString(r_)); exit(1); } } while (0)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Same rule as the Rust side: more iterations for small sizes. */
static int iterations(size_t bytes) { return bytes <= (1u << 20) ? 200 : bytes <= (64u << 20) ? 50 : 20; }

static int cmp(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

int main(int argc, char** argv) {
    size_t max_bytes = argc > 1 ? strtoull(argv[1], 0, 10) : (1ull << 30);
    int devs[2] = {0, 1};
    ncclComm_t comms[2];
    hipStream_t streams[2];
    void* bufs[2];
    NCCL(ncclCommInitAll(comms, 2, devs));
    for (int r = 0; r < 2; r++) {
        HIP(hipSetDevice(r));
        HIP(hipStreamCreate(&streams[r]));
        HIP(hipMalloc(&bufs[r], max_bytes));
        HIP(hipMemset(bufs[r], 0, max_bytes));
    }
    for (size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
        size_t count = bytes / sizeof(float);
        int iters = iterations(bytes);
        double reps[5];
        for (int rep = -1; rep < 5; rep++) { /* rep -1: warm-up */
            double t0 = now();
            for (int i = 0; i < iters; i++) {
                NCCL(ncclGroupStart());
                for (int r = 0; r < 2; r++) {
                    HIP(hipSetDevice(r));
                    NCCL(ncclAllReduce(bufs[r], bufs[r], count, ncclFloat32, ncclSum, comms[r], streams[r]));
                }
                NCCL(ncclGroupEnd());
            }
            for (int r = 0; r < 2; r++) HIP(hipStreamSynchronize(streams[r]));
            if (rep >= 0) reps[rep] = (now() - t0) / iters;
        }
        qsort(reps, 5, sizeof(double), cmp);
        printf("allreduce %zu %.9e\n", bytes, reps[2]);
        fflush(stdout);
    }
    /* Peer copies device 0 -> device 1 on device 1's stream, peer access enabled both ways. */
    HIP(hipSetDevice(1));
    if (hipDeviceEnablePeerAccess(0, 0) != hipSuccess) (void)hipGetLastError();
    HIP(hipSetDevice(0));
    if (hipDeviceEnablePeerAccess(1, 0) != hipSuccess) (void)hipGetLastError();
    for (size_t bytes = 64 * 1024; bytes <= max_bytes; bytes *= 16) {
        int iters = iterations(bytes);
        double reps[5];
        HIP(hipSetDevice(1));
        for (int rep = -1; rep < 5; rep++) {
            double t0 = now();
            for (int i = 0; i < iters; i++) HIP(hipMemcpyPeerAsync(bufs[1], 1, bufs[0], 0, bytes, streams[1]));
            HIP(hipStreamSynchronize(streams[1]));
            if (rep >= 0) reps[rep] = (now() - t0) / iters;
        }
        qsort(reps, 5, sizeof(double), cmp);
        printf("peer %zu %.9e\n", bytes, reps[2]);
        fflush(stdout);
    }
    for (int r = 0; r < 2; r++) {
        HIP(hipSetDevice(r));
        HIP(hipFree(bufs[r]));
        NCCL(ncclCommDestroy(comms[r]));
    }
    return 0;
}
