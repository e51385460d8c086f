//! Kernel signatures read from a code object: the `NT_AMDGPU_METADATA` note of an AMD ELF (code object v4,
//! v5, v6: a MessagePack map), each entry of a clang offload bundle, or the `.entry` lines of PTX text.
//!
//! No HIP calls: bytes in, [`CodeObject`] out. Every read is bounds-checked, so malformed input is
//! [`Error::InvalidCodeObject`] naming what was wrong, never a panic.
//!
//! The AMD metadata keys are those of LLVM's AMDGPU usage document ("Code Object V3 to V6 Metadata"):
//! `amdhsa.version`, `amdhsa.target`, `amdhsa.kernels[]` with `.name`, `.symbol`, `.args[]` (`.offset`,
//! `.size`, `.value_kind`, `.address_space`, `.name`, `.type_name`), `.kernarg_segment_size`,
//! `.kernarg_segment_align`, `.group_segment_fixed_size`, `.private_segment_fixed_size`, `.wavefront_size`,
//! `.max_flat_workgroup_size`, `.sgpr_count`, `.vgpr_count`.

use super::kernel::{Kernel, Param, ParamKind, MAX_TARGET_LEN};
use super::{bad, u16_at, u32_at, u64_at, BUNDLE_MAGIC, ELF_MAGIC, EM_AMDGPU, SHDR};
use crate::error::Result;
use rmpv::Value;

/// What a parsed image was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A bare ELF (AMD code object; on NVIDIA a cubin, which carries no signature).
    Elf,
    /// A clang offload bundle: kernels of every entry, each with its entry's target.
    Bundle,
    /// PTX text.
    Ptx,
}

/// The kernels a code object declares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeObject {
    format: Format,
    kernels: Vec<Kernel>,
    has_metadata: bool,
    version: Option<u32>,
}

const NT_AMDGPU_METADATA: u32 = 32;
const SHT_NOTE: u32 = 7;

impl CodeObject {
    /// Parse an AMD ELF code object (v4, v5, v6), a clang offload bundle, or PTX text.
    ///
    /// An ELF without an `NT_AMDGPU_METADATA` note (a cubin, an older code object) parses with no kernels
    /// and [`has_metadata`](Self::has_metadata) false: nothing is guessed.
    ///
    /// Time and memory O(`image.len()`): [`check`](super::check) bounds the bundle entries read to the
    /// image's length in total, the note sections read are bounded the same way, MessagePack is decoded
    /// in one pass, each kernel's keys are looked up a fixed number of times, and every kernel's copy of
    /// its target is at most 256 bytes (longer targets are refused).
    pub fn parse(image: &[u8]) -> Result<CodeObject> {
        if image.starts_with(ELF_MAGIC) || image.starts_with(BUNDLE_MAGIC) {
            match super::check(image)? {
                super::Kind::Elf => elf(image, ""),
                super::Kind::Bundle { .. } => bundle(image),
            }
        } else {
            super::ptx::parse(image).map(|kernels| CodeObject {
                format: Format::Ptx,
                kernels,
                has_metadata: true,
                version: None,
            })
        }
    }

    /// What the image was.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Every kernel (of every entry, for a bundle).
    pub fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }

    /// Whether the image carries signatures at all (PTX always; an ELF only with the metadata note).
    pub fn has_metadata(&self) -> bool {
        self.has_metadata
    }

    /// The AMD code object version (4, 5, 6) from `amdhsa.version`, for a bare ELF with metadata.
    pub fn version(&self) -> Option<u32> {
        self.version
    }

    /// The kernel called `name` (or whose symbol is `name`) for a target HIP would load on `device_arch`
    /// (any target when `device_arch` is `None`).
    pub fn kernel(&self, name: &str, device_arch: Option<&str>) -> Option<&Kernel> {
        let agent = device_arch.map(|a| format!("amdgcn-amd-amdhsa--{a}"));
        self.kernels.iter().find(|k| {
            (k.name == name || k.symbol == name || k.symbol.strip_suffix(".kd") == Some(name))
                && match (&agent, self.format) {
                    (Some(agent), Format::Bundle) => {
                        super::compatible(k.target.trim_start_matches("hipv4-"), agent)
                    }
                    _ => true,
                }
        })
    }
}

