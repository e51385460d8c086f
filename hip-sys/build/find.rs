//! Finding a HIP installation (and, for the NVIDIA platform, CUDA) on the build machine.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A HIP installation: where its headers and its runtime library are.
pub struct Hip {
    pub root: PathBuf,
    pub include: PathBuf,
    /// Directory holding `libamdhip64.so`; `None` for a headers-only tree (the triton wheel).
    pub lib: Option<PathBuf>,
    /// Which rule of the search order found it, for `HIP_SYS_VERBOSE`.
    pub found_by: String,
    pub version: (u32, u32, u32),
}

/// The outcome of a search: what was found, and what was tried along the way.
pub struct Search<T> {
    pub found: Option<T>,
    pub tried: Vec<String>,
}

/// `x86_64-unknown-linux-gnu` -> `x86_64-linux-gnu`, the Debian/Ubuntu multiarch directory name.
pub fn multiarch_triplet() -> String {
    let target = env::var("TARGET").unwrap_or_default();
    let parts: Vec<&str> = target.split('-').collect();
    match parts.as_slice() {
        [arch, _vendor, os, abi] => format!("{arch}-{os}-{abi}"),
        _ => target,
    }
}

fn lib_dirs(root: &Path) -> Vec<PathBuf> {
    vec![
        root.join("lib"),
        root.join("lib64"),
        root.join("lib").join(multiarch_triplet()),
    ]
}

/// Search for HIP in the documented order. The first root that has `hip/hip_runtime_api.h` wins.
pub fn hip() -> Search<Hip> {
    let mut tried = Vec::new();
    let mut candidates: Vec<(String, PathBuf, Vec<PathBuf>)> = Vec::new();

    for var in ["HIP_PATH", "ROCM_PATH"] {
        match env::var_os(var) {
            Some(v) if !v.is_empty() => {
                let root = PathBuf::from(v);
                candidates.push((
                    format!("{var}={}", root.display()),
                    root.join("include"),
                    lib_dirs(&root),
                ));
            }
            _ => tried.push(format!("{var}: not set")),
        }
    }
    for name in ["hip", "amdhip64"] {
        match pkg_config::Config::new()
            .cargo_metadata(false)
            .env_metadata(false)
            .probe(name)
        {
            Ok(lib) => {
                let include = lib.include_paths.first().cloned().unwrap_or_default();
                candidates.push((
                    format!("pkg-config {name}"),
                    include,
                    lib.link_paths.clone(),
                ));
            }
            Err(_) => tried.push(format!("pkg-config {name}: no .pc file")),
        }
    }
    match Command::new("hipconfig").arg("--path").output() {
        Ok(out) if out.status.success() => {
            let root = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            candidates.push((
                format!("hipconfig --path ({})", root.display()),
                root.join("include"),
                lib_dirs(&root),
            ));
        }
        _ => tried.push("hipconfig: not on PATH".into()),
    }
    let rocm = PathBuf::from("/opt/rocm");
    candidates.push(("/opt/rocm".into(), rocm.join("include"), lib_dirs(&rocm)));
    candidates.push((
        "distribution layout (/usr/include/hip)".into(),
        PathBuf::from("/usr/include"),
        vec![
            PathBuf::from("/usr/lib").join(multiarch_triplet()),
            PathBuf::from("/usr/lib64"),
            PathBuf::from("/usr/lib"),
        ],
    ));

    for (found_by, include, libs) in candidates {
        let api = include.join("hip/hip_runtime_api.h");
        if !api.is_file() {
            tried.push(format!("{found_by}: no {}", api.display()));
            continue;
        }
        let version = match read_version(&include.join("hip/hip_version.h")) {
            Ok(v) => v,
            Err(e) => {
                tried.push(format!("{found_by}: {e}"));
                continue;
            }
        };
        let lib = libs.into_iter().find(|d| d.join("libamdhip64.so").exists());
        let root = include
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| include.clone());
        return Search {
            found: Some(Hip {
                root,
                include,
                lib,
                found_by,
                version,
            }),
            tried,
        };
    }
    Search { found: None, tried }
}

/// Read `HIP_VERSION_MAJOR/MINOR/PATCH` from `hip/hip_version.h` (hipconfig's output is not trusted).
pub fn read_version(path: &Path) -> Result<(u32, u32, u32), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let get = |name: &str| -> Result<u32, String> {
        text.lines()
            .filter_map(|l| l.trim().strip_prefix("#define "))
            .filter_map(|l| l.trim().strip_prefix(name))
            .find_map(|rest| rest.split_whitespace().next().and_then(|n| n.parse().ok()))
            .ok_or_else(|| format!("{} defines no numeric {name}", path.display()))
    };
    Ok((
        get("HIP_VERSION_MAJOR")?,
        get("HIP_VERSION_MINOR")?,
        get("HIP_VERSION_PATCH")?,
    ))
}

/// A CUDA installation (headers and libraries), for HIP's NVIDIA platform.
pub struct Cuda {
    pub include: PathBuf,
    pub lib: PathBuf,
    pub found_by: String,
}

/// Search for CUDA: an explicit `HIP_SYS_CUDA_INCLUDE` + `HIP_SYS_CUDA_LIB` pair (pip wheels and other
/// unusual layouts), `CUDA_PATH`, `CUDA_HOME`, pkg-config (`cudart-*`), then `/usr/local/cuda`.
pub fn cuda() -> Search<Cuda> {
    let mut tried = Vec::new();
    let mut candidates: Vec<(String, PathBuf, Vec<PathBuf>)> = Vec::new();
    match (
        env::var_os("HIP_SYS_CUDA_INCLUDE"),
        env::var_os("HIP_SYS_CUDA_LIB"),
    ) {
        (Some(i), Some(l)) => candidates.push((
            "HIP_SYS_CUDA_INCLUDE/HIP_SYS_CUDA_LIB".into(),
            i.into(),
            vec![l.into()],
        )),
        _ => tried.push("HIP_SYS_CUDA_INCLUDE + HIP_SYS_CUDA_LIB: not both set".into()),
    }
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        match env::var_os(var) {
            Some(v) if !v.is_empty() => {
                let root = PathBuf::from(v);
                candidates.push((
                    format!("{var}={}", root.display()),
                    root.join("include"),
                    lib_dirs(&root),
                ));
            }
            _ => tried.push(format!("{var}: not set")),
        }
    }
    for v in ["12.0", "11.8", "11.0"] {
        if let Ok(lib) = pkg_config::Config::new()
            .cargo_metadata(false)
            .env_metadata(false)
            .probe(&format!("cudart-{v}"))
        {
            candidates.push((
                format!("pkg-config cudart-{v}"),
                lib.include_paths[0].clone(),
                lib.link_paths.clone(),
            ));
        }
    }
    tried.push("pkg-config cudart-*: checked".into());
    let usr = PathBuf::from("/usr/local/cuda");
    candidates.push((
        "/usr/local/cuda".into(),
        usr.join("include"),
        lib_dirs(&usr),
    ));
    for (found_by, include, libs) in candidates {
        let h = include.join("cuda_runtime_api.h");
        if !h.is_file() {
            tried.push(format!("{found_by}: no {}", h.display()));
            continue;
        }
        match libs.into_iter().find(|d| d.join("libcudart.so").exists()) {
            Some(lib) => {
                return Search {
                    found: Some(Cuda {
                        include,
                        lib,
                        found_by,
                    }),
                    tried,
                }
            }
            None => tried.push(format!("{found_by}: headers but no libcudart.so")),
        }
    }
    Search { found: None, tried }
}
