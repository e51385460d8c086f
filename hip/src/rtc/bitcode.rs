//! The target of LLVM bitcode, read from the bitcode itself.
//!
//! comgr links and compiles whatever bitcode it is given for the ISA it is told, without comparing the
//! two: bitcode compiled for `gfx1100` linked "for" `gfx90a` gives a code object the runtime would load and
//! run wrongly. So the [`Linker`](super::Linker) reads each input's target triple (`MODULE_CODE_TRIPLE`)
//! and every function's `"target-cpu"` attribute (in the parameter-attribute groups) and refuses a mismatch.
//! Bitcode without a `target-cpu` (the device libraries are generic) is accepted.
//!
//! The bitstream is read by this crate's own reader ([`reader`]), in time and memory linear in the input:
//! malformed or hostile bitcode is an error, never a panic, an abort or a stack overflow.

use crate::error::{Error, Result};

mod reader;
pub(crate) use reader::target;

/// Refuse bitcode `data` (named `input`) that was built for another target than `arch`, or that is not
/// well-formed bitcode. Time O(`data.len()`).
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
mod tests;
