//! Memory pools shared between processes: a pool made exportable (`hipMemPoolCreate` with
//! `hipMemHandleTypePosixFileDescriptor`), its export as a file descriptor and import in another process
//! (`hipMemPoolExportToShareableHandle`, `hipMemPoolImportFromShareableHandle`), and one allocation's
//! export data and import (`hipMemPoolExportPointer`, `hipMemPoolImportPointer`).

use super::check;
use crate::error::Result;
use hip_sys as sys;
use std::ffi::c_void;

/// `hipMemHandleTypePosixFileDescriptor`.
const POSIX_FD: u32 = 1;

/// `hipMemPoolCreate` of pinned memory on device `ordinal` whose allocations may be exported as a POSIX
/// file descriptor. Destroy it with [`super::pool::mem_pool_destroy`].
pub fn mem_pool_create_shareable(ordinal: i32) -> Result<sys::hipMemPool_t> {
    let props = sys::hipMemPoolProps {
        allocType: 1 as _,
        handleTypes: POSIX_FD as _,
        location: sys::hipMemLocation {
            type_: 1 as _,
            id: ordinal,
        },
        ..Default::default()
    };
    let mut pool = std::ptr::null_mut();
    // SAFETY: an out-pointer to a live local handle and a live, fully initialised properties struct
    // (zeroed reserved bytes) that HIP only reads.
    check("hipMemPoolCreate", unsafe {
        sys::hipMemPoolCreate(&mut pool, &props)
    })?;
    Ok(pool)
}

/// `hipMemPoolExportToShareableHandle` as a POSIX file descriptor, which the caller then owns.
///
/// # Safety
/// `pool` is live.
pub unsafe fn export_to_fd(pool: sys::hipMemPool_t) -> Result<i32> {
    let mut fd: i32 = -1;
    // SAFETY: `pool` is live (the caller's contract); the out-pointer is a live `int`, what HIP writes for
    // the file descriptor handle type; flags 0.
    check("hipMemPoolExportToShareableHandle", unsafe {
        sys::hipMemPoolExportToShareableHandle(
            (&mut fd as *mut i32).cast::<c_void>(),
            pool,
            POSIX_FD as _,
            0,
        )
    })?;
    Ok(fd)
}

/// `hipMemPoolImportFromShareableHandle` from a POSIX file descriptor (which stays the caller's). Destroy
/// the pool with [`super::pool::mem_pool_destroy`].
pub fn import_from_fd(fd: i32) -> Result<sys::hipMemPool_t> {
    let mut pool = std::ptr::null_mut();
    // AMD reads the descriptor through the pointer (an `int`, as hip-tests pass it); CUDA takes the
    // descriptor's value as the pointer.
    #[cfg(not(hip_platform = "nvidia"))]
    let mut value = fd;
    #[cfg(not(hip_platform = "nvidia"))]
    let handle = (&mut value as *mut i32).cast::<c_void>();
    #[cfg(hip_platform = "nvidia")]
    let handle = fd as isize as *mut c_void;
    // SAFETY: an out-pointer to a live local handle; `handle` is a live `int` (AMD) or the descriptor's
    // value (NVIDIA), as each platform reads it; a descriptor of no pool is an error code; flags 0.
    check("hipMemPoolImportFromShareableHandle", unsafe {
        sys::hipMemPoolImportFromShareableHandle(&mut pool, handle, POSIX_FD as _, 0)
    })?;
    Ok(pool)
}

/// `hipMemPoolExportPointer`: the data another process that imported the pool needs to open `ptr`.
///
/// # Safety
/// `ptr` is a live allocation of an exportable pool.
pub unsafe fn export_pointer(ptr: *mut c_void) -> Result<[u8; 64]> {
    let mut data = sys::hipMemPoolPtrExportData { reserved: [0; 64] };
    // SAFETY: an out-pointer to a live local; `ptr` as the caller's contract says.
    check("hipMemPoolExportPointer", unsafe {
        sys::hipMemPoolExportPointer(&mut data, ptr)
    })?;
    Ok(data.reserved)
}

/// `hipMemPoolImportPointer`: the address, in this process, of the allocation `data` describes, from the
/// imported `pool`. Free it (`hipFreeAsync`) before the pool is destroyed.
///
/// # Safety
/// `pool` is a live imported pool.
pub unsafe fn import_pointer(pool: sys::hipMemPool_t, data: &[u8; 64]) -> Result<*mut c_void> {
    let mut raw = sys::hipMemPoolPtrExportData { reserved: *data };
    let mut p = std::ptr::null_mut();
    // SAFETY: out-pointers to live locals (HIP reads the export data); `pool` as the caller's contract
    // says; bytes that describe no allocation are an error code.
    check("hipMemPoolImportPointer", unsafe {
        sys::hipMemPoolImportPointer(&mut p, pool, &mut raw)
    })?;
    Ok(p)
}
