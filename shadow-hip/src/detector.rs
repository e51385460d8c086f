//! The happens-before race detector: every byte range an operation reads or writes is logged with the
//! operation's vector clock; two overlapping accesses, at least one a write (a free counts as a write),
//! whose clocks are unordered, are a report.

use crate::clock::Clock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How an operation touches memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
    /// The memory is freed (or handed back to a pool): nothing may still be using it.
    Free,
}

struct Access {
    start: usize,
    end: usize,
    kind: Kind,
    clock: Clock,
    what: Arc<str>,
}

/// Accesses kept per allocation; beyond it the oldest half is forgotten (a race with those is missed).
const MAX_PER_BLOCK: usize = 4096;
/// Report texts kept (all are counted).
const MAX_TEXTS: usize = 64;

#[derive(Default)]
struct Detector {
    /// Per allocation (keyed by its base address): every access logged.
    blocks: HashMap<usize, Vec<Access>>,
    count: usize,
    texts: Vec<String>,
}

static DETECTOR: Mutex<Option<Detector>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Detector) -> R) -> R {
    let mut g = DETECTOR.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Detector::default))
}

fn name(k: Kind) -> &'static str {
    match k {
        Kind::Read => "read",
        Kind::Write => "write",
        Kind::Free => "free",
    }
}

/// Log an access of `[start, start + len)` inside the allocation at `block`, and report every logged
/// access it conflicts with that is not ordered with it.
pub fn access(block: usize, start: usize, len: usize, kind: Kind, clock: &Clock, what: &Arc<str>) {
    if len == 0 {
        return;
    }
    let end = start + len;
    let mut new_reports = Vec::new();
    with(|d| {
        let log = d.blocks.entry(block).or_default();
        for a in log.iter() {
            let overlap = a.start < end && start < a.end;
            let conflict = kind != Kind::Read || a.kind != Kind::Read;
            if overlap && conflict && !a.clock.le(clock) && !clock.le(&a.clock) {
                let (lo, hi) = (a.start.max(start), a.end.min(end));
                new_reports.push(format!(
                    "race on [{lo:#x}, {hi:#x}) ({} bytes): {} by {} is not ordered with {} by {}",
                    hi - lo,
                    name(a.kind),
                    a.what,
                    name(kind),
                    what
                ));
            }
        }
        if log.len() >= MAX_PER_BLOCK {
            log.drain(..MAX_PER_BLOCK / 2);
        }
        log.push(Access {
            start,
            end,
            kind,
            clock: clock.clone(),
            what: what.clone(),
        });
        for r in new_reports {
            d.add(r);
        }
    });
}

impl Detector {
    fn add(&mut self, r: String) {
        if self.count < 20 {
            eprintln!("hip-rs shadow: {r}");
        }
        self.count += 1;
        if self.texts.len() < MAX_TEXTS {
            self.texts.push(r);
        }
    }
}

/// Report what is wrong other than a race (a HIP call made inside a host function).
pub fn report(r: String) {
    with(|d| d.add(r));
}

/// How many reports so far.
pub fn reports() -> usize {
    with(|d| d.count)
}

/// The reports kept, one a line.
pub fn report_text() -> String {
    with(|d| d.texts.join("\n"))
}

/// Forget every access and report.
pub fn reset() {
    with(|d| *d = Detector::default());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::new_pid;

    /// The rules on clocks of two participants: unordered conflicting accesses are reported, ordered
    /// ones and reads of reads are not, and a free counts as a write. (One test: the detector is global.)
    #[test]
    fn reports_exactly_the_unordered_conflicts() {
        let (a, b) = (new_pid(), new_pid());
        let what: Arc<str> = "test".into();
        let mut ca = Clock::default();
        ca.tick(a);
        let mut cb = Clock::default();
        cb.tick(b);
        let mut after_a = cb.clone();
        after_a.join(&ca);
        let before = reports();
        let block = 0x1000;
        access(block, 0x1000, 64, Kind::Write, &ca, &what);
        access(block, 0x1000, 64, Kind::Read, &after_a, &what); // ordered after: no report
        assert_eq!(reports(), before);
        access(block, 0x1040, 64, Kind::Write, &cb, &what); // unordered, but disjoint
        assert_eq!(reports(), before);
        access(block, 0x1020, 8, Kind::Read, &cb, &what); // unordered with A's write
        assert_eq!(reports(), before + 1);
        let block = 0x9000;
        access(block, 0x9000, 16, Kind::Read, &ca, &what);
        access(block, 0x9000, 16, Kind::Read, &cb, &what); // two reads: no conflict
        assert_eq!(reports(), before + 1);
        access(block, 0x9008, 1, Kind::Free, &cb, &what); // a free under an unordered read
        assert_eq!(reports(), before + 2);
        assert!(report_text().contains("free by test"));
    }
}
