//! The pageable-copy staging ring: large synchronous copies between pageable host memory and the device
//! go through a few reusable pinned buffers, with the host-side copy into (or out of) each buffer split
//! over a small persistent thread pool and overlapped with the DMA of the previous chunk.
//!
//! Raw `hipMemcpy` from pageable memory is limited by the driver's own single-threaded staging (8-19 GB/s
//! measured on H100/H200 here, against about 55 GB/s from pinned memory). The ring is used only for
//! copies of at least [`StagingConfig::threshold_bytes`], never for small ones; its threads are started on
//! the first staged copy, capped by [`StagingConfig::threads`], and [`set_config`] with
//! [`StagingConfig::disabled`] turns it off (so does `HIP_RS_STAGING=0` in the environment, read once).
//! A copy that finds the ring busy (another thread is copying) goes the raw way rather than waiting, and so
//! does a copy whose host side is pinned already (`hipHostGetFlags` answers for it).

use super::copy_threads::Pool;
use super::registered;
use super::tracking::{Access, Allocation};
use crate::device::Device;
use crate::error::Result;
use crate::result;
use crate::stream::Stream;
use hip_sys as sys;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, OnceLock};

/// How the staging ring behaves. [`StagingConfig::default`] is what a program gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StagingConfig {
    /// Whether copies are staged at all.
    pub enabled: bool,
    /// The smallest copy, in bytes, that is staged; smaller ones use `hipMemcpy` directly.
    pub threshold_bytes: usize,
    /// Bytes per pinned buffer (one DMA each).
    pub chunk_bytes: usize,
    /// Pinned buffers in the ring (at least 2 for overlap).
    pub buffers: usize,
    /// Threads doing the host-side copy, the caller's included (1 = no extra threads); capped at 16.
    pub threads: usize,
    /// The smallest staged copy, in bytes, that instead page-locks the user's own pages for its duration
    /// (`hipHostRegister`, then a direct copy, then `hipHostUnregister` once it completed: see
    /// `memory/registered.rs`); `usize::MAX`, the default, never does. Registering costs time about
    /// linear in the size, so where it pays is measured (`bench`'s staged-copy table); the environment's
    /// `HIP_RS_STAGING_REGISTER_MIB` sets it in MiB (read by [`StagingConfig::default`]).
    pub register_bytes: usize,
    /// Begin and end a copy of more than two chunks with smaller pieces (an eighth of a chunk, at least
    /// 64 KiB, doubling up to a chunk, and halving again at the end), so the first DMA starts, and the
    /// last ends, sooner: the ring overlaps everything but the first host copy and the last DMA. Off by
    /// default: on an H100 it was slower at 64 and 256 MiB in both directions (the repository's
    /// `staging_sweep --ramp` benchmark).
    pub ramp: bool,
}

impl Default for StagingConfig {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        StagingConfig {
            enabled: std::env::var("HIP_RS_STAGING").map_or(true, |v| v != "0"),
            threshold_bytes: 16 << 20,
            chunk_bytes: 8 << 20,
            // 4 buffers and a thread per core (up to 16): bench's staging_sweep on an H100 host (16
            // cores, 2026-12-06) measured 0.60-0.93 of the pinned limit from 64 MiB to 1 GiB with them,
            // against 0.47-0.53 with the former 3 buffers and 4 threads, whose host copy bounded the ring.
            buffers: 4,
            threads: cores.clamp(1, 16),
            register_bytes: std::env::var("HIP_RS_STAGING_REGISTER_MIB")
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .map_or(usize::MAX, |m| m.saturating_mul(1 << 20)),
            ramp: false,
        }
    }
}

impl StagingConfig {
    /// Staging off: every copy is a plain `hipMemcpy`.
    pub fn disabled() -> Self {
        StagingConfig {
            enabled: false,
            ..Self::default()
        }
    }

    /// The values actually used: at least 2 buffers of at least 64 KiB, 1 to 16 threads.
    fn sanitized(self) -> Self {
        StagingConfig {
            chunk_bytes: self.chunk_bytes.max(64 << 10),
            buffers: self.buffers.clamp(2, 16),
            threads: self.threads.clamp(1, 16),
            ..self
        }
    }
}

fn config_cell() -> &'static Mutex<StagingConfig> {
    static CONFIG: OnceLock<Mutex<StagingConfig>> = OnceLock::new();
    CONFIG.get_or_init(|| Mutex::new(StagingConfig::default()))
}

/// The configuration in force.
pub fn config() -> StagingConfig {
    *config_cell().lock().unwrap_or_else(|e| e.into_inner())
}

