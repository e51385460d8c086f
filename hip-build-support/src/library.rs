//! The whole build script of a ROCm math library's sys crate (hipblas-sys, hiprand-sys, hipfft-sys): find
//! the header ([`find`]), run bindgen over the crate's `wrapper.h` against the HIP headers
//! hip-sys used, rewrite the functions into a run-time table with `dynamic-loading`, write the bindings
//! and the header's version, link the library.
//!
//! Without the library: a build error listing every place tried and how to install it, except with
//! `dynamic-loading` (and on docs.rs), where the crate's committed bindings are used.

use crate::{dynamic, find};
use std::env;
use std::path::{Path, PathBuf};

/// What one sys crate binds.
pub struct Binding {
    /// What to look for, and where the user can point.
    pub library: find::Library,
    /// The crate, for messages (`"hipblas-sys"`).
    pub crate_name: &'static str,
    /// The `hip` feature that needs it (`"blas"`).
    pub feature: &'static str,
    /// Regex of the functions and types to bind (`"hipblas.*"`).
    pub allow: &'static str,
    /// Regex of the constants to bind.
    pub allow_vars: &'static str,
    /// The status type, made a newtype so unknown codes stay representable (`"hipblasStatus_t"`).
    pub status: &'static str,
    /// The committed bindings (relative to the crate) and the version they were generated from.
    pub prebuilt: (&'static str, (u32, u32, u32)),
    /// How to install it, one line per way, each starting with two spaces.
    pub install: &'static str,
    /// The header's version from the header's path.
    pub version: fn(&Path) -> (u32, u32, u32),
    /// The library to link (`"hipblas"` for libhipblas).
    pub link: &'static str,
    /// What the library runs on, per platform, with the libraries that must be present where a program
    /// runs (`"rocBLAS on AMD; on HIP's NVIDIA platform ... cuBLAS (libcublas, libcublasLt)"`).
    pub backend: &'static str,
    /// The variable naming the library's file for the run-time loader of `dynamic-loading`
    /// (`"HIP_RS_HIPBLAS"`).
    pub run_time_var: &'static str,
    /// Clang arguments after hip-sys's: `["-xc++", "-std=c++14"]` for a header that only parses as C++
    /// (hip-sys's own are C).
    pub clang_args: &'static [&'static str],
}

/// Run the build script for `b`.
pub fn build(b: &Binding) {
    let verbose_var = format!("{}_VERBOSE", b.crate_name.to_uppercase().replace('-', "_"));
    for v in find::env_vars(&b.library) {
        println!("cargo:rerun-if-env-changed={v}");
    }
    println!("cargo:rerun-if-env-changed=DOCS_RS");
    println!("cargo:rerun-if-env-changed={verbose_var}");
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo:rerun-if-changed={}", b.prebuilt.0);
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let verbose = env::var_os(&verbose_var).is_some();
    if env::var_os("DOCS_RS").is_some() {
        return use_prebuilt(b, &out, verbose, "DOCS_RS");
    }
    let found = match find::find(&b.library) {
        Ok(found) => found,
        Err(_) if dynamic::enabled() => {
            return use_prebuilt(b, &out, verbose, "dynamic-loading, no headers found")
        }
        Err(tried) => fail(&format!(
            "{}\n{}",
            find::missing_message(&b.library, b.feature, &tried, b.install),
            deployment_note(
                b,
                env::var("DEP_HIPRS_AMDHIP64_PLATFORM").as_deref() == Ok("nvidia")
            )
        )),
    };
    let Ok(clang_args) = env::var("DEP_HIPRS_AMDHIP64_CLANG_ARGS") else {
        fail(&format!(
            "{}: hip-sys gave no HIP headers (DEP_HIPRS_AMDHIP64_CLANG_ARGS): {}'s header needs HIP's. Build \
             hip-sys from a real ROCm/HIP install, not from its prebuilt bindings.",
            b.crate_name, b.library.name
        ))
    };
    let mut clang_args: Vec<String> = clang_args.split('\u{1f}').map(String::from).collect();
    clang_args.push(format!("-I{}", found.include.display()));
    clang_args.extend(b.clang_args.iter().map(|a| a.to_string()));
    if env::var("DEP_HIPRS_AMDHIP64_PLATFORM").as_deref() == Ok("nvidia") {
        // The math libraries' headers of ROCm 5 test the older spelling (hiprand.h: __HIP_PLATFORM_NVCC__).
        clang_args.push("-D__HIP_PLATFORM_NVCC__".into());
    }
    let header = found.include.join(b.library.header);
    println!("cargo:rerun-if-changed={}", header.display());
    let version = (b.version)(&header);
    if verbose {
        println!(
            "cargo:warning={}: {} {version:?} found by {} (include {}, lib {})",
            b.crate_name,
            b.library.name,
            found.found_by,
            found.include.display(),
            found
                .lib
                .as_ref()
                .map_or("none".into(), |l| l.display().to_string())
        );
    }
    finish(&out, generate(b, &clang_args), version);
    if dynamic::enabled() {
        // Opened at run time (the crate's loader): no link-time dependency.
        return;
    }
    match &found.lib {
        Some(lib) => println!("cargo:rustc-link-search=native={}", lib.display()),
        None => println!(
            "cargo:warning={}: {} headers found at {} but no library beside them; the bindings build, \
             linking a program will fail",
            b.crate_name,
            b.library.name,
            found.include.display()
        ),
    }
    println!("cargo:rustc-link-lib=dylib={}", b.link);
}

