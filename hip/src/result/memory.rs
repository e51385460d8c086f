//! Copies and fills beyond the plain ones: pitched 2-D copies, 16/32-bit memsets, managed-memory
//! prefetch and advice.

use super::check;
use crate::error::Result;
use hip_sys as sys;
use std::ffi::c_void;

/// `hipMemcpy2D`: `height` rows of `width` bytes, rows `src_pitch` / `dst_pitch` bytes apart, on the
/// current device's null stream; synchronous as `hipMemcpy` is.
///
/// # Safety
/// Both pointers are valid for `(height - 1) * pitch + width` bytes in the spaces `kind` names, until the
/// copy completes (device memory: until the null stream's work so far is done).
pub unsafe fn memcpy_2d(
    dst: *mut c_void,
    dst_pitch: usize,
    src: *const c_void,
    src_pitch: usize,
    width: usize,
    height: usize,
    kind: sys::hipMemcpyKind,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): both pointers are valid for `(height - 1) * pitch +
    // width` bytes in the spaces `kind` names until the copy completes.
    check("hipMemcpy2D", unsafe {
        sys::hipMemcpy2D(dst, dst_pitch, src, src_pitch, width, height, kind)
    })
}

/// `hipMemcpy2DAsync`: `height` rows of `width` bytes, rows `src_pitch` / `dst_pitch` bytes apart.
///
/// # Safety
/// Both pointers are valid for `(height - 1) * pitch + width` bytes in the spaces `kind` names, until the
/// copy on `stream` completes.
#[allow(clippy::too_many_arguments)]
pub unsafe fn memcpy_2d_async(
    dst: *mut c_void,
    dst_pitch: usize,
    src: *const c_void,
    src_pitch: usize,
    width: usize,
    height: usize,
    kind: sys::hipMemcpyKind,
    stream: sys::hipStream_t,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): both pointers are valid for `(height - 1) * pitch +
    // width` bytes in the spaces `kind` names until the copy on `stream` completes.
    check("hipMemcpy2DAsync", unsafe {
        sys::hipMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, height, kind, stream)
    })
}

/// `hipMemsetD16Async`: `count` 16-bit values.
///
/// # Safety
/// `dst` is device memory valid for `2 * count` bytes until the fill on `stream` completes.
pub unsafe fn memset_d16_async(
    dst: *mut c_void,
    value: u16,
    count: usize,
    stream: sys::hipStream_t,
) -> Result<()> {
    // hipDeviceptr_t is void* on AMD and an integer (CUdeviceptr) on NVIDIA; both hold one address.
    // SAFETY: the caller's contract (`# Safety`): `dst` is device memory valid for `2 * count` bytes until
    // the fill on `stream` completes.
    check("hipMemsetD16Async", unsafe {
        sys::hipMemsetD16Async(dst as usize as sys::hipDeviceptr_t, value, count, stream)
    })
}

/// `hipMemsetD32Async`: `count` 32-bit values.
///
/// # Safety
/// `dst` is device memory valid for `4 * count` bytes until the fill on `stream` completes.
pub unsafe fn memset_d32_async(
    dst: *mut c_void,
    value: u32,
    count: usize,
    stream: sys::hipStream_t,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `dst` is device memory valid for `4 * count` bytes until
    // the fill on `stream` completes.
    check("hipMemsetD32Async", unsafe {
        sys::hipMemsetD32Async(
            dst as usize as sys::hipDeviceptr_t,
            value as _,
            count,
            stream,
        )
    })
}

/// `hipStreamAttachMemAsync` for the whole allocation at `ptr` (length 0).
///
/// # Safety
/// `ptr` is the start of a live managed allocation; `stream` is live.
pub unsafe fn stream_attach_mem_async(
    stream: sys::hipStream_t,
    ptr: *mut c_void,
    flags: u32,
) -> Result<()> {
    // HIP 5.2.3's NVIDIA header declares the pointer as `hipDeviceptr_t*` and hands it on as the address.
    // SAFETY: the caller's contract (`# Safety`): `ptr` is the start of a live managed allocation and
    // `stream` is live; length 0 names the whole allocation.
    check("hipStreamAttachMemAsync", unsafe {
        sys::hipStreamAttachMemAsync(stream, ptr as _, 0, flags)
    })
}

/// `hipMemPrefetchAsync`: migrate managed memory to `device` (or the host: `hipCpuDeviceId`, -1).
///
/// # Safety
/// `ptr` is managed memory valid for `bytes`; `stream` is live.
pub unsafe fn mem_prefetch_async(
    ptr: *const c_void,
    bytes: usize,
    device: i32,
    stream: sys::hipStream_t,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `ptr` is managed memory valid for `bytes`, and `stream`
    // is live.
    check("hipMemPrefetchAsync", unsafe {
        sys::hipMemPrefetchAsync(ptr, bytes, device, stream)
    })
}

