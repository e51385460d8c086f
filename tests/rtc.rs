//! The safe HIPRTC API end to end against the real HIPRTC, for an explicit AMD target: no GPU needed.
#![cfg(hip_platform = "amd")]
mod common;

use common::{elf, OFFLINE_ARCH, VECTOR_ADD};
use hip::rtc::{self, ProgramBuilder};
use hip::{Device, Error, Status};

#[test]
fn vector_add_compiles_for_an_explicit_arch() {
    let out = ProgramBuilder::new(VECTOR_ADD)
        .arch(OFFLINE_ARCH)
        .compile()
        .unwrap();
    assert_eq!(elf::machine(out.code()), elf::EM_AMDGPU);
    assert!(elf::symbols(out.code()).iter().any(|s| s == "vector_add"));
    assert!(!out.log().contains("error"), "{}", out.log());
}

#[test]
fn a_compile_error_carries_the_full_log() {
    let err = ProgramBuilder::new(
        "extern \"C\" __global__ void k(int* x) {\n  x[0] = undefined_name;\n}\n",
    )
    .name("bad.hip")
    .arch(OFFLINE_ARCH)
    .compile()
    .unwrap_err();
    assert_eq!(
        err.rtc_code().unwrap().name(),
        Some("HIPRTC_ERROR_COMPILATION")
    );
    assert_eq!(err.status(), Status::InvalidArgument);
    let log = err.log().expect("compile errors carry the log");
    // The program's name, not comgr's temporary file (5.2.3: /tmp/comgr-*/input/CompileSource; 5.7.1 to
    // 7.2.4: /tmp/comgr-*/input/bad.hip).
    assert!(
        log.starts_with("bad.hip:2:10: error: use of undeclared identifier 'undefined_name'"),
        "{log}"
    );
    assert!(
        !log.contains("comgr") && !log.contains("CompileSource"),
        "{log}"
    );
    assert!(
        err.to_string().contains("undefined_name"),
        "the Display shows the log: {err}"
    );
}

#[test]
fn a_bad_option_is_an_error() {
    let err = ProgramBuilder::new(VECTOR_ADD)
        .arch(OFFLINE_ARCH)
        .option("--no-such-option-xyz")
        .compile()
        .unwrap_err();
    // Measured with HIPRTC 5.2.3, 5.7.1, 6.4.3 and 7.2.4: a compilation error whose log names the option
    // (5.x says "unsupported option", 6 and 7 "unknown argument").
    assert_eq!(
        err.rtc_code().and_then(|c| c.name()),
        Some("HIPRTC_ERROR_COMPILATION"),
        "{err}"
    );
    assert_eq!(err.status(), Status::InvalidArgument);
    let log = err.log().expect("a compile error carries the log");
    assert!(
        log.contains("unsupported option '--no-such-option-xyz'")
            || log.contains("unknown argument: '--no-such-option-xyz'"),
        "{log}"
    );
    assert!(err.to_string().contains("'--no-such-option-xyz'"), "{err}");
}

#[test]
fn an_unknown_arch_is_refused_before_hiprtc_crashes_on_it() {
    // HIPRTC 5.2.3 aborts the process on each of these; the crate must refuse them first.
    for arch in ["gfx_not_real", "gfx999", "sm_90", ""] {
        let err = ProgramBuilder::new(VECTOR_ADD)
            .arch(arch)
            .compile()
            .unwrap_err();
        assert!(
            matches!(&err, Error::UnknownArch { arch: a, known } if a == arch && known.contains("gfx90a")),
            "{err}"
        );
        assert_eq!(err.status(), Status::InvalidArgument);
        let err = ProgramBuilder::new(VECTOR_ADD)
            .option(format!("--gpu-architecture={arch}"))
            .compile()
            .unwrap_err();
        assert!(matches!(err, Error::UnknownArch { .. }), "{err}");
    }
    // A processor it knows with a feature that processor lacks (see tests/rtc_targets.rs).
    let err = ProgramBuilder::new(VECTOR_ADD)
        .arch("gfx90a:bogus+")
        .compile()
        .unwrap_err();
    assert!(
        matches!(&err, Error::UnsupportedArchFeature { feature, .. } if feature == "bogus+"),
        "{err}"
    );
    let err = ProgramBuilder::new(VECTOR_ADD)
        .option("--gpu-architecture")
        .compile()
        .unwrap_err();
    assert!(matches!(err, Error::InvalidOption { .. }), "{err}");
    // Full target ids with features are accepted.
    ProgramBuilder::new(VECTOR_ADD)
        .arch("gfx90a:sramecc+:xnack-")
        .compile()
        .unwrap();
}

