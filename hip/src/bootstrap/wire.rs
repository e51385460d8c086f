//! The rendezvous protocol's messages, each read and written within a deadline.
//!
//! A rank other than 0 connects to rank 0 and says hello: `HIPRSRV1`, its world size and rank (u32 LE),
//! the key (u32 LE length, UTF-8). Rank 0 answers with one reply: the blob (tag 0, u32 length, bytes),
//! a failure (tag 1), or "retry" (tag 3: this listener is closing; connect again). After a blob the rank
//! confirms (one byte, [`ACK`]), and rank 0 answers once more: commit (tag 2: every rank has the blob) or a
//! failure. A rank returns the blob only after the commit, so when one rank is lost mid-exchange, no rank
//! goes on into a communicator setup that would wait for it forever.

use crate::error::RendezvousFailure;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const MAGIC: &[u8; 8] = b"HIPRSRV1";
/// The longest key accepted.
pub(super) const MAX_KEY: usize = 4096;
/// The largest blob accepted (RCCL's id is 128 bytes).
pub(super) const MAX_BLOB: usize = 1 << 20;
/// A rank's confirmation that it holds the blob.
const ACK: u8 = 0xAC;

/// A rank's first message.
pub(super) struct Hello {
    pub world: usize,
    pub rank: usize,
    pub key: String,
}

/// Rank 0's answers.
pub(super) enum Reply {
    Blob(Vec<u8>),
    Fail(RendezvousFailure),
    Commit,
    Retry,
}

/// Why a read failed.
pub(super) enum ReadError {
    /// The deadline passed.
    Timeout,
    /// The peer closed the connection or it was reset.
    Closed(String),
    /// Bytes that are not this protocol.
    Garbage(String),
}

fn read_exact(s: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> Result<(), ReadError> {
    let mut done = 0;
    while done < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ReadError::Timeout);
        }
        // A zero timeout means "none" to the OS: `left` is never zero here.
        let _ = s.set_read_timeout(Some(left.max(Duration::from_millis(1))));
        match s.read(&mut buf[done..]) {
            Ok(0) => return Err(ReadError::Closed("connection closed".into())),
            Ok(n) => done += n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(ReadError::Closed(e.to_string())),
        }
    }
    Ok(())
}

fn read_u32(s: &mut TcpStream, deadline: Instant) -> Result<u32, ReadError> {
    let mut b = [0; 4];
    read_exact(s, &mut b, deadline)?;
    Ok(u32::from_le_bytes(b))
}

fn read_u64(s: &mut TcpStream, deadline: Instant) -> Result<u64, ReadError> {
    let mut b = [0; 8];
    read_exact(s, &mut b, deadline)?;
    Ok(u64::from_le_bytes(b))
}

fn read_bytes(s: &mut TcpStream, max: usize, deadline: Instant) -> Result<Vec<u8>, ReadError> {
    let n = read_u32(s, deadline)? as usize;
    if n > max {
        return Err(ReadError::Garbage(format!(
            "a length of {n} bytes (at most {max})"
        )));
    }
    let mut v = vec![0; n];
    read_exact(s, &mut v, deadline)?;
    Ok(v)
}

fn read_string(s: &mut TcpStream, max: usize, deadline: Instant) -> Result<String, ReadError> {
    String::from_utf8(read_bytes(s, max, deadline)?)
        .map_err(|_| ReadError::Garbage("text that is not UTF-8".into()))
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

fn write_all(s: &mut TcpStream, bytes: &[u8], deadline: Instant) -> std::io::Result<()> {
    let left = deadline.saturating_duration_since(Instant::now());
    s.set_write_timeout(Some(left.max(Duration::from_millis(1))))?;
    s.write_all(bytes)?;
    s.flush()
}

pub(super) fn write_hello(s: &mut TcpStream, h: &Hello, deadline: Instant) -> std::io::Result<()> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&(h.world as u32).to_le_bytes());
    out.extend_from_slice(&(h.rank as u32).to_le_bytes());
    put_bytes(&mut out, h.key.as_bytes());
    write_all(s, &out, deadline)
}

pub(super) fn read_hello(s: &mut TcpStream, deadline: Instant) -> Result<Hello, ReadError> {
    let mut magic = [0; 8];
    read_exact(s, &mut magic, deadline)?;
    if &magic != MAGIC {
        return Err(ReadError::Garbage(format!(
            "a peer that does not speak this rendezvous (first bytes {magic:02x?})"
        )));
    }
    let world = read_u32(s, deadline)? as usize;
    let rank = read_u32(s, deadline)? as usize;
    let key = read_string(s, MAX_KEY, deadline)?;
    Ok(Hello { world, rank, key })
}

