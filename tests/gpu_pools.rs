//! Memory pools of one's own on a real device (`--features gpu`): buffers from a chosen pool ordered
//! across streams behind a slow writer, the pool kept alive by its buffers and by the device it is
//! current on, the used and reserved bytes, reuse policies, access, trimming, and the refusals.
#![cfg(feature = "gpu")]
mod common;

use common::device;
use common::slow::Slow;
use hip::prelude::*;
use hip::{Error, MemPool, PoolAccess, ReusePolicy};

const N: usize = 1 << 20;

/// A slow fill on one stream, then a copy from the pool's buffer on another: the copy waits (memory
/// model), so it sees the fill's value, every round; the buffers are dropped with work queued.
#[test]
fn pool_buffers_are_ordered_across_streams_behind_a_slow_writer() {
    let d = device();
    let slow = Slow::new(&d);
    let pool = MemPool::new(&d).unwrap();
    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    for round in 0..4 {
        let mut x = pool.zeroed::<f32>(&a, N).unwrap();
        let mut y = pool.zeroed::<f32>(&b, N).unwrap();
        slow.fill(&a, &mut x, round as f32 + 0.5);
        b.copy_device_async(&x, &mut y).unwrap();
        assert!(pool.used_bytes().unwrap() >= 2 * 4 * N as u64);
        assert!(
            y.to_vec().unwrap().iter().all(|&v| v == round as f32 + 0.5),
            "round {round}"
        );
    }
    d.synchronize().unwrap();
    assert_eq!(pool.used_bytes().unwrap(), 0, "every buffer freed");
    assert!(pool.used_high_water().unwrap() >= 2 * 4 * N as u64);
    assert!(pool.reserved_high_water().unwrap() >= pool.used_high_water().unwrap());
    pool.trim_to(0).unwrap();
    d.synchronize().unwrap();
    assert_eq!(
        pool.reserved_bytes().unwrap(),
        0,
        "trimmed with nothing in use"
    );
}

#[test]
fn a_pool_outlives_its_handle_while_buffers_and_the_device_use_it() {
    let d = device();
    let s = Stream::non_blocking(&d).unwrap();
    let pool = MemPool::new(&d).unwrap();
    let mut x = pool.zeroed::<u32>(&s, N).unwrap();
    drop(pool);
    s.fill_async(&mut x, 7).unwrap();
    assert!(x.to_vec().unwrap().iter().all(|&v| v == 7));
    drop(x);

    let pool = MemPool::new(&d).unwrap();
    pool.set_release_threshold(u64::MAX).unwrap();
    d.set_mem_pool(&pool).unwrap();
    let raw = pool.raw();
    drop(pool);
    let current = d.mem_pool().unwrap();
    assert!(current.is_own() && current.raw() == raw);
    let y = DeviceBuffer::<u64>::zeroed_async(&s, N).unwrap();
    assert!(
        current.used_bytes().unwrap() >= 8 * N as u64,
        "alloc_async took from it"
    );
    d.reset_mem_pool().unwrap();
    assert!(!d.mem_pool().unwrap().is_own());
    assert!(y.to_vec().unwrap().iter().all(|&v| v == 0));
    drop((y, current));
    d.synchronize().unwrap();
}

#[test]
fn attributes_access_and_refusals() {
    let d = device();
    let pool = MemPool::new(&d).unwrap();
    assert_eq!(pool.access(&d).unwrap(), PoolAccess::ReadWrite);
    let e = pool.set_access(&d, PoolAccess::None).unwrap_err();
    assert!(e.to_string().contains("hipMemPoolSetAccess"), "{e}");
    for p in [
        ReusePolicy::FollowEventDependencies,
        ReusePolicy::AllowOpportunistic,
        ReusePolicy::AllowInternalDependencies,
    ] {
        assert!(pool.reuse(p).unwrap(), "{p:?} is on by default");
        pool.set_reuse(p, false).unwrap();
        assert!(!pool.reuse(p).unwrap());
        pool.set_reuse(p, true).unwrap();
    }
    pool.set_release_threshold(1 << 26).unwrap();
    assert_eq!(pool.release_threshold().unwrap(), 1 << 26);
    pool.reset_high_water().unwrap();
    let s = Stream::non_blocking(&d).unwrap();
    let e = pool.zeroed::<u64>(&s, usize::MAX / 4).unwrap_err();
    assert!(matches!(e, Error::AllocationTooLarge { .. }), "{e}");
    // More than the device holds: the runtime's out-of-memory, as an error.
    let too_much = d.memory_info().unwrap().1 * 2;
    let e = pool.zeroed::<u8>(&s, too_much).unwrap_err();
    assert!(e.to_string().contains("hipMallocFromPoolAsync"), "{e}");
    assert_eq!(pool.zeroed::<u32>(&s, 0).unwrap().len(), 0);
}
