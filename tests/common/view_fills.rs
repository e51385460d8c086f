//! 1-, 2- and 4-byte fills of device views (`Stream::fill_async` on a `DeviceSliceMut`), run on the GPU
//! (tests/gpu_runtime_families.rs) and under the shadow runtime (tests/shadow_runtime_families.rs, which
//! also asserts no race is reported): a whole buffer filled on one stream, parts of it on a second and a
//! third (each waits for the fill before it, with no wait by the test), then every element checked.

use hip::memory::DeviceCopy;
use hip::prelude::*;

fn case<T: DeviceCopy + PartialEq + std::fmt::Debug>(d: &Device, all: T, part: T, last: T) {
    const N: usize = 1000;
    let (a, b, c) = (
        Stream::non_blocking(d).unwrap(),
        Stream::non_blocking(d).unwrap(),
        Stream::non_blocking(d).unwrap(),
    );
    let mut x = DeviceBuffer::<T>::zeroed(d, N).unwrap();
    for _ in 0..3 {
        a.fill_async(&mut x, all).unwrap();
        b.fill_async(&mut x.slice_mut(100..300).unwrap(), part)
            .unwrap();
        c.fill_async(&mut x.slice_mut(250..251).unwrap(), last)
            .unwrap();
        c.fill_async(&mut x.slice_mut(N..N).unwrap(), last).unwrap();
    }
    let got = x.to_vec().unwrap();
    let want = |i: usize| match i {
        250 => last,
        100..300 => part,
        _ => all,
    };
    let wrong: Vec<usize> = (0..N).filter(|&i| got[i] != want(i)).collect();
    assert!(
        wrong.is_empty(),
        "{} bytes: wrong at {:?}",
        size_of::<T>(),
        &wrong[..wrong.len().min(8)]
    );
}

/// The case for 1-, 2- and 4-byte elements.
pub fn fills_of_device_views_are_ordered_across_streams(d: &Device) {
    case::<u8>(d, 1, 2, 3);
    case::<u16>(d, 0x1111, 0x2222, 0x3333);
    case::<u32>(d, 0x1111_1111, 0x2222_2222, 0x3333_3333);
    case::<f32>(d, 1.5, -2.0, 3.25);
}
