//! What only the shadow exports: declared host accesses and the detector's reports.

use crate::detector::{self, Kind};
use crate::memory;
use crate::streams::{self, lock, rt};
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

/// Let every stream run what is queued now (accesses are logged when they run), without ordering the
/// caller after it.
fn drain() {
    let mut g = lock();
    let rt = rt(&mut g);
    let all: Vec<_> = streams::snapshot(rt, None, false)
        .into_iter()
        .filter(|(id, _, _)| rt.streams.get(id).is_none_or(|s| s.failed.is_none()))
        .collect();
    for (id, seq, _) in all {
        g = streams::wait_done(g, id, seq);
    }
}

/// How many races the detector reported so far, once every queued operation has run.
#[no_mangle]
pub extern "C" fn hip_rs_shadow_reports() -> usize {
    drain();
    detector::reports()
}

/// The reports kept (one a line), NUL-terminated and cut to `len` bytes; returns the full length.
#[no_mangle]
pub unsafe extern "C" fn hip_rs_shadow_report_text(buf: *mut c_char, len: usize) -> usize {
    drain();
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

/// How many hipStreamWaitEvent calls the shadow has seen (the numbering `HIP_RS_SHADOW_DROP_WAITS` uses).
#[no_mangle]
pub extern "C" fn hip_rs_shadow_waits() -> usize {
    let mut g = lock();
    rt(&mut g).waits
}

/// How many of those waits ordered nothing new: their record was already ordered before the waiting
/// stream's next operation (over-waiting; it costs time, not correctness).
#[no_mangle]
pub extern "C" fn hip_rs_shadow_redundant_waits() -> usize {
    let mut g = lock();
    rt(&mut g).redundant_waits
}

/// Stop stream `s` as a device fault would: what is queued on it (and later) never runs, and
/// `hipStreamQuery` answers `code` (the test of a future on a failed stream). Answers whether `s` is a
/// stream.
#[no_mangle]
pub extern "C" fn hip_rs_shadow_fail_stream(s: *mut c_void, code: crate::Status) -> bool {
    let mut g = lock();
    let rt = rt(&mut g);
    match rt.streams.get_mut(&streams::key(s as usize)) {
        Some(st) => {
            st.failed = Some(code);
            true
        }
        None => false,
    }
}

/// How many `hipHostRegister` calls succeeded so far.
#[no_mangle]
pub extern "C" fn hip_rs_shadow_registrations() -> usize {
    crate::memory_api::REGISTRATIONS.load(std::sync::atomic::Ordering::Relaxed)
}
