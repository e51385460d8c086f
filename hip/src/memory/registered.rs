//! Large pageable copies through the user's own pages: `hipHostRegister` page-locks them for the copy's
//! duration, the device copies them directly (no host copy into staging buffers), and `hipHostUnregister`
//! runs once the copy completed (its stream synchronized), so no DMA can touch pages that are pageable
//! again. Only whole pages inside the slice are registered (a page shared with neighbouring data is never
//! locked, so another thread's copy of that data is unaffected); the partial pages at either end are
//! copied with plain `hipMemcpyAsync` on the same stream. Used by the staging ring for copies of at least
//! [`StagingConfig::register_bytes`](super::staging::StagingConfig::register_bytes); a register that
//! fails (memory already registered, a platform without it, the lock limit) makes the ring stage the
//! copy as before.
//!
//! Two threads may hold shared borrows of the same host slice and copy it to the device at once: while a
//! registration is live, every other host copy that overlaps its pages waits for it to end
//! ([`wait_clear`]) rather than copy raw from pages that may become pageable mid-copy.

use super::tracking::{Access, Allocation};
use crate::error::Result;
use crate::queue::lock;
use crate::result;
use crate::stream::Stream;
use hip_sys as sys;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// The host page size (4 KiB where the system does not say).
fn page() -> usize {
    static P: OnceLock<usize> = OnceLock::new();
    *P.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        #[cfg(unix)]
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        // Windows' pages are 4 KiB on x86-64 (libc has no sysconf there).
        #[cfg(not(unix))]
        let p = 4096;
        if p > 0 {
            p as usize
        } else {
            4096
        }
    })
}

/// The whole pages inside `[start, start + len)`: `(offset of the first, bytes)`; `None` if there is none.
pub(crate) fn interior(start: usize, len: usize, page: usize) -> Option<(usize, usize)> {
    let first = start.div_ceil(page) * page;
    let end = (start + len) / page * page;
    (end > first).then(|| (first - start, end - first))
}

/// Live registrations (page ranges), and their count for a fast check.
struct Live {
    count: AtomicUsize,
    ranges: Mutex<Vec<(usize, usize)>>,
    ended: Condvar,
}

fn live() -> &'static Live {
    static L: OnceLock<Live> = OnceLock::new();
    L.get_or_init(|| Live {
        count: AtomicUsize::new(0),
        ranges: Mutex::new(Vec::new()),
        ended: Condvar::new(),
    })
}

/// Wait until no live registration overlaps `[p, p + len)` (at once when none is live).
pub(crate) fn wait_clear(p: usize, len: usize) {
    let l = live();
    if l.count.load(Ordering::Acquire) == 0 {
        return;
    }
    let mut r = lock(&l.ranges);
    while r.iter().any(|&(s, e)| s < p + len && p < e) {
        r = l.ended.wait(r).unwrap_or_else(|e| e.into_inner());
    }
}

/// A registration: unregistered (and its range forgotten) on drop, which the copy makes only after its
/// stream completed the copies using it.
struct Registered {
    start: usize,
    end: usize,
}

impl Registered {
    fn new(start: usize, len: usize) -> Result<Registered> {
        let l = live();
        {
            let mut r = lock(&l.ranges);
            r.push((start, start + len));
            l.count.fetch_add(1, Ordering::AcqRel);
        }
        let reg = Registered {
            start,
            end: start + len,
        };
        // SAFETY: `[start, start + len)` is memory the caller's borrow keeps valid until the copy returns,
        // which drops `reg` (unregistering) first.
        match unsafe {
            result::memory::host_register(start as *mut c_void, len, sys::hipHostRegisterDefault)
        } {
            Ok(()) => Ok(reg),
            Err(e) => {
                reg.forget_range();
                std::mem::forget(reg);
                Err(e)
            }
        }
    }

    fn forget_range(&self) {
        end_range(self.start, self.end);
    }
}

/// Forget the live range `[start, end)` and wake the copies waiting for it.
fn end_range(start: usize, end: usize) {
    let l = live();
    let mut r = lock(&l.ranges);
    if let Some(i) = r.iter().position(|&x| x == (start, end)) {
        r.swap_remove(i);
        l.count.fetch_sub(1, Ordering::AcqRel);
    }
    l.ended.notify_all();
}

impl Drop for Registered {
    fn drop(&mut self) {
        // SAFETY: registered in `new`; every copy using it completed (the callers synchronize their stream
        // before this drops; after a failed synchronization the context is broken and runs no more DMA).
        let _ = unsafe { result::memory::host_unregister(self.start as *mut c_void) };
        self.forget_range();
    }
}

