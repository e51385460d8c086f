//! [`ProgramBuilder::half_precision`]: the half-precision types in HIPRTC / NVRTC programs, on both
//! platforms and every HIP version this crate supports.

use super::ProgramBuilder;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// The header's include name.
pub const HALF_HEADER: &str = "hip_rs_half.h";

/// Portable names every variant of the header defines, after the platform's own types.
const PORTABLE: &str = r#"
__device__ static inline hip_rs_half hip_rs_float2half(float x) { return __float2half(x); }
__device__ static inline float hip_rs_half2float(hip_rs_half x) { return __half2float(x); }
"#;

/// HIPRTC before 5.7 (5.2.3 here): `__half` is built in (including `hip/hip_fp16.h` redefines it), and
/// `hip/hip_bfloat16.h` needs the C++ standard library, which HIPRTC has not: bfloat16 is this header's
/// own 16-bit type, converted exactly as `half::bf16` converts (round to nearest, ties to even).
const AMD_BUILTIN_HALF: &str = r#"
typedef __half hip_rs_half;
struct hip_rs_bfloat16 { unsigned short bits; };
__device__ static inline float hip_rs_bfloat162float(hip_rs_bfloat16 b) {
    unsigned int i = b.bits;
    if ((b.bits & 0x7fffu) > 0x7f80u) i |= 0x0040u;
    return __uint_as_float(i << 16);
}
__device__ static inline hip_rs_bfloat16 hip_rs_float2bfloat16(float f) {
    unsigned int x = __float_as_uint(f);
    hip_rs_bfloat16 r;
    if ((x & 0x7fffffffu) > 0x7f800000u) { r.bits = (unsigned short)((x >> 16) | 0x0040u); return r; }
    unsigned int round_bit = 0x00008000u;
    r.bits = (unsigned short)(x >> 16);
    if ((x & round_bit) != 0 && (x & (3u * round_bit - 1u)) != 0) r.bits += 1;
    return r;
}
"#;

/// HIPRTC 5.7: `hip/hip_fp16.h` and `hip/hip_bfloat16.h` (`hip_bfloat16`); `hip/hip_bf16.h` does not
/// compile there.
const AMD_5_7: &str = r#"
#include <hip/hip_fp16.h>
#include <hip/hip_bfloat16.h>
typedef __half hip_rs_half;
typedef hip_bfloat16 hip_rs_bfloat16;
__device__ static inline float hip_rs_bfloat162float(hip_rs_bfloat16 b) { return float(b); }
__device__ static inline hip_rs_bfloat16 hip_rs_float2bfloat16(float f) { return hip_bfloat16(f); }
"#;

/// HIPRTC 6 and later: `hip/hip_bf16.h`'s `__hip_bfloat16`, with CUDA's function names.
const AMD_6: &str = r#"
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>
typedef __half hip_rs_half;
typedef __hip_bfloat16 hip_rs_bfloat16;
__device__ static inline float hip_rs_bfloat162float(hip_rs_bfloat16 b) { return __bfloat162float(b); }
__device__ static inline hip_rs_bfloat16 hip_rs_float2bfloat16(float f) { return __float2bfloat16(f); }
"#;

/// NVRTC: CUDA's headers, found on the include path this builder adds.
const NVIDIA: &str = r#"
#include <cuda_fp16.h>
#include <cuda_bf16.h>
typedef __half hip_rs_half;
typedef __nv_bfloat16 hip_rs_bfloat16;
__device__ static inline float hip_rs_bfloat162float(hip_rs_bfloat16 b) { return __bfloat162float(b); }
__device__ static inline hip_rs_bfloat16 hip_rs_float2bfloat16(float f) { return __float2bfloat16(f); }
"#;

/// The header's text for an AMD HIPRTC of this version.
fn amd_header(version: (u32, u32)) -> String {
    let body = match version {
        (major, _) if major >= 6 => AMD_6,
        (5, minor) if minor >= 7 => AMD_5_7,
        _ => AMD_BUILTIN_HALF,
    };
    format!("#pragma once\n{body}{PORTABLE}")
}

/// Where CUDA's `cuda_fp16.h` and `cuda_bf16.h` are looked for, in order.
fn cuda_include_candidates() -> Vec<PathBuf> {
    candidates_from(|var| std::env::var_os(var))
}

