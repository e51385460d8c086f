//! Build script of hip-sys: find HIP, generate bindings with bindgen into OUT_DIR, link libamdhip64.
//!
//! Everything here is build glue; the generated bindings are the crate.

use hip_build_support::dynamic;
mod find;
mod nvidia;

use std::env;
use std::path::PathBuf;

/// Every environment variable this script reads.
const ENV_VARS: &[&str] = &[
    "HIP_PATH",
    "ROCM_PATH",
    "HIP_PLATFORM",
    "HIP_SYS_VERBOSE",
    "DOCS_RS",
    "LIBCLANG_PATH",
    "PKG_CONFIG_PATH",
    "PATH",
    "CUDA_PATH",
    "CUDA_HOME",
    "HIP_SYS_CUDA_INCLUDE",
    "HIP_SYS_CUDA_LIB",
];

const PREBUILT: &str = "src/prebuilt/hip_5_2_3.rs";

fn main() {
    for var in ENV_VARS {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo::rustc-check-cfg=cfg(hip_platform, values(\"amd\", \"nvidia\"))");
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo:rerun-if-changed=nvidia_graph.h");
    println!("cargo:rerun-if-changed=nvidia_function.h");
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed={PREBUILT}");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));

    if env::var_os("DOCS_RS").is_some() {
        // docs.rs has no HIP: use bindings this project generated from HIP 5.2.3's real headers.
        use_prebuilt(&out, "prebuilt (DOCS_RS)");
        return;
    }

    let platform = match env::var("HIP_PLATFORM").as_deref() {
        Err(_) | Ok("") | Ok("amd") | Ok("hcc") => "amd",
        Ok("nvidia") | Ok("nvcc") => "nvidia",
        Ok(other) => fail(&format!(
            "hip-sys: HIP_PLATFORM={other:?} is not supported. Use HIP_PLATFORM=amd (the default) or nvidia."
        )),
    };

    println!("cargo:rustc-cfg=hip_platform=\"{platform}\"");
    if let Some(target) = cross_os_target() {
        // The HIP found on this machine is its own OS's (Linux headers and libraries): for another OS
        // nothing here can be linked, and its headers are not the target's. With dynamic-loading nothing
        // is linked, and the committed 5.2.3 bindings are what bindgen gives for the target too (checked
        // for x86_64-pc-windows-gnu: identical output with mingw-w64's headers; docs/BUILDING.md).
        if platform == "amd" && dynamic::enabled() {
            use_prebuilt(
                &out,
                &format!("prebuilt 5.2.3 (dynamic-loading, cross-compiling for {target})"),
            );
            return;
        }
        fail(&cross_message(&target, platform));
    }
    let search = find::hip();
    let Some(hip) = search.found else {
        if dynamic::enabled() {
            // Nothing to link against is needed: build from the bindings committed from HIP 5.2.3.
            use_prebuilt(
                &out,
                "prebuilt 5.2.3 (dynamic-loading, no HIP headers found)",
            );
            return;
        }
        fail(&missing_hip_message(&search.tried))
    };
    let (major, minor, patch) = hip.version;
    if env::var_os("HIP_SYS_VERBOSE").is_some() {
        println!(
            "cargo:warning=hip-sys: HIP {major}.{minor}.{patch} found by {} (include {}, lib {})",
            hip.found_by,
            hip.include.display(),
            hip.lib
                .as_ref()
                .map_or("none".into(), |l| l.display().to_string())
        );
    }

    let mut clang_args = vec!["-xc".to_string(), format!("-I{}", hip.include.display())];
    let cuda = if platform == "nvidia" {
        let search = find::cuda();
        let Some(cuda) = search.found else {
            fail(&missing_cuda_message(&search.tried))
        };
        if env::var_os("HIP_SYS_VERBOSE").is_some() {
            println!(
                "cargo:warning=hip-sys: CUDA found by {} (include {})",
                cuda.found_by,
                cuda.include.display()
            );
        }
        clang_args.push(format!("-I{}", cuda.include.display()));
        clang_args.push("-D__HIP_PLATFORM_NVIDIA__".into());
        Some(cuda)
    } else {
        clang_args.push("-D__HIP_PLATFORM_AMD__".into());
        None
    };
    let wrappers = out.join("hip_static_wrappers");
    let mut code = generate(&clang_args, cuda.is_some().then_some(wrappers.as_path()));
    if cuda.is_some() {
        let header = hip
            .include
            .join("hip/nvidia_detail/nvidia_hip_runtime_api.h");
        println!("cargo:rerun-if-changed={}", header.display());
        let text = std::fs::read_to_string(&header).unwrap_or_default();
        code.push_str(&nvidia::type_aliases(&code, &text));
    }
    if dynamic::enabled() {
        code = if cuda.is_some() {
            // The hip* functions are compiled wrappers there: each checks that CUDA opened first.
            dynamic::rewrite(&code, "crate::checked_functions", "crate::loader::ready")
        } else {
            dynamic::rewrite(
                &code,
                "crate::dynamic_functions",
                "crate::loader::functions",
            )
        };
    }
    std::fs::write(out.join("bindings.rs"), code).expect("write bindings.rs");
    write_build_info(&out, platform, hip.version, &hip.found_by);
    let mut cuda_dynamic = String::new();

    if let Some(cuda) = &cuda {
        let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
        nvidia::compile_wrappers(&wrappers.with_extension("c"), &hip.include, cuda, &manifest);
        if dynamic::enabled() {
            // No link-time CUDA: the wrappers' CUDA calls go to trampolines over tables opened at run time.
            cuda_dynamic = nvidia::dynamic_trampolines(&clang_args, cuda, &out);
        } else {
            println!("cargo:rustc-link-search=native={}", cuda.lib.display());
            println!("cargo:rustc-link-lib=dylib=cudart");
            nvidia::link_cuda(cuda, &out);
            println!("cargo:rustc-link-lib=dylib=cuda");
        }
        println!("cargo:cuda_include={}", cuda.include.display());
        println!("cargo:cuda_lib={}", cuda.lib.display());
    } else if dynamic::enabled() {
        // Opened at run time (src/loader.rs): no link-time dependency.
    } else {
        match &hip.lib {
            Some(lib) => println!("cargo:rustc-link-search=native={}", lib.display()),
            None => println!(
                "cargo:warning=hip-sys: HIP headers found at {} but no libamdhip64.so beside them; \
                 the bindings build, linking a program will fail",
                hip.include.display()
            ),
        }
        println!("cargo:rustc-link-lib=dylib=amdhip64");
    }

    std::fs::write(out.join("nvidia_dynamic.rs"), cuda_dynamic).expect("write nvidia_dynamic.rs");

    // Metadata for downstream -sys crates, read as DEP_HIPRS_AMDHIP64_<KEY>.
    println!("cargo:root={}", hip.root.display());
    println!("cargo:include={}", hip.include.display());
    if let Some(lib) = &hip.lib {
        println!("cargo:lib={}", lib.display());
    }
    println!("cargo:version={major}.{minor}.{patch}");
    println!("cargo:platform={platform}");
    println!("cargo:bindings={}", out.join("bindings.rs").display());
    // Joined by the ASCII unit separator: paths may hold spaces.
    println!("cargo:clang_args={}", clang_args.join("\u{1f}"));
}

/// Build from the bindings committed from HIP 5.2.3's headers (AMD platform).
fn use_prebuilt(out: &std::path::Path, found_by: &str) {
    if env::var_os("HIP_SYS_VERBOSE").is_some() {
        println!("cargo:warning=hip-sys: bindings {found_by}");
    }
    let mut code = std::fs::read_to_string(PREBUILT).expect("read prebuilt bindings");
    if dynamic::enabled() {
        code = dynamic::rewrite(
            &code,
            "crate::dynamic_functions",
            "crate::loader::functions",
        );
    }
    std::fs::write(out.join("bindings.rs"), code).expect("write bindings.rs");
    std::fs::write(out.join("nvidia_dynamic.rs"), "").expect("write nvidia_dynamic.rs");
    write_build_info(out, "amd", (5, 2, 21153), found_by);
    println!("cargo:bindings={}", out.join("bindings.rs").display());
    println!("cargo:platform=amd");
    println!("cargo:version=5.2.21153");
}

/// Run bindgen over wrapper.h and return the Rust source. With `wrappers` (NVIDIA), also write C
/// wrappers for the headers' `inline static` functions to `wrappers.c`.
fn generate(clang_args: &[String], wrappers: Option<&std::path::Path>) -> String {
    let mut builder = bindgen::Builder::default()
        .header("wrapper.h")
        .clang_args(clang_args)
        .allowlist_function("hip.*")
        .allowlist_type("hip.*")
        .allowlist_var("hip.*|HIP.*")
        // C enumerators become constants under their C names at the crate root.
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        // hipError_t holds codes beyond the header's list: a newtype, never a Rust enum.
        .newtype_global_enum("hipError_t")
        .derive_default(true)
        .generate_comments(false)
        .merge_extern_blocks(true)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()));
    if let Some(path) = wrappers {
        builder = builder
            .header_contents("hip_rs_nvidia_values.h", &nvidia::consts_header())
            .allowlist_var("hip_rs_value__.*")
            // Texture references: these wrappers call CUDA runtime functions CUDA 12 removed (deprecated
            // since 10.1), so with CUDA 12 they cannot be wrapped or linked. Left out on every CUDA.
            .blocklist_function("hipBindTexture|hipBindTexture2D|hipGetTextureAlignmentOffset")
            .wrap_static_fns(true)
            .wrap_static_fns_path(path);
    }
    let mut code = run_bindgen(builder);
    if wrappers.is_some() {
        code = nvidia::rename_consts(&code);
    }
    code.push_str(&rocm6_aliases(&code));
    code
}

