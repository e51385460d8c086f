/* A stand-in for AMD's amdhip64 DLL, for running the crates' Windows build under Wine where no Windows GPU
 * (and no HIP SDK) exists: scripts/check-windows-wine.sh builds it with mingw-w64.
 *
 * It answers like HIP 5.2.3 on a machine without a GPU: versions succeed, hipGetDeviceCount says
 * hipErrorNoDevice (100), and hiprtcVersion answers, so HIPRTC is found inside the runtime as on ROCm 5.
 * Each call prints one line to stderr ("stub_amdhip64: <function> ..."), so a run shows which calls
 * reached the DLL. Every other symbol the crates' loader looks up is exported by a file the script
 * generates from the loader's own table (loader_report --names): each prints "unexpected call" and
 * returns hipErrorNotSupported (801).
 *
 * No HIP header is included (those on the build machine are Linux's): the few types are spelled out. */
#include <stdio.h>

typedef int hipError_t;
typedef int hiprtcResult;

#define EXPORT __declspec(dllexport)
#define HIP_VERSION_5_2_3 50221153 /* major * 10^7 + minor * 10^5 + patch, as hip_version.h */

static void say(const char *what) {
    fprintf(stderr, "stub_amdhip64: %s\n", what);
    fflush(stderr);
}

/* Called by the generated exports. */
int hip_rs_stub_unexpected(const char *name) {
    fprintf(stderr, "stub_amdhip64: unexpected call to %s: hipErrorNotSupported (801)\n", name);
    fflush(stderr);
    return 801;
}

EXPORT hipError_t hipGetDeviceCount(int *count) {
    say("hipGetDeviceCount -> 0 devices, hipErrorNoDevice (100)");
    if (count) *count = 0;
    return 100;
}

EXPORT hipError_t hipRuntimeGetVersion(int *version) {
    say("hipRuntimeGetVersion -> 50221153");
    if (!version) return 1;
    *version = HIP_VERSION_5_2_3;
    return 0;
}

EXPORT hipError_t hipDriverGetVersion(int *version) {
    say("hipDriverGetVersion -> 50221153");
    if (!version) return 1;
    *version = HIP_VERSION_5_2_3;
    return 0;
}

EXPORT const char *hipGetErrorName(hipError_t e) {
    say("hipGetErrorName");
    switch (e) {
    case 0: return "hipSuccess";
    case 100: return "hipErrorNoDevice";
    case 801: return "hipErrorNotSupported";
    default: return "hipErrorUnknown";
    }
}

EXPORT const char *hipGetErrorString(hipError_t e) {
    say("hipGetErrorString");
    switch (e) {
    case 0: return "no error";
    case 100: return "no ROCm-capable device is detected (stub_amdhip64, the test DLL)";
    case 801: return "operation not supported (stub_amdhip64, the test DLL)";
    default: return "unknown error (stub_amdhip64, the test DLL)";
    }
}

EXPORT hiprtcResult hiprtcVersion(int *major, int *minor) {
    say("hiprtcVersion -> 5.2");
    if (!major || !minor) return 3; /* HIPRTC_ERROR_INVALID_INPUT */
    *major = 5;
    *minor = 2;
    return 0;
}

EXPORT const char *hiprtcGetErrorString(hiprtcResult r) {
    say("hiprtcGetErrorString");
    return r == 0 ? "HIPRTC_SUCCESS" : "HIPRTC error (stub_amdhip64, the test DLL)";
}
