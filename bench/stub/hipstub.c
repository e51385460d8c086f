/* A HIP runtime that does nothing, fast: a stand-in libamdhip64 for measuring the hip crate's own host
 * cost on a machine without a GPU (bench/src/bin/host_cost.rs, scripts/host-cost.sh).
 *
 * The crate's `dynamic-loading` feature opens the library HIP_RS_AMDHIP64 names; pointed here, every HIP
 * call the crate makes returns success at once (a launch, an event record, a stream wait: a few
 * nanoseconds), so the time a safe operation takes over the same raw call through this library is the
 * crate's own work, and nothing of a driver's. Each entry point counts its calls (per thread, no atomics):
 * `hipstub_calls` tells how many HIP calls an operation made, which on a real GPU cost 100s of ns each.
 *
 * Not a runtime: no memory is touched (a device allocation is a unique address that is never
 * dereferenced), no work runs, queries answer "done". One device unless HIPSTUB_DEVICES says more (a
 * process with several devices binds its device by asking for the current context on every call).
 *
 * Built by scripts/host-cost.sh: gcc -O2 -shared -fPIC against the HIP headers (AMD platform). */
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* The entry points, for the call counters: X(name). */
#define STUB_CALLS(X)                                                                                   \
    X(hipGetDeviceCount) X(hipSetDevice) X(hipGetDevice) X(hipCtxGetCurrent) X(hipRuntimeGetVersion)  \
    X(hipDriverGetVersion) X(hipGetDeviceProperties) X(hipDeviceGetAttribute)                          \
    X(hipDeviceGetStreamPriorityRange) X(hipDeviceSynchronize) X(hipGetLastError)                      \
    X(hipPeekAtLastError) X(hipEventCreateWithFlags) X(hipEventCreate) X(hipEventDestroy)              \
    X(hipEventRecord) X(hipStreamWaitEvent) X(hipEventSynchronize) X(hipEventQuery)                    \
    X(hipEventElapsedTime) X(hipStreamCreate) X(hipStreamCreateWithFlags)                              \
    X(hipStreamCreateWithPriority) X(hipStreamDestroy) X(hipStreamSynchronize) X(hipStreamQuery)       \
    X(hipStreamIsCapturing) X(hipStreamGetFlags) X(hipModuleLoadData) X(hipModuleUnload)               \
    X(hipModuleGetFunction) X(hipFuncGetAttribute) X(hipModuleLaunchKernel) X(hipMalloc) X(hipFree)    \
    X(hipMemset) X(hipMemsetAsync) X(hipMemcpy) X(hipMemcpyAsync) X(hipMemGetInfo) X(hipInit)          \
    X(hipPointerGetAttributes) X(hipMemGetAddressRange) X(hipDeviceCanAccessPeer)

enum {
#define STUB_ENUM(name) STUB_##name,
    STUB_CALLS(STUB_ENUM)
#undef STUB_ENUM
    STUB_COUNT
};

static const char* const stub_names[STUB_COUNT] = {
#define STUB_NAME(name) #name,
    STUB_CALLS(STUB_NAME)
#undef STUB_NAME
};

static __thread __attribute__((tls_model("initial-exec"))) unsigned long long stub_counts[STUB_COUNT];
static __thread __attribute__((tls_model("initial-exec"))) int stub_current;

#define COUNT(name) (stub_counts[STUB_##name]++)

/* The number of entry points hipstub_name and hipstub_calls know. */
EXPORT int hipstub_entry_points(void) { return STUB_COUNT; }

/* The name of entry point `i`, or NULL. */
EXPORT const char* hipstub_name(int i) { return i >= 0 && i < STUB_COUNT ? stub_names[i] : NULL; }

/* How many times the calling thread called entry point `i` (0 for an unknown index). */
EXPORT unsigned long long hipstub_calls(int i) { return i >= 0 && i < STUB_COUNT ? stub_counts[i] : 0; }

/* Zero the calling thread's counters. */
EXPORT void hipstub_reset(void) { memset(stub_counts, 0, sizeof stub_counts); }

static int devices(void) {
    const char* v = getenv("HIPSTUB_DEVICES");
    int n = v ? atoi(v) : 1;
    return n < 1 ? 1 : n > 8 ? 8 : n;
}

/* A unique, never dereferenced handle. */
static void* handle(void) {
    void* p = malloc(16);
    return p;
}

/* One fake context per device: its address is what hipCtxGetCurrent answers. */
static char stub_contexts[8];

