//! The linker against the real comgr, for an explicit AMD target, on a machine without a GPU.
//!
//! HIPRTC >= 5.3 (Debian trixie 5.7.1, sid 6.4.3, experimental 7.2.4): bitcode links into a code object.
//! HIPRTC 5.2.3 (Debian bookworm) has no bitcode: every entry point says `NotSupported`, tested below too.
//! Which of the two a build has is `cfg(hiprtc_linker)` (the root build script reads it from hiprtc-sys's
//! bindings as the `hip` crate does): a test that needs the linker is `#[ignore]`d, with the reason, where
//! the build has none, so `cargo test` counts it as ignored instead of passing it.
#![cfg(hip_platform = "amd")]
mod common;

use common::{elf, tempdir::TempDir, OFFLINE_ARCH};
use hip::rtc::{self, LinkInput, Linker, ProgramBuilder};
use hip::{Error, Status};

const HELPER: &str = "extern \"C\" __device__ float twice(float x) { return 2.0f * x; }\n";
const KERNEL: &str = "extern \"C\" __device__ float twice(float x);\n\
    extern \"C\" __global__ void double_all(float* x, unsigned n) {\n\
        unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n\
        if (i < n) x[i] = twice(x[i]);\n\
    }\n";

fn bitcode(src: &str, arch: &str) -> hip::Result<Vec<u8>> {
    Ok(ProgramBuilder::new(src)
        .arch(arch)
        .no_cache()
        .compile_bitcode()?
        .into_code())
}

fn assert_links_double_all(code: &[u8]) {
    assert_eq!(elf::machine(code), elf::EM_AMDGPU);
    let symbols = elf::symbols(code);
    for s in ["double_all", "double_all.kd"] {
        assert!(
            symbols.iter().any(|x| x == s),
            "{s} missing from {symbols:?}"
        );
    }
}

#[test]
fn the_build_cfg_and_the_crate_agree_on_the_linker() {
    assert_eq!(rtc::HAS_LINKER, cfg!(hiprtc_linker));
}

#[test]
#[cfg_attr(
    hiprtc_linker,
    ignore = "HIPRTC >= 5.3 has the linker: the tests that use it run instead"
)]
fn before_5_3_every_linker_entry_point_is_not_supported() {
    let errors = [
        (
            "hiprtcGetBitcode",
            bitcode(HELPER, OFFLINE_ARCH).unwrap_err(),
        ),
        (
            "the linker",
            Linker::for_arch(OFFLINE_ARCH, ["-O3"]).unwrap_err(),
        ),
        ("the linker", Linker::new(Vec::<String>::new()).unwrap_err()),
        // Refused before anything else is looked at, bad arguments included.
        ("the linker", Linker::for_arch("gfx999", [""]).unwrap_err()),
    ];
    for (what, err) in errors {
        assert!(
            matches!(err, Error::NotSupported { what: w, reason } if w == what && reason.contains("ROCm 5.3")),
            "{err}"
        );
        assert_eq!(err.status(), Status::NotSupported);
        assert!(err.to_string().contains("5.3"), "{err}");
    }
}

#[test]
#[cfg_attr(
    not(hiprtc_linker),
    ignore = "needs HIPRTC >= 5.3 (the linker API); this build's HIPRTC has none"
)]
fn bitcode_comes_out_for_the_linker() {
    let code = bitcode(HELPER, OFFLINE_ARCH).unwrap();
    assert!(
        code.starts_with(b"BC\xc0\xde"),
        "{:?}",
        &code[..4.min(code.len())]
    );
}

/// A linker for the offline target (the tests using it are ignored where the build has no linker).
fn linker() -> Linker {
    Linker::for_arch(OFFLINE_ARCH, ["-O3"]).expect("HIPRTC >= 5.3 has a linker")
}

#[test]
#[cfg_attr(
    not(hiprtc_linker),
    ignore = "needs HIPRTC >= 5.3 (the linker API); this build's HIPRTC has none"
)]
fn two_programs_link_from_data_without_a_gpu() {
    let mut l = linker();
    l.add_data(
        LinkInput::Bitcode,
        &bitcode(HELPER, OFFLINE_ARCH).unwrap(),
        "helper.bc",
    )
    .unwrap();
    l.add_data(
        LinkInput::Bitcode,
        &bitcode(KERNEL, OFFLINE_ARCH).unwrap(),
        "kernel.bc",
    )
    .unwrap();
    assert_links_double_all(&l.complete().unwrap());
}

