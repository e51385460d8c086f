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
fn a_module_file_error_keeps_the_load_failure_its_status_and_its_code() {
    let file = Error::ModuleFile {
        path: "/x.co".into(),
        source: Box::new(Error::from_hip("hipModuleLoad", hip::sys::hipError_t(301))),
    };
    assert_eq!(file.status(), Status::NotFound);
    assert_eq!(file.hip_code(), Some(HipErrorCode(301)));
    assert!(file
        .to_string()
        .starts_with("cannot load module file `/x.co`: hipModuleLoad failed"));
    // The other variants' statuses: `hip::error`'s unit tests (every_variant_answers_the_status_of_
    // the_module_table), which run per mutant.
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

#[cfg(hip_platform = "amd")]
fn builder(src: &str) -> hip::rtc::ProgramBuilder {
    hip::rtc::ProgramBuilder::new(src).arch("gfx90a").no_cache()
}

#[cfg(hip_platform = "amd")]
#[test]
fn empty_sources_and_header_names_are_clear_errors_and_empty_headers_work() {
    // HIPRTC answers each of these with a bare HIPRTC_ERROR_INVALID_INPUT.
    let err = builder("").compile().unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidArgument {
                what: "kernel source",
                ..
            }
        ),
        "{err}"
    );
    for name in ["", " "] {
        let err = builder("extern \"C\" __global__ void k() {}\n")
            .header(name, "#define A 1\n")
            .compile()
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidArgument {
                    what: "header name",
                    ..
                }
            ),
            "{err}"
        );
    }
    // An empty header is an empty file, not an error.
    builder("#include \"empty.h\"\nextern \"C\" __global__ void k() {}\n")
        .header("empty.h", "")
        .compile()
        .unwrap();
}

#[cfg(hip_platform = "amd")]
#[test]
fn a_name_expression_given_twice_compiles_once_and_lowers_for_both() {
    // HIPRTC 5.2 fails the whole compile when an expression is added twice.
    let out = builder("template <typename T> __global__ void fill(T* x, T v) { x[0] = v; }\n")
        .name_expression("fill<float>")
        .name_expression("fill<int>")
        .name_expression("fill<float>")
        .compile()
        .unwrap();
    assert_eq!(out.lowered_names().len(), 3);
    assert_eq!(out.lowered_name("fill<float>"), Some("_Z4fillIfEvPT_S0_"));
    assert_eq!(out.lowered_names()[2].1, "_Z4fillIfEvPT_S0_");
}