EXPORT hipError_t hipInit(unsigned int flags) { (void)flags; COUNT(hipInit); return hipSuccess; }
EXPORT hipError_t hipGetDeviceCount(int* n) { COUNT(hipGetDeviceCount); *n = devices(); return hipSuccess; }
EXPORT hipError_t hipSetDevice(int d) {
    COUNT(hipSetDevice);
    if (d < 0 || d >= devices()) return hipErrorInvalidDevice;
    stub_current = d;
    return hipSuccess;
}
EXPORT hipError_t hipGetDevice(int* d) { COUNT(hipGetDevice); *d = stub_current; return hipSuccess; }
EXPORT hipError_t hipCtxGetCurrent(hipCtx_t* c) {
    COUNT(hipCtxGetCurrent);
    *c = (hipCtx_t)&stub_contexts[stub_current];
    return hipSuccess;
}
EXPORT hipError_t hipRuntimeGetVersion(int* v) { COUNT(hipRuntimeGetVersion); *v = 50222000; return hipSuccess; }
EXPORT hipError_t hipDriverGetVersion(int* v) { COUNT(hipDriverGetVersion); *v = 50222000; return hipSuccess; }

static void copy_str(char* dst, size_t n, const char* src) {
    strncpy(dst, src, n - 1);
    dst[n - 1] = 0;
}

EXPORT hipError_t hipGetDeviceProperties(hipDeviceProp_t* p, int d) {
    COUNT(hipGetDeviceProperties);
    if (!p || d < 0 || d >= devices()) return hipErrorInvalidValue;
    memset(p, 0, sizeof *p);
    copy_str(p->name, sizeof p->name, "hip-rs host-cost stub");
    copy_str(p->gcnArchName, sizeof p->gcnArchName, "gfx90a:sramecc+:xnack-");
    p->totalGlobalMem = (size_t)64 << 30;
    p->sharedMemPerBlock = 64 << 10;
    p->regsPerBlock = 65536;
    p->warpSize = 64;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = p->maxThreadsDim[2] = 1024;
    p->maxGridSize[0] = 0x7fffffff;
    p->maxGridSize[1] = p->maxGridSize[2] = 65535;
    p->clockRate = 1700000;
    p->totalConstMem = 64 << 10;
    p->major = 9;
    p->multiProcessorCount = 104;
    p->maxThreadsPerMultiProcessor = 2048;
    p->concurrentKernels = 1;
    p->pciBusID = 3 + d;
    p->maxSharedMemoryPerMultiProcessor = 64 << 10;
    p->canMapHostMemory = 1;
    p->cooperativeLaunch = 1;
    p->gcnArch = 910;
    p->managedMemory = 1;
    p->concurrentManagedAccess = 1;
    return hipSuccess;
}

EXPORT hipError_t hipDeviceGetAttribute(int* v, hipDeviceAttribute_t attr, int d) {
    COUNT(hipDeviceGetAttribute);
    if (!v || d < 0 || d >= devices()) return hipErrorInvalidValue;
    switch (attr) {
    case hipDeviceAttributeMaxThreadsPerBlock: *v = 1024; break;
    case hipDeviceAttributeWarpSize: *v = 64; break;
    case hipDeviceAttributeMultiprocessorCount: *v = 104; break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: *v = 64 << 10; break;
    default: *v = 0;
    }
    return hipSuccess;
}
EXPORT hipError_t hipDeviceGetStreamPriorityRange(int* least, int* greatest) {
    COUNT(hipDeviceGetStreamPriorityRange);
    *least = 0;
    *greatest = -1;
    return hipSuccess;
}
EXPORT hipError_t hipDeviceCanAccessPeer(int* can, int d, int peer) {
    (void)d; (void)peer;
    COUNT(hipDeviceCanAccessPeer);
    *can = 1;
    return hipSuccess;
}
EXPORT hipError_t hipDeviceSynchronize(void) { COUNT(hipDeviceSynchronize); return hipSuccess; }
EXPORT hipError_t hipGetLastError(void) { COUNT(hipGetLastError); return hipSuccess; }
EXPORT hipError_t hipPeekAtLastError(void) { COUNT(hipPeekAtLastError); return hipSuccess; }
EXPORT const char* hipGetErrorName(hipError_t e) { (void)e; return "hipStubError"; }
EXPORT const char* hipGetErrorString(hipError_t e) { (void)e; return "an error of the host-cost stub"; }

EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t* e, unsigned flags) {
    (void)flags;
    COUNT(hipEventCreateWithFlags);
    *e = (hipEvent_t)handle();
    return hipSuccess;
}
EXPORT hipError_t hipEventCreate(hipEvent_t* e) { COUNT(hipEventCreate); *e = (hipEvent_t)handle(); return hipSuccess; }
EXPORT hipError_t hipEventDestroy(hipEvent_t e) { COUNT(hipEventDestroy); free(e); return hipSuccess; }
EXPORT hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) { (void)e; (void)s; COUNT(hipEventRecord); return hipSuccess; }
EXPORT hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned flags) {
    (void)s; (void)e; (void)flags;
    COUNT(hipStreamWaitEvent);
    return hipSuccess;
}
EXPORT hipError_t hipEventSynchronize(hipEvent_t e) { (void)e; COUNT(hipEventSynchronize); return hipSuccess; }
EXPORT hipError_t hipEventQuery(hipEvent_t e) { (void)e; COUNT(hipEventQuery); return hipSuccess; }
EXPORT hipError_t hipEventElapsedTime(float* ms, hipEvent_t a, hipEvent_t b) {
    (void)a; (void)b;
    COUNT(hipEventElapsedTime);
    *ms = 0;
    return hipSuccess;
}

