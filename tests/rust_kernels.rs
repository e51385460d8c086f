//! The committed Rust-built code objects (kernels/prebuilt/, rebuilt by scripts/build-rust-kernels.sh and
//! checked against kernels/ in CI) hold the kernels kernels/src/lib.rs defines, with the argument layout
//! the host passes; `hip::code_object` reads them without a device and refuses damaged copies.
use hip::code_object::{kernels, KernelInfo, EM_AMDGPU};

const GFX90A: &[u8] = include_bytes!("../kernels/prebuilt/hip_rs_kernels-gfx90a.co");
const GFX1100: &[u8] = include_bytes!("../kernels/prebuilt/hip_rs_kernels-gfx1100.co");
const BUNDLE: &[u8] = include_bytes!("../kernels/prebuilt/hip_rs_kernels.hipfb");
const PTX: &[u8] = include_bytes!("../kernels/prebuilt/hip_rs_kernels-sm_70.ptx");

/// Each kernel and its parameters' sizes, as kernels/src/lib.rs declares them.
const EXPECTED: [(&str, &[u64]); 5] = [
    ("affine_f32", &[8, 8, 8]),    // *const Affine, *const f32, *mut f32
    ("block_sum_u32", &[8, 8, 4]), // *const u32, *mut u32, u32
    ("saxpy_f32", &[4, 8, 8, 4]),  // f32, *const f32, *mut f32, u32
    ("saxpy_f64", &[8, 8, 8, 4]),  // f64, *const f64, *mut f64, u32
    ("vector_add", &[8, 8, 8, 4]), // *const f32, *const f32, *mut f32, u32
];

fn check(ks: &[KernelInfo], target: &str) {
    let mut got: Vec<(&str, Vec<u64>)> = ks
        .iter()
        .filter(|k| k.target == target)
        .map(|k| (k.name.as_str(), k.args.iter().map(|a| a.size).collect()))
        .collect();
    got.sort();
    let want: Vec<(&str, Vec<u64>)> = EXPECTED.iter().map(|(n, s)| (*n, s.to_vec())).collect();
    assert_eq!(got, want, "kernels for {target}");
}

#[test]
fn amd_code_objects_are_amdgpu_elf_with_the_five_kernels() {
    for (image, target) in [(GFX90A, "gfx90a"), (GFX1100, "gfx1100")] {
        assert_eq!(&image[..4], b"\x7fELF");
        assert_eq!(u16::from_le_bytes([image[0x12], image[0x13]]), EM_AMDGPU);
        let ks = kernels(image).unwrap();
        check(&ks, target);
        for k in &ks {
            // Offsets follow each parameter's alignment: 8-byte pointers, then the u32 count.
            let offsets: Vec<u64> = k.args.iter().map(|a| a.offset).collect();
            let expected: Vec<u64> = (0..k.args.len() as u64).map(|i| i * 8).collect();
            assert_eq!(offsets, expected, "{}", k.name);
            assert!(k.kernarg_size.unwrap() >= k.args.iter().map(|a| a.size).sum::<u64>());
            assert_eq!(k.group_segment_size, Some(0), "{}: no static LDS", k.name);
        }
        let pointer_kinds = ks
            .iter()
            .find(|k| k.name == "affine_f32")
            .unwrap()
            .args
            .iter()
            .all(|a| a.kind == "global_buffer");
        assert!(pointer_kinds, "affine_f32 takes three device pointers");
    }
}

#[test]
fn the_bundle_holds_both_gfx_targets() {
    assert!(BUNDLE.starts_with(b"__CLANG_OFFLOAD_BUNDLE__"));
    let ks = kernels(BUNDLE).unwrap();
    assert_eq!(ks.len(), 10);
    check(&ks, "gfx90a");
    check(&ks, "gfx1100");
}

#[test]
fn the_ptx_has_the_five_entries_for_sm_70() {
    let text = std::str::from_utf8(PTX).unwrap();
    assert!(text.contains(".version 7.0") && text.contains(".target sm_70"));
    check(&kernels(PTX).unwrap(), "sm_70");
    // The reduction uses dynamic shared memory and a barrier.
    assert!(text.contains(".extern .shared") && text.contains("bar.sync"));
}

#[test]
fn damaged_code_objects_are_errors_not_panics() {
    for image in [GFX90A, BUNDLE] {
        // Section headers (ELF) and entries (bundle) lie at the end or point there: every cut is caught.
        for len in (0..image.len()).step_by(7) {
            assert!(
                matches!(
                    kernels(&image[..len]),
                    Err(hip::Error::InvalidCodeObject(_))
                ),
                "{len} of {} bytes",
                image.len()
            );
        }
    }
    let mut other_machine = GFX90A.to_vec();
    other_machine[0x12] = 62; // EM_X86_64
    let e = kernels(&other_machine).unwrap_err();
    assert!(e.to_string().contains("e_machine is 62"), "{e}");
}
