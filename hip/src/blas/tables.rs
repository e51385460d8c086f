//! The device pointer tables of [`Handle::gemm_batched`](super::Handle::gemm_batched): hipBLAS reads the
//! addresses of each product's A, B and C from three arrays in device memory.
//!
//! A call writes its table into pinned host memory and queues the upload on the handle's stream
//! (`hipMemcpyAsync`) ahead of the GEMM, so it returns at once and can be captured: nothing on the way
//! waits for the device. Each table (pinned memory, device memory, an event) belongs to the handle's
//! [`Cache`] and is used again only once the event recorded after its last call reports that call done:
//! a table queued work still reads is never rewritten or freed. In a capture nothing is recorded; the
//! table leaves the cache for the graph, which keeps it (the capture's `kept`) until its last launch is
//! done, and every replay uploads the same addresses again before its GEMM.
//!
//! Taking a table may allocate or query an event, which CUDA refuses while a capture in global or
//! thread-local mode is under way: the handle's thread switches to relaxed mode for those calls
//! ([`RelaxedCaptureMode`]), as libraries do for their own bookkeeping.
//!
//! The cache keeps at most [`MAX_TABLES`] tables; with that many calls still queued, the next waits on
//! the host for the oldest. A free table too small for a call is kept aside (freeing would synchronize
//! the device) and replaced by one at least twice its size; everything is freed with the handle.

use crate::device::Device;
use crate::error::Result;
use crate::result;
use hip_sys as sys;
use std::collections::VecDeque;
use std::ffi::c_void;

/// Tables a handle keeps: with this many of its `gemm_batched` calls still queued, the next one waits
/// on the host for the oldest.
pub(crate) const MAX_TABLES: usize = 16;

/// The smallest table, in pointers (4 KiB: one page of pinned memory).
const MIN_POINTERS: usize = 512;

/// What the cache needs of a table (a stand-in in the unit tests).
pub(super) trait Slot {
    /// Room, in pointers.
    fn capacity(&self) -> usize;
    /// Whether the work that last used the table is done (a table never used is), without blocking.
    fn is_free(&mut self) -> Result<bool>;
    /// Block until the work that last used the table is done.
    fn wait(&mut self) -> Result<()>;
}

/// A handle's tables: free or in use by queued work, oldest use first, and the ones set aside.
pub(super) struct Cache<S> {
    slots: VecDeque<S>,
    /// Too small, or last used by work no event covers: freed only when the cache is dropped.
    retired: Vec<S>,
}

impl<S> Default for Cache<S> {
    fn default() -> Self {
        Cache {
            slots: VecDeque::new(),
            retired: Vec::new(),
        }
    }
}

impl<S: Slot> Cache<S> {
    /// A table of at least `need` pointers that no queued work uses: the oldest free one with room;
    /// else a new one from `make` (which gets the capacity), replacing a free one too small; else, with
    /// [`MAX_TABLES`] in use, the oldest once its work is done. On an error the cache is as it was.
    pub(super) fn take(&mut self, need: usize, make: impl FnOnce(usize) -> Result<S>) -> Result<S> {
        let mut small = None;
        for i in 0..self.slots.len() {
            if self.slots[i].is_free()? {
                if self.slots[i].capacity() >= need {
                    return Ok(self.slots.remove(i).expect("index in range"));
                }
                small.get_or_insert(i);
            }
        }
        if let Some(i) = small {
            return self.replace(i, need, make);
        }
        if self.slots.len() < MAX_TABLES {
            return make(grown(need, 0));
        }
        self.slots[0].wait()?;
        if self.slots[0].capacity() >= need {
            return Ok(self.slots.pop_front().expect("MAX_TABLES > 0"));
        }
        self.replace(0, need, make)
    }

    /// A new table for `need` pointers in place of the free one at `i`, which is set aside.
    fn replace(
        &mut self,
        i: usize,
        need: usize,
        make: impl FnOnce(usize) -> Result<S>,
    ) -> Result<S> {
        let new = make(grown(need, self.slots[i].capacity()))?;
        let old = self.slots.remove(i).expect("index in range");
        self.retired.push(old);
        Ok(new)
    }

