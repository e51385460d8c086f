//! Compiler options that mean the same on both platforms, spelled the way each compiler takes them:
//! HIPRTC on AMD is clang (`-O3`, `-g`, `-ffast-math`), on HIP's NVIDIA platform it is NVRTC (no `-O`
//! levels, `-lineinfo`, `--use_fast_math`). The other options pass unchanged; both take `-std=`, `-D`,
//! `-U` and `-I`.
//!
//! | option | AMD (clang) | NVIDIA (NVRTC) |
//! | --- | --- | --- |
//! | `-O3`, `-O2`, `-O1` | as is | dropped: NVRTC always optimises device code fully |
//! | `-O0` | as is | refused: NVRTC's only unoptimised mode is `-G`, which adds debug info |
//! | `-Os`, `-Oz`, `-Ofast`, other `-O` | as is | refused, naming the platform |
//! | `-g` | as is | `-lineinfo` (line tables; `-G` would also turn optimisation off) |
//! | `-ffast-math` | as is | `--use_fast_math` |
//! | `--use_fast_math`, `-use_fast_math` | `-ffast-math` | as is |
//! | `-lineinfo`, `--generate-line-info` | `-gline-tables-only` | as is |
//! | `-G`, `--device-debug` | `-g -O0` | as is |

use crate::error::{Error, Result};

/// The compiler that reads the options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Compiler {
    /// HIPRTC on AMD: clang.
    Clang,
    /// HIPRTC on HIP's NVIDIA platform: NVRTC.
    Nvrtc,
}

impl Compiler {
    /// The one this build compiles with.
    pub(crate) const CURRENT: Compiler = if cfg!(hip_platform = "nvidia") {
        Compiler::Nvrtc
    } else {
        Compiler::Clang
    };
}

/// `option` as `compiler` takes it: itself, its equivalent (none, one or two options), or
/// [`Error::InvalidOption`] naming the platform and what to use instead.
pub(crate) fn portable(option: &str, compiler: Compiler) -> Result<Vec<String>> {
    let refuse = |reason: &'static str| {
        Err(Error::InvalidOption {
            option: option.to_string(),
            reason,
        })
    };
    let one = |o: &str| Ok(vec![o.to_string()]);
    match compiler {
        Compiler::Nvrtc => match option {
            "-O3" | "-O2" | "-O1" => Ok(Vec::new()),
            "-O0" => refuse(
                "HIP's NVIDIA platform compiles with NVRTC, which has no optimisation levels: its only \
                 unoptimised mode is -G (--device-debug), which also adds debug info",
            ),
            o if o.starts_with("-O") => refuse(
                "HIP's NVIDIA platform compiles with NVRTC, which has no optimisation levels (it always \
                 optimises device code fully): leave the option out",
            ),
            "-g" => one("-lineinfo"),
            "-ffast-math" => one("--use_fast_math"),
            _ => one(option),
        },
        Compiler::Clang => match option {
            "--use_fast_math" | "-use_fast_math" => one("-ffast-math"),
            "-lineinfo" | "--generate-line-info" => one("-gline-tables-only"),
            "-G" | "--device-debug" => Ok(vec!["-g".into(), "-O0".into()]),
            _ => one(option),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(o: &str, c: Compiler) -> Vec<String> {
        portable(o, c).unwrap()
    }

    #[test]
    fn optimisation_levels_are_dropped_or_refused_for_nvrtc_and_kept_for_clang() {
        for o in ["-O3", "-O2", "-O1"] {
            assert!(map(o, Compiler::Nvrtc).is_empty(), "{o}");
            assert_eq!(map(o, Compiler::Clang), [o]);
        }
        for o in ["-O0", "-Os", "-Oz", "-Ofast", "-O4"] {
            match portable(o, Compiler::Nvrtc) {
                Err(Error::InvalidOption { option, reason }) => {
                    assert_eq!(option, o);
                    assert!(
                        reason.contains("NVIDIA platform") && reason.contains("NVRTC"),
                        "{reason}"
                    );
                }
                other => panic!("{o}: {other:?}"),
            }
            assert_eq!(map(o, Compiler::Clang), [o]);
        }
        let e = portable("-O0", Compiler::Nvrtc).unwrap_err().to_string();
        assert!(e.contains("-G (--device-debug)"), "{e}");
    }

    #[test]
    fn debug_and_fast_math_take_each_compilers_spelling() {
        assert_eq!(map("-g", Compiler::Nvrtc), ["-lineinfo"]);
        assert_eq!(map("-g", Compiler::Clang), ["-g"]);
        assert_eq!(map("-ffast-math", Compiler::Nvrtc), ["--use_fast_math"]);
        assert_eq!(map("-ffast-math", Compiler::Clang), ["-ffast-math"]);
        for o in ["--use_fast_math", "-use_fast_math"] {
            assert_eq!(map(o, Compiler::Clang), ["-ffast-math"]);
            assert_eq!(map(o, Compiler::Nvrtc), [o]);
        }
        for o in ["-lineinfo", "--generate-line-info"] {
            assert_eq!(map(o, Compiler::Clang), ["-gline-tables-only"]);
            assert_eq!(map(o, Compiler::Nvrtc), [o]);
        }
        for o in ["-G", "--device-debug"] {
            assert_eq!(map(o, Compiler::Clang), ["-g", "-O0"]);
            assert_eq!(map(o, Compiler::Nvrtc), [o]);
        }
    }

    #[test]
    fn options_both_compilers_share_pass_unchanged() {
        for o in [
            "-std=c++17",
            "-DN=4",
            "-UX",
            "-I/usr/include/x",
            "-Wall",
            "-DOPT=-O0",
        ] {
            assert_eq!(map(o, Compiler::Nvrtc), [o]);
            assert_eq!(map(o, Compiler::Clang), [o]);
        }
        assert_eq!(
            Compiler::CURRENT,
            if cfg!(hip_platform = "nvidia") {
                Compiler::Nvrtc
            } else {
                Compiler::Clang
            }
        );
    }
}
