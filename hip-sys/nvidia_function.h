/* Per-kernel settings on HIP's NVIDIA platform, for C compilers.
 *
 * HIP's hipFuncSetAttribute / hipFuncSetCacheConfig take a host-side kernel stub (`const void*`), which a
 * kernel loaded from a module (`hipFunction_t`, a CUfunction here) is not. The CUDA driver sets them on
 * the loaded kernel itself; these are those one-line mappings (HIP's own hipFuncGetAttribute does the same
 * with cuFuncGetAttribute). bindgen wraps them like every other `static inline` HIP function.
 *
 * Included by wrapper.h on the NVIDIA platform only, and never under nvcc.
 */
#ifndef HIP_RS_NVIDIA_FUNCTION_H
#define HIP_RS_NVIDIA_FUNCTION_H

#if defined(__HIP_PLATFORM_NVIDIA__) && !defined(__CUDACC__)

#include <string.h>

/* cuFuncSetAttribute: `attr` is a hipFunction_attribute (CUfunction_attribute on this platform), e.g.
 * HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES. */
static inline hipError_t hipRsModuleFuncSetAttribute(hipFunction_t f, hipFunction_attribute attr,
                                                     int value) {
    return hipCUResultTohipError(cuFuncSetAttribute(f, (CUfunction_attribute)attr, value));
}

/* The shared memory per block a kernel may use once it opted in (cudaDevAttrMaxSharedMemoryPerBlockOptin):
 * HIP 5.2.3's hipDeviceGetAttribute does not map hipDeviceAttributeSharedMemPerBlockOptin on this platform,
 * and its hipDeviceProp_t has no field for it. */
static inline hipError_t hipRsDeviceSharedMemPerBlockOptin(int* value, int device) {
    return hipCUDAErrorTohipError(
        cudaDeviceGetAttribute(value, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
}

/* cuFuncSetCacheConfig: hipFuncCache_t has CUfunc_cache's values on this platform. */
static inline hipError_t hipRsModuleFuncSetCacheConfig(hipFunction_t f, hipFuncCache_t config) {
    return hipCUResultTohipError(cuFuncSetCacheConfig(f, (CUfunc_cache)config));
}

/* hipPointerGetAttributes: HIP's NVIDIA mapping answers hipErrorInvalidValue for managed memory (HIP 5.2's
 * headers) and for memory CUDA does not know, and always says isManaged = 0. This hands CUDA's own answer
 * through: `type` is a cudaMemoryType (unregistered 0, host 1, device 2, managed 3). */
static inline hipError_t hipRsPointerGetAttributes(int* type, int* device, void** devicePointer,
                                                   void** hostPointer, const void* ptr) {
    struct cudaPointerAttributes a;
    hipError_t e = hipCUDAErrorTohipError(cudaPointerGetAttributes(&a, ptr));
    if (e == hipSuccess) {
        *type = (int)a.type;
        *device = a.device;
        *devicePointer = a.devicePointer;
        *hostPointer = a.hostPointer;
    }
    return e;
}

/* Whether the device supports 64-bit stream memory operations (cuStreamWriteValue64/cuStreamWaitValue64):
 * CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 122 from CUDA 12 (the v2 calls the plain names map
 * to), 93 before (the v1 calls, off unless the driver was loaded with NVreg_EnableStreamMemOPs=1). By
 * number: the names changed between CUDA 11 and 12. HIP does not map the attribute on this platform. */
static inline hipError_t hipRsDeviceStreamMemOps64(int* value, int device) {
#if CUDA_VERSION >= 12000
    CUdevice_attribute attr = (CUdevice_attribute)122;
#else
    CUdevice_attribute attr = (CUdevice_attribute)93;
#endif
    CUdevice d;
    CUresult r = cuDeviceGet(&d, device);
    if (r != CUDA_SUCCESS) {
        return hipCUResultTohipError(r);
    }
    return hipCUResultTohipError(cuDeviceGetAttribute(value, attr, d));
}

/* Stream memory operations: HIP's NVIDIA headers map hipStreamWriteValue32/64 and hipStreamWaitValue32/64
 * with C++ casts (reinterpret_cast), which a C compiler cannot read, so bindgen's C mode leaves them out.
 * These are the same one-line mappings in C (the wait's mask is dropped: CUDA has none, and HIP's own
 * wrapper ignores it too). */
static inline hipError_t hipRsStreamWriteValue64(hipStream_t stream, void* ptr, uint64_t value,
                                                 unsigned int flags) {
    return hipCUResultTohipError(
        cuStreamWriteValue64(stream, (CUdeviceptr)(uintptr_t)ptr, (cuuint64_t)value, flags));
}

static inline hipError_t hipRsStreamWriteValue32(hipStream_t stream, void* ptr, uint32_t value,
                                                 unsigned int flags) {
    return hipCUResultTohipError(
        cuStreamWriteValue32(stream, (CUdeviceptr)(uintptr_t)ptr, (cuuint32_t)value, flags));
}

static inline hipError_t hipRsStreamWaitValue64(hipStream_t stream, void* ptr, uint64_t value,
                                                unsigned int flags) {
    return hipCUResultTohipError(
        cuStreamWaitValue64(stream, (CUdeviceptr)(uintptr_t)ptr, (cuuint64_t)value, flags));
}

static inline hipError_t hipRsStreamWaitValue32(hipStream_t stream, void* ptr, uint32_t value,
                                                unsigned int flags) {
    return hipCUResultTohipError(
        cuStreamWaitValue32(stream, (CUdeviceptr)(uintptr_t)ptr, (cuuint32_t)value, flags));
}

/* Cooperative launch of a kernel loaded from a module (cuLaunchCooperativeKernel): HIP 5.2.3's NVIDIA
 * headers have no hipModuleLaunchCooperativeKernel, later ones map it the same way. The driver refuses a
 * grid that cannot be co-resident (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE). */
static inline hipError_t hipRsModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int gridDimX,
                                                            unsigned int gridDimY, unsigned int gridDimZ,
                                                            unsigned int blockDimX, unsigned int blockDimY,
                                                            unsigned int blockDimZ,
                                                            unsigned int sharedMemBytes, hipStream_t stream,
                                                            void** kernelParams) {
    return hipCUResultTohipError(cuLaunchCooperativeKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX,
                                                           blockDimY, blockDimZ, sharedMemBytes, stream,
                                                           kernelParams));
}

/* What cuMemGetAllocationPropertiesFromHandle reports of a physical allocation: HIP 5.7's NVIDIA mapping
 * of hipMemGetAllocationPropertiesFromHandle converts the caller's struct into a local CUDA one, asks the
 * driver into that copy and never writes the answer back. Plain integers here, so the shim does not
 * depend on which HIP headers declare hipMemAllocationProp. */
static inline hipError_t hipRsMemAllocationProperties(unsigned long long handle, int* type, int* ordinal,
                                                      unsigned long long* handleTypes) {
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    CUresult r = cuMemGetAllocationPropertiesFromHandle(&prop, (CUmemGenericAllocationHandle)handle);
    if (r == CUDA_SUCCESS) {
        *type = (int)prop.type;
        *ordinal = prop.location.id;
        *handleTypes = (unsigned long long)prop.requestedHandleTypes;
    }
    return hipCUResultTohipError(r);
}

#endif
#endif
