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
//! non-empty entry is itself an ELF that passes the same check inside its own bytes. It also refuses a
//! bundle whose non-empty entries add up to more bytes than the image (entries sharing bytes, which no
//! bundler writes): checking each one on its own would otherwise take time quadratic in the image.

use crate::error::{Error, Result};

mod kernel;
mod metadata;
mod nvidia;
mod ptx;
pub(crate) mod signature;
pub use signature::Signature;
mod target;
pub use kernel::{Kernel, Param, ParamKind};
pub use metadata::{CodeObject, Format};
pub use nvidia::{check_nvidia, NvidiaImage, EM_CUDA};
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
///
/// Time O(`image.len()`): one pass over an ELF's section headers (at most `len / 64` of them), or over a
/// bundle's descriptors (at least 24 bytes each) plus each entry's ELF, whose sizes add up to at most
/// `len`.
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
///
/// Time O(`image.len()`): one pass over the section headers, which must lie inside the image.
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
    if i32::try_from(product).is_err() {
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

/// Refuse a bare ELF built for another machine than `machine` (an x86 shared object or a cubin handed to the
/// AMD loader), naming both. An image too short for an ELF header, or not an ELF, is an error too.
pub fn expect_machine(image: &[u8], machine: u16) -> Result<()> {
    if !image.starts_with(ELF_MAGIC) {
        return Err(bad("not an ELF file".into()));
    }
    if (image.len() as u64) < EHDR {
        return Err(bad(format!(
            "ELF header truncated ({} bytes, the header is 64)",
            image.len()
        )));
    }
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

/// One offload bundle descriptor: where its entry lies (not yet checked) and its id.
pub(crate) struct Descriptor<'a> {
    pub(crate) offset: u64,
    pub(crate) size: u64,
    pub(crate) id: &'a [u8],
}

/// The descriptors of the bundle `image`, each (with its id) checked to lie inside the image; the entries
/// they point at are not checked here.
///
/// Time and memory are O(`image.len()`): every descriptor takes at least 24 bytes of the image, so a count
/// larger than the image holds fails at the first descriptor past its end.
pub(crate) fn descriptors(image: &[u8]) -> Result<Vec<Descriptor<'_>>> {
    if !image.starts_with(BUNDLE_MAGIC) {
        return Err(bad(
            "not an offload bundle (no __CLANG_OFFLOAD_BUNDLE__ magic)".into(),
        ));
    }
    let len = image.len() as u64;
    let header = BUNDLE_MAGIC.len() as u64 + 8;
    if len < header {
        return Err(bad(format!(
            "offload bundle header truncated ({len} bytes, the header is {header})"
        )));
    }
    let entries = u64_at(image, BUNDLE_MAGIC.len());
    let mut out = Vec::new();
    let mut at = header;
    for i in 0..entries {
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
        out.push(Descriptor {
            offset,
            size,
            id: &image[fields_end as usize..id_end as usize],
        });
        at = id_end;
    }
    Ok(out)
}

fn bundle(image: &[u8]) -> Result<Kind> {
    let len = image.len() as u64;
    let descriptors = descriptors(image)?;
    // Bytes of the entries checked so far. Each entry is an ELF checked on its own, in time up to its
    // size; entries of a real bundle lie one after another, so their sizes add up to at most the image's
    // length. Entries that share bytes could make the check re-read the same section headers once per
    // entry (16,000 entries over one ELF of 65,535 sections: a billion header reads), so they are
    // refused once their sizes add up to more than the image.
    let mut entry_bytes = 0u64;
    for (i, d) in descriptors.iter().enumerate() {
        let id = String::from_utf8_lossy(d.id);
        let end = d.offset.checked_add(d.size).ok_or_else(|| {
            bad(format!(
                "offload bundle entry {i}'s offset + size overflows"
            ))
        })?;
        if end > len {
            return Err(bad(format!(
                "offload bundle entry {i} ends at byte {end}, past the image's {len} bytes"
            )));
        }
        // The offload kind is the id up to its first '-' (all of it when there is none).
        let kind = d.id.split(|&b| b == b'-').next().unwrap_or_default();
        let reads_header = d.size > 0 || kind == b"hip" || kind == b"hcc";
        if reads_header {
            entry_bytes = entry_bytes
                .checked_add(d.size)
                .filter(|&n| n <= len)
                .ok_or_else(|| {
                    bad(format!(
                        "offload bundle entries add up to more than the image's {len} bytes (entry \
                         {i}, {id}): entries that share bytes are refused"
                    ))
                })?;
            let entry = &image[d.offset as usize..end as usize];
            if !entry.starts_with(ELF_MAGIC) {
                return Err(bad(format!(
                    "offload bundle entry {i} ({id}) is not an ELF code object"
                )));
            }
            elf_size(entry).map_err(|e| {
                bad(format!(
                    "offload bundle entry {i} ({id}): {}",
                    e.to_string().trim_start_matches("invalid code object: ")
                ))
            })?;
        }
    }
    Ok(Kind::Bundle {
        entries: descriptors.len() as u64,
    })
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
pub(crate) mod tests;
