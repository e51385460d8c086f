//! What a handle keeps between calls so that a repeated call costs no more host work than the raw C
//! call: the `_bufferSize` answers per call and shape, and the `info` buffers of dropped [`Info`]s.
//!
//! [`Info`]: super::Info

use crate::memory::DeviceBuffer;
use std::os::raw::c_int;
use std::sync::Mutex;

/// The shape of a `_bufferSize` query: the function's name (one per call and element type) and every
/// size and mode it takes. Pointers are not part of it: no backend's answer depends on them (rocSOLVER
/// and cuSOLVER size the workspace from the sizes and modes alone).
#[derive(Clone, Copy, Debug, Eq)]
pub(super) struct QueryKey {
    call: &'static str,
    shape: [i64; 8],
}

impl PartialEq for QueryKey {
    /// The names compared by address first: a hit is the same `&'static` name (one per call and element
    /// type), so it costs no string comparison.
    fn eq(&self, other: &QueryKey) -> bool {
        // Every place compared at once (no early exit, no `memcmp` call): a hit compares them all anyway.
        let differ = (self.shape.iter().zip(&other.shape)).fold(0, |d, (a, b)| d | (a ^ b));
        differ == 0 && (std::ptr::eq(self.call, other.call) || self.call == other.call)
    }
}

impl QueryKey {
    /// The query of `call` for the sizes and modes in `shape` (unused places 0).
    pub(super) fn new<const N: usize>(call: &'static str, shape: [i64; N]) -> QueryKey {
        let mut all = [0i64; 8];
        all[..N].copy_from_slice(&shape);
        QueryKey { call, shape: all }
    }
}

/// The answers of the last [`QUERIES`] distinct queries, most recent first.
#[derive(Default)]
pub(super) struct Queries(Vec<(QueryKey, c_int)>);

/// How many answers a handle keeps: more distinct shapes than this in a loop ask the library again.
const QUERIES: usize = 16;

impl Queries {
    /// The kept answer for `key`, moved to the front.
    pub(super) fn get(&mut self, key: &QueryKey) -> Option<c_int> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        let answer = self.0[i].1;
        if i > 0 {
            let hit = self.0.remove(i);
            self.0.insert(0, hit);
        }
        Some(answer)
    }

    /// Keep `answer` for `key`, forgetting the least recently used answer past [`QUERIES`].
    pub(super) fn put(&mut self, key: QueryKey, answer: c_int) {
        self.0.truncate(QUERIES - 1);
        self.0.insert(0, (key, answer));
    }
}

/// `info` buffers of dropped [`Info`](super::Info)s, for the next calls of the handle. A buffer comes
/// back with its record in the memory model: the next call that writes it waits for whatever last read
/// it (a `to_vec_future`, a kernel), exactly as for any reused buffer.
#[derive(Default)]
pub(super) struct InfoPool(Mutex<Vec<DeviceBuffer<i32>>>);

/// How many buffers a pool keeps; more are freed (in stream order) as they come back.
const KEPT: usize = 16;

impl InfoPool {
    /// A kept buffer of exactly `len` ints, if one is there.
    pub(super) fn take(&self, len: usize) -> Option<DeviceBuffer<i32>> {
        let mut kept = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let i = kept.iter().rposition(|b| b.len() == len)?;
        Some(kept.swap_remove(i))
    }

    /// Keep `buffer` for a later call (freed instead when the pool is full). No HIP call: safe inside a
    /// host function.
    pub(super) fn put(&self, buffer: DeviceBuffer<i32>) {
        let mut kept = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() < KEPT {
            kept.push(buffer);
            return;
        }
        drop(kept);
        drop(buffer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_answer_is_kept_per_call_and_shape() {
        let mut q = Queries::default();
        let a = QueryKey::new("hipsolverDpotrf", [122, 8, 8]);
        let b = QueryKey::new("hipsolverDpotrf", [122, 8, 9]);
        let c = QueryKey::new("hipsolverSpotrf", [122, 8, 8]);
        assert_eq!(q.get(&a), None);
        q.put(a, 7);
        assert_eq!(q.get(&a), Some(7));
        assert_eq!(
            q.get(&b),
            None,
            "another leading dimension is another query"
        );
        assert_eq!(q.get(&c), None, "another function is another query");
        q.put(b, 9);
        assert_eq!((q.get(&a), q.get(&b)), (Some(7), Some(9)));
    }

    #[test]
    fn the_least_recently_used_answer_goes_first() {
        let mut q = Queries::default();
        let key = |n| QueryKey::new("hipsolverDgetrf", [n, n, n]);
        for n in 0..QUERIES as i64 {
            q.put(key(n), n as c_int);
        }
        // Touch the oldest: the second oldest is now the one to go.
        assert_eq!(q.get(&key(0)), Some(0));
        q.put(key(100), 100);
        assert_eq!(q.get(&key(1)), None);
        assert_eq!(q.get(&key(0)), Some(0));
        assert_eq!(q.get(&key(100)), Some(100));
        assert_eq!(q.0.len(), QUERIES);
    }

    #[test]
    fn keys_differ_in_every_place() {
        let base = QueryKey::new("x", [1, 2, 3, 4, 5, 6, 7, 8]);
        for i in 0..8 {
            let mut s = [1, 2, 3, 4, 5, 6, 7, 8];
            s[i] += 1;
            assert_ne!(QueryKey::new("x", s), base, "place {i}");
        }
        assert_eq!(QueryKey::new("x", [1, 2]), QueryKey::new("x", [1, 2, 0]));
    }
}
