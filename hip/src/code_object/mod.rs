//! Checking a code object image before HIP parses it: HIP's `hipModuleLoadData` is not told the image's
//! length, so it works out a length from the image's own headers and reads that much. An image whose
//! headers claim more than the slice holds would make the runtime read past the slice.
//!
//! No HIP calls here: pure parsing of bytes, tested offline against real HIPRTC output.
//!
//! # What the runtime reads (read from its source)
//!
//! Read in HIP's loader: `CodeObject::ElfSize` (`hipamd/src/hip_code_object.cpp`) is `amd::Elf::getElfSize`
//! (`rocclr/elf/elf.cpp`, read in ROCm/clr), and the bundle walk `extractCodeObjectFromFatBinary` (read in
//! the ROCm 5.x hipamd sources, ROCm-Developer-Tools/hipamd):
//!
//! - **Bare ELF**: for ELF64 `getElfSize` reads the 64-byte `Elf64_Ehdr`, then `e_shnum` section headers as
//!   an `Elf64_Shdr[]` array at `e_shoff`, i.e. with a **64-byte stride whatever `e_shentsize` says**. The
//!   size starts as `e_shoff + e_shentsize * e_shnum` (an `int` product in C), then for each header whose
//!   `sh_offset` is greater than every offset seen so far it becomes `sh_offset`, plus `sh_size` unless the
//!   section is `SHT_NOBITS`: a NOBITS section's *offset* counts. That many bytes from the start are handed
//!   to the code object loader.
//! - **Clang offload bundle** (`__CLANG_OFFLOAD_BUNDLE__`): the 24-byte magic, a `u64` entry count, then per
//!   entry `u64 offset, u64 size, u64 id_len` and the id. An entry's code object is `(image + offset,
//!   size)`; for a `hip`/`hcc` (pre-v4) entry the runtime also reads the entry's 64-byte ELF header to learn
//!   its target, and newer runtimes read it for every non-empty entry (generic targets). Newer runtimes can
//!   also unbundle through comgr (always for compressed `CCOB` bundles); an uncompressed bundle whose every
//!   descriptor and entry lies inside the slice gives that path nothing outside it either. Compressed
//!   bundles are refused here.
//!
//! [`check`] accepts an image only if every byte the runtime reads in those steps lies inside the slice,
//! no step's arithmetic overflows (the C code would wrap or be undefined), and, for a bundle, every
//! non-empty entry is itself an ELF that passes the same check inside its own bytes.

use crate::error::{Error, Result};

mod metadata;
mod ptx;
pub(crate) mod signature;
pub use signature::Signature;
mod target;
pub use metadata::{CodeObject, Format, Kernel, Param, ParamKind};
pub use target::{bundle_for_device, bundle_ids, compatible};

/// What kind of code object an image is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A bare ELF64 (an AMD GPU code object, or on NVIDIA a cubin).
    Elf,
    /// A clang offload bundle, with this many entries.
    Bundle {
        /// Number of entries.
        entries: u64,
    },
}

const ELF_MAGIC: &[u8] = b"\x7fELF";
const BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
const EHDR: u64 = 64;
const SHDR: u64 = 64;
const SHT_NOBITS: u32 = 8;

/// Check that the runtime, loading `image` without its length, reads nothing past its end.
pub fn check(image: &[u8]) -> Result<Kind> {
    if image.starts_with(ELF_MAGIC) {
        elf_size(image)?;
        Ok(Kind::Elf)
    } else if image.starts_with(BUNDLE_MAGIC) {
        bundle(image)
    } else {
        Err(bad(
            "not a code object: expected an ELF file or an (uncompressed) clang offload bundle"
                .into(),
        ))
    }
}

