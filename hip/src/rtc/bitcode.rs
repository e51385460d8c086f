//! The target of LLVM bitcode, read from the bitcode itself.
//!
//! comgr links and compiles whatever bitcode it is given for the ISA it is told, without comparing the
//! two: bitcode compiled for `gfx1100` linked "for" `gfx90a` gives a code object the runtime would load and
//! run wrongly. So the [`Linker`](super::Linker) reads each input's target triple (`MODULE_CODE_TRIPLE`)
//! and every function's `"target-cpu"` attribute (in the parameter-attribute groups) and refuses a mismatch.
//! Bitcode without a `target-cpu` (the device libraries are generic) is accepted.

use crate::error::{Error, Result};
use llvm_bitcode::bitcode::{BitcodeElement, Payload};
use llvm_bitcode::Bitcode;

const MODULE_BLOCK_ID: u32 = 8;
const PARAMATTR_GROUP_BLOCK_ID: u32 = 10;
const MODULE_CODE_TRIPLE: u64 = 2;
const PARAMATTR_GRP_CODE_ENTRY: u64 = 3;
/// Kind of a string attribute with a value inside a group entry (3 is a string key without one).
const STRING_ATTR: u64 = 4;

/// What the bitcode says about its target.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Target {
    /// The module's target triple, e.g. `amdgcn-amd-amdhsa`.
    pub(crate) triple: Option<String>,
    /// Every distinct `"target-cpu"` its functions name, e.g. `gfx90a`.
    pub(crate) cpus: Vec<String>,
    /// Whether a module block was found at all (a truncated file parses to less).
    pub(crate) has_module: bool,
}

/// Read the target of bitcode `data`; an error when it is not bitcode.
pub(crate) fn target(data: &[u8]) -> std::result::Result<Target, String> {
    // The reader is pure Rust and returns errors for what it sees as malformed; a panic on some input it
    // did not foresee must still not take the caller's process down.
    let parsed = std::panic::catch_unwind(|| Bitcode::new(data))
        .map_err(|_| "malformed LLVM bitcode (the reader gave up)".to_string())?;
    let bitcode = parsed.map_err(|e| format!("not LLVM bitcode ({e:?})"))?;
    let mut target = Target::default();
    for element in bitcode.elements {
        visit(element, &mut target);
    }
    if !target.has_module {
        return Err("no LLVM module in the bitcode (truncated or not bitcode)".into());
    }
    Ok(target)
}

fn visit(element: BitcodeElement, target: &mut Target) {
    let BitcodeElement::Block(block) = element else {
        return;
    };
    target.has_module |= block.id == MODULE_BLOCK_ID;
    for child in block.elements {
        match child {
            BitcodeElement::Record(mut record) => {
                let id = record.id;
                let mut values = record.fields().to_vec();
                match record.take_payload() {
                    Some(Payload::Array(a)) => values.extend(a),
                    Some(Payload::Char6String(s)) => values.extend(s.bytes().map(u64::from)),
                    Some(Payload::Blob(b)) => values.extend(b.into_iter().map(u64::from)),
                    None => {}
                }
                if block.id == MODULE_BLOCK_ID && id == MODULE_CODE_TRIPLE {
                    target.triple = Some(chars(&values));
                } else if block.id == PARAMATTR_GROUP_BLOCK_ID && id == PARAMATTR_GRP_CODE_ENTRY {
                    if let Some(cpu) = string_attr(&values, "target-cpu") {
                        if !target.cpus.contains(&cpu) {
                            target.cpus.push(cpu);
                        }
                    }
                }
            }
            block @ BitcodeElement::Block(_) => visit(block, target),
        }
    }
}

/// Characters of a record, one value each, up to a NUL.
fn chars(values: &[u64]) -> String {
    values
        .iter()
        .take_while(|&&v| v != 0)
        .map(|&v| char::from(u8::try_from(v).unwrap_or(b'?')))
        .collect()
}

/// The value of string attribute `key` in a group entry: the values hold `4, key chars.., 0, value
/// chars.., 0`. Other attribute kinds vary in length between LLVM versions, so the entry is searched for
/// the key rather than walked.
fn string_attr(values: &[u64], key: &str) -> Option<String> {
    let mut pattern = vec![STRING_ATTR];
    pattern.extend(key.bytes().map(u64::from));
    pattern.push(0);
    let start = values
        .windows(pattern.len())
        .position(|w| w == pattern.as_slice())?;
    Some(chars(&values[start + pattern.len()..]))
}

/// Refuse bitcode `data` (named `input`) that was built for another target than `arch`.
pub(crate) fn check(input: &str, data: &[u8], arch: &str) -> Result<()> {
    let target =
        target(data).map_err(|e| Error::InvalidCodeObject(format!("link input `{input}`: {e}")))?;
    let expected = format!("amdgcn-amd-amdhsa--{arch}");
    if let Some(triple) = target
        .triple
        .as_deref()
        .filter(|t| !t.starts_with("amdgcn-amd-amdhsa"))
    {
        return Err(Error::TargetMismatch {
            input: input.into(),
            found: triple.into(),
            expected,
        });
    }
    let processor = arch.split(':').next().unwrap_or(arch);
    if let Some(cpu) = target.cpus.iter().find(|c| *c != processor) {
        return Err(Error::TargetMismatch {
            input: input.into(),
            found: cpu.clone(),
            expected,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_attributes_are_found_among_others() {
        let mut v = vec![7, 0xffff_ffff, 0, 3];
        v.extend("uniform-work-group-size".bytes().map(u64::from));
        v.extend([0, 4]);
        v.extend("target-cpu".bytes().map(u64::from));
        v.push(0);
        v.extend("gfx90a".bytes().map(u64::from));
        v.extend([0, 1, 2]);
        assert_eq!(string_attr(&v, "target-cpu").as_deref(), Some("gfx90a"));
        assert_eq!(string_attr(&v, "target-features"), None);
    }

    #[test]
    fn non_bitcode_is_an_error_not_a_panic() {
        for data in [
            &b""[..],
            b"BC",
            b"BC\xc0\xde",
            b"\x7fELF\x02\x01\x01",
            &[0xde, 0xc0, 0x17, 0x0b, 0, 0],
        ] {
            let e = check("x.bc", data, "gfx90a").unwrap_err();
            assert!(e.to_string().contains("link input `x.bc`"), "{e}");
        }
    }
}
