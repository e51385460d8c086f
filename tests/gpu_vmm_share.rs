//! Physical memory shared between two processes (issue 57, virtual memory): the test binary makes
//! shareable physical memory (`PhysicalMemory::new_shareable`), maps it, writes values into it and
//! exports it (`export_fd`), then runs itself as a second process that inherits the descriptor as its
//! fd 3 and gets the size in an environment variable. The child imports it (`PhysicalMemory::import`),
//! maps it into a range of its own, checks the parent's values, writes its own and exits; the parent then
//! reads the child's values through its own mapping: one memory, two processes, two addresses. Then the
//! refusals: memory not made shareable, a descriptor that is no export, and a mapping larger than the
//! export (each naming its call, with this platform's code). hip-tests:
//! hipMemExportToShareableHandle / hipMemImportFromShareableHandle (`Positive_Basic`, `Positive_MultiProc`,
//! `Negative_Parameters`). Compiled only with `--features gpu`; Unix only.
#![cfg(all(feature = "gpu", unix))]
mod common;

use common::device;
use hip::memory::{AddressRange, Granularity, Mapping, PhysicalMemory};
use hip::Error;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

const ROLE: &str = "HIP_RS_VMM_SHARE_ROLE";
const SIZE: &str = "HIP_RS_VMM_SHARE_SIZE";

/// `mapping`'s words, copied to the host (synchronous: nothing else is queued on it meanwhile).
fn read(mapping: &Mapping) -> Vec<u32> {
    let mut back = vec![0u32; mapping.size() / 4];
    // SAFETY: the mapping is `size` bytes of device memory; the copy is synchronous and the other
    // process does not touch the memory while this one reads (the test's protocol: the child runs only
    // between the parent's writes and its final read).
    unsafe {
        hip::result::memcpy(
            back.as_mut_ptr().cast(),
            mapping.as_ptr(),
            mapping.size(),
            hip::sys::hipMemcpyDeviceToHost,
        )
        .unwrap()
    };
    back
}

/// Write `values` (the mapping's size) into `mapping`, synchronously.
fn write(mapping: &Mapping, values: &[u32]) {
    assert_eq!(values.len() * 4, mapping.size());
    // SAFETY: as for `read`, the other way.
    unsafe {
        hip::result::memcpy(
            mapping.as_ptr(),
            values.as_ptr().cast(),
            mapping.size(),
            hip::sys::hipMemcpyHostToDevice,
        )
        .unwrap()
    };
}

#[test]
#[ignore = "the child's part, run by the test below in a child process"]
fn child_role() {
    if std::env::var(ROLE).is_err() {
        return;
    }
    let d = device();
    let size: usize = std::env::var(SIZE).unwrap().parse().unwrap();
    // SAFETY: the parent made fd 3 this process's copy of the descriptor (pre_exec below).
    let fd = unsafe { BorrowedFd::borrow_raw(3) };
    let memory = PhysicalMemory::import(&d, fd, size).unwrap();
    assert_eq!(memory.size(), size);
    let range = AddressRange::reserve(&d, size).unwrap();
    // SAFETY: the parent does not touch the memory while this process runs; the mapping drops first.
    let mapping = unsafe { range.map(0, memory) }.unwrap();
    let seen = read(&mapping);
    let wrong = (0..seen.len()).filter(|&i| seen[i] != i as u32).count();
    assert_eq!(wrong, 0, "the child read {wrong} wrong values");
    write(&mapping, &vec![9; size / 4]);
    drop(mapping);
    println!(
        "child: read {} values at {:p}, wrote nines",
        seen.len(),
        range.as_ptr()
    );
}

#[test]
fn physical_memory_is_imported_and_mapped_by_another_process() {
    let d = device();
    let g = match d.allocation_granularity(Granularity::Minimum) {
        Err(Error::NotSupported { .. }) => {
            // A build against HIP's NVIDIA headers before 5.7, which declare no virtual memory calls.
            let e = PhysicalMemory::new_shareable(&d, 1).unwrap_err();
            assert!(matches!(e, Error::NotSupported { .. }), "{e}");
            eprintln!("this build has no virtual memory management: {e}");
            return;
        }
        r => r.unwrap(),
    };
    let memory = PhysicalMemory::new_shareable(&d, 2 * g).unwrap();
    let size = memory.size();
    let fd = memory.export_fd().unwrap();
    let range = AddressRange::reserve(&d, size).unwrap();
    // SAFETY: only this test uses the memory, the child only while this process waits for it; the
    // mapping drops before the range.
    let mapping = unsafe { range.map(0, memory) }.unwrap();
    write(&mapping, &(0..(size / 4) as u32).collect::<Vec<_>>());
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
        .env(SIZE, size.to_string());
    // SAFETY: between fork and exec only dup2 (async-signal-safe) runs: the child's fd 3 becomes a copy
    // of the exported descriptor, without close-on-exec.
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
    println!(
        "parent mapped it at {:p}; {}",
        range.as_ptr(),
        stdout.trim()
    );
    assert_eq!(read(&mapping), vec![9; size / 4], "the child's values");

    // The import within this process too (hip-tests' Positive_Basic): its own address, the same bytes.
    let again = PhysicalMemory::import(&d, fd.as_fd(), size).unwrap();
    let second = AddressRange::reserve(&d, size).unwrap();
    // SAFETY: as above; both mappings of this process are used only by these synchronous copies.
    let alias = unsafe { second.map(0, again) }.unwrap();
    assert_eq!(read(&alias), vec![9; size / 4], "the same memory");
    drop((alias, mapping));

    // Refusals, with this platform's codes.
    let plain = PhysicalMemory::new(&d, g).unwrap();
    let e = plain.export_fd().unwrap_err();
    println!("export of memory not made shareable: {e}");
    assert!(
        e.to_string().contains("hipMemExportToShareableHandle"),
        "{e}"
    );
    let null = std::fs::File::open("/dev/null").unwrap();
    let e = PhysicalMemory::import(&d, null.as_fd(), g).unwrap_err();
    println!("import of /dev/null: {e}");
    assert!(
        e.to_string().contains("hipMemImportFromShareableHandle"),
        "{e}"
    );
    let big = PhysicalMemory::import(&d, fd.as_fd(), 2 * size).unwrap();
    let wide = AddressRange::reserve(&d, 2 * size).unwrap();
    // SAFETY: refused before anything is mapped (the memory is smaller than said).
    let e = unsafe { wide.map(0, big) }.unwrap_err();
    println!("mapping more than was exported: {e}");
    assert!(e.to_string().contains("hipMemMap"), "{e}");
}
