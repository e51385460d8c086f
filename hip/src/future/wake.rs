//! Which mechanism wakes the futures created from now on: the completion reactor (`reactor.rs`, the
//! default) or a waiting thread per stream (`waiter.rs`). Chosen at run time, so one process can measure
//! both (`examples/futures_bench.rs` alternates them); `HIP_RS_FUTURE_WAKE=reactor|thread` sets the
//! starting choice, read once.

use std::sync::atomic::{AtomicU8, Ordering};

/// How a pending future learns that its work is done. See the [module docs](super) ("How a future
/// wakes") for what each costs.
///
/// ```
/// use hip::future::{set_wake, wake, Wake};
///
/// set_wake(Wake::Reactor); // futures created from now on use the reactor (where the device allows)
/// assert_eq!(wake(), Wake::Reactor);
/// set_wake(Wake::Thread);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wake {
    /// One waiting thread per stream with pending futures: it polls each future's event with
    /// `hipEventQuery` for up to 50 us, then sleeps in `hipEventSynchronize` (blocking-sync events).
    Thread,
    /// The completion reactor: the stream writes a ticket into a pinned, device-mapped slot
    /// (`hipStreamWriteValue64`) right after the awaited work, and one scanner thread for the process
    /// reads the slots of every pending future, spinning while a completion is expected soon, backing
    /// off and sleeping otherwise, and asleep on a condition variable while nothing is pending. Where
    /// the device has no 64-bit stream memory operations (or the write is refused), a future falls back
    /// to [`Wake::Thread`].
    Reactor,
}

const UNSET: u8 = 0;
const THREAD: u8 = 1;
const REACTOR: u8 = 2;

static CHOICE: AtomicU8 = AtomicU8::new(UNSET);

/// Parse `HIP_RS_FUTURE_WAKE`'s value: `reactor` or `thread` (any case); anything else is the default,
/// the reactor (measured ahead of the waiting thread in every futures row on an H100, issue 56).
pub(crate) fn parse(value: Option<&str>) -> Wake {
    match value.map(str::to_ascii_lowercase).as_deref() {
        Some("thread") => Wake::Thread,
        _ => Wake::Reactor,
    }
}

fn code(w: Wake) -> u8 {
    match w {
        Wake::Thread => THREAD,
        Wake::Reactor => REACTOR,
    }
}

/// The mechanism futures created now use: the last [`set_wake`], else `HIP_RS_FUTURE_WAKE` (`reactor`
/// or `thread`; read on the first call), else [`Wake::Reactor`].
///
/// ```
/// let w = hip::future::wake();
/// assert!(matches!(w, hip::future::Wake::Thread | hip::future::Wake::Reactor));
/// ```
pub fn wake() -> Wake {
    match CHOICE.load(Ordering::Relaxed) {
        THREAD => Wake::Thread,
        REACTOR => Wake::Reactor,
        _ => {
            let w = parse(std::env::var("HIP_RS_FUTURE_WAKE").ok().as_deref());
            // Another thread's `set_wake` meanwhile wins.
            let _ = CHOICE.compare_exchange(UNSET, code(w), Ordering::Relaxed, Ordering::Relaxed);
            wake()
        }
    }
}

/// Choose the mechanism for futures created from now on; pending futures keep theirs. Both may be in
/// use at once (each future is woken by the one it was created with).
///
/// ```
/// hip::future::set_wake(hip::future::Wake::Thread);
/// assert_eq!(hip::future::wake(), hip::future::Wake::Thread);
/// ```
pub fn set_wake(w: Wake) {
    CHOICE.store(code(w), Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_value_picks_the_mechanism() {
        assert_eq!(parse(Some("reactor")), Wake::Reactor);
        assert_eq!(parse(Some("REACTOR")), Wake::Reactor);
        assert_eq!(parse(Some("thread")), Wake::Thread);
        assert_eq!(parse(Some("THREAD")), Wake::Thread);
        assert_eq!(parse(Some("other")), Wake::Reactor);
        assert_eq!(parse(None), Wake::Reactor);
    }
}
