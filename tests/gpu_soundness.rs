//! Issue 43's soundness pass on one device: memory adopted without elements is freed. Compiled only with
//! `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use common::device;
use hip::prelude::*;

/// Bytes of the raw allocations whose free is watched through the device's free memory: far above what
/// the other tests of this file allocate meanwhile.
const WATCHED: usize = 1 << 30;

/// A fresh `hipMalloc` of [`WATCHED`] bytes on `d` (current), seen leaving the device's free memory.
fn raw_allocation(d: &Device) -> (hip::DevicePtr, usize) {
    let (before, _) = d.memory_info().unwrap();
    let mut raw = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; `d` was made current by memory_info.
    let rc = unsafe { hip::sys::hipMalloc(&mut raw, WATCHED) };
    assert_eq!(rc, hip::sys::hipSuccess);
    let (after, _) = d.memory_info().unwrap();
    assert!(
        before.saturating_sub(after) >= WATCHED / 2,
        "{before} -> {after} free bytes"
    );
    (raw, after)
}

/// The device's free memory rose by most of [`WATCHED`] since it was `low`: the allocation was freed.
fn freed(d: &Device, low: usize, what: &str) {
    d.synchronize().unwrap();
    let (now, _) = d.memory_info().unwrap();
    assert!(
        now >= low + WATCHED / 2,
        "{what}: {low} -> {now} free bytes: the adopted allocation was not freed"
    );
}

#[test]
fn adopted_memory_holding_no_elements_is_freed_on_drop() {
    let d = device();
    // Zero elements of u32 at a live address: the address was handed over, so the buffer frees it.
    let (raw, low) = raw_allocation(&d);
    // SAFETY: `raw` is a fresh hipMalloc on `d` (more than 0 bytes), used and freed by nothing else.
    let empty = unsafe { DeviceBuffer::<u32>::from_raw(&d, raw, 0) }.unwrap();
    assert_eq!((empty.len(), empty.device_ptr()), (0, raw));
    drop(empty);
    freed(&d, low, "len 0");
    // Elements of a zero-sized type: no bytes, the same rule.
    let (raw, low) = raw_allocation(&d);
    // SAFETY: as above; `[u32; 0]` elements occupy no bytes.
    let none = unsafe { DeviceBuffer::<[u32; 0]>::from_raw(&d, raw, 5) }.unwrap();
    assert_eq!(none.len(), 5);
    drop(none);
    freed(&d, low, "zero-sized elements");
}
