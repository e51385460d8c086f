//! Expose the HIP platform hip-sys was built for (`DEP_HIPRS_AMDHIP64_PLATFORM`) as `cfg(hip_platform = "...")`,
//! so tests and examples that only make sense on one platform are compiled for it alone; and
//! `cfg(hiprtc_linker)` where the HIPRTC headers declare the linker API (HIPRTC >= 5.3), decided exactly as
//! the `hip` crate decides its `rtc::HAS_LINKER`, so the linker tests are `#[ignore]`d, visibly, on older
//! HIPRTCs (tests/rtc_link.rs checks that the two agree).
//!
//! Also say where the Rust-written kernels' code objects are (`HIP_RS_KERNELS_AMDGPU`, an offload bundle of
//! gfx90a and gfx1100; `HIP_RS_KERNELS_PTX`, sm_70): the committed ones in kernels/prebuilt/, or, with
//! `HIP_RS_BUILD_KERNELS=1`, ones built here from kernels/ by hip-kernel-build, as a user's build.rs would
//! (this needs a GPU-capable Rust toolchain: see docs/RUST_KERNELS.md).
use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(hip_platform, values(\"amd\", \"nvidia\"))");
    let platform = std::env::var("DEP_HIPRS_AMDHIP64_PLATFORM").unwrap_or_else(|_| "amd".into());
    println!("cargo:rustc-cfg=hip_platform=\"{platform}\"");
    println!("cargo::rustc-check-cfg=cfg(hiprtc_linker)");
    if let Ok(bindings) = std::env::var("DEP_HIPRS_HIPRTC_BINDINGS") {
        println!("cargo:rerun-if-changed={bindings}");
        let text = std::fs::read_to_string(&bindings)
            .unwrap_or_else(|e| panic!("read {bindings} (hiprtc-sys's bindings): {e}"));
        if text.contains("fn hiprtcLinkCreate(") {
            println!("cargo:rustc-cfg=hiprtc_linker");
        }
    }

    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=HIP_RS_BUILD_KERNELS");
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let prebuilt = root.join("kernels/prebuilt");
    let (amdgpu, ptx) = if std::env::var_os("HIP_RS_BUILD_KERNELS").is_some_and(|v| v == "1") {
        let built = hip_kernel_build::KernelBuilder::new("kernels")
            .amdgpu(["gfx90a", "gfx1100"])
            .nvptx("sm_70")
            .build();
        match built {
            Ok(hip_kernel_build::Built {
                bundle: Some(b),
                ptx: Some(p),
                ..
            }) => (b, p),
            Ok(other) => {
                eprintln!("hip-rs build.rs: the kernel build left {other:?}");
                std::process::exit(1);
            }
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    } else {
        println!("cargo:rerun-if-changed={}", prebuilt.display());
        (
            prebuilt.join("hip_rs_kernels.hipfb"),
            prebuilt.join("hip_rs_kernels-sm_70.ptx"),
        )
    };
    println!("cargo:rustc-env=HIP_RS_KERNELS_AMDGPU={}", amdgpu.display());
    println!("cargo:rustc-env=HIP_RS_KERNELS_PTX={}", ptx.display());
}
