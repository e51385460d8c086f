//! Virtual memory management: reserved ranges (`hipMemAddressReserve`, backed by zeroed host memory that
//! is never given back), physical allocations (`hipMemCreate`: a handle and a size, no bytes of their
//! own), mappings (`hipMemMap`: the reservation's bytes at that address become a live device block of
//! the heap, `memory::adopt`) and access per device (`hipMemSetAccess`).
//!
//! What the detector sees: an unmap is a free of the chunk from the host's clock, so an unmap while
//! queued work still uses the memory is reported as a race; an access of a reserved range where nothing
//! is mapped (never mapped, or unmapped) is reported as such (`memory::log`). A physical allocation's
//! bytes are the reservation's at the address it is mapped at: mapping one allocation at two addresses
//! does not alias them here (the real runtime does).

use crate::detector::{self, Kind};
use crate::memory;
use crate::streams::{host_now, lock, rt};
use crate::{Status, INVALID_VALUE, SUCCESS};
use hip_sys as sys;
use std::collections::{BTreeMap, HashMap};
use std::ffi::{c_int, c_ulonglong, c_void};
use std::sync::{Arc, Mutex};

/// `hipMemHandleTypePosixFileDescriptor`: the handle type a shareable allocation asks for (vmm_share.rs
/// exports and imports it).
pub(crate) const POSIX_FD: sys::hipMemAllocationHandleType = 1;

/// The granularity the shadow answers (what AMD GPUs answer for the minimum is 4 KiB to 2 MiB).
pub const GRANULARITY: usize = 64 << 10;

struct Physical {
    size: usize,
    /// The device it is on.
    ordinal: c_int,
    /// References to the handle: its creation and each `hipMemRetainAllocationHandle`, less each
    /// `hipMemRelease` (vmm_query.rs); the allocation goes once none is left and nothing maps it.
    refs: usize,
    /// Addresses it is mapped at.
    mapped: usize,
    /// Made exportable as a file descriptor (or imported from one): `hipMemExportToShareableHandle`
    /// takes it (vmm_share.rs).
    shareable: bool,
}

struct Chunk {
    size: usize,
    handle: usize,
    /// Access flags by device.
    access: HashMap<i32, c_ulonglong>,
}

#[derive(Default)]
struct Vmm {
    /// Reserved ranges: base -> size.
    ranges: BTreeMap<usize, usize>,
    /// Mapped chunks: address -> chunk.
    chunks: BTreeMap<usize, Chunk>,
    physical: HashMap<usize, Physical>,
    next: usize,
}

static VMM: Mutex<Option<Vmm>> = Mutex::new(None);

fn vmm<R>(f: impl FnOnce(&mut Vmm) -> R) -> R {
    let mut g = VMM.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Vmm::default))
}

/// The reservation holding `p`: (base, size).
fn range_of(v: &Vmm, p: usize) -> Option<(usize, usize)> {
    let (&base, &size) = v.ranges.range(..=p).next_back()?;
    (p < base + size).then_some((base, size))
}

