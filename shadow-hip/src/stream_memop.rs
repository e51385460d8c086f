//! Stream memory operations: `hipStreamWriteValue32/64` write a word when their stream runs them;
//! `hipStreamWaitValue32/64` hold their stream until the word compares as asked. For the detector a wait
//! is ordered after the first write to the same address already queued whose value satisfies it (what
//! releases it when writes only grow, as the `hip` crate's flags do); both are logged as reads of the
//! word: a flag's accesses synchronize and do not race with each other, but a free under a queued one is
//! reported. A write that ran is known to every host thread from then on (host reads of the word are
//! plain loads the shadow does not see: see `write`).

use crate::clock::Clock;
use crate::detector::Kind;
use crate::memory::{self, MemKind};
use crate::streams::{self, lock, rt, Action};
use crate::{Status, INVALID_HANDLE, INVALID_VALUE, SUCCESS};
use hip_sys as sys;
use std::ffi::c_void;
use std::sync::Arc;

const GTE: u32 = sys::hipStreamWaitValueGte;
const EQ: u32 = sys::hipStreamWaitValueEq;
const AND: u32 = sys::hipStreamWaitValueAnd;
const NOR: u32 = sys::hipStreamWaitValueNor;

fn satisfied(word: u64, value: u64, flags: u32, mask: u64) -> bool {
    let w = word & mask;
    match flags {
        GTE => w >= value,
        EQ => w == value,
        AND => (w & value) != 0,
        NOR => !(w | (value & mask)) != 0,
        _ => false,
    }
}

unsafe fn read(addr: usize, size: usize) -> u64 {
    if size == 8 {
        std::ptr::read_volatile(addr as *const u64)
    } else {
        u64::from(std::ptr::read_volatile(addr as *const u32))
    }
}

fn write(s: sys::hipStream_t, ptr: *mut c_void, value: u64, size: usize, call: &str) -> Status {
    let (sid, addr) = (streams::key(s as usize), ptr as usize);
    if addr == 0 || addr % size != 0 || memory::live_block(addr).is_none() {
        return INVALID_VALUE;
    }
    let mut g = lock();
    let rt = rt(&mut g);
    match rt.streams.get(&sid) {
        None => return INVALID_HANDLE,
        Some(st) if st.capture.is_some() => return sys::hipErrorStreamCaptureUnsupported,
        Some(_) => {}
    }
    let act: Action = Arc::new(move |c: &Clock, w: &Arc<str>| {
        memory::log(addr, size, Kind::Read, c, w);
        // A host thread that reads the word (the `hip` crate's future reactor, a flag's `value`) learns
        // that the stream's work before the write is done (the write follows a memory barrier): plain
        // host reads the shadow does not see, so, as for a completed host function, every host thread
        // knows it from here. Joined before the word changes, so no reader sees the value first.
        let mut g = lock();
        streams::rt(&mut g).released.join(c);
        drop(g);
        // SAFETY: a live shadow allocation, aligned (checked when queued; a free before this runs is
        // reported by the detector).
        unsafe {
            if size == 8 {
                std::ptr::write_volatile(addr as *mut u64, value)
            } else {
                std::ptr::write_volatile(addr as *mut u32, value as u32)
            }
        }
    });
    let (_, clock) = streams::push(rt, sid, call, Vec::new(), &Clock::default(), act);
    rt.value_writes
        .entry(addr)
        .or_default()
        .push((value, clock));
    SUCCESS
}

fn wait(
    s: sys::hipStream_t,
    ptr: *mut c_void,
    value: u64,
    flags: u32,
    mask: u64,
    size: usize,
    call: &str,
) -> Status {
    let (sid, addr) = (streams::key(s as usize), ptr as usize);
    if addr == 0 || addr % size != 0 || memory::live_block(addr).is_none() || flags > NOR {
        return INVALID_VALUE;
    }
    let mut g = lock();
    let rt = rt(&mut g);
    match rt.streams.get(&sid) {
        None => return INVALID_HANDLE,
        Some(st) if st.capture.is_some() => return sys::hipErrorStreamCaptureUnsupported,
        Some(_) => {}
    }
    // The first queued write that satisfies the wait releases it (writes that only grow). The mutation
    // `HIP_RS_SHADOW_DROP_VALUE_ORDER=1` forgets that order (the wait still holds the stream): the
    // detector must then report what only the flag ordered.
    let extra = if std::env::var("HIP_RS_SHADOW_DROP_VALUE_ORDER").is_ok_and(|v| v == "1") {
        Clock::default()
    } else {
        rt.value_writes
            .get(&addr)
            .and_then(|ws| ws.iter().find(|(v, _)| satisfied(*v, value, flags, mask)))
            .map(|(_, c)| c.clone())
            .unwrap_or_default()
    };
    let act: Action = Arc::new(move |c: &Clock, w: &Arc<str>| {
        let mut g = lock();
        // SAFETY: as in `write`.
        while !satisfied(unsafe { read(addr, size) }, value, flags, mask) {
            g = streams::wait(g);
        }
        drop(g);
        memory::log(addr, size, Kind::Read, c, w);
    });
    streams::push(rt, sid, call, Vec::new(), &extra, act);
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamWriteValue64(
    s: sys::hipStream_t,
    ptr: *mut c_void,
    value: u64,
    _flags: u32,
) -> Status {
    write(s, ptr, value, 8, "hipStreamWriteValue64")
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamWriteValue32(
    s: sys::hipStream_t,
    ptr: *mut c_void,
    value: u32,
    _flags: u32,
) -> Status {
    write(s, ptr, u64::from(value), 4, "hipStreamWriteValue32")
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamWaitValue64(
    s: sys::hipStream_t,
    ptr: *mut c_void,
    value: u64,
    flags: u32,
    mask: u64,
) -> Status {
    wait(s, ptr, value, flags, mask, 8, "hipStreamWaitValue64")
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamWaitValue32(
    s: sys::hipStream_t,
    ptr: *mut c_void,
    value: u32,
    flags: u32,
    mask: u32,
) -> Status {
    wait(
        s,
        ptr,
        u64::from(value),
        flags,
        u64::from(mask),
        4,
        "hipStreamWaitValue32",
    )
}

/// Pinned memory is mapped at the same address.
#[no_mangle]
pub unsafe extern "C" fn hipHostGetDevicePointer(
    d: *mut *mut c_void,
    host: *mut c_void,
    _flags: u32,
) -> Status {
    match memory::find(host as usize) {
        Some((_, _, MemKind::Pinned, _)) if !d.is_null() => {
            *d = host;
            SUCCESS
        }
        _ => INVALID_VALUE,
    }
}
