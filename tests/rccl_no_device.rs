//! The `rccl` feature on a machine without a GPU (CI's experimental chroot, RCCL 7.2.4): the library loads
//! and answers, and making a communicator gives a clear error instead of a hang or a crash.
#![cfg(all(feature = "rccl", not(feature = "gpu")))]

use hip::rccl::{self, Comm, UniqueId};
use hip::{Error, NcclErrorCode, Status};

#[test]
fn the_library_reports_the_version_its_header_names() {
    let (major, minor, _) = rccl::version().unwrap();
    let (h_major, h_minor, _) = rccl::rccl_sys::HEADER_VERSION;
    assert_eq!(
        (major, minor),
        (h_major, h_minor),
        "library {major}.{minor}, header {h_major}.{h_minor}"
    );
    assert_eq!(major, 2, "RCCL and NCCL speak NCCL 2's API");
}

#[test]
fn a_communicator_with_no_device_is_a_clear_error() {
    let err = Comm::init_all_visible().unwrap_err();
    // No GPU: the runtime's hipErrorNoDevice (backend_not_available), or zero devices refused by name.
    match &err {
        Error::Hip { code, .. } | Error::NoDevice { code, .. } => {
            assert_eq!(code.name(), Some("hipErrorNoDevice"), "{err}")
        }
        Error::InvalidArgument { what, .. } => assert_eq!(*what, "device list", "{err}"),
        other => panic!("unexpected error: {other}"),
    }
    let err = Comm::init_all(&[]).unwrap_err();
    assert!(err.to_string().contains("at least one device"), "{err}");
    assert_eq!(err.status(), Status::InvalidArgument);
}

#[test]
fn unique_ids_round_trip_through_bytes_and_wrong_lengths_are_refused() {
    let err = UniqueId::from_bytes(&[0u8; 12]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::LengthMismatch {
                expected: 128,
                actual: 12,
                ..
            }
        ),
        "{err}"
    );
    let bytes: Vec<u8> = (0..128u32).map(|i| (i * 7) as u8).collect();
    let id = UniqueId::from_bytes(&bytes).unwrap();
    assert_eq!(id.as_bytes().to_vec(), bytes);
}

#[test]
fn nccl_codes_keep_their_raw_value_and_answer_nccl_error() {
    assert_eq!(NcclErrorCode(4).name(), Some("ncclInvalidArgument"));
    assert_eq!(NcclErrorCode(4).status(), Status::NcclError);
    assert_eq!(Status::NcclError.code(), 540);
    assert_eq!(NcclErrorCode(77).name(), None);
    assert_eq!(NcclErrorCode(77).to_string(), "ncclResult_t 77");
}
