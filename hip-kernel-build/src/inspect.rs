//! What a built code object holds: kernel names from an ELF's `.kd` symbols or PTX `.entry` lines.

use super::*;

/// Names of the kernels (`.kd` symbols) in an AMD code object, or the `.entry` names of PTX text: a quick
/// check that a build produced what a crate exports. `None` if `image` is neither.
pub fn kernel_names(image: &[u8]) -> Option<Vec<String>> {
    if image.starts_with(b"\x7fELF") {
        return elf_kd_symbols(image);
    }
    let text = std::str::from_utf8(image).ok()?;
    let names: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let rest = l
                .strip_prefix(".visible .entry ")
                .or_else(|| l.strip_prefix(".entry "))?;
            Some(rest.split('(').next()?.trim().to_string())
        })
        .collect();
    Some(names)
}

pub(crate) fn elf_kd_symbols(b: &[u8]) -> Option<Vec<String>> {
    let u16_at = |o: usize| b.get(o..o + 2).map(|s| u16::from_le_bytes([s[0], s[1]]));
    let u32_at = |o: usize| {
        b.get(o..o + 4)
            .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    };
    let u64_at = |o: usize| {
        b.get(o..o + 8)
            .map(|s| u64::from_le_bytes(s.try_into().unwrap_or([0; 8])))
    };
    let shoff = usize::try_from(u64_at(0x28)?).ok()?;
    let (shent, shnum) = (u16_at(0x3A)? as usize, u16_at(0x3C)? as usize);
    let section = |i: usize| {
        let h = shoff.checked_add(i.checked_mul(shent)?)?;
        Some((
            u32_at(h + 4)?,
            usize::try_from(u64_at(h + 0x18)?).ok()?,
            usize::try_from(u64_at(h + 0x20)?).ok()?,
            u32_at(h + 0x28)? as usize,
        ))
    };
    let mut names = BTreeMap::new();
    for i in 0..shnum {
        let (kind, off, size, link) = section(i)?;
        if kind != 2 {
            continue; // SHT_SYMTAB
        }
        let (_, stroff, strsize, _) = section(link)?;
        let strtab = b.get(stroff..stroff.checked_add(strsize)?)?;
        for s in (0..size / 24).map(|k| off + k * 24) {
            let name_off = u32_at(s)? as usize;
            let name = strtab.get(name_off..)?;
            let end = name.iter().position(|&c| c == 0)?;
            let name = std::str::from_utf8(&name[..end]).ok()?;
            if let Some(k) = name.strip_suffix(".kd") {
                names.insert(k.to_string(), ());
            }
        }
    }
    Some(names.into_keys().collect())
}
