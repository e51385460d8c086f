//! The staging ring's host copy threads: one large `memcpy` cut into near-equal pieces, one per thread,
//! the calling thread copying a piece itself.
//!
//! A ring's copy hands out a piece per thread for every chunk (8 MiB by default, 8 chunks in a 64 MiB
//! copy), so handing out and collecting must cost little next to a chunk's copy (~170 us at ~50 GB/s):
//! the caller counts the pieces down with one atomic, not a lock per piece, and is woken only by the last
//! thread. `HIP_RS_STAGING_SPIN_US` (default 0: sleep at once) makes a thread that finished a piece,
//! and the caller waiting for the pieces, watch that many microseconds before sleeping, so the chunks of
//! one copy could reach a thread without a wake-up (a futex call on the sender's side, a sleeping
//! thread's wake-up latency on its own). An experiment for issue 56's 64 MiB copies: timed on one H100
//! host, watching 100 us helped while the host was quiet and fell furthest once it was busy (spinning
//! threads take the cores the copying ones need), so it is off by default.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long a copy thread, and the caller waiting for the pieces, watch before sleeping, unless
/// `HIP_RS_STAGING_SPIN_US` says otherwise.
const SPIN: Duration = Duration::ZERO;

/// [`SPIN`], or `HIP_RS_STAGING_SPIN_US` microseconds.
fn spin_from_env() -> Duration {
    std::env::var("HIP_RS_STAGING_SPIN_US")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(SPIN, Duration::from_micros)
}

/// `(offset, len)` of `parts` near-equal pieces of `len` bytes, in 64-byte-aligned steps (empty pieces
/// dropped).
pub(crate) fn split(len: usize, parts: usize) -> Vec<(usize, usize)> {
    let parts = parts.max(1);
    let step = len.div_ceil(parts).div_ceil(64) * 64;
    (0..parts)
        .map(|i| (i * step).min(len))
        .map(|off| (off, step.min(len - off)))
        .filter(|&(_, n)| n > 0)
        .collect()
}

/// The pieces of one copy still being copied, and who waits for them.
struct Latch {
    left: AtomicUsize,
    waiter: Thread,
}

impl Latch {
    /// One piece done; the last one wakes the waiter.
    fn count_down(&self) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.waiter.unpark();
        }
    }

    /// Until every piece is done: watched for `spin`, then asleep until the last piece wakes us.
    fn wait(&self, spin: Duration) {
        let start = Instant::now();
        let mut parked = false;
        while self.left.load(Ordering::Acquire) != 0 {
            if start.elapsed() < spin {
                std::hint::spin_loop();
            } else {
                // A wake-up that came before this park is kept (`unpark` leaves a token); a spurious
                // one loops.
                std::thread::park();
                parked = true;
            }
        }
        if parked {
            // The thread's park token is shared with the caller's own code: a token someone else left
            // for it (a waker's `unpark`) may have been taken here. Leave one back; at worst a later
            // `park` returns at once, which `park` allows.
            std::thread::current().unpark();
        }
    }
}

/// One piece of a copy: `n` bytes from `src` to `dst`, counted down on `latch` once copied.
struct Job {
    dst: *mut u8,
    src: *const u8,
    n: usize,
    latch: Arc<Latch>,
}

// SAFETY: a job is a piece of one `Pool::copy`, whose caller keeps both ranges valid (and this piece
// touched by no one else) until every piece has counted down; the thread that receives it is the only
// one that uses the pointers.
unsafe impl Send for Job {}

/// The next job: watched for `spin`, then waited for asleep. `None` once the pool is gone.
fn next_job(rx: &Receiver<Job>, spin: Duration) -> Option<Job> {
    let start = Instant::now();
    loop {
        match rx.try_recv() {
            Ok(job) => return Some(job),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) if start.elapsed() < spin => std::hint::spin_loop(),
            Err(TryRecvError::Empty) => return rx.recv().ok(),
        }
    }
}

/// A persistent pool of copy threads (never more than 15: the caller copies one piece itself).
pub(crate) struct Pool {
    workers: Vec<Sender<Job>>,
    /// How long the caller and each thread watch before sleeping.
    spin: Duration,
}

impl Pool {
    /// `extra` threads besides the caller's (fewer if the system refuses to start some), watching
    /// [`SPIN`] (or `HIP_RS_STAGING_SPIN_US` microseconds) before they sleep.
    pub(crate) fn new(extra: usize) -> Pool {
        Pool::with_spin(extra, spin_from_env())
    }

