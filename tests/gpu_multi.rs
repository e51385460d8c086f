//! Work that spans two devices: streams and memory or events on different devices, a thread whose current
//! device is not the stream's, managed memory written from another device. Needs two HIP devices;
//! compiled only with `--features gpu-multi`.
#![cfg(feature = "gpu-multi")]
mod common;

use hip::prelude::*;
use hip::Error;

fn two() -> (Device, Device) {
    assert!(
        Device::count().unwrap() >= 2,
        "--features gpu-multi needs two HIP devices"
    );
    (Device::get(0).unwrap(), Device::get(1).unwrap())
}

fn spin_fill(d: &Device) -> Module {
    let code = ProgramBuilder::new(common::SPIN_FILL).compile().unwrap();
    Module::load_data(d, code.code()).unwrap()
}

#[test]
fn a_stream_and_memory_on_different_devices_are_refused() {
    let (d0, d1) = two();
    let s1 = Stream::new(&d1).unwrap();
    let mut pinned0 = PinnedBuffer::<u32>::zeroed(&d0, 64).unwrap();
    let dev0 = DeviceBuffer::<u32>::zeroed(&d0, 64).unwrap();
    let mut dev1 = DeviceBuffer::<u32>::zeroed(&d1, 64).unwrap();
    let err = s1.copy_to_host_async(&dev0, &mut pinned0).unwrap_err();
    assert!(
        matches!(
            err,
            Error::DeviceMismatch {
                stream: 1,
                other: 0,
                ..
            }
        ),
        "{err}"
    );
    let err = s1.copy_to_device_async(&pinned0, &mut dev1).unwrap_err();
    assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
    let mut dev0 = dev0;
    let err = s1.memset_async(&mut dev0, 1).unwrap_err();
    assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
    let e0 = Event::new(&d0).unwrap();
    let err = e0.record(&s1).unwrap_err();
    assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
    // The refused copies left the buffer usable.
    assert_eq!(pinned0.as_slice().unwrap(), &[0u32; 64][..]);
}

#[test]
fn async_work_lands_on_the_streams_device_whatever_the_thread_current_device() {
    let (d0, d1) = two();
    let s0 = Stream::non_blocking(&d0).unwrap();
    let mut dev0 = DeviceBuffer::<u32>::zeroed(&d0, 1024).unwrap();
    let mut host = PinnedBuffer::from_slice(&d0, &[9u32; 1024]).unwrap();
    let e0 = Event::new(&d0).unwrap();
    let _ = Device::get(1).unwrap(); // the thread's current device is now 1
    s0.memset_async(&mut dev0, 0xff).unwrap();
    s0.copy_to_device_async(&host, &mut dev0).unwrap();
    e0.record(&s0).unwrap();
    let s1 = Stream::non_blocking(&d1).unwrap();
    s1.wait_event(&e0).unwrap();
    s0.copy_to_host_async(&dev0, &mut host).unwrap();
    assert_eq!(host.as_slice().unwrap(), &[9u32; 1024][..]);
    s1.synchronize().unwrap();
}

#[test]
fn managed_memory_read_on_the_host_waits_for_a_kernel_on_another_device() {
    let (d0, d1) = two();
    let n = 1u32 << 20;
    let managed = ManagedBuffer::<u32>::zeroed(&d0, n as usize).unwrap();
    let m1 = spin_fill(&d1);
    let s1 = Stream::non_blocking(&d1).unwrap();
    let cycles = 200_000_000i64;
    let mut args = LaunchArgs::new();
    args.arg(&cycles);
    unsafe {
        m1.function("spin")
            .unwrap()
            .launch(&s1, &LaunchConfig::new(1, 1), &mut args)
    }
    .unwrap();
    let value = 42u32;
    let mut args = LaunchArgs::new();
    args.arg(&managed).arg(&value).arg(&n);
    unsafe {
        m1.function("fill")
            .unwrap()
            .launch(&s1, &LaunchConfig::for_num_elems(n), &mut args)
    }
    .unwrap();
    // Only device 1 is writing; the buffer belongs to device 0.
    assert!(managed.as_slice().unwrap().iter().all(|&v| v == 42));
}