/// [`cuda_include_candidates`] with the environment read through `var`.
fn candidates_from(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = var("HIP_RS_CUDA_INCLUDE") {
        dirs.push(PathBuf::from(d));
    }
    for name in ["CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"] {
        if let Some(d) = var(name) {
            dirs.push(Path::new(&d).join("include"));
        }
    }
    dirs.push("/usr/local/cuda/include".into());
    dirs.push("/usr/include".into());
    dirs
}

/// The first candidate holding both headers, or an error listing each one tried.
fn cuda_include(candidates: &[PathBuf]) -> Result<PathBuf> {
    let mut tried = Vec::new();
    for dir in candidates {
        let missing: Vec<&str> = ["cuda_fp16.h", "cuda_bf16.h"]
            .into_iter()
            .filter(|h| !dir.join(h).is_file())
            .collect();
        if missing.is_empty() {
            return Ok(dir.clone());
        }
        tried.push(format!("{} (no {})", dir.display(), missing.join(", ")));
    }
    Err(Error::LibraryNotFound {
        library: "CUDA's half-precision headers (cuda_fp16.h, cuda_bf16.h) for NVRTC",
        tried,
        install: "the CUDA toolkit's headers (or PyPI's nvidia-cuda-runtime-cu12 / -cu11 include folder); \
                  or point HIP_RS_CUDA_INCLUDE at the folder that holds them",
    })
}

