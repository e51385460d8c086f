//! Arrays, pitched allocations, 2-D/3-D copies to and from arrays, texture and surface objects. An array
//! is a block of packed rows (elements of its channel format) with its extent remembered; an object is a
//! one-byte descriptor block naming the memory it reads: a kernel given the object reads the descriptor
//! and reads (texture, or a surface passed as read) or writes (a surface passed as written) that memory,
//! and destroying the object frees the descriptor, which the detector reports if a queued kernel still
//! uses it.

use crate::clock::Clock;
use crate::detector::Kind;
use crate::memory::{self, find, MemKind, Shape};
use crate::streams::{self, host_join_local, lock, rt};
use crate::{Status, INVALID_VALUE, SUCCESS};
use hip_sys as sys;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// An array's layout: bytes per element, elements per row, rows per slice, slices.
#[derive(Clone, Copy)]
struct Layout {
    elem: usize,
    width: usize,
    rows: usize,
    slices: usize,
}

impl Layout {
    fn row(&self) -> usize {
        self.elem * self.width
    }
}

#[derive(Default)]
struct Tables {
    arrays: HashMap<usize, Layout>,
    /// Mipmapped arrays: one block holding every level back to back, its base the handle -> the levels'
    /// handles (their addresses in the block).
    mipmaps: HashMap<usize, Vec<usize>>,
    /// A mipmapped array's levels by handle: arrays the mipmapped array owns (`hipFreeArray` refuses
    /// them).
    levels: HashMap<usize, Layout>,
    /// Descriptor block -> (base, length) of the memory the object reads.
    objects: HashMap<usize, (usize, usize)>,
}

static TABLES: Mutex<Option<Tables>> = Mutex::new(None);

fn tables<R>(f: impl FnOnce(&mut Tables) -> R) -> R {
    let mut g = TABLES.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Tables::default))
}

/// The memory a texture or surface object at `p` reads, if `p` is one's descriptor.
pub fn object_memory(p: usize) -> Option<(usize, usize)> {
    tables(|t| t.objects.get(&p).copied())
}

fn elem_bytes(d: &sys::hipChannelFormatDesc) -> usize {
    [d.x, d.y, d.z, d.w]
        .iter()
        .map(|&b| b.max(0) as usize)
        .sum::<usize>()
        / 8
}

/// Allocate `len` bytes of `kind` ordered after the host's view (as hipMalloc).
fn alloc_now(len: usize, kind: MemKind) -> usize {
    let mut g = lock();
    let rt = rt(&mut g);
    let (ptr, freed) = memory::alloc(rt, len, kind, 0, None);
    host_join_local(rt, &freed);
    ptr
}

