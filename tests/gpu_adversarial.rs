//! Hostile inputs on a real device: extremes of every length and extent, streams dropped under pending
//! copies, wrong devices, wrong sizes. Compiled only with `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use hip::prelude::*;
use hip::{Error, Status};

use common::device;

fn vector_add(d: &Device) -> Function {
    let code = ProgramBuilder::new(common::VECTOR_ADD).compile().unwrap();
    Module::load_data(d, code.code())
        .unwrap()
        .function("vector_add")
        .unwrap()
}

#[test]
fn lengths_whose_byte_size_overflows_are_refused() {
    let d = device();
    for err in [
        DeviceBuffer::<u64>::zeroed(&d, usize::MAX).unwrap_err(),
        PinnedBuffer::<u64>::zeroed(&d, usize::MAX).unwrap_err(),
        ManagedBuffer::<u64>::zeroed(&d, usize::MAX).unwrap_err(),
        DeviceBuffer::<[u8; 3]>::zeroed(&d, usize::MAX / 2).unwrap_err(),
    ] {
        assert!(matches!(err, Error::AllocationTooLarge { .. }), "{err}");
        assert_eq!(err.status(), Status::AllocationFailed);
    }
    // A size that fits in usize but not in any device is HIP's out-of-memory, not a panic.
    let err = DeviceBuffer::<u64>::zeroed(&d, usize::MAX / 8).unwrap_err();
    assert_eq!(err.status(), Status::OutOfMemory, "{err}");
}

#[test]
fn zero_sized_elements_of_usize_max_length_work_without_touching_hip() {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let mut a = DeviceBuffer::<[u32; 0]>::zeroed(&d, usize::MAX).unwrap();
    assert_eq!(a.len(), usize::MAX);
    assert_eq!(a.byte_len(), 0);
    assert_eq!(a.to_vec().unwrap().len(), usize::MAX);
    assert_eq!(a.slice(usize::MAX..).unwrap().len(), 0);
    assert_eq!(a.slice(..).unwrap().len(), usize::MAX);
    assert!(matches!(
        a.slice(..=usize::MAX),
        Err(Error::OutOfBounds { .. })
    ));
    a.zero().unwrap();
    let m = ManagedBuffer::<[u32; 0]>::zeroed(&d, usize::MAX).unwrap();
    assert_eq!(m.as_slice().unwrap().len(), usize::MAX);
    let mut p = PinnedBuffer::<[u32; 0]>::zeroed(&d, usize::MAX).unwrap();
    assert_eq!(p.as_slice().unwrap().len(), usize::MAX);
    s.copy_to_host_async(&a, &mut p).unwrap();
    s.copy_from_host_async(&p, &mut a).unwrap();
    s.memset_async(&mut a, 7).unwrap();
    assert_eq!(p.as_mut_slice().unwrap().len(), usize::MAX);
    // Empty buffers of ordinary types.
    let e = DeviceBuffer::<f64>::zeroed(&d, 0).unwrap();
    assert!(e.to_vec().unwrap().is_empty());
    assert!(ManagedBuffer::<f64>::zeroed(&d, 0)
        .unwrap()
        .as_slice()
        .unwrap()
        .is_empty());
}

#[test]
fn extreme_launch_extents_are_invalid_launches_not_panics() {
    let d = device();
    let f = vector_add(&d);
    let s = Stream::new(&d).unwrap();
    let buf = DeviceBuffer::<f32>::zeroed(&d, 16).unwrap();
    let n = 16u32;
    let m = u32::MAX;
    for cfg in [
        LaunchConfig::new((m, m, m), 64),
        LaunchConfig::new((m, m, m), (m, m, m)),
        LaunchConfig::new(1, (m, m, m)),
        LaunchConfig::new((0, m, m), 1),
        LaunchConfig::new((m, 1, 1), (1024, 1, 1)),
        LaunchConfig {
            shared_mem_bytes: m,
            ..LaunchConfig::new(1, 1)
        },
    ] {
        let mut args = LaunchArgs::new();
        args.arg(&buf).arg(&buf).arg(&buf).arg(&n);
        let err = unsafe { f.launch(&s, &cfg, &mut args) }.unwrap_err();
        assert!(matches!(err, Error::InvalidLaunch(_)), "{cfg:?}: {err}");
    }
}

fn spin_fill(d: &Device) -> Module {
    let code = ProgramBuilder::new(common::SPIN_FILL).compile().unwrap();
    Module::load_data(d, code.code()).unwrap()
}

/// Queue `spin` for about `cycles` clock cycles on `s`.
fn spin(m: &Module, s: &Stream, cycles: i64) {
    let mut args = LaunchArgs::new();
    args.arg(&cycles);
    unsafe {
        m.function("spin")
            .unwrap()
            .launch(s, &LaunchConfig::new(1, 1), &mut args)
            .unwrap()
    };
}

