//! Pools shared between processes (issue 57: `MemPool::new_shareable`, `export_fd`, `export_pointer`,
//! `ImportedMemPool::import`, `import_pointer`) under the shadow HIP runtime (scripts/shadow.sh): two
//! "processes" are two threads that share only a duplicated descriptor and bytes sent over a channel, as
//! processes would over a socket. The importer's buffer is a `ForeignBuffer` (its own allocation record:
//! one side's memory model cannot see the other's uses), so only interprocess events order the two, and
//! the detector checks that they do: without the importer's wait the race is reported (in a child
//! process, so this process's reports stay clean). Also: refusals name what was wrong.
#![cfg(feature = "shadow")]

mod shadow;

use hip::ipc::{ForeignEvent, IpcEventHandle};
use hip::memory::ImportedMemPool;
use hip::prelude::*;
use shadow::assert_no_reports;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::mpsc;

const N: usize = 1 << 14;
const CHILD: &str = "HIP_RS_SHADOW_POOL_SHARE_CHILD";

fn device() -> Device {
    Device::get(0).expect("the shadow runtime's device 0")
}

/// What one side sends the other.
enum Msg {
    Pool(OwnedFd, [u8; 64], Vec<u8>),
    Event(Vec<u8>),
    Done,
}

/// The exchange: the exporter fills a buffer of its shareable pool and records `ready`; the importer
/// imports the pool and the buffer, waits on `ready` (unless `importer_waits` is false), reads the
/// buffer, overwrites it, frees its import and records `done`; the exporter waits on `done` and reads
/// what the importer wrote. Returns how many values were wrong.
fn exchange(importer_waits: bool) -> usize {
    let d = device();
    let a = Stream::non_blocking(&d).unwrap();
    let pool = hip::MemPool::new_shareable(&d).unwrap();
    let mut x = pool.zeroed::<u32>(&a, N).unwrap();
    a.memset_async(&mut x, 1).unwrap();
    let export = pool.export_pointer(&x).unwrap();
    let ready = Event::interprocess(&d).unwrap();
    ready.record(&a).unwrap();
    let (to_importer, from_exporter) = mpsc::channel::<Msg>();
    let (to_exporter, from_importer) = mpsc::channel::<Msg>();
    let fd = pool.export_fd().unwrap();
    // The importer's own copy of the descriptor, as a process would receive one.
    let theirs_fd = fd.try_clone().unwrap();
    let ready_bytes = ready.ipc_handle().unwrap().as_bytes().to_vec();
    to_importer
        .send(Msg::Pool(theirs_fd, *export.bytes(), ready_bytes))
        .unwrap();
    let importer = std::thread::spawn(move || {
        let d = device();
        let b = Stream::non_blocking(&d).unwrap();
        let Msg::Pool(fd, data, ready) = from_exporter.recv().unwrap() else {
            panic!("expected the pool first")
        };
        let imported = ImportedMemPool::import(&d, fd.as_fd()).unwrap();
        drop(fd); // the import does not need the descriptor afterwards
        let mut theirs = imported.import_pointer::<u32>(&data, N).unwrap();
        let ready = ForeignEvent::open(&d, &IpcEventHandle::from_bytes(&ready).unwrap()).unwrap();
        if importer_waits {
            b.wait_event(&ready).unwrap();
        }
        let mut seen = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        b.copy_device_async(&theirs, &mut seen).unwrap();
        let seen = seen.to_vec().unwrap();
        let wrong = seen.iter().filter(|&&v| v != 0x0101_0101).count();
        b.memset_async(&mut theirs, 2).unwrap();
        // The import is freed on the null stream after b's memset; the device-wide wait puts that free
        // before `done`, after which the exporter frees the memory.
        drop(theirs);
        d.synchronize().unwrap();
        drop(imported);
        let done = Event::interprocess(&d).unwrap();
        done.record(&b).unwrap();
        to_exporter
            .send(Msg::Event(done.ipc_handle().unwrap().as_bytes().to_vec()))
            .unwrap();
        let Msg::Done = from_exporter.recv().unwrap() else {
            panic!("expected the end")
        }; // `done` lives until the exporter opened it
        wrong
    });
    let Msg::Event(done) = from_importer.recv().unwrap() else {
        panic!("expected the importer's event")
    };
    let done = ForeignEvent::open(&d, &IpcEventHandle::from_bytes(&done).unwrap()).unwrap();
    to_importer.send(Msg::Done).unwrap();
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
    drop((export, x, fd));
    a.synchronize().unwrap();
    wrong + wrong_there
}

