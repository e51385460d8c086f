//! The worst inputs for each parser's running time: each must take time linear in its input (the bound
//! each states in its rustdoc). These inputs took seconds (or far longer) before; a debug build must now
//! answer them within a generous second, with the right answer.
//!
//! Not run under Miri (far too slow there for megabyte inputs; the logic is covered by the other tests).

use super::{
    amd_object, bundle, bundle_raw, descriptors_len, elf, invalid, map, note, one_kernel,
    section_header, SHT_NOTE,
};
use crate::code_object::{bundle_ids, check, CodeObject, Kind, ParamKind, EM_AMDGPU};
use rmpv::Value;

/// `f`'s answer, after asserting it used under a second of this thread's CPU time.
fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    crate::test_time::within_a_cpu_second(what, f)
}

/// An ELF of `n` section headers (all null sections) right after its header: 64 + 64n bytes, the most
/// headers an ELF can have (`n` = 65,535) in about 4 MiB.
fn many_sections(n: u16) -> Vec<u8> {
    let mut image = elf(EM_AMDGPU, &[]);
    image[0x28..0x30].copy_from_slice(&64u64.to_le_bytes());
    image[0x3C..0x3E].copy_from_slice(&n.to_le_bytes());
    image.resize(64 + 64 * usize::from(n), 0);
    image
}

#[test]
#[cfg_attr(miri, ignore = "megabyte inputs")]
fn ptx_line_comments_before_one_block_comment_are_stripped_in_linear_time() {
    // 240 KB of `//` lines, then the kernel, then an unclosed `/*`: the old stripper looked for the next
    // `/*` from every `//`, rescanning the rest of the text each time (6.9 s in a debug build).
    let kernel = ".visible .entry k(\n.param .u32 k_param_0\n)\n{\nret;\n}\n";
    for (comments, tail) in [("//\n", "/*"), ("/**/", "//")] {
        let mut text = String::from(".version 7.8\n.target sm_52\n");
        text.push_str(&comments.repeat(240_000 / comments.len()));
        text.push_str(kernel);
        text.push_str(tail);
        let co = timed("PTX comments", || CodeObject::parse(text.as_bytes())).unwrap();
        assert_eq!(co.kernels().len(), 1);
        let k = &co.kernels()[0];
        assert_eq!((k.name.as_str(), k.target.as_str()), ("k", "sm_52"));
        assert_eq!(k.params[0].size, 4);
    }
}

#[test]
#[cfg_attr(miri, ignore = "megabyte inputs")]
fn ptx_with_many_kernels_parses_in_linear_time() {
    let mut text = String::from(".version 7.8\n.target sm_52\n");
    for i in 0..10_000 {
        text.push_str(&format!(
            ".entry k{i}(.param .u64 .ptr .global p, .param .align 8 .b8 s[16])\n.maxntid 64, 1, 1\n{{ ret; }}\n// k{i}\n"
        ));
    }
    let co = timed("10,000 PTX kernels", || CodeObject::parse(text.as_bytes())).unwrap();
    assert_eq!(co.kernels().len(), 10_000);
    let last = co.kernel("k9999", None).unwrap();
    assert_eq!(last.params[0].kind, ParamKind::Pointer);
    assert_eq!(last.kernarg_segment_size, Some(24));
    assert_eq!(last.max_workgroup_size, Some(64));
}

#[test]
#[cfg_attr(miri, ignore = "megabyte inputs")]
fn a_long_target_is_refused_rather_than_copied_into_every_kernel() {
    // Every kernel owns a copy of its target: a 50 KB target and 10,000 kernels would be 500 MB of
    // copies, and the copies grow with the square of the input.
    let long = "x".repeat(50_000);
    let mut text = format!(".version 7.8\n.target {long}\n");
    text.push_str(&".entry k(){}\n".repeat(10_000));
    let m = invalid(timed("long PTX target", || {
        CodeObject::parse(text.as_bytes())
    }));
    assert!(m.contains(".target") && m.contains("50000 bytes"), "{m}");

    let kernel = map(vec![(".name", "k".into())]);
    let metadata = map(vec![
        ("amdhsa.target", long.as_str().into()),
        ("amdhsa.kernels", Value::Array(vec![kernel; 10_000])),
    ]);
    let image = amd_object(&metadata);
    let m = invalid(timed("long amdhsa.target", || CodeObject::parse(&image)));
    assert!(m.contains("target") && m.contains("50000 bytes"), "{m}");
    // A target id of ordinary length is kept.
    let image = amd_object(&one_kernel("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"));
    let co = CodeObject::parse(&image).unwrap();
    assert_eq!(
        co.kernels()[0].target,
        "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"
    );
}

