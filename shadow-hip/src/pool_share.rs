//! Pools shared between processes (`hipMemPoolExportToShareableHandle`, `hipMemPoolImportFromShareableHandle`,
//! `hipMemPoolExportPointer`, `hipMemPoolImportPointer`) within one process: the test's "processes" are
//! threads sharing the shadow, as with `hipIpc*` (ipc.rs). The exported descriptor is a real one, of an
//! unlinked temporary file that holds the pool's handle, so it can be duplicated and passed on as a
//! descriptor is. An imported pointer is the exporter's very address, counted until the importer frees it
//! (`hipFreeAsync`), which is logged as a last read of the allocation at that point of the stream (the
//! shadow cannot tell the import's uses from the exporter's): a free while queued work of the exporter
//! still writes the memory is reported, and so is the exporter's free not ordered after it.

use crate::detector::Kind;
use crate::memory;
use crate::streams::{self, Action, Rt};
use crate::{Status, INVALID_VALUE, SUCCESS};
use hip_sys as sys;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::fs::File;
use std::io::Write;
use std::mem::ManuallyDrop;
use std::os::fd::{FromRawFd, IntoRawFd};
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex};

const POOL_TAG: u64 = 0x5348_4950_504f_4f4c; // "SHIPPOOL"
const PTR_TAG: u64 = 0x5348_4950_5054_5231; // "SHIPPTR1"
/// `hipMemHandleTypePosixFileDescriptor`.
const POSIX_FD: sys::hipMemAllocationHandleType = 1;

#[derive(Default)]
struct Shared {
    /// Imported pool handles: the exporter's pool each names.
    imported: HashMap<usize, usize>,
    next: usize,
    /// Imported pointers not yet freed: (base, imported pool) -> count.
    open: HashMap<(usize, usize), usize>,
}

static SHARED: Mutex<Option<Shared>> = Mutex::new(None);

fn shared<R>(f: impl FnOnce(&mut Shared) -> R) -> R {
    let mut g = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Shared::default))
}

pub(crate) fn words(bytes: &[u8]) -> [u64; 3] {
    let mut out = [0u64; 3];
    for (i, w) in out.iter_mut().enumerate() {
        *w = u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap());
    }
    out
}

