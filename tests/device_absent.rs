//! What the safe crate says about devices on any machine: a count, or "no usable GPU" (no device, or, as
//! where only a stub libcuda.so.1 stands in for NVIDIA's driver, no working driver) in words.
use hip::{Device, Error, NoDeviceReason, Status};

#[test]
fn device_count_is_a_count_or_no_device() {
    match Device::count() {
        Ok(n) => assert!(n > 0),
        Err(e) => {
            let Error::NoDevice {
                platform, reason, ..
            } = &e
            else {
                panic!("{e:?}")
            };
            assert_eq!(*platform, hip::PLATFORM);
            assert!(e.is_no_device());
            assert_eq!(e.status(), Status::BackendNotAvailable);
            assert_eq!(e.status().code(), 501);
            // In words, without naming a call the user never made, and with what to check.
            let text = e.to_string();
            assert!(!text.contains("hipGetDeviceCount"), "{text}");
            if *reason == NoDeviceReason::NoDevice {
                assert_eq!(e.hip_code().unwrap().name(), Some("hipErrorNoDevice"));
                assert!(text.starts_with("no HIP device was found"), "{text}");
                assert!(text.contains("HIP_VISIBLE_DEVICES"), "{text}");
            } else {
                // A driver missing, too old or failing: said as such, with the driver to check.
                assert!(text.starts_with("no usable GPU: "), "{text}");
                assert!(text.contains("driver"), "{text}");
            }
        }
    }
}

#[test]
fn opening_a_device_past_the_count_is_an_error() {
    let err = Device::get(4096).unwrap_err();
    match Device::count() {
        Ok(count) => assert!(
            matches!(err, Error::DeviceOutOfRange { ordinal: 4096, count: c } if c == count)
        ),
        // No device: the count itself fails, and that error is what `get` answers.
        Err(count_err) => {
            assert!(err.is_no_device(), "{err}");
            assert_eq!(err.hip_code(), count_err.hip_code());
            assert_eq!(err.to_string(), count_err.to_string());
            assert_eq!(err.status(), Status::BackendNotAvailable);
        }
    }
}

#[test]
fn versions_come_from_the_runtime() {
    let runtime = hip::runtime_version().unwrap();
    let driver = hip::driver_version().unwrap();
    if cfg!(hip_platform = "amd") {
        // HIP_VERSION = major * 10_000_000 + minor * 100_000 + patch: the headers' own, or (opened at run
        // time, `dynamic-loading`) a newer runtime's.
        let headers = hip::sys::HIP_VERSION as i32;
        if cfg!(feature = "dynamic-loading") {
            assert!(
                runtime / 100_000 >= headers / 100_000,
                "{runtime} {headers}"
            );
        } else {
            assert_eq!(runtime, headers);
        }
        if hip::Device::count().is_err() {
            // Without a device the runtime answers its own version for the driver too (5.2.3 to 7.2.4).
            assert_eq!(driver, runtime);
        }
    } else {
        // CUDA's versions (major * 1000 + minor * 10): a driver runs runtimes up to its own version. With
        // no working driver (only a stub libcuda.so.1) the runtime answers 0 for it, and the device count
        // says so.
        let no_driver = matches!(
            Device::count(),
            Err(Error::NoDevice {
                reason: NoDeviceReason::NoDriver,
                ..
            })
        );
        assert!(
            runtime >= 11_000 && (driver >= runtime || (no_driver && driver == 0)),
            "{runtime} {driver}"
        );
    }
}

#[test]
fn the_one_way_to_ask_for_a_gpu_answers_a_device_or_says_why_not() {
    let mut why = None;
    let found = Device::first_usable(|e| why = Some(e.to_string())).unwrap();
    match (Device::count(), found) {
        (Ok(_), Some(d)) => {
            assert_eq!(d.ordinal(), 0);
            assert!(why.is_none(), "{why:?}");
        }
        (Err(count_err), None) => {
            // The reason given is the count's own error, in words.
            assert_eq!(why.as_deref(), Some(count_err.to_string().as_str()));
            assert!(count_err.is_no_device());
            let first = Device::first().unwrap_err();
            assert!(first.is_no_device(), "{first:?}");
        }
        (count, found) => panic!("count {count:?} but first_usable found {found:?}"),
    }
}

#[test]
fn selecting_a_device_refuses_bad_strings_before_asking_the_runtime() {
    let err = Device::select("the big one").unwrap_err();
    assert!(
        matches!(err, Error::InvalidArgument { what: "device", .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("GPU-"), "{err}");
    match Device::count() {
        // No GPU: a well-formed string gets the same "no usable GPU" answer as everything else.
        Err(_) => {
            for spec in [
                "0",
                "GPU-5a4c1a6e-8a34-2bd5-3f2b-6a1e0c9d7f10",
                "0000:3b:00.0",
            ] {
                let e = Device::select(spec).unwrap_err();
                assert!(e.is_no_device(), "{spec}: {e:?}");
            }
        }
        Ok(count) => {
            let e = Device::select(&count.to_string()).unwrap_err();
            assert!(
                matches!(&e, Error::NoMatchingDevice { matched: 0, present, .. } if present.len() == count),
                "{e:?}"
            );
            assert!(e.to_string().contains("0: "), "{e}");
            assert_eq!(e.status(), Status::NotFound);
        }
    }
}
