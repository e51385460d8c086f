//! Memory pools of one's own under the shadow HIP runtime (scripts/shadow.sh runs this with
//! `HIP_RS_SHADOW_DEVICES=2`): allocations from a chosen pool ordered across streams like any buffer,
//! the pool kept alive by its buffers and by the device it is current on (the shadow reports a device's
//! current pool destroyed, and answers hipErrorInvalidValue for a destroyed pool), the used-bytes
//! attributes, access per device, reuse policies, and the refusals. Values checked, no report.
#![cfg(feature = "shadow")]

mod shadow;

use hip::prelude::*;
use hip::{Error, MemPool, PoolAccess, ReusePolicy};
use shadow::assert_no_reports;

const N: usize = 4096;

fn two() -> (Device, Device) {
    assert_eq!(
        Device::count().unwrap(),
        2,
        "run with HIP_RS_SHADOW_DEVICES=2 (scripts/shadow.sh does)"
    );
    (Device::get(0).unwrap(), Device::get(1).unwrap())
}

/// Whether the runtime still knows the raw pool (a destroyed one answers hipErrorInvalidValue).
fn alive(raw: hip::sys::hipMemPool_t) -> bool {
    let mut v = 0u64;
    // SAFETY: a query with a live out-pointer; a destroyed handle is an error code, not UB, in the shadow.
    let r = unsafe { hip::sys::hipMemPoolGetAttribute(raw, 4 as _, (&mut v as *mut u64).cast()) };
    r == hip::sys::hipSuccess
}

#[test]
fn a_pools_buffers_are_ordered_across_streams_and_counted() {
    let (d0, _) = two();
    let pool = MemPool::new(&d0).unwrap();
    assert!(pool.is_own());
    let (a, b) = (
        Stream::non_blocking(&d0).unwrap(),
        Stream::non_blocking(&d0).unwrap(),
    );
    pool.reset_high_water().unwrap();
    for round in 0..6u32 {
        let mut x = pool.zeroed::<u32>(&a, N).unwrap();
        // SAFETY: filled on `b` before anything reads it.
        let mut y = unsafe { pool.alloc::<u32>(&b, N) }.unwrap();
        b.fill_async(&mut y, round).unwrap();
        a.fill_async(&mut x, round + 1).unwrap(); // after a's zeroing
        b.copy_device_async(&x, &mut y).unwrap(); // after a's fill
        assert_eq!(pool.used_bytes().unwrap(), 2 * 4 * N as u64);
        assert_eq!(y.to_vec().unwrap(), vec![round + 1; N]);
        // Dropped with work queued: freed in stream order after it.
    }
    assert_eq!(pool.used_bytes().unwrap(), 0);
    assert_eq!(pool.used_high_water().unwrap(), 2 * 4 * N as u64);
    pool.reset_high_water().unwrap();
    assert_eq!(pool.used_high_water().unwrap(), 0);
    assert!(pool.reserved_bytes().unwrap() <= pool.reserved_high_water().unwrap());
    assert_no_reports();
}

#[test]
fn a_pool_lives_while_a_buffer_from_it_does() {
    let (d0, _) = two();
    let s = Stream::non_blocking(&d0).unwrap();
    let pool = MemPool::new(&d0).unwrap();
    let raw = pool.raw();
    let mut x = pool.zeroed::<f32>(&s, N).unwrap();
    drop(pool);
    assert!(alive(raw), "the buffer keeps its pool");
    s.fill_async(&mut x, 2.5).unwrap();
    assert_eq!(x.to_vec().unwrap(), vec![2.5; N]);
    drop(x);
    s.synchronize().unwrap();
    assert!(!alive(raw), "destroyed with its last buffer");
    // A pool with no buffer goes with its last clone.
    let pool = MemPool::new(&d0).unwrap();
    let (raw, clone) = (pool.raw(), pool.clone());
    drop(pool);
    assert!(alive(raw));
    drop(clone);
    assert!(!alive(raw));
    assert_no_reports();
}

#[test]
fn a_devices_current_pool_serves_alloc_async_and_is_kept_while_current() {
    let (d0, _) = two();
    let s = Stream::non_blocking(&d0).unwrap();
    let pool = MemPool::new(&d0).unwrap();
    let raw = pool.raw();
    d0.set_mem_pool(&pool).unwrap();
    assert_eq!(d0.mem_pool().unwrap().raw(), raw);
    assert!(d0.mem_pool().unwrap().is_own());
    drop(pool); // the device keeps it
    assert!(alive(raw));
    let x = DeviceBuffer::<u64>::zeroed_async(&s, N).unwrap();
    assert_eq!(d0.mem_pool().unwrap().used_bytes().unwrap(), 8 * N as u64);
    d0.reset_mem_pool().unwrap();
    assert!(!d0.mem_pool().unwrap().is_own());
    assert!(alive(raw), "the buffer from the current pool keeps it");
    assert_eq!(x.to_vec().unwrap(), vec![0; N]);
    drop(x);
    s.synchronize().unwrap();
    assert!(!alive(raw));
    let y = DeviceBuffer::<u64>::zeroed_async(&s, N).unwrap(); // from the default pool again
    assert_eq!(y.to_vec().unwrap(), vec![0; N]);
    assert_no_reports();
}

#[test]
fn access_reuse_and_refusals() {
    let (d0, d1) = two();
    let pool = MemPool::new(&d0).unwrap();
    assert_eq!(pool.device().ordinal(), 0);
    assert_eq!(pool.access(&d0).unwrap(), PoolAccess::ReadWrite);
    assert_eq!(pool.access(&d1).unwrap(), PoolAccess::None);
    pool.set_access(&d1, PoolAccess::ReadWrite).unwrap();
    assert_eq!(pool.access(&d1).unwrap(), PoolAccess::ReadWrite);
    pool.set_access(&d1, PoolAccess::Read).unwrap();
    assert_eq!(pool.access(&d1).unwrap(), PoolAccess::Read);
    let e = pool.set_access(&d0, PoolAccess::None).unwrap_err();
    assert!(e.to_string().contains("hipMemPoolSetAccess"), "{e}");
    for policy in [
        ReusePolicy::FollowEventDependencies,
        ReusePolicy::AllowOpportunistic,
        ReusePolicy::AllowInternalDependencies,
    ] {
        assert!(pool.reuse(policy).unwrap(), "{policy:?} on by default");
        pool.set_reuse(policy, false).unwrap();
        assert!(!pool.reuse(policy).unwrap());
    }
    pool.set_release_threshold(1 << 20).unwrap();
    assert_eq!(pool.release_threshold().unwrap(), 1 << 20);

    let s1 = Stream::non_blocking(&d1).unwrap();
    let e = pool.zeroed::<u8>(&s1, 16).unwrap_err();
    assert!(matches!(e, Error::DeviceMismatch { .. }), "{e}");
    let e = d1.set_mem_pool(&pool).unwrap_err();
    assert!(matches!(e, Error::DeviceMismatch { .. }), "{e}");
    let s0 = Stream::non_blocking(&d0).unwrap();
    let e = pool.zeroed::<u64>(&s0, usize::MAX / 4).unwrap_err();
    assert!(matches!(e, Error::AllocationTooLarge { .. }), "{e}");
    assert_eq!(pool.used_bytes().unwrap(), 0);
    // Nothing allocated or zero-sized: no call, a buffer of that length all the same.
    assert_eq!(pool.zeroed::<u32>(&s0, 0).unwrap().len(), 0);
    assert_no_reports();
}
