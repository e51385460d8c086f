//! Host functions in stream order: [`Stream::launch_host_fn`] runs a Rust closure on a runtime thread once
//! the work queued before it is done, and holds back the work queued after it until the closure returns.
//!
//! The closure is boxed, handed to HIP as one pointer, and freed exactly once: by the trampoline after it
//! runs, or here when HIP refuses to queue it. A panic inside it is caught (it never unwinds into HIP) and
//! reported through the returned [`HostFnHandle`].

use crate::error::Result;
use crate::result;
use crate::stream::Stream;
use hip_sys as sys;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

/// Where a queued host function stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostFnState {
    /// Not run yet.
    Pending,
    /// Ran and returned.
    Done,
    /// Ran and panicked; the panic's message (or `"<non-string panic payload>"`). The stream went on.
    Panicked(String),
}

/// What [`Stream::launch_host_fn`] gives back: ask it whether the closure ran and how it ended.
#[derive(Clone, Debug)]
pub struct HostFnHandle {
    state: Arc<Mutex<HostFnState>>,
}

impl HostFnHandle {
    /// The state now. After the stream is synchronized it is [`HostFnState::Done`] or
    /// [`HostFnState::Panicked`].
    pub fn state(&self) -> HostFnState {
        lock(&self.state).clone()
    }

    /// The panic message, if the closure panicked.
    pub fn panic_message(&self) -> Option<String> {
        match self.state() {
            HostFnState::Panicked(m) => Some(m),
            _ => None,
        }
    }
}

fn lock(m: &Mutex<HostFnState>) -> std::sync::MutexGuard<'_, HostFnState> {
    // Only this module writes the state, never while panicking; a poisoned lock still holds a valid state.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What HIP's one pointer carries.
struct Payload {
    /// The closure, given the stream's status as HIP passed it (`hipSuccess`, or the error the stream
    /// is in).
    f: Box<dyn FnOnce(sys::hipError_t) + Send>,
    state: Arc<Mutex<HostFnState>>,
}

/// Box `f` for HIP: the raw pointer owns it until [`run_raw`] or [`reclaim`] takes it back.
pub(crate) fn into_raw<F: FnOnce() + Send + 'static>(f: F) -> (*mut c_void, HostFnHandle) {
    into_raw_with_status(move |_| f())
}

/// [`into_raw`] for a closure that is told the stream's status (the futures of [`crate::future`] wake
/// with it).
pub(crate) fn into_raw_with_status<F: FnOnce(sys::hipError_t) + Send + 'static>(
    f: F,
) -> (*mut c_void, HostFnHandle) {
    let state = Arc::new(Mutex::new(HostFnState::Pending));
    let payload = Box::new(Payload {
        f: Box::new(f),
        state: state.clone(),
    });
    (
        Box::into_raw(payload) as *mut c_void,
        HostFnHandle { state },
    )
}

/// Take back a payload HIP never queued, without running it.
///
/// # Safety
/// `p` came from [`into_raw`] or [`into_raw_with_status`] (both box the same `Payload`) and was neither
/// run nor reclaimed, and HIP will never run it (it refused to queue it).
pub(crate) unsafe fn reclaim(p: *mut c_void) {
    // SAFETY: the caller's contract: a leaked `Box<Payload>` that nothing else will take back.
    drop(unsafe { Box::from_raw(p as *mut Payload) });
}

/// The callback HIP calls: hands the payload to [`run_raw`].
unsafe extern "C" fn callback(_stream: sys::hipStream_t, status: sys::hipError_t, p: *mut c_void) {
    // SAFETY: `p` is the userData `queue_raw` gave hipStreamAddCallback: a payload of `into_raw` /
    // `into_raw_with_status`, which HIP hands to this callback once (see `queue_raw`).
    unsafe { run_raw_with_status(p, status) }
}

pub(crate) use crate::release::{defer, in_host_fn};

/// The error for a host wait asked for inside a host function.
pub(crate) fn refuse_wait() -> crate::Error {
    crate::Error::InvalidArgument {
        what: "host wait inside a host function",
        value: "a buffer's host access (as_slice, as_mut_slice, wait)".into(),
        reason: "the work it would wait for may be queued behind the host function itself, which \
                 would never finish; read the buffer after the stream reached the function's end \
                 (synchronize, an event, or a later host function's handle)"
            .into(),
    }
}

/// Runs the closure once, catches a panic, frees the payload. Everything the closure owns is dropped
/// while [`in_host_fn`] is set: buffers it held are freed by the releasing thread ([`defer`]).
///
/// # Safety
/// `p` came from [`into_raw`] or [`into_raw_with_status`] and was neither run nor reclaimed.
#[cfg(test)]
pub(crate) unsafe fn run_raw(p: *mut c_void) {
    // SAFETY: the caller's contract, passed on.
    unsafe { run_raw_with_status(p, sys::hipSuccess) }
}

