//! Two devices under the shadow HIP runtime (scripts/shadow.sh runs this with `HIP_RS_SHADOW_DEVICES=2`):
//! peer copies ordered after and before each device's work, each device's null stream with its own
//! legacy order, buffers of one device dropped while the other's stream still reads them. Each checks
//! its values and that the race detector reported nothing.
#![cfg(feature = "shadow")]

mod shadow;

use hip::prelude::*;
use shadow::assert_no_reports;

const N: usize = 4096;
const ROUNDS: u32 = 8;

fn two() -> (Device, Device) {
    assert_eq!(
        Device::count().unwrap(),
        2,
        "run with HIP_RS_SHADOW_DEVICES=2 (scripts/shadow.sh does)"
    );
    (Device::get(0).unwrap(), Device::get(1).unwrap())
}

#[test]
fn peer_copies_between_each_devices_work() {
    let (d0, d1) = two();
    let s0 = Stream::non_blocking(&d0).unwrap();
    let s1 = Stream::non_blocking(&d1).unwrap();
    for round in 0..ROUNDS {
        let mut x0 = DeviceBuffer::<u32>::zeroed(&d0, N).unwrap();
        let mut y1 = DeviceBuffer::<u32>::zeroed(&d1, N).unwrap();
        s0.fill_async(&mut x0, round + 1).unwrap();
        s1.copy_peer_async(&x0, &mut y1).unwrap(); // after d0's write
        s0.fill_async(&mut x0, 0).unwrap(); // after d1's read
        let mut z0 = DeviceBuffer::<u32>::zeroed(&d0, N).unwrap();
        s0.copy_peer_async(&y1, &mut z0).unwrap(); // back, after the first copy
        s1.fill_async(&mut y1, 7).unwrap(); // after that read
        assert_eq!(z0.to_vec().unwrap(), vec![round + 1; N]);
        assert_eq!(x0.to_vec().unwrap(), vec![0; N]);
        assert_eq!(y1.to_vec().unwrap(), vec![7; N]);
    }
    assert_no_reports();
}

#[test]
fn each_devices_null_stream_and_blocking_streams() {
    let (d0, d1) = two();
    let b0 = Stream::new(&d0).unwrap();
    let b1 = Stream::new(&d1).unwrap();
    for round in 0..ROUNDS {
        let mut x0 = DeviceBuffer::from_slice(&d0, &vec![round; N]).unwrap();
        let mut x1 = DeviceBuffer::from_slice(&d1, &vec![round + 1; N]).unwrap();
        b0.fill_async(&mut x0, round + 2).unwrap();
        b1.fill_async(&mut x1, round + 3).unwrap();
        let mut y1 = DeviceBuffer::<u32>::zeroed(&d1, N).unwrap();
        b1.copy_peer_async(&x0, &mut y1).unwrap();
        assert_eq!(y1.to_vec().unwrap(), vec![round + 2; N]);
        assert_eq!(x1.to_vec().unwrap(), vec![round + 3; N]);
        d0.synchronize().unwrap();
        d1.synchronize().unwrap();
    }
    assert_no_reports();
}

#[test]
fn buffers_of_one_device_dropped_while_the_other_reads_them() {
    let (d0, d1) = two();
    let s0 = Stream::non_blocking(&d0).unwrap();
    let mut keep = Vec::new();
    for round in 0..ROUNDS {
        let x1 = DeviceBuffer::from_slice(&d1, &vec![round; N]).unwrap();
        let mut y0 = DeviceBuffer::<u32>::zeroed(&d0, N).unwrap();
        s0.copy_peer_async(&x1, &mut y0).unwrap();
        drop(x1); // still read by device 0's stream
        keep.push((round, y0));
    }
    for (round, y0) in keep {
        assert_eq!(y0.to_vec().unwrap(), vec![round; N]);
    }
    assert_no_reports();
}
