//! Build script of hipblaslt-sys: hip_build_support::library's flow for `hipblaslt/hipblaslt.h`.
//!
//! hipBLASLt has no NVIDIA backend upstream (its header's `__HIP_PLATFORM_NVIDIA__` branch is empty and
//! its library has no `nvidia_detail` sources at any tag): on HIP's NVIDIA platform the build stops with
//! a message saying so, before looking for the library.

use hip_build_support::{find, library};
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-env-changed=DOCS_RS");
    if std::env::var("DEP_HIPRS_AMDHIP64_PLATFORM").as_deref() == Ok("nvidia")
        && std::env::var_os("DOCS_RS").is_none()
    {
        eprintln!(
            "\nhipBLASLt has no NVIDIA backend: its upstream sources define nothing for \
             __HIP_PLATFORM_NVIDIA__ (hipblaslt.h) and build no NVIDIA library, at every tag. The `blaslt` \
             feature of `hip` (hipblaslt-sys) builds on AMD's platform only. On NVIDIA use the `blas` \
             feature (hip::blas, hipBLAS over cuBLAS) instead.\n"
        );
        std::process::exit(1);
    }
    library::build(&library::Binding {
        library: find::Library {
            name: "hipBLASLt",
            header: "hipblaslt/hipblaslt.h",
            path_var: "HIPBLASLT_PATH",
            lib_names: &["libhipblaslt.so", "libhipblaslt.so.1", "libhipblaslt.so.0"],
        },
        crate_name: "hipblaslt-sys",
        feature: "blaslt",
        allow: "hipblasLt.*|hipblasStatus_t|hipblasOperation_t|hipblasComputeType_t",
        allow_vars: "HIPBLASLT_.*|HIPBLAS_STATUS_.*|HIPBLAS_OP_.*|HIPBLAS_COMPUTE_.*|HIP_R_.*",
        // `typedef enum {...} hipblasStatus_t` (hipblas-common.h): bindgen names the anonymous enum by its
        // typedef.
        status: "hipblasStatus_t",
        // Debian sid's hipBLASLt 7.1.1 (hipBLASLt 1.1.0), for docs.rs and dynamic-loading builds without
        // headers.
        prebuilt: ("src/prebuilt/hipblaslt_1_1_0.rs", (1, 1, 0)),
        install: "\x20 Debian sid (hipBLASLt 7.1.1) and experimental (7.2.4): apt-get install libhipblaslt-dev \
                  (scripts/install-math-libs.sh blaslt); bookworm and trixie have no hipBLASLt package\n\
                  \x20 ROCm from AMD's repository: apt-get install hipblaslt-dev (it lives in /opt/rocm)\n",
        version,
        link: "hipblaslt",
        backend: "hipBLASLt's own kernels, on AMD GPUs only: it has no NVIDIA backend",
        run_time_var: "HIP_RS_HIPBLASLT",
        // The header is C++ only (<memory>, <regex>; default member initializers).
        clang_args: &["-xc++", "-std=c++17"],
    });
}

/// `HIPBLASLT_VERSION_MAJOR`/`MINOR`/`PATCH` from hipblaslt-version.h beside the header (0s where absent).
fn version(header: &Path) -> (u32, u32, u32) {
    let text =
        std::fs::read_to_string(header.with_file_name("hipblaslt-version.h")).unwrap_or_default();
    let get = |name| find::define(&text, name).unwrap_or(0);
    (
        get("HIPBLASLT_VERSION_MAJOR"),
        get("HIPBLASLT_VERSION_MINOR"),
        get("HIPBLASLT_VERSION_PATCH"),
    )
}
