//! What a code object says about its kernels, read without HIP: AMD GPU ELF code objects (their AMDGPU
//! metadata note), clang offload bundles of them, and PTX text.
//!
//! ```no_run
//! let image = std::fs::read("kernels.hipfb")?;
//! for k in hip::code_object::kernels(&image)? {
//!     let sizes: Vec<u64> = k.args.iter().map(|a| a.size).collect();
//!     println!("{} ({}): argument sizes {sizes:?}", k.name, k.target);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Malformed input is an [`Error::InvalidCodeObject`] saying what was wrong, never a panic.

mod msgpack;

use crate::error::{Error, Result};
use msgpack::Value;

/// One kernel of a code object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// Its symbol name, as [`Module::function`](crate::Module::function) takes it.
    pub name: String,
    /// The target it was built for: an AMD target id (`gfx90a`, `gfx90a:xnack-`) or an NVIDIA `sm_NN`.
    pub target: String,
    /// Its explicit parameters, in order (AMD's hidden arguments are left out).
    pub args: Vec<KernelArgInfo>,
    /// Bytes of kernel arguments including hidden ones (AMD: `.kernarg_segment_size`); `None` for PTX.
    pub kernarg_size: Option<u64>,
    /// Bytes of statically allocated shared memory (AMD: `.group_segment_fixed_size`); `None` for PTX.
    pub group_segment_size: Option<u64>,
}

/// One parameter of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelArgInfo {
    /// Byte offset in the argument block.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
    /// What it is: AMD's `.value_kind` (`global_buffer`, `by_value`, ...) or PTX's type (`.u64`, `.f32`,
    /// `.b8[12]`).
    pub kind: String,
}

const ELF_MAGIC: &[u8] = b"\x7fELF";
const BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
/// `e_machine` of AMD GPU code objects.
pub const EM_AMDGPU: u16 = 224;
/// Note type of the MessagePack metadata (code object v3+), under the note name `AMDGPU`.
const NT_AMDGPU_METADATA: u32 = 32;

/// The kernels in `image`: an AMD GPU ELF code object, a clang offload bundle (every AMD entry, each
/// kernel tagged with its entry's target), or PTX text.
pub fn kernels(image: &[u8]) -> Result<Vec<KernelInfo>> {
    if image.starts_with(ELF_MAGIC) {
        amd_elf_kernels(image, None)
    } else if image.starts_with(BUNDLE_MAGIC) {
        bundle_kernels(image)
    } else if let Some(text) = ptx_text(image) {
        Ok(ptx_kernels(text))
    } else {
        Err(bad(
            "neither an ELF code object, an offload bundle nor PTX text",
        ))
    }
}

fn bad(why: impl Into<String>) -> Error {
    Error::InvalidCodeObject(why.into())
}

