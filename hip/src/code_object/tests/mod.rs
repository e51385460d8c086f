//! Unit tests of the code-object parsers on crafted images: no HIP, no HIPRTC, so they also run under
//! Miri (`scripts/miri.sh`). The tests against real HIPRTC output are in the workspace's
//! `tests/code_object*.rs`.

mod arithmetic;
mod helpers;
mod linear;
mod unit;

use rmpv::Value;

/// A little-endian ELF64 for `machine`: the 64-byte header, each section's bytes in turn, then one 64-byte
/// section header per section (no null section), so the runtime's size is exactly the image's length.
pub(crate) fn elf(machine: u16, sections: &[(u32, &[u8])]) -> Vec<u8> {
    let mut out = vec![0u8; 64];
    out[..4].copy_from_slice(b"\x7fELF");
    out[4] = 2; // ELFCLASS64
    out[5] = 1; // little endian
    out[6] = 1; // EV_CURRENT
    out[0x12..0x14].copy_from_slice(&machine.to_le_bytes());
    let mut placed = Vec::new();
    for (kind, bytes) in sections {
        placed.push((*kind, out.len() as u64, bytes.len() as u64));
        out.extend_from_slice(bytes);
    }
    let shoff = out.len() as u64;
    for (kind, offset, size) in placed {
        out.extend_from_slice(&section_header(kind, offset, size));
    }
    out[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
    out[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes());
    out[0x3C..0x3E].copy_from_slice(&(sections.len() as u16).to_le_bytes());
    out
}

/// One ELF64 section header of type `kind` whose bytes are `size` at `offset`.
pub(crate) fn section_header(kind: u32, offset: u64, size: u64) -> [u8; 64] {
    let mut sh = [0u8; 64];
    sh[4..8].copy_from_slice(&kind.to_le_bytes());
    sh[0x18..0x20].copy_from_slice(&offset.to_le_bytes());
    sh[0x20..0x28].copy_from_slice(&size.to_le_bytes());
    sh
}

pub(crate) const SHT_NOTE: u32 = 7;

/// An ELF note (`namesz, descsz, type`, the name and the descriptor, each padded to 4 bytes).
pub(crate) fn note(name: &[u8], kind: u32, desc: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(name.len() as u32).to_le_bytes());
    out.extend_from_slice(&(desc.len() as u32).to_le_bytes());
    out.extend_from_slice(&kind.to_le_bytes());
    for part in [name, desc] {
        out.extend_from_slice(part);
        out.resize(out.len().next_multiple_of(4), 0);
    }
    out
}

/// MessagePack of `value`.
pub(crate) fn msgpack(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    rmpv::encode::write_value(&mut out, value).unwrap();
    out
}

/// A string-keyed MessagePack map.
pub(crate) fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::Map(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
}

/// An AMD GPU code object whose only section is an `NT_AMDGPU_METADATA` note holding `metadata`.
pub(crate) fn amd_object(metadata: &Value) -> Vec<u8> {
    let note = note(b"AMDGPU\0", 32, &msgpack(metadata));
    elf(super::EM_AMDGPU, &[(SHT_NOTE, &note)])
}

/// Metadata of one kernel `k` with one `global_buffer` argument, for `target`.
pub(crate) fn one_kernel(target: &str) -> Value {
    let arg = map(vec![
        (".offset", 0.into()),
        (".size", 8.into()),
        (".value_kind", "global_buffer".into()),
    ]);
    let kernel = map(vec![
        (".name", "k".into()),
        (".symbol", "k.kd".into()),
        (".args", Value::Array(vec![arg])),
    ]);
    map(vec![
        ("amdhsa.version", Value::Array(vec![1.into(), 1.into()])),
        ("amdhsa.target", target.into()),
        ("amdhsa.kernels", Value::Array(vec![kernel])),
    ])
}

/// An uncompressed offload bundle: each entry's descriptor `(id, offset, size)` as given, then `body`
/// placed right after the descriptors (offsets count from the image's start).
pub(crate) fn bundle_raw(descriptors: &[(&str, u64, u64)], body: &[u8]) -> Vec<u8> {
    let mut out = super::BUNDLE_MAGIC.to_vec();
    out.extend_from_slice(&(descriptors.len() as u64).to_le_bytes());
    for (id, offset, size) in descriptors {
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&(id.len() as u64).to_le_bytes());
        out.extend_from_slice(id.as_bytes());
    }
    out.extend_from_slice(body);
    out
}

/// The length of the descriptors `bundle_raw` writes for `ids`: where its body starts.
pub(crate) fn descriptors_len(ids: &[&str]) -> u64 {
    32 + ids.iter().map(|id| 24 + id.len() as u64).sum::<u64>()
}

/// A bundle of `(id, code object)` entries laid out one after another, as clang-offload-bundler does
/// (an empty entry gets offset 0).
pub(crate) fn bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let ids: Vec<&str> = entries.iter().map(|(id, _)| *id).collect();
    let mut at = descriptors_len(&ids);
    let mut descriptors = Vec::new();
    let mut body = Vec::new();
    for (id, code) in entries {
        let offset = if code.is_empty() { 0 } else { at };
        descriptors.push((*id, offset, code.len() as u64));
        body.extend_from_slice(code);
        at += code.len() as u64;
    }
    bundle_raw(&descriptors, &body)
}

/// The message of an `InvalidCodeObject` error, or a panic naming what came instead.
pub(crate) fn invalid<T: std::fmt::Debug>(r: crate::Result<T>) -> String {
    match r {
        Err(crate::Error::InvalidCodeObject(m)) => m,
        other => panic!("expected an invalid-code-object error, got {other:?}"),
    }
}
