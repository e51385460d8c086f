// The raw C++ baseline for the hip-rs benchmarks: the same HIP calls the Rust contenders make, written as a
// C++ user would write them. Built by scripts/bench.sh with g++ against the same HIP headers and libraries
// as the Rust crates (no hipcc: host code only), as a shared library the benchmark program loads, so every
// contender runs in one process, on one device, interleaved.
//
// Each function returns nanoseconds (or milliseconds where named) measured with the host's steady clock
// around the whole batch, synchronised at the end; a negative value is a failed HIP call.
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace {
using clock_type = std::chrono::steady_clock;

double since_ns(clock_type::time_point t0) {
    return std::chrono::duration<double, std::nano>(clock_type::now() - t0).count();
}

hipStream_t g_stream = nullptr;
}  // namespace

#define CHECK(call)                          \
    do {                                     \
        if ((call) != hipSuccess) return -1; \
    } while (0)

extern "C" {

// Bind the device and create the stream every launch and event uses.
int bl_init(int device) {
    if (hipSetDevice(device) != hipSuccess) return -1;
    if (hipStreamCreate(&g_stream) != hipSuccess) return -2;
    return 0;
}

// `launches` launches of a kernel without parameters, one block of `threads`, then synchronise.
double bl_launch_empty(hipFunction_t f, int launches, unsigned threads) {
    auto t0 = clock_type::now();
    for (int i = 0; i < launches; ++i) {
        CHECK(hipModuleLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, g_stream, nullptr, nullptr));
    }
    CHECK(hipStreamSynchronize(g_stream));
    return since_ns(t0);
}

// The same for a kernel of eight parameters: four device pointers, two floats, two unsigned ints.
double bl_launch_8(hipFunction_t f, int launches, unsigned threads, void* a, void* b, void* c, void* d,
                   float alpha, float beta, unsigned n, unsigned stride) {
    auto t0 = clock_type::now();
    for (int i = 0; i < launches; ++i) {
        void* params[] = {&a, &b, &c, &d, &alpha, &beta, &n, &stride};
        CHECK(hipModuleLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, g_stream, params, nullptr));
    }
    CHECK(hipStreamSynchronize(g_stream));
    return since_ns(t0);
}

// `reps` synchronous hipMemcpy calls of `bytes` (kind: 0 host->device, 1 device->host, 2 device->device),
// then a device synchronise (device->device hipMemcpy may return before the copy is done).
double bl_copy(int kind, void* dst, const void* src, size_t bytes, int reps) {
    const hipMemcpyKind kinds[] = {hipMemcpyHostToDevice, hipMemcpyDeviceToHost, hipMemcpyDeviceToDevice};
    auto t0 = clock_type::now();
    for (int i = 0; i < reps; ++i) CHECK(hipMemcpy(dst, src, bytes, kinds[kind]));
    CHECK(hipDeviceSynchronize());
    return since_ns(t0);
}

// `reps` pairs of hipEventRecord + hipEventQuery on an idle stream (event without timing).
double bl_event_record_query(int reps) {
    hipEvent_t e;
    CHECK(hipEventCreateWithFlags(&e, hipEventDisableTiming));
    auto t0 = clock_type::now();
    for (int i = 0; i < reps; ++i) {
        CHECK(hipEventRecord(e, g_stream));
        hipError_t q = hipEventQuery(e);
        if (q != hipSuccess && q != hipErrorNotReady) return -1;
    }
    double ns = since_ns(t0);
    CHECK(hipEventSynchronize(e));
    CHECK(hipEventDestroy(e));
    return ns;
}

// `reps` pairs of record + query of `e` on `s` (both made by the caller), nothing else: the raw side of the
// paired event rounds (bench/src/events.rs), timed by the caller around the call.
int bl_event_record_query_on(hipEvent_t e, hipStream_t s, int reps) {
    for (int i = 0; i < reps; ++i) {
        if (hipEventRecord(e, s) != hipSuccess) return -1;
        hipError_t q = hipEventQuery(e);
        if (q != hipSuccess && q != hipErrorNotReady) return -2;
    }
    return 0;
}

// One HIPRTC compile of `source` for `arch`: create, compile, fetch the code, destroy. Writes the code size.
double bl_compile(const char* source, const char* name, const char* arch_option, size_t* code_size) {
    auto t0 = clock_type::now();
    hiprtcProgram prog;
    if (hiprtcCreateProgram(&prog, source, name, 0, nullptr, nullptr) != HIPRTC_SUCCESS) return -1;
    const char* options[] = {arch_option};
    if (hiprtcCompileProgram(prog, 1, options) != HIPRTC_SUCCESS) return -2;
    size_t size = 0;
    if (hiprtcGetCodeSize(prog, &size) != HIPRTC_SUCCESS) return -3;
    std::vector<char> code(size);
    if (hiprtcGetCode(prog, code.data()) != HIPRTC_SUCCESS) return -4;
    if (hiprtcDestroyProgram(&prog) != HIPRTC_SUCCESS) return -5;
    *code_size = size;
    return since_ns(t0);
}