/// ROCm >= 6 renames by macro (`hipGetDeviceProperties` -> `hipGetDevicePropertiesR0600`); bindgen binds
/// the real symbols under their suffixed names. Give them back their public names.
fn rocm6_aliases(code: &str) -> String {
    let mut extra = String::new();
    for f in ["hipGetDeviceProperties", "hipChooseDevice"] {
        if code.contains(&format!("fn {f}R0600(")) && !code.contains(&format!("fn {f}(")) {
            extra.push_str(&format!("pub use self::{f}R0600 as {f};\n"));
        }
    }
    if code.contains("pub struct hipDeviceProp_tR0600")
        && !code.contains("pub struct hipDeviceProp_t ")
    {
        extra.push_str("pub type hipDeviceProp_t = hipDeviceProp_tR0600;\n");
    }
    extra
}

/// bindgen panics when libclang cannot be loaded: turn that into its own clear message.
fn run_bindgen(builder: bindgen::Builder) -> String {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| builder.generate()));
    std::panic::set_hook(hook);
    match result {
        Ok(Ok(bindings)) => bindings.to_string(),
        Ok(Err(e)) => fail(&format!(
            "hip-sys: bindgen could not parse the HIP headers: {e}"
        )),
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            if what.contains("libclang") {
                fail(&format!(
                    "hip-sys: bindgen needs libclang and could not load it ({what}).\n\
                     Install it (Debian/Ubuntu: `apt-get install libclang-dev`) or point LIBCLANG_PATH \
                     at the directory holding libclang.so."
                ))
            }
            fail(&format!("hip-sys: bindgen failed: {what}"))
        }
    }
}

