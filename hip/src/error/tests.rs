//! Unit tests (no GPU).

use super::*;

fn io(kind: std::io::ErrorKind) -> Error {
    Error::Io {
        what: "read link input",
        path: "/x.bc".into(),
        source: std::io::Error::from(kind),
    }
}

/// One value of every variant, with the status the module table gives it (written out here, not
/// derived from `status`).
fn every_variant() -> Vec<(Error, Status)> {
    vec![
        (
            Error::from_hip("hipMalloc", hipError_t(2)),
            Status::OutOfMemory,
        ),
        (
            Error::from_rtc("hiprtcCompileProgram", hiprtcResult(6), None),
            Status::InvalidArgument,
        ),
        (
            Error::GraphUpdate {
                call: "hipGraphExecUpdate",
                code: HipErrorCode(910),
                failure: Box::new(GraphUpdateFailure {
                    message: "the graph update was not performed".into(),
                    update_result: Some(2),
                    meaning: "the graph's topology changed",
                    node: None,
                    whole_graph: true,
                }),
            },
            Status::HipError,
        ),
        (
            Error::UnknownName {
                kind: "kernel",
                name: "k".into(),
                code: HipErrorCode(500),
            },
            Status::NotFound,
        ),
        (
            Error::NoDevice {
                code: HipErrorCode(100),
                platform: "amd",
                reason: NoDeviceReason::NoDevice,
            },
            Status::BackendNotAvailable,
        ),
        // An old driver is "no usable GPU" too: one status whatever the raw code (35 alone says 502).
        (
            Error::NoDevice {
                code: HipErrorCode(35),
                platform: "nvidia",
                reason: NoDeviceReason::DriverTooOld {
                    driver: 11040,
                    runtime: 12090,
                },
            },
            Status::BackendNotAvailable,
        ),
        (
            Error::NoMatchingDevice {
                spec: "GPU-1".into(),
                matched: 0,
                present: vec![],
            },
            Status::NotFound,
        ),
        (
            Error::LengthMismatch {
                what: "copy",
                expected: 2,
                actual: 1,
            },
            Status::ExtentMismatch,
        ),
        (
            Error::OutOfBounds {
                start: 1,
                end: 9,
                len: 4,
            },
            Status::OutOfBounds,
        ),
        (
            Error::AllocationTooLarge {
                elements: usize::MAX,
                elem_bytes: 8,
            },
            Status::AllocationFailed,
        ),
        (
            Error::InteriorNul {
                what: "kernel name",
                value: "a\0b".into(),
            },
            Status::InvalidArgument,
        ),
        (
            Error::InvalidCodeObject("x".into()),
            Status::InvalidArgument,
        ),
        (Error::InvalidLaunch("x".into()), Status::InvalidArgument),
        (
            Error::DeviceOutOfRange {
                ordinal: 2,
                count: 1,
            },
            Status::InvalidArgument,
        ),
        (
            Error::ArchRequired {
                reason: "no device".into(),
            },
            Status::InvalidArgument,
        ),
        (
            Error::UnknownArch {
                arch: "gfx999".into(),
                known: "gfx90a".into(),
            },
            Status::InvalidArgument,
        ),
        (
            Error::UnsupportedArchFeature {
                arch: "gfx1030:xnack+".into(),
                feature: "xnack+".into(),
                supported: "none".into(),
            },
            Status::InvalidArgument,
        ),
        (
            Error::InvalidOption {
                option: "-mcpu=x".into(),
                reason: "r",
            },
            Status::InvalidArgument,
        ),
        (
            Error::DeviceMismatch {
                what: "copy",
                stream: 1,
                other: 0,
            },
            Status::InvalidArgument,
        ),
        (Error::UntrackedCopy, Status::InvalidState),
        (
            Error::GlobalSize {
                name: "g".into(),
                module_bytes: 4,
                type_bytes: 8,
            },
            Status::ExtentMismatch,
        ),
        (
            Error::ModuleFile {
                path: "/x.co".into(),
                source: Box::new(Error::from_hip("hipModuleLoad", hipError_t(301))),
            },
            Status::NotFound,
        ),
        (
            Error::ModuleFile {
                path: "/x.co".into(),
                source: Box::new(io(std::io::ErrorKind::PermissionDenied)),
            },
            Status::OperationFailed,
        ),
        (
            Error::Nccl {
                call: "ncclAllReduce",
                code: NcclErrorCode(4),
                message: "m".into(),
            },
            Status::NcclError,
        ),
        (
            Error::InvalidArgument {
                what: "x",
                value: "y".into(),
                reason: "z".into(),
            },
            Status::InvalidArgument,
        ),
        (
            Error::EventNotRecorded { which: "start" },
            Status::InvalidState,
        ),
        (Error::TimingDisabled, Status::InvalidArgument),
        (Error::TooManyArguments { max: 32 }, Status::InvalidArgument),
        (
            Error::ArgumentMismatch {
                kernel: "k".into(),
                index: 0,
                count: 1,
                parameter: String::new(),
                expected: "e".into(),
                got: "g".into(),
            },
            Status::InvalidArgument,
        ),
        (
            Error::NotSupported {
                what: "hiprtcLinkCreate",
                reason: "5.3",
            },
            Status::NotSupported,
        ),
        (
            Error::Comgr {
                call: "amd_comgr_do_action",
                status: 1,
                message: "ERROR".into(),
                log: Some("ld.lld: error".into()),
            },
            Status::HipError,
        ),
        (
            Error::LibraryNotFound {
                library: "comgr",
                tried: vec!["libamd_comgr.so.2: not found".into()],
                install: "apt-get install libamd-comgr2",
            },
            Status::BackendNotAvailable,
        ),
        (io(std::io::ErrorKind::NotFound), Status::NotFound),
        (
            io(std::io::ErrorKind::PermissionDenied),
            Status::OperationFailed,
        ),
        (
            Error::TargetMismatch {
                input: "a.bc".into(),
                found: "gfx1100".into(),
                expected: "gfx90a".into(),
            },
            Status::InvalidArgument,
        ),
    ]
}

