//! The memory model's ordering and lifetime patterns (docs/MEMORY_MODEL.md) under the shadow HIP runtime
//! (shadow-hip/, scripts/shadow.sh): streams are host queues run after seeded random delays, and a
//! happens-before race detector checks every byte range each operation touches. Each test checks the
//! values and that the detector reported nothing.
#![cfg(feature = "shadow")]

mod shadow;

use hip::prelude::*;
use shadow::assert_no_reports;

const N: usize = 4096;
const ROUNDS: u32 = 8;

fn device() -> Device {
    Device::get(0).expect("the shadow runtime's device 0")
}

fn streams(d: &Device) -> (Stream, Stream) {
    (
        Stream::non_blocking(d).unwrap(),
        Stream::non_blocking(d).unwrap(),
    )
}

#[test]
fn write_on_a_then_read_on_b() {
    let d = device();
    let (a, b) = streams(&d);
    for round in 0..ROUNDS {
        let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        a.fill_async(&mut x, round + 7).unwrap();
        b.copy_device_async(&x, &mut y).unwrap();
        assert_eq!(y.to_vec().unwrap(), vec![round + 7; N]);
    }
    assert_no_reports();
}

#[test]
fn reads_on_two_streams_then_a_write() {
    let d = device();
    let (a, b) = streams(&d);
    for round in 0..ROUNDS {
        let x = DeviceBuffer::from_slice(&d, &vec![round; N]).unwrap();
        let mut x = x;
        let mut y1 = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        let mut y2 = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        a.copy_device_async(&x, &mut y1).unwrap();
        b.copy_device_async(&x, &mut y2).unwrap();
        a.fill_async(&mut x, 1000 + round).unwrap();
        assert_eq!(y1.to_vec().unwrap(), vec![round; N]);
        assert_eq!(y2.to_vec().unwrap(), vec![round; N]);
        assert_eq!(x.to_vec().unwrap(), vec![1000 + round; N]);
    }
    assert_no_reports();
}

#[test]
fn synchronous_copies_and_fills() {
    let d = device();
    let host: Vec<u32> = (0..N as u32).collect();
    let x = DeviceBuffer::from_slice(&d, &host).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    y.copy_from_device(&x).unwrap();
    assert_eq!(y.to_vec().unwrap(), host);
    y.memset_bytes(0xab).unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![0xabab_abab; N]);
    y.copy_from_host(&host).unwrap();
    let mut back = vec![0u32; N];
    y.copy_to_host(&mut back).unwrap();
    assert_eq!(back, host);
    y.zero().unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![0; N]);
    let mut h = DeviceBuffer::<u16>::zeroed(&d, N).unwrap();
    let s = Stream::new(&d).unwrap();
    s.fill_async(&mut h, 0xbeef).unwrap();
    assert_eq!(h.to_vec().unwrap(), vec![0xbeef; N]);
    assert_no_reports();
}

#[test]
fn pinned_buffers_and_their_host_access() {
    let d = device();
    let (a, b) = streams(&d);
    for round in 0..ROUNDS {
        let src = PinnedBuffer::from_slice(&d, &vec![round + 1; N]).unwrap();
        let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        let mut out = PinnedBuffer::<u32>::zeroed(&d, N).unwrap();
        a.copy_from_host_async(&src, &mut x).unwrap();
        b.copy_to_host_async(&x, &mut out).unwrap();
        let s = out.as_slice().unwrap();
        shadow::host_access(s, false);
        assert_eq!(s, &vec![round + 1; N][..]);
        // The host writes the pinned source while the device is done with it.
        let m = out.as_mut_slice().unwrap();
        shadow::host_access(m, true);
        m.fill(5);
        a.copy_from_host_async(&out, &mut x).unwrap();
        assert_eq!(x.to_vec().unwrap(), vec![5; N]);
    }
    assert_no_reports();
}

#[test]
fn host_functions_run_in_stream_order() {
    let d = device();
    let s = Stream::non_blocking(&d).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    for round in 0..ROUNDS {
        s.fill_async(&mut x, round).unwrap();
        let tx = tx.clone();
        s.launch_host_fn(move || tx.send(round).unwrap()).unwrap();
    }
    let got: Vec<u32> = (0..ROUNDS).map(|_| rx.recv().unwrap()).collect();
    assert_eq!(got, (0..ROUNDS).collect::<Vec<_>>());
    assert_eq!(x.to_vec().unwrap(), vec![ROUNDS - 1; N]);
    assert_no_reports();
}

#[test]
fn event_recorded_on_one_thread_waited_on_another() {
    let d = device();
    let (a, b) = streams(&d);
    for round in 0..ROUNDS {
        let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        a.fill_async(&mut x, round + 3).unwrap();
        let e = a.record_event().unwrap();
        let y = std::thread::scope(|t| {
            t.spawn(|| {
                b.wait_event(&e).unwrap();
                let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
                b.copy_device_async(&x, &mut y).unwrap();
                y
            })
            .join()
            .unwrap()
        });
        assert_eq!(y.to_vec().unwrap(), vec![round + 3; N]);
    }
    assert_no_reports();
}

