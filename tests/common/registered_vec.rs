//! The program's own `Vec` as a pinned buffer (`PinnedBuffer::register`, `into_vec`), run on the GPU
//! (tests/gpu_runtime_families.rs) and under the shadow runtime (tests/shadow_runtime_families.rs, which
//! also asserts no race is reported: the unregister is checked like a free). Each round a slow write of a
//! device buffer on stream `a`, then its download into the registered `Vec`; stream `b` uploads the `Vec`
//! (it waits for `a`'s download, with no wait by the test). Then a blocking copy from a slice of the
//! registered pages, the `Vec` given back (the same allocation), a buffer dropped under a queued upload
//! (unregistered and freed after the upload read it), an empty `Vec`, and `into_vec` of `hipHostMalloc`
//! memory (a copy).

use hip::prelude::*;

const N: usize = 4096;
const ROUNDS: u32 = 4;

/// `slow_write(stream, buffer)` queues a write of the buffer that takes a while (its values do not
/// matter: a copy overwrites them after it on the same stream).
pub fn a_registered_vec_is_ordered_kept_and_given_back(
    d: &Device,
    slow_write: &dyn Fn(&Stream, &mut DeviceBuffer<f32>),
) {
    let (a, b) = (
        Stream::non_blocking(d).unwrap(),
        Stream::non_blocking(d).unwrap(),
    );
    let values: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let addr = values.as_ptr();
    let mut host = PinnedBuffer::register(d, values).unwrap();
    assert_eq!((host.len(), host.as_slice().unwrap()[7]), (N, 7.0));
    let mut dev = DeviceBuffer::<f32>::zeroed(d, N).unwrap();
    let mut up = DeviceBuffer::<f32>::zeroed(d, N).unwrap();
    for round in 1..=ROUNDS {
        let v = round as f32;
        let src = DeviceBuffer::from_slice(d, &vec![v; N]).unwrap();
        slow_write(&a, &mut dev);
        a.copy_device_async(&src, &mut dev).unwrap();
        a.copy_to_host_async(&dev, &mut host).unwrap();
        b.copy_from_host_async(&host, &mut up).unwrap();
        assert_eq!(up.to_vec().unwrap(), vec![v; N], "round {round}");
    }
    // A blocking copy from a slice of the registered pages (the pageable path) reads them too.
    let mut copy = DeviceBuffer::<f32>::zeroed(d, N).unwrap();
    copy.copy_from_host(host.as_slice().unwrap()).unwrap();
    assert_eq!(copy.to_vec().unwrap(), vec![ROUNDS as f32; N]);
    // Given back behind a last download: the same allocation, holding what the download wrote.
    let zeros = DeviceBuffer::<f32>::zeroed(d, N).unwrap();
    slow_write(&a, &mut dev);
    a.copy_device_async(&zeros, &mut dev).unwrap();
    a.copy_to_host_async(&dev, &mut host).unwrap();
    let back = host.into_vec().unwrap();
    assert_eq!(
        back.as_ptr(),
        addr,
        "into_vec gives the registered Vec back"
    );
    assert_eq!(back, vec![0.0; N]);
    // Dropped under a queued upload: unregistered and freed only after the upload read it.
    let host = PinnedBuffer::register(d, vec![7.0f32; N]).unwrap();
    let mut x = DeviceBuffer::<f32>::zeroed(d, N).unwrap();
    slow_write(&b, &mut x);
    b.copy_from_host_async(&host, &mut x).unwrap();
    drop(host);
    assert_eq!(x.to_vec().unwrap(), vec![7.0; N]);
    // An empty Vec registers nothing and comes back with its capacity.
    let empty: Vec<f32> = Vec::with_capacity(100);
    let p = empty.as_ptr();
    let host = PinnedBuffer::register(d, empty).unwrap();
    assert!(host.is_empty());
    let back = host.into_vec().unwrap();
    assert_eq!((back.as_ptr(), back.len()), (p, 0));
    assert!(back.capacity() >= 100);
    // hipHostMalloc memory has no Vec to give back: its contents are copied.
    let pinned = PinnedBuffer::from_slice(d, &[1.0f32, 2.0, 3.0]).unwrap();
    assert_eq!(pinned.into_vec().unwrap(), [1.0, 2.0, 3.0]);
}
