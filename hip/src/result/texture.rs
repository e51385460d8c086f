//! Arrays, pitched allocations, 2-D/3-D copies, texture and surface objects (`hipMallocArray`,
//! `hipMalloc3DArray`, `hipFreeArray`, `hipMallocPitch`, `hipMalloc3D`, `hipMemcpy2DToArrayAsync`,
//! `hipMemcpy2DFromArrayAsync`, `hipMemcpy3DAsync`, `hipCreateTextureObject`, `hipCreateSurfaceObject`
//! and their destroys). On HIP's NVIDIA platform each is hip-sys's C wrapper of HIP's inline mapping to
//! the CUDA runtime (`cudaMallocArray`, `cudaCreateTextureObject`, ...). The 2-D device copy itself is
//! [`super::memory::memcpy_2d_async`].

use super::check;
use crate::error::Result;
use hip_sys as sys;
use std::ffi::c_void;

/// `hipMallocArray`: a 1-D (`height` 0) or 2-D array of `width` x `height` elements of `desc`'s format.
pub fn malloc_array(
    desc: &sys::hipChannelFormatDesc,
    width: usize,
    height: usize,
    flags: u32,
) -> Result<sys::hipArray_t> {
    let mut a: sys::hipArray_t = std::ptr::null_mut();
    // SAFETY: an out-pointer to a live local and a descriptor borrowed for the call; sizes HIP cannot
    // serve are error codes.
    check("hipMallocArray", unsafe {
        sys::hipMallocArray(&mut a, desc, width, height, flags as _)
    })?;
    Ok(a)
}

/// `hipMalloc3DArray`: an array of `extent` (elements; `height`/`depth` 0 for fewer dimensions).
pub fn malloc_3d_array(
    desc: &sys::hipChannelFormatDesc,
    extent: sys::hipExtent,
    flags: u32,
) -> Result<sys::hipArray_t> {
    let mut a: sys::hipArray_t = std::ptr::null_mut();
    // SAFETY: as in `malloc_array`.
    check("hipMalloc3DArray", unsafe {
        sys::hipMalloc3DArray(&mut a, desc, extent, flags as _)
    })?;
    Ok(a)
}

/// `hipFreeArray`.
///
/// # Safety
/// `array` came from [`malloc_array`] or [`malloc_3d_array`], is freed once, and no queued work, texture
/// or surface object still uses it.
pub unsafe fn free_array(array: sys::hipArray_t) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`).
    check("hipFreeArray", unsafe { sys::hipFreeArray(array) })
}

/// `hipMallocPitch`: `height` rows of `width_bytes`; answers the memory and the pitch (bytes between
/// rows) the runtime chose.
pub fn malloc_pitch(width_bytes: usize, height: usize) -> Result<(*mut c_void, usize)> {
    let (mut p, mut pitch) = (std::ptr::null_mut(), 0usize);
    // SAFETY: out-pointers to live locals; sizes HIP cannot serve are error codes.
    check("hipMallocPitch", unsafe {
        sys::hipMallocPitch(&mut p, &mut pitch, width_bytes, height)
    })?;
    Ok((p, pitch))
}

/// `hipMalloc3D`: `extent.depth` slices of `extent.height` rows of `extent.width` bytes.
pub fn malloc_3d(extent: sys::hipExtent) -> Result<sys::hipPitchedPtr> {
    let mut p = sys::hipPitchedPtr::default();
    // SAFETY: an out-pointer to a live local; sizes HIP cannot serve are error codes.
    check("hipMalloc3D", unsafe { sys::hipMalloc3D(&mut p, extent) })?;
    Ok(p)
}

/// `hipMemcpy2DToArrayAsync`: `height` rows of `width_bytes` from `src` (rows `src_pitch` bytes apart)
/// into `dst` at byte column `x_bytes`, row `y`.
///
/// # Safety
/// `dst` is a live array holding the region; `src` is valid for `(height - 1) * src_pitch + width_bytes`
/// bytes in the space `kind` names; both stay so until the copy on `stream` completes.
#[allow(clippy::too_many_arguments)]
pub unsafe fn memcpy_2d_to_array_async(
    dst: sys::hipArray_t,
    x_bytes: usize,
    y: usize,
    src: *const c_void,
    src_pitch: usize,
    width_bytes: usize,
    height: usize,
    kind: sys::hipMemcpyKind,
    stream: sys::hipStream_t,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`).
    check("hipMemcpy2DToArrayAsync", unsafe {
        sys::hipMemcpy2DToArrayAsync(
            dst,
            x_bytes,
            y,
            src,
            src_pitch,
            width_bytes,
            height,
            kind,
            stream,
        )
    })
}