#[test]
fn headers_are_found_by_include_name() {
    let src = "#include \"scale.h\"\nextern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= SCALE; }\n";
    let out = ProgramBuilder::new(src)
        .header("scale.h", "#define SCALE 3.0f\n")
        .arch(OFFLINE_ARCH)
        .compile()
        .unwrap();
    assert!(elf::symbols(out.code()).iter().any(|s| s == "k"));

    let err = ProgramBuilder::new(src)
        .arch(OFFLINE_ARCH)
        .compile()
        .unwrap_err();
    assert!(
        err.log().unwrap().contains("'scale.h' file not found"),
        "{err}"
    );
}

#[test]
fn options_reach_the_compiler_in_order() {
    let src = "#if !defined(N) || N != 4\n#error N must be 4\n#endif\nextern \"C\" __global__ void k() {}\n";
    ProgramBuilder::new(src)
        .option("-DN=3")
        .option("-UN")
        .option("-DN=4")
        .arch(OFFLINE_ARCH)
        .compile()
        .unwrap();
    let err = ProgramBuilder::new(src)
        .option("-DN=4")
        .option("-UN")
        .arch(OFFLINE_ARCH)
        .compile()
        .unwrap_err();
    assert!(err.log().unwrap().contains("N must be 4"));
}

#[test]
fn lowered_names_of_templates_come_back() {
    let src = "template <typename T> __global__ void fill(T* x, T v) { x[threadIdx.x] = v; }\n";
    let out = ProgramBuilder::new(src)
        .name_expression("fill<float>")
        .name_expression("fill<int>")
        .arch(OFFLINE_ARCH)
        .compile()
        .unwrap();
    assert_eq!(out.lowered_name("fill<float>"), Some("_Z4fillIfEvPT_S0_"));
    assert_eq!(out.lowered_name("fill<int>"), Some("_Z4fillIiEvPT_S0_"));
    assert_eq!(out.lowered_name("fill<double>"), None);
    let syms = elf::symbols(out.code());
    assert!(syms.iter().any(|s| s == "_Z4fillIfEvPT_S0_"), "{syms:?}");
}

#[test]
fn an_invalid_name_expression_is_an_error() {
    let src = "template <typename T> __global__ void fill(T* x) { x[0] = 0; }\n";
    let err = ProgramBuilder::new(src)
        .name_expression("no_such_kernel<float>")
        .arch(OFFLINE_ARCH)
        .compile()
        .expect_err("an expression naming nothing cannot be lowered");
    // HIPRTC compiles each expression into the program: the compile fails on the unknown name.
    assert_eq!(
        err.rtc_code().and_then(|c| c.name()),
        Some("HIPRTC_ERROR_COMPILATION"),
        "{err}"
    );
    let log = err.log().expect("a compile error carries the log");
    assert!(
        log.contains("error: use of undeclared identifier 'no_such_kernel'"),
        "{log}"
    );
}

