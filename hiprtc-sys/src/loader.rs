//! Loading HIPRTC at run time (the `dynamic-loading` feature), as `hip_sys::loader` does for the runtime.
//!
//! HIPRTC is looked for in this order ([`hiprtc_candidates`]): `HIP_RS_HIPRTC` (a file), `HIP_PATH/lib` and
//! `ROCM_PATH/lib`, then `libhiprtc.so.7`, `.6`, `libhiprtc.so` through the system's search path, then
//! inside the HIP runtime itself (ROCm 5.x has no separate HIPRTC library; needs `hiprtcCreateProgram`
//! there), then `/opt/rocm/lib`. On Windows the names are `hiprtcMMmm.dll` (`hiprtc0702.dll`, major and
//! minor, newest first).
//!
//! No library: every function returns [`hiprtcRsErrorLibraryNotFound`]; a function the library lacks (the
//! linker on 5.2) returns [`hiprtcRsErrorSymbolNotFound`].

use crate::hiprtcResult;
use hip_sys::loader::{candidates, Missing, Os};

/// Not a HIPRTC code: returned when no HIPRTC library could be opened (`dynamic-loading` only).
pub const hiprtcRsErrorLibraryNotFound: hiprtcResult = hiprtcResult(0x4852_0001);
/// Not a HIPRTC code: returned when the loaded HIPRTC does not export the function (`dynamic-loading`
/// only).
pub const hiprtcRsErrorSymbolNotFound: hiprtcResult = hiprtcResult(0x4852_0002);

impl Missing for hiprtcResult {
    fn library_missing() -> Self {
        hiprtcRsErrorLibraryNotFound
    }
    fn symbol_missing() -> Self {
        hiprtcRsErrorSymbolNotFound
    }
}

/// The HIPRTC libraries tried before looking inside the HIP runtime, in order (see the module docs).
/// `var` reads an environment variable.
pub fn hiprtc_candidates(os: Os, var: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let names: Vec<String> = match os {
        Os::Linux => ["libhiprtc.so.7", "libhiprtc.so.6", "libhiprtc.so"]
            .iter()
            .map(|n| n.to_string())
            .collect(),
        Os::Windows => (5..=7)
            .rev()
            .flat_map(|major| {
                (0..=9)
                    .rev()
                    .map(move |minor| format!("hiprtc{major:02}{minor:02}.dll"))
            })
            .collect(),
    };
    let all = candidates(os, var, "HIP_RS_HIPRTC", &names);
    // /opt/rocm comes after HIPRTC inside the runtime: split it off for the caller.
    all.into_iter()
        .filter(|c| !c.starts_with("/opt/rocm/"))
        .collect()
}

#[cfg(all(feature = "dynamic-loading", not(hip_platform = "nvidia")))]
pub use dynamic::*;

#[cfg(all(feature = "dynamic-loading", hip_platform = "nvidia"))]
pub use nvidia::*;

/// `dynamic-loading` on HIP's NVIDIA platform: NVRTC of the CUDA the crates were built with
/// (`hip_sys::loader::NVRTC_SONAME`, e.g. `libnvrtc.so.12`), looked for at `HIP_RS_NVRTC` (a file), then
/// as `hip_sys::loader::cuda_candidates` says. HIPRTC is inline code over NVRTC there: every `hiprtc*`
/// function first checks that NVRTC opened, else returns [`hiprtcRsErrorLibraryNotFound`].
#[cfg(all(feature = "dynamic-loading", hip_platform = "nvidia"))]
mod nvidia {
    use hip_sys::loader::{cuda_candidates, env_var, open_first, Opened, NVRTC_SONAME};
    use std::sync::OnceLock;

    struct Loaded {
        opened: Opened,
        functions: crate::nvidia_dynamic::nvrtc::DynamicFunctions,
    }

    static NVRTC: OnceLock<Result<Loaded, Vec<String>>> = OnceLock::new();

    fn load() -> Result<Loaded, Vec<String>> {
        let opened = open_first(&cuda_candidates(&env_var, "HIP_RS_NVRTC", NVRTC_SONAME))?;
        // SAFETY: the candidates name NVRTC of the CUDA whose nvrtc.h the trampolines were bound from.
        let functions =
            unsafe { crate::nvidia_dynamic::nvrtc::DynamicFunctions::resolve(&opened.library) };
        Ok(Loaded { opened, functions })
    }

    /// NVRTC's table, opening it on first use; `None` where it did not open.
    #[doc(hidden)]
    #[inline]
    pub fn nvrtc_functions() -> Option<&'static crate::nvidia_dynamic::nvrtc::DynamicFunctions> {
        NVRTC.get_or_init(load).as_ref().ok().map(|l| &l.functions)
    }

    /// Whether NVRTC opened (opening it on first use).
    #[doc(hidden)]
    #[inline]
    pub fn ready() -> bool {
        nvrtc_functions().is_some()
    }

    /// The file NVRTC was opened from, opening it on first use.
    pub fn loaded_from() -> Option<&'static str> {
        NVRTC
            .get_or_init(load)
            .as_ref()
            .ok()
            .map(|l| l.opened.path.as_str())
    }

    /// Why NVRTC could not be opened: each candidate with the loader's error; `None` once open.
    pub fn failure() -> Option<&'static [String]> {
        NVRTC.get_or_init(load).as_ref().err().map(|v| v.as_slice())
    }
}