fn write_build_info(
    out: &std::path::Path,
    platform: &str,
    version: (u32, u32, u32),
    found_by: &str,
) {
    let (major, minor, patch) = version;
    let info = format!(
        "/// The HIP platform these bindings were generated for: `\"amd\"` or `\"nvidia\"`.\n\
         pub const HIP_PLATFORM: &str = {platform:?};\n\
         /// The HIP version (`major.minor.patch` from `hip/hip_version.h`) the bindings were generated from.\n\
         pub const HIP_SYS_VERSION: (u32, u32, u32) = ({major}, {minor}, {patch});\n\
         /// How the build script found HIP.\n\
         pub const HIP_SYS_FOUND_BY: &str = {found_by:?};\n"
    );
    std::fs::write(out.join("build_info.rs"), info).expect("write build_info.rs");
}

/// The target triple when it names another operating system than the one the build script runs on
/// (`x86_64-pc-windows-gnu` from Linux); `None` for a native build or another architecture of the same OS.
fn cross_os_target() -> Option<String> {
    let target_os = env::var("CARGO_CFG_TARGET_OS").ok()?;
    (target_os != env::consts::OS).then(|| env::var("TARGET").unwrap_or(target_os))
}

fn cross_message(target: &str, platform: &str) -> String {
    let host = env::consts::OS;
    if platform != "amd" {
        return format!(
            "hip-sys: cross-compiling for {target} from {host} is supported on the AMD platform only \
             (HIP_PLATFORM={platform} compiles HIP's inline CUDA wrappers with the build machine's CUDA).\n\
             Build on the target system, or unset HIP_PLATFORM and turn on `dynamic-loading`."
        );
    }
    format!(
        "hip-sys: cross-compiling for {target} from {host} needs the `dynamic-loading` feature.\n\
         \n\
         Without it the program links the HIP runtime of the target system (amdhip64 on Windows), and the\n\
         HIP this build script finds here is {host}'s: its headers and libraries are not the target's.\n\
         Turn the feature on (`hip = {{ features = [\"dynamic-loading\"] }}`, or `--features dynamic-loading`):\n\
         the crates then build from the bindings committed from HIP 5.2.3, link nothing HIP, and open the\n\
         runtime when the program runs (on Windows amdhip64_7.dll, amdhip64_6.dll, amdhip64.dll; see\n\
         hip_sys::loader).\n\
         For x86_64-pc-windows-gnu: `rustup target add x86_64-pc-windows-gnu` and a mingw-w64 linker\n\
         (Debian/Ubuntu: apt-get install gcc-mingw-w64-x86-64); scripts/check-windows-wine.sh does it all.\n"
    )
}