#[test]
#[cfg_attr(miri, ignore = "megabyte inputs")]
fn bundle_entries_that_share_one_large_elf_are_refused_in_linear_time() {
    // 16,000 entries all pointing at one ELF of 65,535 section headers: 5 MB, and the old check walked
    // the 65,535 headers once per entry (6.9 s in a debug build).
    let code = many_sections(u16::MAX);
    let id = "hipv4-amdgcn-amd-amdhsa--gfx90a";
    let ids = vec![id; 16_000];
    let at = descriptors_len(&ids);
    let descriptors: Vec<_> = ids.iter().map(|id| (*id, at, code.len() as u64)).collect();
    let image = bundle_raw(&descriptors, &code);
    assert!(image.len() > 5_000_000);
    let m = invalid(timed("shared entries", || check(&image)));
    assert!(
        m.contains("add up to more than") && m.contains("entry 1"),
        "{m}"
    );
    let m = invalid(timed("shared entries", || CodeObject::parse(&image)));
    assert!(m.contains("add up to more than"), "{m}");
    assert_eq!(
        timed("16,000 ids", || bundle_ids(&image)).unwrap().len(),
        16_000
    );

    // The same ELF once, beside 4,000 small entries of their own: accepted, in linear time.
    let small = amd_object(&one_kernel("amdgcn-amd-amdhsa--gfx90a"));
    let mut entries: Vec<(&str, &[u8])> = vec![(id, &code)];
    entries.extend(std::iter::repeat_n((id, &small[..]), 4_000));
    let image = bundle(&entries);
    let kind = timed("4,001 entries", || check(&image)).unwrap();
    assert_eq!(kind, Kind::Bundle { entries: 4_001 });
    let co = timed("4,001 entries", || CodeObject::parse(&image)).unwrap();
    assert_eq!(co.kernels().len(), 4_000);
}

#[test]
#[cfg_attr(miri, ignore = "megabyte inputs")]
fn note_sections_that_share_one_note_are_refused_in_linear_time() {
    // One metadata note of 800 arguments (32 KB), and 8,000 note sections all pointing at it: the old
    // parser decoded it 8,000 times (256 MB of MessagePack) and gave 8,000 copies of the kernel.
    let arg = map(vec![
        (".offset", 0.into()),
        (".size", 8.into()),
        (".value_kind", "by_value".into()),
    ]);
    let metadata = map(vec![(
        "amdhsa.kernels",
        Value::Array(vec![map(vec![
            (".name", "k".into()),
            (".args", Value::Array(vec![arg; 800])),
        ])]),
    )]);
    let note = note(b"AMDGPU\0", 32, &super::msgpack(&metadata));
    let n = 8_000u16;
    let mut image = elf(EM_AMDGPU, &[]);
    let shoff = 64 + note.len() as u64;
    image[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
    image[0x3C..0x3E].copy_from_slice(&n.to_le_bytes());
    image.extend_from_slice(&note);
    for _ in 0..n {
        image.extend_from_slice(&section_header(SHT_NOTE, 64, note.len() as u64));
    }
    check(&image).unwrap();
    let m = invalid(timed("shared notes", || CodeObject::parse(&image)));
    assert!(m.contains("note sections add up"), "{m}");
    // Each note in its own bytes: read.
    let co = CodeObject::parse(&elf(EM_AMDGPU, &[(SHT_NOTE, &note), (SHT_NOTE, &note)])).unwrap();
    assert_eq!(co.kernels().len(), 2);
    assert_eq!(co.kernels()[0].params.len(), 800);
}
