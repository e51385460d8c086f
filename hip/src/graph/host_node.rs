//! A host node's closure, owned by its graph and run by HIP at every replay (`hipGraphAddHostNode` in a
//! [`GraphBuilder`](crate::GraphBuilder), `hipLaunchHostFunc` in a [`Capture`](crate::Capture)): the one
//! pointer HIP is handed, the function HIP calls, and the handle that counts the runs.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What a host node's one pointer names, owned by the graph (kept until its last executable graph is
/// dropped and done): the closure, and how its runs ended.
pub(crate) struct HostNode {
    f: Box<dyn Fn() + Send + Sync>,
    runs: Arc<Runs>,
}

/// How a host node's runs ended, shared by the node and its handles.
#[derive(Default)]
struct Runs {
    ended: AtomicU64,
    panics: AtomicU64,
    last_panic: Mutex<Option<String>>,
}

/// How the runs of a host node ([`GraphBuilder::host`](crate::GraphBuilder::host),
/// [`Capture::host`](crate::Capture::host)) went. It does not hold the closure, which the
/// graph drops with itself.
#[derive(Clone)]
pub struct HostNodeHandle {
    runs: Arc<Runs>,
}

impl std::fmt::Debug for HostNodeHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostNodeHandle")
            .field("runs", &self.runs())
            .field("panics", &self.panics())
            .finish()
    }
}

impl HostNode {
    /// The node for `f`, and the handle counting its runs.
    pub(crate) fn new<F: Fn() + Send + Sync + 'static>(f: F) -> (Arc<HostNode>, HostNodeHandle) {
        let runs = Arc::new(Runs::default());
        let node = Arc::new(HostNode {
            f: Box::new(f),
            runs: runs.clone(),
        });
        (node, HostNodeHandle { runs })
    }
}

impl HostNodeHandle {
    /// How many runs of the closure have ended (returned or panicked), over every replay of every
    /// executable graph made from the builder.
    pub fn runs(&self) -> u64 {
        self.runs.ended.load(Ordering::Acquire)
    }

    /// How many of those runs panicked (each panic is caught: the graph goes on).
    pub fn panics(&self) -> u64 {
        self.runs.panics.load(Ordering::Acquire)
    }

    /// The last panic's message, if a run panicked.
    pub fn last_panic(&self) -> Option<String> {
        self.runs
            .last_panic
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// The function HIP calls for a host node: runs the closure `p` names, catching a panic.
///
/// # Safety
/// `p` is `Arc::as_ptr` of a `HostNode` the graph keeps alive while any of its replays can run.
pub(crate) unsafe extern "C" fn run_host_node(p: *mut c_void) {
    let _inside = crate::release::InsideHostFn::enter();
    // SAFETY: the caller's contract: a live `HostNode`, only read here (its counters are atomics and its
    // message a mutex), so concurrent replays on several runtime threads are fine.
    let node = unsafe { &*(p as *const HostNode) };
    if let Err(e) = catch_unwind(AssertUnwindSafe(|| (node.f)())) {
        let msg = crate::host_fn::panic_message(&e);
        // Dropping the payload could itself panic: never let that unwind into HIP.
        let _ = catch_unwind(AssertUnwindSafe(move || drop(e)));
        *node
            .runs
            .last_panic
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(msg);
        node.runs.panics.fetch_add(1, Ordering::AcqRel);
    }
    node.runs.ended.fetch_add(1, Ordering::AcqRel);
}
