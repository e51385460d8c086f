//! The runtime families of issue 57 (stream flags, pointer attributes, device limits, stream flags and
//! priority, peer access off) on a machine without a GPU: every call answers with an error that names it
//! and keeps the runtime's raw code, or (a call the HIP version lacks) `NotSupported` naming it. With a
//! device present the same calls must succeed where the GPU tests (tests/gpu_runtime_families.rs) say.
use hip::limits::Limit;
use hip::pointer::{self, MemoryType};
use hip::result::{device as rdev, stream_memop as memop};
use hip::{Device, Error, FuncCache};

/// No usable device here: the tests below check the error paths (they say nothing on a GPU machine).
fn no_device() -> bool {
    Device::count().is_err()
}

/// `e` names `call` and keeps a raw HIP code, or names `call` as not supported by these headers.
fn names(e: &Error, call: &str) {
    let text = e.to_string();
    assert!(text.contains(call), "{text}");
    match e {
        Error::Hip { .. } => {
            let code = e.hip_code().expect("a raw code");
            assert_ne!(code.0, 0, "{text}");
        }
        Error::NotSupported { what, .. } => assert_eq!(*what, call),
        Error::LibraryNotFound { .. } => {}
        other => panic!("unexpected error for {call}: {other:?}"),
    }
}

#[test]
fn limits_have_their_cuda_values_and_refuse_without_a_device() {
    assert_eq!(Limit::ALL.map(Limit::raw), [0, 1, 2]);
    if !no_device() {
        return;
    }
    for l in Limit::ALL {
        names(&rdev::get_limit(l.raw()).unwrap_err(), "hipDeviceGetLimit");
        names(
            &rdev::set_limit(l.raw(), 1 << 20).unwrap_err(),
            "hipDeviceSetLimit",
        );
    }
    let e = rdev::set_limit(Limit::MallocHeapSize.raw(), 1 << 20).unwrap_err();
    eprintln!("hipDeviceSetLimit without a device: {e}");
    // HIP 5.2.3's headers declare no hipDeviceSetLimit: NotSupported, never a build failure.
    assert_eq!(
        matches!(
            e,
            Error::NotSupported {
                what: "hipDeviceSetLimit",
                ..
            }
        ),
        !hip::limits::HAS_SET_LIMIT,
        "{e}"
    );
}

#[test]
fn pointer_attributes_of_unknown_memory_answer_an_error_naming_the_call() {
    if !no_device() {
        return;
    }
    let local = 7u64;
    let e = pointer::attributes((&local as *const u64).cast()).unwrap_err();
    eprintln!("hipPointerGetAttributes without a device: {e}");
    names(&e, "hipPointerGetAttributes");
    let e = pointer::attributes(std::ptr::null()).unwrap_err();
    names(&e, "hipPointerGetAttributes");
    assert_eq!(MemoryType::Other(77), MemoryType::Other(77));
}

#[test]
fn stream_memory_operations_refuse_without_a_device() {
    if !no_device() {
        return;
    }
    let mut word = 0u64;
    let p = (&mut word as *mut u64).cast();
    // SAFETY: no device exists (checked above): the runtime refuses before touching `word` (the
    // asserts below check it answered an error), and `word` outlives the calls. The null stream.
    unsafe {
        let e = memop::write_value64(std::ptr::null_mut(), p, 1).unwrap_err();
        eprintln!("hipStreamWriteValue64 without a device: {e}");
        names(&e, "hipStreamWriteValue64");
        names(
            &memop::write_value32(std::ptr::null_mut(), p, 1).unwrap_err(),
            "hipStreamWriteValue32",
        );
        names(
            &memop::wait_value64(std::ptr::null_mut(), p, 1, memop::WAIT_GTE).unwrap_err(),
            "hipStreamWaitValue64",
        );
        names(
            &memop::wait_value32(std::ptr::null_mut(), p, 1, memop::WAIT_EQ).unwrap_err(),
            "hipStreamWaitValue32",
        );
        names(
            &memop::host_get_device_pointer(p).unwrap_err(),
            "hipHostGetDevicePointer",
        );
    }
    assert_eq!(word, 0, "nothing was written");
}

#[test]
fn stream_queries_and_peer_access_off_refuse_without_a_device() {
    if !no_device() {
        return;
    }
    // SAFETY: the null stream.
    let e = unsafe { rdev::stream_get_flags(std::ptr::null_mut()) }.unwrap_err();
    eprintln!("hipStreamGetFlags without a device: {e}");
    names(&e, "hipStreamGetFlags");
    // SAFETY: the null stream.
    let e = unsafe { rdev::stream_get_priority(std::ptr::null_mut()) }.unwrap_err();
    eprintln!("hipStreamGetPriority without a device: {e}");
    names(&e, "hipStreamGetPriority");
    let e = rdev::disable_peer_access(1).unwrap_err();
    eprintln!("hipDeviceDisablePeerAccess without a device: {e}");
    names(&e, "hipDeviceDisablePeerAccess");
}

#[test]
fn the_device_cache_preference_refuses_without_a_device() {
    for (raw, c) in [
        (0, FuncCache::PreferNone),
        (1, FuncCache::PreferShared),
        (2, FuncCache::PreferL1),
        (3, FuncCache::PreferEqual),
    ] {
        assert_eq!((FuncCache::from_raw(raw), c as u32), (Some(c), raw));
        let hip_values = [
            hip::sys::hipFuncCachePreferNone,
            hip::sys::hipFuncCachePreferShared,
            hip::sys::hipFuncCachePreferL1,
            hip::sys::hipFuncCachePreferEqual,
        ];
        assert_eq!(c as hip::sys::hipFuncCache_t, hip_values[raw as usize]);
    }
    assert_eq!(FuncCache::from_raw(4), None);
    if !no_device() {
        return;
    }
    let e = rdev::set_cache_config(hip::sys::hipFuncCachePreferShared).unwrap_err();
    eprintln!("hipDeviceSetCacheConfig without a device: {e}");
    names(&e, "hipDeviceSetCacheConfig");
    let e = rdev::get_cache_config().unwrap_err();
    eprintln!("hipDeviceGetCacheConfig without a device: {e}");
    names(&e, "hipDeviceGetCacheConfig");
}

#[test]
fn occupancy_with_flags_names_itself_without_a_device() {
    assert_eq!(
        hip::OccupancyFlags::DEFAULT.bits(),
        hip::sys::hipOccupancyDefault
    );
    assert_eq!(hip::OccupancyFlags::DISABLE_CACHING_OVERRIDE.bits(), 1);
    if !no_device() {
        return;
    }
    // SAFETY: no device exists (checked above): the runtime answers before it looks at the (null)
    // function, or refuses the null function itself.
    let e = unsafe {
        hip::result::occupancy::max_active_blocks_per_multiprocessor_with_flags(
            std::ptr::null_mut(),
            64,
            0,
            0,
        )
    }
    .unwrap_err();
    eprintln!("hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags without a device: {e}");
    names(
        &e,
        "hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    );
}
