//! Interprocess handles (`hipIpc*`) within one process: the test's "processes" are threads (or the same
//! thread) sharing the shadow. A memory handle names a live `hipMalloc` block (base, length, a tag);
//! opening it maps the very same bytes (the address is the exporter's), counted until closed. An event
//! handle names an interprocess event; opening it gives the same event, which then lives until the
//! exporter and every opener destroyed it. Closing is logged as a read of the whole block from the host's
//! clock, a last read through the mapping (the shadow cannot tell the mapping's uses from the exporter's:
//! the address is the same): a close while queued work still writes the memory is reported, so a close
//! must be ordered after the exporter's writes as a read would be.

use crate::detector::Kind;
use crate::memory::{self, find, MemKind};
use crate::streams::{host_now, lock, rt};
use crate::{Status, INVALID_HANDLE, INVALID_VALUE, SUCCESS};
use hip_sys as sys;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

const MEM_TAG: u64 = 0x5348_4950_4d45_4d31; // "SHIPMEM1"
const EVENT_TAG: u64 = 0x5348_4950_4556_5431; // "SHIPEVT1"

/// Opened memory (base -> opens not yet closed) and opened events (handle -> opens not yet destroyed).
static OPEN_MEM: Mutex<Option<HashMap<usize, usize>>> = Mutex::new(None);
static OPEN_EVENTS: Mutex<Option<HashMap<usize, usize>>> = Mutex::new(None);

fn with<R>(
    m: &Mutex<Option<HashMap<usize, usize>>>,
    f: impl FnOnce(&mut HashMap<usize, usize>) -> R,
) -> R {
    let mut g = m.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(HashMap::new))
}

fn put(bytes: &mut [std::ffi::c_char; 64], words: [u64; 3]) {
    for (i, w) in words.iter().enumerate() {
        for (j, b) in w.to_le_bytes().iter().enumerate() {
            bytes[i * 8 + j] = *b as std::ffi::c_char;
        }
    }
}

fn get(bytes: &[std::ffi::c_char; 64]) -> [u64; 3] {
    let mut out = [0u64; 3];
    for (i, w) in out.iter_mut().enumerate() {
        let mut b = [0u8; 8];
        for (j, x) in b.iter_mut().enumerate() {
            *x = bytes[i * 8 + j] as u8;
        }
        *w = u64::from_le_bytes(b);
    }
    out
}

#[no_mangle]
pub unsafe extern "C" fn hipIpcGetMemHandle(
    h: *mut sys::hipIpcMemHandle_t,
    p: *mut c_void,
) -> Status {
    if h.is_null() {
        return INVALID_VALUE;
    }
    match find(p as usize) {
        Some((base, len, MemKind::Device, _))
            if base == p as usize && memory::live_block(base).is_some() =>
        {
            put(&mut (*h).reserved, [MEM_TAG, base as u64, len as u64]);
            SUCCESS
        }
        _ => INVALID_VALUE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipIpcOpenMemHandle(
    p: *mut *mut c_void,
    h: sys::hipIpcMemHandle_t,
    _flags: u32,
) -> Status {
    if p.is_null() {
        return INVALID_VALUE;
    }
    let [tag, base, len] = get(&h.reserved);
    let base = base as usize;
    if tag != MEM_TAG {
        return INVALID_VALUE;
    }
    // Memory freed since the export (or reused for another allocation) is refused.
    match find(base) {
        Some((b, l, MemKind::Device, _))
            if b == base && l as u64 == len && memory::live_block(base).is_some() => {}
        _ => return INVALID_VALUE,
    }
    with(&OPEN_MEM, |m| *m.entry(base).or_default() += 1);
    *p = base as *mut c_void;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipIpcCloseMemHandle(p: *mut c_void) -> Status {
    let base = p as usize;
    let opened = with(&OPEN_MEM, |m| match m.get_mut(&base) {
        Some(n) if *n > 1 => {
            *n -= 1;
            true
        }
        Some(_) => {
            m.remove(&base);
            true
        }
        None => false,
    });
    if !opened {
        return INVALID_VALUE;
    }
    let mut g = lock();
    let rt = rt(&mut g);
    let (c, name) = host_now(rt);
    let what: Arc<str> = format!("hipIpcCloseMemHandle by {name}").into();
    if let Some((_, len, _, _)) = find(base) {
        memory::log(base, len, Kind::Read, &c, &what);
    }
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipIpcGetEventHandle(
    h: *mut sys::hipIpcEventHandle_t,
    e: sys::hipEvent_t,
) -> Status {
    if h.is_null() {
        return INVALID_VALUE;
    }
    let mut g = lock();
    match rt(&mut g).events.get(&(e as usize)) {
        None => INVALID_HANDLE,
        Some(ev) if ev.flags & sys::hipEventInterprocess == 0 => INVALID_VALUE,
        Some(_) => {
            put(&mut (*h).reserved, [EVENT_TAG, e as u64, 0]);
            SUCCESS
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipIpcOpenEventHandle(
    e: *mut sys::hipEvent_t,
    h: sys::hipIpcEventHandle_t,
) -> Status {
    if e.is_null() {
        return INVALID_VALUE;
    }
    let [tag, ev, _] = get(&h.reserved);
    if tag != EVENT_TAG {
        return INVALID_VALUE;
    }
    let mut g = lock();
    match rt(&mut g).events.get(&(ev as usize)) {
        Some(st) if st.flags & sys::hipEventInterprocess != 0 => {}
        _ => return INVALID_HANDLE,
    }
    with(&OPEN_EVENTS, |m| *m.entry(ev as usize).or_default() += 1);
    *e = ev as usize as sys::hipEvent_t;
    SUCCESS
}

/// For `hipEventDestroy`: `true` if `e` is still held by another opener or the exporter (one reference
/// is dropped and the event stays); `false` if this destroy is the last.
pub fn event_still_held(e: usize) -> bool {
    with(&OPEN_EVENTS, |m| match m.get_mut(&e) {
        Some(n) if *n > 1 => {
            *n -= 1;
            true
        }
        Some(_) => {
            m.remove(&e);
            true
        }
        None => false,
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemGetAddressRange(
    base: *mut sys::hipDeviceptr_t,
    size: *mut usize,
    p: sys::hipDeviceptr_t,
) -> Status {
    match memory::live_block(p as usize) {
        Some((b, len)) => {
            if !base.is_null() {
                *base = b as sys::hipDeviceptr_t;
            }
            if !size.is_null() {
                *size = len;
            }
            SUCCESS
        }
        None => INVALID_VALUE,
    }
}
