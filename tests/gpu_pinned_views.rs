//! Views of pinned memory in asynchronous copies: a chunked pipeline through one pinned buffer, and the
//! views' completion tracking (the host never reads or writes elements a queued copy still uses).
//! Compiled only with `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use common::{device, load, ORDERING_KERNELS};
use hip::prelude::*;
use hip::Error;

const CHUNK: usize = 1 << 18;
const CHUNKS: usize = 4;
/// About a millisecond on current GPUs: copies queued after it are still pending when the host asks.
const SPIN: i64 = 2_000_000;

fn spin(m: &Module, s: &Stream) {
    let k = m.function("spin").unwrap();
    let mut args = LaunchArgs::new();
    args.arg(&SPIN);
    // SAFETY: spin(long long) touches no memory.
    unsafe { k.launch(s, &LaunchConfig::new(1, 1), &mut args).unwrap() };
}

#[test]
fn a_chunked_pipeline_copies_through_views_of_one_pinned_buffer() {
    let d = device();
    let streams: Vec<Stream> = (0..CHUNKS).map(|_| Stream::new(&d).unwrap()).collect();
    let src: Vec<u32> = (0..(CHUNK * CHUNKS) as u32)
        .map(|i| i.wrapping_mul(2654435761))
        .collect();
    let mut staging = PinnedBuffer::from_slice(&d, &src).unwrap();
    let mut dev = DeviceBuffer::from_slice(&d, &vec![u32::MAX; CHUNK * CHUNKS]).unwrap();
    // Host -> device, one chunk per stream, each from a read-only view.
    for (i, s) in streams.iter().enumerate() {
        let r = i * CHUNK..(i + 1) * CHUNK;
        let view = staging.slice(r.clone()).unwrap();
        assert_eq!(view.len(), CHUNK);
        s.copy_from_host_async(&view, &mut dev.slice_mut(r).unwrap())
            .unwrap();
    }
    assert_eq!(dev.to_vec().unwrap(), src);
    // Device -> host back into the same pinned buffer (sentinel first), one writable view per chunk.
    staging.as_mut_slice().unwrap().fill(7);
    for (i, s) in streams.iter().enumerate() {
        let r = i * CHUNK..(i + 1) * CHUNK;
        let mut view = staging.slice_mut(r.clone()).unwrap();
        s.copy_to_host_async(&dev.slice(r).unwrap(), &mut view)
            .unwrap();
    }
    assert_eq!(staging.as_slice().unwrap(), &src[..]);
}

#[test]
fn a_view_waits_for_the_copies_that_use_its_buffer() {
    let d = device();
    let m = load(&d, ORDERING_KERNELS);
    let s = Stream::non_blocking(&d).unwrap();
    let other = Stream::non_blocking(&d).unwrap();
    let old: Vec<u32> = (0..CHUNK as u32).collect();
    let mut pinned = PinnedBuffer::from_slice(&d, &[old.clone(), old.clone()].concat()).unwrap();
    let mut dev = DeviceBuffer::from_slice(&d, &vec![u32::MAX; CHUNK]).unwrap();
    for round in 0..10u32 {
        // A copy reading the first half, queued behind a slow kernel: the host's write through the
        // view must wait for it, so the device gets the old values.
        let (mut first, mut second) = pinned.split_at_mut(CHUNK).unwrap();
        spin(&m, &s);
        s.copy_from_host_async(&first, &mut dev).unwrap();
        first.as_mut_slice().unwrap().fill(round + 1_000_000);
        assert_eq!(
            dev.to_vec().unwrap(),
            old,
            "round {round}: the host overtook the copy"
        );
        // A copy writing the second half from another stream, behind a slow kernel: reading the view
        // sees what it wrote.
        let fresh = DeviceBuffer::from_slice(&d, &vec![round; CHUNK]).unwrap();
        spin(&m, &other);
        other.copy_to_host_async(&fresh, &mut second).unwrap();
        assert!(
            second.as_slice().unwrap().iter().all(|&v| v == round),
            "round {round}: the host read before the copy landed"
        );
        // Put the old values back for the next round.
        first.as_mut_slice().unwrap().copy_from_slice(&old);
        second.as_mut_slice().unwrap().copy_from_slice(&old);
    }
}

#[test]
fn views_out_of_range_or_of_another_length_are_refused() {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let mut pinned = PinnedBuffer::from_slice(&d, &[5u32; 16]).unwrap();
    let mut dev = DeviceBuffer::<u32>::zeroed(&d, 8).unwrap();
    assert!(matches!(
        pinned.slice(0..17),
        Err(Error::OutOfBounds {
            start: 0,
            end: 17,
            len: 16
        })
    ));
    assert!(matches!(
        pinned.slice_mut(17..),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        pinned.split_at_mut(17),
        Err(Error::OutOfBounds { .. })
    ));
    let (a, b) = pinned.split_at_mut(16).unwrap();
    assert_eq!((a.len(), b.len()), (16, 0));
    // A view of 9 into a buffer of 8: the lengths are named, nothing is queued.
    match s.copy_from_host_async(&pinned.slice(0..9).unwrap(), &mut dev) {
        Err(Error::LengthMismatch {
            expected: 8,
            actual: 9,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    // An empty view copies nothing and needs no device work.
    s.copy_to_host_async(
        &dev.slice(0..0).unwrap(),
        &mut pinned.slice_mut(3..3).unwrap(),
    )
    .unwrap();
    s.copy_to_host_async(&dev, &mut pinned.slice_mut(8..).unwrap())
        .unwrap();
    assert_eq!(
        pinned.as_slice().unwrap(),
        &[[5u32; 8], [0u32; 8]].concat()[..]
    );
}
