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
/// [`Error::InvalidOption`] naming the platform and what to use instead. An option holding a NUL byte is
/// [`Error::InteriorNul`], before anything else is looked at.
pub(crate) fn portable(option: &str, compiler: Compiler) -> Result<Vec<String>> {
    // First: a NUL ends the option where the compiler reads it, whatever it looks like before one.
    if option.contains('\0') {
        return Err(Error::InteriorNul {
            what: "compiler option",
            value: option.to_string(),
        });
    }
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

/// `options` in `compiler`'s spelling, each switch once: `-ffast-math` and `--use_fast_math` together
/// become one `--use_fast_math` for NVRTC, which refuses a switch given twice. Options with a value
/// (`-D`, `-U`, `-I`, `-std=`, anything with `=`) are passed as given, repeats included.
pub(crate) fn portable_all(options: &[String], compiler: Compiler) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::with_capacity(options.len());
    for o in options {
        for m in portable(o, compiler)? {
            let switch = !m.contains('=') && !["-D", "-U", "-I"].iter().any(|p| m.starts_with(p));
            if !(switch && out.contains(&m)) {
                out.push(m);
            }
        }
    }
    Ok(out)
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
    fn an_option_holding_a_nul_is_refused_for_its_nul_first() {
        // NVRTC read "-O3\0-g" as an optimisation level and refused it as one; clang passed it on.
        for c in [Compiler::Nvrtc, Compiler::Clang] {
            for o in ["-O3\0-g", "-O0\0", "\0", "-g\0-G"] {
                match portable(o, c) {
                    Err(Error::InteriorNul { what, value }) => {
                        assert_eq!((what, value.as_str()), ("compiler option", o))
                    }
                    other => panic!("{c:?} {o:?}: {other:?}"),
                }
            }
            let all = ["-O3".to_string(), "-DX=\0".to_string()];
            assert!(
                matches!(portable_all(&all, c), Err(Error::InteriorNul { value, .. }) if value == "-DX=\0"),
                "{c:?}"
            );
        }
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
    fn a_switch_given_in_both_spellings_is_passed_once() {
        let all = |o: &[&str], c| {
            portable_all(&o.iter().map(|s| s.to_string()).collect::<Vec<_>>(), c).unwrap()
        };
        assert_eq!(
            all(
                &["-ffast-math", "--use_fast_math", "-g", "-lineinfo"],
                Compiler::Nvrtc
            ),
            ["--use_fast_math", "-lineinfo"]
        );
        assert_eq!(
            all(
                &["-ffast-math", "--use_fast_math", "-G", "-O0"],
                Compiler::Clang
            ),
            ["-ffast-math", "-g", "-O0"]
        );
        // Values are kept as given, repeats included (the compiler decides what a repeat means).
        assert_eq!(
            all(
                &["-DA=1", "-DA=1", "-I/x", "-I/x", "-std=c++17"],
                Compiler::Nvrtc
            ),
            ["-DA=1", "-DA=1", "-I/x", "-I/x", "-std=c++17"]
        );
        assert!(portable_all(&["-O0".to_string()], Compiler::Nvrtc).is_err());
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
