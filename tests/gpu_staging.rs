//! The pageable-copy staging ring on a real device: results identical to raw copies at every size and
//! setting. Compiled only with `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use hip::memory::staging::{self, StagingConfig};
use hip::prelude::*;
use hip::DeviceMemoryMut;
use std::sync::Mutex;

/// The configuration is process-wide: tests that change it take turns.
static CONFIG: Mutex<()> = Mutex::new(());

use common::device;

fn pattern(n: usize, seed: u32) -> Vec<u32> {
    (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761).wrapping_add(seed))
        .collect()
}

/// Each element's bitwise complement: a sentinel that differs from `v` at every element.
fn complement(v: &[u32]) -> Vec<u32> {
    v.iter().map(|x| !x).collect()
}

fn round_trip(d: &Device, n: usize, seed: u32) {
    let host = pattern(n, seed);
    // The device side starts as the complement, set through an asynchronous copy from pinned memory (never
    // staged), so the staged copies under test did not set it up: one that skipped a chunk leaves it.
    let mut dev = unsafe { DeviceBuffer::<u32>::uninit(d, n).unwrap() };
    let s = Stream::new(d).unwrap();
    s.copy_from_host_async(
        &PinnedBuffer::from_slice(d, &complement(&host)).unwrap(),
        &mut dev,
    )
    .unwrap();
    s.synchronize().unwrap();
    dev.copy_from_host(&host).unwrap();
    assert_eq!(dev.to_vec().unwrap(), host, "to_vec, {n} elements");
    let mut back = complement(&host);
    dev.copy_to_host(&mut back).unwrap();
    assert_eq!(back, host, "copy_to_host, {n} elements");
}

#[test]
fn staged_copies_match_at_every_size_and_setting() {
    let _turn = CONFIG.lock().unwrap_or_else(|e| e.into_inner());
    let d = device();
    let saved = staging::config();
    // Tiny chunks and a tiny threshold: many chunks, the ring wraps around many times; then the same
    // through the user's registered pages (issue 56: unaligned Vec starts, partial pages at both ends).
    // The ramp (smaller pieces at both ends of a copy of more than two chunks) on and off.
    for (threads, buffers, register_bytes, ramp) in [
        (1, 2, usize::MAX, false),
        (4, 3, usize::MAX, true),
        (8, 4, usize::MAX, false),
        (8, 4, usize::MAX, true),
        (4, 3, 0, false),
    ] {
        staging::set_config(StagingConfig {
            enabled: true,
            threshold_bytes: 1,
            chunk_bytes: 64 << 10,
            buffers,
            threads,
            register_bytes,
            ramp,
        });
        for n in [1usize, 1000, 16_384, 16_385, 250_001, 1 << 20] {
            round_trip(&d, n, n as u32 ^ threads as u32);
        }
    }
    // The defaults, at sizes above the threshold, including an odd one.
    staging::set_config(StagingConfig::default());
    for n in [(64 << 20) / 4, (96 << 20) / 4 + 3] {
        round_trip(&d, n, 7);
    }
    // A pinned host side is copied directly (not staged): still the same results.
    let n = (32 << 20) / 4;
    let mut pinned = PinnedBuffer::<u32>::zeroed(&d, n).unwrap();
    pinned
        .as_mut_slice()
        .unwrap()
        .copy_from_slice(&pattern(n, 3));
    let mut dev = unsafe { DeviceBuffer::<u32>::uninit(&d, n).unwrap() };
    dev.copy_from_host(pinned.as_slice().unwrap()).unwrap();
    assert_eq!(dev.to_vec().unwrap(), pattern(n, 3));
    pinned
        .as_mut_slice()
        .unwrap()
        .copy_from_slice(&complement(&pattern(n, 3)));
    dev.copy_to_host(pinned.as_mut_slice().unwrap()).unwrap();
    assert_eq!(pinned.as_slice().unwrap(), &pattern(n, 3)[..]);
    // Off with one setting: the same results.
    staging::set_config(StagingConfig::disabled());
    round_trip(&d, (32 << 20) / 4 + 1, 9);
    staging::set_config(saved);
}

#[test]
fn concurrent_staged_copies_from_several_threads() {
    let _turn = CONFIG.lock().unwrap_or_else(|e| e.into_inner());
    let d = device();
    let saved = staging::config();
    staging::set_config(StagingConfig {
        threshold_bytes: 1 << 20,
        ..StagingConfig::default()
    });
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let d = d.clone();
            s.spawn(move || {
                for i in 0..3 {
                    round_trip(&d, (5 << 20) / 4 + i, t * 10 + i as u32);
                }
            });
        }
    });
    staging::set_config(saved);
}
