//! Memory pools: each device's default pool, pools made with `hipMemPoolCreate`, a device's current pool,
//! access per device, and the attributes, with the used and reserved bytes counted from the stream-ordered
//! allocations still live (the shadow keeps no freed memory: reserved = used).

use crate::{Status, INVALID_VALUE, SUCCESS};
use hip_sys as sys;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

#[derive(Default)]
struct Pools {
    /// Pools of one's own, by handle: their device.
    own: HashMap<usize, i32>,
    next: usize,
    /// Each device's current pool, where `hipDeviceSetMemPool` set one.
    current: HashMap<i32, usize>,
    /// The settable attributes (reuse policies, release threshold) by (pool, attribute).
    attrs: HashMap<(usize, u32), u64>,
    /// Access of other devices than the pool's own, by (pool, device).
    access: HashMap<(usize, i32), u32>,
    /// Bytes in use, and the high-water mark, by pool.
    used: HashMap<usize, (u64, u64)>,
    /// Live stream-ordered allocations: their pool and size.
    of_ptr: HashMap<usize, (usize, u64)>,
    /// Pools of one's own made exportable as a file descriptor (`handleTypes` 1: pool_share.rs).
    shareable: std::collections::HashSet<usize>,
}

static POOLS: Mutex<Option<Pools>> = Mutex::new(None);

fn pools<R>(f: impl FnOnce(&mut Pools) -> R) -> R {
    let mut g = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Pools::default))
}

fn default_pool(d: c_int) -> usize {
    0x7000 + d as usize * 0x10
}

/// The device of a live pool (default or own).
fn device_of(p: &Pools, pool: usize) -> Option<i32> {
    if let Some(d) = p.own.get(&pool) {
        return Some(*d);
    }
    let d = pool.checked_sub(0x7000)? / 0x10;
    (pool >= 0x7000 && pool & 0xf == 0 && (d as c_int) < crate::state::count()).then_some(d as i32)
}

/// The pool an allocation on `device` takes from: `pool` if given (live and of that device), else the
/// device's current pool.
pub(crate) fn pool_for(device: i32, pool: Option<usize>) -> Option<usize> {
    pools(|p| match pool {
        Some(pool) => (device_of(p, pool) == Some(device)).then_some(pool),
        None => Some(
            p.current
                .get(&device)
                .copied()
                .unwrap_or(default_pool(device)),
        ),
    })
}

pub(crate) fn allocated(pool: usize, ptr: usize, bytes: u64) {
    pools(|p| {
        p.of_ptr.insert(ptr, (pool, bytes));
        let (used, high) = p.used.entry(pool).or_default();
        *used += bytes;
        *high = (*high).max(*used);
    });
}

/// Whether `pool` is a live pool of one's own made exportable.
pub(crate) fn is_shareable(pool: usize) -> bool {
    pools(|p| p.shareable.contains(&pool))
}

/// The pool a live stream-ordered allocation at `ptr` (its base) came from.
pub(crate) fn pool_of(ptr: usize) -> Option<usize> {
    pools(|p| p.of_ptr.get(&ptr).map(|&(pool, _)| pool))
}

