//! Large pageable copies through the user's registered pages (`StagingConfig::register_bytes`:
//! `hipHostRegister` for the copy's duration, `hipHostUnregister` after it completed) under the shadow
//! HIP runtime: unaligned starts and partial pages at both ends come back exact in both directions, the
//! unregister is ordered after the copies (the shadow checks it like a free), and a register that fails
//! (the pages registered already) falls back with the same values.
#![cfg(feature = "shadow")]

mod shadow;

use hip::memory::staging::{self, StagingConfig};
use hip::prelude::*;
use shadow::assert_no_reports;

const PAGE: usize = 4096;

fn lib() -> libloading::Library {
    // SAFETY: the shadow runtime the hip crate opened already.
    unsafe { libloading::Library::new(std::env::var("HIP_RS_AMDHIP64").unwrap()).unwrap() }
}

fn registrations() -> usize {
    // SAFETY: `size_t hip_rs_shadow_registrations(void)`.
    unsafe {
        lib()
            .get::<extern "C" fn() -> usize>(b"hip_rs_shadow_registrations\0")
            .unwrap()()
    }
}

fn register_all() {
    staging::set_config(StagingConfig {
        enabled: true,
        threshold_bytes: 64 << 10,
        chunk_bytes: 64 << 10,
        register_bytes: 0,
        ..StagingConfig::default()
    });
}

#[test]
fn unaligned_slices_with_partial_pages_copy_exactly_both_ways() {
    register_all();
    let d = Device::get(0).unwrap();
    let n = 20 * PAGE + 123; // past the 64 KiB threshold, ending mid-page
    let host: Vec<u8> = (0..n + 7).map(|i| (i * 13 % 251) as u8).collect();
    for start in [0usize, 1, 3, 4095, 4096] {
        let len = n - start;
        let src = &host[start..start + len];
        let mut dev = DeviceBuffer::<u8>::zeroed(&d, len).unwrap();
        let before = registrations();
        dev.copy_from_host(src).unwrap();
        let mut back = vec![0u8; len + 5];
        let dst = &mut back[5..]; // another unaligned start
        dev.copy_to_host(dst).unwrap();
        assert_eq!(dst, src, "start {start}");
        assert_eq!(
            registrations() - before,
            2,
            "start {start}: both copies registered their pages"
        );
    }
    staging::set_config(StagingConfig::default());
    assert_no_reports();
}

#[test]
fn a_failing_register_falls_back_with_the_same_values() {
    register_all();
    let d = Device::get(0).unwrap();
    let src: Vec<u32> = (0..(1u32 << 16)).collect();
    type Reg = unsafe extern "C" fn(*mut std::ffi::c_void, usize, u32) -> u32;
    type Unreg = unsafe extern "C" fn(*mut std::ffi::c_void) -> u32;
    let l = lib();
    // SAFETY: the shadow's hipHostRegister / hipHostUnregister on a live Vec, unregistered before it goes.
    let (reg, unreg) = unsafe {
        (
            l.get::<Reg>(b"hipHostRegister\0").unwrap(),
            l.get::<Unreg>(b"hipHostUnregister\0").unwrap(),
        )
    };
    let p = src.as_ptr() as *mut std::ffi::c_void;
    // SAFETY: as above: the whole Vec, registered by the test (the crate's register then fails).
    assert_eq!(unsafe { reg(p, src.len() * 4, 0) }, 0);
    let mut dev = DeviceBuffer::<u32>::zeroed(&d, src.len()).unwrap();
    let before = registrations();
    dev.copy_from_host(&src).unwrap();
    assert_eq!(registrations(), before, "the crate's register failed");
    assert_eq!(dev.to_vec().unwrap(), src);
    // SAFETY: registered above; the copy completed (to_vec synchronized after it).
    assert_eq!(unsafe { unreg(p) }, 0);
    staging::set_config(StagingConfig::default());
    assert_no_reports();
}