/// Replace the configuration. Rings already built keep their buffers until the next staged copy, which
/// rebuilds them if the chunk size or count changed.
pub fn set_config(config: StagingConfig) {
    *config_cell().lock().unwrap_or_else(|e| e.into_inner()) = config.sanitized();
}

/// Whether a copy of `bytes` is staged under `config`.
pub(crate) fn should_stage(config: &StagingConfig, bytes: usize) -> bool {
    config.enabled && bytes >= config.threshold_bytes && bytes > 0
}

/// `(offset, len)` of each piece of a `len`-byte copy: `chunk`-byte pieces, or with `ramp` and more
/// than two chunks, pieces growing from an eighth of a chunk (at least 64 KiB) to a chunk at the start
/// and shrinking back at the end (see [`StagingConfig::ramp`]). Every piece is at most `chunk` bytes.
pub(crate) fn pieces(len: usize, chunk: usize, ramp: bool) -> Vec<(usize, usize)> {
    let chunk = chunk.max(1);
    if !ramp || len <= 2 * chunk {
        return chunks(len, chunk).collect();
    }
    let mut ends = Vec::new();
    let mut rest = len;
    let mut piece = (chunk / 8).max(64 << 10);
    // Each step takes a piece from both ends while a full chunk stays between them.
    while piece < chunk && rest >= 2 * piece + chunk {
        ends.push(piece);
        rest -= 2 * piece;
        piece *= 2;
    }
    let mut out = Vec::with_capacity(2 * ends.len() + rest.div_ceil(chunk));
    let mut off = 0;
    let sizes = ends
        .iter()
        .copied()
        .chain(chunks(rest, chunk).map(|(_, n)| n))
        .chain(ends.iter().rev().copied());
    for n in sizes {
        out.push((off, n));
        off += n;
    }
    out
}

/// `(offset, len)` of each chunk of a `len`-byte copy in `chunk`-byte pieces.
pub(crate) fn chunks(len: usize, chunk: usize) -> impl Iterator<Item = (usize, usize)> {
    let chunk = chunk.max(1);
    (0..len.div_ceil(chunk)).map(move |i| {
        let off = i * chunk;
        (off, chunk.min(len - off))
    })
}

/// Pinned buffers, their events and a stream, for one device.
///
/// The chunk events are raw HIP events, not [`Event`](crate::Event)s: an `Event` recorded inside the
/// copy's stream operation would carry the whole copy's label, and waiting for the first chunk's would
/// teach the memory model that the whole copy is complete while later chunks are still in flight (a
/// graph launched meanwhile on another thread would then write the buffer without waiting). These
/// teach it nothing: the copy is known complete only once the last chunk is (`StreamOp::completed`).
struct Ring {
    device: usize,
    chunk: usize,
    /// Smaller pieces at both ends of a long copy ([`StagingConfig::ramp`]).
    ramp: bool,
    buffers: Vec<(*mut u8, ChunkEvent)>,
    stream: Stream,
    pool: Pool,
    threads: usize,
}

// SAFETY: the raw pointers are the ring's own pinned buffers and chunk events, freed only in its Drop;
// the ring lives in the `ring_cell` mutex and is only used (or dropped) by the thread holding it, so
// moving it between threads moves that exclusive ownership. The other fields (Stream, Sender) are Send.
unsafe impl Send for Ring {}

/// A chunk's event: recorded after the chunk's DMA, waited for before its pinned buffer is reused or read.
/// Owned by the ring, destroyed in its Drop.
struct ChunkEvent(sys::hipEvent_t);

impl ChunkEvent {
    fn new() -> Result<ChunkEvent> {
        result::event_create(sys::hipEventDisableTiming).map(ChunkEvent)
    }

    /// Record after the work queued on `stream` (the ring's, live, its device current) so far.
    fn record(&self, stream: &Stream) -> Result<()> {
        // SAFETY: a live event of the ring's device (destroyed only in the ring's Drop), recorded on the
        // ring's own live stream of that device.
        unsafe { result::event_record(self.0, stream.raw()) }
    }

