//! Unit tests of the memory model's bookkeeping (`Users` and the fast-path words): which streams and
//! labels an operation waits for, and what it leaves recorded. Run under Miri too (scripts/miri.sh).

use super::*;
use crate::memory::users::{pack, unpack, POS_MASK};
use std::cell::Cell;

#[derive(Clone, Debug, PartialEq)]
struct S(u64);
impl StreamKey for S {
    fn key(&self) -> u64 {
        self.0
    }
}
fn keys(v: Vec<(S, u64)>) -> Vec<u64> {
    v.into_iter().map(|s| s.0 .0).collect()
}
use Access::*;

thread_local!(static LABEL: Cell<u64> = const { Cell::new(0) });

/// The next label (one counter for every stream: labels only need to grow per stream).
fn next_label() -> u64 {
    LABEL.with(|l| {
        l.set(l.get() + 1);
        l.get()
    })
}

/// Apply one operation as `use_on` does: the waits it needs (streams only), then the new state.
fn op(u: &mut Users<S>, s: u64, a: Access) -> Vec<u64> {
    op_at(u, s, a).0
}

/// As `op`, also giving the labels waited for and the operation's own label.
fn op_at(u: &mut Users<S>, s: u64, a: Access) -> (Vec<u64>, Vec<u64>, u64) {
    let c = u.conflicts(s, a);
    let label = next_label();
    u.record(&S(s), label, a);
    (
        c.iter().map(|c| c.0 .0).collect(),
        c.iter().map(|c| c.1).collect(),
        label,
    )
}

fn sole(u: &Users<S>) -> u64 {
    u.sole().map_or(0, |(s, _)| s)
}

#[test]
fn one_stream_never_waits_and_is_the_sole_user() {
    let mut u = Users::default();
    assert_eq!(sole(&u), 0);
    for a in [Write, Read, Read, Write, Read] {
        assert!(op(&mut u, 7, a).is_empty());
        assert_eq!(sole(&u), 7);
    }
}