#[test]
fn two_processes_share_a_pool_buffer_ordered_by_interprocess_events() {
    for _ in 0..4 {
        assert_eq!(exchange(true), 0);
    }
    assert_no_reports();
}

#[test]
#[ignore = "run by the_detector_sees_a_missing_wait_on_a_pool_buffer in a child process"]
fn pool_exchange_in_child() {
    let waits = std::env::var(CHILD).as_deref() == Ok("wait");
    let wrong = exchange(waits);
    println!("SHADOW reports={} wrong={wrong}", shadow::reports());
}

fn child_reports(waits: bool) -> usize {
    let side = if waits { "wait" } else { "no-wait" };
    shadow::run_child("pool_exchange_in_child", &[(CHILD, Some(side))]).field("reports")
}

/// The events are the only order between the two sides: without the importer's wait, its read of the
/// pool buffer races the exporter's fill, and the detector says so.
#[test]
fn the_detector_sees_a_missing_wait_on_a_pool_buffer() {
    assert_eq!(child_reports(true), 0, "with the wait: no report");
    assert!(
        child_reports(false) > 0,
        "without the wait the read races the fill"
    );
}

fn named(err: hip::Error, call: &str) {
    assert!(err.to_string().contains(call), "{err}");
}

#[test]
fn refusals_and_errors_name_what_went_wrong() {
    let d = device();
    let s = Stream::non_blocking(&d).unwrap();
    // A pool not made shareable exports nothing, nor do its buffers.
    let plain = hip::MemPool::new(&d).unwrap();
    named(
        plain.export_fd().unwrap_err(),
        "hipMemPoolExportToShareableHandle",
    );
    let y = plain.zeroed::<u32>(&s, 64).unwrap();
    named(
        plain.export_pointer(&y).unwrap_err(),
        "hipMemPoolExportPointer",
    );
    // A descriptor that is no exported pool.
    let not_a_pool = std::fs::File::open("/dev/null").unwrap();
    named(
        ImportedMemPool::import(&d, not_a_pool.as_fd()).unwrap_err(),
        "hipMemPoolImportFromShareableHandle",
    );
    // Bytes that describe no buffer of the imported pool; a buffer freed since its export.
    let shared = hip::MemPool::new_shareable(&d).unwrap();
    let fd = shared.export_fd().unwrap();
    let imported = ImportedMemPool::import(&d, fd.as_fd()).unwrap();
    named(
        imported.import_pointer::<u32>(&[0; 64], 64).unwrap_err(),
        "hipMemPoolImportPointer",
    );
    let z = shared.zeroed::<u32>(&s, 64).unwrap();
    let bytes = *shared.export_pointer(&z).unwrap().bytes();
    drop(z);
    s.synchronize().unwrap();
    named(
        imported.import_pointer::<u32>(&bytes, 64).unwrap_err(),
        "hipMemPoolImportPointer",
    );
    // Longer than the buffer: the import is freed again (on the null stream), which the exporter's free
    // must follow, as another process's would (here through a device-wide wait).
    let w = shared.zeroed::<u32>(&s, 64).unwrap();
    s.synchronize().unwrap(); // the zeroing before the importer's use
    let export = shared.export_pointer(&w).unwrap();
    let err = imported
        .import_pointer::<u32>(export.bytes(), 65)
        .unwrap_err();
    assert!(err.to_string().contains("holds 256 bytes"), "{err}");
    d.synchronize().unwrap();
    drop((export, w, y));
    s.synchronize().unwrap();
    assert_no_reports();
}
