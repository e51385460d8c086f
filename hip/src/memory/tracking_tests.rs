//! Unit tests of the memory model's bookkeeping (`Users`): which streams an operation waits for, and
//! what it leaves recorded. Run under Miri too (scripts/miri.sh).

use super::*;

#[derive(Clone, Debug, PartialEq)]
struct S(u64);
impl StreamKey for S {
    fn key(&self) -> u64 {
        self.0
    }
}
fn keys(v: Vec<S>) -> Vec<u64> {
    v.into_iter().map(|s| s.0).collect()
}
use Access::*;

/// Apply one operation as `use_on` does: the waits it needs, then the new state.
fn op(u: &mut Users<S>, s: u64, a: Access) -> Vec<u64> {
    let w = keys(u.conflicts(s, a));
    u.record(&S(s), a);
    w
}

#[test]
fn one_stream_never_waits_and_is_the_sole_user() {
    let mut u = Users::default();
    assert_eq!(u.sole(), 0);
    for a in [Write, Read, Read, Write, Read] {
        assert!(op(&mut u, 7, a).is_empty());
        assert_eq!(u.sole(), 7);
    }
}

#[test]
fn read_after_write_waits_for_the_writer_once() {
    let mut u = Users::default();
    op(&mut u, 1, Write);
    assert_eq!(op(&mut u, 2, Read), [1]);
    assert_eq!(u.sole(), 0);
    // Stream 2 is ordered after the write now: reading again needs nothing.
    assert!(op(&mut u, 2, Read).is_empty());
    // A third reader waits for the writer only, not for the other reader.
    assert_eq!(op(&mut u, 3, Read), [1]);
    assert!(op(&mut u, 1, Read).is_empty());
}

#[test]
fn write_after_reads_waits_for_every_reader_and_the_writer() {
    let mut u = Users::default();
    op(&mut u, 1, Write);
    op(&mut u, 2, Read);
    op(&mut u, 3, Read);
    let mut w = op(&mut u, 4, Write);
    w.sort();
    assert_eq!(w, [1, 2, 3]);
    assert_eq!(u.sole(), 4);
    // The writer's own stream never waits for itself, but does for the other readers.
    op(&mut u, 5, Read);
    assert_eq!(op(&mut u, 4, Write), [5]);
}

#[test]
fn write_after_write_waits_and_reads_after_reads_do_not() {
    let mut u = Users::default();
    op(&mut u, 1, Write);
    assert_eq!(op(&mut u, 2, Write), [1]);
    assert_eq!(op(&mut u, 1, Write), [2]);
    let mut r = Users::default();
    op(&mut r, 1, Read);
    assert!(op(&mut r, 2, Read).is_empty());
    assert_eq!(r.sole(), 0);
    let mut w = op(&mut r, 3, Write);
    w.sort();
    assert_eq!(w, [1, 2]);
}

#[test]
fn a_reader_that_also_writes_is_listed_once() {
    let mut u = Users::default();
    op(&mut u, 1, Write);
    op(&mut u, 2, Read);
    op(&mut u, 1, Read);
    assert_eq!(keys(u.all()), [1, 2]);
    assert_eq!(op(&mut u, 3, Write), [1, 2]);
}

fn snapshot(u: &Users<S>) -> (Option<u64>, Vec<u64>) {
    (u.writer.as_ref().map(|w| w.0), keys(u.readers.clone()))
}

/// The fast paths skip `conflicts` and `record` when `sole()` names the stream, or for a read when
/// `reads_free` holds: that is only right if, then, there is nothing to wait for and nothing to record. Checked over random operation
/// sequences on a few streams, host accesses included.
#[test]
fn the_sole_stream_never_waits_and_never_changes_the_state() {
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut fast = 0;
    // Miri interprets every step: fewer sequences there, the same checks.
    let runs = if cfg!(miri) { 20 } else { 200 };
    for _ in 0..runs {
        let mut u = Users::default();
        for _ in 0..50 {
            let r = next();
            let s = 1 + r % 3;
            let a = if r >> 8 & 1 == 0 { Read } else { Write };
            if (r >> 9) % 8 == 0 {
                u.host_done(a);
                continue;
            }
            if u.sole() == s || (a == Read && u.reads_free(s)) {
                fast += 1;
                let before = snapshot(&u);
                assert!(u.conflicts(s, a).is_empty(), "{before:?} {s} {a:?}");
                u.record(&S(s), a);
                assert_eq!(snapshot(&u), before, "stream {s} {a:?}");
            } else {
                op(&mut u, s, a);
            }
        }
    }
    assert!(fast > runs * 5, "the fast path was taken {fast} times");
}

#[test]
fn reads_are_free_for_the_last_writer_and_for_streams_already_reading() {
    let mut u = Users::default();
    assert!(!u.reads_free(1));
    u.record(&S(1), Write);
    assert!(u.reads_free(1) && !u.reads_free(2));
    u.record(&S(2), Read);
    assert!(u.reads_free(1) && u.reads_free(2) && !u.reads_free(3));
    u.record(&S(3), Write);
    assert!(!u.reads_free(1) && !u.reads_free(2) && u.reads_free(3));
    u.host_done(Write);
    assert!(!u.reads_free(3));
}

#[test]
fn a_reader_alone_is_not_the_sole_user_because_its_write_must_be_recorded() {
    let mut u = Users::default();
    op(&mut u, 1, Write);
    u.host_done(Read); // the write is over: no writer, no readers
    op(&mut u, 2, Read);
    assert_eq!(u.sole(), 0);
    assert!(op(&mut u, 2, Write).is_empty());
    assert_eq!(u.sole(), 2);
    assert_eq!(op(&mut u, 3, Read), [2]);
}

#[test]
fn an_allocation_of_no_memory_frees_nothing_and_says_what_it_is() {
    // A null address means nothing was allocated: whatever release was asked, nothing is freed (the
    // drop at the end of this test must not reach HIP, which has no device here).
    let a = Allocation::new(
        std::ptr::null_mut(),
        &Device::for_unit_tests(3),
        Release::Free,
    );
    assert!(matches!(a.release, Release::Nothing));
    assert!(!a.is_stream_ordered());
    assert_eq!(a.device().ordinal(), 3);
    assert_eq!(format!("{a:?}"), "Allocation { ptr: 0x0, device: 3 }");
}

#[test]
fn host_reads_wait_for_the_writer_and_host_writes_for_all() {
    let mut u = Users::default();
    op(&mut u, 1, Write);
    op(&mut u, 2, Read);
    assert_eq!(keys(u.host_conflicts(Read)), [1]);
    u.host_done(Read);
    // The writer is done; the reader may still run.
    assert!(u.host_conflicts(Read).is_empty());
    assert_eq!(keys(u.host_conflicts(Write)), [2]);
    assert!(op(&mut u, 3, Read).is_empty());
    u.host_done(Write);
    assert!(u.all().is_empty());
    assert_eq!(u.sole(), 0);
}