#[test]
#[cfg_attr(
    not(hiprtc_linker),
    ignore = "needs HIPRTC >= 5.3 (the linker API); this build's HIPRTC has none"
)]
fn two_programs_link_from_files() {
    let mut l = linker();
    let dir = TempDir::new("link-files");
    for (name, src) in [("helper.bc", HELPER), ("kernel.bc", KERNEL)] {
        std::fs::write(dir.path().join(name), bitcode(src, OFFLINE_ARCH).unwrap()).unwrap();
        l.add_file(LinkInput::Bitcode, &dir.path().join(name))
            .unwrap();
    }
    assert_links_double_all(&l.complete().unwrap());
}

#[test]
#[cfg_attr(
    not(hiprtc_linker),
    ignore = "needs HIPRTC >= 5.3 (the linker API); this build's HIPRTC has none"
)]
fn a_missing_file_is_an_error_naming_it() {
    let mut l = linker();
    let path = std::path::Path::new("/nonexistent/dir/kernel.bc");
    let err = l.add_file(LinkInput::Bitcode, path).unwrap_err();
    assert!(
        matches!(&err, Error::Io { what: "read link input", path: p, source }
            if p == path && source.kind() == std::io::ErrorKind::NotFound),
        "{err}"
    );
    assert!(
        err.to_string().contains("/nonexistent/dir/kernel.bc"),
        "{err}"
    );
    assert_eq!(err.status(), Status::NotFound);
}

#[test]
#[cfg_attr(
    not(hiprtc_linker),
    ignore = "needs HIPRTC >= 5.3 (the linker API); this build's HIPRTC has none"
)]
fn an_unresolved_symbol_fails_with_the_linkers_log() {
    let mut l = linker();
    l.add_data(
        LinkInput::Bitcode,
        &bitcode(KERNEL, OFFLINE_ARCH).unwrap(),
        "kernel.bc",
    )
    .unwrap();
    let err = l.complete().unwrap_err();
    assert!(matches!(err, Error::Comgr { .. }), "{err}");
    let log = err.log().expect("a link failure carries the log");
    assert!(log.contains("undefined") && log.contains("twice"), "{log}");
    assert_eq!(err.status(), Status::HipError);
}

#[test]
#[cfg_attr(
    not(hiprtc_linker),
    ignore = "needs HIPRTC >= 5.3 (the linker API); this build's HIPRTC has none"
)]
fn bitcode_for_another_target_is_refused() {
    let mut l = linker();
    let other = bitcode(HELPER, "gfx1100").unwrap();
    let err = l
        .add_data(LinkInput::Bitcode, &other, "helper.bc")
        .unwrap_err();
    assert!(
        matches!(&err, Error::TargetMismatch { input, found, expected }
            if input == "helper.bc" && found == "gfx1100" && expected == "amdgcn-amd-amdhsa--gfx90a"),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("gfx1100") && text.contains("gfx90a") && text.contains("helper.bc"),
        "{text}"
    );
    assert_eq!(err.status(), Status::InvalidArgument);
}

#[test]
#[cfg_attr(
    not(hiprtc_linker),
    ignore = "needs HIPRTC >= 5.3 (the linker API); this build's HIPRTC has none"
)]
fn bad_inputs_are_refused_before_comgr() {
    let mut l = linker();
    let bc = bitcode(HELPER, OFFLINE_ARCH).unwrap();
    // Not bitcode, or cut short: the target cannot be read (hip::rtc::bitcode), named by the input.
    for (data, name) in [
        (&b"not bitcode"[..], "junk.bc"),
        (&bc[..bc.len() / 2], "half.bc"),
    ] {
        let err = l.add_data(LinkInput::Bitcode, data, name).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidCodeObject(m) if m.starts_with(&format!("link input `{name}`: "))),
            "{err}"
        );
        assert_eq!(err.status(), Status::InvalidArgument);
    }
    let err = l.add_data(LinkInput::Bitcode, &bc, "").unwrap_err();
    assert!(
        matches!(&err, Error::InvalidOption { option, reason } if option.is_empty() && reason.contains("needs a name")),
        "{err}"
    );
    assert_eq!(err.status(), Status::InvalidArgument);
    l.add_data(LinkInput::Bitcode, &bc, "a.bc").unwrap();
    let err = l.add_data(LinkInput::Bitcode, &bc, "a.bc").unwrap_err();
    assert!(
        matches!(&err, Error::InvalidOption { option, reason: "two link inputs have this name" } if option == "a.bc"),
        "{err}"
    );
    let err = linker().complete().unwrap_err();
    assert!(
        matches!(&err, Error::InvalidOption { reason, .. } if reason.starts_with("nothing to link")),
        "{err}"
    );
    let err = Linker::for_arch("gfx999", ["-O3"]).unwrap_err();
    assert!(
        matches!(&err, Error::UnknownArch { arch, known } if arch == "gfx999" && known.contains("gfx90a")),
        "{err}"
    );
    // A NUL byte is refused for itself, before the architecture or the option is judged.
    for (arch, option, what) in [
        ("gfx999\0", "-O3", "linker target architecture"),
        (OFFLINE_ARCH, "\0", "linker option"),
        ("gfx999", "-O\0", "linker option"),
    ] {
        let err = Linker::for_arch(arch, [option]).unwrap_err();
        assert!(
            matches!(&err, Error::InteriorNul { what: w, .. } if *w == what),
            "{err}"
        );
    }
    let err = Linker::new(["-g\0"]).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::InteriorNul {
                what: "linker option",
                ..
            }
        ),
        "{err}"
    );
    let err = Linker::for_arch(OFFLINE_ARCH, [""]).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidOption { option, reason } if option.is_empty() && reason.contains("non-empty")),
        "{err}"
    );
}