impl ProgramBuilder {
    /// Give the program the half-precision types: its source can then `#include "hip_rs_half.h"`
    /// ([`HALF_HEADER`]) and use
    ///
    /// | name | AMD (HIPRTC) | NVIDIA (NVRTC) |
    /// | --- | --- | --- |
    /// | `__half`, `hip_rs_half`, `__float2half`, `__half2float`, `__hadd`, ... | built in (HIP 5.2 to 5.6) or `hip/hip_fp16.h` | `cuda_fp16.h` |
    /// | `hip_rs_bfloat16` | `__hip_bfloat16` (`hip/hip_bf16.h`, HIP 6 and later), `hip_bfloat16` (`hip/hip_bfloat16.h`, HIP 5.7), this header's own 16-bit struct (HIP 5.2 to 5.6) | `__nv_bfloat16` (`cuda_bf16.h`) |
    /// | `hip_rs_float2half`, `hip_rs_half2float`, `hip_rs_float2bfloat16`, `hip_rs_bfloat162float` | on every version | on every version |
    ///
    /// The `hip_rs_` names are the same everywhere, so one source compiles on both platforms; the
    /// platform's own names (`__nv_bfloat16`, `__hip_bfloat16`, their intrinsics) are there too, for
    /// code written for one. In memory all of them are 16 bits, as [`half::f16`] and [`half::bf16`]:
    /// buffers of those element types are what such kernels take.
    ///
    /// On AMD the header's text depends on the HIP version this crate was built with
    /// (`hip_sys::HIP_VERSION_MAJOR` / `_MINOR`; HIPRTC's own `hiprtcVersion` answers 9.0 on every
    /// version): the HIPRTC that compiles must be that installation's. On HIP's NVIDIA platform NVRTC
    /// needs CUDA's `cuda_fp16.h` and `cuda_bf16.h`: they are looked for in `HIP_RS_CUDA_INCLUDE`,
    /// `$CUDA_PATH/include`, `$CUDA_HOME/include`, `$CUDA_ROOT/include`, `/usr/local/cuda/include` and
    /// `/usr/include`, and the first folder holding both is added with `-I`; none is
    /// [`Error::LibraryNotFound`] listing each folder tried. Calling it again changes nothing.
    ///
    /// # Errors
    ///
    /// On HIP's NVIDIA platform, [`Error::LibraryNotFound`] when no folder holds both `cuda_fp16.h` and
    /// `cuda_bf16.h`; on AMD none.
    ///
    /// ```no_run
    /// use hip::prelude::*;
    /// let program = ProgramBuilder::new(
    ///     r#"#include "hip_rs_half.h"
    ///     extern "C" __global__ void scale(hip_rs_half* x, float s, unsigned n) {
    ///         unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    ///         if (i < n) x[i] = hip_rs_float2half(hip_rs_half2float(x[i]) * s);
    ///     }"#,
    /// )
    /// .half_precision()?
    /// .compile()?;
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn half_precision(self) -> Result<Self> {
        if self.headers.iter().any(|(name, _)| name == HALF_HEADER) {
            return Ok(self); // given already
        }
        if cfg!(hip_platform = "nvidia") {
            let dir = cuda_include(&cuda_include_candidates())?;
            Ok(self
                .header(HALF_HEADER, format!("#pragma once\n{NVIDIA}{PORTABLE}"))
                .option(format!("-I{}", dir.display())))
        } else {
            let version = (hip_sys::HIP_VERSION_MAJOR, hip_sys::HIP_VERSION_MINOR);
            Ok(self.header(HALF_HEADER, amd_header(version)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amd_header_follows_the_hiprtc_version() {
        assert!(amd_header((5, 2)).contains("struct hip_rs_bfloat16"));
        assert!(!amd_header((5, 2)).contains("#include"));
        assert!(amd_header((5, 6)).contains("struct hip_rs_bfloat16"));
        assert!(amd_header((5, 7)).contains("hip/hip_bfloat16.h"));
        assert!(amd_header((6, 0)).contains("hip/hip_bf16.h"));
        assert!(amd_header((7, 2)).contains("typedef __hip_bfloat16 hip_rs_bfloat16"));
        for v in [(5, 2), (5, 7), (6, 4), (7, 2)] {
            assert!(amd_header(v).contains("hip_rs_float2half"), "{v:?}");
        }
    }

    #[test]
    fn cuda_headers_are_looked_for_in_the_documented_order() {
        let fixed = [
            PathBuf::from("/usr/local/cuda/include"),
            PathBuf::from("/usr/include"),
        ];
        assert_eq!(candidates_from(|_| None), fixed);
        let env = |name: &str| match name {
            "HIP_RS_CUDA_INCLUDE" => Some("/mine".into()),
            "CUDA_PATH" => Some("/opt/cuda".into()),
            "CUDA_ROOT" => Some("/root-cuda".into()),
            _ => None,
        };
        let mut want = vec![
            PathBuf::from("/mine"),
            PathBuf::from("/opt/cuda/include"),
            PathBuf::from("/root-cuda/include"),
        ];
        want.extend(fixed);
        assert_eq!(candidates_from(env), want);
    }

    #[test]
    fn missing_cuda_headers_name_every_folder_tried() {
        let dir = std::env::temp_dir().join(format!("hip-rs-half-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cuda_fp16.h"), "").unwrap();
        let e = cuda_include(&[dir.clone(), "/nonexistent-hip-rs".into()]).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("(no cuda_bf16.h)"), "{text}");
        assert!(
            text.contains("/nonexistent-hip-rs (no cuda_fp16.h, cuda_bf16.h)"),
            "{text}"
        );
        assert!(text.contains("HIP_RS_CUDA_INCLUDE"), "{text}");
        std::fs::write(dir.join("cuda_bf16.h"), "").unwrap();
        assert_eq!(
            cuda_include(&["/nonexistent-hip-rs".into(), dir.clone()]).unwrap(),
            dir
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn given_twice_adds_the_header_once() {
        if cfg!(hip_platform = "nvidia") && cuda_include(&cuda_include_candidates()).is_err() {
            return; // nothing to add on a machine without CUDA's headers: the error is tested above
        }
        let b = ProgramBuilder::new("").half_precision().unwrap();
        let (headers, options) = (b.headers.len(), b.options.len());
        let b = b.half_precision().unwrap();
        assert_eq!((b.headers.len(), b.options.len()), (headers, options));
        assert_eq!(headers, 1);
    }

    /// A kernel using every portable name compiles with this HIPRTC (AMD, offline for gfx90a).
    #[test]
    fn a_kernel_using_the_portable_names_compiles() {
        if cfg!(hip_platform = "nvidia") {
            return; // NVRTC needs CUDA's headers: the GPU tests compile it there
        }
        let builder = ProgramBuilder::new(PROBE)
            .arch("gfx90a")
            .no_cache()
            .half_precision()
            .unwrap();
        match builder.compile() {
            Ok(_) => {}
            // With dynamic-loading and no HIPRTC on the machine (Windows under Wine in CI) the one
            // possible answer is that HIPRTC is missing.
            Err(Error::LibraryNotFound { library, .. }) if cfg!(feature = "dynamic-loading") => {
                assert!(library.contains("HIPRTC"), "{library}")
            }
            Err(e) => panic!("the half-precision header does not compile with this HIPRTC: {e}"),
        }
    }

    pub(crate) const PROBE: &str = r#"#include "hip_rs_half.h"
extern "C" __global__ void k(hip_rs_half* h, hip_rs_bfloat16* b, float* f, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = hip_rs_half2float(h[i]) + hip_rs_bfloat162float(b[i]);
        f[i] = x;
        h[i] = hip_rs_float2half(x * 2.0f);
        b[i] = hip_rs_float2bfloat16(x * 3.0f);
    }
}
"#;
}
