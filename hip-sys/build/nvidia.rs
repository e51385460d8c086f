//! HIP's NVIDIA platform: HIP is header-only there (`inline static` wrappers over CUDA).
//!
//! bindgen parses the headers in C mode; `wrap_static_fns` emits a C file of `extern` wrappers for the
//! inline functions, which `cc` compiles into this crate. The `hip*` integer macros defined over CUDA
//! values (listed in `nvidia_consts.txt`) are evaluated by clang through a generated enum. The crate links
//! `cudart` and `cuda`; where no `libcuda.so` exists at build time (no driver, pip-wheel CUDA) a link-time
//! stub with the `libcuda.so.1` SONAME is generated, as CUDA's own `lib64/stubs` does.

use crate::find::Cuda;
use hip_build_support::dynamic;
use std::path::Path;
use std::process::Command;

const CONSTS: &str = include_str!("nvidia_consts.txt");
const PREFIX: &str = "hip_rs_value__";

/// The extra header bindgen reads: one enumerator per constant, so clang evaluates the macro. A name the
/// headers in use do not define as a macro takes its listed CUDA fallback, or is left out (HIP 5.7.1's
/// NVIDIA headers dropped the `hipJitOption*` macros for `HIPRTC_JIT_*` ones over the same `CU_JIT_*`).
pub fn consts_header() -> String {
    let mut h = String::from("#include \"wrapper.h\"\nenum hip_rs_nvidia_values {\n");
    for (name, _, fallback) in consts() {
        h.push_str(&format!(
            "#ifdef {name}\n  {PREFIX}{name} = (int)({name}),\n"
        ));
        if let Some(cuda) = fallback {
            h.push_str(&format!("#else\n  {PREFIX}{name} = (int)({cuda}),\n"));
        }
        h.push_str("#endif\n");
    }
    h.push_str("};\n");
    h
}

/// `name type [cuda_fallback]` lines of `nvidia_consts.txt`.
fn consts() -> impl Iterator<Item = (&'static str, &'static str, Option<&'static str>)> {
    CONSTS
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            Some((words.next()?, words.next()?, words.next()))
        })
}

