//! A free loopback port for the rendezvous tests: the unit tests' (`tests.rs`) and those between
//! processes (tests/bootstrap.rs, which includes this file).
//!
//! `bind(0)` hands out a port of the kernel's ephemeral range, the range every outgoing `connect` also
//! draws its local port from. Between a test's pick and its rank 0's listen, a connection made by a test
//! running beside it can take that port, and rank 0 then fails ("cannot listen on the port": seen once
//! in CI, 2026-12-08). No connection is ever given a port below the range, so the pick comes from the
//! ports just under it: each call steps to one this process has not tried yet (from an offset of its
//! pid) and keeps the first that binds.
use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};

/// How many ports under the ephemeral range the picks come from.
const SPAN: u32 = 8192;

/// A port nothing listens on now and no outgoing connection can take meanwhile.
pub(crate) fn free_port() -> u16 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u32>().ok())
        .filter(|&low| (SPAN + 1024..=65535).contains(&low));
    if let Some(low) = low {
        let start = std::process::id() % SPAN;
        for _ in 0..SPAN {
            let step = NEXT.fetch_add(1, Ordering::Relaxed);
            // In [low - SPAN, low): at least 1024, at most 65534.
            let port = (low - SPAN + (start + step) % SPAN) as u16;
            if TcpListener::bind(("127.0.0.1", port)).is_ok() {
                return port;
            }
        }
    }
    // No such range to stay under (not Linux, or a range starting low): the kernel's pick.
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
