//! Modules and kernels: any image loads; a launch runs nothing but makes the memory accesses its test
//! declared (`hip_rs_shadow_declare_kernel`), for the declared duration.

use crate::clock::Clock;
use crate::detector::Kind;
use crate::graph_params::NodeParams;
use crate::memory::{self, find};
use crate::streams::{self, lock, rt, Action};
use crate::{Status, INVALID_HANDLE, INVALID_VALUE, SUCCESS};
use hip_sys as sys;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Default)]
struct Decl {
    roles: Vec<u8>,
    duration_us: u64,
}

#[derive(Default)]
struct Table {
    decls: HashMap<String, Decl>,
    functions: HashMap<usize, String>,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn table<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    let mut g = TABLE.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Table::default))
}

/// Declare kernel `name`'s parameters: per parameter 0 (not a pointer), `r` read, `w` write, `b` both.
/// Each pointer's extent is the whole allocation containing it.
#[no_mangle]
pub unsafe extern "C" fn hip_rs_shadow_declare_kernel(
    name: *const c_char,
    roles: *const u8,
    n: usize,
) {
    let name = CStr::from_ptr(name).to_string_lossy().into_owned();
    let roles = std::slice::from_raw_parts(roles, n).to_vec();
    table(|t| t.decls.entry(name).or_default().roles = roles);
}

