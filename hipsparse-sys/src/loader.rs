//! Loading hipSPARSE at run time (the `dynamic-loading` feature), as `hip_sys::loader` does for the runtime.
//!
//! hipSPARSE is looked for in this order ([`hipsparse_candidates`]): `HIP_RS_HIPSPARSE` (a file), `HIP_PATH/lib`
//! and `ROCM_PATH/lib`, the system's search path, then `/opt/rocm/lib`, each under every soname these
//! bindings' API has had, newest first: `libhipsparse.so.4` (ROCm 7), `.so.1` (ROCm 6), `.so.0` (ROCm 5).
//!
//! No library: every function returns [`hipsparseRsStatusLibraryNotFound`]; a function the library lacks
//! returns [`hipsparseRsStatusSymbolNotFound`].

use crate::hipsparseStatus_t;
use hip_sys::loader::{candidates, Missing, Os};

/// Not a hipSPARSE status: returned when no hipSPARSE library could be opened (`dynamic-loading` only).
pub const hipsparseRsStatusLibraryNotFound: hipsparseStatus_t = hipsparseStatus_t(0x4853_0001);
/// Not a hipSPARSE status: returned when the loaded hipSPARSE does not export the function
/// (`dynamic-loading` only).
pub const hipsparseRsStatusSymbolNotFound: hipsparseStatus_t = hipsparseStatus_t(0x4853_0002);

impl Missing for hipsparseStatus_t {
    fn library_missing() -> Self {
        hipsparseRsStatusLibraryNotFound
    }
    fn symbol_missing() -> Self {
        hipsparseRsStatusSymbolNotFound
    }
}

/// The sonames tried on Linux, newest first.
pub const SONAMES: &[&str] = &[
    "libhipsparse.so.4",
    "libhipsparse.so.1",
    "libhipsparse.so.0",
];

/// The hipSPARSE libraries tried, in order (see the module docs). `var` reads an environment variable.
pub fn hipsparse_candidates(os: Os, var: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let names: Vec<String> = match os {
        Os::Linux => SONAMES.iter().map(|s| s.to_string()).collect(),
        Os::Windows => vec!["hipsparse.dll".to_string()],
    };
    candidates(os, var, "HIP_RS_HIPSPARSE", &names)
}

#[cfg(feature = "dynamic-loading")]
pub use dynamic::*;

#[cfg(feature = "dynamic-loading")]
mod dynamic {
    use super::*;
    hip_sys::library_loader!(
        "hipSPARSE",
        hipsparse_candidates(Os::CURRENT, &hip_sys::loader::env_var)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_explicit_file_then_every_soname_under_each_root() {
        let vars = |k: &str| match k {
            "HIP_RS_HIPSPARSE" => Some("/my/libhipsparse.so".to_string()),
            "ROCM_PATH" => Some("/rocm".to_string()),
            _ => None,
        };
        let c = hipsparse_candidates(Os::Linux, &vars);
        let mut want = vec!["/my/libhipsparse.so".to_string()];
        want.extend(SONAMES.iter().map(|s| format!("/rocm/lib/{s}")));
        want.extend(SONAMES.iter().map(|s| s.to_string()));
        want.extend(SONAMES.iter().map(|s| format!("/opt/rocm/lib/{s}")));
        assert_eq!(c, want);
        assert_eq!(
            hipsparse_candidates(Os::Windows, &|_| None),
            ["hipsparse.dll"]
        );
    }
}