/// The number of bytes HIP's loader takes as the size of the bare ELF `image`, checked to lie inside it.
pub fn elf_size(image: &[u8]) -> Result<u64> {
    let len = image.len() as u64;
    if len < EHDR {
        return Err(bad(format!(
            "ELF header truncated ({len} bytes, the header is 64)"
        )));
    }
    if image[4] != 2 {
        return Err(bad(format!(
            "not a 64-bit ELF (class {}): the runtime would size it as ELF32",
            image[4]
        )));
    }
    let shoff = u64_at(image, 0x28);
    let shentsize = u64::from(u16_at(image, 0x3A));
    let shnum = u64::from(u16_at(image, 0x3C));
    // The runtime reads shnum 64-byte section headers at e_shoff.
    let headers_inside = shoff
        .checked_add(SHDR * shnum)
        .is_some_and(|end| end <= len);
    if !headers_inside {
        return Err(bad(format!(
            "section headers ({shnum} of 64 bytes at offset {shoff}) lie past the image's {len} bytes"
        )));
    }
    // `e_shentsize * e_shnum` is an `int` product in the runtime: past i32::MAX it is undefined.
    let product = shentsize * shnum;
    if product > i32::MAX as u64 {
        return Err(bad(format!(
            "e_shentsize {shentsize} x e_shnum {shnum} overflows the runtime's size arithmetic"
        )));
    }
    let overflow =
        || bad("section offsets and sizes overflow the runtime's size arithmetic".into());
    let mut max_offset = shoff;
    let mut total = shoff.checked_add(product).ok_or_else(overflow)?;
    for i in 0..shnum {
        let sh = (shoff + i * SHDR) as usize; // inside the image: checked above
        let kind = u32_at(image, sh + 4);
        let offset = u64_at(image, sh + 0x18);
        let size = u64_at(image, sh + 0x20);
        if max_offset < offset {
            max_offset = offset;
            total = offset;
            if kind != SHT_NOBITS {
                total = total.checked_add(size).ok_or_else(overflow)?;
            }
        }
    }
    if total > len {
        return Err(bad(format!(
            "the runtime would read {total} bytes (from the section headers) but the image has {len}"
        )));
    }
    Ok(total)
}

/// `e_machine` of an AMD GPU code object.
pub const EM_AMDGPU: u16 = 224;

/// Refuse a bare ELF (already accepted by [`check`]) built for another machine than `machine` (an x86
/// shared object or a cubin handed to the AMD loader), naming both.
pub fn expect_machine(image: &[u8], machine: u16) -> Result<()> {
    let found = u16_at(image, 0x12);
    if found == machine {
        Ok(())
    } else {
        Err(bad(format!(
            "the ELF is for machine {found} (e_machine), not {machine}: not a code object for this \
             platform's GPUs"
        )))
    }
}

fn bundle(image: &[u8]) -> Result<Kind> {
    let len = image.len() as u64;
    let at_least = |end: u64, what: &str| {
        if end <= len {
            Ok(())
        } else {
            Err(bad(format!(
                "offload bundle {what} ends at byte {end}, past the image's {len} bytes"
            )))
        }
    };
    let header = BUNDLE_MAGIC.len() as u64 + 8;
    at_least(header, "header")?;
    let entries = u64_at(image, BUNDLE_MAGIC.len());
    let mut at = header;
    for i in 0..entries {
        // Each descriptor is at least 24 bytes, so a count larger than the image fails here in time.
        let fields_end = at.checked_add(24).filter(|&e| e <= len);
        let Some(fields_end) = fields_end else {
            return Err(bad(format!("offload bundle entry {i} truncated")));
        };
        let (offset, size, id_len) = (
            u64_at(image, at as usize),
            u64_at(image, at as usize + 8),
            u64_at(image, at as usize + 16),
        );
        let id_end = fields_end
            .checked_add(id_len)
            .filter(|&e| e <= len)
            .ok_or_else(|| bad(format!("offload bundle entry {i}'s id lies past the image")))?;
        let id = &image[fields_end as usize..id_end as usize];
        let end = offset.checked_add(size).ok_or_else(|| {
            bad(format!(
                "offload bundle entry {i}'s offset + size overflows"
            ))
        })?;
        at_least(end, &format!("entry {i}"))?;
        // The offload kind is the id up to its first '-' (all of it when there is none).
        let kind = id.split(|&b| b == b'-').next().unwrap_or_default();
        let reads_header = size > 0 || kind == b"hip" || kind == b"hcc";
        if reads_header {
            let entry = &image[offset as usize..end as usize];
            if !entry.starts_with(ELF_MAGIC) {
                return Err(bad(format!(
                    "offload bundle entry {i} ({}) is not an ELF code object",
                    String::from_utf8_lossy(id)
                )));
            }
            elf_size(entry).map_err(|e| {
                bad(format!(
                    "offload bundle entry {i} ({}): {}",
                    String::from_utf8_lossy(id),
                    e.to_string().trim_start_matches("invalid code object: ")
                ))
            })?;
        }
        at = id_end;
    }
    Ok(Kind::Bundle { entries })
}

fn bad(why: String) -> Error {
    Error::InvalidCodeObject(why)
}

// Callers check bounds first; these only read.
fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(v)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(refused(elf_size(&image))
            .starts_with("the runtime would read 18446744073709551614 bytes"));
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
            "offload bundle header ends at byte 32, past the image's 24 bytes"
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
}