/// Declare how long kernel `name` runs, in microseconds.
#[no_mangle]
pub unsafe extern "C" fn hip_rs_shadow_declare_kernel_duration(name: *const c_char, us: u64) {
    let name = CStr::from_ptr(name).to_string_lossy().into_owned();
    table(|t| t.decls.entry(name).or_default().duration_us = us);
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadData(
    m: *mut sys::hipModule_t,
    image: *const c_void,
) -> Status {
    if m.is_null() || image.is_null() {
        return INVALID_VALUE;
    }
    *m = streams::new_handle() as sys::hipModule_t;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleLoad(m: *mut sys::hipModule_t, path: *const c_char) -> Status {
    hipModuleLoadData(m, path.cast())
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleUnload(_m: sys::hipModule_t) -> Status {
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleGetFunction(
    f: *mut sys::hipFunction_t,
    _m: sys::hipModule_t,
    name: *const c_char,
) -> Status {
    if f.is_null() || name.is_null() {
        return INVALID_VALUE;
    }
    let h = streams::new_handle();
    let name = CStr::from_ptr(name).to_string_lossy().into_owned();
    table(|t| t.functions.insert(h, name));
    *f = h as sys::hipFunction_t;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleGetGlobal(
    _p: *mut sys::hipDeviceptr_t,
    _bytes: *mut usize,
    _m: sys::hipModule_t,
    _name: *const c_char,
) -> Status {
    sys::hipErrorNotFound
}

#[no_mangle]
pub unsafe extern "C" fn hipFuncGetAttribute(
    v: *mut c_int,
    attr: sys::hipFunction_attribute,
    _f: sys::hipFunction_t,
) -> Status {
    if v.is_null() {
        return INVALID_VALUE;
    }
    *v = if attr == sys::HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK {
        1024
    } else {
        0
    };
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleOccupancyMaxPotentialBlockSize(
    grid: *mut c_int,
    block: *mut c_int,
    _f: sys::hipFunction_t,
    _shared: usize,
    limit: c_int,
) -> Status {
    if grid.is_null() || block.is_null() {
        return INVALID_VALUE;
    }
    *block = if limit > 0 { limit.min(1024) } else { 1024 };
    *grid = 104 * 2;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(
    n: *mut c_int,
    _f: sys::hipFunction_t,
    block: c_int,
    _shared: usize,
) -> Status {
    if n.is_null() || block <= 0 {
        return INVALID_VALUE;
    }
    *n = (2048 / block).max(1);
    SUCCESS
}

/// As without flags: the shadow has no caching preference to override (flags other than 0 and 1 are
/// refused, as CUDA refuses them).
#[no_mangle]
pub unsafe extern "C" fn hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    n: *mut c_int,
    f: sys::hipFunction_t,
    block: c_int,
    shared: usize,
    flags: c_uint,
) -> Status {
    if flags > 1 {
        return INVALID_VALUE;
    }
    hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, shared)
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleLaunchKernel(
    f: sys::hipFunction_t,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    shared: c_uint,
    s: sys::hipStream_t,
    params: *mut *mut c_void,
    _extra: *mut *mut c_void,
) -> Status {
    let dims = [gx, gy, gz, bx, by, bz];
    launch("hipModuleLaunchKernel", f, dims, shared, s, params)
}

/// A cooperative launch (HIP >= 5.7 declares it): as `hipModuleLaunchKernel` for ordering and the race
/// detector; the co-residency the real runtime checks is the caller's (the crate checks it against
/// `hipModuleOccupancyMaxActiveBlocksPerMultiprocessor` and the multiprocessor count, as answered here).
#[no_mangle]
pub unsafe extern "C" fn hipModuleLaunchCooperativeKernel(
    f: sys::hipFunction_t,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    shared: c_uint,
    s: sys::hipStream_t,
    params: *mut *mut c_void,
) -> Status {
    let dims = [gx, gy, gz, bx, by, bz];
    launch(
        "hipModuleLaunchCooperativeKernel",
        f,
        dims,
        shared,
        s,
        params,
    )
}

/// A kernel launch named `what` (`dims`: the grid's x, y, z, then the block's): its declared reads and
/// writes logged on `s` after the kernel's duration; a capture records its configuration.
unsafe fn launch(
    what: &str,
    f: sys::hipFunction_t,
    [gx, gy, gz, bx, by, bz]: [c_uint; 6],
    shared: c_uint,
    s: sys::hipStream_t,
    params: *mut *mut c_void,
) -> Status {
    let grid = sys::dim3 {
        x: gx,
        y: gy,
        z: gz,
    };
    let block = sys::dim3 {
        x: bx,
        y: by,
        z: bz,
    };
    let config = NodeParams::kernel(f as usize, grid, block, shared);
    let Some((name, act)) = kernel_action(f, params) else {
        return INVALID_HANDLE;
    };
    let mut g = lock();
    let rt = rt(&mut g);
    if !rt.streams.contains_key(&(streams::key(s as usize))) {
        return INVALID_HANDLE;
    }
    let call = format!("{what}({name})");
    crate::graph::submit_with(
        rt,
        streams::key(s as usize),
        &call,
        sys::hipGraphNodeTypeKernel,
        act,
        Some(config),
    );
    SUCCESS
}

/// The kernel `f`'s name and what a launch of it with `params` does (logs its declared accesses).
///
/// # Safety
/// `params` is null or holds a pointer per declared parameter, each to the argument's bytes.
pub unsafe fn kernel_action(
    f: sys::hipFunction_t,
    params: *mut *mut c_void,
) -> Option<(String, Action)> {
    let (name, decl) = table(|t| {
        let name = t.functions.get(&(f as usize))?.clone();
        let decl = t.decls.get(&name).cloned().unwrap_or_default();
        Some((name, decl))
    })?;
    let mut accesses = Vec::new();
    for (i, &role) in decl.roles.iter().enumerate() {
        if role == 0 || params.is_null() {
            continue;
        }
        let p = *(*params.add(i) as *const usize);
        // A texture or surface object: its descriptor is read, and its memory used as the role says. A
        // growable buffer's chunks: the whole mapped run from the pointer on.
        let target = match crate::texture::object_memory(p) {
            Some(mem) => {
                accesses.push((p, 1, Kind::Read));
                Some(mem)
            }
            None => {
                crate::vmm::mapped_run(p).or_else(|| find(p).map(|(base, len, _, _)| (base, len)))
            }
        };
        if let Some((base, len)) = target {
            if role == b'r' || role == b'b' {
                accesses.push((base, len, Kind::Read));
            }
            if role == b'w' || role == b'b' {
                accesses.push((base, len, Kind::Write));
            }
        }
    }
    let us = decl.duration_us;
    let act: Action = Arc::new(move |c: &Clock, w: &Arc<str>| {
        std::thread::sleep(Duration::from_micros(us));
        for &(p, n, k) in &accesses {
            memory::log(p, n, k, c, w);
        }
    });
    Some((name, act))
}
