//! Work that spans two devices: streams and memory or events on different devices, a thread whose current
//! device is not the stream's, managed memory written from another device. Needs two HIP devices;
//! compiled only with `--features gpu-multi`.
#![cfg(feature = "gpu-multi")]
mod common;

use hip::prelude::*;
use hip::{Error, KernelArg, Status};

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
    // Every operand holds other values than the others, so a copy or memset that ran would show.
    let mut pinned0 = PinnedBuffer::from_slice(&d0, &[5u32; 64]).unwrap();
    let dev0 = DeviceBuffer::from_slice(&d0, &[6u32; 64]).unwrap();
    let mut dev1 = DeviceBuffer::from_slice(&d1, &[7u32; 64]).unwrap();
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
    let err = s1.copy_from_host_async(&pinned0, &mut dev1).unwrap_err();
    assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
    let mut dev0 = dev0;
    let err = s1.memset_async(&mut dev0, 1).unwrap_err();
    assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
    let e0 = Event::new(&d0).unwrap();
    let err = e0.record(&s1).unwrap_err();
    assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
    // Nothing ran, and the buffers are still usable.
    s1.synchronize().unwrap();
    assert_eq!(pinned0.as_slice().unwrap(), &[5u32; 64][..]);
    assert_eq!(dev0.to_vec().unwrap(), [6u32; 64]);
    assert_eq!(dev1.to_vec().unwrap(), [7u32; 64]);
}

#[test]
fn peer_access_between_two_devices() {
    let (d0, d1) = two();
    if d0.can_access_peer(&d1).unwrap() {
        d0.ensure_peer_access(&d1).unwrap();
        let again = d0.enable_peer_access(&d1).unwrap_err();
        assert_eq!(
            again.hip_code().and_then(|c| c.name()),
            Some("hipErrorPeerAccessAlreadyEnabled"),
            "{again}"
        );
        assert_eq!(again.status(), Status::InvalidState);
        d0.ensure_peer_access(&d1).unwrap(); // already enabled is success here
    } else {
        // A pair the hardware cannot map is refused before HIP is asked.
        let err = d0.enable_peer_access(&d1).unwrap_err();
        assert!(
            matches!(
                err,
                Error::NotSupported {
                    what: "peer access",
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(err.status(), Status::NotSupported);
    }
}

#[test]
fn a_kernel_is_not_launched_on_another_devices_stream() {
    let (d0, d1) = two();
    let m0 = spin_fill(&d0);
    let fill = m0.function("fill").unwrap();
    let s1 = Stream::new(&d1).unwrap();
    let n = 256u32;
    let mut out = DeviceBuffer::from_slice(&d0, &vec![5u32; n as usize]).unwrap();
    let value = 9u32;
    let mut args = LaunchArgs::new();
    args.arg_mut(&mut out).arg(&value).arg(&n);
    // SAFETY: fill(unsigned*, unsigned, unsigned) over n elements; refused before HIP anyway.
    let err = unsafe { fill.launch(&s1, &LaunchConfig::for_num_elems(n), &mut args) }.unwrap_err();
    match &err {
        Error::InvalidLaunch(m) => assert_eq!(
            m,
            "stream is on device 1 but kernel `fill` is loaded on device 0"
        ),
        other => panic!("{other}"),
    }
    assert_eq!(err.status(), Status::InvalidArgument);
    s1.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap(), vec![5u32; n as usize], "nothing ran");
}

/// Queue `fill(out, value, n)` from device 1's module on `s1`, `out` passed as written memory.
fn fill_on(
    fill: &Function,
    s1: &Stream,
    out: &mut (impl DeviceMemoryMut<u32> + KernelArg),
    value: u32,
) -> hip::Result<()> {
    let n = out.len() as u32;
    let mut args = LaunchArgs::new();
    args.arg_mut(out).arg(&value).arg(&n);
    // SAFETY: fill(unsigned*, unsigned, unsigned) writes the first n elements of `out`, its only memory.
    unsafe { fill.launch(s1, &LaunchConfig::for_num_elems(n), &mut args) }
}

/// A kernel on device 1 given device 0's memory: refused unless device 1 has peer access to device 0
/// (issue 43: it faulted the GPU). Only this test enables access from device 1 to device 0 in this binary,
/// after its refusals.
#[test]
fn a_kernel_is_not_given_another_devices_memory_without_peer_access() {
    let (d0, d1) = two();
    let m1 = spin_fill(&d1);
    let fill = m1.function("fill").unwrap();
    let s1 = Stream::new(&d1).unwrap();
    let n = 4096usize;
    let mut out0 = DeviceBuffer::from_slice(&d0, &vec![5u32; n]).unwrap();
    let err = fill_on(&fill, &s1, &mut out0, 9).unwrap_err();
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
    assert_eq!(err.status(), Status::InvalidArgument);
    // Read, not written: refused all the same; a view of the buffer too.
    let copy = common::load(
        &d1,
        r#"extern "C" __global__ void copy(const unsigned* src, unsigned* dst, unsigned n) {
            unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) dst[i] = src[i];
        }"#,
    )
    .function("copy")
    .unwrap();
    let mut into1 = DeviceBuffer::from_slice(&d1, &vec![6u32; n]).unwrap();
    let view = out0.slice(..16).unwrap();
    let count = 16u32;
    let mut args = LaunchArgs::new();
    args.arg(&view).arg_mut(&mut into1).arg(&count);
    // SAFETY: copy(const unsigned*, unsigned*, unsigned) reads the 16 elements of `view` and writes the
    // first 16 of `into1`.
    let err = unsafe { copy.launch(&s1, &LaunchConfig::new(1, 16), &mut args) }.unwrap_err();
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
    s1.synchronize().unwrap();
    assert_eq!(out0.to_vec().unwrap(), vec![5u32; n], "nothing ran");
    assert_eq!(into1.to_vec().unwrap(), vec![6u32; n], "nothing ran");
    // Managed memory of device 0 is reached from device 1: it passes and is written.
    let mut managed0 = ManagedBuffer::<u32>::zeroed(&d0, n).unwrap();
    fill_on(&fill, &s1, &mut managed0, 11).unwrap();
    assert_eq!(managed0.as_slice().unwrap(), &vec![11u32; n][..]);
    if !d1.can_access_peer(&d0).unwrap() {
        // No peer access on this machine: device memory of device 0 never passes on device 1.
        return;
    }
    d1.ensure_peer_access(&d0).unwrap();
    // Now device 0's device memory passes on device 1's stream, and the kernel writes it.
    fill_on(&fill, &s1, &mut out0, 9).unwrap();
    s1.synchronize().unwrap();
    assert_eq!(out0.to_vec().unwrap(), vec![9u32; n]);
    // Pool memory is not reached by peer access: still refused, and left as it was.
    let s0 = Stream::new(&d0).unwrap();
    let mut pooled0 = DeviceBuffer::<u32>::zeroed_async(&s0, n).unwrap();
    if pooled0.is_stream_ordered() {
        let err = fill_on(&fill, &s1, &mut pooled0, 13).unwrap_err();
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
        s1.synchronize().unwrap();
        assert_eq!(pooled0.to_vec().unwrap(), vec![0u32; n]);
    }
}

