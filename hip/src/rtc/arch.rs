//! Checking a target architecture, and every option that could select one, before HIPRTC sees them.
//!
//! HIPRTC 5.2.3 corrupts its heap and aborts (`munmap_chunk(): invalid pointer`) when given a processor it
//! does not know (`--gpu-architecture=gfx999`, `sm_90`, an empty name), a target feature the processor does
//! not have (`gfx1030:xnack+`, `gfx900:sramecc+`), or an option that merely *contains* `--offload-arch=`
//! (for example inside a `-D` value). So on AMD:
//!
//! - every requested target id is checked against the code object manager (comgr) that HIPRTC compiles
//!   with, opened through [`super::comgr`]: the processor against comgr's ISA list, each feature against that processor's `Features` map
//!   in comgr's own ISA metadata (`amd_comgr_get_isa_metadata`), and the whole id once more by comgr;
//! - options are checked for anything HIPRTC or clang would read as a target, wherever it appears in the
//!   option (see [`check_option`]).

#[cfg(hip_platform = "amd")]
use super::comgr_meta::{isa_features, MetaFns, Node};
use crate::error::{Error, Result};
#[cfg(hip_platform = "amd")]
use hiprtc_sys::comgr as sys;
#[cfg(hip_platform = "amd")]
use std::sync::OnceLock;

/// Text that selects a target when HIPRTC or clang sees it anywhere in an option.
const TARGET_WORDS: &[&str] = &[
    "offload-arch",
    "gpu-architecture",
    "cuda-gpu-arch",
    "amdgpu-target",
    "target-cpu",
    "-mcpu",
    "-march",
    "-arch",
];

/// The options that name the target, whose value is checked: `--gpu-architecture=<id>` and its aliases.
const TARGET_OPTIONS: &[&str] = &["--gpu-architecture=", "--offload-arch=", "-arch="];

/// What one compiler option means for the target.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum OptionTarget<'a> {
    /// The option names no target.
    None,
    /// The option is `--gpu-architecture=<id>` (or an alias) with this checked id.
    Arch(&'a str),
}

/// Check one compiler option: refuse an empty one, a target option whose value is not a valid target id,
/// and any option that mentions a target anywhere else (`-DX=--offload-arch=gfx90a` crashes HIPRTC 5.2.3;
/// `-mcpu=gfx999` is silently ignored by it, giving code for another processor).
pub(crate) fn check_option(option: &str) -> Result<OptionTarget<'_>> {
    let invalid = |reason: &'static str| {
        Err(Error::InvalidOption {
            option: option.to_string(),
            reason,
        })
    };
    if option.trim().is_empty() {
        return invalid("an empty option is not a compiler option");
    }
    if let Some(value) = TARGET_OPTIONS.iter().find_map(|p| option.strip_prefix(p)) {
        if TARGET_WORDS.iter().any(|w| value.contains(w)) || value.contains(char::is_whitespace) {
            return invalid("the architecture value must be one target id such as gfx90a:xnack- (AMD) or compute_90 (NVIDIA)");
        }
        check(value)?;
        return Ok(OptionTarget::Arch(value));
    }
    if ["--gpu-architecture", "--offload-arch", "-arch"].contains(&option) {
        return invalid("give the architecture in the same option: --gpu-architecture=<arch>");
    }
    if TARGET_WORDS.iter().any(|w| option.contains(w)) {
        return invalid(
            "it names a target outside --gpu-architecture=<arch> (HIPRTC reads such text even inside \
             a -D value); choose the target with ProgramBuilder::arch",
        );
    }
    Ok(OptionTarget::None)
}