#[test]
fn captured_copy_and_fill_replay() {
    let d = device();
    let s = Stream::non_blocking(&d).unwrap();
    let x = std::sync::Arc::new(DeviceBuffer::from_slice(&d, &vec![9u32; N]).unwrap());
    let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut z = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let graph = {
        let mut cap = s.begin_capture(hip::CaptureMode::ThreadLocal).unwrap();
        s.copy_device_async(&*x, &mut y).unwrap();
        s.fill_async(&mut z, 4).unwrap();
        cap.keep(x.clone());
        cap.end().unwrap()
    };
    assert_eq!(graph.node_count().unwrap(), 2);
    let mut exec = graph.instantiate().unwrap();
    for _ in 0..3 {
        exec.launch(&s).unwrap();
    }
    let other = Stream::non_blocking(&d).unwrap();
    let mut w = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    other.copy_device_async(&y, &mut w).unwrap();
    assert_eq!(w.to_vec().unwrap(), vec![9; N]);
    assert_eq!(z.to_vec().unwrap(), vec![4; N]);
    assert_no_reports();
}

#[test]
fn pool_buffers_freed_while_used_on_another_stream() {
    let d = device();
    let (a, b) = streams(&d);
    for round in 0..ROUNDS {
        let mut x = DeviceBuffer::<u32>::zeroed_async(&a, N).unwrap();
        a.fill_async(&mut x, round + 11).unwrap();
        let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        b.copy_device_async(&x, &mut y).unwrap();
        drop(x); // freed on A, in stream order after B's read
                 // The pool may hand the same memory out again at once.
        let mut again = DeviceBuffer::<u32>::zeroed_async(&a, N).unwrap();
        a.fill_async(&mut again, 1).unwrap();
        assert_eq!(y.to_vec().unwrap(), vec![round + 11; N]);
        assert_eq!(again.to_vec().unwrap(), vec![1; N]);
    }
    assert_no_reports();
}

#[test]
fn futures_to_vec_async_and_completion() {
    let d = device();
    let s = Stream::non_blocking(&d).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    for round in 0..ROUNDS {
        let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        s.fill_async(&mut x, round + 20).unwrap();
        let v = rt.block_on(x.to_vec_future(&s)).unwrap();
        assert_eq!(v, vec![round + 20; N]);
        s.fill_async(&mut x, round + 30).unwrap();
        rt.block_on(s.completion()).unwrap();
        assert_eq!(x.to_vec().unwrap(), vec![round + 30; N]);
    }
    assert_no_reports();
}

#[test]
fn staging_ring_large_pageable_copies() {
    let d = device();
    let n = (40 << 20) / 4; // past the ring's 16 MiB threshold: several 8 MiB chunks
    let host: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
    let x = DeviceBuffer::from_slice(&d, &host).unwrap();
    assert!(x.to_vec().unwrap() == host);
    let mut y = DeviceBuffer::<u32>::zeroed(&d, n).unwrap();
    y.copy_from_host(&host[..]).unwrap();
    let mut back = vec![0u32; n];
    y.copy_to_host(&mut back).unwrap();
    assert!(back == host);
    assert_no_reports();
}

#[test]
fn buffers_dropped_while_streams_use_them() {
    let d = device();
    let (a, b) = streams(&d);
    let mut keep = Vec::new();
    for round in 0..ROUNDS {
        let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        a.fill_async(&mut x, round).unwrap();
        let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        b.copy_device_async(&x, &mut y).unwrap();
        drop(x); // still read by B, written by A
        let pinned = PinnedBuffer::from_slice(&d, &vec![round; N]).unwrap();
        let mut z = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        a.copy_from_host_async(&pinned, &mut z).unwrap();
        drop(pinned); // still read by A
        keep.push((round, y, z));
    }
    for (round, y, z) in keep {
        assert_eq!(y.to_vec().unwrap(), vec![round; N]);
        assert_eq!(z.to_vec().unwrap(), vec![round; N]);
    }
    assert_no_reports();
}

#[test]
fn managed_buffers_on_two_streams_and_the_host() {
    let d = device();
    let (a, b) = streams(&d);
    for round in 0..ROUNDS {
        let mut m = ManagedBuffer::<u32>::zeroed(&d, N).unwrap();
        let src = DeviceBuffer::from_slice(&d, &vec![round + 40; N]).unwrap();
        a.copy_device_async(&src, &mut m).unwrap();
        let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        b.copy_device_async(&m, &mut y).unwrap();
        let s = m.as_mut_slice().unwrap(); // after A's write and B's read
        shadow::host_access(s, true);
        s.fill(round);
        let s = m.as_slice().unwrap();
        shadow::host_access(s, false);
        assert_eq!(s, &vec![round; N][..]);
        assert_eq!(y.to_vec().unwrap(), vec![round + 40; N]);
    }
    assert_no_reports();
}

#[test]
fn two_dimensional_copies_between_stream_work() {
    let d = device();
    let (a, _) = streams(&d);
    let (w, h, pitch) = (48usize, 32usize, 64usize);
    for round in 0..ROUNDS {
        let mut x = DeviceBuffer::<u32>::zeroed(&d, pitch * h).unwrap();
        a.fill_async(&mut x, round).unwrap(); // the padding keeps this value
        let host: Vec<u32> = (0..(w * h) as u32).map(|i| i + round).collect();
        x.copy_2d_from_host(pitch, &host, w, w, h).unwrap();
        let mut back = vec![0u32; w * h];
        x.copy_2d_to_host(pitch, &mut back, w, w, h).unwrap();
        assert_eq!(back, host);
        let all = x.to_vec().unwrap();
        assert!((0..h).all(|r| all[r * pitch + w..(r + 1) * pitch] == vec![round; pitch - w][..]));
    }
    assert_no_reports();
}