fn slice(b: &[u8], off: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(off).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    b.get(start..end)
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

fn bundle_kernels(b: &[u8]) -> Result<Vec<KernelInfo>> {
    let n = u64_at(b, BUNDLE_MAGIC.len()).ok_or_else(|| bad("offload bundle header truncated"))?;
    let mut at = BUNDLE_MAGIC.len() + 8;
    let mut out = Vec::new();
    for i in 0..n {
        let (Some(off), Some(size), Some(id_len)) =
            (u64_at(b, at), u64_at(b, at + 8), u64_at(b, at + 16))
        else {
            return Err(bad(format!("offload bundle entry {i} truncated")));
        };
        let id = slice(b, (at + 24) as u64, id_len)
            .ok_or_else(|| bad(format!("offload bundle entry {i}'s id lies past the end")))?;
        let id = String::from_utf8_lossy(id).into_owned();
        let body = slice(b, off, size)
            .ok_or_else(|| bad(format!("offload bundle entry `{id}` lies past the end")))?;
        at += 24 + id_len as usize;
        // hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-; the host entry (empty) has no kernels.
        if let Some((triple, target)) = id.split_once("--") {
            if triple.contains("amdgcn") && !body.is_empty() {
                let ks = amd_elf_kernels(body, Some(target))
                    .map_err(|e| bad(format!("offload bundle entry `{id}`: {e}")))?;
                out.extend(ks);
            }
        }
    }
    Ok(out)
}

/// Kernels of an AMD ELF code object, from its metadata note.
fn amd_elf_kernels(b: &[u8], target: Option<&str>) -> Result<Vec<KernelInfo>> {
    if b.get(4) != Some(&2) || b.get(5) != Some(&1) {
        return Err(bad("not a 64-bit little-endian ELF"));
    }
    let machine = u16_at(b, 0x12).ok_or_else(|| bad("ELF header truncated"))?;
    if machine != EM_AMDGPU {
        return Err(bad(format!(
            "ELF e_machine is {machine}, not EM_AMDGPU ({EM_AMDGPU})"
        )));
    }
    let note = metadata_note(b)?.ok_or_else(|| bad("no AMDGPU metadata note (code object v2?)"))?;
    let meta = msgpack::decode(note).map_err(|e| bad(format!("AMDGPU metadata: {e}")))?;
    let target = match target {
        Some(t) => t.to_string(),
        None => meta
            .get("amdhsa.target")
            .and_then(Value::as_str)
            .map(|t| t.rsplit("--").next().unwrap_or(t).to_string())
            .unwrap_or_default(),
    };
    let kernels = meta
        .get("amdhsa.kernels")
        .ok_or_else(|| bad("AMDGPU metadata lists no amdhsa.kernels"))?;
    kernels
        .as_array()
        .iter()
        .map(|k| {
            let name = k
                .get(".name")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("AMDGPU metadata: a kernel without .name"))?;
            let args = k
                .get(".args")
                .map(Value::as_array)
                .unwrap_or_default()
                .iter()
                .filter_map(|a| {
                    let kind = a.get(".value_kind").and_then(Value::as_str).unwrap_or("");
                    (!kind.starts_with("hidden_")).then(|| KernelArgInfo {
                        offset: a.get(".offset").and_then(Value::as_u64).unwrap_or(0),
                        size: a.get(".size").and_then(Value::as_u64).unwrap_or(0),
                        kind: kind.to_string(),
                    })
                })
                .collect();
            Ok(KernelInfo {
                name: name.to_string(),
                target: target.clone(),
                args,
                kernarg_size: k.get(".kernarg_segment_size").and_then(Value::as_u64),
                group_segment_size: k.get(".group_segment_fixed_size").and_then(Value::as_u64),
            })
        })
        .collect()
}

/// The descriptor of the `AMDGPU` note of type 32, searched in SHT_NOTE sections.
fn metadata_note(b: &[u8]) -> Result<Option<&[u8]>> {
    let truncated = || bad("ELF section headers truncated");
    let shoff = u64_at(b, 0x28).ok_or_else(truncated)?;
    let shent = u16_at(b, 0x3A).ok_or_else(truncated)? as u64;
    let shnum = u16_at(b, 0x3C).ok_or_else(truncated)? as u64;
    // The whole table must be there: a cut image is refused, not half read.
    if slice(b, shoff, shent * shnum).is_none() {
        return Err(bad(format!(
            "ELF section headers lie past the image's {} bytes",
            b.len()
        )));
    }
    for i in 0..shnum {
        let h = shoff
            .checked_add(i * shent)
            .and_then(|h| usize::try_from(h).ok())
            .ok_or_else(truncated)?;
        if u32_at(b, h + 4).ok_or_else(truncated)? != 7 {
            continue; // not SHT_NOTE
        }
        let (off, size) = (
            u64_at(b, h + 0x18).ok_or_else(truncated)?,
            u64_at(b, h + 0x20).ok_or_else(truncated)?,
        );
        let mut notes =
            slice(b, off, size).ok_or_else(|| bad("ELF note section lies past the end"))?;
        while notes.len() >= 12 {
            let (Some(namesz), Some(descsz), Some(kind)) =
                (u32_at(notes, 0), u32_at(notes, 4), u32_at(notes, 8))
            else {
                break;
            };
            let name_end = 12 + (namesz as usize).div_ceil(4) * 4;
            let desc_end = name_end
                .checked_add((descsz as usize).div_ceil(4) * 4)
                .filter(|&e| e <= notes.len())
                .ok_or_else(|| bad("ELF note lies past its section"))?;
            let name = &notes[12..12 + namesz as usize];
            if name.strip_suffix(b"\0").unwrap_or(name) == b"AMDGPU" && kind == NT_AMDGPU_METADATA {
                return Ok(Some(&notes[name_end..name_end + descsz as usize]));
            }
            notes = &notes[desc_end..];
        }
    }
    Ok(None)
}