// Copy `n` floats in, run `f(float* data, unsigned n, unsigned iterations)` over them, copy them out, in
// `chunks` pieces spread round-robin over `streams` streams (1 or 2). Pinned host memory. Returns ns.
double bl_pipeline(hipFunction_t f, float* host_in, float* host_out, float* dev, size_t n, int chunks,
                   int streams, unsigned iterations) {
    hipStream_t s[2];
    for (int i = 0; i < streams; ++i) CHECK(hipStreamCreateWithFlags(&s[i], hipStreamNonBlocking));
    size_t chunk = n / chunks;
    auto t0 = clock_type::now();
    for (int c = 0; c < chunks; ++c) {
        hipStream_t st = s[c % streams];
        size_t off = c * chunk;
        unsigned len = (unsigned)chunk;
        float* d = dev + off;
        CHECK(hipMemcpyAsync(d, host_in + off, chunk * sizeof(float), hipMemcpyHostToDevice, st));
        void* params[] = {&d, &len, &iterations};
        CHECK(hipModuleLaunchKernel(f, (len + 255) / 256, 1, 1, 256, 1, 1, 0, st, params, nullptr));
        CHECK(hipMemcpyAsync(host_out + off, d, chunk * sizeof(float), hipMemcpyDeviceToHost, st));
    }
    for (int i = 0; i < streams; ++i) CHECK(hipStreamSynchronize(s[i]));
    double ns = since_ns(t0);
    for (int i = 0; i < streams; ++i) CHECK(hipStreamDestroy(s[i]));
    return ns;
}

// `n` launches of `f` on `stream` and nothing else (no timer, no synchronize): the caller times around it
// exactly as it does around the safe launches, on the same stream. Returns 0, or -1 on a failure.
int bl_launch_only(hipFunction_t f, int n, unsigned threads, hipStream_t stream) {
    for (int i = 0; i < n; ++i) {
        if (hipModuleLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, stream, nullptr, nullptr) != hipSuccess)
            return -1;
    }
    return 0;
}

// `n` launches of `f` with `params`, alternating between streams `a` and `b` (pass the same stream twice
// for one stream), nothing else: the raw side of the memory model's cost (bench/src/ordering.rs).
int bl_launch_args(hipFunction_t f, int n, unsigned threads, hipStream_t a, hipStream_t b, void** params) {
    for (int i = 0; i < n; ++i) {
        hipStream_t s = (i & 1) ? b : a;
        if (hipModuleLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, s, params, nullptr) != hipSuccess) return -1;
    }
    return 0;
}

// `kernels` empty launches captured into one graph, replayed `replays` times (each replay synchronised).
// Returns ns per replay; *one_by_one gets ns for the same launches made one by one (+ synchronise).
// HIP 5.2.3's NVIDIA headers hide hipStreamBeginCapture/hipGraph* from non-nvcc compilers: use CUDA there.
#ifdef __HIP_PLATFORM_NVIDIA__
#define BL_G(name) cuda##name
#define BL_OK cudaSuccess
typedef cudaGraph_t bl_graph_t;
typedef cudaGraphExec_t bl_graph_exec_t;
#else
#define BL_G(name) hip##name
#define BL_OK hipSuccess
typedef hipGraph_t bl_graph_t;
typedef hipGraphExec_t bl_graph_exec_t;
#endif
#define GCHECK(call)                      \
    do {                                  \
        if ((call) != BL_OK) return -2;   \
    } while (0)
double bl_graph_replay(hipFunction_t f, int kernels, int replays, unsigned threads, double* one_by_one) {
    auto t0 = clock_type::now();
    for (int r = 0; r < replays; ++r) {
        for (int i = 0; i < kernels; ++i) {
            CHECK(hipModuleLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, g_stream, nullptr, nullptr));
        }
        CHECK(hipStreamSynchronize(g_stream));
    }
    *one_by_one = since_ns(t0) / replays;
    bl_graph_t graph;
    bl_graph_exec_t exec;
    GCHECK(BL_G(StreamBeginCapture)(g_stream, BL_G(StreamCaptureModeGlobal)));
    for (int i = 0; i < kernels; ++i) {
        CHECK(hipModuleLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, g_stream, nullptr, nullptr));
    }
    GCHECK(BL_G(StreamEndCapture)(g_stream, &graph));
    GCHECK(BL_G(GraphInstantiateWithFlags)(&exec, graph, 0));  // one signature on CUDA 11 and 12
    GCHECK(BL_G(GraphLaunch)(exec, g_stream));  // warm-up
    CHECK(hipStreamSynchronize(g_stream));
    t0 = clock_type::now();
    for (int r = 0; r < replays; ++r) {
        GCHECK(BL_G(GraphLaunch)(exec, g_stream));
        CHECK(hipStreamSynchronize(g_stream));
    }
    double ns = since_ns(t0) / replays;
    GCHECK(BL_G(GraphExecDestroy)(exec));
    GCHECK(BL_G(GraphDestroy)(graph));
    return ns;
}
}
