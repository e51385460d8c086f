//! The plain records the runtime's parts share, below all of them (no import of the others): the devices
//! (how many, the calling thread's current one), an event's last record, a stream's part in a capture.

use crate::clock::Clock;
use std::cell::Cell;
use std::ffi::c_int;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// How many devices the shadow has.
pub fn count() -> c_int {
    match std::env::var("HIP_RS_SHADOW_DEVICES").as_deref() {
        Ok("2") => 2,
        _ => 1,
    }
}

thread_local! {
    static CURRENT: Cell<c_int> = const { Cell::new(0) };
}

/// The calling thread's current device.
pub fn current() -> c_int {
    CURRENT.with(|c| c.get())
}

/// Make `d` the calling thread's current device.
pub fn set_current(d: c_int) {
    CURRENT.with(|c| c.set(d));
}

/// A stream's part in a capture: the graph and the nodes its next operation depends on.
#[derive(Clone, Debug)]
pub struct Capture {
    pub graph: usize,
    pub frontier: Vec<usize>,
}

#[derive(Clone)]
pub struct Record {
    pub stream: usize,
    pub seq: u64,
    pub clock: Clock,
    pub time: Arc<Mutex<Option<Instant>>>,
}

pub struct EventState {
    pub flags: u32,
    pub record: Option<Record>,
    /// Recorded on a capturing stream: the capture and the nodes a wait on it depends on.
    pub captured: Option<Capture>,
}
