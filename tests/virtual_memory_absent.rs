//! Virtual memory and pool export/import (issue 57, families 3 and 4) on a machine without a GPU: every
//! call answers with an error that names it and keeps the runtime's raw code, or (headers without the
//! call) `NotSupported` naming it. Ported from AMD's hip-tests negative cases
//! (catch/unit/virtualMemoryManagement/*: invalid sizes, unknown addresses and handles;
//! catch/unit/memory/hipMemPoolImportExport.cc: `*_Negative_Parameters`), which on a GPU answer
//! `hipErrorInvalidValue` and here, with no device, an error as well. With a device present the same
//! calls must succeed where tests/gpu_virtual_memory.rs says.
#[cfg(unix)]
use hip::result::pool_share;
use hip::result::vmm;
use hip::{Device, Error};

/// No usable device here: the tests below check the error paths (they say nothing on a GPU machine).
fn no_device() -> bool {
    Device::count().is_err()
}

/// `e` names `call` and keeps a raw HIP code, or names `call` as not supported by these headers.
fn names(e: &Error, call: &str) {
    let text = e.to_string();
    assert!(text.contains(call), "{text}");
    match e {
        Error::Hip { .. } => assert_ne!(e.hip_code().expect("a raw code").0, 0, "{text}"),
        Error::NotSupported { what, .. } => assert_eq!(*what, call),
        Error::LibraryNotFound { .. } => {}
        other => panic!("unexpected error for {call}: {other:?}"),
    }
}

#[test]
fn virtual_memory_calls_answer_an_error_naming_the_call_without_a_device() {
    if !no_device() {
        return;
    }
    for recommended in [false, true] {
        names(
            &vmm::granularity(0, recommended).unwrap_err(),
            "hipMemGetAllocationGranularity",
        );
    }
    names(
        &vmm::address_reserve(2 << 20, 0).unwrap_err(),
        "hipMemAddressReserve",
    );
    names(&vmm::create(0, 2 << 20).unwrap_err(), "hipMemCreate");
    let mut word = 0u64;
    let host = (&mut word as *mut u64).cast();
    names(
        &vmm::get_access(host as usize, 0).unwrap_err(),
        "hipMemGetAccess",
    );
    // SAFETY: a host address no reservation holds: HIP looks it up and refuses.
    names(
        &unsafe { vmm::set_access(host, 8, 0, vmm::ACCESS_READ_WRITE) }.unwrap_err(),
        "hipMemSetAccess",
    );
    // SAFETY: as above; nothing is mapped there to unmap.
    names(&unsafe { vmm::unmap(host, 8) }.unwrap_err(), "hipMemUnmap");
    // SAFETY: as above; no reservation starts there.
    names(
        &unsafe { vmm::address_free(host, 8) }.unwrap_err(),
        "hipMemAddressFree",
    );
}

#[test]
#[cfg(unix)] // file descriptors: pool export/import is Unix-only
fn pool_export_and_import_answer_an_error_naming_the_call_without_a_device() {
    if !no_device() {
        return;
    }
    names(
        &pool_share::mem_pool_create_shareable(0).unwrap_err(),
        "hipMemPoolCreate",
    );
    let null = std::fs::File::open("/dev/null").unwrap();
    use std::os::fd::AsRawFd;
    names(
        &pool_share::import_from_fd(null.as_raw_fd()).unwrap_err(),
        "hipMemPoolImportFromShareableHandle",
    );
    let mut word = 0u64;
    let host = (&mut word as *mut u64).cast();
    // SAFETY: a host address no pool holds: HIP looks it up and refuses.
    names(
        &unsafe { pool_share::export_pointer(host) }.unwrap_err(),
        "hipMemPoolExportPointer",
    );
}

#[test]
#[cfg(unix)] // file descriptors: physical memory export/import is Unix-only
fn physical_memory_export_and_import_answer_an_error_naming_the_call_without_a_device() {
    if !no_device() {
        return;
    }
    use hip::result::vmm_share;
    use std::os::fd::AsFd;
    names(
        &vmm_share::create_shareable(0, 2 << 20).unwrap_err(),
        "hipMemCreate",
    );
    let null = std::fs::File::open("/dev/null").unwrap();
    names(
        &vmm_share::import_fd(null.as_fd()).unwrap_err(),
        "hipMemImportFromShareableHandle",
    );
    // SAFETY: all-zero bytes are the null handle (a pointer on AMD, an integer on NVIDIA), which HIP
    // refuses (with no device, before looking at it).
    let null_handle: vmm::RawPhysical = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let e = unsafe { vmm_share::export_fd(null_handle) }.unwrap_err();
    names(&e, "hipMemExportToShareableHandle");
}

#[test]
fn physical_memory_queries_answer_an_error_naming_the_call_without_a_device() {
    if !no_device() {
        return;
    }
    use hip::result::vmm_query;
    let mut word = 0u64;
    names(
        &vmm_query::retain(&mut word as *mut u64 as usize).unwrap_err(),
        "hipMemRetainAllocationHandle",
    );
    // SAFETY: all-zero bytes are the null handle, which HIP refuses (with no device, before looking at
    // it).
    let null_handle: vmm::RawPhysical = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let e = unsafe { vmm_query::properties(null_handle) }.unwrap_err();
    names(&e, "hipMemGetAllocationPropertiesFromHandle");
}
