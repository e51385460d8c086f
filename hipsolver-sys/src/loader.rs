//! Loading hipSOLVER at run time (the `dynamic-loading` feature), as `hip_sys::loader` does for the runtime.
//!
//! hipSOLVER is looked for in this order ([`hipsolver_candidates`]): `HIP_RS_HIPSOLVER` (a file), `HIP_PATH/lib`
//! and `ROCM_PATH/lib`, the system's search path, then `/opt/rocm/lib`, each under every soname these
//! bindings' API has had, newest first: `libhipsolver.so.1` (ROCm 7), `.so.0` (ROCm 5 and 6).
//!
//! No library: every function returns [`hipsolverRsStatusLibraryNotFound`]; a function the library lacks
//! returns [`hipsolverRsStatusSymbolNotFound`].

use crate::hipsolverStatus_t;
use hip_sys::loader::{candidates, Missing, Os};

/// Not a hipSOLVER status: returned when no hipSOLVER library could be opened (`dynamic-loading` only).
pub const hipsolverRsStatusLibraryNotFound: hipsolverStatus_t = hipsolverStatus_t(0x484C_0001);
/// Not a hipSOLVER status: returned when the loaded hipSOLVER does not export the function
/// (`dynamic-loading` only).
pub const hipsolverRsStatusSymbolNotFound: hipsolverStatus_t = hipsolverStatus_t(0x484C_0002);

impl Missing for hipsolverStatus_t {
    fn library_missing() -> Self {
        hipsolverRsStatusLibraryNotFound
    }
    fn symbol_missing() -> Self {
        hipsolverRsStatusSymbolNotFound
    }
}

/// The sonames tried on Linux, newest first.
pub const SONAMES: &[&str] = &["libhipsolver.so.1", "libhipsolver.so.0"];

/// The hipSOLVER libraries tried, in order (see the module docs). `var` reads an environment variable.
pub fn hipsolver_candidates(os: Os, var: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let names: Vec<String> = match os {
        Os::Linux => SONAMES.iter().map(|s| s.to_string()).collect(),
        Os::Windows => vec!["hipsolver.dll".to_string()],
    };
    candidates(os, var, "HIP_RS_HIPSOLVER", &names)
}

#[cfg(feature = "dynamic-loading")]
pub use dynamic::*;

#[cfg(feature = "dynamic-loading")]
mod dynamic {
    use super::*;
    hip_sys::library_loader!(
        "hipSOLVER",
        hipsolver_candidates(Os::CURRENT, &hip_sys::loader::env_var)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_explicit_file_then_every_soname_under_each_root() {
        let vars = |k: &str| match k {
            "HIP_RS_HIPSOLVER" => Some("/my/libhipsolver.so".to_string()),
            "ROCM_PATH" => Some("/rocm".to_string()),
            _ => None,
        };
        let c = hipsolver_candidates(Os::Linux, &vars);
        let mut want = vec!["/my/libhipsolver.so".to_string()];
        want.extend(SONAMES.iter().map(|s| format!("/rocm/lib/{s}")));
        want.extend(SONAMES.iter().map(|s| s.to_string()));
        want.extend(SONAMES.iter().map(|s| format!("/opt/rocm/lib/{s}")));
        assert_eq!(c, want);
        assert_eq!(
            hipsolver_candidates(Os::Windows, &|_| None),
            ["hipsolver.dll"]
        );
    }
}