    /// As [`new`](Self::new), watching `spin`.
    fn with_spin(extra: usize, spin: Duration) -> Pool {
        let workers = (0..extra)
            .filter_map(|i| {
                let (tx, rx) = channel::<Job>();
                std::thread::Builder::new()
                    .name(format!("hip-rs-staging-{i}"))
                    .spawn(move || {
                        while let Some(job) = next_job(&rx, spin) {
                            // SAFETY: `Pool::copy` sent a piece of its own ranges, which its caller
                            // keeps valid (and not overlapping) for reading / writing, and it returns
                            // only after the latch opens, which is after this copy; the pieces are
                            // disjoint, so no other thread touches these bytes meanwhile.
                            unsafe { std::ptr::copy_nonoverlapping(job.src, job.dst, job.n) };
                            job.latch.count_down();
                        }
                    })
                    .ok()
                    .map(|_| tx)
            })
            .collect();
        Pool { workers, spin }
    }

    /// Copy `n` bytes from `src` to `dst` over the pool and the calling thread.
    ///
    /// # Safety
    /// `src` is valid for reading and `dst` for writing `n` bytes, and they do not overlap.
    pub(crate) unsafe fn copy(&self, dst: *mut u8, src: *const u8, n: usize) {
        let pieces = split(n, self.workers.len() + 1);
        let (mine, theirs) = match pieces.split_first() {
            Some(p) => p,
            None => return,
        };
        let latch = Arc::new(Latch {
            left: AtomicUsize::new(theirs.len()),
            waiter: std::thread::current(),
        });
        for (w, &(off, len)) in self.workers.iter().zip(theirs) {
            // SAFETY: `(off, len)` is a piece of `split(n, ..)`: inside both ranges.
            let (d, s) = unsafe { (dst.add(off), src.add(off)) };
            let job = Job {
                dst: d,
                src: s,
                n: len,
                latch: latch.clone(),
            };
            if w.send(job).is_err() {
                // The worker is gone: copy its piece here.
                // SAFETY: `(off, len)` is a piece of `split(n, ..)`, inside both ranges (the caller's:
                // valid for `n` bytes, not overlapping), and disjoint from every other piece.
                unsafe { std::ptr::copy_nonoverlapping(src.add(off), dst.add(off), len) };
                latch.count_down();
            }
        }
        // SAFETY: as above, for the first piece; the workers copy only the other pieces, and this
        // function returns (ending the caller's guarantee) only once every piece has counted down.
        unsafe { std::ptr::copy_nonoverlapping(src.add(mine.0), dst.add(mine.0), mine.1) };
        latch.wait(self.spin);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_aligned_disjoint_and_complete() {
        for (len, parts) in [(0, 4), (1, 4), (100, 3), (8 << 20, 4), (1000, 1), (129, 8)] {
            let p = split(len, parts);
            assert!(p.len() <= parts.max(1));
            let mut next = 0;
            for &(off, n) in &p {
                assert_eq!(off, next, "{len}/{parts}: {p:?}");
                assert!(off % 64 == 0 && n > 0);
                next += n;
            }
            assert_eq!(next, len, "{len}/{parts}: {p:?}");
        }
    }

    /// The watches the tests run with: none (every hand-off sleeps and wakes), and one long enough
    /// that threads see the next piece while watching (short under Miri, which interprets every spin).
    fn watches() -> [Duration; 2] {
        let watch = if cfg!(miri) { 5 } else { 200 };
        [Duration::ZERO, Duration::from_micros(watch)]
    }

    #[test]
    fn the_pool_copies_every_byte() {
        for spin in watches() {
            let pool = Pool::with_spin(3, spin);
            let lens: &[usize] = if cfg!(miri) {
                &[0, 1, 65, 1000]
            } else {
                &[0, 1, 63, 64, 65, 1000, (3 << 20) + 17]
            };
            for &len in lens {
                let src: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
                let mut dst = vec![0u8; len];
                // SAFETY: `src` and `dst` are two live Vecs of `len` bytes: valid and not overlapping.
                unsafe { pool.copy(dst.as_mut_ptr(), src.as_ptr(), len) };
                assert_eq!(dst, src, "len {len}, watch {spin:?}");
            }
            let none = Pool::with_spin(0, spin);
            let src = vec![7u8; 4096];
            let mut dst = vec![0u8; 4096];
            // SAFETY: as above, 4096 bytes each.
            unsafe { none.copy(dst.as_mut_ptr(), src.as_ptr(), 4096) };
            assert_eq!(dst, src);
        }
    }

    #[test]
    fn back_to_back_copies_each_get_every_byte() {
        // Copies in a row, some shorter than a piece per thread: the pieces of one are never counted
        // for the next, whether the threads caught them watching or asleep.
        let rounds = if cfg!(miri) { 6 } else { 200 };
        for spin in watches() {
            let pool = Pool::with_spin(3, spin);
            for round in 0..rounds {
                let len = 64 + round * 67;
                let src: Vec<u8> = (0..len).map(|i| (i + round) as u8).collect();
                let mut dst = vec![0u8; len];
                // SAFETY: two live Vecs of `len` bytes.
                unsafe { pool.copy(dst.as_mut_ptr(), src.as_ptr(), len) };
                assert_eq!(dst, src, "round {round}, watch {spin:?}");
            }
        }
    }
}