#[test]
fn a_dropped_streams_reused_handle_cannot_hide_its_pending_copy() {
    // Issue 11: stream 1 queued a copy into the pinned buffer and was dropped; stream 2 got the same
    // handle address; the buffer re-recorded its one event on stream 2 and as_slice returned while
    // stream 1's copy still wrote the buffer (an H100 read 0, then 1).
    let d = device();
    let m = spin_fill(&d);
    let n = 1 << 22;
    let src = DeviceBuffer::from_slice(&d, &vec![1u32; n]).unwrap();
    let mut other = DeviceBuffer::<u32>::zeroed(&d, n).unwrap();
    let mut reused = 0;
    for round in 0..8 {
        let mut host = PinnedBuffer::<u32>::zeroed(&d, n).unwrap();
        let s1 = Stream::non_blocking(&d).unwrap();
        let s1_raw = s1.raw() as usize;
        spin(&m, &s1, 200_000_000); // keep the copy below pending for a while
        s1.copy_to_host_async(&src, &mut host).unwrap();
        drop(s1);
        let s2 = Stream::non_blocking(&d).unwrap();
        if s2.raw() as usize == s1_raw {
            reused += 1;
        }
        s2.copy_from_host_async(&host, &mut other).unwrap();
        let seen = host.as_slice().unwrap();
        assert!(
            seen.iter().all(|&v| v == 1),
            "round {round}: read before stream 1's copy finished"
        );
        drop(s2);
    }
    println!("handle address reused in {reused} of 8 rounds");
}

#[test]
fn a_module_dropped_while_its_kernel_runs_waits_for_it() {
    let d = device();
    let s = Stream::non_blocking(&d).unwrap();
    let n = 1u32 << 20;
    let mut out = DeviceBuffer::<u32>::zeroed(&d, n as usize).unwrap();
    for round in 0..4u32 {
        let m = spin_fill(&d);
        spin(&m, &s, 100_000_000);
        let fill = m.function("fill").unwrap();
        let value = round + 7;
        let mut args = LaunchArgs::new();
        args.arg_mut(&mut out).arg(&value).arg(&n);
        unsafe { fill.launch(&s, &LaunchConfig::for_num_elems(n), &mut args) }.unwrap();
        drop(fill);
        drop(m); // the kernels above are still queued or running
        s.synchronize().unwrap();
        assert!(
            out.to_vec().unwrap().iter().all(|&v| v == value),
            "round {round}"
        );
    }
}

#[test]
fn pinned_tracking_stays_small_with_many_short_lived_streams() {
    let d = device();
    let host = PinnedBuffer::from_slice(&d, &[5u8; 4096]).unwrap();
    let mut dev = DeviceBuffer::<u8>::zeroed(&d, 4096).unwrap();
    for _ in 0..2000 {
        let s = Stream::non_blocking(&d).unwrap();
        s.copy_from_host_async(&host, &mut dev).unwrap();
    }
    assert_eq!(host.as_slice().unwrap(), &[5u8; 4096][..]);
    assert_eq!(dev.to_vec().unwrap(), vec![5u8; 4096]);
}

#[test]
fn stream_ids_are_unique_even_when_handles_are_reused() {
    let d = device();
    let mut ids = std::collections::HashSet::new();
    for _ in 0..100 {
        let s = Stream::new(&d).unwrap();
        assert!(ids.insert(s.id()));
    }
    let a = unsafe { Stream::from_raw(&d, std::ptr::null_mut()) };
    let b = unsafe { Stream::from_raw(&d, std::ptr::null_mut()) };
    assert_ne!(a.id(), b.id());
}

#[test]
fn load_data_refuses_images_the_runtime_would_read_past() {
    let d = device();
    // The 128-byte ELF whose one NOBITS section header sends HIP's size computation to 16 MiB.
    let mut image = vec![0u8; 128];
    image[..4].copy_from_slice(b"\x7fELF");
    image[4] = 2;
    image[5] = 1;
    image[0x28..0x30].copy_from_slice(&64u64.to_le_bytes());
    image[0x3C..0x3E].copy_from_slice(&1u16.to_le_bytes());
    image[64 + 4..64 + 8].copy_from_slice(&8u32.to_le_bytes());
    image[64 + 0x18..64 + 0x20].copy_from_slice(&(16u64 << 20).to_le_bytes());
    let err = Module::load_data(&d, &image).unwrap_err();
    assert!(matches!(err, Error::InvalidCodeObject(_)), "{err}");
    let truncated_bundle = b"__CLANG_OFFLOAD_BUNDLE__\xff\xff\xff\xff\xff\xff\xff\xff";
    match Module::load_data(&d, truncated_bundle) {
        // AMD: the bundle is parsed first and refused.
        Err(Error::InvalidCodeObject(_)) if cfg!(hip_platform = "amd") => {}
        // NVIDIA takes no bundles: refused before the driver, naming the format (the driver used to get
        // it as PTX text and answer hipErrorInvalidImage, naming nothing).
        Err(Error::InvalidCodeObject(m)) if cfg!(hip_platform = "nvidia") => {
            assert!(m.contains("a clang offload bundle (AMD's format)"), "{m}")
        }
        other => panic!("a truncated bundle must be refused: {other:?}"),
    }
}

