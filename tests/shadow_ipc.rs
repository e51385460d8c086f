//! IPC (issue 57, family 2) under the shadow HIP runtime (scripts/shadow.sh): two "processes" are two
//! threads that share nothing but handle bytes sent over a channel, as processes would over a pipe. The
//! importer opens the exporter's memory as a `ForeignBuffer` (its own allocation record: the memory model
//! of one side cannot see the other's uses) and its interprocess event as a `ForeignEvent`; only the
//! events order the two, and the detector checks that they do. Without the importer's wait the race is
//! reported (a child process runs that, so this process's reports stay clean). Also: the close comes
//! after the importer's queued uses, a handle of freed memory is refused, pool memory and a too-long
//! open are refused, an event made without `hipEventInterprocess` gives no handle.
#![cfg(feature = "shadow")]

mod shadow;

use hip::ipc::{ForeignEvent, IpcEventHandle, IpcMemHandle};
use hip::memory::ForeignBuffer;
use hip::prelude::*;
use shadow::assert_no_reports;
use std::sync::mpsc;

const N: usize = 1 << 14;
const CHILD: &str = "HIP_RS_SHADOW_IPC_CHILD";

fn device() -> Device {
    Device::get(0).expect("the shadow runtime's device 0")
}

/// The exchange: the exporter fills x and records `ready`; the importer waits on it (unless
/// `importer_waits` is false), reads x through its foreign buffer, overwrites it and records `done`; the
/// exporter waits on `done` and reads what the importer wrote. Returns how many values were wrong.
fn exchange(importer_waits: bool) -> usize {
    let d = device();
    let a = Stream::non_blocking(&d).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    a.memset_async(&mut x, 1).unwrap();
    let export = x.ipc_handle().unwrap();
    let ready = Event::interprocess(&d).unwrap();
    ready.record(&a).unwrap();
    let (to_importer, from_exporter) = mpsc::channel::<Vec<u8>>();
    let (to_exporter, from_importer) = mpsc::channel::<Vec<u8>>();
    to_importer
        .send(export.handle().as_bytes().to_vec())
        .unwrap();
    to_importer
        .send(ready.ipc_handle().unwrap().as_bytes().to_vec())
        .unwrap();
    let importer = std::thread::spawn(move || {
        let d = device();
        let b = Stream::non_blocking(&d).unwrap();
        let mem = IpcMemHandle::from_bytes(&from_exporter.recv().unwrap()).unwrap();
        let ev = IpcEventHandle::from_bytes(&from_exporter.recv().unwrap()).unwrap();
        let mut theirs = ForeignBuffer::<u32>::open(&d, &mem, N).unwrap();
        let ready = ForeignEvent::open(&d, &ev).unwrap();
        if importer_waits {
            b.wait_event(&ready).unwrap();
        }
        let mut seen = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        b.copy_device_async(&theirs, &mut seen).unwrap();
        let wrong = seen
            .to_vec()
            .unwrap()
            .iter()
            .filter(|&&v| v != 0x0101_0101)
            .count();
        b.memset_async(&mut theirs, 2).unwrap();
        // Closed once b's memset is done, before `done` is recorded: the exporter, ordered after `done`,
        // frees its memory only after the close (the detector reports a close not ordered before the
        // free, as the threads' own join does not count).
        drop(theirs);
        let done = Event::interprocess(&d).unwrap();
        done.record(&b).unwrap();
        to_exporter
            .send(done.ipc_handle().unwrap().as_bytes().to_vec())
            .unwrap();
        from_exporter.recv().unwrap(); // `done` lives until the exporter opened it
        wrong
    });
    let done = IpcEventHandle::from_bytes(&from_importer.recv().unwrap()).unwrap();
    let done = ForeignEvent::open(&d, &done).unwrap();
    to_importer.send(Vec::new()).unwrap();
    a.wait_event(&done).unwrap();
    let mut back = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    a.copy_device_async(&x, &mut back).unwrap();
    let wrong = back
        .to_vec()
        .unwrap()
        .iter()
        .filter(|&&v| v != 0x0202_0202)
        .count();
    let wrong_there = importer.join().unwrap();
    drop(export);
    wrong + wrong_there
}

