//! Queued uploads from ordinary (pageable) host memory (`Stream::copy_from_slice_async`), run on the GPU
//! (tests/gpu_runtime_families.rs) and under the shadow runtime (tests/shadow_runtime_families.rs, which
//! also asserts no race is reported). Each round a slow write of a device buffer on stream `a`, then an
//! upload into it on stream `b` from a `Vec` dropped at once: the upload waits for the slow write (no wait
//! by the test) and lands the round's values. Then eight uploads queued behind a slow kernel (every
//! pooled staging buffer busy: new ones are taken), each landing its own values; a 12 MiB upload into a
//! view (several pieces and threads); the refusals.

use hip::prelude::*;

const N: usize = 4096;
const ROUNDS: u32 = 4;

/// `slow_write(stream, buffer)` queues a write of the buffer that takes a while (its values do not
/// matter: the upload overwrites them after it).
pub fn uploads_from_pageable_slices_are_ordered(
    d: &Device,
    slow_write: &dyn Fn(&Stream, &mut DeviceBuffer<f32>),
) {
    let (a, b) = (
        Stream::non_blocking(d).unwrap(),
        Stream::non_blocking(d).unwrap(),
    );
    let mut x = DeviceBuffer::<f32>::zeroed(d, N).unwrap();
    for round in 1..=ROUNDS {
        let v = round as f32;
        slow_write(&a, &mut x);
        let values = vec![v; N];
        b.copy_from_slice_async(&values, &mut x).unwrap();
        drop(values); // read by the time the call returned
        assert_eq!(x.to_vec().unwrap(), vec![v; N], "round {round}");
    }
    // Eight uploads behind a slow kernel on their stream: the staging buffers of the first are still
    // busy when the next come, so each takes its own.
    let mut ys: Vec<DeviceBuffer<f32>> = (0..8)
        .map(|_| DeviceBuffer::zeroed(d, N).unwrap())
        .collect();
    slow_write(&b, &mut ys[0]);
    for (i, y) in ys.iter_mut().enumerate() {
        b.copy_from_slice_async(&vec![i as f32 + 0.5; N], y)
            .unwrap();
    }
    for (i, y) in ys.iter().enumerate() {
        assert_eq!(y.to_vec().unwrap(), vec![i as f32 + 0.5; N], "upload {i}");
    }
    // A large upload into a view (several pieces, staged by several threads where the machine has the
    // cores): every element lands at its place, and the rest of the buffer stays.
    let big: Vec<u32> = (0..3u32 << 20).collect();
    let mut z = DeviceBuffer::<u32>::zeroed(d, big.len() + 64).unwrap();
    a.copy_from_slice_async(&big, &mut z.slice_mut(32..32 + big.len()).unwrap())
        .unwrap();
    let got = z.to_vec().unwrap();
    assert!(got[..32]
        .iter()
        .chain(&got[32 + big.len()..])
        .all(|&v| v == 0));
    let wrong = (0..big.len()).filter(|&i| got[32 + i] != i as u32).count();
    assert_eq!(wrong, 0, "elements of the large upload misplaced");
    // Refusals: another length, a capturing stream. Nothing to copy is fine.
    assert!(matches!(
        b.copy_from_slice_async(&[1.0f32; 3], &mut x),
        Err(hip::Error::LengthMismatch { .. })
    ));
    let mut empty = DeviceBuffer::<f32>::zeroed(d, 0).unwrap();
    b.copy_from_slice_async(&[], &mut empty).unwrap();
    let capture = a.begin_capture(CaptureMode::ThreadLocal).unwrap();
    let e = capture
        .stream()
        .copy_from_slice_async(&vec![9.0f32; N], &mut x)
        .unwrap_err();
    assert!(matches!(e, hip::Error::InvalidArgument { .. }), "{e}");
    drop(capture.end().unwrap());
    assert_eq!(x.to_vec().unwrap(), vec![ROUNDS as f32; N]);
}
