//! Build script of rccl-sys: find `rccl/rccl.h` (AMD) or `nccl.h` (HIP's NVIDIA platform), generate the
//! bindings with bindgen into OUT_DIR, link librccl or libnccl.
//!
//! The HIP installation and platform come from hip-sys's `links` metadata (`DEP_HIPRS_AMDHIP64_*`), so RCCL is
//! bound against the same HIP headers as the runtime.

use std::env;
use std::path::{Path, PathBuf};

const ENV_VARS: &[&str] = &[
    "RCCL_PATH",
    "ROCM_PATH",
    "HIP_PATH",
    "NCCL_INCLUDE",
    "NCCL_LIB",
    "HIP_SYS_CUDA_INCLUDE",
    "HIP_SYS_CUDA_LIB",
    "CUDA_PATH",
    "RCCL_SYS_VERBOSE",
];

struct Found {
    include: PathBuf,
    lib: Option<PathBuf>,
    found_by: String,
}

fn main() {
    for v in ENV_VARS {
        println!("cargo:rerun-if-env-changed={v}");
    }
    println!("cargo:rerun-if-changed=build");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let dep = |key: &str| env::var(format!("DEP_HIPRS_AMDHIP64_{key}")).ok();
    let platform = dep("PLATFORM").unwrap_or_else(|| "amd".into());
    let mut clang_args: Vec<String> = dep("CLANG_ARGS")
        .map(|a| a.split('\u{1f}').map(String::from).collect())
        .unwrap_or_default();
    if dep("CLANG_ARGS").is_none() {
        fail("rccl-sys: hip-sys gave no HIP headers (DEP_HIPRS_AMDHIP64_CLANG_ARGS): RCCL needs a HIP installation \
              with headers. Build hip-sys from a real ROCm/HIP install, not from its prebuilt bindings.");
    }
    let nvidia = platform == "nvidia";
    let mut tried = Vec::new();
    let found = if nvidia {
        find_nccl(&mut tried)
    } else {
        find_rccl(&mut tried)
    };
    let Some(found) = found else {
        fail(&missing_message(nvidia, &tried))
    };
    if env::var_os("RCCL_SYS_VERBOSE").is_some() {
        println!(
            "cargo:warning=rccl-sys: {} found by {} (include {})",
            if nvidia { "NCCL" } else { "RCCL" },
            found.found_by,
            found.include.display()
        );
    }
    clang_args.push(format!("-I{}", found.include.display()));
    if nvidia {
        // nccl.h lists ncclBfloat16 only where cuda_bf16.h defined this, which it does for C++ alone; the
        // library (built by NVIDIA with CUDA 11 or 12) has the type either way.
        clang_args.push("-D__CUDA_BF16_TYPES_EXIST__".into());
    }
    let header = if nvidia {
        found.include.join("nccl.h")
    } else {
        found.include.join("rccl/rccl.h")
    };
    println!("cargo:rerun-if-changed={}", header.display());
    let version = read_version(&header);
    let bindings = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .clang_args(&clang_args)
        .allowlist_function("nccl.*")
        .allowlist_type("nccl.*")
        .allowlist_var("NCCL.*")
        // The stream types come from hip-sys (lib.rs), so hip::Stream's handle passes as is.
        .blocklist_type("hipStream_t|ihipStream_t|cudaStream_t|CUstream_st")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .newtype_enum("ncclResult_t")
        .derive_default(true)
        .generate_comments(false)
        .merge_extern_blocks(true)
        .layout_tests(false)
        .generate();
    let bindings = match bindings {
        Ok(b) => b.to_string(),
        Err(e) => fail(&format!(
            "rccl-sys: bindgen could not parse {}: {e}",
            header.display()
        )),
    };
    std::fs::write(out.join("bindings.rs"), bindings).expect("write bindings.rs");
    let (ma, mi, pa) = version;
    std::fs::write(
        out.join("build_info.rs"),
        format!(
            "/// `\"rccl\"` (AMD) or `\"nccl\"` (HIP's NVIDIA platform): the library these bindings are for.\n\
             pub const LIBRARY: &str = {:?};\n\
             /// The header's version (`NCCL_MAJOR`, `NCCL_MINOR`, `NCCL_PATCH`).\n\
             pub const HEADER_VERSION: (u32, u32, u32) = ({ma}, {mi}, {pa});\n",
            if nvidia { "nccl" } else { "rccl" }
        ),
    )
    .expect("write build_info.rs");
    if let Some(lib) = &found.lib {
        println!("cargo:rustc-link-search=native={}", lib.display());
    }
    println!(
        "cargo:rustc-link-lib=dylib={}",
        if nvidia { "nccl" } else { "rccl" }
    );
    println!("cargo:include={}", found.include.display());
    println!("cargo:version={ma}.{mi}.{pa}");
    println!("cargo:library={}", if nvidia { "nccl" } else { "rccl" });
}