    /// Give back a table whose last use an event now covers (or that was not used).
    pub(super) fn put(&mut self, table: S) {
        self.slots.push_back(table);
    }

    /// Keep a table whose last use no event covers: never used again, freed with the cache.
    pub(super) fn retire(&mut self, table: S) {
        self.retired.push(table);
    }

    #[cfg(test)]
    fn counts(&self) -> (usize, usize) {
        (self.slots.len(), self.retired.len())
    }
}

/// The capacity of a new table for `need` pointers replacing one of `old`: at least twice as large, so
/// the tables set aside add up to less than the one in use.
fn grown(need: usize, old: usize) -> usize {
    need.max(old.saturating_mul(2)).max(MIN_POINTERS)
}

/// Whether work may still use a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Use {
    /// Never used, or its last use is known done.
    Idle,
    /// `event` was recorded after the last use.
    Recorded,
    /// Work may use it and no event covers it (recording failed): it is retired, and its drop waits
    /// for the whole device.
    Unknown,
}

/// One table: `capacity` pointers in pinned host memory (written by the host) and in device memory (read
/// by hipBLAS), on one device, with the event recorded after the last call that used them.
pub(super) struct Table {
    host: *mut usize,
    device_mem: *mut c_void,
    capacity: usize,
    event: sys::hipEvent_t,
    state: Use,
    device: Device,
}

// SAFETY: the table owns its pinned memory, device memory and event (handles HIP accepts from any
// thread); the host memory is written only through `&mut Table` (`write`), so moving the table moves
// that right.
unsafe impl Send for Table {}
// SAFETY: `&Table` reads only plain fields (`device_ptr`, `host_ptr`, `bytes`); nothing is written through
// it.
unsafe impl Sync for Table {}

impl Table {
    /// A table of `capacity` pointers on `device`, which is current.
    pub(super) fn new(device: &Device, capacity: usize) -> Result<Table> {
        let bytes = capacity * std::mem::size_of::<usize>();
        let event = result::event_create(sys::hipEventDisableTiming)?;
        let mut t = Table {
            host: std::ptr::null_mut(),
            device_mem: std::ptr::null_mut(),
            capacity,
            event,
            state: Use::Idle,
            device: device.clone(),
        };
        // Each piece is in `t` as soon as it exists: a failure below frees what was made (nothing uses it).
        t.host = result::host_malloc(bytes, sys::hipHostMallocDefault)?.cast();
        t.device_mem = result::malloc(bytes)?;
        Ok(t)
    }

    /// Write `len` addresses from `addrs` (the three arrays, one after the other) into the host side. The
    /// table is free (taken from the cache) and holds at least `len` pointers.
    pub(super) fn write(&mut self, len: usize, addrs: impl Iterator<Item = usize>) {
        assert!(len <= self.capacity, "a table too small was taken");
        // SAFETY: `host` is this table's pinned allocation of `capacity >= len` pointers, aligned for usize
        // (the runtime's allocations are page-aligned) and written only here, through `&mut self`; no
        // queued work reads it (a table in the cache is taken only once its last use is done, and a table
        // a graph keeps is never taken again).
        let host = unsafe { std::slice::from_raw_parts_mut(self.host, len) };
        for (slot, addr) in host.iter_mut().zip(addrs) {
            *slot = addr;
        }
    }

    /// The device address of array `i` (0, 1, 2) of a table written for `count` products.
    pub(super) fn array(&self, i: usize, count: usize) -> *mut c_void {
        self.device_mem
            .cast::<usize>()
            .wrapping_add(i * count)
            .cast()
    }

    /// Queue the upload of the first `len` pointers on `stream` (live, on the table's device, which is
    /// current).
    pub(super) fn upload(&self, len: usize, stream: sys::hipStream_t) -> Result<()> {
        assert!(len <= self.capacity, "a table too small was taken");
        let bytes = len * std::mem::size_of::<usize>();
        // SAFETY: both allocations hold `capacity >= len` pointers (checked) and live until
        // the table drops, which waits for the work that last used them: the caller records the table's
        // event after this upload and the call reading the device copy (or a graph keeps the table); the
        // host side is pinned, so the copy is queued, not staged, and is not written again before the
        // event says this copy is done.
        unsafe {
            result::memcpy_async(
                self.device_mem,
                self.host.cast_const().cast(),
                bytes,
                sys::hipMemcpyHostToDevice,
                stream,
            )
        }
    }

