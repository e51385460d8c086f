//! The side of every rank but 0: connect to rank 0 (again, while it is not up yet), fetch the blob of a
//! key, confirm, and wait for the commit.

use super::wire::{self, Hello, ReadError, Reply};
use crate::error::RendezvousFailure;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// What went wrong on the last try, for the failure at the deadline.
enum Last {
    /// No connection was ever made.
    NoConnection(String),
    /// Rank 0 accepted, then closed before answering (it may have been restarting, or died).
    Dropped(String),
}

/// Fetch `hello.key`'s blob from rank 0 at `host:port`, by `deadline`.
pub(super) fn fetch(
    host: &str,
    port: u16,
    hello: &Hello,
    start: Instant,
    deadline: Instant,
) -> Result<Vec<u8>, RendezvousFailure> {
    let mut last = Last::NoConnection("no attempt".into());
    // Rank 0 once accepted and then went away: the reason at the deadline, whatever came after.
    let mut dropped = None;
    let mut pause = Duration::from_millis(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(match dropped.map_or(last, Last::Dropped) {
                Last::NoConnection(e) => RendezvousFailure::Unreachable {
                    detail: format!("no connection within {:?}; last error: {e}", start.elapsed()),
                },
                Last::Dropped(e) => RendezvousFailure::PeerLost {
                    rank: Some(0),
                    detail: format!(
                        "rank 0 accepted and then closed the connection ({e}), and did not answer again \
                         within {:?}",
                        start.elapsed()
                    ),
                },
            });
        }
        let addrs: Vec<SocketAddr> = (host, port)
            .to_socket_addrs()
            .map_err(|e| RendezvousFailure::Unreachable {
                detail: format!("cannot resolve {host}: {e}"),
            })?
            .collect();
        let mut stream = None;
        for a in &addrs {
            match TcpStream::connect_timeout(a, left.min(Duration::from_secs(5))) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = Last::NoConnection(format!("{a}: {e}")),
            }
        }
        if let Some(mut s) = stream {
            let _ = s.set_nodelay(true);
            match exchange(&mut s, hello, start, deadline) {
                Ok(Some(blob)) => return Ok(blob),
                Ok(None) => {}
                Err(Attempt::Failed(f)) => return Err(f),
                Err(Attempt::Dropped(e)) => dropped = Some(e),
            }
        }
        std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
        pause = (pause * 2).min(Duration::from_millis(200));
    }
}

enum Attempt {
    /// The exchange failed for good.
    Failed(RendezvousFailure),
    /// The connection closed before rank 0 answered: try again.
    Dropped(String),
}

/// One connection's exchange. `Ok(None)`: rank 0 said to connect again.
fn exchange(
    s: &mut TcpStream,
    hello: &Hello,
    start: Instant,
    deadline: Instant,
) -> Result<Option<Vec<u8>>, Attempt> {
    let timeout = |waiting_for: &str| {
        Attempt::Failed(RendezvousFailure::Timeout {
            waited: start.elapsed(),
            missing: Vec::new(),
            waiting_for: waiting_for.into(),
        })
    };
    let garbage = |detail: String| Attempt::Failed(RendezvousFailure::Protocol { detail });
    if let Err(e) = wire::write_hello(s, hello, deadline) {
        return Err(Attempt::Dropped(e.to_string()));
    }
    let blob = match wire::read_reply(s, deadline) {
        Ok(Reply::Blob(b)) => b,
        Ok(Reply::Retry) => return Ok(None),
        Ok(Reply::Fail(f)) => return Err(Attempt::Failed(f)),
        Ok(Reply::Commit) => return Err(garbage("a commit before the id".into())),
        Err(ReadError::Timeout) => return Err(timeout(
            "rank 0 to hand out the id (rank 0 waits for it to be made; is every rank running?)",
        )),
        Err(ReadError::Closed(e)) => return Err(Attempt::Dropped(e)),
        Err(ReadError::Garbage(d)) => return Err(garbage(d)),
    };
    let lost = |detail: String| {
        Attempt::Failed(RendezvousFailure::PeerLost {
            rank: Some(0),
            detail,
        })
    };
    wire::write_ack(s, deadline).map_err(|e| lost(e.to_string()))?;
    match wire::read_reply(s, deadline) {
        Ok(Reply::Commit) => Ok(Some(blob)),
        Ok(Reply::Fail(f)) => Err(Attempt::Failed(f)),
        Ok(_) => Err(garbage("a reply other than commit after the id".into())),
        Err(ReadError::Timeout) => Err(timeout("every other rank to confirm the id")),
        Err(ReadError::Closed(e)) => Err(lost(format!(
            "rank 0 closed the connection before every rank confirmed: {e}"
        ))),
        Err(ReadError::Garbage(d)) => Err(garbage(d)),
    }
}
