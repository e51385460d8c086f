//! Build script of hiprtc-sys: generate HIPRTC bindings with bindgen into OUT_DIR and link the library that
//! holds HIPRTC.
//!
//! HIP itself is not searched for again: hip-sys found it and hands over what it found through its `links`
//! metadata (`DEP_HIPRS_AMDHIP64_*`), so both crates always bind the same installation.

mod comgr;
// The same rewrite as hip-sys's (a link to its file, as wrapper.h is).
use hip_build_support::dynamic;

use std::env;
use std::path::PathBuf;

const PREBUILT: &str = "src/prebuilt/hiprtc_5_2_3.rs";

fn main() {
    for var in ["DOCS_RS", "LIBCLANG_PATH", "HIP_PLATFORM"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed={PREBUILT}");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));

    let dep = |key: &str| env::var(format!("DEP_HIPRS_AMDHIP64_{key}")).ok();
    let nvidia = dep("PLATFORM").as_deref() == Some("nvidia");
    println!("cargo::rustc-check-cfg=cfg(hip_platform, values(\"amd\", \"nvidia\"))");
    println!(
        "cargo:rustc-cfg=hip_platform=\"{}\"",
        if nvidia { "nvidia" } else { "amd" }
    );
    // Filled below on NVIDIA with dynamic-loading only.
    std::fs::write(out.join("nvidia_dynamic.rs"), "").expect("write nvidia_dynamic.rs");
    // docs.rs, and dynamic loading where hip-sys found no HIP headers: the bindings committed from 5.2.3.
    if env::var_os("DOCS_RS").is_some() || dep("INCLUDE").is_none() {
        write_bindings(
            &out,
            std::fs::read_to_string(PREBUILT).expect("read prebuilt bindings"),
            false,
        );
        comgr::generate(None, &out);
        println!("cargo:bindings={}", out.join("bindings.rs").display());
        return;
    }

    let clang_args: Vec<String> = dep("CLANG_ARGS")
        .expect("hip-sys exports DEP_HIPRS_AMDHIP64_CLANG_ARGS")
        .split('\u{1f}')
        .map(str::to_string)
        .collect();
    let include =
        PathBuf::from(dep("INCLUDE").expect("hip-sys exports DEP_HIPRS_AMDHIP64_INCLUDE"));
    if !include.join("hip/hiprtc.h").is_file() {
        fail(&format!(
            "hiprtc-sys: the HIP installation at {} has no hip/hiprtc.h.\n\
             Install HIPRTC's headers (Debian/Ubuntu: apt-get install libamdhip64-dev; ROCm: the HIP SDK) \
             or set HIP_PATH to an installation that has them.",
            include.display()
        ));
    }

    comgr::generate(Some(&include), &out);

    let wrappers = out.join("hiprtc_static_wrappers");
    let mut builder = bindgen::Builder::default()
        .header("wrapper.h")
        .clang_args(&clang_args)
        .clang_arg("-DHIP_RS_HIPRTC")
        .allowlist_function("hiprtc.*")
        .allowlist_type("hiprtc.*")
        .allowlist_var("HIPRTC.*|hiprtc.*")
        // Types of the runtime API come from hip-sys, never a second copy.
        .blocklist_type("hip[^r].*|hipr[^t].*")
        .raw_line("#[allow(unused_imports)]\nuse hip_sys::*;")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .newtype_global_enum("hiprtcResult")
        .derive_default(true)
        .generate_comments(false)
        .merge_extern_blocks(true)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()));
    if nvidia {
        // HIPRTC is inline wrappers over NVRTC there: compile extern wrappers for them, as hip-sys does.
        // NVRTC's own version and target list (CUDA >= 11.2) let the safe crate check a target first.
        builder = builder
            .allowlist_function("nvrtcVersion|nvrtcGetNumSupportedArchs|nvrtcGetSupportedArchs")
            .wrap_static_fns(true)
            .wrap_static_fns_path(&wrappers);
    }
    let bindings = match builder.generate() {
        Ok(b) => b,
        Err(e) => fail(&format!(
            "hiprtc-sys: bindgen could not parse hip/hiprtc.h: {e}"
        )),
    };
    let mut code = bindings.to_string();
    let hip_bindings = dep("BINDINGS")
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    let header = include.join("hip/hiprtc.h");
    println!("cargo:rerun-if-changed={}", header.display());
    let header = std::fs::read_to_string(&header).unwrap_or_default();
    code.push_str(&macro_aliases(&header, &code, &hip_bindings));
    write_bindings(&out, code, nvidia);

    if nvidia {
        let cuda_include = PathBuf::from(
            dep("CUDA_INCLUDE").expect("hip-sys exports DEP_HIPRS_AMDHIP64_CUDA_INCLUDE"),
        );
        let cuda_lib = dep("CUDA_LIB").expect("hip-sys exports DEP_HIPRS_AMDHIP64_CUDA_LIB");
        cc::Build::new()
            .file(wrappers.with_extension("c"))
            .include(&include)
            .include(&cuda_include)
            .include(env::var("CARGO_MANIFEST_DIR").unwrap())
            .define("__HIP_PLATFORM_NVIDIA__", None)
            .define("HIP_RS_HIPRTC", None)
            .warnings(false)
            // As in hip-sys: newer HIP NVIDIA headers are not strict C (GCC 14, Clang 16 refuse by default).
            .flag_if_supported("-Wno-error=implicit-int")
            .flag_if_supported("-Wno-error=implicit-function-declaration")
            .compile("hiprtc_sys_nvidia_wrappers");
        if dynamic::enabled() {
            // No link-time NVRTC: its functions become trampolines over a table opened at run time.
            let code = nvrtc_trampolines(&clang_args, &out);
            std::fs::write(out.join("nvidia_dynamic.rs"), code).expect("write nvidia_dynamic.rs");
        } else {
            println!("cargo:rustc-link-search=native={cuda_lib}");
            println!("cargo:rustc-link-lib=dylib=nvrtc");
        }
        println!("cargo:include={}", include.display());
        println!("cargo:library=nvrtc");
        println!("cargo:bindings={}", out.join("bindings.rs").display());
        return;
    }

    if dynamic::enabled() {
        // Opened at run time (src/loader.rs): no link-time dependency.
        println!("cargo:include={}", include.display());
        println!("cargo:bindings={}", out.join("bindings.rs").display());
        return;
    }
    // HIPRTC lives in libhiprtc where that exists (ROCm >= 6; the only home from 7.0), else in libamdhip64
    // (ROCm 5.x, Debian bookworm's 5.2.3).
    let lib = dep("LIB").map(PathBuf::from);
    let lib_name = if lib
        .as_deref()
        .is_some_and(|l| l.join("libhiprtc.so").exists())
    {
        "hiprtc"
    } else {
        "amdhip64"
    };
    if let Some(lib) = lib.as_deref() {
        println!("cargo:rustc-link-search=native={}", lib.display());
    }
    println!("cargo:rustc-link-lib=dylib={lib_name}");
    println!("cargo:include={}", include.display());
    println!("cargo:library={lib_name}");
    // The safe crate reads the generated names (result codes, whether the linker API exists) from here.
    println!("cargo:bindings={}", out.join("bindings.rs").display());
}

