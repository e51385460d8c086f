//! What `Module::load_data` accepts on HIP's NVIDIA platform, checked before the driver sees it: the
//! driver answers anything else with "device kernel image is invalid", which names neither what it got nor
//! what it wanted.
//!
//! The CUDA driver's `cuModuleLoadData` takes PTX text (read up to a NUL), a cubin (an ELF for machine
//! `EM_CUDA`, 190) or a fatbin (a `fatBinaryHeader`: magic `0xBA55ED50`, a `u16` version, a `u16` header
//! size and a `u64` size of the entries after the header, from which the driver sizes the image).

use super::{bad, BUNDLE_MAGIC, ELF_MAGIC, EM_AMDGPU};
use crate::error::{Error, Result};

/// `e_machine` of an NVIDIA cubin.
pub const EM_CUDA: u16 = 190;
/// A fatbin's first four bytes (`0xBA55ED50`, little-endian).
const FATBIN_MAGIC: &[u8] = &[0x50, 0xED, 0x55, 0xBA];
/// `magic, version, header size, fat size`.
const FATBIN_HEADER: usize = 16;

/// The kind of image the NVIDIA driver loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NvidiaImage {
    /// PTX text (its first directive is `.version`).
    Ptx,
    /// An ELF for `EM_CUDA`, whose headers lie inside the image.
    Cubin,
    /// A fatbin whose header and entries (as its header sizes them) lie inside the image.
    Fatbin,
}

/// Which of the driver's three formats `image` is, or an error naming what it looks like instead.
pub fn check_nvidia(image: &[u8]) -> Result<NvidiaImage> {
    if image.starts_with(ELF_MAGIC) {
        super::check(image)?; // headers inside the slice
        return match super::u16_at(image, 0x12) {
            EM_CUDA => Ok(NvidiaImage::Cubin),
            EM_AMDGPU => Err(refused(
                "an AMD GPU code object (an ELF for machine 224, EM_AMDGPU)",
            )),
            other => Err(refused(&format!("an ELF for machine {other} (e_machine)"))),
        };
    }
    if image.starts_with(FATBIN_MAGIC) {
        return fatbin(image).map(|()| NvidiaImage::Fatbin);
    }
    if image.starts_with(BUNDLE_MAGIC) {
        return Err(refused("a clang offload bundle (AMD's format)"));
    }
    let text = image.strip_suffix(b"\0").unwrap_or(image);
    if text.contains(&0) {
        return Err(refused(&format!(
            "{} bytes of binary data starting {}",
            image.len(),
            hex_prefix(image)
        )));
    }
    if first_directive(text) != Some(b".version".as_slice()) {
        return Err(refused(&format!(
            "text whose first directive is not PTX's `.version` (it starts {:?})",
            String::from_utf8_lossy(&text[..text.len().min(40)])
        )));
    }
    Ok(NvidiaImage::Ptx)
}

fn refused(what: &str) -> Error {
    bad(format!(
        "this is {what}; on HIP's NVIDIA platform Module::load_data takes PTX text (starting with a \
         `.version` directive), a cubin (an ELF for machine 190, EM_CUDA) or a fatbin (magic 0xBA55ED50)"
    ))
}

/// The fatbin's header must lie inside the image, and so must the entries it says follow it.
fn fatbin(image: &[u8]) -> Result<()> {
    let len = image.len() as u64;
    if image.len() < FATBIN_HEADER {
        return Err(bad(format!(
            "fatbin header truncated ({len} bytes, the header is {FATBIN_HEADER})"
        )));
    }
    let header = u64::from(super::u16_at(image, 6));
    let entries = super::u64_at(image, 8);
    if header < FATBIN_HEADER as u64 || header.checked_add(entries).is_none_or(|end| end > len) {
        return Err(bad(format!(
            "the fatbin's header ({header} bytes) and entries ({entries} bytes) do not lie inside its \
             {len} bytes"
        )));
    }
    Ok(())
}

/// The first word of `text` outside comments and blanks, if any.
fn first_directive(text: &[u8]) -> Option<&[u8]> {
    let mut rest = text;
    loop {
        rest = rest.trim_ascii_start();
        if let Some(after) = rest.strip_prefix(b"//") {
            rest = after
                .iter()
                .position(|&b| b == b'\n')
                .map_or(&[], |i| &after[i..]);
        } else if let Some(after) = rest.strip_prefix(b"/*") {
            rest = after
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(&[], |i| &after[i + 2..]);
        } else {
            let end = rest
                .iter()
                .position(u8::is_ascii_whitespace)
                .unwrap_or(rest.len());
            return (end > 0).then(|| &rest[..end]);
        }
    }
}