/// `hipMemcpy2DFromArrayAsync`: `height` rows of `width_bytes` from `src` at byte column `x_bytes`, row
/// `y`, into `dst` (rows `dst_pitch` bytes apart).
///
/// # Safety
/// `src` is a live array holding the region; `dst` is valid for `(height - 1) * dst_pitch + width_bytes`
/// bytes in the space `kind` names; both stay so until the copy on `stream` completes.
#[allow(clippy::too_many_arguments)]
pub unsafe fn memcpy_2d_from_array_async(
    dst: *mut c_void,
    dst_pitch: usize,
    src: sys::hipArray_t,
    x_bytes: usize,
    y: usize,
    width_bytes: usize,
    height: usize,
    kind: sys::hipMemcpyKind,
    stream: sys::hipStream_t,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`).
    check("hipMemcpy2DFromArrayAsync", unsafe {
        sys::hipMemcpy2DFromArrayAsync(
            dst,
            dst_pitch,
            src,
            x_bytes,
            y,
            width_bytes,
            height,
            kind,
            stream,
        )
    })
}

/// `hipMemcpy3DAsync`.
///
/// # Safety
/// Every array and pitched pointer `p` names is live and holds the region `p` copies (positions plus
/// extent, in the units HIP uses: elements for arrays, bytes for pitched memory's x), until the copy on
/// `stream` completes.
pub unsafe fn memcpy_3d_async(p: &sys::hipMemcpy3DParms, stream: sys::hipStream_t) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`); `p` is borrowed for the call, which reads it before
    // returning.
    check("hipMemcpy3DAsync", unsafe {
        sys::hipMemcpy3DAsync(p, stream)
    })
}

/// `hipCreateTextureObject` (no resource view).
///
/// # Safety
/// The memory `res` names (an array, or device memory of the size it states) stays allocated until the
/// object is destroyed and no queued work uses it.
pub unsafe fn create_texture_object(
    res: &sys::hipResourceDesc,
    tex: &sys::hipTextureDesc,
) -> Result<sys::hipTextureObject_t> {
    // SAFETY: the caller's contract, passed on.
    unsafe { create_texture_object_viewed(res, tex, None) }
}

/// `hipCreateTextureObject` with a resource view (`view`: how an array's elements are read) or none.
///
/// # Safety
/// As [`create_texture_object`]; a view describes the array `res` names.
pub unsafe fn create_texture_object_viewed(
    res: &sys::hipResourceDesc,
    tex: &sys::hipTextureDesc,
    view: Option<&sys::hipResourceViewDesc>,
) -> Result<sys::hipTextureObject_t> {
    // SAFETY: a texture object handle is a pointer (AMD) or an integer (NVIDIA): all-zero bits are a
    // value of either (the null handle).
    let mut t: sys::hipTextureObject_t = unsafe { std::mem::zeroed() };
    let view = view.map_or(std::ptr::null(), |v| v as *const sys::hipResourceViewDesc);
    // SAFETY: the caller's contract (`# Safety`); an out-pointer to a live local, descriptors borrowed
    // for the call (the view null or borrowed too).
    check("hipCreateTextureObject", unsafe {
        sys::hipCreateTextureObject(&mut t, res, tex, view)
    })?;
    Ok(t)
}

/// `hipDestroyTextureObject`.
///
/// # Safety
/// `t` came from [`create_texture_object`], is destroyed once, and no queued work uses it.
pub unsafe fn destroy_texture_object(t: sys::hipTextureObject_t) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`).
    check("hipDestroyTextureObject", unsafe {
        sys::hipDestroyTextureObject(t)
    })
}

/// Why surface objects answer [`Error::NotSupported`] where the headers lack them.
#[cfg(not(hip_surface_object))]
fn no_surfaces(what: &'static str) -> crate::error::Error {
    crate::error::Error::NotSupported {
        what,
        reason:
            "the HIP headers this crate was built with (5.2) declare the surface object calls for \
                 C++ only (libamdhip64 5.2 exports them C++-mangled); HIP 5.7 declares them for C",
    }
}

/// `hipCreateSurfaceObject` (HIP >= 5.7 headers; [`Error::NotSupported`](crate::error::Error::NotSupported)
/// on 5.2).
///
/// # Safety
/// The array `res` names stays allocated until the object is destroyed and no queued work uses it.
pub unsafe fn create_surface_object(res: &sys::hipResourceDesc) -> Result<sys::hipSurfaceObject_t> {
    #[cfg(hip_surface_object)]
    {
        // SAFETY: as for a texture object: a pointer or an integer, all-zero bits a value of either.
        let mut s: sys::hipSurfaceObject_t = unsafe { std::mem::zeroed() };
        // SAFETY: the caller's contract (`# Safety`); an out-pointer to a live local, a descriptor
        // borrowed for the call.
        check("hipCreateSurfaceObject", unsafe {
            sys::hipCreateSurfaceObject(&mut s, res)
        })?;
        Ok(s)
    }
    #[cfg(not(hip_surface_object))]
    {
        let _ = res;
        Err(no_surfaces("hipCreateSurfaceObject"))
    }
}

