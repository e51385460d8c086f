//! Loading hipBLASLt at run time (the `dynamic-loading` feature), as `hip_sys::loader` does for the runtime.
//!
//! hipBLASLt is looked for in this order ([`hipblaslt_candidates`]): `HIP_RS_HIPBLASLT` (a file), `HIP_PATH/lib`
//! and `ROCM_PATH/lib`, the system's search path, then `/opt/rocm/lib`, each under every soname these
//! bindings' API has had, newest first: `libhipblaslt.so.1` (hipBLASLt 1.x, ROCm 7: Debian sid 7.1.1,
//! experimental 7.2.4), `.so.0` (hipBLASLt 0.x, ROCm 6).
//!
//! No library: every function returns [`hipblasLtRsStatusLibraryNotFound`]; a function the library lacks
//! returns [`hipblasLtRsStatusSymbolNotFound`].

use crate::hipblasStatus_t;
use hip_sys::loader::{candidates, Missing, Os};

/// Not a hipBLASLt status: returned when no hipBLASLt library could be opened (`dynamic-loading` only).
pub const hipblasLtRsStatusLibraryNotFound: hipblasStatus_t = hipblasStatus_t(0x484c_0001);
/// Not a hipBLASLt status: returned when the loaded hipBLASLt does not export the function
/// (`dynamic-loading` only).
pub const hipblasLtRsStatusSymbolNotFound: hipblasStatus_t = hipblasStatus_t(0x484c_0002);

impl Missing for hipblasStatus_t {
    fn library_missing() -> Self {
        hipblasLtRsStatusLibraryNotFound
    }
    fn symbol_missing() -> Self {
        hipblasLtRsStatusSymbolNotFound
    }
}

/// The sonames tried on Linux, newest first.
pub const SONAMES: &[&str] = &["libhipblaslt.so.1", "libhipblaslt.so.0"];

/// The hipBLASLt libraries tried, in order (see the module docs). `var` reads an environment variable.
pub fn hipblaslt_candidates(os: Os, var: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let names: Vec<String> = match os {
        Os::Linux => SONAMES.iter().map(|s| s.to_string()).collect(),
        Os::Windows => vec!["hipblaslt.dll".to_string()],
    };
    candidates(os, var, "HIP_RS_HIPBLASLT", &names)
}

#[cfg(feature = "dynamic-loading")]
pub use dynamic::*;

#[cfg(feature = "dynamic-loading")]
mod dynamic {
    use super::*;
    hip_sys::library_loader!(
        "hipBLASLt",
        hipblaslt_candidates(Os::CURRENT, &hip_sys::loader::env_var)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_explicit_file_then_every_soname_under_each_root() {
        let vars = |k: &str| match k {
            "HIP_RS_HIPBLASLT" => Some("/my/libhipblaslt.so".to_string()),
            "ROCM_PATH" => Some("/rocm".to_string()),
            _ => None,
        };
        let c = hipblaslt_candidates(Os::Linux, &vars);
        let mut want = vec!["/my/libhipblaslt.so".to_string()];
        want.extend(SONAMES.iter().map(|s| format!("/rocm/lib/{s}")));
        want.extend(SONAMES.iter().map(|s| s.to_string()));
        want.extend(SONAMES.iter().map(|s| format!("/opt/rocm/lib/{s}")));
        assert_eq!(c, want);
        assert_eq!(
            hipblaslt_candidates(Os::Windows, &|_| None),
            ["hipblaslt.dll"]
        );
    }
}