#[test]
fn read_after_write_waits_for_the_writer_once() {
    let mut u = Users::default();
    op(&mut u, 1, Write);
    assert_eq!(op(&mut u, 2, Read), [1]);
    assert_eq!(sole(&u), 0);
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
    assert_eq!(sole(&u), 4);
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
    assert_eq!(sole(&r), 0);
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

/// (stream, label) of the writer and of each reader.
type Snapshot = (Option<(u64, u64)>, Vec<(u64, u64)>);

fn snapshot(u: &Users<S>) -> Snapshot {
    (
        u.writer.as_ref().map(|w| (w.stream.0, w.pos)),
        u.readers.iter().map(|r| (r.stream.0, r.pos)).collect(),
    )
}

/// The fast paths skip `conflicts` and `record` when the write word names the stream (`sole`), or for a
/// read when the read word does (`reads_free`), and leave a stamp that the slow path folds in later:
/// that is only right if, then, there is nothing to wait for, and folding the stamp leaves exactly what
/// `record` would have. Checked over random operation sequences on a few streams, host accesses and
/// completed work included.
#[test]
fn the_fast_paths_never_wait_and_their_stamps_fold_into_what_record_leaves() {
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
            match (r >> 9) % 16 {
                0 | 1 => {
                    u.host_done(a);
                    continue;
                }
                2 => {
                    // Everything up to a recent label completed.
                    let upto = LABEL.with(|l| l.get()).saturating_sub(r >> 13 & 3);
                    u.forget_done(|_, pos| pos <= upto);
                    continue;
                }
                _ => {}
            }
            let free = match a {
                Write => sole(&u) == s,
                Read => u.reads_free(s).is_some(),
            };
            if free {
                fast += 1;
                assert!(u.conflicts(s, a).is_empty(), "{:?} {s} {a:?}", snapshot(&u));
                let label = next_label();
                let mut folded = Users {
                    writer: u.writer.clone(),
                    readers: u.readers.clone(),
                };
                match a {
                    Write => folded.stamp_write(s, label),
                    Read => folded.stamp_read(s, label),
                }
                u.record(&S(s), label, a);
                if a == Read {
                    assert_eq!(snapshot(&folded), snapshot(&u), "stream {s} {a:?}");
                } else {
                    // A fast write leaves the readers (all the writer's own) as they were: the next slow
                    // path folds them with an earlier label, which waits no longer than the write.
                    assert_eq!(snapshot(&folded).0, snapshot(&u).0, "stream {s} {a:?}");
                    assert!(folded
                        .readers
                        .iter()
                        .all(|r| r.stream.0 == s && r.pos <= label));
                }
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
    assert!(u.reads_free(1).is_none());
    u.record(&S(1), 10, Write);
    assert_eq!(u.reads_free(1), Some(10));
    assert!(u.reads_free(2).is_none());
    u.record(&S(2), 4, Read);
    assert_eq!((u.reads_free(1), u.reads_free(2)), (Some(10), Some(4)));
    assert!(u.reads_free(3).is_none());
    u.record(&S(3), 7, Write);
    assert!(u.reads_free(1).is_none() && u.reads_free(2).is_none());
    assert_eq!(u.reads_free(3), Some(7));
    u.host_done(Write);
    assert!(u.reads_free(3).is_none());
}

#[test]
fn a_reader_alone_is_not_the_sole_user_because_its_write_must_be_recorded() {
    let mut u = Users::default();
    op(&mut u, 1, Write);
    u.host_done(Read); // the write is over: no writer, no readers
    op(&mut u, 2, Read);
    assert_eq!(sole(&u), 0);
    assert!(op(&mut u, 2, Write).is_empty());
    assert_eq!(sole(&u), 2);
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
    assert!(!a.access_is_granted_per_allocation());
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
    assert_eq!(sole(&u), 0);
}

#[test]
fn a_consumer_waits_for_the_producing_use_not_for_later_work() {
    // Stream 1 writes (label w), then reads the same memory in a slow kernel (label r): a reader on
    // stream 2 waits for the write only; a writer on stream 3 waits for the read too.
    let mut u = Users::default();
    let (_, _, w) = op_at(&mut u, 1, Write);
    let (_, _, r) = op_at(&mut u, 1, Read);
    assert!(r > w);
    let (streams, labels, _) = op_at(&mut u, 2, Read);
    assert_eq!((streams, labels), (vec![1], vec![w]));
    let (mut waits, _, _) = op_at(&mut u, 3, Write);
    waits.sort();
    assert_eq!(waits, [1, 2]);
    let mut u = Users::default();
    op_at(&mut u, 1, Write);
    let (_, _, r) = op_at(&mut u, 1, Read);
    let (streams, labels, _) = op_at(&mut u, 3, Write);
    assert_eq!((streams, labels), (vec![1], vec![r]));
}

#[test]
fn uses_known_complete_are_never_waited_for() {
    let mut u = Users::default();
    let (_, _, w) = op_at(&mut u, 1, Write);
    op_at(&mut u, 2, Read);
    let (_, _, r3) = op_at(&mut u, 3, Read);
    // The host learnt that stream 1 finished its write and stream 2 its read; stream 3's read is later.
    u.forget_done(|s, pos| s.0 != 3 && pos <= w + 1);
    assert!(u.conflicts(4, Read).is_empty());
    let c = u.conflicts(4, Write);
    assert_eq!(keys(c.clone()), [3]);
    assert_eq!(c[0].1, r3);
    assert!(u.host_conflicts(Read).is_empty());
}

#[test]
fn open_uses_are_waited_for_and_never_complete_by_label() {
    let mut u = Users::default();
    u.record(&S(1), OPEN, Write);
    assert_eq!(u.conflicts(2, Read)[0].1, OPEN);
    u.forget_done(|_, pos| pos != OPEN && pos <= 1_000_000);
    assert_eq!(keys(u.conflicts(2, Read)), [1]);
    // An open use never packs into a fast-path word: the stream's next use takes the slow path.
    assert_eq!(u.words(Some(1)), (0, 0));
}

#[test]
fn labels_and_streams_pack_into_one_word_or_not_at_all() {
    assert_eq!(unpack(pack(5, 77)), (5, 77));
    assert_eq!(
        unpack(pack((1 << 24) - 1, POS_MASK)),
        ((1 << 24) - 1, POS_MASK)
    );
    assert_eq!(
        pack(1 << 24, 1),
        0,
        "a stream id past 24 bits takes the slow path"
    );
    assert_eq!(
        pack(1, POS_MASK + 1),
        0,
        "a label past 40 bits takes the slow path"
    );
    assert_eq!(pack(0, 1), 0);
}

/// The two orders of a fast stamp and a slow fold, step by step: a stamp made before the fold is folded
/// in; one tried after it fails, so its operation takes the slow path (and records there).
#[test]
fn a_stamp_is_folded_or_refused_never_lost() {
    let mut u = Users::default();
    u.record(&S(1), 1, Write);
    let (sole_w, read_w) = u.words(Some(1));
    let (sole, reader) = (AtomicU64::new(sole_w), AtomicU64::new(read_w));
    // Stamp first, fold second.
    assert!(try_stamp(&sole, 1, 2));
    u.fold(&sole, &reader);
    assert_eq!(snapshot(&u).0, Some((1, 2)));
    assert_eq!(
        (sole.load(Ordering::Relaxed), reader.load(Ordering::Relaxed)),
        (0, 0)
    );
    // Words published again; stream 1 loads the word, the slow path (stream 2 reads) folds it away in
    // between, and stream 1's exchange fails.
    let (sw, rw) = u.words(Some(1));
    sole.store(sw, Ordering::Relaxed);
    reader.store(rw, Ordering::Relaxed);
    let seen = sole.load(Ordering::Acquire);
    u.fold(&sole, &reader);
    op(&mut u, 2, Read);
    let (sw, rw) = u.words(Some(2));
    sole.store(sw, Ordering::Relaxed);
    reader.store(rw, Ordering::Relaxed);
    assert_eq!(sw, 0, "two streams use it: no sole writer");
    assert!(sole
        .compare_exchange(seen, pack(1, 3), Ordering::AcqRel, Ordering::Acquire)
        .is_err());
    assert!(!try_stamp(&sole, 1, 3));
    // The slow path then sees stream 2's read and records stream 1's write after it.
    assert_eq!(keys(u.conflicts(1, Write)), [2]);
}

/// Real threads: one stream stamps through the fast path (falling back to the slow path, under the lock,
/// when its stamp is refused) while another thread keeps folding and reading from a second stream. No
/// label of the first stream is lost: at the end the uses hold its last one.
#[test]
fn stamps_racing_folds_lose_no_use() {
    use std::sync::Mutex;
    let rounds: u64 = if cfg!(miri) { 200 } else { 20_000 };
    let users = Mutex::new(Users::<S>::default());
    let sole = AtomicU64::new(0);
    let reader = AtomicU64::new(0);
    lock(&users).record(&S(1), 1, Write);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for label in 2..=rounds {
                if !try_stamp(&sole, 1, label) {
                    let mut u = lock(&users);
                    u.fold(&sole, &reader);
                    u.record(&S(1), label, Write);
                    let (sw, _) = u.words(Some(1));
                    sole.store(sw, Ordering::Release);
                }
            }
        });
        scope.spawn(|| {
            for label in 1..=rounds / 4 {
                let mut u = lock(&users);
                u.fold(&sole, &reader);
                // A reader on stream 2, ordered after the write, then done (as a host wait would).
                u.record(&S(2), label, Read);
                u.readers.retain(|r| r.stream.0 != 2);
                let (sw, _) = u.words(None);
                sole.store(sw, Ordering::Release);
            }
        });
    });
    let mut u = lock(&users);
    u.fold(&sole, &reader);
    assert_eq!(snapshot(&u).0, Some((1, rounds)));
}

