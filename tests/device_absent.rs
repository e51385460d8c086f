//! What the safe crate says about devices on any machine: a count, or the runtime's NoDevice mapped.
use hip::{Device, Error, Status};

#[test]
fn device_count_is_a_count_or_no_device() {
    match Device::count() {
        Ok(n) => assert!(n > 0),
        Err(e) => {
            assert_eq!(e.hip_code().unwrap().name(), Some("hipErrorNoDevice"));
            assert_eq!(e.status(), Status::BackendNotAvailable);
            assert_eq!(e.status().code(), 501);
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
        Err(_) => assert_eq!(err.status(), Status::BackendNotAvailable),
    }
}

#[test]
fn versions_come_from_the_runtime() {
    assert!(hip::runtime_version().unwrap() > 0);
    assert!(hip::driver_version().is_ok());
}