fn hex_prefix(image: &[u8]) -> String {
    image
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(image: &[u8]) -> String {
        match check_nvidia(image) {
            Err(Error::InvalidCodeObject(m)) => m,
            other => panic!("expected InvalidCodeObject, got {other:?}"),
        }
    }

    const EXPECTED: &str = "takes PTX text (starting with a `.version` directive), a cubin";

    #[test]
    fn the_first_directive_skips_comments_and_blanks() {
        assert_eq!(
            first_directive(b" // c\n/* d */\t.version 8.0"),
            Some(b".version".as_slice())
        );
        for nothing in [
            b"".as_slice(),
            b" \n\t",
            b"// only a comment",
            b"/* unterminated",
        ] {
            assert_eq!(first_directive(nothing), None, "{nothing:?}");
        }
    }

    #[test]
    fn ptx_is_text_whose_first_directive_is_version() {
        let nvrtc =
            b"//\n// Generated by NVIDIA NVVM Compiler\n//\n\n.version 7.8\n.target sm_90\n";
        assert_eq!(check_nvidia(nvrtc).ok(), Some(NvidiaImage::Ptx));
        let mut with_nul = nvrtc.to_vec();
        with_nul.push(0);
        assert_eq!(check_nvidia(&with_nul).ok(), Some(NvidiaImage::Ptx));
        assert_eq!(
            check_nvidia(b"/* a\n b */ .version 8.0").ok(),
            Some(NvidiaImage::Ptx)
        );
        for garbage in [
            b"hello world".as_slice(),
            b"",
            b"   \n// only a comment\n",
            b".target sm_90\n.version 7.8\n",
            b"/* unterminated .version",
            b"version 7.8",
        ] {
            let m = message(garbage);
            assert!(
                m.contains("first directive is not PTX's `.version`"),
                "{garbage:?}: {m}"
            );
            assert!(m.contains(EXPECTED), "{m}");
        }
    }

    #[test]
    fn binary_data_elfs_of_other_machines_and_bundles_are_named() {
        let m = message(&[1, 2, 0, 3, 4, 5, 6, 7, 8, 9]);
        assert!(
            m.contains("10 bytes of binary data starting 01 02 00 03 04 05 06 07"),
            "{m}"
        );
        let amd = crate::code_object::tests::amd_object(&crate::code_object::tests::map(vec![]));
        let m = message(&amd);
        assert!(
            m.contains("an AMD GPU code object") && m.contains(EXPECTED),
            "{m}"
        );
        let mut other = amd.clone();
        other[0x12..0x14].copy_from_slice(&62u16.to_le_bytes());
        assert!(message(&other).contains("an ELF for machine 62"));
        let mut cubin = amd.clone();
        cubin[0x12..0x14].copy_from_slice(&EM_CUDA.to_le_bytes());
        assert_eq!(check_nvidia(&cubin).ok(), Some(NvidiaImage::Cubin));
        // A cubin's headers are checked as an AMD ELF's are.
        assert!(message(&cubin[..40]).contains("ELF header truncated"));
        let bundle =
            crate::code_object::tests::bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", &amd)]);
        assert!(message(&bundle).contains("a clang offload bundle (AMD's format)"));
    }

    fn fatbin_of(header: u16, entries: u64, len: usize) -> Vec<u8> {
        let mut f = FATBIN_MAGIC.to_vec();
        f.extend_from_slice(&1u16.to_le_bytes());
        f.extend_from_slice(&header.to_le_bytes());
        f.extend_from_slice(&entries.to_le_bytes());
        f.resize(len, 0);
        f
    }

    #[test]
    fn a_fatbin_must_hold_what_its_header_sizes() {
        assert_eq!(
            check_nvidia(&fatbin_of(16, 84, 100)).ok(),
            Some(NvidiaImage::Fatbin)
        );
        assert_eq!(
            check_nvidia(&fatbin_of(16, 0, 16)).ok(),
            Some(NvidiaImage::Fatbin)
        );
        for (header, entries, len) in [
            (16, 85, 100),
            (15, 0, 100),
            (16, u64::MAX, 100),
            (u16::MAX, 0, 100),
        ] {
            let m = message(&fatbin_of(header, entries, len));
            assert!(
                m.contains("do not lie inside"),
                "{header} {entries} {len}: {m}"
            );
        }
        assert!(message(FATBIN_MAGIC).contains("fatbin header truncated (4 bytes"));
    }
}
