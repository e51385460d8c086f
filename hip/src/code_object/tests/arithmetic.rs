//! Hostile numbers in an image that passes the image checks: every size, offset, version and count is
//! computed checked, so the parser answers an error naming the value, never an overflow panic (debug) or a
//! wrapped, wrong answer (release).

use super::{amd_object, bundle, invalid, map, msgpack, note, one_kernel, SHT_NOTE};
use crate::code_object::{check, expect_machine, CodeObject, Kind, EM_AMDGPU};
use rmpv::Value;

fn with_version(minor: u64) -> Vec<u8> {
    amd_object(&map(vec![
        ("amdhsa.version", Value::Array(vec![1.into(), minor.into()])),
        ("amdhsa.kernels", Value::Array(vec![])),
    ]))
}

#[test]
fn an_amdhsa_version_past_u32_is_an_error_not_an_overflow() {
    for minor in [0xFFFF_FFFF, 0xFFFF_FFFD, 1 << 32, u64::MAX] {
        let image = with_version(minor);
        // The image itself is well formed: only the metadata parser sees the version.
        assert_eq!(check(&image).unwrap(), Kind::Elf);
        expect_machine(&image, EM_AMDGPU).unwrap();
        let m = invalid(CodeObject::parse(&image));
        assert!(
            m.contains("amdhsa.version") && m.contains(&minor.to_string()),
            "{minor}: {m}"
        );
    }
    for (minor, version) in [(1, 4), (2, 5), (3, 6), (0xFFFF_FFFC, u32::MAX)] {
        let co = CodeObject::parse(&with_version(minor)).unwrap();
        assert_eq!(co.version(), Some(version));
    }
}

#[test]
fn a_hostile_version_inside_a_bundle_entry_is_named_with_the_entry() {
    let entry = with_version(u64::MAX);
    let image = bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", &entry)]);
    let m = invalid(CodeObject::parse(&image));
    assert!(m.contains("gfx90a") && m.contains("amdhsa.version"), "{m}");
}

#[test]
fn note_sizes_at_the_u32_limit_are_errors() {
    let good = note(
        b"AMDGPU\0",
        32,
        &msgpack(&one_kernel("amdgcn-amd-amdhsa--gfx90a")),
    );
    for (field, value) in [
        (0, u32::MAX),
        (4, u32::MAX),
        (4, u32::MAX - 2),
        (0, u32::MAX - 11),
    ] {
        let mut n = good.clone();
        n[field..field + 4].copy_from_slice(&value.to_le_bytes());
        let image = super::elf(EM_AMDGPU, &[(SHT_NOTE, &n)]);
        check(&image).unwrap();
        let m = invalid(CodeObject::parse(&image));
        assert!(m.contains("note"), "{field} = {value}: {m}");
    }
    let co = CodeObject::parse(&super::elf(EM_AMDGPU, &[(SHT_NOTE, &good)])).unwrap();
    assert_eq!(co.kernels()[0].name, "k");
}