/// Refuse a target id (`processor[:feature±]...`) this HIPRTC would crash on or misread.
#[cfg(hip_platform = "amd")]
pub(crate) fn check(arch: &str) -> Result<()> {
    let Some(isas) = comgr_isas() else {
        return Ok(()); // comgr is not loadable: HIPRTC cannot compile either and will say so itself
    };
    let mut parts = arch.split(':');
    let processor = parts.next().unwrap_or_default();
    let unknown = || Error::UnknownArch {
        arch: arch.to_string(),
        known: isas
            .iter()
            .map(|i| i.processor.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    };
    let isa = isas
        .iter()
        .find(|i| i.processor == processor)
        .ok_or_else(unknown)?;
    let mut seen: Vec<&str> = Vec::new();
    for feature in parts {
        let name = feature
            .strip_suffix('+')
            .or_else(|| feature.strip_suffix('-'))
            .unwrap_or(feature);
        let supported = isa.features.as_ref();
        let ok = name.len() < feature.len()
            && supported.is_some_and(|s| s.iter().any(|f| f == name))
            && !seen.contains(&name);
        if !ok {
            return Err(Error::UnsupportedArchFeature {
                arch: arch.to_string(),
                feature: feature.to_string(),
                supported: match supported {
                    None => "unknown (comgr gave no ISA metadata)".into(),
                    Some(s) if s.is_empty() => "none".into(),
                    Some(s) => s
                        .iter()
                        .map(|f| format!("{f}+, {f}-"))
                        .collect::<Vec<_>>()
                        .join(", "),
                },
            });
        }
        seen.push(name);
    }
    // comgr's own verdict on the whole id, where it can give one.
    if isa.features.is_some() && !comgr_accepts(arch) {
        return Err(unknown());
    }
    Ok(())
}

/// Refuse a target NVRTC does not know before it sees it: NVRTC's own error ("invalid value for
/// --gpu-architecture (-arch)") names neither the value nor what it accepts. NVRTC takes `compute_XY`
/// (PTX) or `sm_XY` (a cubin), with an `a` suffix from 90 on (`sm_90a`) and, from NVRTC 12.9, an `f`
/// suffix from 100 on (`sm_100f`, family-specific), for each `XY` in `nvrtcGetSupportedArchs`.
#[cfg(hip_platform = "nvidia")]
pub(crate) fn check(arch: &str) -> Result<()> {
    let Some((version, list)) = nvrtc_archs() else {
        return Ok(()); // an NVRTC older than 11.2 has no list: it judges the value itself
    };
    if nvrtc_accepts(arch, *version, list) {
        return Ok(());
    }
    Err(Error::UnknownArch {
        arch: arch.to_string(),
        known: nvrtc_known(arch, *version, list),
    })
}

/// Whether `arch` is `compute_XY` or `sm_XY` for an `XY` in `list`, optionally `XYa` (architecture-
/// specific) from 90 on or, with NVRTC >= 12.9 (`version`), `XYf` (family-specific) from 100 on.
#[cfg(any(hip_platform = "nvidia", test))]
fn nvrtc_accepts(arch: &str, version: (i32, i32), list: &[i32]) -> bool {
    let Some(number) = arch
        .strip_prefix("compute_")
        .or_else(|| arch.strip_prefix("sm_"))
    else {
        return false;
    };
    // The lowest number each suffix is taken from; `None`: no suffix.
    let (digits, suffix_from) = if let Some(d) = number.strip_suffix('a') {
        (d, Some(90))
    } else if let Some(d) = number.strip_suffix('f') {
        if version < (12, 9) {
            return false;
        }
        (d, Some(100))
    } else {
        (number, None)
    };
    // Plain decimal digits only (`parse` would also take a sign), without a leading zero.
    if !digits.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('0') {
        return false;
    }
    digits
        .parse::<i32>()
        .is_ok_and(|v| list.contains(&v) && suffix_from.is_none_or(|from| v >= from))
}

/// What NVRTC accepts, in words, for the error refusing `arch`.
#[cfg(any(hip_platform = "nvidia", test))]
fn nvrtc_known(arch: &str, version: (i32, i32), list: &[i32]) -> String {
    let numbers: Vec<String> = list.iter().map(i32::to_string).collect();
    let mut known = format!(
        "compute_XY (PTX) or sm_XY (a cubin) for XY in {} (NVRTC {}.{}'s list; an `a` suffix from 90 on{})",
        numbers.join(", "),
        version.0,
        version.1,
        if version >= (12, 9) {
            ", an `f` suffix from 100 on"
        } else {
            ""
        }
    );
    if arch.to_ascii_lowercase().starts_with("gfx") {
        known.push_str(
            "; AMD targets such as gfx90a need HIP's AMD platform, and this build is for NVIDIA",
        );
    }
    known
}

/// NVRTC's version and the architecture numbers it supports.
#[cfg(hip_platform = "nvidia")]
type NvrtcArchs = ((i32, i32), Vec<i32>);

/// [`NvrtcArchs`], asked once.
#[cfg(hip_platform = "nvidia")]
fn nvrtc_archs() -> Option<&'static NvrtcArchs> {
    static LIST: std::sync::OnceLock<Option<NvrtcArchs>> = std::sync::OnceLock::new();
    LIST.get_or_init(|| {
        let ok = hiprtc_sys::NVRTC_SUCCESS;
        let (mut major, mut minor, mut n) = (0, 0, 0);
        // SAFETY: live locals; NVRTC writes `n` numbers into a buffer of `n` elements.
        unsafe {
            if hiprtc_sys::nvrtcVersion(&mut major, &mut minor) != ok
                || hiprtc_sys::nvrtcGetNumSupportedArchs(&mut n) != ok
            {
                return None;
            }
            let mut list = vec![0; usize::try_from(n).ok()?];
            if hiprtc_sys::nvrtcGetSupportedArchs(list.as_mut_ptr()) != ok {
                return None;
            }
            Some(((major, minor), list))
        }
    })
    .as_ref()
}

