//! `cfg(hip6)` when hip-sys was built from ROCm >= 6 headers (its `links` metadata gives the version):
//! those rename `hipGetDeviceProperties` to `hipGetDevicePropertiesR0600` with the 6.x layout of
//! `hipDeviceProp_t`, which a `hip` crate built from the same headers asks for (the RCCL shadow tests are
//! built in the experimental chroot, HIP 7.2.4).
//! `cfg(hip7)` from ROCm 7, whose `hipMemAllocationProp` holds its requested handle type in a union.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(hip6)");
    println!("cargo::rustc-check-cfg=cfg(hip7)");
    let version = std::env::var("DEP_HIPRS_AMDHIP64_VERSION").unwrap_or_default();
    let major: u32 = version
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major >= 6 {
        println!("cargo:rustc-cfg=hip6");
    }
    if major >= 7 {
        println!("cargo:rustc-cfg=hip7");
    }
}
