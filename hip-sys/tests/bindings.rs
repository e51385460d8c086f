//! The generated bindings are complete: every `hip*` function of `hip_runtime_api.h`.

const GENERATED: &str = include_str!(concat!(env!("OUT_DIR"), "/bindings.rs"));
const PREBUILT: &str = include_str!("../src/prebuilt/hip_5_2_3.rs");

fn functions(code: &str) -> usize {
    code.lines()
        .filter(|l| l.trim_start().starts_with("pub fn hip"))
        .count()
}

#[test]
fn every_runtime_function_is_bound() {
    let (major, minor, _) = hip_sys::HIP_SYS_VERSION;
    let n = functions(GENERATED);
    if hip_sys::HIP_PLATFORM == "amd" && (major, minor) == (5, 2) {
        assert_eq!(
            n, 379,
            "HIP 5.2's hip_runtime_api.h declares 379 hip* functions"
        );
    } else {
        assert!(n >= 300, "only {n} hip* functions bound");
    }
}

#[test]
fn committed_docs_rs_bindings_are_complete() {
    assert_eq!(functions(PREBUILT), 379);
}

#[test]
fn rocm6_names_are_public_and_version_constants_agree() {
    // Taking the address proves the unsuffixed names exist whatever the HIP version.
    let f: unsafe extern "C" fn(*mut hip_sys::hipDeviceProp_t, i32) -> hip_sys::hipError_t =
        hip_sys::hipGetDeviceProperties;
    assert!(f as usize != 0);
    assert_eq!(hip_sys::HIP_SYS_VERSION.0, hip_sys::HIP_VERSION_MAJOR);
    assert_eq!(hip_sys::HIP_SYS_VERSION.1, hip_sys::HIP_VERSION_MINOR);
}
