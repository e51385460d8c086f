//! Memory: real host memory backs every allocation (never given back to the system, so a late access
//! of freed memory reads or writes memory that is still mapped); freed blocks are reused eagerly.
//! Copies and fills move real bytes on the stream workers, logging each range with the detector.

use crate::clock::Clock;
use crate::detector::{self, Kind};
use crate::streams::{self, host_now, rt, Rt};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKind {
    Device,
    Pinned,
    Managed,
    /// An array (`hipMallocArray`, `hipMalloc3DArray`): rows packed, freed by `hipFreeArray` only.
    Array,
    /// A texture or surface object's descriptor: read by every kernel given the object, freed (a write
    /// for the detector) by its destroy.
    Object,
}

struct Block {
    len: usize,
    kind: MemKind,
    flags: u32,
    live: bool,
}

/// A freed block waiting for reuse: who freed it and when (stream, seq; host frees are at once).
struct Freed {
    base: usize,
    len: usize,
    kind: MemKind,
    clock: Clock,
    stream: Option<(usize, u64)>,
}

#[derive(Default)]
struct Heap {
    blocks: BTreeMap<usize, Block>,
    freed: Vec<Freed>,
}

static HEAP: Mutex<Option<Heap>> = Mutex::new(None);

fn heap<R>(f: impl FnOnce(&mut Heap) -> R) -> R {
    let mut g = HEAP.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Heap::default))
}

/// The block containing `p`: (base, len, kind, flags), live or not.
pub fn find(p: usize) -> Option<(usize, usize, MemKind, u32)> {
    heap(|h| {
        let (&base, b) = h.blocks.range(..=p).next_back()?;
        (p < base + b.len.max(1)).then_some((base, b.len, b.kind, b.flags))
    })
}

/// The live block containing `p`: (base, len).
pub fn live_block(p: usize) -> Option<(usize, usize)> {
    heap(|h| {
        let (&base, b) = h.blocks.range(..=p).next_back()?;
        (b.live && p < base + b.len.max(1)).then_some((base, b.len))
    })
}

/// Whether `p` is device (or managed) memory, a reserved virtual range included (`vmm`); pinned and
/// pageable memory is host memory.
pub fn is_device(p: usize) -> bool {
    matches!(find(p), Some((_, _, MemKind::Device | MemKind::Managed, _))) || reserved(p)
}

/// Reserved virtual ranges (`vmm`): base -> size. Their bytes are device memory for the copies, and an
/// access where no chunk is mapped is reported.
static RESERVED: Mutex<BTreeMap<usize, usize>> = Mutex::new(BTreeMap::new());

fn reserved_ranges() -> std::sync::MutexGuard<'static, BTreeMap<usize, usize>> {
    RESERVED.lock().unwrap_or_else(|p| p.into_inner())
}

/// `[base, base + size)` is a reserved range (`hipMemAddressReserve`).
pub fn add_reserved(base: usize, size: usize) {
    reserved_ranges().insert(base, size);
}

/// The range at `base` is freed (`hipMemAddressFree`).
pub fn remove_reserved(base: usize) {
    reserved_ranges().remove(&base);
}

/// Whether `p` lies in a reserved range, mapped or not.
pub fn reserved(p: usize) -> bool {
    reserved_ranges()
        .range(..=p)
        .next_back()
        .is_some_and(|(&base, &size)| p < base + size)
}

/// An access of `[p, p + len)` that reaches memory of a reserved range where nothing is mapped.
fn report_unmapped(p: usize, len: usize, kind: Kind, what: &str) {
    detector::report(format!(
        "{kind:?} of [{p:#x}, {:#x}) by {what}: nothing is mapped there in its reserved range \
         (never mapped, or unmapped)",
        p + len
    ));
}

/// The flag of a block that is a mapped chunk of a reserved range (`vmm`): live while mapped.
pub const VMM_CHUNK: u32 = 1 << 31;

