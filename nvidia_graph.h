/* Stream capture and graphs on HIP's NVIDIA platform, for C compilers.
 *
 * HIP 5.2.3's and 5.7.1's nvidia_detail/nvidia_hip_runtime_api.h define these wrappers only inside
 * `#ifdef __CUDACC__` (for nvcc), while the types they use (hipGraph_t, hipKernelNodeParams, ...) are
 * defined for every compiler. Here are the same one-line mappings onto the CUDA runtime, for the calls the
 * safe crate makes, so that graphs work through HIP's NVIDIA platform from C and Rust. bindgen wraps them
 * like every other `static inline` HIP function (wrap_static_fns).
 *
 * Host and event nodes (hipGraphAddHostNode, hipGraphAddEventRecordNode, hipGraphAddEventWaitNode) map
 * onto calls CUDA 11.1 added.
 *
 * CUDA 12 changed two of the calls (cudaGraphInstantiate lost its error node and log, cudaGraphExecUpdate
 * returns a struct): both versions are mapped.
 *
 * Included by wrapper.h on the NVIDIA platform only, and never under nvcc (where HIP's own are defined).
 */
#ifndef HIP_RS_NVIDIA_GRAPH_H
#define HIP_RS_NVIDIA_GRAPH_H

#if defined(__HIP_PLATFORM_NVIDIA__) && !defined(__CUDACC__)

#include <string.h>

static inline hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode) {
    return hipCUDAErrorTohipError(cudaStreamBeginCapture(stream, mode));
}

static inline hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t* graph) {
    return hipCUDAErrorTohipError(cudaStreamEndCapture(stream, graph));
}

/* HIP 5.7.1's NVIDIA header maps it for nvcc only; HIP 5.2.3's not at all. */
static inline hipError_t hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode* mode) {
    return hipCUDAErrorTohipError(cudaThreadExchangeStreamCaptureMode(mode));
}

static inline hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus* status) {
    return hipCUDAErrorTohipError(cudaStreamIsCapturing(stream, status));
}

static inline hipError_t hipGraphDestroy(hipGraph_t graph) {
    return hipCUDAErrorTohipError(cudaGraphDestroy(graph));
}

static inline hipError_t hipGraphInstantiate(hipGraphExec_t* exec, hipGraph_t graph,
                                             hipGraphNode_t* error_node, char* log, size_t log_size) {
#if CUDART_VERSION >= 12000
    /* CUDA 12 dropped the error node and log arguments: report neither. */
    if (error_node) *error_node = NULL;
    if (log && log_size > 0) log[0] = '\0';
    return hipCUDAErrorTohipError(cudaGraphInstantiate(exec, graph, 0));
#else
    return hipCUDAErrorTohipError(cudaGraphInstantiate(exec, graph, error_node, log, log_size));
#endif
}

static inline hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* exec, hipGraph_t graph,
                                                      unsigned long long flags) {
    return hipCUDAErrorTohipError(cudaGraphInstantiateWithFlags(exec, graph, flags));
}

static inline hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t stream) {
    return hipCUDAErrorTohipError(cudaGraphLaunch(exec, stream));
}

static inline hipError_t hipGraphExecDestroy(hipGraphExec_t exec) {
    return hipCUDAErrorTohipError(cudaGraphExecDestroy(exec));
}

static inline hipError_t hipGraphExecUpdate(hipGraphExec_t exec, hipGraph_t graph,
                                            hipGraphNode_t* error_node,
                                            hipGraphExecUpdateResult* result) {
#if CUDART_VERSION >= 12000
    /* CUDA 12 returns both through one struct. */
    cudaGraphExecUpdateResultInfo info;
    cudaError_t err = cudaGraphExecUpdate(exec, graph, &info);
    if (error_node) *error_node = info.errorNode;
    if (result) *result = info.result;
    return hipCUDAErrorTohipError(err);
#else
    return hipCUDAErrorTohipError(cudaGraphExecUpdate(exec, graph, error_node, result));
#endif
}

static inline hipError_t hipGraphGetNodes(hipGraph_t graph, hipGraphNode_t* nodes, size_t* count) {
    return hipCUDAErrorTohipError(cudaGraphGetNodes(graph, nodes, count));
}

static inline hipError_t hipGraphNodeGetType(hipGraphNode_t node, hipGraphNodeType* type) {
    return hipCUDAErrorTohipError(cudaGraphNodeGetType(node, type));
}

/* Graphs built node by node (hip::GraphBuilder) and node updates of executable graphs. A module's
 * kernel is a driver-API CUfunction (hipModuleGetFunction maps to cuModuleGetFunction), so the kernel
 * node calls go through the driver API, as hipModuleLaunchKernel does; hipGraph_t, hipGraphNode_t and
 * hipGraphExec_t are the runtime's handles, which are the driver's (cudaGraph_t is CUgraph). */
static inline hipError_t hipGraphCreate(hipGraph_t* graph, unsigned int flags) {
    return hipCUDAErrorTohipError(cudaGraphCreate(graph, flags));
}

