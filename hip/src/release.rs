//! Releasing HIP objects where HIP may be called: never inside a host function.
//!
//! A host function (`Stream::launch_host_fn`, and HIP's callbacks generally) runs on a runtime thread and
//! must not call HIP: the runtime may deadlock, and a call that waits for the device (`hipFree`,
//! `hipDeviceSynchronize`, what dropping a launched graph or a module does) waits for work queued behind
//! the host function itself. Whatever a closure owns is dropped inside it, though: buffers, events,
//! streams, graphs, modules, library handles. So every owner of a HIP object releases it through
//! [`now_or_later`]: at once on an ordinary thread, or, inside a host function, on the crate's releasing
//! thread (one process-wide thread, started on first need).
//!
//! This module sits below every HIP object (it imports nothing of the crate): `host_fn` sets the flag
//! while it runs a closure, and the owners read it.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, OnceLock};

thread_local! {
    /// Set while this thread runs a host function for HIP.
    static IN_HOST_FN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the calling thread is running a host function: waiting here for stream work may wait for
/// work queued behind the function itself (a deadlock), and no HIP call is allowed, so the crate never
/// makes one.
pub(crate) fn in_host_fn() -> bool {
    IN_HOST_FN.with(|f| f.get())
}

/// Marks the calling thread as running a host function until dropped.
pub(crate) struct InsideHostFn(());

impl InsideHostFn {
    /// From now until the guard drops, [`in_host_fn`] answers `true` on this thread.
    pub(crate) fn enter() -> InsideHostFn {
        IN_HOST_FN.with(|f| f.set(true));
        InsideHostFn(())
    }
}

impl Drop for InsideHostFn {
    fn drop(&mut self) {
        IN_HOST_FN.with(|f| f.set(false));
    }
}

type Work = Box<dyn FnOnce() + Send>;

/// Run `work` (a release that calls HIP, and may wait for streams) on the crate's releasing thread,
/// outside any host function. If that thread cannot be started the work is leaked, never run here: a HIP
/// object is then never released rather than released under work or deadlocked.
pub(crate) fn defer(work: Work) {
    static RELEASER: OnceLock<Option<Mutex<Sender<Work>>>> = OnceLock::new();
    let sender = RELEASER.get_or_init(|| {
        let (tx, rx) = channel::<Work>();
        std::thread::Builder::new()
            .name("hip-rs-release".into())
            .spawn(move || {
                for work in rx {
                    // A release that panics must not end the thread: later ones would be leaked.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
                }
            })
            .ok()
            .map(|_| Mutex::new(tx))
    });
    let refused = match sender {
        Some(tx) => tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(work)
            .err()
            .map(|e| e.0),
        None => Some(work),
    };
    if let Some(work) = refused {
        std::mem::forget(work);
    }
}

/// Run `release` now, or, inside a host function, on the releasing thread ([`defer`]). Outside host
/// functions this costs one thread-local read: nothing is boxed.
#[inline]
pub(crate) fn now_or_later(release: impl FnOnce() + Send + 'static) {
    if in_host_fn() {
        defer(Box::new(release));
    } else {
        release();
    }
}

/// A raw HIP (or library) handle carried to the releasing thread (a pointer, or an integer handle such
/// as hipFFT's on the NVIDIA platform).
pub(crate) struct RawHandle<T: Copy>(pub(crate) T);

// SAFETY: HIP's and its libraries' handles are opaque pointers to runtime objects that may be released
// from any thread; a `RawHandle` is made only to move one handle, owned by the value being dropped, to
// the thread that releases it, once.
unsafe impl<T: Copy> Send for RawHandle<T> {}

impl<T: Copy> RawHandle<T> {
    /// The handle. A method, not the field, in the releasing closure: a closure that named `.0` would
    /// capture the bare pointer (edition 2021 captures fields), which is not `Send`.
    pub(crate) fn get(&self) -> T {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_a_host_function_the_release_runs_at_once() {
        let (tx, rx) = std::sync::mpsc::channel();
        let me = std::thread::current().id();
        now_or_later(move || tx.send(std::thread::current().id()).unwrap());
        assert_eq!(rx.try_recv().unwrap(), me);
    }

    #[test]
    fn inside_a_host_function_the_release_runs_on_the_releasing_thread() {
        let (tx, rx) = std::sync::mpsc::channel();
        let me = std::thread::current().id();
        {
            let _inside = InsideHostFn::enter();
            assert!(in_host_fn());
            now_or_later(move || {
                tx.send((std::thread::current().id(), in_host_fn()))
                    .unwrap()
            });
        }
        assert!(!in_host_fn());
        let (thread, inside) = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        assert_ne!(thread, me);
        assert!(
            !inside,
            "the releasing thread is not inside a host function"
        );
    }

    #[test]
    fn a_release_that_panics_leaves_the_thread_for_the_next() {
        defer(Box::new(|| panic!("a release failed")));
        let (tx, rx) = std::sync::mpsc::channel();
        defer(Box::new(move || tx.send(7).unwrap()));
        assert_eq!(rx.recv_timeout(std::time::Duration::from_secs(10)), Ok(7));
    }
}
