//! Rank 0's side of the rendezvous: a listener on `MASTER_PORT`, one thread per connected rank, and the
//! per-key state they share with [`Server::publish`].

use super::wire::{self, Hello, ReadError, Reply};
use crate::error::RendezvousFailure;
use std::collections::{BTreeSet, HashMap};
use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One key's exchange, as rank 0 sees it.
#[derive(Default)]
struct Entry {
    /// Set by [`Server::publish`].
    blob: Option<Arc<Vec<u8>>>,
    /// Ranks connected for this key.
    arrived: BTreeSet<usize>,
    /// Ranks that confirmed they hold the blob.
    acked: BTreeSet<usize>,
    /// The first failure: every rank of the key gets it.
    failure: Option<RendezvousFailure>,
    /// Every rank confirmed: the exchange is done.
    committed: bool,
    /// Ranks told of the failure, or lost: rank 0 waits for all the others to be told before it returns.
    told: BTreeSet<usize>,
    /// Ranks whose commit was written (or could not be): rank 0 returns the blob only after all of
    /// them, since its process may exit right after, and a commit not yet written then reaches its
    /// rank as a closed connection, a lost rank 0, while every other rank went on.
    commit_written: BTreeSet<usize>,
}

#[derive(Default)]
struct State {
    /// The listener is closing: ranks still waiting for a blob are told to connect again.
    closed: bool,
    keys: HashMap<String, Entry>,
}

struct Shared {
    world: usize,
    timeout: Duration,
    state: Mutex<State>,
    cv: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait on the condition variable until `deadline` at the latest.
    fn wait<'a>(&self, g: MutexGuard<'a, State>, deadline: Instant) -> MutexGuard<'a, State> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self
            .cv
            .wait_timeout(g, left.min(Duration::from_millis(200)))
        {
            Ok((g, _)) => g,
            Err(e) => e.into_inner().0,
        }
    }

    /// Record the first failure of `key` and wake everyone.
    fn fail(&self, key: &str, f: RendezvousFailure) {
        let mut st = self.lock();
        let e = st.keys.entry(key.to_string()).or_default();
        if !e.committed && e.failure.is_none() {
            e.failure = Some(f);
        }
        self.cv.notify_all();
    }
}

impl Shared {
    /// `rank` knows that `key` failed (or is lost itself).
    fn told(&self, key: &str, rank: usize) {
        if let Some(e) = self.lock().keys.get_mut(key) {
            e.told.insert(rank);
        }
        self.cv.notify_all();
    }

    /// `rank`'s commit of `key` is written.
    fn commit_written(&self, key: &str, rank: usize) {
        if let Some(e) = self.lock().keys.get_mut(key) {
            e.commit_written.insert(rank);
        }
        self.cv.notify_all();
    }
}

/// Rank 0's listener; dropping it stops accepting and tells waiting ranks to connect again.
pub(super) struct Server {
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

/// Where rank 0 listens for `host`: the loopback address itself when `host` is one (tests, one machine),
/// else every interface of the family `host` resolves to (what torchrun's store does: `host` may name
/// this machine by an address it cannot bind, such as Debian's `127.0.1.1` hostname entry).
fn bind_addr(host: &str, port: u16) -> Result<SocketAddr, RendezvousFailure> {
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| RendezvousFailure::Unreachable {
            detail: format!("cannot resolve {host}: {e}"),
        })?
        .collect();
    if let Some(a) = addrs.iter().find(|a| a.ip().is_loopback()) {
        return Ok(*a);
    }
    let ip = if addrs.iter().all(|a| a.is_ipv6()) && !addrs.is_empty() {
        IpAddr::V6(Ipv6Addr::UNSPECIFIED)
    } else {
        IpAddr::V4(Ipv4Addr::UNSPECIFIED)
    };
    Ok(SocketAddr::new(ip, port))
}

