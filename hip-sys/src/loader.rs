//! Loading the HIP runtime at run time (the `dynamic-loading` feature), and the two codes that say it
//! could not be loaded.
//!
//! With the feature, every function of this crate keeps its C signature but calls through one table of
//! function pointers, filled once, on the first call, from the first library that opens (see
//! [`hip_candidates`] for the order). A program then has no link-time dependency on `libamdhip64`: it starts
//! on a machine without HIP, and one binary runs on every runtime that exports what it calls.
//!
//! - No library opened: every function returns [`hipRsErrorLibraryNotFound`] (functions returning a pointer
//!   return null), every time; `failure()` lists each path tried and why it failed.
//! - The library lacks a function (a 7.x call on 6.x): that function returns [`hipRsErrorSymbolNotFound`];
//!   the others work.
//!
//! The symbols looked up are those of the headers the crate was built from: built from ROCm >= 6 headers
//! the table asks for `hipGetDevicePropertiesR0600` (the 6.x layout of `hipDeviceProp_t`), built from 5.x
//! headers for `hipGetDeviceProperties`, which 6.4 and 7.2 still export with the 5.x (`R0000`) layout for
//! old binaries. So a call always gets the struct layout it was compiled with, or, where the runtime lacks
//! that symbol, `hipRsErrorSymbolNotFound`: never a struct of another layout.

use crate::hipError_t;

/// Not a HIP code: what a function returns when no HIP runtime library could be opened
/// (`dynamic-loading` only). Chosen far outside HIP's own range (which ends near 1100).
pub const hipRsErrorLibraryNotFound: hipError_t = hipError_t(0x4852_0001);
/// Not a HIP code: what a function returns when the loaded runtime does not export it
/// (`dynamic-loading` only).
pub const hipRsErrorSymbolNotFound: hipError_t = hipError_t(0x4852_0002);

/// What a function returns in place of calling a library or symbol that is missing.
pub trait Missing {
    /// The value for "no library could be opened".
    fn library_missing() -> Self;
    /// The value for "the library has no such function".
    fn symbol_missing() -> Self;
}

impl Missing for hipError_t {
    fn library_missing() -> Self {
        hipRsErrorLibraryNotFound
    }
    fn symbol_missing() -> Self {
        hipRsErrorSymbolNotFound
    }
}

impl<T> Missing for *const T {
    fn library_missing() -> Self {
        std::ptr::null()
    }
    fn symbol_missing() -> Self {
        std::ptr::null()
    }
}

impl<T> Missing for *mut T {
    fn library_missing() -> Self {
        std::ptr::null_mut()
    }
    fn symbol_missing() -> Self {
        std::ptr::null_mut()
    }
}

impl Missing for () {
    fn library_missing() -> Self {}
    fn symbol_missing() -> Self {}
}

impl Missing for std::os::raw::c_int {
    /// -1: the functions returning a plain `int` return an id or a count.
    fn library_missing() -> Self {
        -1
    }
    fn symbol_missing() -> Self {
        -1
    }
}

/// `u32::MAX` on AMD: the math libraries' functions that return a plain unsigned enum are getters
/// (`hipsparseGetMatType`, ...), and no enumerator has that value. (On HIP's NVIDIA platform the CUDA
/// functions returning `unsigned int` are status codes: see `loader/nvidia.rs`.)
#[cfg(not(hip_platform = "nvidia"))]
impl Missing for std::os::raw::c_uint {
    fn library_missing() -> Self {
        u32::MAX
    }
    fn symbol_missing() -> Self {
        u32::MAX
    }
}

impl Missing for crate::hipChannelFormatDesc {
    fn library_missing() -> Self {
        Default::default()
    }
    fn symbol_missing() -> Self {
        Default::default()
    }
}

/// The operating systems whose library names [`hip_candidates`] knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Os {
    /// Linux (and other ELF systems): `libamdhip64.so.N`.
    Linux,
    /// Windows: `amdhip64_N.dll`. Cross-built and run under Wine by this project (a stub DLL), never on
    /// Windows itself.
    Windows,
}

impl Os {
    /// The system this crate was compiled for.
    pub const CURRENT: Os = if cfg!(windows) {
        Os::Windows
    } else {
        Os::Linux
    };
}