    /// Block until the chunk's DMA is done.
    fn synchronize(&self) -> Result<()> {
        // SAFETY: a live event (destroyed only in the ring's Drop).
        unsafe { result::event_synchronize(self.0) }
    }
}
impl Ring {
    /// A ring for `device`. Each piece is owned by the ring as soon as it is made, so a failure part-way
    /// frees what was already allocated (through `Drop`).
    fn new(device: &Device, cfg: &StagingConfig) -> Result<Ring> {
        device.bind()?;
        let mut ring = Ring {
            device: device.ordinal(),
            chunk: cfg.chunk_bytes,
            ramp: cfg.ramp,
            buffers: Vec::with_capacity(cfg.buffers),
            stream: Stream::non_blocking(device)?,
            pool: Pool::new(0),
            threads: cfg.threads,
        };
        for _ in 0..cfg.buffers {
            let event = ChunkEvent::new()?;
            let p = match result::host_malloc(cfg.chunk_bytes, sys::hipHostMallocDefault) {
                Ok(p) => p,
                Err(e) => {
                    // SAFETY: just created, never recorded, owned by no one else.
                    let _ = unsafe { result::event_destroy(event.0) };
                    return Err(e);
                }
            };
            ring.buffers.push((p as *mut u8, event));
        }
        ring.pool = Pool::new(cfg.threads - 1);
        Ok(ring)
    }

    fn fits(&self, device: &Device, cfg: &StagingConfig) -> bool {
        self.device == device.ordinal()
            && self.buffers.len() == cfg.buffers
            && self.chunk == cfg.chunk_bytes
            && self.threads == cfg.threads
            && self.ramp == cfg.ramp
    }

    /// Host (pageable) -> device through the ring, ordered after the other users of `alloc` (which `dst`
    /// belongs to). Returns once the data has landed.
    ///
    /// # Safety
    /// `dst` is device memory of `alloc`, on this ring's device, valid for writing `len` bytes; `src` is
    /// host memory valid for reading `len` bytes, not written by anyone until this returns.
    unsafe fn to_device(
        &self,
        alloc: &Arc<Allocation>,
        dst: *mut c_void,
        src: *const u8,
        len: usize,
    ) -> Result<()> {
        // Nothing left from a copy that failed midway.
        self.stream.synchronize()?;
        if len >= config().register_bytes {
            // SAFETY: the caller's contract, which is `registered::to_device`'s; the ring's stream is on
            // `alloc`'s device, current (`synchronize` bound it).
            if let Some(r) = unsafe { registered::to_device(&self.stream, alloc, dst, src, len) } {
                return r;
            }
        }
        // Held until the last copy is queued (StreamOp's contract): the use's label is published as
        // queued, and its marker recorded, only after the copies, so a consumer on another stream (or a
        // free after an error part-way) waits for the copies, not for a marker recorded before them.
        let op = self.stream.begin_op();
        alloc.use_on(&op, Access::Write)?;
        for (i, (off, n)) in pieces(len, self.chunk, self.ramp).into_iter().enumerate() {
            let (buf, event) = &self.buffers[i % self.buffers.len()];
            if i >= self.buffers.len() {
                event.synchronize()?; // the DMA that last read this buffer is done
            }
            // SAFETY: `off + n <= len` (chunks), so `src + off` is valid for reading `n` bytes (the
            // caller's); `buf` is one of the ring's pinned buffers of `chunk >= n` bytes, whose last DMA
            // was waited for just above (or it was never used), and it does not overlap pageable `src`.
            unsafe { self.pool.copy(*buf, src.add(off), n) };
            // SAFETY: `dst + off` is valid for writing `n` bytes (the caller's: device memory of `alloc`
            // on this ring's device) and `buf` holds the `n` bytes just copied; the ring's stream (live,
            // owned by the ring) is on that device, which is current (`synchronize` bound it, and
            // `use_on` leaves the waiting stream's device current). The stream waited for the other users
            // of `alloc` and is recorded as its writer under `op`; `buf` is not reused before `event`
            // (recorded after this copy) completes, and the ring frees its buffers only after its stream
            // is idle.
            unsafe {
                result::memcpy_async(
                    (dst as *mut u8).add(off).cast(),
                    buf.cast::<c_void>(),
                    n,
                    sys::hipMemcpyHostToDevice,
                    self.stream.raw(),
                )
            }?;
            event.record(&self.stream)?;
        }
        self.stream.synchronize()?;
        op.completed();
        Ok(())
    }

