//! The memory model's bookkeeping, without HIP: which streams may still use an allocation and up to
//! which label ([`Users`]), and the fast path's packed (stream, label) words. Pure data, tested on the
//! CPU and under Miri (`memory::tracking::tests`); [`super::tracking`] drives it with HIP.

use std::sync::atomic::{AtomicU64, Ordering};

pub use crate::queue::Access;

/// Something the memory model can tell apart from other streams by a process-unique id.
pub(crate) trait StreamKey: Clone {
    fn key(&self) -> u64;
}

/// One stream's use: the stream, and the label of its last such use ([`OPEN`]: whatever it has queued
/// when someone waits).
#[derive(Clone, Debug)]
pub(crate) struct Use<S> {
    pub(crate) stream: S,
    pub(crate) pos: u64,
}

/// The streams that may still use an allocation: the last write, and the reads since it (the writer's
/// own later reads among them, for a later writer elsewhere to wait for).
///
/// A stream is in `readers` only after it was ordered after `writer` (or when there was none), and the
/// readers are cleared at every write: so a stream listed as a reader needs no further wait to read.
#[derive(Debug)]
pub(crate) struct Users<S> {
    pub(super) writer: Option<Use<S>>,
    pub(super) readers: Vec<Use<S>>,
}

impl<S> Default for Users<S> {
    fn default() -> Self {
        Users {
            writer: None,
            readers: Vec::new(),
        }
    }
}

/// Later of two labels, [`OPEN`] being the latest.
fn later(a: u64, b: u64) -> u64 {
    a.max(b)
}

