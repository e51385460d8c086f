//! Cooperative launches (issue 57, family 5) on a machine without a GPU: every refusal a launch makes
//! before sending anything, and the launch call itself answering an error that names it, or (HIP 5.2.3,
//! whose headers lack `hipModuleLaunchCooperativeKernel`) `NotSupported` naming it. With a device, the
//! same paths run for real in tests/gpu_cooperative.rs.
mod common;

use hip::launch::cooperative::{check_co_resident, supported, CALL, HAS_COOPERATIVE_LAUNCH};
use hip::{Device, Error};

/// [`HAS_COOPERATIVE_LAUNCH`], read at run time (a constant in an assertion is a lint).
fn has() -> bool {
    std::hint::black_box(HAS_COOPERATIVE_LAUNCH)
}

/// No usable device here: the tests below that call HIP check its error paths.
fn no_device() -> bool {
    Device::count().is_err()
}

#[test]
fn the_build_has_a_cooperative_launch_exactly_where_the_headers_declare_one() {
    // HIP 5.2.3's headers lack it; 5.7.1, 6.4.3, 7.2.4 and HIP's NVIDIA platform have it.
    let version = hip::sys::HIP_VERSION_MAJOR * 100 + hip::sys::HIP_VERSION_MINOR;
    eprintln!("HIP headers {version}: cooperative launch {HAS_COOPERATIVE_LAUNCH}");
    let expected = version >= 507 || hip::PLATFORM == "nvidia";
    assert_eq!(
        HAS_COOPERATIVE_LAUNCH,
        expected,
        "headers {version}, {}",
        hip::PLATFORM
    );
}

#[test]
fn not_supported_names_the_call_for_old_headers_and_for_devices_without_it() {
    let e = supported(0).unwrap_err();
    eprintln!("attribute 0: {e}");
    assert!(
        matches!(e, Error::NotSupported { what, .. } if what == CALL),
        "{e:?}"
    );
    assert!(e.to_string().contains(CALL), "{e}");
    match supported(1) {
        Ok(()) => assert!(has()),
        Err(e) => {
            eprintln!("attribute 1: {e}");
            assert!(!has(), "{e}");
            assert!(
                matches!(&e, Error::NotSupported { what, reason } if *what == CALL && reason.contains("5.2")),
                "{e:?}"
            );
        }
    }
}

#[test]
fn a_grid_that_cannot_be_co_resident_is_refused_with_the_numbers() {
    // An H100's 132 multiprocessors with 8 resident blocks each: 1056 blocks.
    check_co_resident("grid_sync", 1056.into(), 8, 132).unwrap();
    check_co_resident("grid_sync", (32, 33).into(), 8, 132).unwrap();
    let e = check_co_resident("grid_sync", 1057.into(), 8, 132).unwrap_err();
    eprintln!("{e}");
    let Error::InvalidLaunch(text) = &e else {
        panic!("{e:?}")
    };
    for part in [
        "grid_sync",
        "1057 blocks",
        "8 active blocks per multiprocessor",
        "132 multiprocessors",
        "1056 blocks at most",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
    // Three axes count together.
    let e = check_co_resident("k", (11, 12, 9).into(), 8, 132).unwrap_err();
    assert!(e.to_string().contains("1188 blocks (11 x 12 x 9)"), "{e}");
}

#[test]
fn the_launch_and_the_attribute_answer_errors_naming_them_without_a_device() {
    if !no_device() {
        return;
    }
    let e = hip::result::device_attribute(hip::sys::hipDeviceAttributeCooperativeLaunch, 0)
        .unwrap_err();
    eprintln!("hipDeviceGetAttribute(CooperativeLaunch) without a device: {e}");
    assert!(
        matches!(e, Error::LibraryNotFound { .. })
            || e.to_string().contains("hipDeviceGetAttribute"),
        "{e}"
    );
    // SAFETY: no device exists (checked above): the runtime refuses before reading the null function,
    // stream or parameters (or, HIP 5.2.3, no call is made).
    let e = unsafe {
        hip::result::module::module_launch_cooperative_kernel(
            std::ptr::null_mut(),
            (1, 1, 1),
            (64, 1, 1),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    }
    .unwrap_err();
    eprintln!("{CALL} without a device: {e}");
    match &e {
        Error::NotSupported { what, .. } => {
            assert_eq!(*what, CALL);
            assert!(!has(), "{e}");
        }
        Error::Hip { .. } => {
            assert!(e.to_string().contains(CALL), "{e}");
            assert!(has(), "{e}");
            assert_ne!(e.hip_code().expect("a raw code").0, 0);
        }
        Error::LibraryNotFound { .. } => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_grid_barrier_kernels_compile_offline_without_rdc() {
    // HIPRTC compiles `this_grid().sync()` for an offline target with no device and no -rdc: AMD's
    // (HIP >= 5.7: 5.2.3's HIPRTC has no cooperative groups, and the installed header clashes with its
    // built-in ones; moot there, where the launch is NotSupported), and NVRTC given CUDA's
    // cooperative_groups.h (skipped where that header or NVRTC itself is absent).
    let arch = if hip::PLATFORM == "nvidia" {
        if common::cooperative::cuda_include().is_err() {
            return;
        }
        "sm_90"
    } else {
        if !has() {
            return;
        }
        common::OFFLINE_ARCH
    };
    match common::cooperative::builder(arch).compile() {
        Ok(code) => assert!(!code.code().is_empty()),
        Err(Error::LibraryNotFound { .. }) => eprintln!("no HIPRTC/NVRTC to compile with: skipped"),
        Err(e) => panic!("{e}"),
    }
}