/// [`run_raw`] with the stream's status as HIP gave it.
///
/// # Safety
/// `p` came from [`into_raw`] or [`into_raw_with_status`] and was neither run nor reclaimed.
pub(crate) unsafe fn run_raw_with_status(p: *mut c_void, status: sys::hipError_t) {
    let _inside = crate::release::InsideHostFn::enter();
    // SAFETY: `p` is a `Box<Payload>` leaked by `into_raw_with_status`, neither run nor reclaimed (the
    // caller's contract; HIP runs a queued callback once): taken back here, once.
    let payload = unsafe { Box::from_raw(p as *mut Payload) };
    let Payload { f, state } = *payload;
    let outcome = match catch_unwind(AssertUnwindSafe(move || f(status))) {
        Ok(()) => HostFnState::Done,
        Err(e) => {
            let msg = panic_message(&e);
            // Dropping the payload could itself panic: never let that unwind into HIP.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(e)));
            HostFnState::Panicked(msg)
        }
    };
    *lock(&state) = outcome;
}

/// A caught panic's message (or `"<non-string panic payload>"`).
pub(crate) fn panic_message(e: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = e.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = e.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_string()
    }
}

impl Stream {
    /// Queue `f` to run on a runtime thread once the work queued so far on this stream is done; work
    /// queued later waits until `f` returns (`hipStreamAddCallback`: HIP 5.2.3's library lacks
    /// `hipLaunchHostFunc`, see [`result::host_fn`]).
    ///
    /// Not in a graph: on a stream a [`Capture`](crate::Capture) records (its own, or one that joined
    /// it) this is [`Error::InvalidArgument`](crate::Error::InvalidArgument), refused before HIP sees it,
    /// and the capture stays valid. `f` is run once and freed, where a graph replays its nodes any number
    /// of times; and no runtime records `hipStreamAddCallback` into a graph anyway (HIP before 7.0 would
    /// run it live, when the work queued before the capture is done; HIP 7.0 and CUDA refuse it and
    /// invalidate the capture).
    ///
    /// `f` must not call HIP (the runtime may deadlock: the rule of `cudaLaunchHostFunc`), and should be
    /// short: it holds the stream. It is freed exactly once, run or not. A panic in `f` is caught, the
    /// stream goes on, and the returned handle reports [`HostFnState::Panicked`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) on a stream a capture records, and
    /// [`Error::Hip`](crate::Error::Hip) with what HIP returns for making the device current and for
    /// `hipStreamAddCallback` (`f` is then dropped, never run).
    ///
    /// ```no_run
    /// # use hip::prelude::*;
    /// # let device = Device::get(0)?;
    /// let stream = Stream::new(&device)?;
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let handle = stream.launch_host_fn(move || tx.send(42).unwrap())?;
    /// stream.synchronize()?;
    /// assert_eq!(rx.recv().unwrap(), 42);
    /// assert_eq!(handle.state(), hip::HostFnState::Done);
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn launch_host_fn<F: FnOnce() + Send + 'static>(&self, f: F) -> Result<HostFnHandle> {
        // Held until the callback is queued: no capture begins between the check and the call.
        let op = self.begin_op();
        if op.is_capturing() {
            return Err(refuse_in_capture(self.id()));
        }
        self.device().bind()?;
        // SAFETY: `self.raw()` is live while `self` is borrowed (its device current), and not captured by
        // this crate (checked under `op`, held through the call).
        unsafe { queue_raw(self.raw(), into_raw(f)) }
    }
}

/// The refusal of a host function on a stream a capture records.
#[cold]
pub(crate) fn refuse_in_capture(stream: u64) -> crate::Error {
    crate::Error::InvalidArgument {
        what: "operation on a capturing stream",
        value: "launch_host_fn".into(),
        reason: format!(
            "stream {stream} is being captured into a graph, and a host function cannot be captured: \
             its closure runs once and is freed, while a graph replays its nodes (and HIP before 7.0 \
             would run it live instead); record a host node with Capture::host (a Fn run at every \
             replay), or queue it before or after the capture"
        ),
    }
}