#[test]
fn two_processes_share_a_buffer_ordered_by_interprocess_events() {
    for _ in 0..4 {
        assert_eq!(exchange(true), 0);
    }
    assert_no_reports();
}

#[test]
#[ignore = "run by the_detector_sees_a_missing_interprocess_wait in a child process"]
fn exchange_in_child() {
    let waits = std::env::var(CHILD).as_deref() == Ok("wait");
    let wrong = exchange(waits);
    println!("SHADOW reports={} wrong={wrong}", shadow::reports());
}

fn child_reports(waits: bool) -> usize {
    let side = if waits { "wait" } else { "no-wait" };
    shadow::run_child("exchange_in_child", &[(CHILD, Some(side))]).field("reports")
}

/// The events are the only order between the two sides: without the importer's wait, its read of the
/// exporter's memory races the exporter's fill, and the detector says so.
#[test]
fn the_detector_sees_a_missing_interprocess_wait() {
    assert_eq!(child_reports(true), 0, "with the wait: no report");
    assert!(
        child_reports(false) > 0,
        "without the wait the read races the fill"
    );
}

#[test]
fn refusals_and_errors_name_what_went_wrong() {
    let d = device();
    let x = DeviceBuffer::<u32>::zeroed(&d, 64).unwrap();
    // The shadow counts a close as a last read through the mapping: after the exporter's zeroing here.
    d.synchronize().unwrap();
    let export = x.ipc_handle().unwrap();
    // Too long for the exported allocation: refused (and closed again).
    let e = ForeignBuffer::<u32>::open(&d, export.handle(), 65).unwrap_err();
    assert!(e.to_string().contains("256 bytes"), "{e}");
    // Shorter is fine: a prefix of the allocation.
    let part = ForeignBuffer::<u32>::open(&d, export.handle(), 16).unwrap();
    assert_eq!(part.len(), 16);
    drop(part);
    // Bytes that are no handle.
    let e = ForeignBuffer::<u32>::open(&d, &IpcMemHandle::from_bytes(&[0; 64]).unwrap(), 1)
        .unwrap_err();
    assert!(e.to_string().contains("hipIpcOpenMemHandle"), "{e}");
    // Pool memory and empty buffers cannot be exported.
    let s = Stream::new(&d).unwrap();
    let pooled = DeviceBuffer::<u32>::zeroed_async(&s, 16).unwrap();
    let e = pooled.ipc_handle().unwrap_err();
    assert!(e.to_string().contains("memory pool"), "{e}");
    let empty = DeviceBuffer::<u32>::zeroed(&d, 0).unwrap();
    assert!(empty
        .ipc_handle()
        .unwrap_err()
        .to_string()
        .contains("empty"));
    // An event without hipEventInterprocess has no handle.
    let e = Event::new(&d).unwrap().ipc_handle().unwrap_err();
    assert!(e.to_string().contains("hipIpcGetEventHandle"), "{e}");
    s.synchronize().unwrap();
    assert_no_reports();
}

/// The export guard keeps the memory: dropping the buffer first leaves the handle openable; once the
/// guard goes too, the memory is freed and the handle refused (an error, not a crash).
#[test]
fn the_export_guard_keeps_the_memory_and_a_freed_export_is_refused() {
    let d = device();
    let x = DeviceBuffer::from_slice(&d, &[5u32; 32]).unwrap();
    let export = x.ipc_handle().unwrap();
    let handle = *export.handle();
    drop(x);
    let theirs = ForeignBuffer::<u32>::open(&d, &handle, 32).unwrap();
    let mut seen = DeviceBuffer::<u32>::zeroed(&d, 32).unwrap();
    seen.copy_from_device(&theirs).unwrap();
    assert_eq!(seen.to_vec().unwrap(), vec![5; 32]);
    drop(theirs);
    drop(export);
    let e = ForeignBuffer::<u32>::open(&d, &handle, 32).unwrap_err();
    assert!(e.to_string().contains("hipIpcOpenMemHandle"), "{e}");
    assert_no_reports();
}