#[test]
#[cfg_attr(
    not(hiprtc_linker),
    ignore = "needs HIPRTC >= 5.3 (the linker API); this build's HIPRTC has none"
)]
fn linking_after_the_programs_were_dropped_works() {
    let mut l = linker();
    let helper = ProgramBuilder::new(HELPER)
        .arch(OFFLINE_ARCH)
        .no_cache()
        .compile_bitcode()
        .unwrap();
    let kernel = ProgramBuilder::new(KERNEL)
        .arch(OFFLINE_ARCH)
        .no_cache()
        .compile_bitcode()
        .unwrap();
    l.add_data(LinkInput::Bitcode, helper.code(), "helper.bc")
        .unwrap();
    l.add_data(LinkInput::Bitcode, kernel.code(), "kernel.bc")
        .unwrap();
    drop((helper, kernel));
    assert_links_double_all(&l.complete().unwrap());
}

#[test]
#[cfg_attr(
    not(hiprtc_linker),
    ignore = "needs HIPRTC >= 5.3 (the linker API); this build's HIPRTC has none"
)]
fn links_and_compiles_in_many_threads_at_once() {
    let helper = bitcode(HELPER, OFFLINE_ARCH).unwrap();
    let kernel = bitcode(KERNEL, OFFLINE_ARCH).unwrap();
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(6));
    let threads: Vec<_> = (0..6)
        .map(|i| {
            let (helper, kernel, barrier) = (helper.clone(), kernel.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                if i % 2 == 0 {
                    let mut l = Linker::for_arch(OFFLINE_ARCH, ["-O3"]).unwrap();
                    l.add_data(LinkInput::Bitcode, &helper, "helper.bc")
                        .unwrap();
                    l.add_data(LinkInput::Bitcode, &kernel, "kernel.bc")
                        .unwrap();
                    l.complete().unwrap()
                } else {
                    bitcode(&format!("{HELPER}// {i}\n"), OFFLINE_ARCH).unwrap()
                }
            })
        })
        .collect();
    for (i, t) in threads.into_iter().enumerate() {
        let out = t.join().expect("no thread panicked");
        if i % 2 == 0 {
            assert_links_double_all(&out);
        } else {
            assert!(out.starts_with(b"BC\xc0\xde"));
        }
    }
}

#[test]
fn the_default_target_is_the_devices_and_without_one_is_required() {
    let device = hip::Device::count().is_ok_and(|n| n > 0);
    let result = Linker::new(["-O3"]);
    match (rtc::HAS_LINKER, device) {
        (true, true) => {
            let arch = hip::Device::get(0).unwrap().arch_name().unwrap();
            assert_eq!(result.unwrap().arch(), arch);
        }
        (true, false) => {
            let err = result.unwrap_err();
            assert!(matches!(err, Error::ArchRequired { .. }), "{err}");
            assert!(err.to_string().contains("no HIP device"), "{err}");
        }
        // Before 5.3 the answer is the same with or without a device.
        (false, _) => {
            let err = result.unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::NotSupported {
                        what: "the linker",
                        ..
                    }
                ),
                "{err}"
            );
            assert_eq!(err.status(), Status::NotSupported);
        }
    }
}