/// The read word's stamp is folded too: a stream whose reads are free read at a later label, and a
/// writer elsewhere must wait for that read, not for its earlier one.
#[test]
fn a_read_stamp_is_folded_into_the_readers() {
    let mut u = Users::default();
    u.record(&S(1), 1, Write);
    u.record(&S(2), 3, Read);
    let (sole, reader) = (AtomicU64::new(0), AtomicU64::new(pack(2, 3)));
    assert!(
        try_stamp(&reader, 2, 9),
        "stream 2's read took the fast path"
    );
    u.fold(&sole, &reader);
    assert_eq!(reader.load(Ordering::Relaxed), 0, "the fold takes the word");
    assert_eq!(snapshot(&u).1, vec![(2, 9)]);
    let waits = u.conflicts(3, Write);
    assert_eq!(
        waits.iter().map(|(s, p)| (s.0, *p)).collect::<Vec<_>>(),
        [(1, 1), (2, 9)]
    );
}

#[test]
fn only_hipmalloc_device_memory_is_exportable_to_other_processes() {
    let d = Device::for_unit_tests(0);
    // An address with no provenance: never dereferenced (Miri runs this with strict provenance).
    let fake = std::ptr::without_provenance_mut::<std::ffi::c_void>(0x1000);
    assert!(!Allocation::new(std::ptr::null_mut(), &d, Release::Free).is_exportable());
    // Never freed: each release is set to Nothing before the drop (no HIP here).
    let cases = [
        (Allocation::new(fake, &d, Release::Free), true),
        (Allocation::host_visible(fake, &d, Release::Free), false), // managed
        (Allocation::host_visible(fake, &d, Release::HostFree), false), // pinned
        (Allocation::new(fake, &d, Release::IpcClose), false),      // itself opened
    ];
    for (mut a, exportable) in cases {
        assert_eq!(a.is_exportable(), exportable, "{a:?}");
        Arc::get_mut(&mut a).unwrap().release = Release::Nothing;
    }
}