/// Host -> device through the source's registered pages, on `stream` after the other users of `alloc`.
/// `None` when the pages cannot be registered (the caller stages the copy instead).
///
/// # Safety
/// As the staging ring's `to_device`: `dst` is device memory of `alloc` on `stream`'s device (current),
/// valid for `len` bytes; `src` is valid for reading `len` bytes and not written until this returns.
pub(crate) unsafe fn to_device(
    stream: &Stream,
    alloc: &Arc<Allocation>,
    dst: *mut c_void,
    src: *const u8,
    len: usize,
) -> Option<Result<()>> {
    let (off, n) = interior(src as usize, len, page())?;
    let reg = Registered::new(src as usize + off, n).ok()?;
    Some((|| {
        let op = stream.begin_op();
        alloc.use_on(&op, Access::Write)?;
        // Head, whole pages, tail: pieces of the copy, in order on the stream.
        for (o, k) in [(0, off), (off, n), (off + n, len - off - n)] {
            if k == 0 {
                continue;
            }
            // SAFETY: `[o, o + k)` lies inside the copy (`interior`); `dst` is valid for `len` bytes on
            // this stream's device and `src` for reading them (the caller's); the middle piece is the
            // registered pages, unregistered only after the synchronization below.
            unsafe {
                result::memcpy_async(
                    (dst as *mut u8).add(o).cast(),
                    src.add(o).cast(),
                    k,
                    sys::hipMemcpyHostToDevice,
                    stream.raw(),
                )
            }?;
        }
        let done = stream.synchronize();
        drop(reg);
        done?;
        op.completed();
        Ok(())
    })())
}

/// Device -> host into the destination's registered pages, on `stream` after the writers of `alloc`.
/// `None` when the pages cannot be registered.
///
/// # Safety
/// As the staging ring's `to_host`: `src` is device memory of `alloc` on `stream`'s device (current),
/// valid for `len` bytes; `dst` is valid for writing `len` bytes, used by no one else until this returns.
pub(crate) unsafe fn to_host(
    stream: &Stream,
    alloc: &Arc<Allocation>,
    dst: *mut u8,
    src: *const c_void,
    len: usize,
) -> Option<Result<()>> {
    let (off, n) = interior(dst as usize, len, page())?;
    let reg = Registered::new(dst as usize + off, n).ok()?;
    Some((|| {
        let op = stream.begin_op();
        alloc.use_on(&op, Access::Read)?;
        for (o, k) in [(0, off), (off, n), (off + n, len - off - n)] {
            if k == 0 {
                continue;
            }
            // SAFETY: as in `to_device`, the other way.
            unsafe {
                result::memcpy_async(
                    dst.add(o).cast(),
                    (src as *const u8).add(o).cast(),
                    k,
                    sys::hipMemcpyDeviceToHost,
                    stream.raw(),
                )
            }?;
        }
        let done = stream.synchronize();
        drop(reg);
        done?;
        op.completed();
        Ok(())
    })())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_pages_inside_the_slice_are_registered() {
        assert_eq!(interior(4096, 8192, 4096), Some((0, 8192)));
        assert_eq!(
            interior(4097, 8192, 4096),
            Some((4095, 4096)),
            "unaligned start"
        );
        assert_eq!(
            interior(4096, 8191, 4096),
            Some((0, 4096)),
            "partial last page"
        );
        assert_eq!(interior(100, 5000, 4096), None, "no whole page inside");
        assert_eq!(interior(4095, 4098, 4096), Some((1, 4096)));
        let (off, n) = interior(12345, 1 << 20, 4096).unwrap();
        assert!((12345 + off) % 4096 == 0 && (12345 + off + n) % 4096 == 0);
        assert!(off < 4096 && off + n <= 1 << 20 && (1 << 20) - off - n < 4096);
    }

    #[test]
    fn a_copy_waits_only_for_registrations_overlapping_it() {
        let l = live();
        wait_clear(0, 100); // none live: returns at once
        {
            let mut r = lock(&l.ranges);
            r.push((1000, 2000));
            l.count.fetch_add(1, Ordering::AcqRel);
        }
        wait_clear(2000, 10); // adjacent, not overlapping
        wait_clear(0, 1000);
        let t = std::thread::spawn(|| wait_clear(1500, 10));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!t.is_finished(), "an overlapping copy waits");
        end_range(1000, 2000);
        t.join().unwrap();
    }
}