#[test]
fn interior_nul_is_refused_before_hiprtc() {
    let err = ProgramBuilder::new(VECTOR_ADD)
        .arch(OFFLINE_ARCH)
        .option("-O3\0-g")
        .compile()
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::InteriorNul {
                what: "compiler option",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn every_string_holding_a_nul_is_refused_for_its_nul_before_other_checks() {
    let nul = |b: ProgramBuilder, what: &str| match b.no_cache().compile() {
        Err(Error::InteriorNul { what: w, .. }) => assert_eq!(w, what),
        other => panic!("{what}: {other:?}"),
    };
    // Before the architecture is checked (an unknown one, or none on a machine without a device).
    nul(
        ProgramBuilder::new(VECTOR_ADD).arch("gfx90a\0"),
        "target architecture",
    );
    nul(ProgramBuilder::new("\0").arch("gfx999"), "kernel source");
    nul(
        ProgramBuilder::new(VECTOR_ADD).name("a\0.hip"),
        "program name",
    );
    nul(
        ProgramBuilder::new(VECTOR_ADD).header("h\0.h", ""),
        "header name",
    );
    nul(
        ProgramBuilder::new(VECTOR_ADD).header(" ", "\0"),
        "header contents",
    );
    nul(
        ProgramBuilder::new(VECTOR_ADD).name_expression(" \0"),
        "name expression",
    );
    nul(
        ProgramBuilder::new(VECTOR_ADD).option("--gpu-architecture=gfx999\0"),
        "compiler option",
    );
    match ProgramBuilder::new(VECTOR_ADD)
        .arch("gfx90a\0")
        .resolved_options()
    {
        Err(Error::InteriorNul { what, .. }) => assert_eq!(what, "target architecture"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn without_a_device_the_arch_is_required() {
    match Device::count() {
        Ok(n) => {
            // A device exists: its architecture is the default and the compile works.
            assert!(n > 0);
            let out = ProgramBuilder::new(VECTOR_ADD).compile().unwrap();
            assert!(!out.code().is_empty());
        }
        Err(_) => {
            let err = ProgramBuilder::new(VECTOR_ADD).compile().unwrap_err();
            assert!(matches!(err, Error::ArchRequired { .. }), "{err}");
            assert!(err.to_string().contains("--gpu-architecture"), "{err}");
            assert_eq!(err.status(), Status::InvalidArgument);
            // An explicit option is enough.
            ProgramBuilder::new(VECTOR_ADD)
                .option("--gpu-architecture=gfx90a")
                .compile()
                .unwrap();
        }
    }
}

#[test]
fn hiprtc_reports_a_version() {
    // Not HIP's version: every AMD HIPRTC from 5.2.3 to 7.2.4 answers 9.0 (measured on Debian's), so the
    // compile cache's key cannot rely on it and keys on the runtime's version too.
    assert_eq!(rtc::version().unwrap(), (9, 0));
}

#[test]
fn compiles_in_many_threads_at_once_all_succeed() {
    // HIPRTC 5.2.3 crashed (SIGSEGV in hiprtcAddNameExpression while another thread was inside
    // hiprtcCompileProgram) when the compile-cache tests ran in parallel, so the crate serialises HIPRTC
    // programs. Eight threads, three programs each (every third one failing), all at once, each getting
    // its own right result:
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                (0..3)
                    .map(|j| {
                        let body = if (i + j) % 3 == 0 { "undefined_name" } else { "M + N" };
                        ProgramBuilder::new(format!(
                            "#include \"n.h\"\ntemplate <int M> __global__ void k(int* x) {{ x[threadIdx.x] = {body}; }}",
                        ))
                        .header("n.h", format!("#define N {}\n", i * 3 + j))
                        .option("-O2")
                        .arch(OFFLINE_ARCH)
                        .name_expression("k<1>")
                        .name_expression("k<2>")
                        .no_cache()
                        .compile()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for (i, t) in threads.into_iter().enumerate() {
        for (j, out) in t
            .join()
            .expect("no thread panicked")
            .into_iter()
            .enumerate()
        {
            if (i + j) % 3 == 0 {
                let log = out.unwrap_err().log().unwrap_or_default().to_string();
                assert!(log.contains("undefined_name"), "{log}");
            } else {
                assert_eq!(
                    out.expect("compiles").lowered_name("k<2>"),
                    Some("_Z1kILi2EEvPi")
                );
            }
        }
    }
}
