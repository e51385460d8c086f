/* The one header the sys crates hand to bindgen.
 *
 * hip-sys parses it as is: the HIP runtime API and its version macros.
 * hiprtc-sys defines HIP_RS_HIPRTC first and gets the runtime compiler's API only.
 * The platform macro (__HIP_PLATFORM_AMD__ or __HIP_PLATFORM_NVIDIA__) comes from the build script.
 * On NVIDIA, nvidia_graph.h adds the capture and graph calls HIP's NVIDIA header keeps for nvcc, and
 * nvidia_function.h the per-kernel settings of a module's kernels.
 */
#ifndef HIP_RS_WRAPPER_H
#define HIP_RS_WRAPPER_H

#ifdef HIP_RS_HIPRTC
#include <hip/hiprtc.h>
#else
#include <hip/hip_version.h>
#include <hip/hip_runtime_api.h>
#ifdef __HIP_PLATFORM_NVIDIA__
#include "nvidia_graph.h"
#include "nvidia_function.h"
#endif
#endif

#endif