#[test]
fn async_work_lands_on_the_streams_device_whatever_the_thread_current_device() {
    let (d0, d1) = two();
    let s0 = Stream::non_blocking(&d0).unwrap();
    let mut dev0 = DeviceBuffer::<u32>::zeroed(&d0, 1024).unwrap();
    let src = PinnedBuffer::from_slice(&d0, &[9u32; 1024]).unwrap();
    // Not the host buffer the data came from: one that holds a sentinel until the copy back lands.
    let mut back = PinnedBuffer::from_slice(&d0, &[3u32; 1024]).unwrap();
    let e0 = Event::new(&d0).unwrap();
    let _ = Device::get(1).unwrap(); // the thread's current device is now 1
    s0.memset_async(&mut dev0, 0xff).unwrap();
    s0.copy_from_host_async(&src, &mut dev0).unwrap();
    e0.record(&s0).unwrap();
    let s1 = Stream::non_blocking(&d1).unwrap();
    s1.wait_event(&e0).unwrap();
    s0.copy_to_host_async(&dev0, &mut back).unwrap();
    assert_eq!(back.as_slice().unwrap(), &[9u32; 1024][..]);
    s1.synchronize().unwrap();
    assert!(e0.query().unwrap());
}

#[test]
fn managed_memory_read_on_the_host_waits_for_a_kernel_on_another_device() {
    let (d0, d1) = two();
    let n = 1u32 << 20;
    let mut managed = ManagedBuffer::<u32>::zeroed(&d0, n as usize).unwrap();
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
    // arg_mut: the kernel writes it, so the host's read below waits for it (an `arg` would be a read).
    args.arg_mut(&mut managed).arg(&value).arg(&n);
    unsafe {
        m1.function("fill")
            .unwrap()
            .launch(&s1, &LaunchConfig::for_num_elems(n), &mut args)
    }
    .unwrap();
    // Only device 1 is writing; the buffer belongs to device 0.
    assert!(managed.as_slice().unwrap().iter().all(|&v| v == 42));
}