#[test]
fn managed_memory_dropped_while_another_device_writes_it_waits() {
    let (d0, d1) = two();
    let n = 1u32 << 20;
    let m1 = spin_fill(&d1);
    let s1 = Stream::non_blocking(&d1).unwrap();
    for round in 0..4u32 {
        let managed = ManagedBuffer::<u32>::zeroed(&d0, n as usize).unwrap();
        let cycles = 100_000_000i64;
        let mut args = LaunchArgs::new();
        args.arg(&cycles);
        unsafe {
            m1.function("spin")
                .unwrap()
                .launch(&s1, &LaunchConfig::new(1, 1), &mut args)
        }
        .unwrap();
        let mut args = LaunchArgs::new();
        args.arg(&managed).arg(&round).arg(&n);
        unsafe {
            m1.function("fill")
                .unwrap()
                .launch(&s1, &LaunchConfig::for_num_elems(n), &mut args)
        }
        .unwrap();
        drop(managed); // device 1's kernel is still queued behind the spin
    }
    s1.synchronize().unwrap();
}

/// `Device::bind` first compares the thread's current context with the one it saw after binding that
/// device: whatever changed the current device in between (this crate, or raw hipSetDevice behind its
/// back), on any thread, the device it binds must be current afterwards, and work lands there.
#[test]
fn binding_follows_every_change_of_the_current_device() {
    let (d0, d1) = two();
    let devices = [d0, d1];
    std::thread::scope(|scope| {
        for t in 0..4usize {
            let devices = &devices;
            scope.spawn(move || {
                for round in 0..200usize {
                    let d = &devices[(t + round) % 2];
                    if round % 3 == 0 {
                        // Behind the crate's back: the other device becomes current.
                        let other = 1 - d.ordinal() as i32;
                        assert_eq!(
                            unsafe { hip::sys::hipSetDevice(other) },
                            hip::sys::hipSuccess
                        );
                    }
                    d.bind().unwrap();
                    let mut current = -1;
                    assert_eq!(
                        unsafe { hip::sys::hipGetDevice(&mut current) },
                        hip::sys::hipSuccess
                    );
                    assert_eq!(current, d.ordinal() as i32, "thread {t} round {round}");
                }
            });
        }
    });
    // And work follows: allocate and fill on each device in turn after a raw switch to the other.
    let modules = [spin_fill(&devices[0]), spin_fill(&devices[1])];
    let n = 4096u32;
    for round in 0..20u32 {
        let i = (round % 2) as usize;
        let d = &devices[i];
        unsafe { hip::sys::hipSetDevice(1 - i as i32) };
        let out = DeviceBuffer::<u32>::zeroed(d, n as usize).unwrap();
        let s = Stream::new(d).unwrap();
        let mut args = LaunchArgs::new();
        args.arg(&out).arg(&round).arg(&n);
        unsafe {
            modules[i].function("fill").unwrap().launch(
                &s,
                &LaunchConfig::for_num_elems(n),
                &mut args,
            )
        }
        .unwrap();
        s.synchronize().unwrap();
        assert!(
            out.to_vec().unwrap().iter().all(|&v| v == round),
            "round {round}"
        );
    }
}

/// An executable graph of device 0 cannot take its parameters from a graph captured on device 1.
#[test]
fn a_graph_update_from_another_device_is_refused() {
    let (d0, d1) = two();
    let capture_fill = |d: &Device, m: &Module, out: &DeviceBuffer<u32>| {
        let s = Stream::new(d).unwrap();
        let n = out.len() as u32;
        let value = 7u32;
        let mut cap = s.begin_capture(hip::CaptureMode::ThreadLocal).unwrap();
        let mut args = LaunchArgs::new();
        args.arg(out).arg(&value).arg(&n);
        unsafe {
            cap.launch(
                &m.function("fill").unwrap(),
                &LaunchConfig::for_num_elems(n),
                &mut args,
            )
        }
        .unwrap();
        (cap.end().unwrap(), s)
    };
    let (m0, m1) = (spin_fill(&d0), spin_fill(&d1));
    let (b0, b1) = (
        DeviceBuffer::<u32>::zeroed(&d0, 256).unwrap(),
        DeviceBuffer::<u32>::zeroed(&d1, 256).unwrap(),
    );
    let (g0, s0) = capture_fill(&d0, &m0, &b0);
    let (g1, _s1) = capture_fill(&d1, &m1, &b1);
    let mut exec = g0.instantiate().unwrap();
    let err = exec.update(&g1).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    assert!(
        err.to_string().contains("device 1") && err.to_string().contains("device 0"),
        "{err}"
    );
    exec.launch(&s0).unwrap();
    s0.synchronize().unwrap();
    assert!(b0.to_vec().unwrap().iter().all(|&v| v == 7));
}