fn elf(image: &[u8], target_prefix: &str) -> Result<CodeObject> {
    let mut out = CodeObject {
        format: Format::Elf,
        kernels: Vec::new(),
        has_metadata: false,
        version: None,
    };
    if u16_at(image, 0x12) != EM_AMDGPU {
        return Ok(out); // a cubin or another machine's ELF: no AMD metadata to read
    }
    // `check` has verified that the section headers lie inside the image.
    let shoff = u64_at(image, 0x28);
    let shnum = u64::from(u16_at(image, 0x3C));
    // Bytes of note sections read so far: at most the image's length, so that notes are read in time
    // linear in the image (65,535 note sections over the same megabyte would otherwise read it 65,535
    // times). Sections of a real object do not overlap, so they always fit.
    let mut note_bytes = 0u64;
    for i in 0..shnum {
        let sh = (shoff + i * SHDR) as usize;
        if u32_at(image, sh + 4) != SHT_NOTE {
            continue;
        }
        let (offset, size) = (u64_at(image, sh + 0x18), u64_at(image, sh + 0x20));
        note_bytes = note_bytes
            .checked_add(size)
            .filter(|&n| n <= image.len() as u64)
            .ok_or_else(|| {
                bad(format!(
                    "note sections add up to more than the image's {} bytes (section {i}): they \
                     overlap",
                    image.len()
                ))
            })?;
        let notes = offset
            .checked_add(size)
            .filter(|&end| end <= image.len() as u64)
            .map(|end| &image[offset as usize..end as usize])
            .ok_or_else(|| bad(format!("note section {i} lies past the image")))?;
        for (name, kind, desc) in note_iter(notes)? {
            if name == b"AMDGPU" && kind == NT_AMDGPU_METADATA {
                let (version, kernels) = metadata(desc, target_prefix)?;
                out.has_metadata = true;
                out.version = version;
                out.kernels.extend(kernels);
            }
        }
    }
    Ok(out)
}

fn bundle(image: &[u8]) -> Result<CodeObject> {
    let mut out = CodeObject {
        format: Format::Bundle,
        kernels: Vec::new(),
        has_metadata: false,
        version: None,
    };
    // `check` has verified every descriptor and entry lies inside the image.
    for d in super::descriptors(image)? {
        let id = String::from_utf8_lossy(d.id).into_owned();
        let end = d
            .offset
            .checked_add(d.size)
            .filter(|&e| e <= image.len() as u64);
        let Some(end) = end else {
            return Err(bad(format!(
                "offload bundle entry {id} lies past the image"
            )));
        };
        let entry = &image[d.offset as usize..end as usize];
        if d.size == 0 || !entry.starts_with(ELF_MAGIC) {
            continue; // the empty host entry
        }
        let inner = elf(entry, &id).map_err(|e| bad(format!("offload bundle entry {id}: {e}")))?;
        out.has_metadata |= inner.has_metadata;
        out.kernels.extend(inner.kernels);
    }
    Ok(out)
}

/// One ELF note: owner name (without its NUL), type, descriptor.
type Note<'a> = (&'a [u8], u32, &'a [u8]);

/// ELF notes: `namesz, descsz, type` (u32 each), the name and the descriptor, each padded to 4 bytes.
fn note_iter(mut b: &[u8]) -> Result<Vec<Note<'_>>> {
    let mut notes = Vec::new();
    let pad = |n: usize| n.checked_add(3).map(|v| v & !3);
    while b.len() >= 12 {
        let (namesz, descsz, kind) = (u32_at(b, 0) as usize, u32_at(b, 4) as usize, u32_at(b, 8));
        // Every end is computed checked: a u32 size plus 12 overflows a 32-bit usize.
        let name_end = pad(namesz).and_then(|n| n.checked_add(12));
        let desc_end = name_end.and_then(|e| pad(descsz).and_then(|d| e.checked_add(d)));
        let name_bytes_end = namesz.checked_add(12);
        let desc_bytes_end = name_end.and_then(|e| e.checked_add(descsz));
        let (Some(name_end), Some(desc_end), Some(name_bytes_end), Some(desc_bytes_end)) =
            (name_end, desc_end, name_bytes_end, desc_bytes_end)
        else {
            return Err(bad("note size overflows".into()));
        };
        if name_bytes_end > b.len() || desc_bytes_end > b.len() {
            return Err(bad(format!(
                "note of {namesz}-byte name and {descsz}-byte descriptor lies past its section"
            )));
        }
        let name = &b[12..name_bytes_end];
        let name = name.strip_suffix(b"\0").unwrap_or(name);
        notes.push((name, kind, &b[name_end..desc_bytes_end]));
        b = &b[desc_end.min(b.len())..];
    }
    Ok(notes)
}

