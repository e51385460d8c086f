//! Build script of hipblas-sys: find `hipblas/hipblas.h` (hip_build_support::find's order), generate the
//! bindings with bindgen into OUT_DIR against the same HIP headers hip-sys used, link libhipblas (or, with
//! `dynamic-loading`, nothing).

use hip_build_support::{dynamic, find};
use std::env;
use std::path::{Path, PathBuf};

const LIBRARY: find::Library = find::Library {
    name: "hipBLAS",
    header: "hipblas/hipblas.h",
    path_var: "HIPBLAS_PATH",
    lib_names: &[
        "libhipblas.so",
        "libhipblas.so.3",
        "libhipblas.so.2",
        "libhipblas.so.0",
    ],
};

/// Bindings generated from Debian sid's hipBLAS 6.4.4 (hipBLAS 2.4.0) headers, for docs.rs and for
/// `dynamic-loading` builds on machines without hipBLAS headers.
const PREBUILT: &str = "src/prebuilt/hipblas_2_4_0.rs";

const INSTALL: &str = "\x20 Debian trixie (hipBLAS 5.5.1), sid (6.4.4), experimental (7.2.4): apt-get install libhipblas-dev \
                       (scripts/install-math-libs.sh blas); bookworm has no hipBLAS package\n\
                       \x20 ROCm from AMD's repository: apt-get install hipblas-dev (it lives in /opt/rocm)\n\
                       \x20 HIP's NVIDIA platform: hipBLAS's NVIDIA backend built from its source over cuBLAS \
                       (scripts/build-hipblas-nvidia.sh, docs/GPU.md), then HIPBLAS_PATH=target/hipblas-nvidia\n";

fn main() {
    for v in find::env_vars(&LIBRARY) {
        println!("cargo:rerun-if-env-changed={v}");
    }
    for v in ["DOCS_RS", "HIPBLAS_SYS_VERBOSE"] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo:rerun-if-changed={PREBUILT}");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let verbose = env::var_os("HIPBLAS_SYS_VERBOSE").is_some();
    if env::var_os("DOCS_RS").is_some() {
        return use_prebuilt(&out, "prebuilt (DOCS_RS)");
    }
    let found = match find::find(&LIBRARY) {
        Ok(found) => found,
        Err(_) if dynamic::enabled() => {
            return use_prebuilt(&out, "prebuilt 2.4.0 (dynamic-loading, no hipBLAS headers)");
        }
        Err(tried) => fail(&find::missing_message(&LIBRARY, "blas", &tried, INSTALL)),
    };
    let Ok(clang_args) = env::var("DEP_AMDHIP64_CLANG_ARGS") else {
        fail(
            "hipblas-sys: hip-sys gave no HIP headers (DEP_AMDHIP64_CLANG_ARGS): hipBLAS's header needs HIP's. \
             Build hip-sys from a real ROCm/HIP install, not from its prebuilt bindings.",
        )
    };
    let mut clang_args: Vec<String> = clang_args.split('\u{1f}').map(String::from).collect();
    clang_args.push(format!("-I{}", found.include.display()));
    let header = found.include.join(LIBRARY.header);
    println!("cargo:rerun-if-changed={}", header.display());
    let version = read_version(&header);
    if verbose {
        println!(
            "cargo:warning=hipblas-sys: hipBLAS {}.{}.{} found by {} (include {}, lib {})",
            version.0,
            version.1,
            version.2,
            found.found_by,
            found.include.display(),
            found
                .lib
                .as_ref()
                .map_or("none".into(), |l| l.display().to_string())
        );
    }
    let code = generate(&clang_args);
    finish(&out, code, version);
    if dynamic::enabled() {
        // Opened at run time (src/loader.rs): no link-time dependency.
        return;
    }
    match &found.lib {
        Some(lib) => println!("cargo:rustc-link-search=native={}", lib.display()),
        None => println!(
            "cargo:warning=hipblas-sys: hipBLAS headers found at {} but no libhipblas.so beside them; \
             the bindings build, linking a program will fail",
            found.include.display()
        ),
    }
    println!("cargo:rustc-link-lib=dylib=hipblas");
}

/// Run bindgen over wrapper.h: hipBLAS's functions, types and constants. hip-sys's stream type stands in
/// for hipBLAS's (src/lib.rs), so a `hip::Stream`'s raw handle passes as is.
fn generate(clang_args: &[String]) -> String {
    let bindings = bindgen::Builder::default()
        .header("wrapper.h")
        .clang_args(clang_args)
        .allowlist_function("hipblas.*")
        .allowlist_type("hipblas.*")
        .allowlist_var("HIPBLAS.*|hipblasVersion.*")
        .blocklist_type("hipStream_t|ihipStream_t|cudaStream_t|CUstream_st")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        // hipblasStatus_t may gain codes: a newtype, never a Rust enum.
        .newtype_enum("hipblasStatus_t")
        .derive_default(true)
        .generate_comments(false)
        .merge_extern_blocks(true)
        .layout_tests(false)
        .generate();
    match bindings {
        Ok(b) => b.to_string(),
        Err(e) => fail(&format!(
            "hipblas-sys: bindgen could not parse wrapper.h: {e}"
        )),
    }
}

/// Write the bindings (rewritten into a function table with `dynamic-loading`) and the build facts, and
/// export them to dependents (`DEP_HIPBLAS_BINDINGS`, `DEP_HIPBLAS_VERSION`).
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
            "/// The hipBLAS version of the headers these bindings come from (`hipblasVersionMajor`, `Minor`,\n\
             /// `Patch`): 0.x for ROCm 5, 2.x for ROCm 6, 3.x for ROCm 7.\n\
             pub const HEADER_VERSION: (u32, u32, u32) = ({ma}, {mi}, {pa});\n"
        ),
    )
    .expect("write build_info.rs");
    println!("cargo:bindings={}", out.join("bindings.rs").display());
    println!("cargo:version={ma}.{mi}.{pa}");
}

fn use_prebuilt(out: &Path, found_by: &str) {
    if env::var_os("HIPBLAS_SYS_VERBOSE").is_some() {
        println!("cargo:warning=hipblas-sys: bindings {found_by}");
    }
    let code = std::fs::read_to_string(PREBUILT).expect("read prebuilt bindings");
    finish(out, code, (2, 4, 0));
}

/// `hipblasVersionMajor`/`Minor`/`Patch` from hipblas-version.h beside the header (0s where absent).
fn read_version(header: &Path) -> (u32, u32, u32) {
    let text =
        std::fs::read_to_string(header.with_file_name("hipblas-version.h")).unwrap_or_default();
    let get = |name| find::define(&text, name).unwrap_or(0);
    (
        get("hipblasVersionMajor"),
        get("hipblasVersionMinor"),
        get("hipblasVersionPatch"),
    )
}

fn fail(msg: &str) -> ! {
    eprintln!("\n{msg}");
    std::process::exit(1)
}
