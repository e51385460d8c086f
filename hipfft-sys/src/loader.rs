//! Loading hipFFT at run time (the `dynamic-loading` feature), as `hip_sys::loader` does for the runtime.
//!
//! hipFFT is looked for in this order ([`hipfft_candidates`]): `HIP_RS_HIPFFT` (a file), `HIP_PATH/lib`
//! and `ROCM_PATH/lib`, the system's search path, then `/opt/rocm/lib`, each as `libhipfft.so.0`: the
//! soname of every hipFFT from ROCm 5.2 to 7.2, whose API these bindings describe.
//!
//! No library: every function returns [`hipfftRsResultLibraryNotFound`]; a function the library lacks
//! returns [`hipfftRsResultSymbolNotFound`].

use crate::hipfftResult;
use hip_sys::loader::{candidates, Missing, Os};

/// Not a hipFFT result: returned when no hipFFT library could be opened (`dynamic-loading` only).
pub const hipfftRsResultLibraryNotFound: hipfftResult = crate::hipfftResult_t(0x4846_0001);
/// Not a hipFFT result: returned when the loaded hipFFT does not export the function
/// (`dynamic-loading` only).
pub const hipfftRsResultSymbolNotFound: hipfftResult = crate::hipfftResult_t(0x4846_0002);

impl Missing for crate::hipfftResult_t {
    fn library_missing() -> Self {
        hipfftRsResultLibraryNotFound
    }
    fn symbol_missing() -> Self {
        hipfftRsResultSymbolNotFound
    }
}

/// The hipFFT libraries tried, in order (see the module docs). `var` reads an environment variable.
pub fn hipfft_candidates(os: Os, var: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let name = match os {
        Os::Linux => "libhipfft.so.0",
        Os::Windows => "hipfft.dll",
    };
    candidates(os, var, "HIP_RS_HIPFFT", &[name.to_string()])
}

#[cfg(feature = "dynamic-loading")]
pub use dynamic::*;

#[cfg(feature = "dynamic-loading")]
mod dynamic {
    use super::*;
    hip_sys::library_loader!(
        "hipFFT",
        hipfft_candidates(Os::CURRENT, &hip_sys::loader::env_var)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_explicit_file_then_the_one_soname() {
        let vars = |k: &str| match k {
            "HIP_RS_HIPFFT" => Some("/my/libhipfft.so".to_string()),
            "ROCM_PATH" => Some("/rocm".to_string()),
            _ => None,
        };
        let c = hipfft_candidates(Os::Linux, &vars);
        assert_eq!(
            c,
            [
                "/my/libhipfft.so",
                "/rocm/lib/libhipfft.so.0",
                "libhipfft.so.0",
                "/opt/rocm/lib/libhipfft.so.0"
            ]
        );
    }
}