#[test]
fn a_global_of_the_wrong_size_names_bytes_and_the_global() {
    let d = device();
    let code = ProgramBuilder::new(
        "__device__ unsigned short pair[2];\nextern \"C\" __global__ void k() {}\n",
    )
    .compile()
    .unwrap();
    let m = Module::load_data(&d, code.code()).unwrap();
    let err = m.global::<u64>("pair").unwrap_err();
    assert!(
        matches!(&err, Error::GlobalSize { name, module_bytes: 4, type_bytes: 8 } if name == "pair"),
        "{err}"
    );
    assert_eq!(err.status(), Status::ExtentMismatch);
    assert_eq!(
        err.to_string(),
        "module global `pair` is 4 bytes in the module, but the type asked for is 8 bytes"
    );
    assert!(m.global::<[u16; 2]>("pair").is_ok());
    let err = m.global::<[u8; 0]>("pair").unwrap_err();
    assert!(
        matches!(&err, Error::GlobalSize { name, module_bytes: 4, type_bytes: 0 } if name == "pair"),
        "{err}"
    );
}

#[test]
fn load_file_errors_name_the_path() {
    let d = device();
    let missing = std::path::Path::new("/no/such/dir/kernels.co");
    let err = Module::load_file(&d, missing).unwrap_err();
    assert!(
        matches!(&err, Error::ModuleFile { path, .. } if path == missing),
        "{err}"
    );
    assert!(err.to_string().contains("/no/such/dir/kernels.co"), "{err}");
    // The cause is kept: HIP's file-not-found on NVIDIA (the driver reads the file), the read error on AMD
    // (the crate reads it, to check it as in load_data); either way the status is not_found.
    assert_eq!(err.status(), Status::NotFound, "{err}");
    // A file that is not a code object.
    let junk = std::env::temp_dir().join(format!("hip-rs-junk-{}.co", std::process::id()));
    std::fs::write(&junk, b"not a code object").unwrap();
    let err = Module::load_file(&d, &junk).unwrap_err();
    std::fs::remove_file(&junk).unwrap();
    // AMD: refused by the code object check (the crate reads the file); NVIDIA: the driver's refusal.
    assert!(
        matches!(&err, Error::ModuleFile { path, source } if *path == junk
        && if cfg!(hip_platform = "amd") {
            matches!(**source, Error::InvalidCodeObject(_))
        } else {
            matches!(
                source.hip_code().and_then(|c| c.name()),
                Some("hipErrorInvalidImage" | "hipErrorInvalidKernelFile")
            )
        }),
        "{err}"
    );
    assert!(
        err.to_string().contains(&junk.display().to_string()),
        "{err}"
    );
    // A NUL in the path is refused, still naming it (NVIDIA: before HIP; AMD: by the read).
    let err = Module::load_file(&d, "/tmp/a\0b.co").unwrap_err();
    assert!(
        matches!(&err, Error::ModuleFile { source, .. }
            if matches!(**source, Error::InteriorNul { .. } | Error::Io { .. })),
        "{err}"
    );
}

#[test]
fn an_out_of_range_stream_priority_is_an_error_naming_the_range() {
    let d = device();
    let (least, greatest) = Stream::priority_range(&d).unwrap();
    for p in [
        greatest.min(least) - 1,
        greatest.max(least) + 1,
        i32::MIN,
        i32::MAX,
    ] {
        let err = Stream::with_priority(&d, p, false).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidArgument { what: "stream priority", reason, .. }
                if reason.contains(&least.to_string()) && reason.contains(&greatest.to_string())),
            "{p}: {err}"
        );
    }
    Stream::with_priority(&d, least, true).unwrap();
    Stream::with_priority(&d, greatest, true).unwrap();
}

#[test]
fn elapsed_time_of_an_event_never_recorded_is_a_clear_error() {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let start = Event::with_timing(&d).unwrap();
    let end = Event::with_timing(&d).unwrap();
    let err = start.elapsed_ms(&end).unwrap_err();
    assert!(
        matches!(err, Error::EventNotRecorded { which: "start" }),
        "{err}"
    );
    start.record(&s).unwrap();
    let err = start.elapsed_ms(&end).unwrap_err();
    assert!(
        matches!(err, Error::EventNotRecorded { which: "end" }),
        "{err}"
    );
    end.record(&s).unwrap();
    end.synchronize().unwrap();
    assert!(start.elapsed_ms(&end).unwrap() >= 0.0);
}

