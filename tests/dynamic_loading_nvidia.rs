//! The `dynamic-loading` feature on HIP's NVIDIA platform: the CUDA runtime, the driver and NVRTC are
//! opened at run time (HIP is inline code over them, compiled into hip-sys and hiprtc-sys), so a program
//! starts without them and every entry point answers `Error::LibraryNotFound`.
//!
//! `without_cuda_every_entry_point_says_library_not_found` needs a process without CUDA's libraries: it is
//! run by `scripts/check-dynamic-loading.sh` (a machine without CUDA) with `--ignored`. With `--features
//! gpu`, `the_libraries_open_and_a_kernel_runs` runs on the GPU machine (docs/GPU.md).
#![cfg(all(feature = "dynamic-loading", hip_platform = "nvidia"))]
mod common;

use hip::rtc::ProgramBuilder;
use hip::{Device, Error, Status};

#[test]
fn the_binary_does_not_link_cuda() {
    common::elf::assert_this_binary_needs_none_of(&["cudart", "libcuda", "nvrtc"]);
}

#[test]
#[ignore = "needs a process without CUDA's libraries: run by scripts/check-dynamic-loading.sh"]
fn without_cuda_every_entry_point_says_library_not_found() {
    let check = |e: Error, library: &str, first: &str| {
        assert!(matches!(e, Error::LibraryNotFound { .. }), "{e}");
        assert_eq!(e.status(), Status::BackendNotAvailable);
        let text = e.to_string();
        assert!(
            text.contains(library) && text.contains("HIP_RS_CUDART"),
            "{text}"
        );
        // The variables the script sets are tried, and named, first.
        assert!(text.contains(&format!("tried: {first}")), "{text}");
        text
    };
    let runtime = "the CUDA runtime and driver";
    let cudart = "/nonexistent/libcudart.so";
    let first = check(Device::count().unwrap_err(), runtime, cudart);
    assert!(
        first.contains("/nonexistent/libcuda.so.1"),
        "the driver's candidates are listed too: {first}"
    );
    // The same answer on every later call, from every entry point.
    assert_eq!(check(Device::count().unwrap_err(), runtime, cudart), first);
    check(Device::get(0).unwrap_err(), runtime, cudart);
    check(hip::runtime_version().unwrap_err(), runtime, cudart);
    check(hip::driver_version().unwrap_err(), runtime, cudart);
    let compile = ProgramBuilder::new(common::VECTOR_ADD)
        .arch("compute_90")
        .no_cache()
        .compile()
        .unwrap_err();
    check(compile, "NVRTC", "/nonexistent/libnvrtc.so");
    check(
        hip::rtc::version().unwrap_err(),
        "NVRTC",
        "/nonexistent/libnvrtc.so",
    );
}

#[cfg(feature = "gpu")]
#[test]
fn the_libraries_open_and_a_kernel_runs() {
    use hip::prelude::*;
    let d = common::device();
    let opened = hip_sys::loader::library().expect("the CUDA runtime opened");
    assert!(
        opened.path.ends_with(hip_sys::loader::CUDART_SONAME),
        "{}",
        opened.path
    );
    let driver = hip_sys::loader::driver_library().expect("the driver opened");
    assert!(driver.path.ends_with("libcuda.so.1"), "{}", driver.path);
    assert!(hip_sys::loader::failure().is_none());
    assert_eq!(hip::runtime_version().unwrap() / 1000, {
        let soname = hip_sys::loader::CUDART_SONAME;
        soname["libcudart.so.".len()..]
            .split('.')
            .next()
            .and_then(|m| m.parse::<i32>().ok())
            .unwrap()
    });
    let m = common::load(&d, common::VECTOR_ADD);
    let rtc = hiprtc_sys::loader::loaded_from().expect("NVRTC opened");
    assert!(rtc.ends_with(hip_sys::loader::NVRTC_SONAME), "{rtc}");
    let f = m.function("vector_add").unwrap();
    let n = 1 << 16;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
    let (da, db) = (
        DeviceBuffer::from_slice(&d, &a).unwrap(),
        DeviceBuffer::from_slice(&d, &b).unwrap(),
    );
    let mut dc = DeviceBuffer::<f32>::zeroed(&d, n).unwrap();
    let s = hip::Stream::new(&d).unwrap();
    let mut args = LaunchArgs::new();
    let n32 = n as u32;
    args.arg(&da).arg(&db).arg_mut(&mut dc).arg(&n32);
    // SAFETY: the arguments match vector_add's parameters; it touches only i < n.
    unsafe {
        f.launch(&s, &LaunchConfig::for_num_elems(n32), &mut args)
            .unwrap()
    };
    s.synchronize().unwrap();
    let c = dc.to_vec().unwrap();
    assert!(c.iter().enumerate().all(|(i, &v)| v == 3.0 * i as f32));
}