/// A prefetch to a device is queued on a stream of that device: another device's stream is refused before
/// anything is queued; the destination's own stream, and any stream for the host, migrate the pages and
/// keep their values.
#[test]
fn a_prefetch_is_queued_on_a_stream_of_its_destination() {
    let (d0, d1) = two();
    let mut m = ManagedBuffer::<u32>::zeroed(&d0, 1 << 20).unwrap();
    m.as_mut_slice().unwrap().fill(3);
    let (s0, s1) = (Stream::new(&d0).unwrap(), Stream::new(&d1).unwrap());
    let e = s0.prefetch_async(&m, Some(&d1)).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument { what, .. } if *what == "stream for a managed memory prefetch"),
        "{e}"
    );
    let concurrent = |d: &Device| {
        d.attribute(hip::sys::hipDeviceAttributeConcurrentManagedAccess)
            .unwrap()
            != 0
    };
    if !(concurrent(&d0) && concurrent(&d1)) {
        assert!(matches!(
            s1.prefetch_async(&m, Some(&d1)),
            Err(Error::NotSupported { .. })
        ));
        return;
    }
    s1.prefetch_async(&m, Some(&d1)).unwrap();
    s1.prefetch_async(&m, None).unwrap();
    s0.prefetch_async(&m, Some(&d0)).unwrap();
    s0.synchronize().unwrap();
    s1.synchronize().unwrap();
    assert!(m.as_slice().unwrap().iter().all(|&v| v == 3));
}

#[test]
fn managed_memory_dropped_while_another_device_writes_it_waits() {
    let (d0, d1) = two();
    let n = 1u32 << 20;
    let m1 = spin_fill(&d1);
    let s1 = Stream::non_blocking(&d1).unwrap();
    for round in 0..4u32 {
        let mut managed = ManagedBuffer::<u32>::zeroed(&d0, n as usize).unwrap();
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
        args.arg_mut(&mut managed).arg(&round).arg(&n);
        unsafe {
            m1.function("fill")
                .unwrap()
                .launch(&s1, &LaunchConfig::for_num_elems(n), &mut args)
        }
        .unwrap();
        drop(managed); // device 1's kernel is still queued behind the spin
                       // Had the memory been freed under the kernel, a new allocation could land there and be written
                       // by it after the host set it.
        let mut fresh = ManagedBuffer::<u32>::zeroed(&d0, n as usize).unwrap();
        fresh.as_mut_slice().unwrap().fill(0xdead_beef);
        s1.synchronize().unwrap();
        assert!(
            fresh.as_slice().unwrap().iter().all(|&v| v == 0xdead_beef),
            "round {round}: the dropped buffer's kernel wrote other memory"
        );
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
        // round 0 fills 0: a sentinel no round writes.
        let mut out = DeviceBuffer::from_slice(d, &vec![u32::MAX; n as usize]).unwrap();
        let s = Stream::new(d).unwrap();
        let mut args = LaunchArgs::new();
        args.arg_mut(&mut out).arg(&round).arg(&n);
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
    let capture_fill = |d: &Device, m: &Module, out: &mut DeviceBuffer<u32>| {
        let s = Stream::new(d).unwrap();
        let n = out.len() as u32;
        let value = 7u32;
        let mut cap = s.begin_capture(hip::CaptureMode::ThreadLocal).unwrap();
        let mut args = LaunchArgs::new();
        args.arg_mut(out).arg(&value).arg(&n);
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
    let (mut b0, mut b1) = (
        DeviceBuffer::<u32>::zeroed(&d0, 256).unwrap(),
        DeviceBuffer::<u32>::zeroed(&d1, 256).unwrap(),
    );
    let (g0, s0) = capture_fill(&d0, &m0, &mut b0);
    let (g1, _s1) = capture_fill(&d1, &m1, &mut b1);
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

#[test]
fn each_device_is_found_by_its_uuid_and_its_pci_bus_id() {
    let (d0, d1) = two();
    let names = [&d0, &d1].map(|d| (d.uuid().unwrap(), d.pci_bus_id().unwrap()));
    assert_ne!(names[0].0, names[1].0, "two GPUs, two UUIDs");
    assert_ne!(names[0].1, names[1].1, "two GPUs, two bus ids");
    for (ordinal, (uuid, bus)) in names.iter().enumerate() {
        for spec in [uuid.to_string(), bus.to_string()] {
            let found = Device::select(&spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert_eq!(found.ordinal(), ordinal, "{spec}");
        }
        assert_eq!(
            Device::ordinal_by_pci_bus_id(&bus.to_string()).unwrap(),
            ordinal
        );
    }
    // Selecting device 1 leaves a device the crate can use: a copy on it goes through.
    let d = Device::select(&names[1].0.to_string()).unwrap();
    let buf = DeviceBuffer::from_slice(&d, &[3u32; 16]).unwrap();
    assert_eq!(buf.to_vec().unwrap(), [3u32; 16]);
}