#[test]
fn mapped_memory_is_reached_from_other_devices_only_by_its_own_grant() {
    // A virtual-memory mapping (GrowableBuffer) is granted per range (hipMemSetAccess), never by peer
    // access: the launch check refuses it on other devices as it refuses pool memory. Its release drops
    // the keep only (no HIP call).
    let d = Device::for_unit_tests(4);
    let mapped = Allocation::new(
        std::ptr::without_provenance_mut(0x1000),
        &d,
        Release::Unmap(Arc::new(())),
    );
    assert!(mapped.access_is_granted_per_allocation());
    assert!(!mapped.is_stream_ordered());
}

#[test]
fn a_lease_is_started_once_and_plain_memory_has_none() {
    let d = crate::Device::for_unit_tests(0);
    let plain = Allocation::host_visible(std::ptr::null_mut(), &d, Release::Nothing);
    let leased = Allocation::host_visible(std::ptr::null_mut(), &d, Release::Nothing);
    assert!(plain.lease().is_none() && leased.lease().is_none());
    // A second start shares the first lease: a GraphPinnedBuffer's borrows and launches see one count.
    assert!(Arc::ptr_eq(&leased.start_lease(), &leased.start_lease()));
    assert!(std::ptr::eq(
        leased.lease().unwrap(),
        &*leased.start_lease()
    ));
    assert!(plain.lease().is_none());
}

#[test]
fn an_operations_allocations_are_taken_in_address_order() {
    // Null allocations (nothing to free, no HIP); their addresses are the `Arc`s', distinct.
    let d = Device::for_unit_tests(0);
    let all: Vec<Arc<Allocation>> = (0..12)
        .map(|_| Allocation::new(std::ptr::null_mut(), &d, Release::Free))
        .collect();
    let addr = |a: &Arc<Allocation>| Arc::as_ptr(a) as usize;
    // Every length up to past the inline count, each in several orders (a fixed shuffle per round).
    for len in 0..=all.len() {
        for round in 0..5usize {
            let mut uses: Vec<(&Arc<Allocation>, usize)> = all[..len].iter().zip(0..).collect();
            let n = uses.len();
            for i in 0..n {
                uses.swap(i, (i * 7 + round * 3 + 1) % n);
            }
            by_address(&mut uses);
            let order: Vec<usize> = uses.iter().map(|(a, _)| addr(a)).collect();
            assert!(
                order.windows(2).all(|w| w[0] < w[1]),
                "len {len}: {order:x?}"
            );
            // Each use keeps what it came with.
            for (a, i) in &uses {
                assert!(Arc::ptr_eq(a, &all[*i]));
            }
        }
    }
}

#[test]
fn a_tracked_uses_fields_share_one_cache_line_of_their_own() {
    use std::mem::{align_of, offset_of, size_of};
    let hot = [
        (offset_of!(Allocation, sole), size_of::<AtomicU64>()),
        (offset_of!(Allocation, reader), size_of::<AtomicU64>()),
        (offset_of!(Allocation, device), size_of::<Device>()),
        (offset_of!(Allocation, ptr), size_of::<*mut c_void>()),
        (offset_of!(Allocation, untracked), size_of::<AtomicBool>()),
        (offset_of!(Allocation, shared), size_of::<AtomicBool>()),
    ];
    assert_eq!(align_of::<Allocation>(), 64);
    let end = hot.iter().map(|(at, size)| at + size).max().unwrap();
    assert!(
        end <= 64,
        "the fast path's fields end at byte {end}: {hot:?}"
    );
    // In an `Arc` the allocation starts on a line of its own, after the counts.
    let d = Device::for_unit_tests(0);
    let a = Allocation::new(std::ptr::null_mut(), &d, Release::Free);
    assert_eq!(Arc::as_ptr(&a) as usize % 64, 0);
}
