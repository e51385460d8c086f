//! Expose the HIP platform hip-sys was built for (`DEP_AMDHIP64_PLATFORM`) as `cfg(hip_platform = "...")`,
//! so tests and examples that only make sense on one platform are compiled for it alone.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(hip_platform, values(\"amd\", \"nvidia\"))");
    let platform = std::env::var("DEP_AMDHIP64_PLATFORM").unwrap_or_else(|_| "amd".into());
    println!("cargo:rustc-cfg=hip_platform=\"{platform}\"");
}