    /// Device -> host (pageable) through the ring, ordered after the writers of `alloc` (which `src`
    /// belongs to). Returns once `dst` holds the data.
    ///
    /// # Safety
    /// `src` is device memory of `alloc`, on this ring's device, valid for reading `len` bytes; `dst` is
    /// host memory valid for writing `len` bytes, read or written by no one else until this returns.
    unsafe fn to_host(
        &self,
        alloc: &Arc<Allocation>,
        dst: *mut u8,
        src: *const c_void,
        len: usize,
    ) -> Result<()> {
        // Nothing left from a copy that failed midway.
        self.stream.synchronize()?;
        if len >= config().register_bytes {
            // SAFETY: as in `to_device`.
            if let Some(r) = unsafe { registered::to_host(&self.stream, alloc, dst, src, len) } {
                return r;
            }
        }
        // Held until the last copy is queued, as in `to_device`: a writer on another stream waits for
        // the copies out of the memory, not for a marker recorded before them.
        let op = self.stream.begin_op();
        alloc.use_on(&op, Access::Read)?;
        let all = pieces(len, self.chunk, self.ramp);
        let k = self.buffers.len();
        let issue = |i: usize| -> Result<()> {
            let (off, n) = all[i];
            let (buf, event) = &self.buffers[i % k];
            // SAFETY: `off + n <= len` (chunks), so `src + off` is valid for reading `n` bytes of
            // device memory of `alloc` on the ring's device (current, as in `to_device`); `buf` is a
            // pinned buffer of `chunk >= n` bytes whose previous piece the host has already copied out
            // (piece `i` is issued only after piece `i - k` was waited for and copied). The stream
            // waited for the writers of `alloc` and is recorded as its reader under `op`.
            unsafe {
                result::memcpy_async(
                    buf.cast::<c_void>(),
                    (src as *const u8).add(off).cast(),
                    n,
                    sys::hipMemcpyDeviceToHost,
                    self.stream.raw(),
                )
            }?;
            event.record(&self.stream)
        };
        for i in 0..all.len().min(k) {
            issue(i)?;
        }
        for (i, &(off, n)) in all.iter().enumerate() {
            let (buf, event) = &self.buffers[i % k];
            event.synchronize()?;
            // SAFETY: the copy into `buf` is done (its event, recorded after it, completed); `dst + off`
            // is valid for writing `n` bytes (the caller's) and does not overlap the pinned `buf`.
            unsafe { self.pool.copy(dst.add(off), *buf, n) };
            if i + k < all.len() {
                issue(i + k)?;
            }
        }
        // Every piece's event was waited for: the copies ran.
        op.completed();
        Ok(())
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // A copy that failed part-way may have left DMA in flight: wait for it, and if even that fails,
        // leak the buffers rather than free them under the DMA.
        if self.stream.synchronize().is_err() {
            return;
        }
        for (p, event) in &self.buffers {
            // SAFETY: allocated by hipHostMalloc in Ring::new and freed only here, once. Only the ring's
            // own stream ever copied to or from it, and that stream is idle (synchronized just above, so
            // even a copy that failed part-way has no DMA left); the host side copies ran on the caller's
            // thread and the pool, and finished before `to_device` / `to_host` returned.
            let _ = unsafe { result::host_free(p.cast()) };
            // SAFETY: created in Ring::new, destroyed only here, once; its stream is idle.
            let _ = unsafe { result::event_destroy(event.0) };
        }
    }
}

/// The ring, or the last failure to build one (not retried for the same device and configuration: a
/// failure, say pinned memory refused, would otherwise repeat on every staged copy).
enum Slot {
    Empty,
    Ready(Ring),
    Failed {
        device: usize,
        config: StagingConfig,
    },
}

fn ring_cell() -> &'static Mutex<Slot> {
    static RING: OnceLock<Mutex<Slot>> = OnceLock::new();
    RING.get_or_init(|| Mutex::new(Slot::Empty))
}

/// Run `f` with a ring fitting `device` and the configuration, or return `None` when the ring is busy or
/// cannot be built (the caller then copies the raw way).
fn with_ring<R>(device: &Device, f: impl FnOnce(&Ring) -> Result<R>) -> Option<Result<R>> {
    let cfg = config();
    let mut slot = ring_cell().try_lock().ok()?;
    match &*slot {
        Slot::Ready(r) if r.fits(device, &cfg) => {}
        Slot::Failed { device: d, config } if *d == device.ordinal() && *config == cfg => {
            return None
        }
        _ => {
            *slot = Slot::Empty; // free the old one first
            *slot = match Ring::new(device, &cfg) {
                Ok(r) => Slot::Ready(r),
                Err(_) => Slot::Failed {
                    device: device.ordinal(),
                    config: cfg,
                },
            };
        }
    }
    match &*slot {
        Slot::Ready(r) => Some(f(r)),
        _ => None,
    }
}