impl Server {
    /// Listen on `host:port` for a world of `world` ranks; each connection waits at most `timeout`.
    pub(super) fn bind(
        host: &str,
        port: u16,
        world: usize,
        timeout: Duration,
    ) -> Result<Server, RendezvousFailure> {
        let addr = bind_addr(host, port)?;
        let listener = TcpListener::bind(addr).map_err(|e| {
            if e.kind() == ErrorKind::AddrInUse {
                RendezvousFailure::AddressInUse {
                    detail: format!("{addr}: {e}"),
                }
            } else {
                RendezvousFailure::Unreachable {
                    detail: format!("cannot listen on {addr}: {e}"),
                }
            }
        })?;
        listener
            .set_nonblocking(true)
            .map_err(|e| RendezvousFailure::Unreachable {
                detail: format!("cannot listen on {addr}: {e}"),
            })?;
        let shared = Arc::new(Shared {
            world,
            timeout,
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (sh, st) = (shared.clone(), stop.clone());
        let accept = std::thread::Builder::new()
            .name("hip-rendezvous".into())
            .spawn(move || accept_loop(listener, sh, st))
            .map_err(|e| RendezvousFailure::Unreachable {
                detail: format!("cannot start the listening thread: {e}"),
            })?;
        Ok(Server {
            shared,
            stop,
            accept: Some(accept),
        })
    }

    /// How many ranks' commits of `key` are written.
    #[cfg(test)]
    pub(super) fn commits_written(&self, key: &str) -> usize {
        self.shared
            .lock()
            .keys
            .get(key)
            .map_or(0, |e| e.commit_written.len())
    }

    /// Fail `key` on every rank waiting for it (rank 0 could not make its blob).
    pub(super) fn abandon(&self, key: &str, f: RendezvousFailure) {
        self.shared.fail(key, f);
    }

    /// Hand `blob` to every rank asking for `key`, and wait until all `world - 1` of them confirmed
    /// (then every rank is told to go on), a failure, or `deadline`. `Ok(false)`: `key` was published
    /// before.
    pub(super) fn publish(
        &self,
        key: &str,
        blob: Vec<u8>,
        deadline: Instant,
        start: Instant,
    ) -> Result<bool, RendezvousFailure> {
        let sh = &*self.shared;
        let mut st = sh.lock();
        let e = st.keys.entry(key.to_string()).or_default();
        if e.blob.is_some() {
            return Ok(false);
        }
        e.blob = Some(Arc::new(blob));
        sh.cv.notify_all();
        loop {
            let others: Vec<String> = st
                .keys
                .iter()
                .filter(|(k, e)| k.as_str() != key && !e.arrived.is_empty() && !e.committed)
                .map(|(k, e)| format!("{k:?} by ranks {:?}", e.arrived))
                .collect();
            let Some(e) = st.keys.get_mut(key) else {
                return Err(RendezvousFailure::Protocol {
                    detail: "the key's state vanished".into(),
                });
            };
            if e.committed {
                // Every rank holds the blob; return once each one's commit is written (or the
                // deadline: a rank that went away since cannot be waited for).
                if e.commit_written.len() + 1 >= sh.world || Instant::now() >= deadline {
                    return Ok(true);
                }
                st = sh.wait(st, deadline);
                continue;
            }
            if let Some(f) = &e.failure {
                // Stay until every rank has been told why (its own connection may come later), within
                // the deadline: a rank that connects after rank 0 went away would only learn "unreachable".
                if e.told.len() + 1 >= sh.world || Instant::now() >= deadline {
                    return Err(f.clone());
                }
                st = sh.wait(st, deadline);
                continue;
            }
            if e.acked.len() + 1 >= sh.world {
                e.committed = true;
                sh.cv.notify_all();
                continue;
            }
            if Instant::now() >= deadline {
                let mut waiting_for = "every rank to fetch and confirm the id".to_string();
                if !others.is_empty() {
                    waiting_for += &format!(
                        " (other keys are asked for: {}; every rank must set up its communicators in \
                         the same order)",
                        others.join(", ")
                    );
                }
                let f = RendezvousFailure::Timeout {
                    waited: start.elapsed(),
                    missing: (1..sh.world).filter(|r| !e.acked.contains(r)).collect(),
                    waiting_for,
                };
                e.failure = Some(f.clone());
                sh.cv.notify_all();
                return Err(f);
            }
            st = sh.wait(st, deadline);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.shared.lock().closed = true;
        self.shared.cv.notify_all();
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((s, _)) => {
                let sh = shared.clone();
                // A connection whose thread cannot start is dropped: that rank connects again.
                let _ = std::thread::Builder::new()
                    .name("hip-rendezvous-rank".into())
                    .spawn(move || serve(&sh, s));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// One connected rank, from its hello to its commit.
fn serve(sh: &Shared, mut s: TcpStream) {
    let start = Instant::now();
    let deadline = start + sh.timeout;
    let _ = s.set_nonblocking(false);
    let _ = s.set_nodelay(true);
    let reply = |s: &mut TcpStream, r: Reply| {
        let _ = wire::write_reply(s, &r, Instant::now() + Duration::from_secs(5));
    };
    // A failure reply to `rank`, counted as told.
    let tell = |s: &mut TcpStream, key: &str, rank: usize, f: RendezvousFailure| {
        let _ = wire::write_reply(s, &Reply::Fail(f), Instant::now() + Duration::from_secs(5));
        sh.told(key, rank);
    };
    let hello = match wire::read_hello(&mut s, deadline) {
        Ok(h) => h,
        Err(ReadError::Garbage(detail)) => {
            return reply(&mut s, Reply::Fail(RendezvousFailure::Protocol { detail }))
        }
        Err(_) => return, // a connection that said nothing: no rank to blame
    };
    let Hello { world, rank, key } = hello;
    if world != sh.world {
        let f = RendezvousFailure::WorldSizeMismatch {
            rank,
            theirs: world,
            ours: sh.world,
        };
        sh.fail(&key, f.clone());
        return tell(&mut s, &key, rank, f);
    }
    if rank == 0 || rank >= world {
        let f = RendezvousFailure::DuplicateRank { rank };
        sh.fail(&key, f.clone());
        return tell(&mut s, &key, rank, f);
    }
    // Wait for the blob.
    let blob = {
        let mut st = sh.lock();
        let e = st.keys.entry(key.clone()).or_default();
        if e.committed {
            drop(st);
            let detail = format!("key {key:?} was completed already without this rank: a rank set up more communicators than rank 0, or its process was restarted");
            return reply(&mut s, Reply::Fail(RendezvousFailure::Protocol { detail }));
        }
        if e.failure.is_none() && !e.arrived.insert(rank) {
            e.failure = Some(RendezvousFailure::DuplicateRank { rank });
            sh.cv.notify_all();
        }
        loop {
            let closed = st.closed;
            let Some(e) = st.keys.get_mut(&key) else {
                return;
            };
            if let Some(f) = e.failure.clone() {
                drop(st);
                return tell(&mut s, &key, rank, f);
            }
            if let Some(b) = &e.blob {
                break b.clone();
            }
            if closed || Instant::now() >= deadline {
                e.arrived.remove(&rank);
                drop(st);
                let r = if closed {
                    Reply::Retry
                } else {
                    Reply::Fail(RendezvousFailure::Timeout {
                        waited: start.elapsed(),
                        missing: Vec::new(),
                        waiting_for: format!("rank 0 to set up key {key:?}"),
                    })
                };
                return reply(&mut s, r);
            }
            st = sh.wait(st, deadline);
        }
    };
    // Hand it out and wait for the confirmation.
    let sent = wire::write_reply(&mut s, &Reply::Blob(blob.to_vec()), deadline)
        .map_err(|e| e.to_string())
        .and_then(|()| {
            wire::read_ack(&mut s, deadline).map_err(|e| match e {
                ReadError::Timeout => "no confirmation before the timeout".to_string(),
                ReadError::Closed(d) | ReadError::Garbage(d) => d,
            })
        });
    if let Err(detail) = sent {
        sh.fail(
            &key,
            RendezvousFailure::PeerLost {
                rank: Some(rank),
                detail,
            },
        );
        return sh.told(&key, rank);
    }
    let mut st = sh.lock();
    if let Some(e) = st.keys.get_mut(&key) {
        e.acked.insert(rank);
    }
    sh.cv.notify_all();
    // Wait for every other rank's confirmation.
    loop {
        let Some(e) = st.keys.get(&key) else {
            return;
        };
        if e.committed {
            drop(st);
            reply(&mut s, Reply::Commit);
            return sh.commit_written(&key, rank);
        }
        if let Some(f) = e.failure.clone() {
            drop(st);
            return tell(&mut s, &key, rank, f);
        }
        if Instant::now() >= deadline {
            drop(st);
            let f = RendezvousFailure::Timeout {
                waited: start.elapsed(),
                missing: Vec::new(),
                waiting_for: "every other rank to confirm".into(),
            };
            return reply(&mut s, Reply::Fail(f));
        }
        st = sh.wait(st, deadline);
    }
}
