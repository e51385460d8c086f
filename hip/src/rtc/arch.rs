//! Checking a target architecture before HIPRTC sees it.
//!
//! HIPRTC 5.2.3 corrupts its heap and aborts (`munmap_chunk(): invalid pointer`) when given a processor it
//! does not know (`--gpu-architecture=gfx999`, `sm_90`, an empty name, an unknown feature). So on AMD every
//! requested architecture is checked against the list of the code object manager (comgr) that HIPRTC
//! compiles with, which is the exact list this installation supports.

#[cfg(hip_platform = "amd")]
use crate::error::Error;
use crate::error::Result;
use std::sync::OnceLock;

/// Refuse an architecture this HIPRTC would crash on.
#[cfg(hip_platform = "amd")]
pub(crate) fn check(arch: &str) -> Result<()> {
    let Some(known) = comgr_processors() else {
        return Ok(()); // comgr is not loadable: HIPRTC cannot compile either and will say so itself
    };
    let mut parts = arch.split(':');
    let processor = parts.next().unwrap_or_default();
    let features_ok = parts.all(|f| matches!(f, "sramecc+" | "sramecc-" | "xnack+" | "xnack-"));
    if features_ok && known.iter().any(|k| k == processor) {
        return Ok(());
    }
    Err(Error::UnknownArch {
        arch: arch.to_string(),
        known: known.join(", "),
    })
}

/// NVRTC rejects unknown architectures with an error of its own.
#[cfg(hip_platform = "nvidia")]
pub(crate) fn check(_arch: &str) -> Result<()> {
    Ok(())
}

/// The processors comgr knows (`gfx90a`, ...), read once through `amd_comgr_get_isa_name`.
#[cfg(hip_platform = "amd")]
fn comgr_processors() -> Option<&'static Vec<String>> {
    static LIST: OnceLock<Option<Vec<String>>> = OnceLock::new();
    LIST.get_or_init(|| unsafe {
        type Count = unsafe extern "C" fn(*mut usize) -> i32;
        type Name = unsafe extern "C" fn(usize, *mut *const std::ffi::c_char) -> i32;
        let lib = [
            c"libamd_comgr.so.3",
            c"libamd_comgr.so.2",
            c"libamd_comgr.so",
        ]
        .iter()
        .map(|n| libc::dlopen(n.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL))
        .find(|h| !h.is_null())?;
        let count = libc::dlsym(lib, c"amd_comgr_get_isa_count".as_ptr());
        let name = libc::dlsym(lib, c"amd_comgr_get_isa_name".as_ptr());
        if count.is_null() || name.is_null() {
            return None;
        }
        // SAFETY: comgr's documented signatures for these two symbols.
        let count = std::mem::transmute::<*mut libc::c_void, Count>(count);
        let name = std::mem::transmute::<*mut libc::c_void, Name>(name);
        let mut n = 0;
        if count(&mut n) != 0 {
            return None;
        }
        let mut list = Vec::with_capacity(n);
        for i in 0..n {
            let mut p = std::ptr::null();
            if name(i, &mut p) != 0 || p.is_null() {
                return None;
            }
            // "amdgcn-amd-amdhsa--gfx90a" -> "gfx90a"
            let full = std::ffi::CStr::from_ptr(p).to_string_lossy();
            list.push(full.rsplit("--").next().unwrap_or(&full).to_string());
        }
        Some(list)
    })
    .as_ref()
}

#[cfg(hip_platform = "nvidia")]
#[allow(dead_code)]
fn comgr_processors() -> Option<&'static Vec<String>> {
    static LIST: OnceLock<Option<Vec<String>>> = OnceLock::new();
    LIST.get_or_init(|| None).as_ref()
}
