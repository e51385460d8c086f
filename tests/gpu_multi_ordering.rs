//! Program order across devices: peer copies between a slow kernel on one device and conflicting work on
//! the other, every element checked, many rounds. Needs two HIP devices (`--features gpu-multi`).
#![cfg(feature = "gpu-multi")]
mod common;

use hip::prelude::*;

const N: usize = 1 << 20;
const ROUNDS: usize = 20;
const SPIN: i64 = 2_000_000;

fn two() -> (Device, Device) {
    assert!(
        Device::count().unwrap() >= 2,
        "--features gpu-multi needs two HIP devices"
    );
    (Device::get(0).unwrap(), Device::get(1).unwrap())
}

fn launch(m: &Module, name: &str, s: &Stream, args: &mut LaunchArgs<'_>) {
    let k = m.function(name).unwrap();
    let cfg = if name == "spin" {
        LaunchConfig::new(1, 1)
    } else {
        LaunchConfig::for_num_elems(N as u32)
    };
    // SAFETY: the ordering kernels' parameters, given in order; they touch x[..n] only.
    unsafe { k.launch(s, &cfg, args).unwrap() };
}

fn wrong(got: &[u32], want: u32) -> usize {
    got.iter().filter(|&&v| v != want).count()
}

#[test]
fn peer_copies_are_ordered_after_and_before_the_other_devices_work() {
    let (d0, d1) = two();
    let (m0, m1) = (
        common::load(&d0, common::ORDERING_KERNELS),
        common::load(&d1, common::ORDERING_KERNELS),
    );
    let (s0, s1) = (
        Stream::non_blocking(&d0).unwrap(),
        Stream::non_blocking(&d1).unwrap(),
    );
    let n = N as u32;
    let mut bad = Vec::new();
    for round in 0..ROUNDS {
        let v = 100 + round as u32;
        // A kernel writes x1 on device 1; a peer copy on device 0 reads it.
        let mut x1 = DeviceBuffer::from_slice(&d1, &vec![7u32; N]).unwrap();
        let mut y0 = DeviceBuffer::from_slice(&d0, &vec![0xdead_beef; N]).unwrap();
        launch(
            &m1,
            "slow_fill",
            &s1,
            LaunchArgs::new()
                .arg_mut(&mut x1)
                .arg(&v)
                .arg(&n)
                .arg(&SPIN),
        );
        s0.copy_peer_async(&x1, &mut y0).unwrap();
        // The peer copy reads x1 behind a spin on device 0; a fill on device 1 then overwrites x1.
        let mut z0 = DeviceBuffer::from_slice(&d0, &vec![0xdead_beef; N]).unwrap();
        launch(&m0, "spin", &s0, LaunchArgs::new().arg(&SPIN));
        s0.copy_peer_async(&x1, &mut z0).unwrap();
        s1.fill_async(&mut x1, 1).unwrap();
        let w = wrong(&y0.to_vec().unwrap(), v)
            + wrong(&z0.to_vec().unwrap(), v)
            + wrong(&x1.to_vec().unwrap(), 1);
        if w > 0 {
            bad.push((round, w));
        }
    }
    assert!(
        bad.is_empty(),
        "rounds out of program order (round, wrong elements): {bad:?}"
    );
}

#[test]
fn a_buffer_read_by_another_device_is_freed_only_after_the_read() {
    let (d0, d1) = two();
    let m0 = common::load(&d0, common::ORDERING_KERNELS);
    let s0 = Stream::non_blocking(&d0).unwrap();
    for round in 0..ROUNDS {
        let v = 200 + round as u32;
        let x1 = DeviceBuffer::from_slice(&d1, &vec![v; N]).unwrap();
        let mut y0 = DeviceBuffer::from_slice(&d0, &vec![0xdead_beef; N]).unwrap();
        launch(&m0, "spin", &s0, LaunchArgs::new().arg(&SPIN));
        s0.copy_peer_async(&x1, &mut y0).unwrap();
        drop(x1); // device 1's memory: freed only after device 0's copy read it
        let fresh = DeviceBuffer::from_slice(&d1, &vec![5u32; N]).unwrap();
        assert_eq!(wrong(&y0.to_vec().unwrap(), v), 0, "round {round}");
        assert_eq!(wrong(&fresh.to_vec().unwrap(), 5), 0, "round {round}");
    }
}
