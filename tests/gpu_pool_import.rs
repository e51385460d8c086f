//! A memory pool shared between two processes (issue 57, pools): the test binary exports a shareable
//! pool (`MemPool::new_shareable`, `export_fd`) and one of its buffers (`export_pointer`), then runs itself
//! as a second process that inherits the pool's descriptor as its fd 3 and gets the buffer's 64 bytes in
//! an environment variable. The child imports the pool (`ImportedMemPool::import`) and the buffer
//! (`import_pointer`), checks the parent's values, writes its own and exits; the parent then reads the
//! child's values. hip-tests: hipMemPoolExportToShareableHandle / hipMemPoolImportFromShareableHandle /
//! hipMemPoolExportPointer / hipMemPoolImportPointer (their two-process case). Compiled only with
//! `--features gpu`; Unix only (the descriptor travels as a file descriptor).
#![cfg(all(feature = "gpu", unix))]
mod common;

use common::device;
use hip::memory::ImportedMemPool;
use hip::prelude::*;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

const N: usize = 1 << 16;
const ROLE: &str = "HIP_RS_POOL_IMPORT_ROLE";
const DATA: &str = "HIP_RS_POOL_IMPORT_DATA";

use common::child::{hex, unhex};

#[test]
#[ignore = "the child's part, run by the test below in a child process"]
fn child_role() {
    if std::env::var(ROLE).is_err() {
        return;
    }
    let d = device();
    let data: [u8; 64] = unhex(&std::env::var(DATA).unwrap()).try_into().unwrap();
    // SAFETY: the parent made fd 3 this process's copy of the pool's descriptor (pre_exec below), open
    // for the whole test.
    let fd = unsafe { BorrowedFd::borrow_raw(3) };
    let pool = ImportedMemPool::import(&d, fd).unwrap();
    let mut theirs = pool.import_pointer::<f32>(&data, N).unwrap();
    let s = Stream::non_blocking(&d).unwrap();
    let mut seen = DeviceBuffer::<f32>::zeroed(&d, N).unwrap();
    s.copy_device_async(&theirs, &mut seen).unwrap();
    let seen = seen.to_vec().unwrap();
    let wrong = (0..N).filter(|&i| seen[i] != i as f32).count();
    assert_eq!(wrong, 0, "the child read {wrong} wrong values");
    let nines = DeviceBuffer::from_slice(&d, &vec![9.0f32; N]).unwrap();
    s.copy_device_async(&nines, &mut theirs).unwrap();
    // Freed after the copy (the memory model waits for it), before the pool it came from.
    drop(theirs);
    s.synchronize().unwrap();
    drop(pool);
    println!("child: read {N} values, wrote {N} nines");
}

#[test]
fn a_shareable_pool_and_its_buffer_are_imported_by_another_process() {
    let d = device();
    let shared = match hip::MemPool::new_shareable(&d) {
        Ok(p) => p,
        Err(e @ hip::Error::NotSupported { .. }) => {
            panic!("no shareable pools on this device: {e}")
        }
        Err(e) => panic!("{e}"),
    };
    let s = Stream::non_blocking(&d).unwrap();
    let mut y = shared.zeroed::<f32>(&s, N).unwrap();
    let values: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let src = DeviceBuffer::from_slice(&d, &values).unwrap();
    s.copy_device_async(&src, &mut y).unwrap();
    s.synchronize().unwrap();
    let fd = shared.export_fd().unwrap();
    let export = shared.export_pointer(&y).unwrap();
    let raw = fd.as_raw_fd();
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args([
            "--exact",
            "child_role",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, "import")
        .env(DATA, hex(export.bytes()));
    // SAFETY: between fork and exec only dup2 (async-signal-safe) runs: the child's fd 3 becomes a copy
    // of the pool's descriptor, without close-on-exec.
    unsafe {
        child.pre_exec(move || {
            if libc::dup2(raw, 3) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = child.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("child: read"),
        "the child ended with {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(y.to_vec().unwrap(), vec![9.0f32; N], "the child's values");
    drop((export, fd));
}