/// Where the HIP runtime is looked for, in order:
/// 1. `HIP_RS_AMDHIP64`, a file;
/// 2. `HIP_PATH/lib`, then `ROCM_PATH/lib` (Windows: `bin`), each with the names of 3;
/// 3. the versioned names, newest first, through the system's search path: `libamdhip64.so.7`, `.6`, `.5`,
///    then `libamdhip64.so` (Windows: `amdhip64_7.dll`, `amdhip64_6.dll`, `amdhip64.dll`);
/// 4. `/opt/rocm/lib` with the names of 3 (Linux only).
///
/// `var` reads an environment variable (a parameter, so the order is testable).
pub fn hip_candidates(os: Os, var: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let names: &[&str] = match os {
        Os::Linux => &[
            "libamdhip64.so.7",
            "libamdhip64.so.6",
            "libamdhip64.so.5",
            "libamdhip64.so",
        ],
        Os::Windows => &["amdhip64_7.dll", "amdhip64_6.dll", "amdhip64.dll"],
    };
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    candidates(os, var, "HIP_RS_AMDHIP64", &names)
}

/// The common order of [`hip_candidates`] for a list of library names.
pub fn candidates(
    os: Os,
    var: &dyn Fn(&str) -> Option<String>,
    explicit: &str,
    names: &[String],
) -> Vec<String> {
    let sep = if os == Os::Windows { '\\' } else { '/' };
    let lib_dir = if os == Os::Windows { "bin" } else { "lib" };
    let mut out = Vec::new();
    if let Some(file) = var(explicit).filter(|v| !v.is_empty()) {
        out.push(file);
    }
    for root_var in ["HIP_PATH", "ROCM_PATH"] {
        if let Some(root) = var(root_var).filter(|v| !v.is_empty()) {
            let root = root.trim_end_matches(['/', '\\']);
            out.extend(
                names
                    .iter()
                    .map(|n| format!("{root}{sep}{lib_dir}{sep}{n}")),
            );
        }
    }
    out.extend(names.iter().cloned());
    if os == Os::Linux {
        out.extend(names.iter().map(|n| format!("/opt/rocm/lib/{n}")));
    }
    out
}

/// Reads the process environment, for the candidate lists.
pub fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[cfg(feature = "dynamic-loading")]
pub use dynamic::*;

#[cfg(all(feature = "dynamic-loading", hip_platform = "nvidia"))]
mod nvidia;
#[cfg(all(feature = "dynamic-loading", hip_platform = "nvidia"))]
pub use nvidia::*;

#[cfg(feature = "dynamic-loading")]
mod dynamic {
    /// An opened library, kept open for the life of the process.
    pub struct Opened {
        /// The library.
        pub library: libloading::Library,
        /// The name or path it was opened by.
        pub path: String,
    }

    /// Open the first of `candidates` that loads; else every candidate with why it failed.
    pub fn open_first(candidates: &[String]) -> Result<Opened, Vec<String>> {
        let mut tried = Vec::new();
        for c in candidates {
            // SAFETY: opening a shared library runs its initialisers; the HIP runtime's have no
            // preconditions on the caller.
            match unsafe { libloading::Library::new(c) } {
                Ok(library) => {
                    return Ok(Opened {
                        library,
                        path: c.clone(),
                    })
                }
                // The loader's message usually starts with the name already. On Windows it is only
                // "LoadLibraryExW failed": the system's reason is its source.
                Err(e) => {
                    let mut m = e.to_string();
                    if let Some(source) = std::error::Error::source(&e) {
                        m = format!("{m}: {source}");
                    }
                    tried.push(if m.starts_with(c.as_str()) {
                        m
                    } else {
                        format!("{c}: {m}")
                    })
                }
            }
        }
        Err(tried)
    }
}

/// The HIP runtime opened at run time (AMD platform).
#[cfg(all(feature = "dynamic-loading", not(hip_platform = "nvidia")))]
mod amd {
    use super::{open_first, Opened};
    use std::sync::OnceLock;

    struct Loaded {
        opened: Opened,
        functions: crate::DynamicFunctions,
    }

    static HIP: OnceLock<Result<Loaded, Vec<String>>> = OnceLock::new();

    fn loaded() -> &'static Result<Loaded, Vec<String>> {
        HIP.get_or_init(|| {
            let opened = open_first(&super::hip_candidates(super::Os::CURRENT, &super::env_var))?;
            // SAFETY: each symbol is looked up by the name and typed with the signature of the header
            // the bindings were generated from.
            let functions = unsafe { crate::DynamicFunctions::resolve(&opened.library) };
            Ok(Loaded { opened, functions })
        })
    }

    /// The function table, opening the runtime on first use; `None` where no library opened.
    #[doc(hidden)]
    #[inline]
    pub fn functions() -> Option<&'static crate::DynamicFunctions> {
        loaded().as_ref().ok().map(|l| &l.functions)
    }

    /// The opened HIP runtime (HIPRTC 5.x lives inside it), opening it on first use.
    pub fn library() -> Option<&'static Opened> {
        loaded().as_ref().ok().map(|l| &l.opened)
    }

    /// Why the runtime could not be opened: each candidate tried, with the loader's error. `None` once it
    /// is open. The same answer on every call.
    pub fn failure() -> Option<&'static [String]> {
        loaded().as_ref().err().map(|v| v.as_slice())
    }

    /// The C name of every function the table looks up in the runtime. All of them are looked up when the
    /// library opens (`dlsym`, on Windows `GetProcAddress`), not on each function's first call.
    pub fn symbol_names() -> &'static [&'static str] {
        crate::DynamicFunctions::NAMES
    }

    /// Each function of the table with whether the opened runtime exports it, opening it on first use;
    /// `None` where no library opened. A function it lacks answers [`hipRsErrorSymbolNotFound`](super::hipRsErrorSymbolNotFound).
    pub fn symbols() -> Option<Vec<(&'static str, bool)>> {
        functions().map(crate::DynamicFunctions::resolved)
    }
}
#[cfg(all(feature = "dynamic-loading", not(hip_platform = "nvidia")))]
pub use amd::*;