pub(super) fn write_ack(s: &mut TcpStream, deadline: Instant) -> std::io::Result<()> {
    write_all(s, &[ACK], deadline)
}

pub(super) fn read_ack(s: &mut TcpStream, deadline: Instant) -> Result<(), ReadError> {
    let mut b = [0];
    read_exact(s, &mut b, deadline)?;
    if b[0] == ACK {
        Ok(())
    } else {
        Err(ReadError::Garbage(format!(
            "{:#04x} instead of a confirmation",
            b[0]
        )))
    }
}

pub(super) fn write_reply(s: &mut TcpStream, r: &Reply, deadline: Instant) -> std::io::Result<()> {
    let mut out = Vec::new();
    match r {
        Reply::Blob(b) => {
            out.push(0);
            put_bytes(&mut out, b);
        }
        Reply::Fail(f) => {
            out.push(1);
            encode_failure(&mut out, f);
        }
        Reply::Commit => out.push(2),
        Reply::Retry => out.push(3),
    }
    write_all(s, &out, deadline)
}

pub(super) fn read_reply(s: &mut TcpStream, deadline: Instant) -> Result<Reply, ReadError> {
    let mut tag = [0];
    read_exact(s, &mut tag, deadline)?;
    match tag[0] {
        0 => Ok(Reply::Blob(read_bytes(s, MAX_BLOB, deadline)?)),
        1 => Ok(Reply::Fail(decode_failure(s, deadline)?)),
        2 => Ok(Reply::Commit),
        3 => Ok(Reply::Retry),
        t => Err(ReadError::Garbage(format!("reply tag {t}"))),
    }
}

/// A failure as kind, three numbers, a list of numbers and a text.
fn encode_failure(out: &mut Vec<u8>, f: &RendezvousFailure) {
    let none = Vec::new();
    let (kind, a, b, c, list, text): (u8, u64, u64, u64, &Vec<usize>, &str) = match f {
        RendezvousFailure::Timeout {
            waited,
            missing,
            waiting_for,
        } => (1, waited.as_millis() as u64, 0, 0, missing, waiting_for),
        RendezvousFailure::WorldSizeMismatch { rank, theirs, ours } => {
            (2, *rank as u64, *theirs as u64, *ours as u64, &none, "")
        }
        RendezvousFailure::DuplicateRank { rank } => (3, *rank as u64, 0, 0, &none, ""),
        RendezvousFailure::AddressInUse { detail } => (4, 0, 0, 0, &none, detail),
        RendezvousFailure::Unreachable { detail } => (5, 0, 0, 0, &none, detail),
        RendezvousFailure::PeerLost { rank, detail } => {
            (6, rank.map_or(0, |r| r as u64 + 1), 0, 0, &none, detail)
        }
        RendezvousFailure::Protocol { detail } => (7, 0, 0, 0, &none, detail),
    };
    out.push(kind);
    for v in [a, b, c] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&(list.len() as u32).to_le_bytes());
    for &v in list {
        out.extend_from_slice(&(v as u64).to_le_bytes());
    }
    put_bytes(out, text.as_bytes());
}

fn decode_failure(s: &mut TcpStream, deadline: Instant) -> Result<RendezvousFailure, ReadError> {
    let mut kind = [0];
    read_exact(s, &mut kind, deadline)?;
    let (a, b, c) = (
        read_u64(s, deadline)?,
        read_u64(s, deadline)?,
        read_u64(s, deadline)?,
    );
    let n = read_u32(s, deadline)? as usize;
    if n > 1 << 20 {
        return Err(ReadError::Garbage(format!("a list of {n} ranks")));
    }
    let mut list = Vec::with_capacity(n);
    for _ in 0..n {
        list.push(read_u64(s, deadline)? as usize);
    }
    let text = read_string(s, MAX_BLOB, deadline)?;
    Ok(match kind[0] {
        1 => RendezvousFailure::Timeout {
            waited: Duration::from_millis(a),
            missing: list,
            waiting_for: text,
        },
        2 => RendezvousFailure::WorldSizeMismatch {
            rank: a as usize,
            theirs: b as usize,
            ours: c as usize,
        },
        3 => RendezvousFailure::DuplicateRank { rank: a as usize },
        4 => RendezvousFailure::AddressInUse { detail: text },
        5 => RendezvousFailure::Unreachable { detail: text },
        6 => RendezvousFailure::PeerLost {
            rank: a.checked_sub(1).map(|r| r as usize),
            detail: text,
        },
        7 => RendezvousFailure::Protocol { detail: text },
        k => return Err(ReadError::Garbage(format!("failure kind {k}"))),
    })
}