/// Queue a payload made by [`into_raw`] or [`into_raw_with_status`] on `stream` (whose device is
/// current); on failure it is freed here, never run.
///
/// # Safety
/// `stream` is a live stream of the current device, or null (its null stream).
pub(crate) unsafe fn queue_raw(
    stream: sys::hipStream_t,
    (p, handle): (*mut c_void, HostFnHandle),
) -> Result<HostFnHandle> {
    // SAFETY: `stream` is live (the caller's contract, its device current). `callback` may run on another
    // thread: the payload is Send (`F: Send`, the state an Arc<Mutex>). HIP calls it at most once per
    // successful hipStreamAddCallback (run_raw_with_status then frees it), also on a stream being
    // captured: no runtime records hipStreamAddCallback into a graph (HIP before 7.0 queues it live,
    // HIP 7.0 and CUDA refuse it with hipErrorStreamCaptureUnsupported), so no graph replay can call it
    // again with the freed payload (`launch_host_fn` also refuses streams this crate captures). It never unwinds:
    // the closure runs under catch_unwind, and dropping a panic payload is caught too. The closure is
    // the caller's safe code and may call HIP against the rule `launch_host_fn` states: CUDA answers
    // such a call with an error and HIP documents a possible deadlock, neither of them memory
    // unsafety. If the call fails, HIP never calls `callback` (handled below).
    let queued = unsafe { result::host_fn::stream_add_callback(stream, callback, p) };
    if let Err(e) = queued {
        // SAFETY: `p` came from `into_raw` or `into_raw_with_status` (the caller's); HIP refused the
        // callback, so it never runs it and `p` is neither run nor reclaimed yet: freed here, once.
        unsafe { reclaim(p) };
        return Err(e);
    }
    Ok(handle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts its drops.
    struct Tracked(Arc<AtomicUsize>);
    impl Drop for Tracked {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn runs_once_and_frees_once() {
        let drops = Arc::new(AtomicUsize::new(0));
        let runs = Arc::new(AtomicUsize::new(0));
        let (t, r) = (Tracked(drops.clone()), runs.clone());
        let (p, handle) = into_raw(move || {
            let _keep = &t;
            r.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(handle.state(), HostFnState::Pending);
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        // SAFETY: `p` came from `into_raw` and is run once, here.
        unsafe { run_raw(p) };
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert_eq!(handle.state(), HostFnState::Done);
        assert_eq!(handle.panic_message(), None);
    }

    #[test]
    fn panic_is_caught_reported_and_frees_once() {
        let drops = Arc::new(AtomicUsize::new(0));
        let t = Tracked(drops.clone());
        let (p, handle) = into_raw(move || {
            let _keep = &t;
            panic!("boom {}", 7);
        });
        // SAFETY: `p` came from `into_raw` and is run once, here.
        unsafe { run_raw(p) }; // must return normally
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert_eq!(handle.state(), HostFnState::Panicked("boom 7".into()));
        let (p, handle) = into_raw(|| std::panic::panic_any(5u8));
        // SAFETY: a new `p` from `into_raw`, run once, here.
        unsafe { run_raw(p) };
        assert_eq!(
            handle.panic_message().as_deref(),
            Some("<non-string panic payload>")
        );
    }

    #[test]
    fn reclaim_frees_without_running() {
        let drops = Arc::new(AtomicUsize::new(0));
        let runs = Arc::new(AtomicUsize::new(0));
        let (t, r) = (Tracked(drops.clone()), runs.clone());
        let (p, handle) = into_raw(move || {
            let _keep = &t;
            r.fetch_add(1, Ordering::SeqCst);
        });
        // SAFETY: `p` came from `into_raw`, was never run, and is reclaimed once, here.
        unsafe { reclaim(p) };
        assert_eq!(runs.load(Ordering::SeqCst), 0);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert_eq!(handle.state(), HostFnState::Pending);
    }

    #[test]
    fn a_capturing_stream_refuses_a_host_function_and_frees_it_unrun() {
        let device = crate::Device::for_unit_tests(0);
        // SAFETY: a null (default) stream wrapper of a unit-test device; the test makes no HIP call
        // through it (the refusal comes first).
        let stream = unsafe { Stream::from_raw(&device, std::ptr::null_mut()) };
        stream
            .handle()
            .capture_for_unit_tests(Some(Arc::new(crate::stream::CaptureLog::default())));
        let drops = Arc::new(AtomicUsize::new(0));
        let runs = Arc::new(AtomicUsize::new(0));
        let (t, r) = (Tracked(drops.clone()), runs.clone());
        let e = stream
            .launch_host_fn(move || {
                let _keep = &t;
                r.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap_err();
        match &e {
            crate::Error::InvalidArgument { value, reason, .. } => {
                assert_eq!(value, "launch_host_fn");
                assert!(reason.contains("cannot be captured"), "{e}");
            }
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
        assert_eq!(runs.load(Ordering::SeqCst), 0);
        assert_eq!(
            drops.load(Ordering::SeqCst),
            1,
            "the closure is dropped, unrun"
        );
        stream.handle().capture_for_unit_tests(None);
    }

    #[test]
    fn runs_on_another_thread_like_hip() {
        let (p, handle) = into_raw(|| ());
        let p = p as usize; // raw pointers are not Send; HIP hands it to its own thread the same way
        std::thread::spawn(move || {
            // SAFETY: `p` came from `into_raw` and is run once, here on another thread (the payload is
            // Send).
            unsafe { run_raw(p as *mut c_void) }
        })
        .join()
        .unwrap();
        assert_eq!(handle.state(), HostFnState::Done);
    }
}