static inline void hip_rs_kernel_node_params(CUDA_KERNEL_NODE_PARAMS* out,
                                             const hipKernelNodeParams* p) {
    memset(out, 0, sizeof(*out));
    out->func = (CUfunction)p->func;
    out->gridDimX = p->gridDim.x;
    out->gridDimY = p->gridDim.y;
    out->gridDimZ = p->gridDim.z;
    out->blockDimX = p->blockDim.x;
    out->blockDimY = p->blockDim.y;
    out->blockDimZ = p->blockDim.z;
    out->sharedMemBytes = p->sharedMemBytes;
    out->kernelParams = p->kernelParams;
    out->extra = p->extra;
}

static inline hipError_t hipGraphAddKernelNode(hipGraphNode_t* node, hipGraph_t graph,
                                               const hipGraphNode_t* deps, size_t count,
                                               const hipKernelNodeParams* params) {
    CUDA_KERNEL_NODE_PARAMS p;
    if (!params) return hipErrorInvalidValue;
    hip_rs_kernel_node_params(&p, params);
    return hipCUResultTohipError(cuGraphAddKernelNode((CUgraphNode*)node, (CUgraph)graph,
                                                      (const CUgraphNode*)deps, count, &p));
}

static inline hipError_t hipGraphExecKernelNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                                         const hipKernelNodeParams* params) {
    CUDA_KERNEL_NODE_PARAMS p;
    if (!params) return hipErrorInvalidValue;
    hip_rs_kernel_node_params(&p, params);
    return hipCUResultTohipError(
        cuGraphExecKernelNodeSetParams((CUgraphExec)exec, (CUgraphNode)node, &p));
}

static inline hipError_t hipGraphAddMemsetNode(hipGraphNode_t* node, hipGraph_t graph,
                                               const hipGraphNode_t* deps, size_t count,
                                               const hipMemsetParams* params) {
    return hipCUDAErrorTohipError(cudaGraphAddMemsetNode(node, graph, deps, count, params));
}

static inline hipError_t hipGraphExecMemsetNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                                         const hipMemsetParams* params) {
    return hipCUDAErrorTohipError(cudaGraphExecMemsetNodeSetParams(exec, node, params));
}

/* A kernel node's parameters, through the driver API as its addition: a module's kernel is a CUfunction.
 * The arguments (kernelParams, extra) are CUDA's own copies, as HIP's are. */
static inline hipError_t hipGraphKernelNodeGetParams(hipGraphNode_t node, hipKernelNodeParams* params) {
    CUDA_KERNEL_NODE_PARAMS p;
    CUresult r;
    if (!params) return hipErrorInvalidValue;
    memset(&p, 0, sizeof(p));
    r = cuGraphKernelNodeGetParams((CUgraphNode)node, &p);
    if (r != CUDA_SUCCESS) return hipCUResultTohipError(r);
    params->func = (void*)p.func;
    params->gridDim.x = p.gridDimX;
    params->gridDim.y = p.gridDimY;
    params->gridDim.z = p.gridDimZ;
    params->blockDim.x = p.blockDimX;
    params->blockDim.y = p.blockDimY;
    params->blockDim.z = p.blockDimZ;
    params->sharedMemBytes = p.sharedMemBytes;
    params->kernelParams = p.kernelParams;
    params->extra = p.extra;
    return hipSuccess;
}

static inline hipError_t hipGraphMemsetNodeGetParams(hipGraphNode_t node, hipMemsetParams* params) {
    return hipCUDAErrorTohipError(cudaGraphMemsetNodeGetParams(node, params));
}

static inline hipError_t hipGraphChildGraphNodeGetGraph(hipGraphNode_t node, hipGraph_t* graph) {
    return hipCUDAErrorTohipError(cudaGraphChildGraphNodeGetGraph(node, graph));
}

static inline hipError_t hipGraphAddMemcpyNode1D(hipGraphNode_t* node, hipGraph_t graph,
                                                 const hipGraphNode_t* deps, size_t count,
                                                 void* dst, const void* src, size_t bytes,
                                                 hipMemcpyKind kind) {
    return hipCUDAErrorTohipError(
        cudaGraphAddMemcpyNode1D(node, graph, deps, count, dst, src, bytes, (enum cudaMemcpyKind)kind));
}

static inline hipError_t hipGraphAddMemcpyNode(hipGraphNode_t* node, hipGraph_t graph,
                                               const hipGraphNode_t* deps, size_t count,
                                               const struct hipMemcpy3DParms* params) {
    return hipCUDAErrorTohipError(cudaGraphAddMemcpyNode(node, graph, deps, count, params));
}

static inline hipError_t hipGraphExecChildGraphNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                                             hipGraph_t child) {
    return hipCUDAErrorTohipError(cudaGraphExecChildGraphNodeSetParams(exec, node, child));
}

static inline hipError_t hipGraphExecMemcpyNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                                         struct hipMemcpy3DParms* params) {
    return hipCUDAErrorTohipError(cudaGraphExecMemcpyNodeSetParams(exec, node, params));
}