/// Whether `host` is pinned memory already (a `PinnedBuffer`'s slice): staging it would only add a copy.
fn is_pinned(host: *const u8) -> bool {
    // SAFETY: hipHostGetFlags only looks the address up in the runtime's tables (it dereferences nothing
    // at it); pageable memory answers an error.
    unsafe { result::memory::host_get_flags(host.cast()) }.is_ok()
}

/// Stage a pageable host -> device copy if the configuration says so; `None` means "copy it raw".
///
/// # Safety
/// `dst` is device memory of `alloc` valid for `len` bytes; `src` is host memory valid for reading `len`
/// bytes.
pub(crate) unsafe fn to_device(
    alloc: &Arc<Allocation>,
    dst: *mut c_void,
    src: *const u8,
    len: usize,
) -> Option<Result<()>> {
    registered::wait_clear(src as usize, len);
    if !should_stage(&config(), len) || is_pinned(src) {
        return None;
    }
    // SAFETY: the caller's contract, and `with_ring` hands over a ring of `alloc`'s device.
    with_ring(alloc.device(), |r| unsafe {
        r.to_device(alloc, dst, src, len)
    })
}

/// Stage a device -> pageable host copy if the configuration says so; `None` means "copy it raw".
///
/// # Safety
/// `src` is device memory of `alloc` valid for `len` bytes; `dst` is host memory valid for writing `len`
/// bytes.
pub(crate) unsafe fn to_host(
    alloc: &Arc<Allocation>,
    dst: *mut u8,
    src: *const c_void,
    len: usize,
) -> Option<Result<()>> {
    registered::wait_clear(dst as usize, len);
    if !should_stage(&config(), len) || is_pinned(dst) {
        return None;
    }
    // SAFETY: the caller's contract, and `with_ring` hands over a ring of `alloc`'s device.
    with_ring(alloc.device(), |r| unsafe {
        r.to_host(alloc, dst, src, len)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramped_pieces_cover_the_copy_exactly_once_and_fit_a_chunk() {
        const MIB: usize = 1 << 20;
        let chunk = 8 * MIB;
        for len in [
            0,
            1,
            chunk,
            2 * chunk,
            2 * chunk + 1,
            3 * chunk - 5,
            64 * MIB,
            1 << 30,
            100 * MIB + 7,
        ] {
            let p = pieces(len, chunk, true);
            let mut off = 0;
            for &(o, n) in &p {
                assert_eq!(o, off, "{len}: pieces in order, without gaps");
                assert!(n > 0 && n <= chunk, "{len}: piece of {n}");
                off += n;
            }
            assert_eq!(off, len, "{len}: every byte once");
            if len <= 2 * chunk {
                assert_eq!(p, chunks(len, chunk).collect::<Vec<_>>(), "{len}: no ramp");
            }
        }
        // 64 MiB: 1, 2, 4 MiB at each end around full chunks.
        let p: Vec<_> = pieces(64 * MIB, chunk, true)
            .iter()
            .map(|&(_, n)| n / MIB)
            .collect();
        assert_eq!(p, [1, 2, 4, 8, 8, 8, 8, 8, 8, 2, 4, 2, 1]);
        // Off: whole chunks.
        assert_eq!(pieces(64 * MIB, chunk, false).len(), 8);
        // Small chunks ramp from 64 KiB.
        assert_eq!(pieces(10 << 20, 256 << 10, true)[0].1, 64 << 10);
    }

    #[test]
    fn chunks_cover_the_copy_exactly_once() {
        let c: Vec<_> = chunks(20, 8).collect();
        assert_eq!(c, [(0, 8), (8, 8), (16, 4)]);
        assert_eq!(chunks(16, 8).count(), 2);
        assert_eq!(chunks(0, 8).count(), 0);
        let total: usize = chunks((1 << 30) + 3, 8 << 20).map(|(_, n)| n).sum();
        assert_eq!(total, (1 << 30) + 3);
    }

    #[test]
    fn threshold_and_switch() {
        let on = StagingConfig {
            enabled: true,
            threshold_bytes: 1 << 20,
            ..StagingConfig::default()
        };
        assert!(should_stage(&on, 1 << 20));
        assert!(!should_stage(&on, (1 << 20) - 1));
        assert!(!should_stage(&StagingConfig::disabled(), 1 << 30));
        let s = StagingConfig {
            buffers: 0,
            threads: 99,
            chunk_bytes: 1,
            ..on
        }
        .sanitized();
        assert_eq!((s.buffers, s.threads, s.chunk_bytes), (2, 16, 64 << 10));
    }
}
