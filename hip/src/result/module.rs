//! Modules and kernels: loading code objects, their functions and globals, kernel attributes and
//! launches (`hipModuleLoadData`, `hipModuleGetFunction`, `hipModuleLaunchKernel`, ...). Re-exported at
//! the top of [`result`](super), where these calls always were.

use super::check;
use crate::error::Result;
use hip_sys as sys;
use std::ffi::{c_void, CStr};

/// `hipModuleLoadData`.
///
/// # Safety
/// HIP is not given the image's length: it reads as far as the image's own headers say. So `image` points
/// into one allocation, valid and unchanged for the call, whose bytes from `image` on are a code object
/// HIP reads nothing past:
/// - on AMD, an ELF or offload bundle that [`crate::code_object::check`] accepts over those bytes, whose
///   ELF is for `EM_AMDGPU` ([`crate::code_object::expect_machine`]), and, for a bundle, one that holds a
///   code object for the current device ([`crate::code_object::bundle_for_device`]: HIP 5 aborts the
///   process on a bundle that does not);
/// - on NVIDIA, a cubin or fatbinary the driver can size from its headers, or PTX text ending in a NUL.
pub unsafe fn module_load_data(image: *const c_void) -> Result<sys::hipModule_t> {
    let mut m = std::ptr::null_mut();
    // SAFETY: the caller's contract (`# Safety`): `image` is a whole code object HIP reads nothing past;
    // `m` is a live local for the handle.
    check("hipModuleLoadData", unsafe {
        sys::hipModuleLoadData(&mut m, image)
    })?;
    Ok(m)
}

/// `hipModuleLoad`: load the code object in the file at `path`.
///
/// # Safety
/// The runtime trusts the file's contents:
/// - on AMD, HIP maps the file and sizes its code object from the image's own headers, not from
///   the file's length, exactly as [`module_load_data`] does, and aborts the process on an offload bundle
///   without a code object for the current device. So the file's contents, from the time they are checked
///   until this call returns, meet [`module_load_data`]'s conditions: nothing else may change the file in
///   between. ([`Module::load_file`](crate::Module::load_file) reads the file and loads the bytes it
///   checked with `hipModuleLoadData` instead.)
/// - on NVIDIA, the driver (`cuModuleLoad`) reads the file, knowing its length, and checks it itself:
///   nothing more is required.
///
/// Calling it needs `unsafe`:
///
/// ```compile_fail,E0133
/// let _ = hip::result::module_load(c"/tmp/kernel.co");
/// ```
pub unsafe fn module_load(path: &CStr) -> Result<sys::hipModule_t> {
    let mut m = std::ptr::null_mut();
    // SAFETY: the caller's contract (`# Safety`): the file's contents are what HIP may trust; `path` is
    // NUL-terminated and `m` a live local for the handle.
    check("hipModuleLoad", unsafe {
        sys::hipModuleLoad(&mut m, path.as_ptr())
    })?;
    Ok(m)
}

/// `hipModuleUnload`.
///
/// # Safety
/// `module` is live and none of its functions or globals are used afterwards.
pub unsafe fn module_unload(module: sys::hipModule_t) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `module` is live and none of its functions or globals are
    // used afterwards.
    check("hipModuleUnload", unsafe { sys::hipModuleUnload(module) })
}

/// `hipModuleGetFunction`.
///
/// # Safety
/// `module` is live.
pub unsafe fn module_get_function(
    module: sys::hipModule_t,
    name: &CStr,
) -> Result<sys::hipFunction_t> {
    let mut f = std::ptr::null_mut();
    // SAFETY: the caller's contract (`# Safety`): `module` is live; `name` is NUL-terminated and `f` a live
    // local for the handle.
    check("hipModuleGetFunction", unsafe {
        sys::hipModuleGetFunction(&mut f, module, name.as_ptr())
    })?;
    Ok(f)
}

/// `hipModuleGetGlobal`: `(device pointer, bytes)`.
///
/// # Safety
/// `module` is live.
pub unsafe fn module_get_global(
    module: sys::hipModule_t,
    name: &CStr,
) -> Result<(*mut c_void, usize)> {
    // hipDeviceptr_t is void* on AMD and an integer (CUdeviceptr) on NVIDIA; both hold one address.
    // SAFETY: all-zero bits are a valid hipDeviceptr_t (a pointer on AMD, an integer on NVIDIA).
    let (mut p, mut bytes): (sys::hipDeviceptr_t, usize) = (unsafe { std::mem::zeroed() }, 0);
    // SAFETY: the caller's contract (`# Safety`): `module` is live; `name` is NUL-terminated; `p` and
    // `bytes` are live locals HIP writes to.
    check("hipModuleGetGlobal", unsafe {
        sys::hipModuleGetGlobal(&mut p, &mut bytes, module, name.as_ptr())
    })?;
    Ok((p as usize as *mut c_void, bytes))
}