/// Declares, from bindgen's `extern "C"` block, a table of function pointers resolved from a library and a
/// wrapper with the same C signature for each function, calling through the table (`dynamic-loading`). The
/// wrappers are `extern "C"` so that their types are those of the linked functions (code that takes
/// `hip_sys::hipMalloc` as a function pointer compiles either way).
#[doc(hidden)]
#[macro_export]
macro_rules! dynamic_functions {
    // HIP's NVIDIA platform: the CUDA functions the inline wrappers call, exported under their C names.
    (table: $table:ident, get: $get:path, export; $($rest:tt)*) => {
        $crate::dynamic_functions!(@table $table, $get, no_mangle; $($rest)*);
    };
    (table: $table:ident, get: $get:path; $($rest:tt)*) => {
        $crate::dynamic_functions!(@table $table, $get, inline; $($rest)*);
    };
    (@table $table:ident, $get:path, $attr:meta; $( $(#[$meta:meta])* pub fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)? ; )* ) => {
        /// The runtime's functions, each `None` where the loaded library lacks it.
        #[doc(hidden)]
        #[allow(non_snake_case)]
        pub struct $table {
            $( $name: ::std::option::Option<unsafe extern "C" fn($($ty),*) $(-> $ret)?>, )*
        }

        impl $table {
            /// The C name of every function of the table, in the order of the bindings: what
            /// [`resolve`](Self::resolve) looks up.
            #[doc(hidden)]
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            /// Each function's C name and whether the opened library exported it (was resolved).
            #[doc(hidden)]
            pub fn resolved(&self) -> ::std::vec::Vec<(&'static str, bool)> {
                ::std::vec![$((stringify!($name), self.$name.is_some())),*]
            }

            /// Look every function up in `library`.
            ///
            /// # Safety
            /// `library` must be the runtime these bindings describe: each symbol is given the signature of
            /// its declaration.
            #[doc(hidden)]
            pub unsafe fn resolve(library: &::libloading::Library) -> Self {
                $table {
                    $( $name: library
                        .get::<unsafe extern "C" fn($($ty),*) $(-> $ret)?>(concat!(stringify!($name), "\0").as_bytes())
                        .ok()
                        .map(|symbol| *symbol), )*
                }
            }
        }

        $(
            $(#[$meta])*
            #[allow(non_snake_case, clippy::missing_safety_doc)]
            #[$attr]
            pub unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
                match $get() {
                    ::std::option::Option::Some(table) => match table.$name {
                        ::std::option::Option::Some(f) => f($($arg),*),
                        ::std::option::Option::None => $crate::dynamic_functions!(@missing symbol_missing $($ret)?),
                    },
                    ::std::option::Option::None => $crate::dynamic_functions!(@missing library_missing $($ret)?),
                }
            }
        )*
    };
    (@missing $which:ident $ret:ty) => { <$ret as $crate::loader::Missing>::$which() };
    (@missing $which:ident) => { () };
}

/// HIP's NVIDIA platform with `dynamic-loading`: the `hip*` functions are the headers' inline wrappers,
/// compiled into the crate, over CUDA functions that are opened at run time. Declares each wrapper (in
/// `linked`) and a public function with the same C signature that calls it once `$ready()` says the
/// libraries opened, and otherwise returns the "library not found" value of its return type.
#[doc(hidden)]
#[macro_export]
macro_rules! checked_functions {
    (table: $table:ident, get: $ready:path; $( $(#[$meta:meta])* pub fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)? ; )* ) => {
        /// The compiled inline wrappers themselves.
        #[doc(hidden)]
        pub mod linked {
            #[allow(unused_imports)]
            use super::*;
            unsafe extern "C" {
                $( $(#[$meta])* pub fn $name($($arg: $ty),*) $(-> $ret)?; )*
            }
        }
        $(
            #[allow(non_snake_case, clippy::missing_safety_doc)]
            #[inline]
            pub unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
                if $ready() {
                    linked::$name($($arg),*)
                } else {
                    $crate::dynamic_functions!(@missing library_missing $($ret)?)
                }
            }
        )*
    };
}

/// The run-time loading of one library for a sys crate built with `dynamic-loading` (hipblas-sys,
/// hiprand-sys, hipfft-sys): expands, inside the crate's loader module, to `functions()` (the crate's
/// `DynamicFunctions` table, opening the library on first use), `loaded_from()` and `failure()`. `$name`
/// names the library in their docs; `$candidates` is the list of files to try, in order, each naming only
/// a library whose API the crate's bindings describe.
#[doc(hidden)]
#[macro_export]
macro_rules! library_loader {
    ($name:literal, $candidates:expr) => {
        struct Loaded {
            library: $crate::loader::Opened,
            functions: crate::DynamicFunctions,
        }

        static LIBRARY: ::std::sync::OnceLock<::std::result::Result<Loaded, ::std::vec::Vec<::std::string::String>>> =
            ::std::sync::OnceLock::new();

        fn load() -> ::std::result::Result<Loaded, ::std::vec::Vec<::std::string::String>> {
            let opened = $crate::loader::open_first(&$candidates)?;
            // SAFETY: the candidates name only this library, whose declarations the symbols are given.
            let functions = unsafe { crate::DynamicFunctions::resolve(&opened.library) };
            Ok(Loaded {
                library: opened,
                functions,
            })
        }

        #[doc = concat!("The function table, opening ", $name, " on first use; `None` where none opened.")]
        #[doc(hidden)]
        #[inline]
        pub fn functions() -> ::std::option::Option<&'static crate::DynamicFunctions> {
            LIBRARY.get_or_init(load).as_ref().ok().map(|l| &l.functions)
        }

        #[doc = concat!("The file ", $name, " was opened from, opening it on first use.")]
        pub fn loaded_from() -> ::std::option::Option<&'static str> {
            LIBRARY.get_or_init(load).as_ref().ok().map(|l| l.library.path.as_str())
        }

        #[doc = concat!("Why ", $name, " could not be opened: each candidate with the loader's error; `None` once open.")]
        pub fn failure() -> ::std::option::Option<&'static [::std::string::String]> {
            LIBRARY.get_or_init(load).as_ref().err().map(|v| v.as_slice())
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&str, &str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn linux_order_explicit_then_roots_then_sonames_newest_first_then_opt_rocm() {
        let vars = [
            ("HIP_RS_AMDHIP64", "/x/libamdhip64.so"),
            ("HIP_PATH", "/hip/"),
            ("ROCM_PATH", "/rocm"),
        ];
        let c = hip_candidates(Os::Linux, &env(&vars));
        assert_eq!(c[0], "/x/libamdhip64.so");
        assert_eq!(c[1], "/hip/lib/libamdhip64.so.7");
        assert_eq!(c[4], "/hip/lib/libamdhip64.so");
        assert_eq!(c[5], "/rocm/lib/libamdhip64.so.7");
        assert_eq!(
            &c[9..13],
            [
                "libamdhip64.so.7",
                "libamdhip64.so.6",
                "libamdhip64.so.5",
                "libamdhip64.so"
            ]
        );
        assert_eq!(c[13], "/opt/rocm/lib/libamdhip64.so.7");
        assert_eq!(c.len(), 17);
    }

    #[test]
    fn unset_and_empty_variables_add_nothing() {
        let c = hip_candidates(Os::Linux, &env(&[("HIP_PATH", "")]));
        assert_eq!(c[0], "libamdhip64.so.7");
        assert_eq!(c.len(), 8);
    }

    #[test]
    fn windows_names_and_bin_directories() {
        let c = hip_candidates(Os::Windows, &env(&[("HIP_PATH", "C:\\hip\\")]));
        assert_eq!(
            c,
            [
                "C:\\hip\\bin\\amdhip64_7.dll",
                "C:\\hip\\bin\\amdhip64_6.dll",
                "C:\\hip\\bin\\amdhip64.dll",
                "amdhip64_7.dll",
                "amdhip64_6.dll",
                "amdhip64.dll"
            ]
        );
    }

    #[test]
    fn the_codes_are_outside_hips_range_and_distinct() {
        assert_ne!(hipRsErrorLibraryNotFound, hipRsErrorSymbolNotFound);
        assert!(hipRsErrorLibraryNotFound.0 > 0x1000_0000);
        assert!(<*const u8 as Missing>::library_missing().is_null());
        assert_eq!(<std::os::raw::c_int as Missing>::symbol_missing(), -1);
    }
}