/// bindgen over wrapper.h: the library's functions, types and constants. hip-sys's stream type stands in
/// for the library's (the crate re-exports it), so a `hip::Stream`'s raw handle passes as is.
fn generate(b: &Binding, clang_args: &[String]) -> String {
    let bindings = bindgen::Builder::default()
        .header("wrapper.h")
        .clang_args(clang_args)
        .allowlist_function(b.allow)
        .allowlist_type(b.allow)
        .allowlist_var(b.allow_vars)
        .blocklist_type("hipStream_t|ihipStream_t|cudaStream_t|CUstream_st")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .newtype_enum(b.status)
        .derive_default(true)
        .generate_comments(false)
        .merge_extern_blocks(true)
        .layout_tests(false)
        .generate();
    match bindings {
        Ok(code) => with_hip_data_type(code.to_string()),
        Err(e) => fail(&format!(
            "{}: bindgen could not parse wrapper.h: {e}",
            b.crate_name
        )),
    }
}

/// On HIP's NVIDIA platform `hipDataType` and `HIP_R_32F`... are macros over CUDA's `cudaDataType` and
/// `CUDA_R_32F`... (nvidia_hip_runtime_api.h), which bindgen does not follow: the bindings name only
/// `cudaDataType_t`. Give the HIP names too, so code using them builds on both platforms (the values are
/// the same: R_32F 0, R_64F 1, C_32F 4, C_64F 5, R_16F 2, C_16F 6, R_16BF 14, C_16BF 15).
fn with_hip_data_type(mut code: String) -> String {
    if !code.contains("pub type cudaDataType_t") || code.contains("pub type hipDataType") {
        return code;
    }
    code.push_str(
        "\n/// HIP's name for CUDA's `cudaDataType` on the NVIDIA platform (a macro in HIP's headers).\n\
         pub type hipDataType = cudaDataType_t;\n",
    );
    for t in [
        "R_16F", "R_32F", "R_64F", "C_16F", "C_32F", "C_64F", "R_16BF", "C_16BF",
    ] {
        if code.contains(&format!("pub const CUDA_{t}: cudaDataType_t")) {
            code.push_str(&format!("pub const HIP_{t}: hipDataType = CUDA_{t};\n"));
        }
    }
    code
}

/// Write the bindings (a function table with `dynamic-loading`) and the header's version, and export
/// them to dependents (`DEP_<LINKS>_BINDINGS`, `DEP_<LINKS>_VERSION`).
fn finish(out: &Path, mut code: String, (ma, mi, pa): (u32, u32, u32)) {
    if dynamic::enabled() {
        code = dynamic::rewrite(
            &code,
            "hip_sys::dynamic_functions",
            "crate::loader::functions",
        );
    }
    std::fs::write(out.join("bindings.rs"), code).expect("write bindings.rs");
    std::fs::write(
        out.join("build_info.rs"),
        format!(
            "/// The version of the headers these bindings come from (major, minor, patch).\n\
             pub const HEADER_VERSION: (u32, u32, u32) = ({ma}, {mi}, {pa});\n"
        ),
    )
    .expect("write build_info.rs");
    println!("cargo:bindings={}", out.join("bindings.rs").display());
    println!("cargo:version={ma}.{mi}.{pa}");
}

