//! Loading hipBLAS at run time (the `dynamic-loading` feature), as `hip_sys::loader` does for the runtime.
//!
//! hipBLAS is looked for in this order ([`hipblas_candidates`]): `HIP_RS_HIPBLAS` (a file), `HIP_PATH/lib`
//! and `ROCM_PATH/lib`, the system's search path, then `/opt/rocm/lib`, each under the one name whose ABI
//! these bindings describe: `libhipblas.so.N` with N the header's major version (0 for ROCm 5, 2 for
//! ROCm 6, 3 for ROCm 7). A hipBLAS of another major version is never opened: its structs and `Ex`
//! signatures differ.
//!
//! No library: every function returns [`hipblasRsStatusLibraryNotFound`]; a function the library lacks
//! returns [`hipblasRsStatusSymbolNotFound`].

use crate::hipblasStatus_t;
use hip_sys::loader::{candidates, Missing, Os};

/// Not a hipBLAS status: returned when no hipBLAS library could be opened (`dynamic-loading` only).
pub const hipblasRsStatusLibraryNotFound: hipblasStatus_t = hipblasStatus_t(0x4842_0001);
/// Not a hipBLAS status: returned when the loaded hipBLAS does not export the function
/// (`dynamic-loading` only).
pub const hipblasRsStatusSymbolNotFound: hipblasStatus_t = hipblasStatus_t(0x4842_0002);

impl Missing for hipblasStatus_t {
    fn library_missing() -> Self {
        hipblasRsStatusLibraryNotFound
    }
    fn symbol_missing() -> Self {
        hipblasRsStatusSymbolNotFound
    }
}

/// The hipBLAS libraries tried, in order (see the module docs), for headers of major version `major`.
/// `var` reads an environment variable.
pub fn hipblas_candidates(os: Os, major: u32, var: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let name = match os {
        Os::Linux => format!("libhipblas.so.{major}"),
        Os::Windows => "hipblas.dll".to_string(),
    };
    candidates(os, var, "HIP_RS_HIPBLAS", &[name])
}

#[cfg(feature = "dynamic-loading")]
pub use dynamic::*;

#[cfg(feature = "dynamic-loading")]
mod dynamic {
    use super::*;
    hip_sys::library_loader!(
        "hipBLAS",
        hipblas_candidates(
            Os::CURRENT,
            crate::HEADER_VERSION.0,
            &hip_sys::loader::env_var
        )
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_headers_major_version_is_tried_after_the_explicit_file() {
        let vars = |k: &str| match k {
            "HIP_RS_HIPBLAS" => Some("/my/libhipblas.so".to_string()),
            "ROCM_PATH" => Some("/rocm".to_string()),
            _ => None,
        };
        let c = hipblas_candidates(Os::Linux, 2, &vars);
        assert_eq!(c.first().map(String::as_str), Some("/my/libhipblas.so"));
        assert!(c.contains(&"/rocm/lib/libhipblas.so.2".to_string()));
        assert!(c.contains(&"libhipblas.so.2".to_string()));
        assert!(
            c.iter().skip(1).all(|n| n.ends_with("libhipblas.so.2")),
            "{c:?}"
        );
    }
}
