//! Hostile target ids and options: each one used to crash HIPRTC 5.2.3 (glibc `munmap_chunk(): invalid
//! pointer`, killing the test process) or was accepted silently. Each must now be a clear `Err` before
//! HIPRTC runs. Real HIPRTC and comgr, no GPU.
#![cfg(hip_platform = "amd")]
mod common;

use common::{elf, OFFLINE_ARCH, VECTOR_ADD};
use hip::rtc::ProgramBuilder;
use hip::{Error, Status};

fn compile_with_arch(arch: &str) -> hip::Result<hip::rtc::CompiledProgram> {
    ProgramBuilder::new(VECTOR_ADD)
        .arch(arch)
        .no_cache()
        .compile()
}

fn compile_with_option(option: &str) -> hip::Result<hip::rtc::CompiledProgram> {
    ProgramBuilder::new(VECTOR_ADD)
        .option(option)
        .arch(OFFLINE_ARCH)
        .no_cache()
        .compile()
}

#[test]
fn a_feature_the_processor_lacks_is_refused_from_comgr_metadata() {
    // gfx1030 has neither xnack nor sramecc; gfx900 has xnack only (comgr's ISA metadata says so).
    for (arch, feature, supported) in [
        ("gfx1030:xnack+", "xnack+", "none"),
        ("gfx1030:sramecc-", "sramecc-", "none"),
        ("gfx900:sramecc+", "sramecc+", "xnack+, xnack-"),
        ("gfx900:xnack+:sramecc+", "sramecc+", "xnack+, xnack-"),
    ] {
        let err = compile_with_arch(arch).unwrap_err();
        match &err {
            Error::UnsupportedArchFeature {
                arch: a,
                feature: f,
                supported: s,
            } => {
                assert_eq!(
                    (a.as_str(), f.as_str(), s.as_str()),
                    (arch, feature, supported)
                );
            }
            other => panic!("{arch}: {other}"),
        }
        assert_eq!(err.status(), Status::InvalidArgument);
        assert!(err.to_string().contains(arch), "{err}");
        // The same through the option.
        let err = ProgramBuilder::new(VECTOR_ADD)
            .option(format!("--offload-arch={arch}"))
            .no_cache()
            .compile()
            .unwrap_err();
        assert!(matches!(err, Error::UnsupportedArchFeature { .. }), "{err}");
    }
}

#[test]
fn features_the_processor_has_compile_for_it() {
    for arch in [
        "gfx900:xnack+",
        "gfx906:sramecc-:xnack-",
        "gfx90a:sramecc+:xnack+",
    ] {
        let out = compile_with_arch(arch).unwrap_or_else(|e| panic!("{arch}: {e}"));
        assert_eq!(elf::machine(out.code()), elf::EM_AMDGPU);
    }
}

#[test]
fn a_repeated_or_malformed_feature_is_refused() {
    for (arch, feature) in [
        ("gfx90a:xnack+:xnack-", "xnack-"),
        ("gfx90a:xnack", "xnack"),
        ("gfx90a:", ""),
        ("gfx90a::xnack+", ""),
        ("gfx90a:+", "+"),
    ] {
        let err = compile_with_arch(arch).unwrap_err();
        assert!(
            matches!(&err, Error::UnsupportedArchFeature { feature: f, .. } if f == feature),
            "{arch}: {err}"
        );
    }
}

#[test]
fn a_target_named_inside_another_option_is_refused() {
    // `-DX=--offload-arch=gfx90a` aborted the process inside HIPRTC 5.2.3.
    for option in [
        "-DX=--offload-arch=gfx90a",
        "-DX=--offload-arch=gfx999",
        "-DX=--gpu-architecture=gfx90a",
        "-DY=1 --offload-arch=gfx90a",
        "-mcpu=gfx999",
        "-mcpu=gfx90a",
        "-march=gfx90a",
        "-DX=-mcpu=gfx999",
        "--cuda-gpu-arch=gfx90a",
        "--amdgpu-target=gfx90a",
        "-Xclang=-target-cpu",
        "-offload-arch=gfx90a",
        "--gpu-architecture=gfx90a --offload-arch=gfx999",
        "--gpu-architecture=gfx90a,-DX=--offload-arch=x",
    ] {
        let err = compile_with_option(option).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidOption { option: o, .. } if o == option),
            "{option}: {err}"
        );
        assert_eq!(err.status(), Status::InvalidArgument);
    }
}

#[test]
fn an_empty_option_is_refused() {
    for option in ["", " ", "\t"] {
        let err = compile_with_option(option).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidOption { option: o, reason } if o == option && reason.contains("empty")),
            "{option:?}: {err}"
        );
    }
}

#[test]
fn an_unknown_arch_in_any_target_option_is_refused() {
    for option in [
        "--offload-arch=gfx999",
        "--gpu-architecture=gfx999",
        "-arch=sm_90",
        "--offload-arch=",
    ] {
        let err = ProgramBuilder::new(VECTOR_ADD)
            .option(option)
            .no_cache()
            .compile()
            .unwrap_err();
        assert!(matches!(err, Error::UnknownArch { .. }), "{option}: {err}");
    }
}

#[test]
fn two_different_targets_are_refused_and_the_same_one_twice_is_not() {
    let err = ProgramBuilder::new(VECTOR_ADD)
        .option("--offload-arch=gfx1030")
        .arch("gfx90a")
        .no_cache()
        .compile()
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidOption { reason, .. } if reason.contains("second")),
        "{err}"
    );
    let err = ProgramBuilder::new(VECTOR_ADD)
        .option("--offload-arch=gfx1030")
        .option("--gpu-architecture=gfx906")
        .no_cache()
        .compile()
        .unwrap_err();
    assert!(matches!(err, Error::InvalidOption { .. }), "{err}");
    let out = ProgramBuilder::new(VECTOR_ADD)
        .option("--offload-arch=gfx90a")
        .arch("gfx90a")
        .no_cache()
        .compile()
        .unwrap();
    assert_eq!(elf::machine(out.code()), elf::EM_AMDGPU);
}

#[test]
fn ordinary_options_with_target_like_letters_still_work() {
    // `-O3`, `-DARCH=3`, `-ffast-math` mention no target and reach the compiler.
    let src = "#if ARCHES != 3\n#error no\n#endif\nextern \"C\" __global__ void k() {}\n";
    // The source's #error fires unless -DARCHES=3 reached the compiler.
    let out = ProgramBuilder::new(src)
        .options(["-O3", "-DARCHES=3", "-ffast-math"])
        .arch(OFFLINE_ARCH)
        .no_cache()
        .compile()
        .unwrap();
    assert_eq!(elf::machine(out.code()), elf::EM_AMDGPU);
    assert!(elf::symbols(out.code()).iter().any(|s| s == "k"));
}