fn metadata(desc: &[u8], target_prefix: &str) -> Result<(Option<u32>, Vec<Kernel>)> {
    let err = |why: String| bad(format!("AMDGPU metadata: {why}"));
    let mut rd = desc;
    let root = rmpv::decode::read_value_with_max_depth(&mut rd, 16)
        .map_err(|e| err(format!("not valid MessagePack ({e})")))?;
    // [1, 1] is v4, [1, 2] v5, [1, 3] v6: the version is the minor word + 3, which must fit a u32.
    let version = get(&root, "amdhsa.version")
        .and_then(Value::as_array)
        .and_then(|v| v.get(1))
        .and_then(Value::as_u64)
        .map(|minor| {
            u32::try_from(minor)
                .ok()
                .and_then(|m| m.checked_add(3))
                .ok_or_else(|| {
                    err(format!(
                        "amdhsa.version minor word {minor} is not a code object version"
                    ))
                })
        })
        .transpose()?;
    let target = match get(&root, "amdhsa.target").and_then(Value::as_str) {
        Some(t) => t.to_string(),
        None => target_prefix.to_string(),
    };
    if target.len() > MAX_TARGET_LEN {
        return Err(err(format!(
            "the target (amdhsa.target, or the bundle entry id) is {} bytes long; no target id is \
             longer than {MAX_TARGET_LEN}",
            target.len()
        )));
    }
    let list = get(&root, "amdhsa.kernels")
        .ok_or_else(|| err("no amdhsa.kernels".into()))?
        .as_array()
        .ok_or_else(|| err("amdhsa.kernels is not an array".into()))?;
    let mut kernels = Vec::with_capacity(list.len());
    for (i, k) in list.iter().enumerate() {
        let name = str_of(k, ".name").ok_or_else(|| err(format!("kernel {i} has no .name")))?;
        let kerr = |why: String| err(format!("kernel `{name}`: {why}"));
        let mut params = Vec::new();
        if let Some(args) = get(k, ".args") {
            let args = args
                .as_array()
                .ok_or_else(|| kerr(".args is not an array".into()))?;
            for (j, a) in args.iter().enumerate() {
                params.push(param(a).ok_or_else(|| {
                    kerr(format!("argument {j} lacks .offset, .size or .value_kind"))
                })?);
            }
        }
        kernels.push(Kernel {
            symbol: str_of(k, ".symbol").unwrap_or_default().to_string(),
            name: name.to_string(),
            target: target.clone(),
            params,
            kernarg_segment_size: u64_of(k, ".kernarg_segment_size"),
            group_segment_size: u64_of(k, ".group_segment_fixed_size"),
            private_segment_size: u64_of(k, ".private_segment_fixed_size"),
            wavefront_size: u32_of(k, ".wavefront_size"),
            max_workgroup_size: u32_of(k, ".max_flat_workgroup_size"),
            sgpr_count: u32_of(k, ".sgpr_count"),
            vgpr_count: u32_of(k, ".vgpr_count"),
        });
    }
    Ok((version, kernels))
}

fn param(a: &Value) -> Option<Param> {
    let (offset, size) = (u64_of(a, ".offset")?, u64_of(a, ".size")?);
    let value_kind = str_of(a, ".value_kind")?.to_string();
    let kind = match value_kind.as_str() {
        "by_value" => ParamKind::Value,
        k if k.starts_with("hidden_") => ParamKind::Hidden,
        "global_buffer" | "dynamic_shared_pointer" | "image" | "sampler" | "pipe" | "queue" => {
            ParamKind::Pointer
        }
        _ => ParamKind::Unknown,
    };
    Some(Param {
        name: str_of(a, ".name").map(str::to_string),
        offset,
        size,
        align: None,
        kind,
        value_kind,
        address_space: str_of(a, ".address_space").map(str::to_string),
        type_name: str_of(a, ".type_name").map(str::to_string),
    })
}

fn get<'v>(map: &'v Value, key: &str) -> Option<&'v Value> {
    map.as_map()?
        .iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}
fn str_of<'v>(map: &'v Value, key: &str) -> Option<&'v str> {
    get(map, key)?.as_str()
}
fn u64_of(map: &Value, key: &str) -> Option<u64> {
    get(map, key)?.as_u64()
}
fn u32_of(map: &Value, key: &str) -> Option<u32> {
    u64_of(map, key).and_then(|v| u32::try_from(v).ok())
}