#[test]
fn static_plus_dynamic_shared_memory_over_the_limit_is_refused_before_hip() {
    let d = device();
    let limit = d.properties().unwrap().shared_mem_per_block;
    let src = "extern \"C\" __global__ void k(int* out) {\n  __shared__ int tile[4096];\n  tile[threadIdx.x] = threadIdx.x;\n  __syncthreads();\n  out[threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];\n}\n";
    let code = ProgramBuilder::new(src).compile().unwrap();
    let m = Module::load_data(&d, code.code()).unwrap();
    let f = m.function("k").unwrap();
    assert_eq!(f.static_shared_bytes(), 16384);
    let mut out = DeviceBuffer::<i32>::zeroed(&d, 64).unwrap();
    let s = Stream::new(&d).unwrap();
    let dynamic = (limit - 16384) as u32 + 1;
    let mut args = LaunchArgs::new();
    args.arg_mut(&mut out);
    let cfg = LaunchConfig {
        shared_mem_bytes: dynamic,
        ..LaunchConfig::new(1, 64)
    };
    let err = unsafe { f.launch(&s, &cfg, &mut args) }.unwrap_err();
    assert!(
        matches!(&err, Error::InvalidLaunch(m) if m.contains("16384 bytes of static")),
        "{err}"
    );
    let cfg = LaunchConfig {
        shared_mem_bytes: dynamic - 1,
        ..LaunchConfig::new(1, 64)
    };
    let mut args = LaunchArgs::new();
    args.arg_mut(&mut out);
    unsafe { f.launch(&s, &cfg, &mut args) }.unwrap();
    s.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap()[0], 1);
}

#[test]
fn a_zeroed_or_uploaded_buffer_is_complete_before_a_non_blocking_stream_uses_it() {
    // The default stream is kept busy first, so a memset or upload that returned early would still be
    // queued there when the non-blocking stream's copy runs, and would land after it.
    let d = device();
    let m = spin_fill(&d);
    let s = Stream::non_blocking(&d).unwrap();
    let n = 1 << 20;
    let host = PinnedBuffer::from_slice(&d, &vec![5u32; n]).unwrap();
    for round in 0..4 {
        spin(&m, &d.default_stream(), 100_000_000);
        let mut dev = if round % 2 == 0 {
            DeviceBuffer::<u32>::zeroed(&d, n).unwrap()
        } else {
            DeviceBuffer::from_slice(&d, &vec![9u32; n]).unwrap()
        };
        s.copy_from_host_async(&host, &mut dev).unwrap();
        // Let everything finish, a late memset or upload included, then look.
        d.synchronize().unwrap();
        let mut back = PinnedBuffer::<u32>::zeroed(&d, n).unwrap();
        s.copy_to_host_async(&dev, &mut back).unwrap();
        assert!(
            back.as_slice().unwrap().iter().all(|&v| v == 5),
            "round {round}"
        );
    }
}

#[test]
fn synchronous_operations_wait_for_async_work_still_using_the_memory() {
    // A memset queued behind a spin on a non-blocking stream is still pending when the synchronous call
    // comes: a read must see it done, and a write must not be overwritten by it afterwards.
    let d = device();
    let m = spin_fill(&d);
    let s = Stream::non_blocking(&d).unwrap();
    let n = 1 << 20;
    let mut dev = DeviceBuffer::<u32>::zeroed(&d, n).unwrap();
    spin(&m, &s, 100_000_000);
    s.memset_async(&mut dev, 0x01).unwrap();
    assert!(dev.to_vec().unwrap().iter().all(|&v| v == 0x0101_0101));

    spin(&m, &s, 100_000_000);
    s.memset_async(&mut dev, 0x02).unwrap();
    dev.copy_from_host(&vec![7u32; n]).unwrap();
    d.synchronize().unwrap();
    assert!(dev.to_vec().unwrap().iter().all(|&v| v == 7));

    let mut other = DeviceBuffer::<u32>::zeroed(&d, n).unwrap();
    spin(&m, &s, 100_000_000);
    s.memset_async(&mut dev, 0x03).unwrap();
    other.copy_from_device(&dev).unwrap();
    assert!(other.to_vec().unwrap().iter().all(|&v| v == 0x0303_0303));

    spin(&m, &s, 100_000_000);
    s.memset_async(&mut dev, 0x04).unwrap();
    dev.zero().unwrap();
    d.synchronize().unwrap();
    let mut host = vec![1u32; n];
    dev.copy_to_host(&mut host).unwrap();
    assert!(host.iter().all(|&v| v == 0));
}
