//! Building clang offload bundles the way `clang-offload-bundler` lays them out.

/// An uncompressed offload bundle of `(entry id, code object)` pairs, each non-empty entry 4096-aligned;
/// an empty entry gets offset 0 (the host entry).
pub fn bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut header = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    header.extend((entries.len() as u64).to_le_bytes());
    let descs: usize = entries.iter().map(|(id, _)| 24 + id.len()).sum();
    let mut offset = (header.len() + descs).next_multiple_of(4096);
    let mut body = Vec::new();
    for (id, code) in entries {
        let this = if code.is_empty() { 0 } else { offset };
        header.extend((this as u64).to_le_bytes());
        header.extend((code.len() as u64).to_le_bytes());
        header.extend((id.len() as u64).to_le_bytes());
        header.extend(id.as_bytes());
        if !code.is_empty() {
            body.push((offset, *code));
            offset = (offset + code.len()).next_multiple_of(4096);
        }
    }
    let mut out = header;
    for (at, code) in body {
        out.resize(at, 0);
        out.extend_from_slice(code);
    }
    out
}
