//! The public helpers that read an image ([`bundle_ids`], [`bundle_for_device`], [`expect_machine`]) on
//! images [`check`](crate::code_object::check) would refuse: an error naming what is wrong, never a panic
//! (they used to index the image unchecked).

use super::{bundle, bundle_raw, elf, invalid};
use crate::code_object::{bundle_for_device, bundle_ids, expect_machine, EM_AMDGPU};

const GFX90A: &str = "hipv4-amdgcn-amd-amdhsa--gfx90a";

#[test]
fn bundle_ids_of_anything_but_a_whole_descriptor_table_is_an_error() {
    let header_only = bundle_raw(&[(GFX90A, 0, 0)], b"")[..32].to_vec();
    let mut id_past_end = bundle_raw(&[(GFX90A, 0, 0)], b"");
    id_past_end.truncate(id_past_end.len() - 1);
    let mut huge_id = bundle_raw(&[(GFX90A, 0, 0)], b"");
    huge_id[48..56].copy_from_slice(&u64::MAX.to_le_bytes()); // id_len
    let mut huge_count = bundle_raw(&[(GFX90A, 0, 0)], b"");
    huge_count[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
    for (image, says) in [
        (&b""[..], "not an offload bundle"),
        (b"__CLANG_OFFLOAD_BUNDLE__", "header truncated"),
        (b"\x7fELF", "not an offload bundle"),
        (&header_only, "entry 0 truncated"),
        (&id_past_end, "entry 0's id"),
        (&huge_id, "entry 0's id"),
        (&huge_count, "entry 1 truncated"),
    ] {
        let m = invalid(bundle_ids(image));
        assert!(m.contains(says), "{image:?}: {m}");
    }
}

#[test]
fn bundle_ids_lists_every_id_in_order() {
    let code = elf(EM_AMDGPU, &[]);
    let image = bundle(&[("host-x86_64-unknown-linux", &[]), (GFX90A, &code)]);
    assert_eq!(
        bundle_ids(&image).unwrap(),
        ["host-x86_64-unknown-linux", GFX90A]
    );
}

#[test]
fn bundle_for_device_on_a_bundle_header_alone_is_an_error() {
    let header_only = bundle_raw(&[(GFX90A, 0, 0)], b"")[..32].to_vec();
    for image in [&header_only[..], b"", b"__CLANG_OFFLOAD_BUNDLE__\x01"] {
        invalid(bundle_for_device(image, "gfx90a"));
    }
    // Zero entries is a whole (empty) table: no code object for the device.
    let empty = bundle_raw(&[], b"");
    let m = invalid(bundle_for_device(&empty, "gfx90a"));
    assert!(m.contains("no code object for this device"), "{m}");
}

#[test]
fn expect_machine_on_a_truncated_or_foreign_header_is_an_error() {
    for (image, says) in [
        (&b"\x7fELF"[..], "truncated"),
        (b"", "not an ELF"),
        (&[0u8; 64], "not an ELF"),
        (&elf(EM_AMDGPU, &[])[..63], "truncated"),
    ] {
        let m = invalid(expect_machine(image, EM_AMDGPU));
        assert!(m.contains(says), "{image:?}: {m}");
    }
    expect_machine(&elf(EM_AMDGPU, &[]), EM_AMDGPU).unwrap();
    let m = invalid(expect_machine(&elf(62, &[]), EM_AMDGPU));
    assert!(m.contains("machine 62"), "{m}");
}
