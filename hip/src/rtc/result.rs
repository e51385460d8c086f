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
    // SAFETY: two out-pointers to live local `i32`s.
    check("hiprtcVersion", unsafe {
        sys::hiprtcVersion(&mut major, &mut minor)
    })?;
    Ok((major, minor))
}

/// `hiprtcCreateProgram`.
///
/// HIPRTC 7.0 declares the header arrays (and `hiprtcCompileProgram`'s options) `const char* const*`, older
/// versions `const char**`: the `as _` casts fit both, and HIPRTC only reads them.
///
/// # Safety
/// Every pointer in `headers` and `include_names` points to a NUL-terminated string that stays valid, and
/// is not written to, for the duration of the call (HIPRTC reads each one up to its NUL and keeps its
/// own copy). HIPRTC cannot tell a dangling or unterminated pointer from a string, so this function is
/// `unsafe`: a safe signature would let safe code hand it `std::ptr::dangling()`.
pub unsafe fn create_program(
    src: &CStr,
    name: &CStr,
    headers: &[*const c_char],
    include_names: &[*const c_char],
) -> Result<sys::hiprtcProgram> {
    let mut p = std::ptr::null_mut();
    let count = count_i32("headers", headers.len().max(include_names.len()))?;
    if headers.len() != include_names.len() {
        return Err(Error::LengthMismatch {
            what: "hiprtcCreateProgram header names",
            expected: headers.len(),
            actual: include_names.len(),
        });
    }
    // SAFETY: the caller's contract (`# Safety`): every header and name pointer is a NUL-terminated string
    // valid for the call; `src` and `name` are NUL-terminated; `count` is the length of both arrays (equal,
    // checked); `p` is a live local for the program.
    check("hiprtcCreateProgram", unsafe {
        sys::hiprtcCreateProgram(
            &mut p,
            src.as_ptr(),
            name.as_ptr(),
            count,
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
    // SAFETY: the caller's contract (`# Safety`): `prog` is live and not used afterwards; HIPRTC takes it
    // by pointer to a live local.
    check("hiprtcDestroyProgram", unsafe {
        sys::hiprtcDestroyProgram(&mut prog)
    })
}

/// `hiprtcAddNameExpression`.
///
/// # Safety
/// `prog` is live.
pub unsafe fn add_name_expression(prog: sys::hiprtcProgram, expr: &CStr) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `prog` is live; `expr` is NUL-terminated.
    check("hiprtcAddNameExpression", unsafe {
        sys::hiprtcAddNameExpression(prog, expr.as_ptr())
    })
}

/// `hiprtcCompileProgram`; returns the raw result so the caller can attach the log. More options than
/// an `int` counts is an error before HIPRTC is called.
///
/// # Safety
/// `prog` is live, no other thread uses it during the call, and every pointer in `options` points to a
/// NUL-terminated string that stays valid, and is not written to, for the duration of the call.
pub unsafe fn compile_program(
    prog: sys::hiprtcProgram,
    options: &[*const c_char],
) -> Result<sys::hiprtcResult> {
    let count = count_i32("options", options.len())?;
    // SAFETY: the caller's contract (`# Safety`): `prog` is live and used by no other thread during the
    // call; every option is a NUL-terminated string valid for the call, `count` of them.
    Ok(unsafe { sys::hiprtcCompileProgram(prog, count, options.as_ptr() as _) })
}

/// A slice length as the `int` count HIPRTC takes, or an error (never a wrapped, negative count).
fn count_i32(what: &'static str, len: usize) -> Result<i32> {
    i32::try_from(len).map_err(|_| Error::InvalidArgument {
        what,
        value: len.to_string(),
        reason: format!("HIPRTC takes at most {} {what}", i32::MAX),
    })
}

/// `hiprtcGetProgramLogSize` + `hiprtcGetProgramLog`.
///
/// # Safety
/// `prog` is live.
pub unsafe fn program_log(prog: sys::hiprtcProgram) -> Result<String> {
    let mut n = 0;
    // SAFETY: the caller's contract (`# Safety`): `prog` is live; `n` is a live local HIPRTC writes the
    // log's size to.
    check("hiprtcGetProgramLogSize", unsafe {
        sys::hiprtcGetProgramLogSize(prog, &mut n)
    })?;
    let mut buf = vec![0u8; n + 1];
    if n > 0 {
        // SAFETY: `prog` is live (the caller's contract), and `buf` holds the `n` bytes of the log and
        // more.
        check("hiprtcGetProgramLog", unsafe {
            sys::hiprtcGetProgramLog(prog, buf.as_mut_ptr().cast())
        })?;
    }
    Ok(until_nul(buf))
}

/// `hiprtcGetCodeSize` + `hiprtcGetCode`.
///
/// # Safety
/// `prog` is live and compiled.
pub unsafe fn code(prog: sys::hiprtcProgram) -> Result<Vec<u8>> {
    let mut n = 0;
    // SAFETY: the caller's contract (`# Safety`): `prog` is live and compiled; `n` is a live local, and
    // `buf` holds the `n` bytes of the code.
    check("hiprtcGetCodeSize", unsafe {
        sys::hiprtcGetCodeSize(prog, &mut n)
    })?;
    let mut buf = vec![0u8; n];
    // SAFETY: the caller's contract (`# Safety`): `prog` is live and compiled; `n` is a live local, and
    // `buf` holds the `n` bytes of the code.
    check("hiprtcGetCode", unsafe {
        sys::hiprtcGetCode(prog, buf.as_mut_ptr().cast())
    })?;
    Ok(buf)
}

/// `hiprtcGetLoweredName`, copied out (the runtime's string dies with the program).
///
/// # Safety
/// `prog` is live and compiled.
pub unsafe fn lowered_name(prog: sys::hiprtcProgram, expr: &CStr) -> Result<String> {
    let mut out = std::ptr::null();
    // SAFETY: the caller's contract (`# Safety`): `prog` is live and compiled; `expr` is NUL-terminated and
    // `out` a live local HIPRTC writes a pointer to.
    check("hiprtcGetLoweredName", unsafe {
        sys::hiprtcGetLoweredName(prog, expr.as_ptr(), &mut out)
    })?;
    Ok(if out.is_null() {
        String::new()
    } else {
        // SAFETY: HIPRTC's string, not null, is NUL-terminated and lives until the program is destroyed
        // (the caller keeps `prog` live for this call): it is copied out here.
        unsafe { CStr::from_ptr(out) }
            .to_string_lossy()
            .into_owned()
    })
}

/// `hiprtcGetBitcodeSize` + `hiprtcGetBitcode` (HIPRTC >= 5.3).
///
/// # Safety
/// `prog` is live and compiled with `-fgpu-rdc`.
#[cfg(hiprtc_linker)]
pub unsafe fn bitcode(prog: sys::hiprtcProgram) -> Result<Vec<u8>> {
    let mut n = 0;
    // SAFETY: the caller's contract (`# Safety`): `prog` is live and compiled with `-fgpu-rdc`; `n` is a
    // live local, and `buf` holds the `n` bytes of the bitcode.
    check("hiprtcGetBitcodeSize", unsafe {
        sys::hiprtcGetBitcodeSize(prog, &mut n)
    })?;
    let mut buf = vec![0u8; n];
    // SAFETY: the caller's contract (`# Safety`): `prog` is live and compiled with `-fgpu-rdc`; `n` is a
    // live local, and `buf` holds the `n` bytes of the bitcode.
    check("hiprtcGetBitcode", unsafe {
        sys::hiprtcGetBitcode(prog, buf.as_mut_ptr().cast())
    })?;
    Ok(buf)
}

fn until_nul(mut buf: Vec<u8>) -> String {
    if let Some(end) = buf.iter().position(|&b| b == 0) {
        buf.truncate(end);
    }
    String::from_utf8_lossy(&buf).into_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_past_i32_are_errors_not_negative_counts() {
        assert_eq!(super::count_i32("options", 3).unwrap(), 3);
        assert_eq!(
            super::count_i32("options", i32::MAX as usize).unwrap(),
            i32::MAX
        );
        let err = super::count_i32("options", i32::MAX as usize + 1).unwrap_err();
        assert!(
            err.to_string().contains("at most 2147483647 options"),
            "{err}"
        );
        assert!(super::count_i32("headers", usize::MAX).is_err());
    }
}