/// A descriptor of an unlinked temporary file holding `words`.
pub(crate) fn descriptor(words: [u64; 2]) -> Option<c_int> {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path =
        std::env::temp_dir().join(format!("hip-rs-shadow-export-{}-{n}", std::process::id()));
    let mut f = File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .ok()?;
    let _ = std::fs::remove_file(&path);
    f.write_all(&[words[0].to_le_bytes(), words[1].to_le_bytes()].concat())
        .ok()?;
    Some(f.into_raw_fd())
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolExportToShareableHandle(
    handle: *mut c_void,
    pool: sys::hipMemPool_t,
    handle_type: sys::hipMemAllocationHandleType,
    flags: u32,
) -> Status {
    let pool = pool as usize;
    if handle.is_null() || handle_type != POSIX_FD || flags != 0 {
        return INVALID_VALUE;
    }
    if !crate::pools::is_shareable(pool) {
        return INVALID_VALUE;
    }
    let Some(fd) = descriptor([POOL_TAG, pool as u64]) else {
        eprintln!(
            "hip-rs shadow: hipMemPoolExportToShareableHandle could not make a temporary file"
        );
        return sys::hipErrorOutOfMemory;
    };
    *handle.cast::<c_int>() = fd;
    SUCCESS
}

/// Reads the descriptor through `handle` (an `int`, as AMD's HIP does).
#[no_mangle]
pub unsafe extern "C" fn hipMemPoolImportFromShareableHandle(
    out: *mut sys::hipMemPool_t,
    handle: *mut c_void,
    handle_type: sys::hipMemAllocationHandleType,
    flags: u32,
) -> Status {
    if out.is_null() || handle.is_null() || handle_type != POSIX_FD || flags != 0 {
        return INVALID_VALUE;
    }
    let fd = *handle.cast::<c_int>();
    if fd < 0 {
        return INVALID_VALUE;
    }
    // SAFETY: the caller's descriptor, borrowed: ManuallyDrop never closes it.
    let f = ManuallyDrop::new(File::from_raw_fd(fd));
    let mut bytes = [0u8; 24];
    if f.read_at(&mut bytes[..16], 0).ok() != Some(16) {
        return INVALID_VALUE;
    }
    let [tag, pool, _] = words(&bytes);
    let pool = pool as usize;
    if tag != POOL_TAG || !crate::pools::is_shareable(pool) {
        return INVALID_VALUE;
    }
    let h = shared(|s| {
        s.next += 1;
        let h = 0xb000_0000 + s.next * 0x10;
        s.imported.insert(h, pool);
        h
    });
    *out = h as sys::hipMemPool_t;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolExportPointer(
    data: *mut sys::hipMemPoolPtrExportData,
    ptr: *mut c_void,
) -> Status {
    let Some(data) = data.as_mut() else {
        return INVALID_VALUE;
    };
    match crate::pools::pool_of(ptr as usize) {
        Some(pool) if crate::pools::is_shareable(pool) => {
            let w = [PTR_TAG, ptr as u64, pool as u64];
            for (i, x) in w.iter().enumerate() {
                data.reserved[i * 8..i * 8 + 8].copy_from_slice(&x.to_le_bytes());
            }
            SUCCESS
        }
        _ => INVALID_VALUE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemPoolImportPointer(
    out: *mut *mut c_void,
    pool: sys::hipMemPool_t,
    data: *mut sys::hipMemPoolPtrExportData,
) -> Status {
    let (Some(data), false) = (data.as_ref(), out.is_null()) else {
        return INVALID_VALUE;
    };
    let [tag, base, exported] = words(&data.reserved);
    let (base, exported, h) = (base as usize, exported as usize, pool as usize);
    if tag != PTR_TAG || shared(|s| s.imported.get(&h).copied()) != Some(exported) {
        return INVALID_VALUE;
    }
    // An allocation freed since the export (or another one at its address) is refused.
    if crate::pools::pool_of(base) != Some(exported) {
        return INVALID_VALUE;
    }
    shared(|s| *s.open.entry((base, h)).or_default() += 1);
    *out = base as *mut c_void;
    SUCCESS
}

/// For `hipFreeAsync(ptr)` on stream `sid`: `Some` if `ptr` is an imported pointer, which is not freed
/// but closed, logged as a read of the allocation at this point of the stream.
pub(crate) fn free_import(rt: &mut Rt, ptr: usize, sid: usize) -> Option<Status> {
    shared(|s| {
        let key = *s.open.keys().find(|k| k.0 == ptr)?;
        let n = s.open.get_mut(&key)?;
        *n -= 1;
        if *n == 0 {
            s.open.remove(&key);
        }
        Some(())
    })?;
    let noop: Action = Arc::new(|_: &crate::clock::Clock, _: &Arc<str>| {});
    let (_, clock) = streams::push(
        rt,
        sid,
        "hipFreeAsync",
        Vec::new(),
        &crate::clock::Clock::default(),
        noop,
    );
    let what: Arc<str> = format!(
        "hipFreeAsync of an imported pool buffer on {}",
        streams::stream_name(sid)
    )
    .into();
    if let Some((base, len)) = memory::live_block(ptr) {
        memory::log(base, len, Kind::Read, &clock, &what);
    }
    Some(SUCCESS)
}

/// An imported pool is destroyed here (destroying one while pointers imported from it are not freed is
/// reported); a pool of one's own by `pools::destroy_own`.
#[no_mangle]
pub unsafe extern "C" fn hipMemPoolDestroy(pool: sys::hipMemPool_t) -> Status {
    let h = pool as usize;
    let open = shared(|s| {
        s.imported.remove(&h)?;
        Some(s.open.keys().filter(|k| k.1 == h).count())
    });
    match open {
        None => crate::pools::destroy_own(h),
        Some(open) => {
            if open > 0 {
                crate::detector::report(format!(
                    "hipMemPoolDestroy of an imported pool with {open} buffer(s) imported from it not \
                     yet freed (hipFreeAsync)"
                ));
            }
            SUCCESS
        }
    }
}
