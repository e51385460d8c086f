//! Events: a record is an operation of its stream; a wait binds to the record current when the wait is
//! queued (a later re-record does not change it), as HIP does.

use crate::clock::Clock;
use crate::state::{EventState, Record};
use crate::streams::{self, host_join, lock, rt, wait_done, Rt};
use crate::{Status, INVALID_HANDLE, INVALID_VALUE, NOT_READY, SUCCESS};
use hip_sys as sys;
use std::sync::Arc;

/// `HIP_RS_SHADOW_DROP_WAITS=N`: the Nth hipStreamWaitEvent (from 1) does nothing.
fn dropped(n: usize) -> bool {
    std::env::var("HIP_RS_SHADOW_DROP_WAITS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        == Some(n)
}

#[no_mangle]
pub unsafe extern "C" fn hipEventCreateWithFlags(e: *mut sys::hipEvent_t, flags: u32) -> Status {
    if e.is_null() {
        return INVALID_VALUE;
    }
    let h = streams::new_handle();
    let mut g = lock();
    rt(&mut g).events.insert(
        h,
        EventState {
            flags,
            record: None,
            captured: None,
        },
    );
    *e = h as sys::hipEvent_t;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipEventCreate(e: *mut sys::hipEvent_t) -> Status {
    hipEventCreateWithFlags(e, 0)
}

#[no_mangle]
pub unsafe extern "C" fn hipEventDestroy(e: sys::hipEvent_t) -> Status {
    // An interprocess event opened here too (`hipIpcOpenEventHandle`) lives until the last destroy.
    if crate::ipc::event_still_held(e as usize) {
        return SUCCESS;
    }
    let mut g = lock();
    match rt(&mut g).events.remove(&(e as usize)) {
        Some(_) => SUCCESS,
        None => INVALID_HANDLE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipEventRecord(e: sys::hipEvent_t, s: sys::hipStream_t) -> Status {
    let r = record(e as usize, streams::key(s as usize));
    streams::host_delay();
    r
}

fn record(e: usize, sid: usize) -> Status {
    let mut g = lock();
    let rt = rt(&mut g);
    if !rt.events.contains_key(&e) || !rt.streams.contains_key(&sid) {
        return INVALID_HANDLE;
    }
    if let Some(cap) = rt.streams[&sid].capture.clone() {
        rt.events.get_mut(&e).unwrap().captured = Some(cap);
        return SUCCESS;
    }
    let (act, time) = streams::stamp();
    let (seq, clock) = streams::push(
        rt,
        sid,
        "hipEventRecord",
        Vec::new(),
        &Clock::default(),
        act,
    );
    let ev = rt.events.get_mut(&e).unwrap();
    ev.captured = None;
    ev.record = Some(Record {
        stream: sid,
        seq,
        clock,
        time,
    });
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamWaitEvent(
    s: sys::hipStream_t,
    e: sys::hipEvent_t,
    _flags: u32,
) -> Status {
    let r = wait_event(streams::key(s as usize), e as usize);
    streams::host_delay();
    r
}

fn wait_event(sid: usize, e: usize) -> Status {
    let mut g = lock();
    let rt = rt(&mut g);
    let Some(ev) = rt.events.get(&e) else {
        return INVALID_HANDLE;
    };
    if !rt.streams.contains_key(&sid) {
        return INVALID_HANDLE;
    }
    rt.waits += 1;
    if dropped(rt.waits) {
        eprintln!(
            "hip-rs shadow: mutation: hipStreamWaitEvent number {} dropped",
            rt.waits
        );
        return SUCCESS;
    }
    if let Some(cap) = ev.captured.clone() {
        crate::graph::join_capture(rt, sid, &cap);
        return SUCCESS;
    }
    let Some(rec) = ev.record.clone() else {
        return SUCCESS; // never recorded: HIP waits for nothing
    };
    if rt.streams[&sid].capture.is_some() {
        // An event recorded outside the capture: the graph does not wait for it.
        return SUCCESS;
    }
    let mut known = rt.streams[&sid].clock.clone();
    known.join(&streams::host_peek(rt));
    if rec.clock.le(&known) {
        rt.redundant_waits += 1;
    }
    let noop: streams::Action = Arc::new(|_: &Clock, _: &Arc<str>| {});
    let deps = vec![(rec.stream, rec.seq)];
    streams::push(rt, sid, "hipStreamWaitEvent", deps, &rec.clock, noop);
    SUCCESS
}

fn record_of(rt: &Rt, e: usize) -> Result<Option<Record>, Status> {
    rt.events
        .get(&e)
        .map(|ev| ev.record.clone())
        .ok_or(INVALID_HANDLE)
}

#[no_mangle]
pub unsafe extern "C" fn hipEventSynchronize(e: sys::hipEvent_t) -> Status {
    let mut g = lock();
    let rec = match record_of(rt(&mut g), e as usize) {
        Ok(Some(r)) => r,
        Ok(None) => return SUCCESS,
        Err(s) => return s,
    };
    let mut g = wait_done(g, rec.stream, rec.seq);
    if let Some(code) = crate::streams::failed_before(rt(&mut g), rec.stream, rec.seq) {
        return code;
    }
    host_join(rt(&mut g), &rec.clock);
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipEventQuery(e: sys::hipEvent_t) -> Status {
    let mut g = lock();
    let rt = rt(&mut g);
    let rec = match record_of(rt, e as usize) {
        Ok(Some(r)) => r,
        Ok(None) => return SUCCESS,
        Err(s) => return s,
    };
    if let Some(code) = crate::streams::failed_before(rt, rec.stream, rec.seq) {
        return code;
    }
    if rt
        .streams
        .get(&rec.stream)
        .is_some_and(|s| s.done < rec.seq)
    {
        return NOT_READY;
    }
    host_join(rt, &rec.clock);
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipEventElapsedTime(
    ms: *mut f32,
    start: sys::hipEvent_t,
    stop: sys::hipEvent_t,
) -> Status {
    if ms.is_null() {
        return INVALID_VALUE;
    }
    let mut g = lock();
    let rt = rt(&mut g);
    let (Some(a), Some(b)) = (
        rt.events.get(&(start as usize)),
        rt.events.get(&(stop as usize)),
    ) else {
        return INVALID_HANDLE;
    };
    if (a.flags | b.flags) & sys::hipEventDisableTiming != 0 {
        return INVALID_HANDLE;
    }
    let (Some(ra), Some(rb)) = (&a.record, &b.record) else {
        return INVALID_HANDLE;
    };
    let (ta, tb) = (*ra.time.lock().unwrap(), *rb.time.lock().unwrap());
    match (ta, tb) {
        (Some(x), Some(y)) => {
            let d = if y >= x {
                (y - x).as_secs_f32()
            } else {
                -(x - y).as_secs_f32()
            };
            *ms = d * 1000.0;
            SUCCESS
        }
        _ => NOT_READY,
    }
}
