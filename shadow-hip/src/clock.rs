//! Vector clocks: one component per participant (a host thread, a stream's worker, a replayed graph node).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};

/// A participant's id (host threads, streams and graph nodes share one numbering).
pub type Pid = u32;

static NEXT_PID: AtomicU32 = AtomicU32::new(1);

/// A fresh participant id.
pub fn new_pid() -> Pid {
    NEXT_PID.fetch_add(1, Ordering::Relaxed)
}

/// A vector clock: absent components are 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Clock(BTreeMap<Pid, u64>);

impl Clock {
    /// Join `other` into `self` (componentwise maximum).
    pub fn join(&mut self, other: &Clock) {
        for (&p, &v) in &other.0 {
            let e = self.0.entry(p).or_insert(0);
            if *e < v {
                *e = v;
            }
        }
    }

    /// Set component `p` to `v` (at least its current value).
    pub fn set(&mut self, p: Pid, v: u64) {
        let e = self.0.entry(p).or_insert(0);
        if *e < v {
            *e = v;
        }
    }

    /// Component `p`.
    pub fn get(&self, p: Pid) -> u64 {
        self.0.get(&p).copied().unwrap_or(0)
    }

    /// Increment component `p`, returning the new value.
    pub fn tick(&mut self, p: Pid) -> u64 {
        let e = self.0.entry(p).or_insert(0);
        *e += 1;
        *e
    }

    /// Whether `self` happened before (or is) `other`: every component at most `other`'s.
    pub fn le(&self, other: &Clock) -> bool {
        self.0.iter().all(|(p, &v)| other.get(*p) >= v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_concurrency() {
        let (a, b) = (new_pid(), new_pid());
        let mut x = Clock::default();
        x.tick(a);
        let mut y = x.clone();
        y.tick(b);
        assert!(x.le(&y) && !y.le(&x));
        let mut z = Clock::default();
        z.tick(b);
        z.tick(b);
        assert!(!x.le(&z) && !z.le(&x));
        z.join(&x);
        assert!(x.le(&z));
    }
}