/// The run of contiguous mapped chunks holding `p`, from `p`: (p, bytes to the run's end).
pub fn mapped_run(p: usize) -> Option<(usize, usize)> {
    vmm(|v| {
        let (&at, c) = v.chunks.range(..=p).next_back()?;
        if p >= at + c.size {
            return None;
        }
        let mut end = at + c.size;
        while let Some(next) = v.chunks.get(&end) {
            end += next.size;
        }
        Some((p, end - p))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemGetAllocationGranularity(
    g: *mut usize,
    prop: *const sys::hipMemAllocationProp,
    _option: sys::hipMemAllocationGranularity_flags,
) -> Status {
    if g.is_null() || prop.is_null() || !(0..crate::state::count()).contains(&(*prop).location.id) {
        return INVALID_VALUE;
    }
    *g = GRANULARITY;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipMemAddressReserve(
    p: *mut *mut c_void,
    size: usize,
    alignment: usize,
    addr: *mut c_void,
    flags: c_ulonglong,
) -> Status {
    if p.is_null()
        || size == 0
        || !size.is_multiple_of(GRANULARITY)
        || flags != 0
        || !addr.is_null()
    {
        return INVALID_VALUE;
    }
    let Ok(layout) = std::alloc::Layout::from_size_align(size, alignment.max(GRANULARITY)) else {
        return INVALID_VALUE;
    };
    // SAFETY: a non-zero size. Never deallocated: a late access reads memory that is still there.
    let base = std::alloc::alloc_zeroed(layout) as usize;
    if base == 0 {
        return sys::hipErrorOutOfMemory;
    }
    vmm(|v| v.ranges.insert(base, size));
    memory::add_reserved(base, size);
    *p = base as *mut c_void;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipMemAddressFree(p: *mut c_void, size: usize) -> Status {
    let p = p as usize;
    vmm(|v| {
        if v.ranges.get(&p) != Some(&size) || v.chunks.range(p..p + size).next().is_some() {
            return INVALID_VALUE;
        }
        v.ranges.remove(&p);
        memory::remove_reserved(p);
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemCreate(
    h: *mut sys::hipMemGenericAllocationHandle_t,
    size: usize,
    prop: *const sys::hipMemAllocationProp,
    flags: c_ulonglong,
) -> Status {
    if h.is_null() || prop.is_null() || flags != 0 || size == 0 || !size.is_multiple_of(GRANULARITY)
    {
        return INVALID_VALUE;
    }
    if !(0..crate::state::count()).contains(&(*prop).location.id) {
        return INVALID_VALUE;
    }
    // From HIP 7 the requested handle type is a union of two names for one field.
    #[cfg(hip7)]
    // SAFETY: both members of the union are the same integer type, written by the caller.
    let requested = unsafe { (*prop).__bindgen_anon_1.requestedHandleType };
    #[cfg(not(hip7))]
    let requested = (*prop).requestedHandleType;
    let shareable = requested == POSIX_FD;
    *h = new_physical(size, (*prop).location.id, shareable) as sys::hipMemGenericAllocationHandle_t;
    SUCCESS
}

/// A new physical allocation's handle.
pub(crate) fn new_physical(size: usize, ordinal: c_int, shareable: bool) -> usize {
    vmm(|v| {
        v.next += 1;
        let handle = 0x5600_0000 + v.next * 16;
        v.physical.insert(
            handle,
            Physical {
                size,
                ordinal,
                refs: 1,
                mapped: 0,
                shareable,
            },
        );
        handle
    })
}

/// The size of live (not released) physical allocation `h` and whether it is shareable.
pub(crate) fn physical(h: usize) -> Option<(usize, bool)> {
    vmm(|v| {
        let ph = v.physical.get(&h).filter(|ph| ph.refs > 0)?;
        Some((ph.size, ph.shareable))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemRelease(h: sys::hipMemGenericAllocationHandle_t) -> Status {
    vmm(|v| match v.physical.get_mut(&(h as usize)) {
        Some(ph) if ph.refs > 0 => {
            ph.refs -= 1;
            if ph.refs == 0 && ph.mapped == 0 {
                v.physical.remove(&(h as usize));
            }
            SUCCESS
        }
        _ => INVALID_VALUE,
    })
}

/// One more reference to the physical allocation mapped at `addr` (anywhere in its chunk), as HIP's
/// `hipMemRetainAllocationHandle`: each is given back by a `hipMemRelease`.
#[no_mangle]
pub unsafe extern "C" fn hipMemRetainAllocationHandle(
    h: *mut sys::hipMemGenericAllocationHandle_t,
    addr: *mut c_void,
) -> Status {
    let p = addr as usize;
    let handle = vmm(|v| {
        let (&at, c) = v.chunks.range(..=p).next_back()?;
        let handle = c.handle;
        (p < at + c.size).then_some(())?;
        v.physical.get_mut(&handle)?.refs += 1;
        Some(handle)
    });
    match handle {
        Some(handle) if !h.is_null() => {
            *h = handle as sys::hipMemGenericAllocationHandle_t;
            SUCCESS
        }
        _ => INVALID_VALUE,
    }
}

/// The properties a live physical allocation was made with: pinned, its device, and the POSIX
/// descriptor handle type if it is shareable.
#[no_mangle]
pub unsafe extern "C" fn hipMemGetAllocationPropertiesFromHandle(
    prop: *mut sys::hipMemAllocationProp,
    h: sys::hipMemGenericAllocationHandle_t,
) -> Status {
    let Some((ordinal, shareable)) = vmm(|v| {
        let ph = v.physical.get(&(h as usize)).filter(|ph| ph.refs > 0)?;
        Some((ph.ordinal, ph.shareable))
    }) else {
        return INVALID_VALUE;
    };
    if prop.is_null() {
        return INVALID_VALUE;
    }
    // SAFETY: a plain C struct of integers and one pointer: all-zero bytes are valid.
    let mut out: sys::hipMemAllocationProp = std::mem::zeroed();
    out.type_ = 1 as _; // hipMemAllocationTypePinned
    out.location.type_ = 1 as _; // hipMemLocationTypeDevice
    out.location.id = ordinal;
    let requested = if shareable { POSIX_FD } else { 0 };
    #[cfg(hip7)]
    {
        out.__bindgen_anon_1.requestedHandleType = requested;
    }
    #[cfg(not(hip7))]
    {
        out.requestedHandleType = requested;
    }
    *prop = out;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipMemMap(
    p: *mut c_void,
    size: usize,
    offset: usize,
    h: sys::hipMemGenericAllocationHandle_t,
    flags: c_ulonglong,
) -> Status {
    let (p, h) = (p as usize, h as usize);
    let ok = vmm(|v| {
        let fits = range_of(v, p).is_some_and(|(base, len)| p + size <= base + len);
        let free = v
            .chunks
            .range(..p + size)
            .next_back()
            .is_none_or(|(&at, c)| at + c.size <= p);
        let Some(ph) = v.physical.get_mut(&h) else {
            return false;
        };
        if !fits
            || !free
            || offset != 0
            || flags != 0
            || ph.refs == 0
            || ph.size != size
            || !p.is_multiple_of(GRANULARITY)
        {
            return false;
        }
        ph.mapped += 1;
        v.chunks.insert(
            p,
            Chunk {
                size,
                handle: h,
                access: HashMap::new(),
            },
        );
        true
    });
    if !ok {
        return INVALID_VALUE;
    }
    memory::adopt(p, size);
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipMemUnmap(p: *mut c_void, size: usize) -> Status {
    let p = p as usize;
    // The range must be whole chunks, back to back.
    let gone = vmm(|v| {
        let mut at = p;
        let mut found = Vec::new();
        while at < p + size {
            let c = v.chunks.get(&at)?;
            found.push((at, c.size));
            at += c.size;
        }
        (at == p + size && !found.is_empty()).then(|| {
            for (at, _) in &found {
                let c = v.chunks.remove(at).unwrap();
                if let Some(ph) = v.physical.get_mut(&c.handle) {
                    ph.mapped -= 1;
                    if ph.refs == 0 && ph.mapped == 0 {
                        v.physical.remove(&c.handle);
                    }
                }
            }
            found
        })
    });
    let Some(gone) = gone else {
        return INVALID_VALUE;
    };
    let mut g = lock();
    let r = rt(&mut g);
    let (c, name) = host_now(r);
    let what: Arc<str> = format!("hipMemUnmap by {name}").into();
    for (at, len) in gone {
        // Nothing may still use the chunk: the unmap is a free of it, as the host sees it now.
        detector::access(at, at, len, Kind::Free, &c, &what);
        memory::unadopt(at);
    }
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipMemSetAccess(
    p: *mut c_void,
    size: usize,
    desc: *const sys::hipMemAccessDesc,
    count: usize,
) -> Status {
    if desc.is_null() || count == 0 {
        return INVALID_VALUE;
    }
    let p = p as usize;
    let descs = std::slice::from_raw_parts(desc, count);
    if descs.iter().any(|d| {
        !(0..crate::state::count()).contains(&d.location.id) || d.flags > 3 || d.flags == 2
    }) {
        return INVALID_VALUE;
    }
    vmm(|v| {
        let mut at = p;
        let mut covered = Vec::new();
        while at < p + size {
            let Some((&start, c)) = v.chunks.range(..=at).next_back() else {
                return INVALID_VALUE;
            };
            if at >= start + c.size {
                return INVALID_VALUE;
            }
            covered.push(start);
            at = start + c.size;
        }
        for start in covered {
            let c = v.chunks.get_mut(&start).unwrap();
            for d in descs {
                c.access.insert(d.location.id, d.flags as c_ulonglong);
            }
        }
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemGetAccess(
    flags: *mut c_ulonglong,
    location: *const sys::hipMemLocation,
    p: *mut c_void,
) -> Status {
    if flags.is_null() || location.is_null() {
        return INVALID_VALUE;
    }
    let d: c_int = (*location).id;
    let p = p as usize;
    vmm(|v| {
        let Some((&start, c)) = v.chunks.range(..=p).next_back() else {
            return INVALID_VALUE;
        };
        if p >= start + c.size {
            return INVALID_VALUE;
        }
        *flags = c.access.get(&d).copied().unwrap_or(0);
        SUCCESS
    })
}
