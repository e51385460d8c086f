//! hip-sys against the real HIP runtime. Runs on any machine with HIP installed, with or without a GPU.
use hip_sys::*;
use std::ffi::CStr;

fn name(code: hipError_t) -> String {
    unsafe { CStr::from_ptr(hipGetErrorName(code)) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn device_count_is_no_device_or_a_real_count() {
    let mut n = -1;
    let rc = unsafe { hipGetDeviceCount(&mut n) };
    if rc == hipSuccess {
        assert!(n > 0, "hipGetDeviceCount succeeded with {n} devices");
    } else {
        assert_eq!(rc, hipErrorNoDevice, "unexpected {}", name(rc));
        assert_eq!(n, 0);
    }
}

#[test]
fn runtime_version_matches_the_headers_major_minor() {
    let mut v = 0;
    assert_eq!(unsafe { hipRuntimeGetVersion(&mut v) }, hipSuccess);
    // HIP_VERSION = major * 10_000_000 + minor * 100_000 + patch
    let runtime = v as u32 / 100_000;
    let headers = HIP_VERSION_MAJOR * 100 + HIP_VERSION_MINOR;
    if HIP_PLATFORM == "amd" && cfg!(feature = "dynamic-loading") {
        // Opened at run time: CI runs binaries built on 5.2.3's headers against 5.7.1, 6.4.3 and 7.2.4.
        assert!(runtime >= headers, "runtime {v}, headers {headers}");
    } else if HIP_PLATFORM == "amd" {
        assert_eq!(runtime, headers, "runtime {v}");
    } else {
        assert!(v > 0);
    }
}

/// On NVIDIA, hipGetErrorName is cudaGetErrorName: the runtime answers with CUDA's names.
const PREFIX: &str = if cfg!(hip_platform = "nvidia") {
    "cuda"
} else {
    "hip"
};

#[test]
#[cfg(hip_platform = "nvidia")]
fn error_names_come_from_the_cuda_runtime() {
    assert_eq!(name(hipSuccess), format!("{PREFIX}Success"));
    assert_eq!(name(hipErrorInvalidValue), "cudaErrorInvalidValue");
    assert_eq!(name(hipErrorNoDevice), "cudaErrorNoDevice");
}

#[test]
#[cfg(hip_platform = "amd")]
fn error_names_come_from_the_runtime() {
    assert_eq!(name(hipSuccess), format!("{PREFIX}Success"));
    assert_eq!(name(hipErrorInvalidValue), "hipErrorInvalidValue");
    assert_eq!(name(hipErrorNoDevice), "hipErrorNoDevice");
    assert_eq!(name(hipErrorInvalidDevice), "hipErrorInvalidDevice");
    // Aliases share one value and one name.
    assert_eq!(hipErrorOutOfMemory, hipErrorMemoryAllocation);
    assert_eq!(name(hipErrorMemoryAllocation), name(hipErrorOutOfMemory));
    let msg = unsafe { CStr::from_ptr(hipGetErrorString(hipErrorNoDevice)) };
    assert!(!msg.to_bytes().is_empty());
}

#[test]
fn integer_macros_are_constants() {
    assert_eq!(hipStreamNonBlocking, 1);
    assert_eq!(hipEventDisableTiming, 2);
    assert_eq!(hipHostMallocDefault, 0);
    assert_eq!(hipMemAttachGlobal, 1);
    assert_eq!(hipMemcpyHostToDevice, 1);
    assert_eq!(hipMemcpyDeviceToHost, 2);
}