/// Write `bindings.rs`, its extern block turned into the run-time table with `dynamic-loading` (on NVIDIA:
/// into checks that NVRTC opened before each compiled wrapper is called).
fn write_bindings(out: &std::path::Path, mut code: String, nvidia: bool) {
    if dynamic::enabled() {
        code = if nvidia {
            dynamic::rewrite(&code, "hip_sys::checked_functions", "crate::loader::ready")
        } else {
            dynamic::rewrite(
                &code,
                "hip_sys::dynamic_functions",
                "crate::loader::functions",
            )
        };
    }
    std::fs::write(out.join("bindings.rs"), code).expect("write bindings.rs");
}

/// `dynamic-loading` on NVIDIA: the NVRTC functions the compiled wrappers call, and the three this crate
/// binds directly (NVRTC's version and target list), as exported trampolines (module `nvrtc`) over a table
/// filled from `hip_sys::loader::NVRTC_SONAME` at run time.
fn nvrtc_trampolines(clang_args: &[String], out: &std::path::Path) -> String {
    let archive = out.join("libhiprtc_sys_nvidia_wrappers.a");
    let mut names = dynamic::undefined_functions(&archive, |s| s.starts_with("nvrtc"))
        .unwrap_or_else(|e| fail(&format!("hiprtc-sys: {e}")));
    for direct in [
        "nvrtcVersion",
        "nvrtcGetNumSupportedArchs",
        "nvrtcGetSupportedArchs",
    ] {
        if !names.iter().any(|n| n == direct) {
            names.push(direct.to_string());
        }
    }
    let mut args = clang_args.to_vec();
    args.push("-DHIP_RS_HIPRTC".into());
    let code = dynamic::trampolines(
        "wrapper.h",
        &args,
        &names,
        "hip_sys::dynamic_functions",
        "crate::loader::nvrtc_functions",
        "hip_sys::loader::Missing",
    )
    .unwrap_or_else(|e| fail(&format!("hiprtc-sys: {e}")));
    format!(
        "/// The {} NVRTC functions HIPRTC's inline wrappers call, exported under their C names.\n\
         #[doc(hidden)]\n\
         #[allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code, clippy::all)]\n\
         pub mod nvrtc {{\n{code}\n}}\n",
        names.len()
    )
}