/// Set a kernel attribute of a module's kernel (`cuFuncSetAttribute` on HIP's NVIDIA platform, through
/// hip-sys's `nvidia_function.h`; HIP has no call for a `hipFunction_t` on AMD).
///
/// # Safety
/// `func` is live.
#[cfg(hip_platform = "nvidia")]
pub unsafe fn module_func_set_attribute(
    func: sys::hipFunction_t,
    attr: sys::hipFunction_attribute,
    value: i32,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `func` is live; attribute and value are plain integers
    // the driver checks.
    check("cuFuncSetAttribute", unsafe {
        sys::hipRsModuleFuncSetAttribute(func, attr, value)
    })
}

/// Set a module kernel's cache preference (`cuFuncSetCacheConfig` on HIP's NVIDIA platform).
///
/// # Safety
/// `func` is live.
#[cfg(hip_platform = "nvidia")]
pub unsafe fn module_func_set_cache_config(
    func: sys::hipFunction_t,
    config: sys::hipFuncCache_t,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `func` is live; the preference is a plain value the
    // driver checks.
    check("cuFuncSetCacheConfig", unsafe {
        sys::hipRsModuleFuncSetCacheConfig(func, config)
    })
}

/// `hipFuncGetAttribute`.
///
/// # Safety
/// `func` is live.
pub unsafe fn func_get_attribute(
    attr: sys::hipFunction_attribute,
    func: sys::hipFunction_t,
) -> Result<i32> {
    let mut v = 0;
    // SAFETY: the caller's contract (`# Safety`): `func` is live; `v` is a live local HIP writes one int
    // to.
    check("hipFuncGetAttribute", unsafe {
        sys::hipFuncGetAttribute(&mut v, attr, func)
    })?;
    Ok(v)
}

/// `hipModuleLaunchKernel`.
///
/// # Safety
/// `params` holds one pointer per kernel parameter, each to a value of that parameter's type, and all memory
/// the kernel touches stays valid until it completes.
#[allow(clippy::too_many_arguments)]
#[inline]
pub unsafe fn module_launch_kernel(
    func: sys::hipFunction_t,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    shared_mem_bytes: u32,
    stream: sys::hipStream_t,
    params: *mut *mut c_void,
) -> Result<()> {
    // SAFETY: the caller's contract (`# Safety`): `params` holds one pointer per kernel parameter, each to
    // a value of its type, and the memory the kernel touches stays valid until it completes; no `extra`
    // array is passed.
    check("hipModuleLaunchKernel", unsafe {
        sys::hipModuleLaunchKernel(
            func,
            grid.0,
            grid.1,
            grid.2,
            block.0,
            block.1,
            block.2,
            shared_mem_bytes,
            stream,
            params,
            std::ptr::null_mut(),
        )
    })
}

/// Whether this build can launch a module's kernel cooperatively: `hipModuleLaunchCooperativeKernel` is
/// declared by the HIP headers (5.7 and later; not 5.2), and HIP's NVIDIA platform has it through
/// `cuLaunchCooperativeKernel` (hip-sys's `hipRsModuleLaunchCooperativeKernel`).
pub const HAS_MODULE_LAUNCH_COOPERATIVE: bool =
    cfg!(any(hip_module_launch_cooperative, hip_platform = "nvidia"));

/// `hipModuleLaunchCooperativeKernel` (on NVIDIA, `cuLaunchCooperativeKernel`); where the headers lack it
/// (HIP 5.2) [`Error::NotSupported`](crate::Error::NotSupported) naming it.
///
/// # Safety
/// As [`module_launch_kernel`], and the grid can be co-resident on the device (the runtime checks this
/// too, but a kernel that waits at a grid barrier for blocks that never run hangs).
#[allow(clippy::too_many_arguments)]
pub unsafe fn module_launch_cooperative_kernel(
    func: sys::hipFunction_t,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    shared_mem_bytes: u32,
    stream: sys::hipStream_t,
    params: *mut *mut c_void,
) -> Result<()> {
    #[cfg(hip_platform = "nvidia")]
    // SAFETY: the caller's contract (`# Safety`), as in `module_launch_kernel`.
    return check("hipModuleLaunchCooperativeKernel", unsafe {
        sys::hipRsModuleLaunchCooperativeKernel(
            func,
            grid.0,
            grid.1,
            grid.2,
            block.0,
            block.1,
            block.2,
            shared_mem_bytes,
            stream,
            params,
        )
    });
    #[cfg(all(hip_platform = "amd", hip_module_launch_cooperative))]
    // SAFETY: the caller's contract (`# Safety`), as in `module_launch_kernel`.
    return check("hipModuleLaunchCooperativeKernel", unsafe {
        sys::hipModuleLaunchCooperativeKernel(
            func,
            grid.0,
            grid.1,
            grid.2,
            block.0,
            block.1,
            block.2,
            shared_mem_bytes,
            stream,
            params,
        )
    });
    #[cfg(all(hip_platform = "amd", not(hip_module_launch_cooperative)))]
    {
        let _ = (func, grid, block, shared_mem_bytes, stream, params);
        Err(crate::Error::NotSupported {
            what: "hipModuleLaunchCooperativeKernel",
            reason: "the HIP headers this crate was built with (5.2) declare no \
                     hipModuleLaunchCooperativeKernel; HIP 5.7 added it",
        })
    }
}