/// `NCCL_MAJOR`/`NCCL_MINOR`/`NCCL_PATCH` from the header text (0s where absent).
fn read_version(header: &Path) -> (u32, u32, u32) {
    let text = std::fs::read_to_string(header).unwrap_or_default();
    let get = |name: &str| {
        text.lines()
            .filter_map(|l| l.trim().strip_prefix("#define "))
            .filter_map(|l| l.strip_prefix(name))
            .filter_map(|l| l.split_whitespace().next())
            .find_map(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (get("NCCL_MAJOR "), get("NCCL_MINOR "), get("NCCL_PATCH "))
}

fn lib_dir(root: &Path, names: &[&str]) -> Option<PathBuf> {
    ["lib", "lib64", "lib/x86_64-linux-gnu"]
        .iter()
        .map(|d| root.join(d))
        .find(|d| names.iter().any(|n| d.join(n).exists()))
}

fn find_rccl(tried: &mut Vec<String>) -> Option<Found> {
    let libs = ["librccl.so", "librccl.so.1"];
    let mut roots: Vec<(String, PathBuf)> = Vec::new();
    for var in ["RCCL_PATH", "ROCM_PATH", "HIP_PATH"] {
        if let Some(v) = env::var_os(var) {
            roots.push((format!("${var}"), PathBuf::from(v)));
        }
    }
    roots.push(("/opt/rocm".into(), PathBuf::from("/opt/rocm")));
    roots.push(("/usr (Debian's librccl-dev)".into(), PathBuf::from("/usr")));
    for (by, root) in roots {
        let inc = root.join("include");
        tried.push(format!("{by}: {}", inc.join("rccl/rccl.h").display()));
        if inc.join("rccl/rccl.h").is_file() {
            return Some(Found {
                lib: lib_dir(&root, &libs),
                include: inc,
                found_by: by,
            });
        }
    }
    None
}

fn find_nccl(tried: &mut Vec<String>) -> Option<Found> {
    let pairs = [
        ("NCCL_INCLUDE", "NCCL_LIB"),
        ("HIP_SYS_CUDA_INCLUDE", "HIP_SYS_CUDA_LIB"),
    ];
    for (inc_var, lib_var) in pairs {
        if let Some(inc) = env::var_os(inc_var).map(PathBuf::from) {
            tried.push(format!("${inc_var}: {}", inc.join("nccl.h").display()));
            if inc.join("nccl.h").is_file() {
                return Some(Found {
                    include: inc,
                    lib: env::var_os(lib_var).map(PathBuf::from),
                    found_by: format!("${inc_var}"),
                });
            }
        }
    }
    let mut roots = Vec::new();
    if let Some(v) = env::var_os("CUDA_PATH") {
        roots.push(("$CUDA_PATH".to_string(), PathBuf::from(v)));
    }
    roots.push(("/usr/local/cuda".into(), PathBuf::from("/usr/local/cuda")));
    roots.push(("/usr".into(), PathBuf::from("/usr")));
    for (by, root) in roots {
        let inc = root.join("include");
        tried.push(format!("{by}: {}", inc.join("nccl.h").display()));
        if inc.join("nccl.h").is_file() {
            return Some(Found {
                lib: lib_dir(&root, &["libnccl.so", "libnccl.so.2"]),
                include: inc,
                found_by: by,
            });
        }
    }
    None
}

fn missing_message(nvidia: bool, tried: &[String]) -> String {
    let what = if nvidia {
        "NCCL (nccl.h, libnccl) for HIP's NVIDIA platform"
    } else {
        "RCCL (rccl/rccl.h, librccl)"
    };
    let mut msg =
        format!("rccl-sys: no {what} found. The `rccl` feature needs it.\n\nTried, in order:\n");
    for t in tried {
        msg.push_str(&format!("  - {t}\n"));
    }
    if nvidia {
        msg.push_str(
            "\nSet NCCL_INCLUDE and NCCL_LIB to the directories holding nccl.h and libnccl.so, or fetch NCCL 2.21.5\n\
             from PyPI into the CUDA tree hip-sys uses: scripts/fetch-nccl.sh 12 target/cuda12 (CUDA 12.9),\n\
             or scripts/fetch-nccl.sh 11 target/cuda11 (CUDA 11.8)\n",
        );
    } else {
        msg.push_str(
            "\nSet RCCL_PATH (or ROCM_PATH) to the root holding include/rccl/rccl.h and lib/librccl.so, or install RCCL:\n\
             \x20 Debian (trixie: 5.4.3, experimental: 7.2.4): apt-get install librccl-dev (scripts/install-rccl.sh)\n\
             \x20 Ubuntu with AMD's repository / ROCm: apt-get install rccl-dev (it lives in /opt/rocm)\n",
        );
    }
    msg.push_str(
        "Or build without the `rccl` feature of `hip`.\n\n\
         RCCL (NCCL) is always linked, `dynamic-loading` or not: a program built with `rccl` needs librccl\n\
         (libnccl.so.2 on HIP's NVIDIA platform) where it runs, or it dies before `main` (exit status 127).\n",
    );
    msg
}

fn fail(msg: &str) -> ! {
    eprintln!("\n{msg}");
    std::process::exit(1)
}