/// One ISA comgr knows: its processor and the target features it supports (`None`: comgr gave no
/// metadata, so no feature can be checked and none is accepted).
#[cfg(hip_platform = "amd")]
#[derive(Debug)]
struct Isa {
    processor: String,
    features: Option<Vec<String>>,
}

/// Whether comgr accepts the full target id (`amd_comgr_get_isa_metadata` succeeds for it).
#[cfg(hip_platform = "amd")]
fn comgr_accepts(arch: &str) -> bool {
    let Some(c) = super::comgr::any() else {
        return true; // no comgr: HIPRTC cannot compile either and says so itself
    };
    let Some(fns) = MetaFns::of(c.raw()) else {
        return true;
    };
    let Ok(full) = std::ffi::CString::new(format!("amdgcn-amd-amdhsa--{arch}")) else {
        return false;
    };
    // comgr is the library HIPRTC compiles with: no call into it overlaps a compile.
    let _serialised = super::hiprtc_lock();
    // The node, if comgr made one, is destroyed as it drops.
    Node::isa(fns, &full).is_some()
}

/// The ISAs comgr knows, each with the feature names its `Features` metadata map lists, read once.
#[cfg(hip_platform = "amd")]
fn comgr_isas() -> Option<&'static Vec<Isa>> {
    static LIST: OnceLock<Option<Vec<Isa>>> = OnceLock::new();
    LIST.get_or_init(|| {
        let c = super::comgr::any()?.raw();
        let count = c.amd_comgr_get_isa_count.as_ref().ok()?;
        let name = c.amd_comgr_get_isa_name.as_ref().ok()?;
        let fns = MetaFns::of(c)?;
        // As in comgr_accepts: never while another thread's HIPRTC compile runs in comgr.
        let _serialised = super::hiprtc_lock();
        let mut n = 0;
        // SAFETY: the calls have these signatures in every interface version: `n` and `p` are live
        // locals, and `i` < the count comgr gave. On success `p` is a NUL-terminated ISA name owned by
        // comgr, which stays loaded for the process (`any()` keeps it in a static), so the CStr is
        // valid.
        unsafe {
            if count(&mut n) != sys::AMD_COMGR_STATUS_SUCCESS {
                return None;
            }
            let mut list = Vec::with_capacity(n);
            for i in 0..n {
                let mut p = std::ptr::null();
                if name(i, &mut p) != sys::AMD_COMGR_STATUS_SUCCESS || p.is_null() {
                    return None;
                }
                let full = std::ffi::CStr::from_ptr(p);
                let text = full.to_string_lossy();
                // "amdgcn-amd-amdhsa--gfx90a" -> "gfx90a"
                let processor = text.rsplit("--").next().unwrap_or(&text).to_string();
                list.push(Isa {
                    processor,
                    features: isa_features(fns, full),
                });
            }
            Some(list)
        }
    })
    .as_ref()
}

#[cfg(test)]
mod tests {
    use super::{check_option, nvrtc_accepts, nvrtc_known};
    use crate::Error;