/// `hipDestroySurfaceObject` (as [`create_surface_object`], HIP >= 5.7 headers).
///
/// # Safety
/// `s` came from [`create_surface_object`], is destroyed once, and no queued work uses it.
pub unsafe fn destroy_surface_object(s: sys::hipSurfaceObject_t) -> Result<()> {
    #[cfg(hip_surface_object)]
    {
        // SAFETY: the caller's contract (`# Safety`).
        check("hipDestroySurfaceObject", unsafe {
            sys::hipDestroySurfaceObject(s)
        })
    }
    #[cfg(not(hip_surface_object))]
    {
        let _ = s;
        Err(no_surfaces("hipDestroySurfaceObject"))
    }
}

/// [`Error::NotSupported`](crate::Error::NotSupported) for a mipmap call these headers lack (HIP 5.2's
/// NVIDIA headers).
#[cfg(not(hip_mipmap))]
fn no_mipmaps(call: &'static str) -> crate::Error {
    crate::Error::NotSupported {
        what: call,
        reason:
            "the HIP headers this crate was built with declare no mipmapped arrays (HIP's NVIDIA \
                 headers before 5.7)",
    }
}

/// `hipMallocMipmappedArray`: `levels` levels of `extent` (elements; `height`/`depth` 0 for fewer
/// dimensions), each half the one before along each axis (at least 1).
pub fn malloc_mipmapped_array(
    desc: &sys::hipChannelFormatDesc,
    extent: sys::hipExtent,
    levels: u32,
    flags: u32,
) -> Result<sys::hipMipmappedArray_t> {
    #[cfg(hip_mipmap)]
    {
        let mut a: sys::hipMipmappedArray_t = std::ptr::null_mut();
        // SAFETY: as in `malloc_array`.
        check("hipMallocMipmappedArray", unsafe {
            sys::hipMallocMipmappedArray(&mut a, desc, extent, levels as _, flags as _)
        })?;
        Ok(a)
    }
    #[cfg(not(hip_mipmap))]
    {
        let _ = (desc, extent, levels, flags);
        Err(no_mipmaps("hipMallocMipmappedArray"))
    }
}

/// `hipGetMipmappedArrayLevel`: the array of level `level`, owned by the mipmapped array (freed with it,
/// never on its own).
///
/// # Safety
/// `mipmap` is a live mipmapped array (AMD's runtime reads it unchecked).
pub unsafe fn mipmapped_array_level(
    mipmap: sys::hipMipmappedArray_t,
    level: u32,
) -> Result<sys::hipArray_t> {
    #[cfg(hip_mipmap)]
    {
        let mut a: sys::hipArray_t = std::ptr::null_mut();
        // SAFETY: the caller's contract; an out-pointer to a live local.
        check("hipGetMipmappedArrayLevel", unsafe {
            sys::hipGetMipmappedArrayLevel(&mut a, mipmap, level as _)
        })?;
        Ok(a)
    }
    #[cfg(not(hip_mipmap))]
    {
        let _ = (mipmap, level);
        Err(no_mipmaps("hipGetMipmappedArrayLevel"))
    }
}

/// `hipFreeMipmappedArray`.
///
/// # Safety
/// `mipmap` came from [`malloc_mipmapped_array`], is freed once, and no queued work, texture or surface
/// object still uses it or one of its levels.
pub unsafe fn free_mipmapped_array(mipmap: sys::hipMipmappedArray_t) -> Result<()> {
    #[cfg(hip_mipmap)]
    {
        // SAFETY: the caller's contract (`# Safety`).
        check("hipFreeMipmappedArray", unsafe {
            sys::hipFreeMipmappedArray(mipmap)
        })
    }
    #[cfg(not(hip_mipmap))]
    {
        let _ = mipmap;
        Err(no_mipmaps("hipFreeMipmappedArray"))
    }
}
