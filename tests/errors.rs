//! Every error code's mapping to a DTL status, code by code, and what an error keeps.
use hip::error::{HipErrorCode, RtcErrorCode, Status};
use hip::Error;

/// The codes with a sharper DTL status than hip_error (520): the table in `hip::error`'s rustdoc.
const HIP_SHARP: &[(u32, Status)] = &[
    (0, Status::Ok),
    (1, Status::InvalidArgument),
    (2, Status::OutOfMemory),
    (3, Status::BackendInitFailed),
    (4, Status::InvalidState),
    (9, Status::InvalidArgument),
    (12, Status::InvalidArgument),
    (13, Status::NotFound),
    (17, Status::InvalidPointer),
    (21, Status::InvalidArgument),
    (35, Status::BackendInitFailed),
    (100, Status::BackendNotAvailable),
    (101, Status::InvalidArgument),
    (217, Status::NotSupported),
    (301, Status::NotFound),
    (500, Status::NotFound),
    (704, Status::InvalidState),
    (705, Status::InvalidState),
    (709, Status::InvalidState),
    (801, Status::NotSupported),
    (999, Status::UnknownError),
];

const RTC_SHARP: &[(u32, Status)] = &[
    (0, Status::Ok),
    (1, Status::OutOfMemory),
    (3, Status::InvalidArgument),
    (4, Status::InvalidArgument),
    (5, Status::InvalidArgument),
    (6, Status::InvalidArgument),
    (8, Status::InvalidState),
    (9, Status::InvalidState),
    (10, Status::InvalidArgument),
    (11, Status::InternalError),
];

#[test]
fn every_known_hip_code_has_a_name_and_its_status() {
    let known: Vec<_> = HipErrorCode::known().collect();
    assert!(
        known.len() >= 60,
        "only {} hipError_t values known",
        known.len()
    );
    for (code, name) in known {
        assert!(
            name == "hipSuccess" || name.starts_with("hipError"),
            "{name}"
        );
        assert_eq!(code.name(), Some(name));
        let expected = HIP_SHARP
            .iter()
            .find(|(v, _)| *v == code.0)
            .map_or(Status::HipError, |(_, s)| *s);
        assert_eq!(code.status(), expected, "{name} ({})", code.0);
        if code.0 != 0 {
            let e = Error::from_hip("hipTest", code.raw());
            assert_eq!(e.status(), expected);
            assert_eq!(e.hip_code(), Some(code));
            let shown = e.to_string();
            assert!(
                shown.contains(name)
                    && shown.contains(&code.0.to_string())
                    && shown.contains("hipTest"),
                "{shown}"
            );
        }
    }
    // Aliases: the primary name is kept.
    assert_eq!(HipErrorCode(2).name(), Some("hipErrorOutOfMemory"));
    assert_eq!(HipErrorCode(400).name(), Some("hipErrorInvalidHandle"));
}

#[test]
fn every_known_hiprtc_code_has_a_name_and_its_status() {
    let known: Vec<_> = RtcErrorCode::known().collect();
    assert!(
        known.len() >= 12,
        "only {} hiprtcResult values known",
        known.len()
    );
    for (code, name) in known {
        assert!(name.starts_with("HIPRTC_"), "{name}");
        let expected = RTC_SHARP
            .iter()
            .find(|(v, _)| *v == code.0)
            .map_or(Status::HipError, |(_, s)| *s);
        assert_eq!(code.status(), expected, "{name}");
        if code.0 != 0 {
            let e = Error::from_rtc("hiprtcTest", code.raw(), Some("the log".into()));
            assert_eq!(e.status(), expected);
            assert_eq!(e.rtc_code(), Some(code));
            assert_eq!(e.log(), Some("the log"));
            assert!(e.to_string().contains(name) && e.to_string().contains("the log"));
        }
    }
    assert_eq!(
        RtcErrorCode(6).status(),
        Status::InvalidArgument,
        "a compilation failure says the user's source did not compile, not that HIP failed"
    );
}

#[test]
fn unknown_raw_codes_are_kept_not_lost() {
    for raw in [911u32, 1054, 12345, u32::MAX] {
        let e = Error::from_hip("hipFuture", hip::sys::hipError_t(raw));
        assert_eq!(e.hip_code(), Some(HipErrorCode(raw)));
        assert_eq!(e.status(), Status::HipError);
        let shown = match HipErrorCode(raw).name() {
            // Listed by newer headers (911 is hipErrorInvalidChannelDescriptor from HIP 6): by its name.
            Some(name) => format!("{name} ({raw})"),
            None => format!("hipError_t({raw})"),
        };
        assert!(e.to_string().contains(&shown), "{e}");
    }
    assert_eq!(HipErrorCode(12345).name(), None);
    let e = Error::from_rtc("hiprtcFuture", hip::rtc_sys::hiprtcResult(4242), None);
    assert_eq!(e.rtc_code(), Some(RtcErrorCode(4242)));
    assert!(e.to_string().contains("hiprtcResult(4242)"));
}

#[test]
fn wrapper_errors_have_their_own_statuses() {
    let cases: Vec<(Error, Status)> = vec![
        (
            Error::LengthMismatch {
                what: "copy",
                expected: 4,
                actual: 3,
            },
            Status::ExtentMismatch,
        ),
        (
            Error::OutOfBounds {
                start: 2,
                end: 9,
                len: 4,
            },
            Status::OutOfBounds,
        ),
        (
            Error::InteriorNul {
                what: "kernel name",
                value: "a\0b".into(),
            },
            Status::InvalidArgument,
        ),
        (
            Error::InvalidLaunch("block".into()),
            Status::InvalidArgument,
        ),
        (
            Error::InvalidCodeObject("short".into()),
            Status::InvalidArgument,
        ),
        (
            Error::DeviceOutOfRange {
                ordinal: 3,
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
        (Error::TimingDisabled, Status::InvalidArgument),
        (
            Error::UnknownArch {
                arch: "gfx999".into(),
                known: "gfx90a".into(),
            },
            Status::InvalidArgument,
        ),
        (
            Error::InvalidOption {
                option: "-arch".into(),
                reason: "r",
            },
            Status::InvalidArgument,
        ),
        (Error::TooManyArguments { max: 32 }, Status::InvalidArgument),
        (
            Error::AllocationTooLarge {
                elements: usize::MAX,
                elem_bytes: 4,
            },
            Status::AllocationFailed,
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
            Error::NotSupported {
                what: "hiprtcLinkCreate",
                reason: "5.3",
            },
            Status::NotSupported,
        ),
    ];
    for (e, s) in cases {
        assert_eq!(e.status(), s, "{e}");
        // Only a failed name lookup keeps HIP's code; the wrapper's own errors have none.
        let expected = matches!(e, Error::UnknownName { .. }).then_some(HipErrorCode(500));
        assert_eq!(e.hip_code(), expected, "{e}");
        assert_eq!(e.rtc_code(), None, "{e}");
    }
    let e = Error::LengthMismatch {
        what: "copy_from_host",
        expected: 4,
        actual: 3,
    };
    assert_eq!(
        e.to_string(),
        "length mismatch in copy_from_host: expected 4 elements, got 3"
    );
}
