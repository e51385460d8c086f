//! Finding a ROCm library (hipBLAS, hipRAND, hipFFT, ...) installed beside HIP.
//!
//! The order, first match wins:
//! 1. the library's own variable (`HIPBLAS_PATH`, ...): a root holding `include/<header>`;
//! 2. the HIP installation hip-sys found (its `links` metadata, `DEP_HIPRS_AMDHIP64_ROOT`);
//! 3. `ROCM_PATH`, then `HIP_PATH`;
//! 4. `/opt/rocm`;
//! 5. `/usr` (Debian's and Ubuntu's `lib*-dev` packages).
//!
//! The shared library is looked for beside the header in `lib`, `lib64` and `lib/<multiarch>`.

use std::env;
use std::path::{Path, PathBuf};

/// What to look for.
pub struct Library {
    /// The library's name in messages (`"hipBLAS"`).
    pub name: &'static str,
    /// The header, relative to an include directory (`"hipblas/hipblas.h"`).
    pub header: &'static str,
    /// The variable naming the library's own root (`"HIPBLAS_PATH"`).
    pub path_var: &'static str,
    /// File names of the shared library, any of which will do (`["libhipblas.so"]`).
    pub lib_names: &'static [&'static str],
}

/// Where the library was found.
pub struct Found {
    /// The include directory holding [`Library::header`].
    pub include: PathBuf,
    /// The directory holding the shared library; `None` for a headers-only tree.
    pub lib: Option<PathBuf>,
    /// Which rule found it (`"$HIPBLAS_PATH=/x"`), for verbose builds.
    pub found_by: String,
}

/// The outcome of [`find`]: the library, or each place tried.
pub type Search = Result<Found, Vec<String>>;

/// Every variable [`find`] reads for `lib`, for `cargo:rerun-if-env-changed`.
pub fn env_vars(lib: &Library) -> [&'static str; 4] {
    [lib.path_var, "ROCM_PATH", "HIP_PATH", "TARGET"]
}

/// Search in the order of the module docs.
pub fn find(lib: &Library) -> Search {
    let mut roots: Vec<(String, PathBuf)> = Vec::new();
    let mut tried = Vec::new();
    for (var, shown) in [
        (lib.path_var, lib.path_var),
        ("DEP_HIPRS_AMDHIP64_ROOT", "hip-sys's HIP root"),
        ("ROCM_PATH", "ROCM_PATH"),
        ("HIP_PATH", "HIP_PATH"),
    ] {
        match env::var_os(var) {
            Some(v) if !v.is_empty() => {
                let root = PathBuf::from(v);
                roots.push((format!("{shown}={}", root.display()), root));
            }
            _ => tried.push(format!("{shown}: not set")),
        }
    }
    roots.push(("/opt/rocm".into(), PathBuf::from("/opt/rocm")));
    roots.push((
        "/usr (a distribution's -dev package)".into(),
        PathBuf::from("/usr"),
    ));
    for (by, root) in roots {
        let include = root.join("include");
        let header = include.join(lib.header);
        if header.is_file() {
            return Ok(Found {
                lib: lib_dir(&root, lib.lib_names),
                include,
                found_by: by,
            });
        }
        tried.push(format!("{by}: no {}", header.display()));
    }
    Err(tried)
}

/// The build error for a library [`find`] did not find: what was tried, and how to install or point at it.
pub fn missing_message(lib: &Library, feature: &str, tried: &[String], install: &str) -> String {
    let mut msg = format!(
        "{} not found ({}). The `{feature}` feature needs it.\n\nTried, in order:\n",
        lib.name, lib.header
    );
    for t in tried {
        msg.push_str(&format!("  - {t}\n"));
    }
    msg.push_str(&format!(
        "\nSet {} to the root holding include/{} and its lib/ directory, or install it:\n{install}\
         Or build without the `{feature}` feature of `hip`.\n",
        lib.path_var, lib.header
    ));
    msg
}

/// `x86_64-unknown-linux-gnu` -> `x86_64-linux-gnu`, the Debian/Ubuntu multiarch directory name.
pub fn multiarch_triplet() -> String {
    let target = env::var("TARGET").unwrap_or_default();
    match target.split('-').collect::<Vec<_>>().as_slice() {
        [arch, _vendor, os, abi] => format!("{arch}-{os}-{abi}"),
        _ => target,
    }
}

fn lib_dir(root: &Path, names: &[&str]) -> Option<PathBuf> {
    [
        root.join("lib"),
        root.join("lib64"),
        root.join("lib").join(multiarch_triplet()),
    ]
    .into_iter()
    .find(|d| names.iter().any(|n| d.join(n).exists()))
}

/// `#define NAME value` read from a header's text, for version macros.
pub fn define(text: &str, name: &str) -> Option<u32> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("#define"))
        .filter_map(|l| l.trim_start().strip_prefix(name))
        .filter(|l| l.starts_with(char::is_whitespace))
        .find_map(|l| l.split_whitespace().next()?.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn define_reads_the_named_macro_only() {
        let text = "#define hipblasVersionMajor 2\n#define hipblasVersionMinor 4 // x\n\
                    #define hipblasVersionMinorX 9\n";
        assert_eq!(define(text, "hipblasVersionMajor"), Some(2));
        assert_eq!(define(text, "hipblasVersionMinor"), Some(4));
        assert_eq!(define(text, "hipblasVersionPatch"), None);
    }

    #[test]
    fn a_root_from_the_library_variable_wins_and_missing_lists_each_place() {
        let dir = std::env::temp_dir().join(format!("hip-build-support-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("include/testlib")).unwrap();
        std::fs::create_dir_all(dir.join("lib64")).unwrap();
        std::fs::write(dir.join("include/testlib/testlib.h"), "").unwrap();
        std::fs::write(dir.join("lib64/libtestlib.so"), "").unwrap();
        let lib = Library {
            name: "testlib",
            header: "testlib/testlib.h",
            path_var: "HIP_BUILD_SUPPORT_TEST_PATH",
            lib_names: &["libtestlib.so"],
        };
        std::env::set_var(lib.path_var, &dir);
        let found = find(&lib).expect("found through its variable");
        assert_eq!(found.include, dir.join("include"));
        assert_eq!(found.lib, Some(dir.join("lib64")));
        assert!(found.found_by.starts_with("HIP_BUILD_SUPPORT_TEST_PATH="));
        std::env::remove_var(lib.path_var);
        let missing = Library {
            header: "nosuch/nosuch.h",
            ..lib
        };
        let tried = find(&missing).err().expect("nothing holds nosuch.h");
        assert!(tried.iter().any(|t| t.starts_with("/opt/rocm: no ")));
        assert!(tried
            .iter()
            .any(|t| t == "HIP_BUILD_SUPPORT_TEST_PATH: not set"));
        let msg = missing_message(&missing, "x", &tried, "  apt-get install x\n");
        assert!(msg.contains("Tried, in order:") && msg.contains("apt-get install x"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