#[test]
fn no_device_says_so_in_words_with_the_raw_code_and_what_to_check_per_platform() {
    let amd = Error::NoDevice {
        code: HipErrorCode(100),
        platform: "amd",
        reason: NoDeviceReason::NoDevice,
    }
    .to_string();
    if cfg!(windows) {
        // Run under Wine by scripts/check-windows-wine.sh.
        assert!(
            amd.starts_with(
                "no HIP device was found (hipErrorNoDevice (100)); check that AMD's Windows driver"
            ) && amd.contains("HIP_VISIBLE_DEVICES")
                && !amd.contains("/dev/"),
            "{amd}"
        );
    } else {
        assert!(
            amd.starts_with(
                "no HIP device was found (hipErrorNoDevice (100)); check that the amdgpu driver"
            ),
            "{amd}"
        );
        assert!(
            amd.contains("/dev/kfd") && amd.contains("ROCR_VISIBLE_DEVICES"),
            "{amd}"
        );
    }
    assert!(!amd.contains("hipGetDeviceCount"), "{amd}");
    let nvidia = Error::NoDevice {
        code: HipErrorCode(100),
        platform: "nvidia",
        reason: NoDeviceReason::NoDevice,
    }
    .to_string();
    assert!(
        nvidia.contains("nvidia-smi") && nvidia.contains("CUDA_VISIBLE_DEVICES"),
        "{nvidia}"
    );
    assert!(!nvidia.contains("/dev/kfd"), "{nvidia}");
}

#[test]
fn every_variant_answers_the_status_of_the_module_table() {
    for (e, status) in every_variant() {
        assert_eq!(e.status(), status, "{e:?}");
    }
}

#[test]
fn raw_codes_and_logs_are_answered_only_by_the_variants_that_carry_them() {
    for (e, _) in every_variant() {
        let hip = match &e {
            Error::Hip { code, .. }
            | Error::GraphUpdate { code, .. }
            | Error::UnknownName { code, .. }
            | Error::NoDevice { code, .. } => Some(*code),
            Error::ModuleFile { source, .. } => match **source {
                Error::Hip { code, .. } => Some(code),
                _ => None,
            },
            _ => None,
        };
        assert_eq!(e.hip_code(), hip, "{e:?}");
        let rtc = matches!(e, Error::Rtc { .. }).then_some(RtcErrorCode(6));
        assert_eq!(e.rtc_code(), rtc, "{e:?}");
        let nccl = matches!(e, Error::Nccl { .. }).then_some(NcclErrorCode(4));
        assert_eq!(e.nccl_code(), nccl, "{e:?}");
        let log = matches!(e, Error::Comgr { .. }).then_some("ld.lld: error");
        assert_eq!(e.log(), log, "{e:?}");
    }
    assert_eq!(
        Error::ModuleFile {
            path: "/x.co".into(),
            source: Box::new(Error::from_hip("hipModuleLoad", hipError_t(301))),
        }
        .hip_code(),
        Some(HipErrorCode(301))
    );
    let rtc = Error::from_rtc("hiprtcCompileProgram", hiprtcResult(6), Some("log".into()));
    assert_eq!(rtc.log(), Some("log"));
    assert_eq!(rtc.rtc_code(), Some(RtcErrorCode(6)));
    assert_eq!(rtc.hip_code(), None);
}

