//! Issue 43's soundness pass on one device: memory adopted without elements is freed, and stream-ordered
//! buffers of zero-sized elements keep their length. Compiled only with `--features gpu`.
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

#[test]
fn stream_ordered_buffers_of_zero_sized_elements_keep_their_length() {
    let d = device();
    let s = Stream::new(&d).unwrap();
    // `zeroed` kept the length asked for; the stream-ordered forms answered 0.
    assert_eq!(DeviceBuffer::<[f32; 0]>::zeroed(&d, 7).unwrap().len(), 7);
    // SAFETY: zero-sized elements: there are no bytes to leave uninitialised.
    let b = unsafe { DeviceBuffer::<[f32; 0]>::alloc_async(&s, 7) }.unwrap();
    assert_eq!((b.len(), b.is_empty()), (7, false));
    let z = DeviceBuffer::<[f32; 0]>::zeroed_async(&s, 9).unwrap();
    assert_eq!((z.len(), z.is_empty()), (9, false));
    assert_eq!(z.to_vec().unwrap(), vec![[0f32; 0]; 9]);
    // The default stream takes the same path.
    let on_default = DeviceBuffer::<[u8; 0]>::zeroed_async(&d.default_stream(), 3).unwrap();
    assert_eq!(on_default.len(), 3);
    // Zero elements of a sized type are still none.
    assert_eq!(DeviceBuffer::<f32>::zeroed_async(&s, 0).unwrap().len(), 0);
    s.synchronize().unwrap();
}