/// A chunk of a reserved range mapped at `[base, base + len)`: a live device block (again, if it was
/// mapped there before), never handed out by [`alloc`].
pub fn adopt(base: usize, len: usize) {
    heap(|h| {
        h.blocks.insert(
            base,
            Block {
                len,
                kind: MemKind::Device,
                flags: VMM_CHUNK,
                live: true,
            },
        )
    });
}

/// The chunk at `base` is unmapped: its block stays, not live, so later accesses are reported.
pub fn unadopt(base: usize) {
    heap(|h| {
        if let Some(b) = h.blocks.get_mut(&base) {
            b.live = false;
        }
    });
}

/// Log an access of `[p, p + len)` if it lies in an allocation of the shadow (pageable memory is not
/// tracked). An access of mapped chunks of a reserved range goes on into the chunks mapped after it; one
/// that reaches where nothing is mapped is reported.
pub fn log(p: usize, len: usize, kind: Kind, clock: &Clock, what: &Arc<str>) {
    let end = p + len;
    let mut at = p;
    while at < end {
        match find(at) {
            Some((base, blen, _, flags)) => {
                let stop = end.min(base + blen.max(1));
                if flags & VMM_CHUNK != 0 && live_block(at).is_none() {
                    report_unmapped(at, stop - at, kind, what);
                }
                detector::access(base, at, stop.saturating_sub(at), kind, clock, what);
                if flags & VMM_CHUNK == 0 {
                    return;
                }
                at = stop;
            }
            None => {
                if reserved(at) {
                    report_unmapped(at, end - at, kind, what);
                }
                return;
            }
        }
    }
}

/// Allocate `len` bytes of `kind`: a freed block of the same size and kind when one may be reused (freed
/// by the host, on `stream` itself, or freed on another stream and already executed), else new memory.
/// Returns the pointer and the clock of the free it reuses (the allocator orders the two).
pub fn alloc(
    rt: &Rt,
    len: usize,
    kind: MemKind,
    flags: u32,
    stream: Option<usize>,
) -> (usize, Clock) {
    let len = len.max(1);
    let reusable = |f: &Freed| {
        f.len == len
            && f.kind == kind
            && match f.stream {
                None => true,
                Some((s, seq)) => {
                    Some(s) == stream || rt.streams.get(&s).is_none_or(|st| st.done >= seq)
                }
            }
    };
    let reused = heap(|h| {
        let i = h.freed.iter().position(reusable)?;
        let f = h.freed.swap_remove(i);
        let b = h.blocks.get_mut(&f.base).unwrap();
        b.live = true;
        b.flags = flags;
        Some((f.base, f.clock))
    });
    if let Some(r) = reused {
        return r;
    }
    let layout = std::alloc::Layout::from_size_align(len, 256).expect("allocation size");
    // SAFETY: the layout has a non-zero size. The memory is never deallocated (see the module doc).
    let p = unsafe { std::alloc::alloc_zeroed(layout) } as usize;
    assert!(p != 0, "shadow HIP: out of host memory");
    heap(|h| {
        h.blocks.insert(
            p,
            Block {
                len,
                kind,
                flags,
                live: true,
            },
        )
    });
    (p, Clock::default())
}

/// Free the live allocation at `p` (its base): a write of the whole block with `clock`, then the block
/// may be reused. `None` if `p` is not a live allocation's base of `kinds`.
pub fn free(
    p: usize,
    kinds: &[MemKind],
    clock: &Clock,
    what: &Arc<str>,
    stream: Option<(usize, u64)>,
) -> Option<()> {
    let (len, kind) = heap(|h| {
        let b = h.blocks.get_mut(&p)?;
        if !b.live || !kinds.contains(&b.kind) {
            return None;
        }
        b.live = false;
        Some((b.len, b.kind))
    })?;
    detector::access(p, p, len, Kind::Free, clock, what);
    heap(|h| {
        h.freed.push(Freed {
            base: p,
            len,
            kind,
            clock: clock.clone(),
            stream,
        })
    });
    Some(())
}

/// Whether `p` is the base of a live allocation.
pub fn is_live_base(p: usize) -> bool {
    heap(|h| h.blocks.get(&p).is_some_and(|b| b.live))
}