#[cfg(all(feature = "dynamic-loading", not(hip_platform = "nvidia")))]
mod dynamic {
    use super::*;
    use hip_sys::loader::{env_var, open_first};
    use std::sync::OnceLock;

    struct Loaded {
        _library: Option<hip_sys::loader::Opened>,
        path: String,
        functions: crate::DynamicFunctions,
    }

    static HIPRTC: OnceLock<Result<Loaded, Vec<String>>> = OnceLock::new();

    fn from(opened: hip_sys::loader::Opened) -> Loaded {
        // SAFETY: symbols typed from the header the bindings come from.
        let functions = unsafe { crate::DynamicFunctions::resolve(&opened.library) };
        Loaded {
            path: opened.path.clone(),
            _library: Some(opened),
            functions,
        }
    }

    fn load() -> Result<Loaded, Vec<String>> {
        let mut tried = match open_first(&hiprtc_candidates(Os::CURRENT, &env_var)) {
            Ok(opened) => return Ok(from(opened)),
            Err(tried) => tried,
        };
        match hip_sys::loader::library() {
            Some(hip)
                if unsafe { hip.library.get::<*const ()>(b"hiprtcCreateProgram\0") }.is_ok() =>
            {
                // SAFETY: as in `from`; the runtime stays open for the life of the process.
                let functions = unsafe { crate::DynamicFunctions::resolve(&hip.library) };
                return Ok(Loaded {
                    _library: None,
                    path: hip.path.clone(),
                    functions,
                });
            }
            Some(hip) => tried.push(format!(
                "{} (the HIP runtime): no hiprtcCreateProgram",
                hip.path
            )),
            None => tried.push("inside the HIP runtime: no HIP runtime could be opened".into()),
        }
        if Os::CURRENT == Os::Linux {
            let names = ["libhiprtc.so.7", "libhiprtc.so.6", "libhiprtc.so"];
            let opt: Vec<String> = names.iter().map(|n| format!("/opt/rocm/lib/{n}")).collect();
            match open_first(&opt) {
                Ok(opened) => return Ok(from(opened)),
                Err(more) => tried.extend(more),
            }
        }
        Err(tried)
    }

    /// The function table, opening HIPRTC on first use; `None` where none opened.
    #[doc(hidden)]
    #[inline]
    pub fn functions() -> Option<&'static crate::DynamicFunctions> {
        HIPRTC.get_or_init(load).as_ref().ok().map(|l| &l.functions)
    }

    /// The library HIPRTC was found in (a libhiprtc, or the HIP runtime on 5.x), opening it on first use.
    pub fn loaded_from() -> Option<&'static str> {
        HIPRTC
            .get_or_init(load)
            .as_ref()
            .ok()
            .map(|l| l.path.as_str())
    }

    /// Why HIPRTC could not be opened: each candidate with the loader's error; `None` once open.
    pub fn failure() -> Option<&'static [String]> {
        HIPRTC
            .get_or_init(load)
            .as_ref()
            .err()
            .map(|v| v.as_slice())
    }

    /// The C name of every function the table looks up, all of them when HIPRTC opens.
    pub fn symbol_names() -> &'static [&'static str] {
        crate::DynamicFunctions::NAMES
    }

    /// Each function of the table with whether the opened HIPRTC exports it, opening it on first use;
    /// `None` where none opened.
    pub fn symbols() -> Option<Vec<(&'static str, bool)>> {
        functions().map(crate::DynamicFunctions::resolved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_order_and_no_opt_rocm_before_the_runtime() {
        let vars = |k: &str| (k == "HIP_RS_HIPRTC").then(|| "/my/libhiprtc.so".to_string());
        let c = hiprtc_candidates(Os::Linux, &vars);
        assert_eq!(
            c,
            [
                "/my/libhiprtc.so",
                "libhiprtc.so.7",
                "libhiprtc.so.6",
                "libhiprtc.so"
            ]
        );
    }

    #[test]
    fn windows_names_carry_major_and_minor_newest_first() {
        let c = hiprtc_candidates(Os::Windows, &|_| None);
        assert_eq!(c.first().map(String::as_str), Some("hiprtc0709.dll"));
        assert!(c.contains(&"hiprtc0702.dll".to_string()));
        assert!(c.contains(&"hiprtc0507.dll".to_string()));
        assert_eq!(c.last().map(String::as_str), Some("hiprtc0500.dll"));
        assert_eq!(c.len(), 30);
    }
}
