//! The linker against the real comgr, for an explicit AMD target, on a machine without a GPU.
//!
//! HIPRTC >= 5.3 (Debian trixie 5.7.1, sid 6.4.3, experimental 7.2.4): bitcode links into a code object.
//! HIPRTC 5.2.3 (Debian bookworm) has no bitcode: every entry point says `NotSupported`, tested below too.
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
fn before_5_3_every_linker_entry_point_is_not_supported() {
    if rtc::HAS_LINKER {
        // 5.3 and later: the linker tests below run instead; bitcode really comes out.
        let code = bitcode(HELPER, OFFLINE_ARCH).unwrap();
        assert!(
            code.starts_with(b"BC\xc0\xde"),
            "{:?}",
            &code[..4.min(code.len())]
        );
        return;
    }
    let errors = [
        bitcode(HELPER, OFFLINE_ARCH).unwrap_err(),
        Linker::for_arch(OFFLINE_ARCH, ["-O3"]).unwrap_err(),
        Linker::new(Vec::<String>::new()).unwrap_err(),
    ];
    for err in errors {
        assert!(matches!(err, Error::NotSupported { .. }), "{err}");
        assert_eq!(err.status(), Status::NotSupported);
        assert!(err.to_string().contains("5.3"), "{err}");
    }
}

/// Each test below states both behaviours: linked output on >= 5.3, `NotSupported` before.
fn linker() -> Option<Linker> {
    match (Linker::for_arch(OFFLINE_ARCH, ["-O3"]), rtc::HAS_LINKER) {
        (Ok(l), true) => Some(l),
        (Err(e), false) => {
            assert_eq!(e.status(), Status::NotSupported, "{e}");
            None
        }
        (other, has_linker) => {
            panic!("HAS_LINKER is {has_linker}, but Linker::for_arch gave {other:?}")
        }
    }
}

#[test]
fn two_programs_link_from_data_without_a_gpu() {
    let Some(mut l) = linker() else { return };
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
fn two_programs_link_from_files() {
    let Some(mut l) = linker() else { return };
    let dir = TempDir::new("link-files");
    for (name, src) in [("helper.bc", HELPER), ("kernel.bc", KERNEL)] {
        std::fs::write(dir.path().join(name), bitcode(src, OFFLINE_ARCH).unwrap()).unwrap();
        l.add_file(LinkInput::Bitcode, &dir.path().join(name))
            .unwrap();
    }
    assert_links_double_all(&l.complete().unwrap());
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let Some(mut l) = linker() else { return };
    let path = std::path::Path::new("/nonexistent/dir/kernel.bc");
    let err = l.add_file(LinkInput::Bitcode, path).unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/dir/kernel.bc"),
        "{err}"
    );
    assert_eq!(err.status(), Status::NotFound);
}

#[test]
fn an_unresolved_symbol_fails_with_the_linkers_log() {
    let Some(mut l) = linker() else { return };
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
fn bitcode_for_another_target_is_refused() {
    let Some(mut l) = linker() else { return };
    let other = bitcode(HELPER, "gfx1100").unwrap();
    let err = l
        .add_data(LinkInput::Bitcode, &other, "helper.bc")
        .unwrap_err();
    assert!(matches!(err, Error::TargetMismatch { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("gfx1100") && text.contains("gfx90a") && text.contains("helper.bc"),
        "{text}"
    );
    assert_eq!(err.status(), Status::InvalidArgument);
}

#[test]
fn bad_inputs_are_refused_before_comgr() {
    let Some(mut l) = linker() else { return };
    let bc = bitcode(HELPER, OFFLINE_ARCH).unwrap();
    for (data, name) in [
        (&b"not bitcode"[..], "junk.bc"),
        (&bc[..bc.len() / 2], "half.bc"),
    ] {
        let err = l.add_data(LinkInput::Bitcode, data, name).unwrap_err();
        assert!(err.to_string().contains(name), "{err}");
    }
    let err = l.add_data(LinkInput::Bitcode, &bc, "").unwrap_err();
    assert_eq!(err.status(), Status::InvalidArgument);
    l.add_data(LinkInput::Bitcode, &bc, "a.bc").unwrap();
    let err = l.add_data(LinkInput::Bitcode, &bc, "a.bc").unwrap_err();
    assert!(err.to_string().contains("two link inputs"), "{err}");
    let empty = linker().unwrap();
    assert!(empty
        .complete()
        .unwrap_err()
        .to_string()
        .contains("nothing to link"));
    assert!(Linker::for_arch("gfx999", ["-O3"]).is_err());
    assert!(Linker::for_arch(OFFLINE_ARCH, [""]).is_err());
}

#[test]
fn linking_after_the_programs_were_dropped_works() {
    let Some(mut l) = linker() else { return };
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
fn links_and_compiles_in_many_threads_at_once() {
    if !rtc::HAS_LINKER {
        assert!(linker().is_none());
        return;
    }
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
    if hip::Device::count().unwrap_or(0) > 0 {
        let arch = hip::Device::get(0).unwrap().arch_name().unwrap();
        assert_eq!(Linker::new(["-O3"]).unwrap().arch(), arch);
        return;
    }
    let err = Linker::new(["-O3"]).unwrap_err();
    if rtc::HAS_LINKER {
        assert!(matches!(err, Error::ArchRequired { .. }), "{err}");
        assert!(err.to_string().contains("no HIP device"), "{err}");
    } else {
        assert_eq!(err.status(), Status::NotSupported);
    }
}