/// From HIP 6.0, `hiprtc.h` names part of its API by macros over the runtime's linker types
/// (`#define hiprtcJITInputType hipJitInputType`, `#define HIPRTC_JIT_INPUT_LLVM_BITCODE
/// hipJitInputLLVMBitcode`, ...). bindgen drops macros that expand to identifiers, so every HIPRTC name
/// would vanish on 6.x and 7.x. Give each one back as a re-export of the hip-sys item it names, so the
/// HIPRTC names exist on every version.
fn macro_aliases(header: &str, rtc: &str, hip: &str) -> String {
    let mut out = String::new();
    for (name, target) in identifier_macros(header) {
        let is_rtc_name = name.starts_with("hiprtc") || name.starts_with("HIPRTC_");
        if is_rtc_name && !defines(rtc, &name) && defines(hip, &target) {
            out.push_str(&format!("pub use hip_sys::{target} as {name};\n"));
        }
    }
    out
}

/// `(NAME, IDENT)` for every `#define NAME IDENT` in a header (continuation lines joined, comments
/// removed).
fn identifier_macros(header: &str) -> Vec<(String, String)> {
    let joined = header.replace("\\\n", " ");
    let is_ident = |s: &str| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    joined
        .lines()
        .filter_map(|line| {
            let line = line.split("//").next().unwrap_or_default();
            let line = line.split("/*").next().unwrap_or_default();
            let rest = line
                .trim()
                .strip_prefix("#")?
                .trim_start()
                .strip_prefix("define")?;
            let mut words = rest.split_whitespace();
            let (name, target) = (words.next()?, words.next()?);
            (words.next().is_none() && is_ident(name) && is_ident(target))
                .then(|| (name.to_string(), target.to_string()))
        })
        .collect()
}

/// Whether generated bindings define an item named `ident`.
fn defines(code: &str, ident: &str) -> bool {
    [
        format!("pub const {ident}:"),
        format!("pub type {ident} ="),
        format!("pub struct {ident} "),
        format!("pub fn {ident}("),
        format!(" as {ident};"),
    ]
    .iter()
    .any(|p| code.contains(p.as_str()))
}

fn fail(msg: &str) -> ! {
    eprintln!("\n{msg}");
    std::process::exit(1)
}
