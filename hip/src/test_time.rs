//! For tests that bound a parser's time: the CPU time this thread used, which other work on the machine
//! (a parallel build, CI's chroot preparation) changes far less than the wall clock.

use std::time::Duration;

/// CPU time used by the calling thread so far (`CLOCK_THREAD_CPUTIME_ID`).
#[cfg(unix)]
pub(crate) fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a live, writable timespec; the clock id is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// CPU time used by the calling thread so far (`GetThreadTimes`: kernel plus user time).
#[cfg(windows)]
pub(crate) fn thread_cpu() -> Duration {
    /// Win32's FILETIME: 100-nanosecond units, split in two halves.
    #[repr(C)]
    #[derive(Default)]
    struct FileTime {
        low: u32,
        high: u32,
    }
    impl FileTime {
        fn duration(&self) -> Duration {
            Duration::from_nanos(((u64::from(self.high) << 32) | u64::from(self.low)) * 100)
        }
    }
    #[link(name = "kernel32")]
    extern "system" {
        fn GetCurrentThread() -> *mut std::ffi::c_void;
        fn GetThreadTimes(
            thread: *mut std::ffi::c_void,
            creation: *mut FileTime,
            exit: *mut FileTime,
            kernel: *mut FileTime,
            user: *mut FileTime,
        ) -> i32;
    }
    let (mut creation, mut exit, mut kernel, mut user) = Default::default();
    // SAFETY: GetCurrentThread returns a pseudo-handle valid in this thread; the four out-pointers are
    // live, writable locals of FILETIME's layout.
    let ok = unsafe {
        GetThreadTimes(
            GetCurrentThread(),
            &mut creation,
            &mut exit,
            &mut kernel,
            &mut user,
        )
    };
    assert_ne!(ok, 0, "GetThreadTimes failed");
    kernel.duration() + user.duration()
}

/// `f`'s answer, after asserting it used less than a second of this thread's CPU time (the inputs these
/// tests give took 3 to 75 s before their parsers were made linear).
/// Under Miri (an interpreter, hundreds of times slower) only the answer is checked.
pub(crate) fn within_a_cpu_second<T>(what: &str, f: impl FnOnce() -> T) -> T {
    if cfg!(miri) {
        return f();
    }
    let start = thread_cpu();
    let out = f();
    let took = thread_cpu() - start;
    assert!(
        took < Duration::from_secs(1),
        "{what} took {took:?} of CPU time"
    );
    out
}
