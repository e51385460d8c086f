//! Build script of hipsolver-sys: hip_build_support::library's flow for `hipsolver/hipsolver.h`.

use hip_build_support::{find, library};
use std::path::Path;

fn main() {
    library::build(&library::Binding {
        library: find::Library {
            name: "hipSOLVER",
            header: "hipsolver/hipsolver.h",
            path_var: "HIPSOLVER_PATH",
            lib_names: &["libhipsolver.so", "libhipsolver.so.0", "libhipsolver.so.1"],
        },
        crate_name: "hipsolver-sys",
        feature: "solver",
        allow: "hipsolver.*",
        allow_vars: "HIPSOLVER.*",
        // `typedef enum {...} hipsolverStatus_t`: bindgen names the anonymous enum by its typedef.
        status: "hipsolverStatus_t",
        // Debian sid's hipSOLVER 6.4.1 (hipSOLVER 2.4.0), for docs.rs and dynamic-loading builds
        // without headers.
        prebuilt: ("src/prebuilt/hipsolver_2_4_0.rs", (2, 4, 0)),
        install: "\x20 Debian trixie (hipSOLVER 5.5.1), sid (6.4.1) and experimental (7.2.4): apt-get install \
                  libhipsolver-dev (scripts/install-math-libs.sh solver); bookworm has no hipSOLVER package\n\
                  \x20 ROCm from AMD's repository: apt-get install hipsolver-dev (it lives in /opt/rocm)\n\
                  \x20 HIP's NVIDIA platform: hipSOLVER's NVIDIA backend built from its source over cuSOLVER \
                  (scripts/build-math-nvidia.sh solver, docs/GPU.md), then HIPSOLVER_PATH=target/hipsolver-nvidia\n",
        version,
        link: "hipsolver",
        backend: "rocSOLVER and rocBLAS on AMD; on HIP's NVIDIA platform hipSOLVER's NVIDIA backend over \
                  cuSOLVER (libcusolver, which needs libcublas, libcublasLt and libcusparse)",
        run_time_var: "HIP_RS_HIPSOLVER",
        clang_args: &[],
    });
}

/// `hipsolverVersionMajor`/`Minor`/`Patch` from hipsolver-version.h beside the header (ROCm 5) or in
/// `internal/` (ROCm 6 on); 0s where absent.
fn version(header: &Path) -> (u32, u32, u32) {
    let text = ["hipsolver-version.h", "internal/hipsolver-version.h"]
        .iter()
        .find_map(|f| std::fs::read_to_string(header.with_file_name(f)).ok())
        .unwrap_or_default();
    let get = |name| find::define(&text, name).unwrap_or(0);
    (
        get("hipsolverVersionMajor"),
        get("hipsolverVersionMinor"),
        get("hipsolverVersionPatch"),
    )
}