pub(crate) fn freed(ptr: usize) {
    pools(|p| {
        if let Some((pool, bytes)) = p.of_ptr.remove(&ptr) {
            let (used, _) = p.used.entry(pool).or_default();
            *used -= bytes;
        }
    });
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetDefaultMemPool(
    pool: *mut sys::hipMemPool_t,
    d: c_int,
) -> Status {
    if pool.is_null() || !(0..crate::state::count()).contains(&d) {
        return INVALID_VALUE;
    }
    *pool = default_pool(d) as sys::hipMemPool_t;
    SUCCESS
}

/// Checks what HIP checks: pinned memory (1) on a device (location type 1) that exists.
#[no_mangle]
pub unsafe extern "C" fn hipMemPoolCreate(
    pool: *mut sys::hipMemPool_t,
    props: *const sys::hipMemPoolProps,
) -> Status {
    if pool.is_null() || props.is_null() {
        return INVALID_VALUE;
    }
    let props = &*props;
    let d = props.location.id;
    if props.allocType != 1 || props.location.type_ != 1 || !(0..crate::state::count()).contains(&d)
    {
        return INVALID_VALUE;
    }
    let shareable = props.handleTypes == 1; // hipMemHandleTypePosixFileDescriptor
    let h = pools(|p| {
        p.next += 1;
        let h = 0x9000_0000 + p.next * 0x10;
        p.own.insert(h, d);
        if shareable {
            p.shareable.insert(h);
        }
        h
    });
    *pool = h as sys::hipMemPool_t;
    SUCCESS
}

/// Destroy pool `h` of one's own (`hipMemPoolDestroy`, pool_share.rs, which also destroys imported
/// pools): a default pool, or one already destroyed, is refused. Destroying a device's current pool is
/// reported: the device would go on allocating from it.
pub(crate) fn destroy_own(h: usize) -> Status {
    let current_of = pools(|p| {
        p.own.remove(&h)?;
        p.shareable.remove(&h);
        Some(p.current.iter().find(|(_, c)| **c == h).map(|(d, _)| *d))
    });
    match current_of {
        None => INVALID_VALUE,
        Some(Some(d)) => {
            crate::detector::report(format!(
                "hipMemPoolDestroy of device {d}'s current pool (hipDeviceSetMemPool): its next \
                 hipMallocAsync takes from a destroyed pool"
            ));
            SUCCESS
        }
        Some(None) => SUCCESS,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceSetMemPool(d: c_int, pool: sys::hipMemPool_t) -> Status {
    pools(|p| {
        if device_of(p, pool as usize) != Some(d) {
            return INVALID_VALUE;
        }
        p.current.insert(d, pool as usize);
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetMemPool(pool: *mut sys::hipMemPool_t, d: c_int) -> Status {
    if pool.is_null() || !(0..crate::state::count()).contains(&d) {
        return INVALID_VALUE;
    }
    *pool = pools(|p| p.current.get(&d).copied().unwrap_or(default_pool(d))) as sys::hipMemPool_t;
    SUCCESS
}

/// Reuse policies (1-3) are `int`s, on by default; the rest 64-bit: the release threshold (4), reserved
/// and used bytes now (5, 7) and their high-water marks (6, 8).
#[no_mangle]
pub unsafe extern "C" fn hipMemPoolGetAttribute(
    pool: sys::hipMemPool_t,
    attr: u32,
    v: *mut c_void,
) -> Status {
    let h = pool as usize;
    pools(|p| {
        if v.is_null() || device_of(p, h).is_none() {
            return INVALID_VALUE;
        }
        let (used, high) = p.used.get(&h).copied().unwrap_or_default();
        match attr {
            1..=3 => *(v as *mut c_int) = *p.attrs.get(&(h, attr)).unwrap_or(&1) as c_int,
            4 => *(v as *mut u64) = *p.attrs.get(&(h, attr)).unwrap_or(&0),
            5 | 7 => *(v as *mut u64) = used,
            6 | 8 => *(v as *mut u64) = high,
            _ => return INVALID_VALUE,
        }
        SUCCESS
    })
}

/// The high-water marks can only be reset (to 0, which restarts them from the current value); the
/// current byte counts cannot be set.
#[no_mangle]
pub unsafe extern "C" fn hipMemPoolSetAttribute(
    pool: sys::hipMemPool_t,
    attr: u32,
    v: *mut c_void,
) -> Status {
    let h = pool as usize;
    pools(|p| {
        if v.is_null() || device_of(p, h).is_none() {
            return INVALID_VALUE;
        }
        match attr {
            1..=3 => {
                p.attrs
                    .insert((h, attr), (*(v as *const c_int) != 0) as u64);
            }
            4 => {
                p.attrs.insert((h, attr), *(v as *const u64));
            }
            6 | 8 if *(v as *const u64) == 0 => {
                let (used, high) = p.used.entry(h).or_default();
                *high = *used;
            }
            _ => return INVALID_VALUE,
        }
        SUCCESS
    })
}

/// The pool's own device always has read-write access (anything else is refused); other devices start
/// with none.
#[no_mangle]
pub unsafe extern "C" fn hipMemPoolSetAccess(
    pool: sys::hipMemPool_t,
    desc: *const sys::hipMemAccessDesc,
    count: usize,
) -> Status {
    let h = pool as usize;
    if desc.is_null() && count > 0 {
        return INVALID_VALUE;
    }
    pools(|p| {
        let Some(own) = device_of(p, h) else {
            return INVALID_VALUE;
        };
        for d in std::slice::from_raw_parts(desc, count) {
            #[allow(clippy::unnecessary_cast)] // HIP's enum type: u32 or i32 by version
            let (dev, flags) = (d.location.id, d.flags as u32);
            if d.location.type_ != 1 || !(0..crate::state::count()).contains(&dev) {
                return sys::hipErrorInvalidDevice;
            }
            if !matches!(flags, 0 | 1 | 3) || (dev == own && flags != 3) {
                return INVALID_VALUE;
            }
            p.access.insert((h, dev), flags);
        }
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolGetAccess(
    flags: *mut sys::hipMemAccessFlags,
    pool: sys::hipMemPool_t,
    location: *mut sys::hipMemLocation,
) -> Status {
    let h = pool as usize;
    if flags.is_null() || location.is_null() {
        return INVALID_VALUE;
    }
    let dev = (*location).id;
    pools(|p| {
        let Some(own) = device_of(p, h) else {
            return INVALID_VALUE;
        };
        if !(0..crate::state::count()).contains(&dev) {
            return sys::hipErrorInvalidDevice;
        }
        let f = if dev == own {
            3
        } else {
            p.access.get(&(h, dev)).copied().unwrap_or(0)
        };
        *flags = f as _;
        SUCCESS
    })
}

/// Shadow memory is never returned to the system: nothing to trim.
#[no_mangle]
pub unsafe extern "C" fn hipMemPoolTrimTo(pool: sys::hipMemPool_t, _keep: usize) -> Status {
    if pools(|p| device_of(p, pool as usize)).is_none() {
        return INVALID_VALUE;
    }
    SUCCESS
}