fn use_prebuilt(b: &Binding, out: &Path, verbose: bool, why: &str) {
    let (path, version) = b.prebuilt;
    if verbose {
        println!(
            "cargo:warning={}: committed bindings of {version:?} ({why})",
            b.crate_name
        );
    }
    let code = std::fs::read_to_string(path).expect("read the committed bindings");
    finish(out, code, version);
}

/// The second half of the "not found" build error: `dynamic-loading` as the way to build without the
/// library, and what a program built without it needs where it runs (on `nvidia`, CUDA's libraries too).
pub fn deployment_note(b: &Binding, nvidia: bool) -> String {
    let (major, minor, patch) = b.prebuilt.1;
    let name = b.library.name;
    let mut note = format!(
        "Or turn on the `dynamic-loading` feature of `hip` (features = [\"{feature}\", \"dynamic-loading\"]): \
         {krate} then builds from its committed bindings ({name} {major}.{minor}.{patch}) without the \
         header, and {name} is opened when the program first uses it ({var} names the file). Where it is \
         missing the program gets Error::LibraryNotFound, listing every path tried, instead of failing to \
         start.\n\n\
         Without `dynamic-loading` a program is linked to {name}: its library, and what that runs on ({backend}), \
         must be found by the system's loader where the program runs, or the program dies before `main` \
         with \"error while loading shared libraries\" (exit status 127).\n",
        feature = b.feature,
        krate = b.crate_name,
        var = b.run_time_var,
        backend = b.backend,
    );
    if nvidia {
        note.push_str(
            "This build is for HIP's NVIDIA platform: the program also needs the CUDA runtime (libcudart), \
             NVRTC (libnvrtc) and the driver's libcuda.so.1 (not the CUDA toolkit's stubs/ copy), at load \
             time without `dynamic-loading`, at first use with it.\n",
        );
    }
    note
}

fn fail(msg: &str) -> ! {
    eprintln!("\n{msg}");
    std::process::exit(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding() -> Binding {
        Binding {
            library: find::Library {
                name: "hipBLAS",
                header: "hipblas/hipblas.h",
                path_var: "HIPBLAS_PATH",
                lib_names: &["libhipblas.so"],
            },
            crate_name: "hipblas-sys",
            feature: "blas",
            allow: "hipblas.*",
            allow_vars: "HIPBLAS.*",
            status: "hipblasStatus_t",
            prebuilt: ("src/prebuilt/hipblas_2_4_0.rs", (2, 4, 0)),
            install: "  apt-get install libhipblas-dev\n",
            version: |_| (0, 0, 0),
            link: "hipblas",
            backend: "rocBLAS on AMD; cuBLAS (libcublas, libcublasLt) on NVIDIA",
            run_time_var: "HIP_RS_HIPBLAS",
            clang_args: &[],
        }
    }

    #[test]
    fn the_missing_library_error_offers_dynamic_loading_and_says_what_a_program_needs() {
        let amd = deployment_note(&binding(), false);
        assert!(
            amd.contains("features = [\"blas\", \"dynamic-loading\"]")
                && amd.contains("committed bindings (hipBLAS 2.4.0)")
                && amd.contains("HIP_RS_HIPBLAS")
                && amd.contains("Error::LibraryNotFound")
                && amd.contains("exit status 127")
                && amd.contains("libcublasLt"),
            "{amd}"
        );
        assert!(!amd.contains("libcuda.so.1"), "{amd}");
        let nvidia = deployment_note(&binding(), true);
        assert!(
            nvidia.starts_with(&amd)
                && nvidia.contains("libcudart")
                && nvidia.contains("libnvrtc")
                && nvidia.contains("libcuda.so.1")
                && nvidia.contains("stubs/"),
            "{nvidia}"
        );
    }
}