#[test]
fn hip_errors_keep_the_call_the_code_and_the_runtimes_message() {
    let e = Error::from_hip("hipMalloc", hipError_t(2));
    let Error::Hip {
        call,
        code,
        message,
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!((*call, *code), ("hipMalloc", HipErrorCode(2)));
    // SAFETY: hipGetErrorString takes any value and returns a static C string, or null where no runtime
    // could be loaded (`dynamic-loading`).
    let ptr = unsafe { hip_sys::hipGetErrorString(hipError_t(2)) };
    if ptr.is_null() {
        // Only a runtime that did not load answers null (a test built for NVIDIA run without CUDA): the
        // message says so rather than being empty.
        #[cfg(feature = "dynamic-loading")]
        assert!(hip_sys::loader::failure().is_some());
        assert_eq!(message.as_str(), super::NO_RUNTIME_MESSAGE);
    } else {
        // SAFETY: non-null (checked), a NUL-terminated string the runtime keeps for the process's life.
        let runtime = unsafe { CStr::from_ptr(ptr) };
        assert_eq!(message.as_str(), runtime.to_str().unwrap());
    }
    assert!(!message.is_empty());
    assert_eq!(
        e.to_string(),
        format!("hipMalloc failed: hipErrorOutOfMemory (2): {message}")
    );
    // A code no header lists is said to be one, not read as hipErrorUnknown: the runtime calls 12345
    // "hipErrorUnknown" (5.2.3) or "unknown error" (5.7.1 to 7.2.4), which is not repeated.
    let e = Error::from_hip("hipFuture", hipError_t(12345));
    assert!(
        matches!(&e, Error::Hip { code: HipErrorCode(12345), message, .. }
            if message == "a code this HIP's headers do not list"),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "hipFuture failed: hipError_t(12345): a code this HIP's headers do not list"
    );
}

#[test]
fn a_hip_message_says_what_the_runtime_said_or_that_it_said_nothing() {
    let own = |listed, runtime: &str| super::hip_message(listed, runtime.to_string());
    assert_eq!(own(true, "out of memory"), "out of memory");
    // A listed code keeps even the runtime's generic words (hipErrorUnknown is code 999's own name).
    assert_eq!(own(true, "hipErrorUnknown"), "hipErrorUnknown");
    assert_eq!(own(true, ""), super::NO_RUNTIME_MESSAGE);
    let unlisted = "a code this HIP's headers do not list";
    for generic in ["", "hipErrorUnknown", "unknown error", "Unknown Error"] {
        assert_eq!(own(false, generic), unlisted, "{generic:?}");
    }
    assert_eq!(
        own(false, "a newer runtime's words"),
        format!("{unlisted}; the runtime says: a newer runtime's words")
    );
}

#[test]
fn the_loaders_own_codes_become_not_supported_and_library_not_found() {
    let e = Error::from_hip("hipFuncX", hip_sys::hipRsErrorSymbolNotFound);
    assert!(
        matches!(e, Error::NotSupported { what: "hipFuncX", reason }
            if reason.contains("does not export")),
        "{e}"
    );
    let e = Error::from_rtc(
        "hiprtcLinkCreate",
        hiprtcResult(hip_sys::hipRsErrorSymbolNotFound.0),
        None,
    );
    assert!(
        matches!(
            e,
            Error::NotSupported {
                what: "hiprtcLinkCreate",
                ..
            }
        ),
        "{e}"
    );
    // Each platform names its own runtime and how to install it.
    let (runtime, rtc, how) = if cfg!(hip_platform = "nvidia") {
        ("the CUDA runtime and driver", "NVRTC", "libcuda.so.1")
    } else if cfg!(windows) {
        (
            "the HIP runtime (amdhip64_N.dll)",
            "HIPRTC",
            "HIP SDK for Windows",
        )
    } else {
        (
            "the HIP runtime (libamdhip64)",
            "HIPRTC",
            "apt-get install libamdhip64-dev",
        )
    };
    let e = Error::from_hip("hipMalloc", hip_sys::hipRsErrorLibraryNotFound);
    assert!(
        matches!(&e, Error::LibraryNotFound { library, install, .. }
            if library.starts_with(runtime) && !library.contains("RTC") && install.contains(how)),
        "{e}"
    );
    assert_eq!(e.status(), Status::BackendNotAvailable);
    // A build for CUDA 11 or 12 names that version's PyPI packages.
    #[cfg(all(hip_platform = "nvidia", feature = "dynamic-loading"))]
    {
        let soname = hip_sys::loader::CUDART_SONAME;
        let major = soname["libcudart.so.".len()..].split('.').next().unwrap();
        let pypi = format!("nvidia-cuda-runtime-cu{major} / nvidia-cuda-nvrtc-cu{major} ");
        assert!(
            matches!(&e, Error::LibraryNotFound { install, .. } if install.contains(&pypi)),
            "{soname}: {e}"
        );
    }
    // Linked, not loaded: no loader tried any path.
    #[cfg(not(feature = "dynamic-loading"))]
    assert!(matches!(&e, Error::LibraryNotFound { tried, .. } if tried.is_empty()));
    let e = Error::from_rtc(
        "hiprtcCompileProgram",
        hiprtcResult(hip_sys::hipRsErrorLibraryNotFound.0),
        None,
    );
    assert!(
        matches!(&e, Error::LibraryNotFound { library, .. } if library.starts_with(rtc)),
        "{e}"
    );
    // Codes next to the loader's are ordinary codes.
    for raw in [
        hip_sys::hipRsErrorLibraryNotFound.0 - 1,
        hip_sys::hipRsErrorSymbolNotFound.0 + 1,
    ] {
        assert!(matches!(
            Error::from_hip("hipX", hipError_t(raw)),
            Error::Hip { code, .. } if code.0 == raw
        ));
        assert!(matches!(
            Error::from_rtc("hiprtcX", hiprtcResult(raw), None),
            Error::Rtc { code, .. } if code.0 == raw
        ));
    }
}

#[test]
fn logs_are_shown_after_the_message_when_they_say_something() {
    let rtc = |log: Option<&str>| {
        Error::from_rtc("hiprtcCompileProgram", hiprtcResult(6), log.map(Into::into)).to_string()
    };
    let head = "hiprtcCompileProgram failed: HIPRTC_ERROR_COMPILATION (6)";
    assert_eq!(rtc(None), head);
    assert_eq!(rtc(Some(" \n\t")), head);
    assert_eq!(
        rtc(Some("x.hip:1: error\n\n")),
        format!("{head}\nx.hip:1: error")
    );
    assert_eq!(rtc(Some("  indented\n")), format!("{head}\n  indented"));
    let comgr = Error::Comgr {
        call: "amd_comgr_do_action",
        status: 1,
        message: "ERROR".into(),
        log: Some("ld.lld: error: undefined symbol\n".into()),
    };
    assert_eq!(
        comgr.to_string(),
        "amd_comgr_do_action failed: comgr status 1 (ERROR)\nld.lld: error: undefined symbol"
    );
}

#[test]
fn rand_and_fft_codes_keep_their_names_and_dtl_groups() {
    use super::{FftErrorCode, RandErrorCode};
    assert_eq!(
        RandErrorCode(105).name(),
        Some("HIPRAND_STATUS_LENGTH_NOT_MULTIPLE")
    );
    assert_eq!(RandErrorCode(105).status(), Status::ExtentMismatch);
    assert_eq!(RandErrorCode(102).status(), Status::AllocationFailed);
    assert_eq!(RandErrorCode(204).status(), Status::NotSupported);
    assert_eq!(RandErrorCode(1000).status(), Status::NotImplemented);
    assert_eq!(RandErrorCode(0).status(), Status::Ok);
    assert_eq!(RandErrorCode(7).name(), None);
    assert_eq!(RandErrorCode(7).status(), Status::BackendError);
    assert_eq!(RandErrorCode(7).to_string(), "hiprandStatus_t 7");
    assert_eq!(
        RandErrorCode(999).to_string(),
        "HIPRAND_STATUS_INTERNAL_ERROR (999)"
    );
    assert_eq!(FftErrorCode(9).name(), Some("HIPFFT_UNALIGNED_DATA"));
    assert_eq!(FftErrorCode(9).status(), Status::InvalidPointer);
    assert_eq!(FftErrorCode(8).status(), Status::ExtentMismatch);
    assert_eq!(FftErrorCode(16).status(), Status::NotSupported);
    assert_eq!(FftErrorCode(15).name(), None);
    assert_eq!(FftErrorCode(15).status(), Status::BackendError);
    assert_eq!(FftErrorCode(15).to_string(), "hipfftResult 15");
    let e = Error::Fft {
        call: "hipfftExecC2C",
        code: FftErrorCode(6),
    };
    assert_eq!(e.status(), Status::OperationFailed);
    assert_eq!(e.fft_code(), Some(FftErrorCode(6)));
    assert_eq!(
        e.to_string(),
        "hipfftExecC2C failed: HIPFFT_EXEC_FAILED (6)"
    );
    let e = Error::Rand {
        call: "hiprandGenerate",
        code: RandErrorCode(103),
    };
    assert_eq!(
        (e.status(), e.rand_code()),
        (Status::InvalidArgument, Some(RandErrorCode(103)))
    );
}

#[test]
fn math_library_statuses_become_the_right_errors() {
    use super::{math_status, BlasErrorCode, MathLibrary};
    let lib = MathLibrary {
        library: "libtest",
        install: "install it",
        not_loaded: [0x4842_0001, 0x4842_0002],
        tried: || vec!["libtest.so.1: not found".to_string()],
    };
    let blas = |raw| Error::Blas {
        call: "hipblasSgemm",
        code: BlasErrorCode(raw),
    };
    assert!(math_status(&lib, "hipblasSgemm", 0, blas).is_ok());
    match math_status(&lib, "hipblasSgemm", 0x4842_0001, blas) {
        Err(Error::LibraryNotFound {
            library,
            tried,
            install,
        }) => {
            assert_eq!((library, install), ("libtest", "install it"));
            assert_eq!(tried, ["libtest.so.1: not found"]);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        math_status(&lib, "hipblasSgemm", 0x4842_0002, blas),
        Err(Error::NotSupported {
            what: "hipblasSgemm",
            ..
        })
    ));
    let e = math_status(&lib, "hipblasSgemm", 3, blas).unwrap_err();
    assert_eq!(e.blas_code(), Some(BlasErrorCode(3)));
    assert_eq!(e.status(), Status::InvalidArgument);
    assert_eq!(
        e.to_string(),
        "hipblasSgemm failed: HIPBLAS_STATUS_INVALID_VALUE (3)"
    );
}

#[test]
fn blas_codes_keep_their_names_and_dtl_groups() {
    use super::BlasErrorCode;
    let cases = [
        (0, Status::Ok),
        (1, Status::BackendInitFailed),
        (2, Status::AllocationFailed),
        (3, Status::InvalidArgument),
        (4, Status::MemoryTransferFailed),
        (5, Status::OperationFailed),
        (6, Status::BackendError),
        (7, Status::NotSupported),
        (8, Status::NotSupported),
        (9, Status::NullPointer),
        (10, Status::InvalidArgument),
        (11, Status::BackendError),
        (99, Status::BackendError),
    ];
    for (raw, status) in cases {
        assert_eq!(BlasErrorCode(raw).status(), status, "{raw}");
    }
    assert_eq!(
        BlasErrorCode(9).name(),
        Some("HIPBLAS_STATUS_HANDLE_IS_NULLPTR")
    );
    assert_eq!(BlasErrorCode(11).name(), Some("HIPBLAS_STATUS_UNKNOWN"));
    assert_eq!(BlasErrorCode(12).name(), None);
    assert_eq!(BlasErrorCode(99).to_string(), "hipblasStatus_t 99");
    assert_eq!(
        BlasErrorCode(2).to_string(),
        "HIPBLAS_STATUS_ALLOC_FAILED (2)"
    );
}
