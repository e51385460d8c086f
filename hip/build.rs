//! Build script of the safe crate: read what hip-sys and hiprtc-sys generated (through their `links`
//! metadata) and derive
//! - `cfg(hip_platform = "amd" | "nvidia")`,
//! - `cfg(hiprtc_linker)` where the HIPRTC headers declare the linker API (`hiprtcLinkCreate`, ROCm >= 5.3),
//! - with the `blas` feature, `cfg(hipblas_api = "v1" | "v2_suffix" | "v2")`: which `hipblasGemmEx` hipBLAS has,
//!   `cfg(hipblas_workspace)` where it has `hipblasSetWorkspace` (hipBLAS 3.x, ROCm 7), and
//!   `cfg(hipblas_math_mode)` where it has `hipblasSetMathMode` (hipBLAS 2.x and 3.x, ROCm 6 and 7),
//! - with the `rand` feature, `cfg(hiprand_ordering)` where hipRAND has `hiprandSetGeneratorOrdering` (ROCm 6),
//! - with the `blaslt` feature, `cfg(hipblaslt_aux_data_type)` where hipBLASLt's matmul descriptor has
//!   `HIPBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE` (not at ROCm 6.2; hipBLASLt 1.1 / ROCm 7.1 has it) and
//!   `cfg(hipblaslt_amax_d)` where it has `HIPBLASLT_MATMUL_DESC_AMAX_D_POINTER` (ROCm >= 6.2),
//! - `cfg(hip_memory_type_managed)`, `cfg(hip_memory_type_unregistered)` where `hipMemoryType` has those
//!   values (5.7 and 6.x), `cfg(hip_device_set_limit)` where the headers declare `hipDeviceSetLimit` (not 5.2),
//!   `cfg(hip_module_launch_cooperative)` where they declare `hipModuleLaunchCooperativeKernel` (not 5.2),
//!   `cfg(hip_vmm)` where they declare the virtual memory calls (`hipMemAddressReserve`: AMD from 5.2, NVIDIA
//!   from 5.7) and `cfg(hip_vmm_attribute)` where `hipDeviceAttributeVirtualMemoryManagementSupported`
//!   exists (not 5.2),
//!   `cfg(hip_surface_object)` where they declare `hipCreateSurfaceObject` for C (not 5.2: C++ only there),
//!   `cfg(hip_mipmap)` where they declare `hipMallocMipmappedArray` (not HIP 5.2's NVIDIA headers),
//!   `cfg(hip_launch_host_func)` where `hipLaunchHostFunc` is declared and links (not AMD 5.2, whose
//!   library lacks it, unless the library is opened at run time: `dynamic-loading`),
//! - the name tables of every `hipError_t` and `hiprtcResult` value the installed headers list.
use std::env;
use std::fmt::Write;
use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(hip_platform, values(\"amd\", \"nvidia\"))");
    println!("cargo::rustc-check-cfg=cfg(hiprtc_linker)");
    // docs.rs (and CI's docs.rs-like build) passes `--cfg docsrs`: the feature marks (`doc(cfg(...))`).
    println!("cargo::rustc-check-cfg=cfg(docsrs)");
    let platform = env::var("DEP_HIPRS_AMDHIP64_PLATFORM").unwrap_or_else(|_| "amd".into());
    println!("cargo:rustc-cfg=hip_platform=\"{platform}\"");

    let read = |var: &str| {
        let path =
            env::var(var).unwrap_or_else(|_| panic!("{var} not set: hip-sys/hiprtc-sys export it"));
        println!("cargo:rerun-if-changed={path}");
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"))
    };
    let hip = read("DEP_HIPRS_AMDHIP64_BINDINGS");
    let rtc = read("DEP_HIPRS_HIPRTC_BINDINGS");
    if rtc.contains("fn hiprtcLinkCreate(") {
        println!("cargo:rustc-cfg=hiprtc_linker");
    }
    // Runtime calls and constants some HIP versions lack (hip::pointer, hip::limits).
    for (cfg, needle) in [
        ("hip_memory_type_managed", "const hipMemoryTypeManaged:"),
        (
            "hip_memory_type_unregistered",
            "const hipMemoryTypeUnregistered:",
        ),
        ("hip_device_set_limit", "fn hipDeviceSetLimit("),
        (
            "hip_module_launch_cooperative",
            "fn hipModuleLaunchCooperativeKernel(",
        ),
        ("hip_vmm", "fn hipMemAddressReserve("),
        (
            "hip_vmm_attribute",
            "const hipDeviceAttributeVirtualMemoryManagementSupported:",
        ),
        ("hip_surface_object", "fn hipCreateSurfaceObject("),
        ("hip_mipmap", "fn hipMallocMipmappedArray("),
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        if hip.contains(needle) {
            println!("cargo:rustc-cfg={cfg}");
        }
    }
    // hipMemAllocationProp's requested handle type goes by three names: `requestedHandleType` (AMD to
    // HIP 6), `requestedHandleTypes` (HIP's NVIDIA headers) and a union of both (AMD from HIP 7).
    println!("cargo::rustc-check-cfg=cfg(hip_mem_prop_handle, values(\"union\", \"types\"))");
    if hip.contains("pub __bindgen_anon_1: hipMemAllocationProp__bindgen_ty_1,") {
        println!("cargo:rustc-cfg=hip_mem_prop_handle=\"union\"");
    } else if hip.contains("pub requestedHandleTypes: hipMemAllocationHandleType,") {
        println!("cargo:rustc-cfg=hip_mem_prop_handle=\"types\"");
    }
    // hipLaunchHostFunc: declared by HIP 5.2.3's header but not exported by its libamdhip64.so.5, so a
    // link against it fails; opened at run time (dynamic-loading), the call answers SymbolNotFound there.
    println!("cargo::rustc-check-cfg=cfg(hip_launch_host_func)");
    let hip_5_2 = hip.contains("const HIP_VERSION_MAJOR: u32 = 5;")
        && hip.contains("const HIP_VERSION_MINOR: u32 = 2;");
    let dynamic = env::var_os("CARGO_FEATURE_DYNAMIC_LOADING").is_some();
    if hip.contains("fn hipLaunchHostFunc(") && (dynamic || !(platform == "amd" && hip_5_2)) {
        println!("cargo:rustc-cfg=hip_launch_host_func");
    }
    println!("cargo::rustc-check-cfg=cfg(hipblas_api, values(\"v1\", \"v2_suffix\", \"v2\"))");
    println!("cargo::rustc-check-cfg=cfg(hipblas_workspace)");
    println!("cargo::rustc-check-cfg=cfg(hipblas_math_mode)");
    println!("cargo::rustc-check-cfg=cfg(hiprand_ordering)");
    if env::var_os("CARGO_FEATURE_RAND").is_some()
        && read("DEP_HIPRS_HIPRAND_BINDINGS").contains("fn hiprandSetGeneratorOrdering(")
    {
        println!("cargo:rustc-cfg=hiprand_ordering");
    }
    println!("cargo::rustc-check-cfg=cfg(hipblaslt_aux_data_type)");
    println!("cargo::rustc-check-cfg=cfg(hipblaslt_amax_d)");
    if env::var_os("CARGO_FEATURE_BLASLT").is_some() {
        let lt = read("DEP_HIPRS_HIPBLASLT_BINDINGS");
        if lt.contains("const HIPBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE:") {
            println!("cargo:rustc-cfg=hipblaslt_aux_data_type");
        }
        if lt.contains("const HIPBLASLT_MATMUL_DESC_AMAX_D_POINTER:") {
            println!("cargo:rustc-cfg=hipblaslt_amax_d");
        }
    }
    if env::var_os("CARGO_FEATURE_BLAS").is_some() {
        let blas = read("DEP_HIPRS_HIPBLAS_BINDINGS");
        println!("cargo:rustc-cfg=hipblas_api=\"{}\"", hipblas_api(&blas));
        if blas.contains("fn hipblasSetWorkspace(") {
            println!("cargo:rustc-cfg=hipblas_workspace");
        }
        if blas.contains("fn hipblasSetMathMode(") {
            println!("cargo:rustc-cfg=hipblas_math_mode");
        }
    }

    let mut out = String::new();
    table(&mut out, "HIP_ERROR_NAMES", &hip, "hipError_t");
    table(&mut out, "HIPRTC_RESULT_NAMES", &rtc, "hiprtcResult");
    let dest = PathBuf::from(env::var_os("OUT_DIR").unwrap()).join("code_names.rs");
    std::fs::write(dest, out).unwrap();
}

