//! Build script of hipblas-sys: hip_build_support::library's flow for `hipblas/hipblas.h`.

use hip_build_support::{find, library};
use std::path::Path;

fn main() {
    library::build(&library::Binding {
        library: find::Library {
            name: "hipBLAS",
            header: "hipblas/hipblas.h",
            path_var: "HIPBLAS_PATH",
            lib_names: &[
                "libhipblas.so",
                "libhipblas.so.3",
                "libhipblas.so.2",
                "libhipblas.so.0",
            ],
        },
        crate_name: "hipblas-sys",
        feature: "blas",
        allow: "hipblas.*",
        allow_vars: "HIPBLAS.*|hipblasVersion.*",
        status: "hipblasStatus_t",
        // Debian sid's hipBLAS 6.4.4 (hipBLAS 2.4.0), for docs.rs and dynamic-loading builds without headers.
        prebuilt: ("src/prebuilt/hipblas_2_4_0.rs", (2, 4, 0)),
        install: "\x20 Debian trixie (hipBLAS 5.5.1), sid (6.4.4), experimental (7.2.4): apt-get install \
                  libhipblas-dev (scripts/install-math-libs.sh blas); bookworm has no hipBLAS package\n\
                  \x20 ROCm from AMD's repository: apt-get install hipblas-dev (it lives in /opt/rocm)\n\
                  \x20 HIP's NVIDIA platform: hipBLAS's NVIDIA backend built from its source over cuBLAS \
                  (scripts/build-math-nvidia.sh blas, docs/GPU.md), then HIPBLAS_PATH=target/hipblas-nvidia\n",
        version,
        link: "hipblas",
        backend: "rocBLAS on AMD; on HIP's NVIDIA platform hipBLAS's NVIDIA backend over cuBLAS (libcublas, libcublasLt)",
        run_time_var: "HIP_RS_HIPBLAS",
        clang_args: &[],
    });
}

/// `hipblasVersionMajor`/`Minor`/`Patch` from hipblas-version.h beside the header (0s where absent).
fn version(header: &Path) -> (u32, u32, u32) {
    let text =
        std::fs::read_to_string(header.with_file_name("hipblas-version.h")).unwrap_or_default();
    let get = |name| find::define(&text, name).unwrap_or(0);
    (
        get("hipblasVersionMajor"),
        get("hipblasVersionMinor"),
        get("hipblasVersionPatch"),
    )
}
