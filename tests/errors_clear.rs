//! Errors that say what went wrong, checked without a GPU (real HIP runtime and HIPRTC).
use hip::{Error, HipErrorCode, Status};

#[test]
fn an_unknown_raw_code_does_not_read_as_hip_error_unknown() {
    for raw in [12345u32, 4242, u32::MAX] {
        assert!(HipErrorCode(raw).name().is_none());
        let e = Error::from_hip("hipFuture", hip::sys::hipError_t(raw));
        let shown = e.to_string();
        assert!(!shown.contains("hipErrorUnknown"), "{shown}");
        assert!(shown.contains(&format!("hipError_t({raw})")), "{shown}");
        assert!(shown.contains("do not list"), "{shown}");
        assert_eq!(e.status(), Status::HipError);
    }
    // A listed code keeps the runtime's own message.
    let e = Error::from_hip("hipMalloc", hip::sys::hipError_t(2));
    assert!(!e.to_string().contains("do not list"), "{e}");
    let e = Error::from_hip("hipX", hip::sys::hipError_t(999));
    assert!(e.to_string().contains("hipErrorUnknown (999)"), "{e}");
}

#[test]
fn new_error_variants_have_their_statuses() {
    let file = Error::ModuleFile {
        path: "/x.co".into(),
        source: Box::new(Error::from_hip("hipModuleLoad", hip::sys::hipError_t(301))),
    };
    assert_eq!(file.status(), Status::NotFound);
    assert_eq!(file.hip_code(), Some(HipErrorCode(301)));
    assert!(file
        .to_string()
        .starts_with("cannot load module file `/x.co`: hipModuleLoad failed"));
    for (e, s) in [
        (
            Error::GlobalSize {
                name: "g".into(),
                module_bytes: 4,
                type_bytes: 8,
            },
            Status::ExtentMismatch,
        ),
        (
            Error::EventNotRecorded { which: "end" },
            Status::InvalidState,
        ),
        (Error::UntrackedCopy, Status::InvalidState),
        (
            Error::DeviceMismatch {
                what: "copy",
                stream: 1,
                other: 0,
            },
            Status::InvalidArgument,
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
            Error::UnsupportedArchFeature {
                arch: "gfx1030:xnack+".into(),
                feature: "xnack+".into(),
                supported: "none".into(),
            },
            Status::InvalidArgument,
        ),
    ] {
        assert_eq!(e.status(), s, "{e}");
    }
}

#[cfg(hip_platform = "amd")]
#[test]
fn an_empty_name_expression_is_a_clear_error() {
    for expr in ["", "  "] {
        let err =
            hip::rtc::ProgramBuilder::new("template <typename T> __global__ void f(T* x) {}\n")
                .name_expression(expr)
                .arch("gfx90a")
                .no_cache()
                .compile()
                .unwrap_err();
        assert!(
            matches!(&err, Error::InvalidArgument { what: "name expression", value, .. } if value == expr),
            "{err}"
        );
        assert!(err.to_string().contains("empty"), "{err}");
    }
}
