//! Build script of hiprand-sys: hip_build_support::library's flow for `hiprand/hiprand.h`.

use hip_build_support::{find, library};
use std::path::Path;

fn main() {
    library::build(&library::Binding {
        library: find::Library {
            name: "hipRAND",
            header: "hiprand/hiprand.h",
            path_var: "HIPRAND_PATH",
            lib_names: &["libhiprand.so", "libhiprand.so.1"],
        },
        crate_name: "hiprand-sys",
        feature: "rand",
        allow: "hiprand.*",
        allow_vars: "HIPRAND.*",
        // `typedef enum hiprandStatus {...} hiprandStatus_t`: the newtype is the enum; the typedef aliases it.
        status: "hiprandStatus",
        // Debian sid's hipRAND 6.4.3 (HIPRAND_VERSION 201200), for docs.rs and dynamic-loading builds
        // without headers.
        prebuilt: ("src/prebuilt/hiprand_2_12_0.rs", (2, 12, 0)),
        install: "\x20 Debian bookworm (hipRAND 5.3.3), trixie (5.7.1), sid and experimental (6.4.3): apt-get \
                  install libhiprand-dev (scripts/install-math-libs.sh rand)\n\
                  \x20 ROCm from AMD's repository: apt-get install hiprand-dev (it lives in /opt/rocm)\n\
                  \x20 HIP's NVIDIA platform: hipRAND's NVIDIA backend built from its source over cuRAND \
                  (scripts/build-math-nvidia.sh rand, docs/GPU.md), then HIPRAND_PATH=target/hiprand-nvidia\n",
        version,
        link: "hiprand",
        backend: "rocRAND on AMD; on HIP's NVIDIA platform hipRAND's NVIDIA backend over cuRAND (libcurand)",
        run_time_var: "HIP_RS_HIPRAND",
        clang_args: &["-xc++", "-std=c++14"],
    });
}

/// `HIPRAND_VERSION` (major * 100000 + minor * 100 + patch) from hiprand_version.h beside the header.
fn version(header: &Path) -> (u32, u32, u32) {
    let text =
        std::fs::read_to_string(header.with_file_name("hiprand_version.h")).unwrap_or_default();
    let v = find::define(&text, "HIPRAND_VERSION").unwrap_or(0);
    (v / 100_000, v / 100 % 1000, v % 100)
}