/// Replace the generated enumerators by constants under their HIP names and AMD types.
pub fn rename_consts(code: &str) -> String {
    let types: std::collections::HashMap<_, _> = consts().map(|(n, t, _)| (n, t)).collect();
    let mut out = String::with_capacity(code.len());
    let mut lines = code.lines();
    while let Some(first) = lines.next() {
        // A long constant is wrapped over two lines: join it.
        let joined;
        let line = if first.contains(PREFIX) && !first.trim_end().ends_with(';') {
            joined = format!("{first} {}", lines.next().unwrap_or_default().trim());
            joined.as_str()
        } else {
            first
        };
        let rest = line
            .trim_start()
            .strip_prefix(&format!("pub const {PREFIX}"));
        let parsed = rest.and_then(|r| {
            let (name, r) = r.split_once(':')?;
            let value = r.split_once('=')?.1.trim().trim_end_matches(';').trim();
            Some((name, value))
        });
        match parsed {
            Some((name, _)) if code.contains(&format!("pub const {name}:")) => {} // already a plain #define
            Some((name, value)) => {
                let ty = types.get(name).copied().unwrap_or("u32");
                // The AMD type may not exist on NVIDIA (enum tags differ): fall back to its integer.
                let ty = if ty == "u32" || code.contains(&format!("pub type {ty} ")) {
                    ty
                } else {
                    "u32"
                };
                out.push_str(&format!("pub const {name}: {ty} = {value} as {ty};\n"));
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// HIP types the NVIDIA headers define by macro (`#define hipFunction_attribute CUfunction_attribute`):
/// bindgen ignores them, so alias each to its CUDA type where bindgen generated that type.
pub fn type_aliases(code: &str, nvidia_header: &str) -> String {
    let mut out = String::new();
    for line in nvidia_header.lines() {
        let mut words = line.split_whitespace();
        let (Some("#define"), Some(name), Some(target), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            continue;
        };
        let has = |t: &str| {
            code.contains(&format!("pub type {t} ")) || code.contains(&format!("pub struct {t} "))
        };
        // CUDA typedefs such as CUfunction_attribute are generated under their enum tag (`..._enum`).
        let tagged = format!("{target}_enum");
        let target = if has(target) { target } else { tagged.as_str() };
        let is_type = has(target);
        let exists = has(name);
        if name.starts_with("hip")
            && is_type
            && !exists
            && !out.contains(&format!("pub type {name} "))
        {
            out.push_str(&format!("pub type {name} = {target};\n"));
        }
    }
    out
}

/// Compile bindgen's wrappers for the inline functions into this crate.
pub fn compile_wrappers(c_file: &Path, hip_include: &Path, cuda: &Cuda, manifest_dir: &Path) {
    cc::Build::new()
        .file(c_file)
        .include(hip_include)
        .include(&cuda.include)
        .include(manifest_dir)
        .define("__HIP_PLATFORM_NVIDIA__", None)
        .warnings(false)
        // HIP 5.7.1's NVIDIA header writes `auto err = ...` in functions C compilers also see, and calls
        // memset/strncpy without <string.h>: GCC 14 and Clang 16 make both errors by default.
        .flag_if_supported("-Wno-error=implicit-int")
        .flag_if_supported("-Wno-error=implicit-function-declaration")
        .compile("hip_sys_nvidia_wrappers");
}

/// Make sure `-lcuda` resolves: use the real library if the CUDA tree has one, else write a stub with
/// every `cu*` symbol the wrappers need.
pub fn link_cuda(cuda: &Cuda, out: &Path) {
    for dir in [cuda.lib.clone(), cuda.lib.join("stubs")] {
        if dir.join("libcuda.so").exists() {
            println!("cargo:rustc-link-search=native={}", dir.display());
            return;
        }
    }
    let archive = out.join("libhip_sys_nvidia_wrappers.a");
    let symbols = dynamic::undefined_functions(&archive, |s| s.starts_with("cu") && !s.starts_with("cuda"))
        .unwrap_or_else(|e| {
            crate::fail(&format!(
                "hip-sys: no libcuda.so in the CUDA tree, and a link-time stub needs `nm` (binutils): {e}\n\
                 Install binutils, or point HIP_SYS_CUDA_LIB at a directory holding libcuda.so (or stubs/libcuda.so)."
            ))
        });
    let stub_dir = out.join("cuda-stub");
    std::fs::create_dir_all(&stub_dir).unwrap();
    let src = stub_dir.join("stub.c");
    let body: String = symbols
        .iter()
        .map(|s| format!("int {s}(void) {{ return 999; }}\n"))
        .collect();
    std::fs::write(&src, body).unwrap();
    let compiler = cc::Build::new().get_compiler();
    let status = Command::new(compiler.path())
        .args(["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o"])
        .arg(stub_dir.join("libcuda.so"))
        .arg(&src)
        .status();
    if !status.is_ok_and(|s| s.success()) {
        crate::fail("hip-sys: could not build the link-time libcuda stub");
    }
    println!("cargo:rustc-link-search=native={}", stub_dir.display());
}

/// `dynamic-loading` on NVIDIA: the CUDA runtime and driver functions the compiled wrappers call become
/// exported trampolines over two tables opened at run time (`crate::cudart`, `crate::cuda_driver`; see
/// `src/loader/nvidia.rs`), with the names of the libraries for this CUDA's major version. Returns the
/// code of `nvidia_dynamic.rs`.
pub fn dynamic_trampolines(clang_args: &[String], cuda: &Cuda, out: &Path) -> String {
    let archive = out.join("libhip_sys_nvidia_wrappers.a");
    let called = dynamic::undefined_functions(&archive, |s| s.starts_with("cu"))
        .unwrap_or_else(|e| crate::fail(&format!("hip-sys: {e}")));
    let (runtime, driver): (Vec<String>, Vec<String>) =
        called.into_iter().partition(|s| s.starts_with("cuda"));
    let major = cuda_major(cuda);
    let (cudart, nvrtc) = if major >= 12 {
        (
            format!("libcudart.so.{major}"),
            format!("libnvrtc.so.{major}"),
        )
    } else {
        (
            format!("libcudart.so.{major}.0"),
            format!("libnvrtc.so.{major}.2"),
        )
    };
    let mut code = format!(
        "/// The CUDA runtime these bindings were built for, opened at run time.\n\
         pub const CUDART_SONAME: &str = {cudart:?};\n\
         /// NVRTC of the same CUDA (HIPRTC on NVIDIA), opened by hiprtc-sys.\n\
         pub const NVRTC_SONAME: &str = {nvrtc:?};\n\
         /// The driver's library.\n\
         pub const CUDA_DRIVER_SONAME: &str = \"libcuda.so.1\";\n"
    );
    for (module, names, get) in [
        ("cudart", runtime, "crate::loader::cudart_functions"),
        (
            "cuda_driver",
            driver,
            "crate::loader::cuda_driver_functions",
        ),
    ] {
        let t = dynamic::trampolines(
            "wrapper.h",
            clang_args,
            &names,
            "crate::dynamic_functions",
            get,
            "crate::loader::Missing",
        )
        .unwrap_or_else(|e| crate::fail(&format!("hip-sys: {e}")));
        code.push_str(&format!(
            "/// The {} functions HIP's inline wrappers call, exported under their C names (trampolines).\n\
             #[doc(hidden)]\n\
             #[allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code, clippy::all)]\n\
             pub mod {module} {{\n{t}\n}}\n",
            names.len()
        ));
    }
    code
}

/// The CUDA major version of the headers (`CUDART_VERSION` in cuda_runtime_api.h: 12090 -> 12).
fn cuda_major(cuda: &Cuda) -> u32 {
    let header = cuda.include.join("cuda_runtime_api.h");
    std::fs::read_to_string(&header)
        .ok()
        .and_then(|text| {
            text.lines()
                .filter_map(|l| l.trim().strip_prefix("#define CUDART_VERSION"))
                .find_map(|v| v.trim().parse::<u32>().ok())
        })
        .map(|v| v / 1000)
        .unwrap_or_else(|| {
            crate::fail(&format!(
                "hip-sys: {} defines no numeric CUDART_VERSION",
                header.display()
            ))
        })
}
