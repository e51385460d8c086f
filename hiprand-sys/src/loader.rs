//! Loading hipRAND at run time (the `dynamic-loading` feature), as `hip_sys::loader` does for the runtime.
//!
//! hipRAND is looked for in this order ([`hiprand_candidates`]): `HIP_RS_HIPRAND` (a file), `HIP_PATH/lib`
//! and `ROCM_PATH/lib`, the system's search path, then `/opt/rocm/lib`, each as `libhiprand.so.1`: the
//! soname of every hipRAND from ROCm 5.3 to 7.2, whose host API these bindings describe.
//!
//! No library: every function returns [`hiprandRsStatusLibraryNotFound`]; a function the library lacks
//! returns [`hiprandRsStatusSymbolNotFound`].

use crate::hiprandStatus_t;
use hip_sys::loader::{candidates, Missing, Os};

/// Not a hipRAND status: returned when no hipRAND library could be opened (`dynamic-loading` only).
pub const hiprandRsStatusLibraryNotFound: hiprandStatus_t = crate::hiprandStatus(0x4852_0001);
/// Not a hipRAND status: returned when the loaded hipRAND does not export the function
/// (`dynamic-loading` only).
pub const hiprandRsStatusSymbolNotFound: hiprandStatus_t = crate::hiprandStatus(0x4852_0002);

impl Missing for crate::hiprandStatus {
    fn library_missing() -> Self {
        hiprandRsStatusLibraryNotFound
    }
    fn symbol_missing() -> Self {
        hiprandRsStatusSymbolNotFound
    }
}

/// The hipRAND libraries tried, in order (see the module docs). `var` reads an environment variable.
pub fn hiprand_candidates(os: Os, var: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let name = match os {
        Os::Linux => "libhiprand.so.1",
        Os::Windows => "hiprand.dll",
    };
    candidates(os, var, "HIP_RS_HIPRAND", &[name.to_string()])
}

#[cfg(feature = "dynamic-loading")]
pub use dynamic::*;

#[cfg(feature = "dynamic-loading")]
mod dynamic {
    use super::*;
    hip_sys::library_loader!(
        "hipRAND",
        hiprand_candidates(Os::CURRENT, &hip_sys::loader::env_var)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_explicit_file_then_the_one_soname() {
        let vars = |k: &str| match k {
            "HIP_RS_HIPRAND" => Some("/my/libhiprand.so".to_string()),
            "ROCM_PATH" => Some("/rocm".to_string()),
            _ => None,
        };
        let c = hiprand_candidates(Os::Linux, &vars);
        assert_eq!(
            c,
            [
                "/my/libhiprand.so",
                "/rocm/lib/libhiprand.so.1",
                "libhiprand.so.1",
                "/opt/rocm/lib/libhiprand.so.1"
            ]
        );
    }
}
