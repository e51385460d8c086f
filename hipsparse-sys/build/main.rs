//! Build script of hipsparse-sys: hip_build_support::library's flow for `hipsparse/hipsparse.h`.

use hip_build_support::{find, library};
use std::path::Path;

fn main() {
    library::build(&library::Binding {
        library: find::Library {
            name: "hipSPARSE",
            header: "hipsparse/hipsparse.h",
            path_var: "HIPSPARSE_PATH",
            lib_names: &["libhipsparse.so", "libhipsparse.so.0", "libhipsparse.so.1", "libhipsparse.so.4"],
        },
        crate_name: "hipsparse-sys",
        feature: "sparse",
        allow: "hipsparse.*",
        allow_vars: "HIPSPARSE.*",
        // `typedef enum {...} hipsparseStatus_t`: bindgen names the anonymous enum by its typedef.
        status: "hipsparseStatus_t",
        // Debian sid's hipSPARSE 6.4.3 (hipSPARSE 3.2.0), for docs.rs and dynamic-loading builds
        // without headers.
        prebuilt: ("src/prebuilt/hipsparse_3_2_0.rs", (3, 2, 0)),
        install: "\x20 Debian bookworm (hipSPARSE 5.3.3), trixie, sid and experimental: apt-get install \
                  libhipsparse-dev (scripts/install-math-libs.sh sparse)\n\
                  \x20 ROCm from AMD's repository: apt-get install hipsparse-dev (it lives in /opt/rocm)\n\
                  \x20 HIP's NVIDIA platform: hipSPARSE's NVIDIA backend built from its source over cuSPARSE \
                  (scripts/build-math-nvidia.sh sparse, docs/GPU.md), then HIPSPARSE_PATH=target/hipsparse-nvidia\n",
        version,
        link: "hipsparse",
        backend: "rocSPARSE on AMD; on HIP's NVIDIA platform hipSPARSE's NVIDIA backend over cuSPARSE (libcusparse)",
        run_time_var: "HIP_RS_HIPSPARSE",
        clang_args: &[],
    });
}

/// `hipsparseVersionMajor`/`Minor`/`Patch` from hipsparse-version.h beside the header (0s where absent).
fn version(header: &Path) -> (u32, u32, u32) {
    let text =
        std::fs::read_to_string(header.with_file_name("hipsparse-version.h")).unwrap_or_default();
    let get = |name| find::define(&text, name).unwrap_or(0);
    (
        get("hipsparseVersionMajor"),
        get("hipsparseVersionMinor"),
        get("hipsparseVersionPatch"),
    )
}
