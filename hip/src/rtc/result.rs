//! The thin HIPRTC layer: each call returns [`Result`], owning nothing.

use crate::error::{Error, Result};
use hiprtc_sys as sys;
use std::ffi::{c_char, CStr};

/// Turn a `hiprtcResult` into a `Result`, naming the call.
pub fn check(call: &'static str, code: sys::hiprtcResult) -> Result<()> {
    if code == sys::HIPRTC_SUCCESS {
        Ok(())
    } else {
        Err(Error::from_rtc(call, code, None))
    }
}

/// `hiprtcVersion`.
pub fn version() -> Result<(i32, i32)> {
    let (mut major, mut minor) = (0, 0);
    check("hiprtcVersion", unsafe {
        sys::hiprtcVersion(&mut major, &mut minor)
    })?;
    Ok((major, minor))
}

/// `hiprtcCreateProgram`.
///
/// HIPRTC 7.0 declares the header arrays (and `hiprtcCompileProgram`'s options) `const char* const*`, older
/// versions `const char**`: the `as _` casts fit both, and HIPRTC only reads them.
pub fn create_program(
    src: &CStr,
    name: &CStr,
    headers: &[*const c_char],
    include_names: &[*const c_char],
) -> Result<sys::hiprtcProgram> {
    let mut p = std::ptr::null_mut();
    check("hiprtcCreateProgram", unsafe {
        sys::hiprtcCreateProgram(
            &mut p,
            src.as_ptr(),
            name.as_ptr(),
            headers.len() as i32,
            headers.as_ptr() as _,
            include_names.as_ptr() as _,
        )
    })?;
    Ok(p)
}

/// `hiprtcDestroyProgram`.
///
/// # Safety
/// `prog` is live and not used afterwards.
pub unsafe fn destroy_program(mut prog: sys::hiprtcProgram) -> Result<()> {
    check("hiprtcDestroyProgram", sys::hiprtcDestroyProgram(&mut prog))
}

/// `hiprtcAddNameExpression`.
///
/// # Safety
/// `prog` is live.
pub unsafe fn add_name_expression(prog: sys::hiprtcProgram, expr: &CStr) -> Result<()> {
    check(
        "hiprtcAddNameExpression",
        sys::hiprtcAddNameExpression(prog, expr.as_ptr()),
    )
}

/// `hiprtcCompileProgram`; returns the raw result so the caller can attach the log.
///
/// # Safety
/// `prog` is live.
pub unsafe fn compile_program(
    prog: sys::hiprtcProgram,
    options: &[*const c_char],
) -> sys::hiprtcResult {
    sys::hiprtcCompileProgram(prog, options.len() as i32, options.as_ptr() as _)
}

/// `hiprtcGetProgramLogSize` + `hiprtcGetProgramLog`.
///
/// # Safety
/// `prog` is live.
pub unsafe fn program_log(prog: sys::hiprtcProgram) -> Result<String> {
    let mut n = 0;
    check(
        "hiprtcGetProgramLogSize",
        sys::hiprtcGetProgramLogSize(prog, &mut n),
    )?;
    let mut buf = vec![0u8; n + 1];
    if n > 0 {
        check(
            "hiprtcGetProgramLog",
            sys::hiprtcGetProgramLog(prog, buf.as_mut_ptr().cast()),
        )?;
    }
    Ok(until_nul(buf))
}

/// `hiprtcGetCodeSize` + `hiprtcGetCode`.
///
/// # Safety
/// `prog` is live and compiled.
pub unsafe fn code(prog: sys::hiprtcProgram) -> Result<Vec<u8>> {
    let mut n = 0;
    check("hiprtcGetCodeSize", sys::hiprtcGetCodeSize(prog, &mut n))?;
    let mut buf = vec![0u8; n];
    check(
        "hiprtcGetCode",
        sys::hiprtcGetCode(prog, buf.as_mut_ptr().cast()),
    )?;
    Ok(buf)
}

/// `hiprtcGetLoweredName`, copied out (the runtime's string dies with the program).
///
/// # Safety
/// `prog` is live and compiled.
pub unsafe fn lowered_name(prog: sys::hiprtcProgram, expr: &CStr) -> Result<String> {
    let mut out = std::ptr::null();
    check(
        "hiprtcGetLoweredName",
        sys::hiprtcGetLoweredName(prog, expr.as_ptr(), &mut out),
    )?;
    Ok(if out.is_null() {
        String::new()
    } else {
        CStr::from_ptr(out).to_string_lossy().into_owned()
    })
}

/// `hiprtcGetBitcodeSize` + `hiprtcGetBitcode` (HIPRTC >= 5.3).
///
/// # Safety
/// `prog` is live and compiled with `-fgpu-rdc`.
#[cfg(hiprtc_linker)]
pub unsafe fn bitcode(prog: sys::hiprtcProgram) -> Result<Vec<u8>> {
    let mut n = 0;
    check(
        "hiprtcGetBitcodeSize",
        sys::hiprtcGetBitcodeSize(prog, &mut n),
    )?;
    let mut buf = vec![0u8; n];
    check(
        "hiprtcGetBitcode",
        sys::hiprtcGetBitcode(prog, buf.as_mut_ptr().cast()),
    )?;
    Ok(buf)
}

fn until_nul(mut buf: Vec<u8>) -> String {
    if let Some(end) = buf.iter().position(|&b| b == 0) {
        buf.truncate(end);
    }
    String::from_utf8_lossy(&buf).into_owned()
}
