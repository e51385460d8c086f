//! What a missing library or function means: the `dynamic-loading` codes of the sys crates turned into
//! [`Error::LibraryNotFound`] (with every path the loader tried and what to install) or
//! [`Error::NotSupported`].

use super::Error;

/// The `dynamic-loading` codes (never returned by a linked runtime): a library that could not be opened, or
/// a function the loaded one lacks. Both sys crates use the same two values.
pub(super) fn not_loaded(call: &'static str, raw: u32) -> Option<Error> {
    if raw == hip_sys::hipRsErrorSymbolNotFound.0 {
        return Some(Error::NotSupported {
            what: call,
            reason: "the HIP runtime or HIPRTC that was loaded does not export this function",
        });
    }
    if raw != hip_sys::hipRsErrorLibraryNotFound.0 {
        return None;
    }
    let rtc = call.starts_with("hiprtc");
    #[cfg(hip_platform = "nvidia")]
    let (library, install) = (
        if rtc {
            "NVRTC (HIPRTC on HIP's NVIDIA platform)"
        } else {
            "the CUDA runtime and driver (HIP's NVIDIA platform)"
        },
        nvidia_install(),
    );
    #[cfg(all(windows, not(hip_platform = "nvidia")))]
    let (library, install) = (
        if rtc {
            "HIPRTC (hiprtcMMmm.dll, or amdhip64 on ROCm 5)"
        } else {
            "the HIP runtime (amdhip64_N.dll)"
        },
        "AMD's HIP SDK for Windows (its bin folder holds amdhip64_N.dll and hiprtcMMmm.dll; it sets \
         HIP_PATH); or point HIP_RS_AMDHIP64 / HIP_RS_HIPRTC at the DLL",
    );
    #[cfg(all(not(windows), not(hip_platform = "nvidia")))]
    let (library, install) = (
        if rtc {
            "HIPRTC (libhiprtc, or libamdhip64 on ROCm 5)"
        } else {
            "the HIP runtime (libamdhip64)"
        },
        "Debian/Ubuntu: apt-get install libamdhip64-dev (HIPRTC from ROCm 6: libhiprtc-dev); ROCm: the \
         HIP runtime packages; or point HIP_RS_AMDHIP64 / HIP_RS_HIPRTC at the library",
    );
    Some(Error::LibraryNotFound {
        library,
        tried: loader_failure(rtc),
        install,
    })
}

/// What to install on HIP's NVIDIA platform: the driver, and the runtime and NVRTC of the CUDA major
/// version the build's bindings were made for (PyPI's packages of that version by name).
#[cfg(hip_platform = "nvidia")]
fn nvidia_install() -> &'static str {
    /// The hint for CUDA major version `$v` (a literal), with PyPI's package names of that version.
    #[cfg(feature = "dynamic-loading")]
    macro_rules! cuda_version_install {
        ($v:literal) => {
            concat!(
                "the NVIDIA driver (libcuda.so.1), and the CUDA ",
                $v,
                " runtime and NVRTC this program was built with (a CUDA ",
                $v,
                " toolkit, or PyPI's nvidia-cuda-runtime-cu",
                $v,
                " / nvidia-cuda-nvrtc-cu",
                $v,
                " on the loader's path); or point HIP_RS_CUDART / HIP_RS_CUDA_DRIVER / HIP_RS_NVRTC at \
                 the files"
            )
        };
    }
    #[cfg(feature = "dynamic-loading")]
    {
        let soname = hip_sys::loader::CUDART_SONAME;
        if soname.starts_with("libcudart.so.11") {
            return cuda_version_install!("11");
        }
        if soname.starts_with("libcudart.so.12") {
            return cuda_version_install!("12");
        }
    }
    "the NVIDIA driver (libcuda.so.1), and the CUDA runtime and NVRTC of the CUDA major version this \
     program was built with (a CUDA toolkit of that version); or point HIP_RS_CUDART / \
     HIP_RS_CUDA_DRIVER / HIP_RS_NVRTC at the files"
}

#[cfg(feature = "dynamic-loading")]
fn loader_failure(rtc: bool) -> Vec<String> {
    let tried = if rtc {
        hiprtc_sys::loader::failure()
    } else {
        hip_sys::loader::failure()
    };
    tried.map(<[String]>::to_vec).unwrap_or_default()
}

#[cfg(not(feature = "dynamic-loading"))]
fn loader_failure(_: bool) -> Vec<String> {
    Vec::new()
}