/// `hipMemAdvise`.
///
/// # Safety
/// `ptr` is managed memory valid for `bytes`.
pub unsafe fn mem_advise(
    ptr: *const c_void,
    bytes: usize,
    advice: sys::hipMemoryAdvise,
    device: i32,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `ptr` is managed memory valid for `bytes`.
    check("hipMemAdvise", unsafe {
        sys::hipMemAdvise(ptr, bytes, advice, device)
    })
}

/// `hipHostGetFlags`: the flags of pinned host memory; an error for pageable memory (which is how the
/// staging ring tells the two apart).
///
/// # Safety
/// None beyond a readable pointer value: HIP only looks the address up.
pub unsafe fn host_get_flags(ptr: *const c_void) -> Result<u32> {
    let mut flags = 0;
    // SAFETY: HIP only looks the address up, never dereferences it; `flags` is a live local it writes to.
    check("hipHostGetFlags", unsafe {
        sys::hipHostGetFlags(&mut flags, ptr as *mut c_void)
    })?;
    Ok(flags)
}

/// `hipHostRegister`: page-lock `bytes` of host memory at `ptr` so the device can copy it directly.
///
/// # Safety
/// `ptr` is valid for `bytes` bytes and stays allocated until [`host_unregister`] of it returned; the
/// caller unregisters it only after every copy using it completed.
pub unsafe fn host_register(ptr: *mut c_void, bytes: usize, flags: u32) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`).
    check("hipHostRegister", unsafe {
        sys::hipHostRegister(ptr, bytes, flags)
    })
}

/// `hipHostUnregister`: make memory [`host_register`] page-locked pageable again.
///
/// # Safety
/// `ptr` was registered by [`host_register`] and no copy using it is queued or running.
pub unsafe fn host_unregister(ptr: *mut c_void) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`).
    check("hipHostUnregister", unsafe { sys::hipHostUnregister(ptr) })
}

/// `hipPointerGetAttribute(HIP_POINTER_ATTRIBUTE_IS_MANAGED)`: whether `ptr` is in managed memory
/// (`hipMallocManaged`). Any failure (an address HIP does not know, no device) is `false`: the answer is
/// only ever used to let memory pass, never to refuse it.
pub fn is_managed(ptr: *mut c_void) -> bool {
    // A bool (AMD) or an unsigned int (CUDA's driver) is written: zeroed room for either.
    let mut managed = 0u64;
    // SAFETY: `managed` is a live local with room for the attribute's value; the address is only looked
    // up (an unknown one is an error code), never dereferenced. hipDeviceptr_t is void* on AMD and an
    // integer (CUdeviceptr) on NVIDIA; both hold one address.
    let rc = unsafe {
        sys::hipPointerGetAttribute(
            (&mut managed as *mut u64).cast(),
            sys::HIP_POINTER_ATTRIBUTE_IS_MANAGED,
            ptr as usize as sys::hipDeviceptr_t,
        )
    };
    check("hipPointerGetAttribute", rc).is_ok() && managed != 0
}

/// `hipMemset2DAsync`: `height` rows of `width` bytes, `pitch` bytes apart, set to `value`.
///
/// # Safety
/// `dst` is device memory valid for `(height - 1) * pitch + width` bytes (when `height > 0`) until the
/// fill on `stream` completes.
pub unsafe fn memset_2d_async(
    dst: *mut c_void,
    pitch: usize,
    value: u8,
    width: usize,
    height: usize,
    stream: sys::hipStream_t,
) -> Result<()> {
    // SAFETY: the caller's contract.
    check("hipMemset2DAsync", unsafe {
        sys::hipMemset2DAsync(dst, pitch, i32::from(value), width, height, stream)
    })
}

/// `hipMemset3DAsync`: `depth` slices of `height` rows of `width` bytes, rows `pitch` bytes apart and
/// slices `pitch * slice_rows` apart, set to `value`.
///
/// # Safety
/// `dst` is device memory valid for `((depth - 1) * slice_rows + height - 1) * pitch + width` bytes (when
/// no side is 0) until the fill on `stream` completes; `height <= slice_rows`.
pub unsafe fn memset_3d_async(
    dst: *mut c_void,
    pitch: usize,
    slice_rows: usize,
    value: u8,
    [width, height, depth]: [usize; 3],
    stream: sys::hipStream_t,
) -> Result<()> {
    let p = sys::hipPitchedPtr {
        ptr: dst,
        pitch,
        xsize: width,
        ysize: slice_rows,
    };
    let e = sys::hipExtent {
        width,
        height,
        depth,
    };
    // SAFETY: the caller's contract; `p` and `e` are passed by value.
    check("hipMemset3DAsync", unsafe {
        sys::hipMemset3DAsync(p, i32::from(value), e, stream)
    })
}
