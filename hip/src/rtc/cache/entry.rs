//! The on-disk entry format: magic, payload length, payload checksum, then the payload; and the hash used
//! for file names and checksums.

use super::{CacheOutcome, Key, HEADER_LEN, MAGIC};
use crate::rtc::CompiledProgram;

/// An entry: magic, payload length, payload checksum, then the payload (key, code, log, lowered names).
pub(super) fn encode(key: &Key, program: &CompiledProgram) -> Vec<u8> {
    let mut p = Writer(Vec::with_capacity(
        key.bytes.len() + program.code.len() + program.log.len() + 64,
    ));
    p.bytes(&key.bytes);
    p.bytes(&program.code);
    p.str(&program.log);
    p.u64(program.lowered_names.len() as u64);
    for (expr, lowered) in &program.lowered_names {
        p.str(expr);
        p.str(lowered);
    }
    let mut out = Vec::with_capacity(HEADER_LEN + p.0.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(p.0.len() as u64).to_le_bytes());
    out.extend_from_slice(&hash64(&p.0, CHECKSUM_SEED).to_le_bytes());
    out.extend_from_slice(&p.0);
    out
}

pub(super) enum Decoded {
    Entry(CompiledProgram),
    OtherKey,
    Damaged,
}

pub(super) fn decode(bytes: &[u8], key: &Key) -> Decoded {
    let Some(payload) = checked_payload(bytes) else {
        return Decoded::Damaged;
    };
    let mut r = Reader(payload);
    let parsed = (|| {
        if r.bytes()? != key.bytes.as_slice() {
            return Some(None);
        }
        let code = r.bytes()?.to_vec();
        let log = r.string()?;
        let count = r.u64()?;
        let mut lowered_names = Vec::new();
        for _ in 0..count {
            lowered_names.push((r.string()?, r.string()?));
        }
        r.0.is_empty().then_some(Some(CompiledProgram {
            code,
            log,
            lowered_names,
            cache_outcome: CacheOutcome::Hit,
        }))
    })();
    match parsed {
        Some(Some(program)) => Decoded::Entry(program),
        Some(None) => Decoded::OtherKey,
        None => Decoded::Damaged,
    }
}

/// The payload of an entry whose magic, length and checksum are right.
fn checked_payload(bytes: &[u8]) -> Option<&[u8]> {
    let (header, payload) = bytes.split_at_checked(HEADER_LEN)?;
    let word = |i: usize| u64::from_le_bytes(header[i..i + 8].try_into().unwrap());
    (&header[..8] == MAGIC
        && word(8) == payload.len() as u64
        && word(16) == hash64(payload, CHECKSUM_SEED))
    .then_some(payload)
}

pub(super) struct Writer(pub(super) Vec<u8>);

impl Writer {
    pub(super) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    pub(super) fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn u64(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_le_bytes(*head))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.u64()?).ok()?;
        let (head, rest) = self.0.split_at_checked(len)?;
        self.0 = rest;
        Some(head)
    }
    fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }
}

const CHECKSUM_SEED: u64 = 0x2545_f491_4f6c_dd1d;

/// A 64-bit hash, eight bytes a step: a multiply-xor mix per word and a final avalanche (the
/// `splitmix64` finaliser). Used for file names and entry checksums, never for security: a collision
/// can only cost a recompile, because entries are compared by their full key.
pub(super) fn hash64(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xff51_afd7_ed55_8ccd;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().unwrap());
        h = (h ^ w.wrapping_mul(M)).rotate_left(29).wrapping_mul(M);
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h ^ u64::from_le_bytes(tail).wrapping_mul(M)).rotate_left(29);
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}
