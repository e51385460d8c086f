//! Build script of hipfft-sys: hip_build_support::library's flow for `hipfft/hipfft.h`.

use hip_build_support::{find, library};
use std::path::Path;

fn main() {
    library::build(&library::Binding {
        library: find::Library {
            name: "hipFFT",
            header: "hipfft/hipfft.h",
            path_var: "HIPFFT_PATH",
            lib_names: &["libhipfft.so", "libhipfft.so.0"],
        },
        crate_name: "hipfft-sys",
        feature: "fft",
        allow: "hipfft.*",
        allow_vars: "HIPFFT.*",
        // `typedef enum hipfftResult_t {...} hipfftResult`: the newtype is the enum; the typedef aliases it.
        status: "hipfftResult_t",
        // Debian sid's hipFFT 6.4.3 (hipFFT 1.0.18), for docs.rs and dynamic-loading builds without headers.
        prebuilt: ("src/prebuilt/hipfft_1_0_18.rs", (1, 0, 18)),
        install: "\x20 Debian trixie (hipFFT 6.1.2), sid and experimental (6.4.3, 7.2.4): apt-get install \
                  libhipfft-dev (scripts/install-math-libs.sh fft); bookworm has no hipFFT package\n\
                  \x20 ROCm from AMD's repository: apt-get install hipfft-dev (it lives in /opt/rocm)\n\
                  \x20 HIP's NVIDIA platform: hipFFT's NVIDIA backend built from its source over cuFFT \
                  (scripts/build-math-nvidia.sh fft, docs/GPU.md), then HIPFFT_PATH=target/hipfft-nvidia\n",
        version,
        link: "hipfft",
        backend: "rocFFT on AMD; on HIP's NVIDIA platform hipFFT's NVIDIA backend over cuFFT (libcufft)",
        run_time_var: "HIP_RS_HIPFFT",
        clang_args: &[],
    });
}

/// `hipfftVersionMajor`/`Minor`/`Patch` from hipfft-version.h beside the header (0s where absent).
fn version(header: &Path) -> (u32, u32, u32) {
    let text =
        std::fs::read_to_string(header.with_file_name("hipfft-version.h")).unwrap_or_default();
    let get = |name| find::define(&text, name).unwrap_or(0);
    (
        get("hipfftVersionMajor"),
        get("hipfftVersionMinor"),
        get("hipfftVersionPatch"),
    )
}
