//! The `dynamic-loading` feature against the real runtime: the library is opened at run time, from the
//! documented search order, and a missing one is `Error::LibraryNotFound` from every entry point.
//!
//! `without_hip_every_entry_point_says_library_not_found` needs HIP hidden from the process: it is run by
//! `scripts/check-dynamic-loading.sh`, which bind-mounts empty files over the HIP libraries in a private
//! mount namespace (root), with `--ignored`.
#![cfg(all(feature = "dynamic-loading", hip_platform = "amd"))]
mod common;

use hip::rtc::ProgramBuilder;
use hip::{Device, Error, Status};

#[test]
fn the_runtime_is_opened_from_the_first_candidate_that_loads() {
    // The first call opens the library; without a GPU the real runtime answers hipErrorNoDevice.
    match Device::count() {
        Ok(n) => assert!(n > 0),
        Err(e) => assert_eq!(e.hip_code().map(|c| c.0), Some(100), "{e}"),
    }
    let opened = hip_sys::loader::library().expect("the runtime opened");
    let candidates =
        hip_sys::loader::hip_candidates(hip_sys::loader::Os::CURRENT, &hip_sys::loader::env_var);
    assert!(
        candidates.contains(&opened.path),
        "{} not in {candidates:?}",
        opened.path
    );
    assert!(hip_sys::loader::failure().is_none());
    // HIPRTC: a libhiprtc from ROCm 6, the runtime itself on 5.x.
    let rtc = hiprtc_sys::loader::loaded_from().expect("HIPRTC opened");
    let major = common::runtime_major();
    if major >= 6 {
        assert!(rtc.contains("libhiprtc.so"), "{rtc}");
    } else {
        assert_eq!(rtc, opened.path);
    }
}

#[test]
fn the_symbol_lists_are_the_tables_own_and_say_what_resolved() {
    // What scripts/check-windows-wine.sh builds its stub DLL's exports from, and counts.
    for (names, symbols, must) in [
        (
            hip_sys::loader::symbol_names(),
            hip_sys::loader::symbols().expect("the runtime opened"),
            ["hipGetDeviceCount", "hipRuntimeGetVersion", "hipMalloc"],
        ),
        (
            hiprtc_sys::loader::symbol_names(),
            hiprtc_sys::loader::symbols().expect("HIPRTC opened"),
            [
                "hiprtcCreateProgram",
                "hiprtcCompileProgram",
                "hiprtcVersion",
            ],
        ),
    ] {
        let mut unique = names.to_vec();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "a name twice in {names:?}");
        assert_eq!(
            symbols.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            names,
            "symbols() and symbol_names() disagree"
        );
        for name in must {
            assert!(
                symbols.contains(&(name, true)),
                "{name} not resolved: {symbols:?}"
            );
        }
    }
}

#[test]
fn a_compile_works_through_the_loaded_hiprtc() {
    let out = ProgramBuilder::new(common::VECTOR_ADD)
        .arch(common::OFFLINE_ARCH)
        .no_cache()
        .compile()
        .unwrap();
    assert_eq!(common::elf::machine(out.code()), common::elf::EM_AMDGPU);
}

#[test]
fn the_binary_does_not_link_hip() {
    // The dynamic section names what the loader must find before main: no HIP library may be among
    // them (the names still appear in the candidate lists, as plain strings).
    common::elf::assert_this_binary_needs_none_of(&["amdhip64", "hiprtc"]);
}

#[test]
#[ignore = "needs HIP hidden from the process: run by scripts/check-dynamic-loading.sh"]
fn without_hip_every_entry_point_says_library_not_found() {
    let check = |e: Error, library: &str| {
        assert!(matches!(e, Error::LibraryNotFound { .. }), "{e}");
        assert_eq!(e.status(), Status::BackendNotAvailable);
        let text = e.to_string();
        assert!(
            text.contains(library) && text.contains("apt-get install"),
            "{text}"
        );
        // HIP_RS_AMDHIP64 / HIP_RS_HIPRTC (set by the script) are tried, and named, first.
        let first = if library.contains("HIPRTC") {
            "/nonexistent/libhiprtc.so"
        } else {
            "/nonexistent/libamdhip64.so"
        };
        assert!(text.contains(&format!("tried: {first}")), "{text}");
        text
    };
    let first = check(Device::count().unwrap_err(), "libamdhip64");
    // The same answer on every later call, from every entry point.
    assert_eq!(check(Device::count().unwrap_err(), "libamdhip64"), first);
    check(Device::get(0).unwrap_err(), "libamdhip64");
    check(hip::runtime_version().unwrap_err(), "libamdhip64");
    let compile = ProgramBuilder::new(common::VECTOR_ADD)
        .arch(common::OFFLINE_ARCH)
        .no_cache()
        .compile()
        .unwrap_err();
    check(compile, "HIPRTC");
    check(hip::rtc::version().unwrap_err(), "HIPRTC");
}