/// A fill of `count` elements of `size` bytes (1, 2 or 4) with `value`.
pub fn fill_action(dst: usize, value: u32, size: usize, count: usize) -> streams::Action {
    Arc::new(move |c: &Clock, w: &Arc<str>| {
        log(dst, count * size, Kind::Write, c, w);
        let bytes = value.to_le_bytes();
        for i in 0..count {
            // SAFETY: the range is the caller's (HIP's contract for the fill).
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), (dst + i * size) as *mut u8, size)
            };
        }
    })
}

/// A host access of `[p, p + n)` by the calling thread, now.
pub fn host_access(rt: &Rt, p: usize, n: usize, kind: Kind, call: &str) {
    let (c, name) = host_now(rt);
    let what: Arc<str> = format!("{call} by {name}").into();
    log(p, n, kind, &c, &what);
}

/// A 2-D or 3-D memset: `depth` slices of `height` rows of `width` bytes, rows `pitch` bytes apart and
/// slices `slice_rows` rows apart, set to `value`. The detector logs the rows' bounding range as written.
pub fn fill_rows_action(
    dst: usize,
    pitch: usize,
    value: u8,
    [width, height, depth]: [usize; 3],
    slice_rows: usize,
) -> streams::Action {
    Arc::new(move |c: &Clock, w: &Arc<str>| {
        if width == 0 || height == 0 || depth == 0 {
            return;
        }
        let last = ((depth - 1) * slice_rows + height - 1) * pitch + width;
        log(dst, last, Kind::Write, c, w);
        for z in 0..depth {
            for y in 0..height {
                let row = dst + (z * slice_rows + y) * pitch;
                // SAFETY: the rows are the caller's (HIP's contract for the memset).
                unsafe { std::ptr::write_bytes(row as *mut u8, value, width) };
            }
        }
    })
}

/// A copy's shape: `height` rows of `width` bytes, rows `dpitch` / `spitch` bytes apart (1-D: one row).
#[derive(Clone, Copy)]
pub struct Shape {
    pub dst: usize,
    pub dpitch: usize,
    pub src: usize,
    pub spitch: usize,
    pub width: usize,
    pub height: usize,
}

impl Shape {
    pub fn linear(dst: usize, src: usize, n: usize) -> Shape {
        Shape {
            dst,
            dpitch: n,
            src,
            spitch: n,
            width: n,
            height: 1,
        }
    }

    /// The bytes from the first row's start to the last row's end (what the detector logs: the rows'
    /// bounding range).
    fn span(pitch: usize, width: usize, height: usize) -> usize {
        if height == 0 || width == 0 {
            0
        } else {
            pitch * (height - 1) + width
        }
    }

    pub fn src_span(&self) -> usize {
        Self::span(self.spitch, self.width, self.height)
    }

    pub fn dst_span(&self) -> usize {
        Self::span(self.dpitch, self.width, self.height)
    }

    /// The source rows, packed.
    pub fn read(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.width * self.height);
        for r in 0..self.height {
            // SAFETY: the caller's source rows (HIP's contract for the copy).
            v.extend_from_slice(unsafe {
                std::slice::from_raw_parts((self.src + r * self.spitch) as *const u8, self.width)
            });
        }
        v
    }

    /// Write packed rows to the destination.
    pub fn write(&self, data: &[u8]) {
        for r in 0..self.height {
            let row = &data[r * self.width..(r + 1) * self.width];
            // SAFETY: the caller's destination rows.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    row.as_ptr(),
                    (self.dst + r * self.dpitch) as *mut u8,
                    self.width,
                )
            };
        }
    }
}

/// A copy of `shape` as a stream action: src read, dst write, then the bytes move.
pub fn shaped_copy_action(shape: Shape) -> streams::Action {
    Arc::new(move |c: &Clock, w: &Arc<str>| {
        log(shape.src, shape.src_span(), Kind::Read, c, w);
        log(shape.dst, shape.dst_span(), Kind::Write, c, w);
        shape.write(&shape.read());
    })
}

