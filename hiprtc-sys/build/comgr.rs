//! Bindings for comgr, AMD's code object manager: the compiler and linker library HIPRTC itself runs on.
//!
//! The safe crate links bitcode through comgr (HIPRTC's own linker asks the runtime for a device to pick
//! its target, so it cannot link for an explicit architecture on a machine without a GPU). comgr is opened
//! at run time (bindgen's `dynamic_library_name`, through `libloading`): no program gains a link-time
//! dependency on it, and one whose HIP has no comgr still starts.
//!
//! Enum values differ between comgr interface 2.x (ROCm 5) and 3.x (ROCm 6, 7), so they come from the
//! installed header, never from a table kept by hand. Without a header (docs.rs) the bindings committed
//! from comgr 2.4 (Debian bookworm) are used.

use std::path::{Path, PathBuf};

pub const PREBUILT: &str = "src/prebuilt/comgr_2_4.rs";

/// The comgr header of an installation whose include directory is `include`: ROCm >= 5.5 puts it in
/// `amd_comgr/`, older ones (Debian bookworm's 5.2) directly in the include directory.
pub fn header(include: &Path) -> Option<PathBuf> {
    ["amd_comgr/amd_comgr.h", "amd_comgr.h"]
        .iter()
        .map(|rel| include.join(rel))
        .find(|p| p.is_file())
}

/// Write `comgr.rs` into `out`, from the header where there is one, else from the committed bindings.
pub fn generate(include: Option<&Path>, out: &Path) {
    println!("cargo:rerun-if-changed={PREBUILT}");
    let dest = out.join("comgr.rs");
    let Some(header) = include.and_then(header) else {
        std::fs::copy(PREBUILT, &dest).expect("copy prebuilt comgr bindings");
        println!("cargo:comgr_header=");
        return;
    };
    println!("cargo:rerun-if-changed={}", header.display());
    let bindings = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .clang_arg("-xc")
        .allowlist_function("amd_comgr_.*")
        .allowlist_type("amd_comgr_.*")
        .allowlist_var("AMD_COMGR_.*")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .generate_comments(false)
        .dynamic_library_name("Comgr")
        .dynamic_link_require_all(false)
        .generate();
    match bindings {
        Ok(b) => b.write_to_file(&dest).expect("write comgr.rs"),
        Err(e) => crate::fail(&format!(
            "hiprtc-sys: bindgen could not parse comgr's header {}: {e}",
            header.display()
        )),
    }
    println!("cargo:comgr_header={}", header.display());
}