    /// Record that work queued on `stream` (live, on the table's device) so far used the table. `false`
    /// if the event could not be recorded: the table must then be retired.
    pub(super) fn record(&mut self, stream: sys::hipStream_t) -> bool {
        // SAFETY: the table's event (live until drop) and a live stream of its device, which is current.
        let recorded = unsafe { result::event_record(self.event, stream) }.is_ok();
        self.state = if recorded {
            Use::Recorded
        } else {
            Use::Unknown
        };
        recorded
    }

    /// Free everything once no work uses it; leak it if that cannot be known.
    fn release(&mut self) {
        let done = match self.state {
            Use::Idle => true,
            // SAFETY: the table's live event.
            Use::Recorded => unsafe { result::event_synchronize(self.event) }.is_ok(),
            Use::Unknown => self
                .device
                .bind()
                .and_then(|()| result::device_synchronize())
                .is_ok(),
        };
        let bound = self.device.bind().is_ok();
        // SAFETY: the table's event, destroyed once, here; HIP allows destroying an event waits may still
        // be queued on.
        let _ = unsafe { result::event_destroy(self.event) };
        if !(done && bound) {
            return; // never free memory work may still use: leak it
        }
        if !self.host.is_null() {
            // SAFETY: from hipHostMalloc, freed once, here; the work that used it is done (above).
            let _ = unsafe { result::host_free(self.host.cast()) };
        }
        if !self.device_mem.is_null() {
            // SAFETY: from hipMalloc, freed once, here; the work that used it is done (above).
            let _ = unsafe { result::free(self.device_mem) };
        }
    }
}

impl Slot for Table {
    fn capacity(&self) -> usize {
        self.capacity
    }

    fn is_free(&mut self) -> Result<bool> {
        if self.state == Use::Recorded {
            // SAFETY: the table's live event.
            if unsafe { result::event_query(self.event) }? {
                self.state = Use::Idle;
            }
        }
        Ok(self.state == Use::Idle)
    }

    fn wait(&mut self) -> Result<()> {
        if self.state == Use::Recorded {
            // SAFETY: the table's live event.
            unsafe { result::event_synchronize(self.event) }?;
            self.state = Use::Idle;
        }
        Ok(())
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        if crate::host_fn::in_host_fn() {
            // Waiting and freeing call HIP, which a host function must not: the releasing thread does it.
            let moved = Table {
                host: std::mem::replace(&mut self.host, std::ptr::null_mut()),
                device_mem: std::mem::replace(&mut self.device_mem, std::ptr::null_mut()),
                capacity: self.capacity,
                event: self.event,
                state: self.state,
                device: self.device.clone(),
            };
            self.event = std::ptr::null_mut();
            // Dropped there, outside any host function: its own drop releases it, once.
            crate::host_fn::defer(Box::new(move || drop(moved)));
            return;
        }
        if !self.event.is_null() {
            self.release();
        }
    }
}

/// While it lives the calling thread is in relaxed capture mode (`hipThreadExchangeStreamCaptureMode`):
/// it may allocate and query events while a capture (its own or, in global mode, another thread's) is
/// under way. The previous mode comes back on drop. Best effort: if the runtime refuses the exchange the
/// thread keeps its mode, and a call the capture refuses fails as it would have.
pub(super) struct RelaxedCaptureMode(Option<sys::hipStreamCaptureMode>);

impl RelaxedCaptureMode {
    pub(super) fn enter() -> Self {
        RelaxedCaptureMode(
            result::graph::thread_exchange_capture_mode(sys::hipStreamCaptureModeRelaxed).ok(),
        )
    }
}

impl Drop for RelaxedCaptureMode {
    fn drop(&mut self) {
        if let Some(previous) = self.0 {
            let _ = result::graph::thread_exchange_capture_mode(previous);
        }
    }
}

#[cfg(test)]
#[path = "tables_tests.rs"]
mod tests;