/// A synchronous copy: host to host at once; host to device reads the host side now and queues the
/// device write on the null stream (returns before it ran); device to host waits (see [`to_host`]);
/// device to device returns once queued.
pub fn sync_copy(shape: Shape, call: &str) -> crate::Status {
    let (dd, sd) = (is_device(shape.dst), is_device(shape.src));
    let mut g = streams::lock();
    let r = rt(&mut g);
    match (sd, dd) {
        (false, false) => {
            host_access(r, shape.src, shape.src_span(), Kind::Read, call);
            host_access(r, shape.dst, shape.dst_span(), Kind::Write, call);
            shape.write(&shape.read());
        }
        (false, true) => {
            // The host side is read now (the source may be reused once the call returns).
            host_access(r, shape.src, shape.src_span(), Kind::Read, call);
            let data = shape.read();
            let act: streams::Action = Arc::new(move |c: &Clock, w: &Arc<str>| {
                log(shape.dst, shape.dst_span(), Kind::Write, c, w);
                shape.write(&data);
            });
            streams::push(r, streams::key(0), call, Vec::new(), &Clock::default(), act);
        }
        (true, false) => {
            drop(g);
            return to_host(streams::key(0), shape, call);
        }
        (true, true) => {
            streams::push(
                r,
                streams::key(0),
                call,
                Vec::new(),
                &Clock::default(),
                shaped_copy_action(shape),
            );
        }
    }
    crate::SUCCESS
}

/// Device to host, synchronous for the host: the stream reads the source, the host waits, learns the
/// copy's clock and writes the destination.
pub fn to_host(sid: usize, shape: Shape, call: &str) -> crate::Status {
    let staged = Arc::new(Mutex::new(Vec::new()));
    let st = staged.clone();
    let act: streams::Action = Arc::new(move |c: &Clock, w: &Arc<str>| {
        log(shape.src, shape.src_span(), Kind::Read, c, w);
        *st.lock().unwrap() = shape.read();
    });
    let mut g = streams::lock();
    let r = rt(&mut g);
    let (seq, clock) = streams::push(r, sid, call, Vec::new(), &Clock::default(), act);
    let mut g = streams::wait_done(g, sid, seq);
    let r = rt(&mut g);
    streams::host_join(r, &clock);
    host_access(r, shape.dst, shape.dst_span(), Kind::Write, call);
    shape.write(&staged.lock().unwrap());
    crate::SUCCESS
}

/// `hipHostRegister`'s record: `[p, p + len)` of the caller's memory becomes a pinned block (copies of it
/// are then logged, and `hipHostGetFlags` answers for it). `false` if it overlaps a live block.
pub fn register(p: usize, len: usize, flags: u32) -> bool {
    heap(|h| {
        let overlaps = h
            .blocks
            .range(..p + len)
            .next_back()
            .is_some_and(|(&b, blk)| blk.live && b + blk.len > p);
        if overlaps {
            return false;
        }
        h.blocks.insert(
            p,
            Block {
                len,
                kind: MemKind::Pinned,
                flags,
                live: true,
            },
        );
        true
    })
}

/// `hipHostUnregister`'s record: the block registered at `p` goes (logged as a free with `clock`: an
/// unregister not ordered after a copy of the memory is reported); its memory is the caller's, never
/// reused. `false` if `p` is not a registered block's base.
pub fn unregister(p: usize, clock: &Clock, what: &Arc<str>) -> bool {
    let len = heap(|h| match h.blocks.get(&p) {
        Some(b) if b.live && b.flags & REGISTERED != 0 => {
            let len = b.len;
            h.blocks.remove(&p);
            Some(len)
        }
        _ => None,
    });
    match len {
        Some(len) => {
            detector::access(p, p, len, Kind::Free, clock, what);
            true
        }
        None => false,
    }
}

/// A flag bit the shadow keeps on registered blocks (above HIP's flags).
pub const REGISTERED: u32 = 1 << 31;