unsafe fn new_array(
    a: *mut sys::hipArray_t,
    desc: *const sys::hipChannelFormatDesc,
    w: usize,
    h: usize,
    d: usize,
) -> Status {
    if a.is_null() || desc.is_null() || w == 0 {
        return INVALID_VALUE;
    }
    let layout = Layout {
        elem: elem_bytes(&*desc),
        width: w,
        rows: h.max(1),
        slices: d.max(1),
    };
    if layout.elem == 0 {
        return INVALID_VALUE;
    }
    let ptr = alloc_now(layout.row() * layout.rows * layout.slices, MemKind::Array);
    tables(|t| t.arrays.insert(ptr, layout));
    *a = ptr as sys::hipArray_t;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipMallocArray(
    a: *mut sys::hipArray_t,
    desc: *const sys::hipChannelFormatDesc,
    width: usize,
    height: usize,
    _flags: u32,
) -> Status {
    new_array(a, desc, width, height, 0)
}

#[no_mangle]
pub unsafe extern "C" fn hipMalloc3DArray(
    a: *mut sys::hipArray_t,
    desc: *const sys::hipChannelFormatDesc,
    e: sys::hipExtent,
    _flags: u32,
) -> Status {
    new_array(a, desc, e.width, e.height, e.depth)
}

/// Free `p` (an array or an object descriptor) in the host's order: a write of the whole block.
fn free_now(p: usize, kind: MemKind, call: &str) -> Status {
    let mut g = lock();
    let rt = rt(&mut g);
    let (c, name) = streams::host_now(rt);
    let what: Arc<str> = format!("{call} by {name}").into();
    match memory::free(p, &[kind], &c, &what, None) {
        Some(()) => SUCCESS,
        None => INVALID_VALUE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipFreeArray(a: sys::hipArray_t) -> Status {
    let p = a as usize;
    if tables(|t| t.arrays.remove(&p)).is_none() {
        return INVALID_VALUE;
    }
    free_now(p, MemKind::Array, "hipFreeArray")
}

/// Rows padded to 128 bytes, as a real runtime pads to its alignment.
fn pitch_of(width: usize) -> usize {
    width.div_ceil(128).max(1) * 128
}

#[no_mangle]
pub unsafe extern "C" fn hipMallocPitch(
    p: *mut *mut c_void,
    pitch: *mut usize,
    width: usize,
    height: usize,
) -> Status {
    if p.is_null() || pitch.is_null() {
        return INVALID_VALUE;
    }
    *pitch = pitch_of(width);
    *p = alloc_now(*pitch * height, MemKind::Device) as *mut c_void;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipMalloc3D(p: *mut sys::hipPitchedPtr, e: sys::hipExtent) -> Status {
    if p.is_null() {
        return INVALID_VALUE;
    }
    let pitch = pitch_of(e.width);
    let ptr = alloc_now(pitch * e.height * e.depth, MemKind::Device);
    *p = sys::hipPitchedPtr {
        ptr: ptr as *mut c_void,
        pitch,
        xsize: e.width,
        ysize: e.height,
    };
    SUCCESS
}

fn layout_of(a: usize) -> Option<Layout> {
    tables(|t| t.arrays.get(&a).or_else(|| t.levels.get(&a)).copied())
}

/// A mipmapped array of `levels` levels of `e`, each side halved per level (at least 1; a side of 0
/// stays 0, as HIP does), as one block.
#[no_mangle]
pub unsafe extern "C" fn hipMallocMipmappedArray(
    m: *mut sys::hipMipmappedArray_t,
    desc: *const sys::hipChannelFormatDesc,
    e: sys::hipExtent,
    levels: u32,
    _flags: u32,
) -> Status {
    if m.is_null() || desc.is_null() || e.width == 0 || levels == 0 {
        return INVALID_VALUE;
    }
    let elem = elem_bytes(&*desc);
    let largest = e.width.max(e.height).max(e.depth);
    if elem == 0 || levels > usize::BITS - largest.leading_zeros() {
        return INVALID_VALUE;
    }
    let half = |n: usize, l: u32| if n == 0 { 0 } else { (n >> l).max(1) };
    let layouts: Vec<Layout> = (0..levels)
        .map(|l| Layout {
            elem,
            width: half(e.width, l),
            rows: half(e.height, l).max(1),
            slices: half(e.depth, l).max(1),
        })
        .collect();
    let sizes: Vec<usize> = layouts
        .iter()
        .map(|l| l.row() * l.rows * l.slices)
        .collect();
    let base = alloc_now(sizes.iter().sum(), MemKind::Array);
    let mut at = base;
    tables(|t| {
        let mut handles = Vec::new();
        for (layout, size) in layouts.into_iter().zip(sizes) {
            t.levels.insert(at, layout);
            handles.push(at);
            at += size;
        }
        t.mipmaps.insert(base, handles);
    });
    *m = base as sys::hipMipmappedArray_t;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn hipGetMipmappedArrayLevel(
    a: *mut sys::hipArray_t,
    m: sys::hipMipmappedArray_const_t,
    level: u32,
) -> Status {
    let handle = tables(|t| t.mipmaps.get(&(m as usize))?.get(level as usize).copied());
    match handle {
        Some(h) if !a.is_null() => {
            *a = h as sys::hipArray_t;
            SUCCESS
        }
        _ => INVALID_VALUE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipFreeMipmappedArray(m: sys::hipMipmappedArray_t) -> Status {
    let p = m as usize;
    let Some(handles) = tables(|t| t.mipmaps.remove(&p)) else {
        return INVALID_VALUE;
    };
    tables(|t| {
        for h in &handles {
            t.levels.remove(h);
        }
    });
    free_now(p, MemKind::Array, "hipFreeMipmappedArray")
}

/// A queued copy of several 2-D shapes (one per slice) as one operation.
fn submit_shapes(shapes: Vec<Shape>, s: sys::hipStream_t, call: &str) -> Status {
    let mut g = lock();
    let rt = rt(&mut g);
    let sid = streams::key(s as usize);
    if !rt.streams.contains_key(&sid) {
        return crate::INVALID_HANDLE;
    }
    crate::graph::submit(
        rt,
        sid,
        call,
        sys::hipGraphNodeTypeMemcpy,
        copy_action(shapes),
    );
    SUCCESS
}

/// Copy every shape, each logged as a read of its source and a write of its destination.
pub(crate) fn copy_action(shapes: Vec<Shape>) -> streams::Action {
    Arc::new(move |c: &Clock, w: &Arc<str>| {
        for sh in &shapes {
            memory::log(sh.src, sh.src_span(), Kind::Read, c, w);
            memory::log(sh.dst, sh.dst_span(), Kind::Write, c, w);
        }
        for sh in &shapes {
            sh.write(&sh.read());
        }
    })
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DToArrayAsync(
    dst: sys::hipArray_t,
    x_bytes: usize,
    y: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    _kind: u32,
    s: sys::hipStream_t,
) -> Status {
    let Some(l) = layout_of(dst as usize) else {
        return INVALID_VALUE;
    };
    if x_bytes + width > l.row() || y + height > l.rows || width > spitch {
        return INVALID_VALUE;
    }
    let shape = Shape {
        dst: dst as usize + y * l.row() + x_bytes,
        dpitch: l.row(),
        src: src as usize,
        spitch,
        width,
        height,
    };
    submit_shapes(vec![shape], s, "hipMemcpy2DToArrayAsync")
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DFromArrayAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: sys::hipArray_const_t,
    x_bytes: usize,
    y: usize,
    width: usize,
    height: usize,
    _kind: u32,
    s: sys::hipStream_t,
) -> Status {
    let Some(l) = layout_of(src as usize) else {
        return INVALID_VALUE;
    };
    if x_bytes + width > l.row() || y + height > l.rows || width > dpitch {
        return INVALID_VALUE;
    }
    let shape = Shape {
        dst: dst as usize,
        dpitch,
        src: src as usize + y * l.row() + x_bytes,
        spitch: l.row(),
        width,
        height,
    };
    submit_shapes(vec![shape], s, "hipMemcpy2DFromArrayAsync")
}

/// One side of a 3-D copy: its first byte at (x in bytes, y, z), its pitch, rows per slice, and its
/// extent in bytes x rows x slices for the bounds check.
struct Side {
    base: usize,
    pitch: usize,
    rows: usize,
    limit: (usize, usize, usize),
}

unsafe fn side(
    array: sys::hipArray_t,
    pos: sys::hipPos,
    ptr: sys::hipPitchedPtr,
    elem: &mut usize,
) -> Option<(Side, usize)> {
    if !array.is_null() {
        let l = layout_of(array as usize)?;
        *elem = l.elem;
        let x = pos.x * l.elem;
        let side = Side {
            base: array as usize,
            pitch: l.row(),
            rows: l.rows,
            limit: (l.row(), l.rows, l.slices),
        };
        return Some((side, x));
    }
    let (base, len, _, _) = find(ptr.ptr as usize)?;
    let rows = ptr.ysize.max(1);
    let slices = (base + len - ptr.ptr as usize) / (ptr.pitch * rows).max(1);
    let side = Side {
        base: ptr.ptr as usize,
        pitch: ptr.pitch,
        rows,
        limit: (ptr.pitch, rows, slices),
    };
    Some((side, pos.x))
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy3DAsync(
    p: *const sys::hipMemcpy3DParms,
    s: sys::hipStream_t,
) -> Status {
    match p.as_ref().and_then(|p| shapes_3d(p)) {
        Some(shapes) => submit_shapes(shapes, s, "hipMemcpy3DAsync"),
        None => INVALID_VALUE,
    }
}

/// A 3-D copy's slices as 2-D shapes, or None for parameters HIP refuses (an unknown side, a box past
/// a side's extent).
pub(crate) unsafe fn shapes_3d(p: &sys::hipMemcpy3DParms) -> Option<Vec<Shape>> {
    let mut elem = 0;
    let (src, sx) = side(p.srcArray, p.srcPos, p.srcPtr, &mut elem)?;
    let (dst, dx) = side(p.dstArray, p.dstPos, p.dstPtr, &mut elem)?;
    // Elements when an array takes part, bytes between pitched memories.
    let any_array = !p.srcArray.is_null() || !p.dstArray.is_null();
    let width = if any_array {
        p.extent.width * elem
    } else {
        p.extent.width
    };
    let (h, d) = (p.extent.height, p.extent.depth);
    let fits = |sd: &Side, x: usize, pos: sys::hipPos| {
        x + width <= sd.limit.0 && pos.y + h <= sd.limit.1 && pos.z + d <= sd.limit.2
    };
    if !fits(&src, sx, p.srcPos) || !fits(&dst, dx, p.dstPos) {
        return None;
    }
    let at = |sd: &Side, x: usize, pos: sys::hipPos, z: usize| {
        sd.base + ((pos.z + z) * sd.rows + pos.y) * sd.pitch + x
    };
    let shapes = (0..d)
        .map(|z| Shape {
            dst: at(&dst, dx, p.dstPos, z),
            dpitch: dst.pitch,
            src: at(&src, sx, p.srcPos, z),
            spitch: src.pitch,
            width,
            height: h,
        })
        .collect();
    Some(shapes)
}

/// The memory a resource description names: (base, length) of the array, or of the allocation holding
/// the linear or pitched pointer.
unsafe fn resource(r: &sys::hipResourceDesc) -> Option<(usize, usize)> {
    let p = match r.resType {
        sys::hipResourceTypeArray => {
            let a = r.res.array.array as usize;
            layout_of(a)?;
            a
        }
        sys::hipResourceTypeMipmappedArray => {
            let m = r.res.mipmap.mipmap as usize;
            tables(|t| t.mipmaps.contains_key(&m)).then_some(m)?
        }
        sys::hipResourceTypeLinear => r.res.linear.devPtr as usize,
        sys::hipResourceTypePitch2D => r.res.pitch2D.devPtr as usize,
        _ => return None,
    };
    let (base, len, kind, _) = find(p)?;
    (memory::live_block(base).is_some() && kind != MemKind::Object).then_some((base, len))
}

unsafe fn new_object(out: *mut usize, r: *const sys::hipResourceDesc) -> Status {
    let (Some(out), Some(r)) = (out.as_mut(), r.as_ref()) else {
        return INVALID_VALUE;
    };
    let Some(mem) = resource(r) else {
        return INVALID_VALUE;
    };
    let obj = alloc_now(1, MemKind::Object);
    tables(|t| t.objects.insert(obj, mem));
    *out = obj;
    SUCCESS
}

fn destroy_object(p: usize, call: &str) -> Status {
    if tables(|t| t.objects.remove(&p)).is_none() {
        return INVALID_VALUE;
    }
    free_now(p, MemKind::Object, call)
}

/// Whether a resource view may be made of `r` (null: no view): AMD's HIP takes one of an array only
/// (and applies its format); CUDA asks that its extent be the array's; and a format of the array's
/// element size is what reading the same bytes through it needs. BC formats are refused (no array of
/// the shadow's holds compressed blocks).
unsafe fn view_fits(r: &sys::hipResourceDesc, view: *const sys::hipResourceViewDesc) -> bool {
    let Some(v) = view.as_ref() else {
        return true;
    };
    if r.resType != sys::hipResourceTypeArray {
        return false;
    }
    let Some(l) = layout_of(r.res.array.array as usize) else {
        return false;
    };
    let f = v.format as usize;
    if !(1..=0x18).contains(&f) {
        return false;
    }
    // Three formats (1, 2, 4 channels) of each scalar: u8, i8, u16, i16, u32, i32, f16, f32.
    let bytes = [1, 1, 2, 2, 4, 4, 2, 4][(f - 1) / 3] * [1, 2, 4][(f - 1) % 3];
    bytes == l.elem
        && v.width == l.width
        && v.height.max(1) == l.rows
        && v.depth.max(1) == l.slices
        && (v.firstMipmapLevel, v.lastMipmapLevel) == (0, 0)
}

#[no_mangle]
pub unsafe extern "C" fn hipCreateTextureObject(
    t: *mut sys::hipTextureObject_t,
    r: *const sys::hipResourceDesc,
    _desc: *const sys::hipTextureDesc,
    view: *const sys::hipResourceViewDesc,
) -> Status {
    match r.as_ref() {
        Some(res) if !view_fits(res, view) => INVALID_VALUE,
        _ => new_object(t.cast(), r),
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipDestroyTextureObject(t: sys::hipTextureObject_t) -> Status {
    destroy_object(t as usize, "hipDestroyTextureObject")
}

#[no_mangle]
pub unsafe extern "C" fn hipCreateSurfaceObject(
    s: *mut sys::hipSurfaceObject_t,
    r: *const sys::hipResourceDesc,
) -> Status {
    new_object(s.cast(), r)
}

#[no_mangle]
pub unsafe extern "C" fn hipDestroySurfaceObject(s: sys::hipSurfaceObject_t) -> Status {
    destroy_object(s as usize, "hipDestroySurfaceObject")
}