EXPORT hipError_t hipStreamCreate(hipStream_t* s) { COUNT(hipStreamCreate); *s = (hipStream_t)handle(); return hipSuccess; }
EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t* s, unsigned flags) {
    (void)flags;
    COUNT(hipStreamCreateWithFlags);
    *s = (hipStream_t)handle();
    return hipSuccess;
}
EXPORT hipError_t hipStreamCreateWithPriority(hipStream_t* s, unsigned flags, int priority) {
    (void)flags; (void)priority;
    COUNT(hipStreamCreateWithPriority);
    *s = (hipStream_t)handle();
    return hipSuccess;
}
EXPORT hipError_t hipStreamDestroy(hipStream_t s) { COUNT(hipStreamDestroy); free(s); return hipSuccess; }
EXPORT hipError_t hipStreamSynchronize(hipStream_t s) { (void)s; COUNT(hipStreamSynchronize); return hipSuccess; }
EXPORT hipError_t hipStreamQuery(hipStream_t s) { (void)s; COUNT(hipStreamQuery); return hipSuccess; }
EXPORT hipError_t hipStreamIsCapturing(hipStream_t s, hipStreamCaptureStatus* st) {
    (void)s;
    COUNT(hipStreamIsCapturing);
    *st = hipStreamCaptureStatusNone;
    return hipSuccess;
}
EXPORT hipError_t hipStreamGetFlags(hipStream_t s, unsigned* flags) {
    (void)s;
    COUNT(hipStreamGetFlags);
    *flags = 0;
    return hipSuccess;
}

EXPORT hipError_t hipModuleLoadData(hipModule_t* m, const void* image) {
    (void)image;
    COUNT(hipModuleLoadData);
    *m = (hipModule_t)handle();
    return hipSuccess;
}
EXPORT hipError_t hipModuleUnload(hipModule_t m) { COUNT(hipModuleUnload); free(m); return hipSuccess; }
EXPORT hipError_t hipModuleGetFunction(hipFunction_t* f, hipModule_t m, const char* name) {
    (void)m; (void)name;
    COUNT(hipModuleGetFunction);
    *f = (hipFunction_t)handle(); /* leaked with the process: a few per run */
    return hipSuccess;
}
EXPORT hipError_t hipFuncGetAttribute(int* v, hipFunction_attribute attr, hipFunction_t f) {
    (void)f;
    COUNT(hipFuncGetAttribute);
    *v = attr == HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
    return hipSuccess;
}
EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                        unsigned by, unsigned bz, unsigned shared, hipStream_t s,
                                        void** params, void** extra) {
    (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shared; (void)s;
    (void)params; (void)extra;
    COUNT(hipModuleLaunchKernel);
    return hipSuccess;
}

/* Device memory: a unique address range per allocation, reserved from the host heap and never touched. */
EXPORT hipError_t hipMalloc(void** p, size_t size) {
    COUNT(hipMalloc);
    *p = malloc(size ? size : 1);
    return *p ? hipSuccess : hipErrorOutOfMemory;
}
EXPORT hipError_t hipFree(void* p) { COUNT(hipFree); free(p); return hipSuccess; }
EXPORT hipError_t hipMemset(void* p, int v, size_t n) { (void)p; (void)v; (void)n; COUNT(hipMemset); return hipSuccess; }
EXPORT hipError_t hipMemsetAsync(void* p, int v, size_t n, hipStream_t s) {
    (void)p; (void)v; (void)n; (void)s;
    COUNT(hipMemsetAsync);
    return hipSuccess;
}
EXPORT hipError_t hipMemcpy(void* d, const void* s, size_t n, hipMemcpyKind k) {
    (void)d; (void)s; (void)n; (void)k;
    COUNT(hipMemcpy);
    return hipSuccess;
}
EXPORT hipError_t hipMemcpyAsync(void* d, const void* s, size_t n, hipMemcpyKind k, hipStream_t st) {
    (void)d; (void)s; (void)n; (void)k; (void)st;
    COUNT(hipMemcpyAsync);
    return hipSuccess;
}
EXPORT hipError_t hipMemGetInfo(size_t* free_, size_t* total) {
    COUNT(hipMemGetInfo);
    *free_ = *total = (size_t)64 << 30;
    return hipSuccess;
}
EXPORT hipError_t hipPointerGetAttributes(hipPointerAttribute_t* a, const void* p) {
    (void)p;
    COUNT(hipPointerGetAttributes);
    memset(a, 0, sizeof *a);
    a->memoryType = hipMemoryTypeDevice;
    return hipSuccess;
}
EXPORT hipError_t hipMemGetAddressRange(hipDeviceptr_t* base, size_t* size, hipDeviceptr_t p) {
    COUNT(hipMemGetAddressRange);
    *base = p;
    *size = 0;
    return hipSuccess;
}
