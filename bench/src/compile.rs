//! HIPRTC compile time: the safe ProgramBuilder (cache off) against the C++ baseline's create / compile /
//! get code / destroy, for the same source and architecture.
use crate::baseline::{checked, Baseline};
use hip::rtc::ProgramBuilder;
use std::ffi::CString;
use std::time::Instant;

/// One safe compile: nanoseconds and the code size.
pub fn safe(source: &str, name: &str, arch: &str) -> hip::Result<(f64, usize)> {
    let t = Instant::now();
    let out = ProgramBuilder::new(source)
        .name(name)
        .arch(arch)
        .no_cache()
        .compile()?;
    Ok((t.elapsed().as_nanos() as f64, out.code().len()))
}

/// One C++ compile: nanoseconds and the code size.
pub fn cpp(b: &Baseline, source: &str, name: &str, arch: &str) -> Result<(f64, usize), String> {
    let c = |s: &str| CString::new(s).map_err(|_| "NUL in compile input".to_string());
    let (source, name, option) = (
        c(source)?,
        c(name)?,
        c(&format!("--gpu-architecture={arch}"))?,
    );
    let mut size = 0usize;
    let ns = unsafe { (b.compile)(source.as_ptr(), name.as_ptr(), option.as_ptr(), &mut size) };
    Ok((checked("compile", ns)?, size))
}