static inline hipError_t hipGraphExecMemcpyNodeSetParams1D(hipGraphExec_t exec, hipGraphNode_t node,
                                                           void* dst, const void* src, size_t bytes,
                                                           hipMemcpyKind kind) {
    return hipCUDAErrorTohipError(cudaGraphExecMemcpyNodeSetParams1D(
        exec, node, dst, src, bytes, (enum cudaMemcpyKind)kind));
}

static inline hipError_t hipGraphAddEmptyNode(hipGraphNode_t* node, hipGraph_t graph,
                                              const hipGraphNode_t* deps, size_t count) {
    return hipCUDAErrorTohipError(cudaGraphAddEmptyNode(node, graph, deps, count));
}

static inline hipError_t hipGraphAddChildGraphNode(hipGraphNode_t* node, hipGraph_t graph,
                                                   const hipGraphNode_t* deps, size_t count,
                                                   hipGraph_t child) {
    return hipCUDAErrorTohipError(cudaGraphAddChildGraphNode(node, graph, deps, count, child));
}

/* A graph's shape and its changes after the fact (hip::GraphTopology, GraphBuilder::{remove,
 * add_dependency, remove_dependency}, Graph::try_clone). CUDA 13 gave cudaGraphGetEdges, and the
 * dependency calls, an edge-data array, which HIP's do not ask for. */
static inline hipError_t hipGraphGetEdges(hipGraph_t graph, hipGraphNode_t* from, hipGraphNode_t* to,
                                          size_t* count) {
#if CUDART_VERSION >= 13000
    return hipCUDAErrorTohipError(cudaGraphGetEdges(graph, from, to, NULL, count));
#else
    return hipCUDAErrorTohipError(cudaGraphGetEdges(graph, from, to, count));
#endif
}

static inline hipError_t hipGraphGetRootNodes(hipGraph_t graph, hipGraphNode_t* roots, size_t* count) {
    return hipCUDAErrorTohipError(cudaGraphGetRootNodes(graph, roots, count));
}

static inline hipError_t hipGraphAddDependencies(hipGraph_t graph, const hipGraphNode_t* from,
                                                 const hipGraphNode_t* to, size_t count) {
#if CUDART_VERSION >= 13000
    return hipCUDAErrorTohipError(cudaGraphAddDependencies(graph, from, to, NULL, count));
#else
    return hipCUDAErrorTohipError(cudaGraphAddDependencies(graph, from, to, count));
#endif
}

static inline hipError_t hipGraphRemoveDependencies(hipGraph_t graph, const hipGraphNode_t* from,
                                                    const hipGraphNode_t* to, size_t count) {
#if CUDART_VERSION >= 13000
    return hipCUDAErrorTohipError(cudaGraphRemoveDependencies(graph, from, to, NULL, count));
#else
    return hipCUDAErrorTohipError(cudaGraphRemoveDependencies(graph, from, to, count));
#endif
}

static inline hipError_t hipGraphDestroyNode(hipGraphNode_t node) {
    return hipCUDAErrorTohipError(cudaGraphDestroyNode(node));
}

static inline hipError_t hipGraphClone(hipGraph_t* clone, hipGraph_t graph) {
    return hipCUDAErrorTohipError(cudaGraphClone(clone, graph));
}

/* CUDA 12 gave the plain name the _v2 signature (graph and dependencies out), CUDA 13 the _v3 one (edge
 * data out too); HIP's asks for the status and the id only. */
static inline hipError_t hipStreamGetCaptureInfo(hipStream_t stream, hipStreamCaptureStatus* status,
                                                 unsigned long long* id) {
#if CUDART_VERSION >= 13000
    return hipCUDAErrorTohipError(cudaStreamGetCaptureInfo(stream, status, id, NULL, NULL, NULL, NULL));
#elif CUDART_VERSION >= 12000
    return hipCUDAErrorTohipError(cudaStreamGetCaptureInfo(stream, status, id, NULL, NULL, NULL));
#else
    return hipCUDAErrorTohipError(cudaStreamGetCaptureInfo(stream, status, id));
#endif
}

/* A host function on a capturing stream becomes a host node (hip::Capture::host). */
static inline hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void* userData) {
    return hipCUDAErrorTohipError(cudaLaunchHostFunc(stream, fn, userData));
}

static inline hipError_t hipGraphAddHostNode(hipGraphNode_t* node, hipGraph_t graph,
                                             const hipGraphNode_t* deps, size_t count,
                                             const hipHostNodeParams* params) {
    return hipCUDAErrorTohipError(cudaGraphAddHostNode(node, graph, deps, count, params));
}

static inline hipError_t hipGraphAddEventRecordNode(hipGraphNode_t* node, hipGraph_t graph,
                                                    const hipGraphNode_t* deps, size_t count,
                                                    hipEvent_t event) {
    return hipCUDAErrorTohipError(cudaGraphAddEventRecordNode(node, graph, deps, count, event));
}

static inline hipError_t hipGraphAddEventWaitNode(hipGraphNode_t* node, hipGraph_t graph,
                                                  const hipGraphNode_t* deps, size_t count,
                                                  hipEvent_t event) {
    return hipCUDAErrorTohipError(cudaGraphAddEventWaitNode(node, graph, deps, count, event));
}

#endif
#endif