    /// A target option's value is one target id: whitespace in it, or another target option inside it,
    /// is refused before any compiler is asked.
    #[test]
    fn a_target_option_holds_one_target_id() {
        for option in [
            "--gpu-architecture=gfx90a -O3",
            "--offload-arch=gfx90a\tgfx1100",
            "-arch=compute_90 ",
            "--gpu-architecture=--offload-arch=gfx90a",
        ] {
            match check_option(option) {
                Err(Error::InvalidOption { reason, .. }) => {
                    assert!(reason.contains("one target id"), "{option}: {reason}")
                }
                other => panic!("{option}: {other:?}"),
            }
        }
    }

    /// NVRTC 11.8's `nvrtcGetSupportedArchs`.
    const NVRTC_11_8: &[i32] = &[
        35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90,
    ];
    /// NVRTC 12.9's, read from PyPI's libnvrtc.so.12 (12.9.86).
    const NVRTC_12_9: &[i32] = &[
        50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 120, 121,
    ];

    #[test]
    fn nvrtc_12_9_takes_the_family_suffix_from_100_and_11_8_never() {
        // What NVRTC 12.9.86 compiled (0) or refused, measured with its own library: compute_100f,
        // sm_100f, compute_101f, compute_103f, compute_120f, compute_121f, sm_120a compiled; compute_90f
        // and sm_110f were refused.
        for ok in [
            "compute_100f",
            "sm_100f",
            "compute_101f",
            "compute_103f",
            "compute_120f",
            "compute_121f",
            "sm_120a",
            "compute_90a",
            "compute_100",
        ] {
            assert!(nvrtc_accepts(ok, (12, 9), NVRTC_12_9), "{ok}");
        }
        for bad in [
            "compute_90f",
            "sm_110f",
            "compute_35",
            "compute_100af",
            "compute_100fa",
            "compute_f",
            "sm_0100f",
        ] {
            assert!(!nvrtc_accepts(bad, (12, 9), NVRTC_12_9), "{bad}");
        }
        // Before 12.9 there is no family suffix, even for a listed number.
        assert!(!nvrtc_accepts("compute_100f", (12, 8), NVRTC_12_9));
        assert!(nvrtc_accepts("compute_100a", (12, 8), NVRTC_12_9));
        let known = nvrtc_known("compute_90f", (12, 9), NVRTC_12_9);
        assert!(
            known.contains("120, 121 (NVRTC 12.9's list") && known.contains("`f` suffix from 100"),
            "{known}"
        );
        assert!(!nvrtc_known("x", (11, 8), NVRTC_11_8).contains("`f`"));
    }

    #[test]
    fn nvrtc_takes_compute_and_sm_of_its_listed_numbers() {
        for ok in [
            "compute_90",
            "sm_90",
            "compute_35",
            "sm_86",
            "compute_90a",
            "sm_90a",
        ] {
            assert!(nvrtc_accepts(ok, (11, 8), NVRTC_11_8), "{ok}");
        }
        for bad in [
            "compute_100",
            "sm_100a",
            "compute_91",
            "compute_80a",
            "sm_",
            "compute_",
            "compute_090",
            "compute_9O",
            "compute_+90",
            "compute_90 ",
            "COMPUTE_90",
            "gfx90a",
            "GFX90A",
            "gfx90a:xnack+",
            "",
            "90",
            "compute_90aa",
            "compute_99999999999",
        ] {
            assert!(!nvrtc_accepts(bad, (11, 8), NVRTC_11_8), "{bad}");
        }
    }

    #[test]
    fn the_refusal_names_the_list_and_the_amd_platform_for_amd_names() {
        let known = nvrtc_known("compute_100", (11, 8), NVRTC_11_8);
        assert!(
            known.contains("for XY in 35, 37, 50,") && known.contains("89, 90 (NVRTC 11.8's list")
        );
        assert!(!known.contains("AMD"), "{known}");
        for amd in ["gfx90a", "GFX90A", "gfx90a:xnack+"] {
            let known = nvrtc_known(amd, (11, 8), NVRTC_11_8);
            assert!(
                known.contains("AMD targets such as gfx90a need HIP's AMD platform"),
                "{known}"
            );
        }
    }
}
