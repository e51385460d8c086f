//! The table cache's policy against stand-in tables (no device): a table queued work still uses is never
//! handed out, a call finds or makes one without waiting while fewer than `MAX_TABLES` are in use, and
//! waits for the oldest only beyond that.

use super::*;
use crate::error::Error;
use std::cell::Cell;
use std::rc::Rc;

/// A stand-in table: `busy` until the test says its work is done; `waits` counts host waits.
struct Fake {
    id: usize,
    capacity: usize,
    busy: Rc<Cell<bool>>,
    waits: Rc<Cell<usize>>,
}

impl Slot for Fake {
    fn capacity(&self) -> usize {
        self.capacity
    }
    fn is_free(&mut self) -> Result<bool> {
        Ok(!self.busy.get())
    }
    fn wait(&mut self) -> Result<()> {
        self.waits.set(self.waits.get() + 1);
        self.busy.set(false);
        Ok(())
    }
}

/// Makes fakes with increasing ids, counting them.
struct Maker {
    made: Cell<usize>,
    waits: Rc<Cell<usize>>,
}

impl Maker {
    fn new() -> Maker {
        Maker {
            made: Cell::new(0),
            waits: Rc::new(Cell::new(0)),
        }
    }
    fn make(&self) -> impl FnOnce(usize) -> Result<Fake> + '_ {
        move |capacity| {
            self.made.set(self.made.get() + 1);
            Ok(Fake {
                id: self.made.get(),
                capacity,
                busy: Rc::new(Cell::new(false)),
                waits: self.waits.clone(),
            })
        }
    }
}

/// Take a table for `need` pointers, "queue work" on it (busy) and give it back; returns its id and the
/// handle that says the work is done.
fn call(cache: &mut Cache<Fake>, maker: &Maker, need: usize) -> (usize, Rc<Cell<bool>>) {
    let t = cache.take(need, maker.make()).unwrap();
    assert!(t.capacity >= need);
    assert!(!t.busy.get(), "table {} handed out while in use", t.id);
    t.busy.set(true);
    let (id, busy) = (t.id, t.busy.clone());
    cache.put(t);
    (id, busy)
}

#[test]
fn a_table_in_use_is_never_handed_out_and_a_done_one_is_reused() {
    let (mut cache, maker) = (Cache::default(), Maker::new());
    let (first, first_busy) = call(&mut cache, &maker, 3);
    let (second, _) = call(&mut cache, &maker, 3);
    assert_ne!(first, second, "the first table's work is still queued");
    first_busy.set(false);
    let (third, _) = call(&mut cache, &maker, 3);
    assert_eq!(third, first, "a done table is used again");
    assert_eq!(maker.made.get(), 2);
    assert_eq!(maker.waits.get(), 0, "no host wait below MAX_TABLES");
}

#[test]
fn calls_return_without_waiting_until_max_tables_are_in_use_then_wait_for_the_oldest() {
    let (mut cache, maker) = (Cache::default(), Maker::new());
    let ids: Vec<usize> = (0..MAX_TABLES)
        .map(|_| call(&mut cache, &maker, 30).0)
        .collect();
    assert_eq!(maker.made.get(), MAX_TABLES);
    assert_eq!(maker.waits.get(), 0);
    let (next, _) = call(&mut cache, &maker, 30);
    assert_eq!(maker.waits.get(), 1, "one host wait, for the oldest");
    assert_eq!(next, ids[0]);
    assert_eq!(maker.made.get(), MAX_TABLES, "nothing more allocated");
    assert_eq!(cache.counts(), (MAX_TABLES, 0));
}

#[test]
fn a_free_table_too_small_is_set_aside_for_one_at_least_twice_as_large() {
    let (mut cache, maker) = (Cache::default(), Maker::new());
    let (small, small_busy) = call(&mut cache, &maker, 30);
    small_busy.set(false);
    let t = cache.take(3 * 1000, maker.make()).unwrap();
    assert_ne!(t.id, small);
    assert!(t.capacity >= 3000);
    let c = t.capacity;
    cache.put(t);
    assert_eq!(
        cache.counts(),
        (1, 1),
        "the small one is kept aside, not freed"
    );
    // The next one that outgrows it at least doubles.
    let t = cache.take(c + 1, maker.make()).unwrap();
    assert!(t.capacity >= 2 * c, "{} after {c}", t.capacity);
    assert_eq!(grown(1, 0), MIN_POINTERS);
    assert_eq!(grown(3, usize::MAX), usize::MAX);
}

#[test]
fn a_failed_allocation_leaves_the_cache_as_it_was() {
    let (mut cache, maker) = (Cache::default(), Maker::new());
    let (_, busy) = call(&mut cache, &maker, 3);
    busy.set(false);
    let refused = |_| -> Result<Fake> {
        Err(Error::NotSupported {
            what: "test",
            reason: "no memory",
        })
    };
    assert!(cache.take(MIN_POINTERS * 4, refused).is_err());
    assert_eq!(cache.counts(), (1, 0));
    let t = cache.take(3, maker.make()).unwrap();
    assert_eq!(t.id, 1, "the free table is still there");
}

#[test]
fn a_retired_table_is_never_taken_again() {
    let (mut cache, maker) = (Cache::default(), Maker::new());
    let t = cache.take(3, maker.make()).unwrap();
    cache.retire(t);
    let t = cache.take(3, maker.make()).unwrap();
    assert_eq!(t.id, 2);
    assert_eq!(cache.counts(), (0, 1));
}
