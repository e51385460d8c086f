//! No-device tests: the shape checks, and the built-in source compiled offline with this HIPRTC.
use super::*;

#[test]
fn required_len_is_checked() {
    assert_eq!(ColumnMajor::new(3, 4).required_len().unwrap(), 12);
    assert_eq!(ColumnMajor::new(3, 4).ld(5).required_len().unwrap(), 18);
    assert_eq!(ColumnMajor::new(0, 4).required_len().unwrap(), 0);
    assert_eq!(ColumnMajor::new(3, 0).ld(7).required_len().unwrap(), 0);
    let e = ColumnMajor::new(3, 4).ld(2).required_len().unwrap_err();
    assert!(e.to_string().contains("leading dimension 2"), "{e}");
    assert!(e.to_string().contains("at least 3"), "{e}");
    let e = ColumnMajor::new(2, usize::MAX).required_len().unwrap_err();
    assert!(e.to_string().contains("overflow usize"), "{e}");
    let e = ColumnMajor::new(usize::MAX, 2).required_len().unwrap_err();
    assert!(e.to_string().contains("overflow usize"), "{e}");
}

#[test]
fn names_match_their_parts_exactly() {
    assert!(is_named(
        "convert_f16_bf16",
        &["convert_", "f16", "_", "bf16"]
    ));
    assert!(is_named("act_f32", &["act_", "f32"]));
    assert!(!is_named("bias_act_f32", &["act_", "f32"]));
    assert!(!is_named("act_f32", &["act_", "f3"]));
    assert!(!is_named("act_f3", &["act_", "f32"]));
    assert!(!is_named(
        "convert_f32_f16",
        &["convert_", "f16", "_", "f32"]
    ));
    // Every name a launch builds is one the program defines.
    let types = [f32::NAME, f16::NAME, bf16::NAME];
    for from in types {
        for to in types.iter().filter(|&&t| t != from) {
            let parts = ["convert_", from, "_", to];
            assert!(
                kernels::NAMES.iter().any(|n| is_named(n, &parts)),
                "{parts:?}"
            );
        }
        for prefix in ["bias_act_", "act_"] {
            assert!(kernels::NAMES.iter().any(|n| is_named(n, &[prefix, from])));
        }
    }
}

#[test]
fn grid_is_clamped() {
    assert_eq!(grid_for(0), 1);
    assert_eq!(grid_for(1), 1);
    assert_eq!(grid_for(257), 2);
    assert_eq!(grid_for(usize::MAX), MAX_GRID_X);
}

/// The source compiles with this HIPRTC (offline, for an explicit architecture) and its code object
/// defines every kernel the module looks up, with the parameter count the launches pass.
#[test]
fn source_compiles_and_defines_every_kernel() {
    let arch = if crate::PLATFORM == "amd" {
        "gfx90a"
    } else {
        "compute_90"
    };
    let compiled = match ProgramBuilder::new(kernels::SOURCE)
        .name("hip_rs_elementwise.hip")
        .arch(arch)
        .no_cache()
        .compile()
    {
        Ok(c) => c,
        // With dynamic-loading and no HIPRTC on the machine (Windows under Wine in CI) the one
        // possible answer is that HIPRTC is missing: nothing was compiled to look into.
        Err(Error::LibraryNotFound { library, .. }) if cfg!(feature = "dynamic-loading") => {
            assert!(library.contains("HIPRTC"), "{library}");
            return;
        }
        Err(e) => panic!("the built-in source does not compile: {e}"),
    };
    let object = crate::CodeObject::parse(compiled.code()).unwrap();
    for name in kernels::NAMES {
        let k = object
            .kernels()
            .iter()
            .find(|k| k.name == name)
            .unwrap_or_else(|| panic!("{name} missing from the code object"));
        let params = match name {
            n if n.starts_with("convert_") => 3,
            n if n.starts_with("bias_act_") => 6,
            _ => 5,
        };
        let visible = k
            .params
            .iter()
            .filter(|p| p.kind != crate::code_object::ParamKind::Hidden)
            .count();
        assert_eq!(visible, params, "{name}");
    }
}
