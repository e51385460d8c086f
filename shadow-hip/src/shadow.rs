//! What only the shadow exports: declared host accesses and the detector's reports.

use crate::detector::{self, Kind};
use crate::memory;
use crate::streams::{lock, rt};
use std::ffi::{c_char, c_void};

/// A host access the caller makes now through a slice the `hip` crate handed out (e.g.
/// `PinnedBuffer::as_slice`): `[ptr, ptr + len)`, a write if `write`.
#[no_mangle]
pub unsafe extern "C" fn hip_rs_shadow_host_access(ptr: *const c_void, len: usize, write: bool) {
    let mut g = lock();
    let rt = rt(&mut g);
    let kind = if write { Kind::Write } else { Kind::Read };
    memory::host_access(rt, ptr as usize, len, kind, "a declared host access");
}

/// How many races the detector reported so far.
#[no_mangle]
pub extern "C" fn hip_rs_shadow_reports() -> usize {
    detector::reports()
}

/// The reports kept (one a line), NUL-terminated and cut to `len` bytes; returns the full length.
#[no_mangle]
pub unsafe extern "C" fn hip_rs_shadow_report_text(buf: *mut c_char, len: usize) -> usize {
    let text = detector::report_text();
    if !buf.is_null() && len > 0 {
        let n = text.len().min(len - 1);
        std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast(), n);
        *buf.add(n) = 0;
    }
    text.len()
}

/// Forget every logged access and report.
#[no_mangle]
pub extern "C" fn hip_rs_shadow_reset() {
    detector::reset();
}