fn missing_hip_message(tried: &[String]) -> String {
    let mut msg = String::from("hip-sys: no HIP installation found.\n\nTried, in order:\n");
    for t in tried {
        msg.push_str(&format!("  - {t}\n"));
    }
    msg.push_str(
        "\nSet HIP_PATH (or ROCM_PATH) to the root that holds include/hip/hip_runtime_api.h and lib/libamdhip64.so,\n\
         or install HIP:\n\
         \x20 Debian/Ubuntu: apt-get install libamdhip64-dev\n\
         \x20 AMD ROCm:      install the HIP SDK (it lives in /opt/rocm)\n\
         \n\
         Or turn on the `dynamic-loading` feature of `hip` (or of hip-sys): the crates then build from the\n\
         bindings committed from HIP 5.2.3, without HIP on the build machine, and open libamdhip64 when the\n\
         program runs (HIP_RS_AMDHIP64 names the file); where it is missing every call answers\n\
         Error::LibraryNotFound instead of the program failing to start (exit status 127).\n",
    );
    msg
}

fn missing_cuda_message(tried: &[String]) -> String {
    let mut msg = String::from(
        "hip-sys: HIP_PLATFORM=nvidia needs CUDA, and none was found.\n\nTried, in order:\n",
    );
    for t in tried {
        msg.push_str(&format!("  - {t}\n"));
    }
    msg.push_str(
        "\nSet CUDA_PATH (or CUDA_HOME) to a CUDA toolkit root, or HIP_SYS_CUDA_INCLUDE and HIP_SYS_CUDA_LIB to\n\
         directories holding cuda_runtime_api.h and libcudart.so. scripts/fetch-cuda.sh fetches CUDA 12.9\n\
         (or, with the argument 11, CUDA 11.8) from PyPI.\n\
         \n\
         Where the program runs, a build for HIP's NVIDIA platform needs the CUDA runtime (libcudart.so.12,\n\
         or .11.0), NVRTC (libnvrtc) and the driver's libcuda.so.1 (not the toolkit's stubs/ copy): without\n\
         them it dies before `main` (exit status 127). With the `dynamic-loading` feature of `hip` they are\n\
         opened at run time instead, and a missing one is Error::LibraryNotFound (the CUDA headers are still\n\
         needed to build).\n",
    );
    msg
}

/// Print one readable message and stop the build.
pub(crate) fn fail(msg: &str) -> ! {
    eprintln!("\n{msg}");
    std::process::exit(1)
}