impl<S: StreamKey> Users<S> {
    /// Call `wait` once for each (stream, label) that stream `s` must wait for before an `access`, the
    /// latest label per stream. Stops at the first error.
    pub(crate) fn for_each_conflict<E>(
        &self,
        s: u64,
        access: Access,
        mut wait: impl FnMut(&S, u64) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let writer = self.writer.as_ref().filter(|w| w.stream.key() != s);
        match access {
            Access::Read => {
                if self.readers.iter().any(|r| r.stream.key() == s) {
                    return Ok(());
                }
                writer.map_or(Ok(()), |w| wait(&w.stream, w.pos))
            }
            Access::Write => {
                // The writer's stream once, at the later of its write and its reads since.
                let writer_key = self.writer.as_ref().map(|w| w.stream.key());
                if let Some(w) = writer {
                    let read = self
                        .readers
                        .iter()
                        .find(|r| r.stream.key() == w.stream.key())
                        .map_or(0, |r| r.pos);
                    wait(&w.stream, later(w.pos, read))?;
                }
                for r in &self.readers {
                    if r.stream.key() != s && Some(r.stream.key()) != writer_key {
                        wait(&r.stream, r.pos)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// The (stream, label) pairs stream `s` must wait for before an `access`.
    #[cfg(test)]
    pub(crate) fn conflicts(&self, s: u64, access: Access) -> Vec<(S, u64)> {
        let mut all = Vec::new();
        let _ = self.for_each_conflict(s, access, |c, pos| {
            all.push((c.clone(), pos));
            Ok::<(), ()>(())
        });
        all
    }

    /// Record that `s`, now ordered after its conflicts, makes `access` at label `pos`.
    pub(crate) fn record(&mut self, s: &S, pos: u64, access: Access) {
        match access {
            Access::Read => {
                let k = s.key();
                match self.readers.iter_mut().find(|r| r.stream.key() == k) {
                    Some(r) => r.pos = later(r.pos, pos),
                    None => self.readers.push(Use {
                        stream: s.clone(),
                        pos,
                    }),
                }
            }
            Access::Write => {
                self.writer = Some(Use {
                    stream: s.clone(),
                    pos,
                });
                self.readers.clear();
            }
        }
    }

    /// Fold a fast-path write stamp: stream `id`, the sole user, wrote at `pos`.
    pub(crate) fn stamp_write(&mut self, id: u64, pos: u64) {
        if let Some(w) = self.writer.as_mut().filter(|w| w.stream.key() == id) {
            w.pos = later(w.pos, pos);
        }
    }

    /// Fold a fast-path read stamp: stream `id`, whose reads are free, read at `pos`.
    pub(crate) fn stamp_read(&mut self, id: u64, pos: u64) {
        let known = self
            .readers
            .iter()
            .chain(self.writer.iter())
            .find(|u| u.stream.key() == id)
            .map(|u| u.stream.clone());
        if let Some(s) = known {
            self.record(&s, pos, Access::Read);
        }
    }

    /// The uses the host must wait for before an `access` of its own.
    pub(crate) fn host_conflicts(&self, access: Access) -> Vec<(S, u64)> {
        match access {
            Access::Read => self
                .writer
                .iter()
                .map(|w| (w.stream.clone(), w.pos))
                .collect(),
            Access::Write => self.all(),
        }
    }

    /// The host waited for its conflicts: those uses are over.
    pub(crate) fn host_done(&mut self, access: Access) {
        self.writer = None;
        if access == Access::Write {
            self.readers.clear();
        }
    }

    /// Drop the uses known complete (`done` answers per stream): nobody needs to wait for them.
    pub(crate) fn forget_done(&mut self, done: impl Fn(&S, u64) -> bool) {
        if self.writer.as_ref().is_some_and(|w| done(&w.stream, w.pos)) {
            self.writer = None;
        }
        self.readers.retain(|r| !done(&r.stream, r.pos));
    }

    /// Whether a read by stream `s` needs no wait: `s` wrote last or already reads. Its label, if so.
    pub(crate) fn reads_free(&self, s: u64) -> Option<u64> {
        let w = self.writer.as_ref().filter(|w| w.stream.key() == s);
        let r = self.readers.iter().find(|r| r.stream.key() == s);
        match (w, r) {
            (None, None) => None,
            (w, r) => Some(later(w.map_or(0, |w| w.pos), r.map_or(0, |r| r.pos))),
        }
    }

    /// Every use, the latest label per stream.
    pub(crate) fn all(&self) -> Vec<(S, u64)> {
        let mut all: Vec<(S, u64)> = Vec::new();
        for c in self.writer.iter().chain(&self.readers) {
            match all.iter_mut().find(|a| a.0.key() == c.stream.key()) {
                Some(a) => a.1 = later(a.1, c.pos),
                None => all.push((c.stream.clone(), c.pos)),
            }
        }
        all
    }

    /// The stream whose writes need no wait (the use fast path) and its write label: the last writer,
    /// when no other stream read since.
    pub(crate) fn sole(&self) -> Option<(u64, u64)> {
        let w = self.writer.as_ref()?;
        let k = w.stream.key();
        self.readers
            .iter()
            .all(|r| r.stream.key() == k)
            .then_some((k, w.pos))
    }
}

/// The fast path's words: a stream id and a label packed in one `u64` (0: none), so one
/// compare-and-swap moves a stamp forward only while the word still names that stream.
pub(super) const POS_BITS: u32 = 40;
pub(super) const POS_MASK: u64 = (1 << POS_BITS) - 1;

/// Pack (stream, label); 0 (no fast path: the slow path handles it) when either does not fit.
pub(super) fn pack(id: u64, pos: u64) -> u64 {
    if id == 0 || id >> (64 - POS_BITS) != 0 || pos > POS_MASK {
        0
    } else {
        id << POS_BITS | pos
    }
}

pub(super) fn unpack(word: u64) -> (u64, u64) {
    (word >> POS_BITS, word & POS_MASK)
}

/// The fast path: if `word` names stream `id`, move its label to `label` and answer `true` (nothing to
/// wait for, nothing else to record). Only the slow path changes the word to another stream, swapping it
/// out first, and one stream's operations are serialized by its gate: a failed exchange means the slow
/// path took the word, and the caller must take the slow path too.
#[inline]
pub(super) fn try_stamp(word: &AtomicU64, id: u64, label: u64) -> bool {
    let v = word.load(Ordering::Acquire);
    let new = pack(id, label);
    v >> POS_BITS == id
        && new != 0
        && word
            .compare_exchange(v, new, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
}

impl<S: StreamKey> Users<S> {
    /// Fold the fast-path words into the uses, taking them (0 is left): see [`try_stamp`].
    pub(crate) fn fold(&mut self, sole: &AtomicU64, reader: &AtomicU64) {
        let (id, pos) = unpack(sole.swap(0, Ordering::AcqRel));
        if id != 0 {
            self.stamp_write(id, pos);
        }
        let (id, pos) = unpack(reader.swap(0, Ordering::AcqRel));
        if id != 0 {
            self.stamp_read(id, pos);
        }
    }

    /// The fast-path words for the uses as they now stand (0: none); `user` just used the memory (its
    /// reads may be free).
    pub(crate) fn words(&self, user: Option<u64>) -> (u64, u64) {
        let sole = self.sole().map_or(0, |(id, pos)| pack(id, pos));
        let reader = user
            .and_then(|id| self.reads_free(id).map(|pos| pack(id, pos)))
            .unwrap_or(0);
        (sole, reader)
    }
}