/// Which `hipblasGemmEx` the hipBLAS bindings have: `"v1"` (0.x: `hipblasDatatype_t` throughout),
/// `"v2_suffix"` (2.x: the `hipDataType` form is `hipblasGemmEx_v2`), `"v2"` (3.x: only that form, under
/// the plain name).
fn hipblas_api(bindings: &str) -> &'static str {
    if bindings.contains("fn hipblasGemmEx_v2(") {
        return "v2_suffix";
    }
    let Some(start) = bindings.find("fn hipblasGemmEx(") else {
        panic!("the hipBLAS bindings declare no hipblasGemmEx");
    };
    let decl = &bindings[start..];
    let decl = &decl[..decl.find(';').unwrap_or(decl.len())];
    if decl.contains("hipblasComputeType_t") {
        "v2"
    } else {
        "v1"
    }
}

/// `(value, name)` for each constant `pub const NAME: TYPE = TYPE(VALUE);`, the first name of each value
/// (aliases such as hipErrorMemoryAllocation follow their primary name in the headers).
fn table(out: &mut String, name: &str, bindings: &str, ty: &str) {
    let prefix = format!(": {ty} = {ty}(");
    let mut seen = Vec::new();
    writeln!(
        out,
        "/// Every `{ty}` value the headers list, with its first (primary) name."
    )
    .unwrap();
    writeln!(out, "pub(crate) const {name}: &[(u32, &str)] = &[").unwrap();
    for line in bindings.lines() {
        let Some(rest) = line.trim().strip_prefix("pub const ") else {
            continue;
        };
        let Some((ident, tail)) = rest.split_once(&prefix) else {
            continue;
        };
        let Some(Ok(value)) = tail.strip_suffix(");").map(str::parse::<u32>) else {
            continue;
        };
        if !seen.contains(&value) {
            seen.push(value);
            writeln!(out, "    ({value}, {ident:?}),").unwrap();
        }
    }
    writeln!(out, "];").unwrap();
}