/// PTX is text that declares its `.version`; anything else is not taken for it.
fn ptx_text(b: &[u8]) -> Option<&str> {
    let b = b.strip_suffix(b"\0").unwrap_or(b);
    let text = std::str::from_utf8(b).ok()?;
    text.lines()
        .any(|l| l.trim_start().starts_with(".version "))
        .then_some(text)
}

fn ptx_kernels(text: &str) -> Vec<KernelInfo> {
    let target = text
        .lines()
        .find_map(|l| l.trim().strip_prefix(".target "))
        .map(|t| t.split(',').next().unwrap_or(t).trim().to_string())
        .unwrap_or_default();
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let l = line.trim_start();
        let Some(rest) = l
            .strip_prefix(".visible .entry ")
            .or_else(|| l.strip_prefix(".entry "))
        else {
            continue;
        };
        let name = rest.split('(').next().unwrap_or(rest).trim().to_string();
        let mut args = Vec::new();
        let mut end = 0u64;
        let mut params = rest
            .split_once('(')
            .map(|(_, p)| p.to_string())
            .unwrap_or_default();
        // Parameters run until the closing parenthesis, one per line as LLVM and NVCC write them.
        while !params.contains(')') {
            match lines.next() {
                Some(next) => {
                    params.push('\n');
                    params.push_str(next);
                }
                None => break,
            }
        }
        let params = params.split(')').next().unwrap_or("");
        for p in params.split(',') {
            if let Some((size, align, kind)) = ptx_param(p) {
                let offset = end.div_ceil(align) * align;
                end = offset + size;
                args.push(KernelArgInfo { offset, size, kind });
            }
        }
        out.push(KernelInfo {
            name,
            target: target.clone(),
            args,
            kernarg_size: None,
            group_segment_size: None,
        });
    }
    out
}

/// Size, alignment and type of one `.param` declaration.
fn ptx_param(p: &str) -> Option<(u64, u64, String)> {
    let tokens: Vec<&str> = p.split_whitespace().collect();
    if tokens.first() != Some(&".param") {
        return None;
    }
    // `.param .align N .b8 name[SIZE]`: an aggregate of SIZE bytes aligned to N.
    if tokens.get(1) == Some(&".align") {
        let align: u64 = tokens.get(2)?.parse().ok()?;
        let name = tokens.last()?;
        let size: u64 = name.split('[').nth(1)?.trim_end_matches(']').parse().ok()?;
        return Some((size, align.max(1), format!("{}[{size}]", tokens.get(3)?)));
    }
    let ty = *tokens.get(1)?;
    let bits: u64 = ty.get(2..)?.parse().ok()?;
    let size = (bits / 8).max(1);
    Some((size, size, ty.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "//\n.version 7.0\n.target sm_70\n.address_size 64\n\n\
        .visible .entry saxpy_f32(\n\t.param .f32 saxpy_f32_param_0,\n\
        \t.param .u64 .ptr .align 1 saxpy_f32_param_1,\n\t.param .u32 saxpy_f32_param_3\n)\n{\n}\n\
        .visible .entry by_value(\n\t.param .align 4 .b8 by_value_param_0[12]\n)\n{\n}\n";

    #[test]
    fn ptx_entries_with_offsets_and_sizes() {
        let ks = kernels(PTX.as_bytes()).unwrap();
        assert_eq!(ks.len(), 2);
        assert_eq!(
            (ks[0].name.as_str(), ks[0].target.as_str()),
            ("saxpy_f32", "sm_70")
        );
        let layout: Vec<(u64, u64)> = ks[0].args.iter().map(|a| (a.offset, a.size)).collect();
        assert_eq!(layout, [(0, 4), (8, 8), (16, 4)]);
        assert_eq!(ks[1].args[0].size, 12);
        assert_eq!(ks[1].args[0].kind, ".b8[12]");
    }

    #[test]
    fn what_is_not_a_code_object_is_refused() {
        for junk in [
            &b""[..],
            b"hello",
            b"\x7fELF",
            b"__CLANG_OFFLOAD_BUNDLE__\x01",
        ] {
            assert!(
                matches!(kernels(junk), Err(Error::InvalidCodeObject(_))),
                "{junk:?}"
            );
        }
    }
}
