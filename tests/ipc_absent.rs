//! IPC (issue 57, family 2) on a machine without a GPU: every `hipIpc*` call answers with an error that
//! names it and keeps the runtime's raw code, the safe entry points refuse before any HIP call where
//! they can, and handles travel as exactly 64 plain bytes. With a device present the same calls must
//! succeed where tests/gpu_ipc.rs says.
use hip::ipc::{IpcEventHandle, IpcMemHandle};
use hip::result::ipc;
use hip::{Device, Error};

/// No usable device here: the tests below check the error paths (they say nothing on a GPU machine).
fn no_device() -> bool {
    Device::count().is_err()
}

/// `e` names `call` and keeps a raw HIP code.
fn names(e: &Error, call: &str) {
    let text = e.to_string();
    assert!(text.contains(call), "{text}");
    match e {
        Error::Hip { .. } => assert_ne!(e.hip_code().expect("a raw code").0, 0, "{text}"),
        Error::LibraryNotFound { .. } => {}
        other => panic!("unexpected error for {call}: {other:?}"),
    }
}

#[test]
fn ipc_calls_answer_an_error_naming_the_call_without_a_device() {
    if !no_device() {
        return;
    }
    let handle = IpcMemHandle::from_bytes(&[0; 64]).unwrap();
    names(
        &ipc::open_mem_handle(handle.raw()).unwrap_err(),
        "hipIpcOpenMemHandle",
    );
    let event = IpcEventHandle::from_bytes(&[0; 64]).unwrap();
    names(
        &ipc::open_event_handle(event.raw()).unwrap_err(),
        "hipIpcOpenEventHandle",
    );
    let mut word = 0u64;
    let host = (&mut word as *mut u64).cast();
    // SAFETY: a host address HIP cannot know as device memory: it only looks the address up.
    names(
        &unsafe { ipc::get_mem_handle(host) }.unwrap_err(),
        "hipIpcGetMemHandle",
    );
    names(
        &ipc::mem_get_address_range(host).unwrap_err(),
        "hipMemGetAddressRange",
    );
    // Every event-taking call is reached through a live event (Event::interprocess), which needs a
    // device: its creation fails first and names its own call.
    assert!(Device::get(0).is_err());
}

#[test]
fn handles_are_64_plain_bytes_and_other_lengths_are_refused() {
    let bytes: Vec<u8> = (100..164).collect();
    let m = IpcMemHandle::from_bytes(&bytes).unwrap();
    assert_eq!(m.as_bytes(), &bytes[..]);
    assert_eq!(IpcMemHandle::from_bytes(m.as_bytes()).unwrap(), m);
    let e = IpcEventHandle::from_bytes(&bytes).unwrap();
    assert_eq!(e.as_bytes(), &bytes[..]);
    for len in [0, 1, 63, 65, 4096] {
        let e = IpcMemHandle::from_bytes(&vec![1; len]).unwrap_err();
        assert!(e.to_string().contains("64 bytes"), "{e}");
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e:?}");
        let e = IpcEventHandle::from_bytes(&vec![1; len]).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e:?}");
    }
}
