//! Unit tests of the size computations and bundle checks on crafted images.

use crate::code_object::*;

/// A 64-bit little-endian ELF of `len` bytes whose section headers (`(type, offset, size)` each, 64
/// bytes apart) start at `shoff`, with `e_shentsize` set to `shentsize`.
fn elf(len: usize, shoff: u64, shentsize: u16, sections: &[(u32, u64, u64)]) -> Vec<u8> {
    let mut b = vec![0u8; len];
    b[..4].copy_from_slice(ELF_MAGIC);
    b[4] = 2;
    b[5] = 1;
    b[0x12..0x14].copy_from_slice(&EM_AMDGPU.to_le_bytes());
    b[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
    b[0x3A..0x3C].copy_from_slice(&shentsize.to_le_bytes());
    b[0x3C..0x3E].copy_from_slice(&(sections.len() as u16).to_le_bytes());
    for (i, &(kind, offset, size)) in sections.iter().enumerate() {
        let sh = shoff as usize + 64 * i;
        b[sh + 4..sh + 8].copy_from_slice(&kind.to_le_bytes());
        b[sh + 0x18..sh + 0x20].copy_from_slice(&offset.to_le_bytes());
        b[sh + 0x20..sh + 0x28].copy_from_slice(&size.to_le_bytes());
    }
    b
}

fn refused(r: Result<impl std::fmt::Debug>) -> String {
    match r {
        Err(Error::InvalidCodeObject(m)) => m,
        other => panic!("expected InvalidCodeObject, got {other:?}"),
    }
}

const PROGBITS: u32 = 1;

#[test]
fn the_size_is_the_end_of_the_section_with_the_largest_offset() {
    // Headers at 64..192; sections at 200 (+100) and 400 (+50): the runtime reads 450 bytes.
    let image = elf(450, 64, 64, &[(PROGBITS, 200, 100), (PROGBITS, 400, 50)]);
    assert_eq!(elf_size(&image).unwrap(), 450);
    assert_eq!(check(&image).unwrap(), Kind::Elf);
    // Appended bytes are not read.
    let mut longer = image.clone();
    longer.resize(1000, 0);
    assert_eq!(elf_size(&longer).unwrap(), 450);
    // One byte short of what the last section ends at.
    assert_eq!(
        refused(elf_size(&image[..449])),
        "the runtime would read 450 bytes (from the section headers) but the image has 449"
    );
    // Only a larger offset than every one before counts, whatever the sizes: a section at a smaller
    // offset that ends further is not what the runtime measures.
    let image = elf(450, 64, 64, &[(PROGBITS, 400, 50), (PROGBITS, 300, 10_000)]);
    assert_eq!(elf_size(&image).unwrap(), 450);
    let image = elf(450, 64, 64, &[(PROGBITS, 400, 50), (PROGBITS, 400, 10_000)]);
    assert_eq!(elf_size(&image).unwrap(), 450);
}

#[test]
fn a_nobits_section_counts_its_offset_not_its_size() {
    let image = elf(
        300,
        64,
        64,
        &[(PROGBITS, 200, 10), (SHT_NOBITS, 300, 1 << 20)],
    );
    assert_eq!(elf_size(&image).unwrap(), 300);
    // Its offset alone past the end is refused.
    let image = elf(300, 64, 64, &[(SHT_NOBITS, 301, 0)]);
    assert_eq!(
        refused(elf_size(&image)),
        "the runtime would read 301 bytes (from the section headers) but the image has 300"
    );
}

#[test]
fn without_sections_past_the_headers_the_size_is_where_e_shentsize_says_they_end() {
    // Sections at offsets below e_shoff do not count: the size is e_shoff + e_shentsize * e_shnum.
    let image = elf(256, 128, 64, &[(PROGBITS, 10, 10), (PROGBITS, 20, 10)]);
    assert_eq!(elf_size(&image).unwrap(), 128 + 128);
    // e_shentsize is what the runtime multiplies by, even though it reads 64-byte headers.
    let image = elf(256, 128, 16, &[(PROGBITS, 10, 10), (PROGBITS, 20, 10)]);
    assert_eq!(elf_size(&image).unwrap(), 128 + 32);
    let image = elf(256, 128, 0, &[(PROGBITS, 10, 10)]);
    assert_eq!(elf_size(&image).unwrap(), 128);
    // No sections at all: e_shoff.
    let image = elf(64, 64, 64, &[]);
    assert_eq!(elf_size(&image).unwrap(), 64);
}

#[test]
fn section_headers_must_lie_inside_with_a_64_byte_stride() {
    let image = elf(192, 64, 64, &[(PROGBITS, 0, 0), (PROGBITS, 0, 0)]);
    assert_eq!(elf_size(&image).unwrap(), 192);
    assert_eq!(
        refused(elf_size(&image[..191])),
        "section headers (2 of 64 bytes at offset 64) lie past the image's 191 bytes"
    );
    // A tiny e_shentsize does not shorten what the runtime reads.
    let image = elf(192, 64, 1, &[(PROGBITS, 0, 0), (PROGBITS, 0, 0)]);
    assert!(elf_size(&image[..191]).is_err());
    // e_shoff so large that adding the headers overflows.
    let mut image = elf(192, 64, 64, &[(PROGBITS, 0, 0)]);
    image[0x28..0x30].copy_from_slice(&(u64::MAX - 10).to_le_bytes());
    assert_eq!(
        refused(elf_size(&image)),
        format!(
            "section headers (1 of 64 bytes at offset {}) lie past the image's 192 bytes",
            u64::MAX - 10
        )
    );
}

#[test]
fn the_runtimes_int_product_and_u64_sums_must_not_overflow() {
    // 65535 headers of e_shentsize 65535: 4294836225 > i32::MAX.
    let n = 65535usize;
    let mut image = elf(64 + 64 * n, 64, 65535, &[]);
    image[0x3C..0x3E].copy_from_slice(&(n as u16).to_le_bytes());
    assert_eq!(
        refused(elf_size(&image)),
        "e_shentsize 65535 x e_shnum 65535 overflows the runtime's size arithmetic"
    );
    // 32768 x 65535 = 2147450880 fits in an int: past that check, the size it gives is too large.
    image[0x3C..0x3E].copy_from_slice(&32768u16.to_le_bytes());
    assert_eq!(
        refused(elf_size(&image)),
        format!(
            "the runtime would read {} bytes (from the section headers) but the image has {}",
            64 + 32768 * 65535,
            image.len()
        )
    );
    // A section whose offset + size passes u64::MAX.
    let image = elf(200, 64, 64, &[(PROGBITS, u64::MAX - 1, 2)]);
    assert_eq!(
        refused(elf_size(&image)),
        "section offsets and sizes overflow the runtime's size arithmetic"
    );
    // The same as NOBITS: only its offset counts, which is past the image.
    let image = elf(200, 64, 64, &[(SHT_NOBITS, u64::MAX - 1, 2)]);
    assert!(
        refused(elf_size(&image)).starts_with("the runtime would read 18446744073709551614 bytes")
    );
}

#[test]
fn short_and_32_bit_elfs_and_other_formats_are_refused() {
    let image = elf(64, 64, 64, &[]);
    assert_eq!(
        refused(elf_size(&image[..63])),
        "ELF header truncated (63 bytes, the header is 64)"
    );
    assert_eq!(
        refused(check(&image[..4])),
        "ELF header truncated (4 bytes, the header is 64)"
    );
    let mut elf32 = image.clone();
    elf32[4] = 1;
    assert_eq!(
        refused(check(&elf32)),
        "not a 64-bit ELF (class 1): the runtime would size it as ELF32"
    );
    for other in [
        &b""[..],
        b"\x7fEL",
        b"CCOB\x01\x00",
        b"__CLANG_OFFLOAD_BUNDLE_",
    ] {
        assert_eq!(
            refused(check(other)),
            "not a code object: expected an ELF file or an (uncompressed) clang offload bundle"
        );
    }
}

#[test]
fn the_machine_is_checked_and_named() {
    let image = elf(64, 64, 64, &[]);
    expect_machine(&image, EM_AMDGPU).unwrap();
    assert_eq!(EM_AMDGPU, 224);
    assert_eq!(
        refused(expect_machine(&image, 62)),
        "the ELF is for machine 224 (e_machine), not 62: not a code object for this platform's GPUs"
    );
    let mut x86 = image;
    x86[0x12..0x14].copy_from_slice(&62u16.to_le_bytes());
    assert!(refused(expect_machine(&x86, EM_AMDGPU)).starts_with("the ELF is for machine 62"));
}

/// A bundle of `(id, offset, size)` descriptors followed by `body` (offsets are absolute).
fn bundle_of(entries: &[(&str, u64, u64)], body: &[u8]) -> Vec<u8> {
    let mut b = BUNDLE_MAGIC.to_vec();
    b.extend((entries.len() as u64).to_le_bytes());
    for (id, offset, size) in entries {
        b.extend(offset.to_le_bytes());
        b.extend(size.to_le_bytes());
        b.extend((id.len() as u64).to_le_bytes());
        b.extend(id.as_bytes());
    }
    b.extend_from_slice(body);
    b
}

/// The length of `bundle_of(entries, &[])`: where a body appended to it starts.
fn header_len(ids: &[&str]) -> u64 {
    32 + ids.iter().map(|id| 24 + id.len() as u64).sum::<u64>()
}

#[test]
fn bundles_are_walked_entry_by_entry() {
    let code = elf(300, 64, 64, &[(PROGBITS, 200, 100)]);
    let ids = [
        "host-x86_64-unknown-linux",
        "hipv4-amdgcn-amd-amdhsa--gfx90a",
    ];
    let at = header_len(&ids);
    let image = bundle_of(&[(ids[0], 0, 0), (ids[1], at, 300)], &code);
    assert_eq!(check(&image).unwrap(), Kind::Bundle { entries: 2 });
    assert_eq!(
        check(&bundle_of(&[], &[])).unwrap(),
        Kind::Bundle { entries: 0 }
    );
    // An empty hipv4 entry's header is not read; an empty pre-v4 one's is, and so is an id that is
    // the kind alone.
    assert!(check(&bundle_of(
        &[("hipv4-amdgcn-amd-amdhsa--gfx90a", 0, 0)],
        &[]
    ))
    .is_ok());
    for id in [
        "hip-amdgcn-amd-amdhsa-gfx90a",
        "hcc-amdgcn-amd-amdhsa-gfx90a",
        "hip",
        "hcc",
    ] {
        assert_eq!(
            refused(check(&bundle_of(&[(id, 0, 0)], &[]))),
            format!("offload bundle entry 0 ({id}) is not an ELF code object")
        );
    }
    // A non-empty entry of another kind is read too.
    let junk = bundle_of(&[("host-x86_64-unknown-linux", 32 + 24 + 25, 4)], b"junk");
    assert_eq!(
        refused(check(&junk)),
        "offload bundle entry 0 (host-x86_64-unknown-linux) is not an ELF code object"
    );
}

#[test]
fn every_bundle_step_that_leaves_the_image_is_refused_naming_it() {
    assert_eq!(
        refused(check(BUNDLE_MAGIC)),
        "offload bundle header truncated (24 bytes, the header is 32)"
    );
    // A count larger than the descriptors present.
    let mut two = bundle_of(&[("hipv4", 0, 0)], &[]);
    two[24..32].copy_from_slice(&2u64.to_le_bytes());
    assert_eq!(refused(check(&two)), "offload bundle entry 1 truncated");
    let mut huge = bundle_of(&[], &[]);
    huge[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
    assert_eq!(refused(check(&huge)), "offload bundle entry 0 truncated");
    // A descriptor that ends exactly at the end of the image is whole.
    let exact = bundle_of(&[("", 0, 0)], &[]);
    assert_eq!(exact.len(), 56);
    assert_eq!(check(&exact).unwrap(), Kind::Bundle { entries: 1 });
    // An id running past the end, by one byte.
    let mut long_id = bundle_of(&[("hipv4", 0, 0)], &[]);
    long_id[48..56].copy_from_slice(&6u64.to_le_bytes());
    assert_eq!(
        refused(check(&long_id)),
        "offload bundle entry 0's id lies past the image"
    );
    let mut endless_id = long_id.clone();
    endless_id[48..56].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(refused(check(&endless_id)).ends_with("'s id lies past the image"));
    // Offset + size overflowing, and an entry ending one byte past the image.
    let overflow = bundle_of(&[("hipv4", u64::MAX, 1)], &[]);
    assert_eq!(
        refused(check(&overflow)),
        "offload bundle entry 0's offset + size overflows"
    );
    let len = header_len(&["hipv4"]) + 4;
    let past = bundle_of(&[("hipv4", len - 3, 4)], b"\x7fELF");
    assert_eq!(
        refused(check(&past)),
        format!(
            "offload bundle entry 0 ends at byte {}, past the image's {len} bytes",
            len + 1
        )
    );
    let inside = bundle_of(&[("hipv4", len - 4, 4)], b"\x7fELF");
    assert!(refused(check(&inside)).contains("ELF header truncated (4 bytes"));
}

#[test]
fn an_entry_is_checked_inside_its_own_bytes() {
    let code = elf(300, 64, 64, &[(PROGBITS, 200, 100)]);
    let id = "hipv4-amdgcn-amd-amdhsa--gfx90a";
    let at = header_len(&[id]);
    // The entry is one byte shorter than its ELF says, though the image goes on after it.
    let mut body = code.clone();
    body.extend([0u8; 16]);
    let image = bundle_of(&[(id, at, 299)], &body);
    assert_eq!(
        refused(check(&image)),
        format!(
            "offload bundle entry 0 ({id}): the runtime would read 300 bytes (from the section \
             headers) but the image has 299"
        )
    );
    assert!(check(&bundle_of(&[(id, at, 300)], &body)).is_ok());
    // The second entry is the bad one: named by its index.
    let image = bundle_of(&[(id, header_len(&[id, "hip"]), 300), ("hip", 0, 0)], &code);
    let m = refused(check(&image));
    assert!(m.starts_with("offload bundle entry 1 (hip)"), "{m}");
}

#[test]
fn fields_are_read_little_endian_where_they_are() {
    let b: Vec<u8> = (1..=16).collect();
    assert_eq!(u16_at(&b, 0), 0x0201);
    assert_eq!(u16_at(&b, 3), 0x0504);
    assert_eq!(u32_at(&b, 0), 0x0403_0201);
    assert_eq!(u32_at(&b, 2), 0x0605_0403);
    assert_eq!(u64_at(&b, 0), 0x0807_0605_0403_0201);
    assert_eq!(u64_at(&b, 8), 0x100f_0e0d_0c0b_0a09);
}
