//! `dynamic-loading` on HIP's NVIDIA platform: the CUDA runtime and driver opened at run time.
//!
//! HIP is inline code over the CUDA runtime there, compiled into this crate. With the feature, the CUDA
//! functions those wrappers call are trampolines (generated at build time, modules `cudart` and
//! `cuda_driver`) over two tables filled from:
//! - the CUDA runtime of the major version the crate was built with ([`CUDART_SONAME`], e.g.
//!   `libcudart.so.12`): `HIP_RS_CUDART` (a file), `CUDA_PATH/lib64`, `CUDA_PATH/lib`, `CUDA_HOME/lib64`,
//!   `CUDA_HOME/lib`, the system's search path, then `/usr/local/cuda/lib64`;
//! - the driver ([`CUDA_DRIVER_SONAME`], `libcuda.so.1`): `HIP_RS_CUDA_DRIVER`, then the same places.
//!
//! Every `hip*` function first checks that both opened ([`ready`]); if not, it returns
//! [`hipRsErrorLibraryNotFound`](super::hipRsErrorLibraryNotFound) (null for pointers) and [`failure`] lists
//! every path tried. A function the opened library lacks answers 500, CUDA's "not found" in both the
//! runtime (`cudaErrorSymbolNotFound`) and the driver (`CUDA_ERROR_NOT_FOUND`). Linux only.

use super::{env_var, open_first, Missing, Opened};
use std::sync::OnceLock;

pub use crate::nvidia_dynamic::{CUDART_SONAME, CUDA_DRIVER_SONAME, NVRTC_SONAME};

/// 500: "not found" in both the CUDA runtime and the driver, for a function the opened library lacks.
impl Missing for std::os::raw::c_uint {
    fn library_missing() -> Self {
        500
    }
    fn symbol_missing() -> Self {
        500
    }
}

/// Where an NVIDIA library `name` is looked for, in order: the file in the variable `explicit`, then
/// `CUDA_PATH/lib64`, `CUDA_PATH/lib`, `CUDA_HOME/lib64`, `CUDA_HOME/lib`, then `name` through the system's
/// search path, then `/usr/local/cuda/lib64`. `var` reads an environment variable.
pub fn cuda_candidates(
    var: &dyn Fn(&str) -> Option<String>,
    explicit: &str,
    name: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(file) = var(explicit).filter(|v| !v.is_empty()) {
        out.push(file);
    }
    for root_var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(root) = var(root_var).filter(|v| !v.is_empty()) {
            let root = root.trim_end_matches('/');
            out.push(format!("{root}/lib64/{name}"));
            out.push(format!("{root}/lib/{name}"));
        }
    }
    out.push(name.to_string());
    out.push(format!("/usr/local/cuda/lib64/{name}"));
    out
}

struct Loaded<T> {
    opened: Opened,
    functions: T,
}

type Slot<T> = OnceLock<Result<Loaded<T>, Vec<String>>>;

static CUDART: Slot<crate::nvidia_dynamic::cudart::DynamicFunctions> = OnceLock::new();
static DRIVER: Slot<crate::nvidia_dynamic::cuda_driver::DynamicFunctions> = OnceLock::new();
static FAILURE: OnceLock<Vec<String>> = OnceLock::new();

fn cudart() -> &'static Result<Loaded<crate::nvidia_dynamic::cudart::DynamicFunctions>, Vec<String>>
{
    // SAFETY: the candidates name the CUDA runtime of the headers the trampolines were bound from.
    CUDART.get_or_init(|| unsafe {
        open_table(
            "HIP_RS_CUDART",
            CUDART_SONAME,
            crate::nvidia_dynamic::cudart::DynamicFunctions::resolve,
        )
    })
}

fn driver(
) -> &'static Result<Loaded<crate::nvidia_dynamic::cuda_driver::DynamicFunctions>, Vec<String>> {
    // SAFETY: the candidates name the CUDA driver library, whose API the trampolines were bound from.
    DRIVER.get_or_init(|| unsafe {
        open_table(
            "HIP_RS_CUDA_DRIVER",
            CUDA_DRIVER_SONAME,
            crate::nvidia_dynamic::cuda_driver::DynamicFunctions::resolve,
        )
    })
}

/// The first CUDA library that opens among [`cuda_candidates`] for `var` and `soname`, with its table.
///
/// # Safety
/// `resolve` must be the table of the library those candidates name (its functions' real signatures).
unsafe fn open_table<T>(
    var: &str,
    soname: &str,
    resolve: unsafe fn(&libloading::Library) -> T,
) -> Result<Loaded<T>, Vec<String>> {
    let opened = open_first(&cuda_candidates(&env_var, var, soname))?;
    // SAFETY: the caller's contract.
    let functions = unsafe { resolve(&opened.library) };
    Ok(Loaded { opened, functions })
}

/// The CUDA runtime's table, opening it on first use; `None` where it did not open.
#[doc(hidden)]
#[inline]
pub fn cudart_functions() -> Option<&'static crate::nvidia_dynamic::cudart::DynamicFunctions> {
    cudart().as_ref().ok().map(|l| &l.functions)
}

/// The driver's table, opening it on first use; `None` where it did not open.
#[doc(hidden)]
#[inline]
pub fn cuda_driver_functions(
) -> Option<&'static crate::nvidia_dynamic::cuda_driver::DynamicFunctions> {
    driver().as_ref().ok().map(|l| &l.functions)
}

/// Whether the CUDA runtime and the driver both opened (opening them on first use).
#[doc(hidden)]
#[inline]
pub fn ready() -> bool {
    cudart().is_ok() && driver().is_ok()
}

/// The opened CUDA runtime, opening it on first use.
pub fn library() -> Option<&'static Opened> {
    cudart().as_ref().ok().map(|l| &l.opened)
}

/// The opened driver library, opening it on first use.
pub fn driver_library() -> Option<&'static Opened> {
    driver().as_ref().ok().map(|l| &l.opened)
}

/// Why the CUDA runtime or the driver could not be opened: each candidate tried, with the loader's error.
/// `None` once both are open. The same answer on every call.
pub fn failure() -> Option<&'static [String]> {
    if ready() {
        return None;
    }
    let tried = FAILURE.get_or_init(|| {
        let mut all = Vec::new();
        for result in [cudart().as_ref().err(), driver().as_ref().err()]
            .into_iter()
            .flatten()
        {
            all.extend(result.iter().cloned());
        }
        all
    });
    Some(tried)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_file_then_cuda_roots_then_search_path_then_usr_local() {
        let vars = |k: &str| match k {
            "HIP_RS_CUDART" => Some("/x/libcudart.so.12".to_string()),
            "CUDA_PATH" => Some("/cuda/".to_string()),
            "CUDA_HOME" => Some(String::new()),
            _ => None,
        };
        assert_eq!(
            cuda_candidates(&vars, "HIP_RS_CUDART", "libcudart.so.12"),
            [
                "/x/libcudart.so.12",
                "/cuda/lib64/libcudart.so.12",
                "/cuda/lib/libcudart.so.12",
                "libcudart.so.12",
                "/usr/local/cuda/lib64/libcudart.so.12"
            ]
        );
    }
}
