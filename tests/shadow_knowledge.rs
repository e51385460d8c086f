//! What the memory model learns and then no longer waits for (docs/MEMORY_MODEL.md, the table of issue 42:
//! completion known from `synchronize`, queries and reads back; orders learned from `wait_event`; markers
//! that cover a write and nothing after it), under the shadow HIP runtime. Skipping a wait is where a
//! wrong belief would race: each pattern checks its values and that the detector reported nothing.
#![cfg(feature = "shadow")]

mod shadow;

use hip::prelude::*;
use shadow::assert_no_reports;

const N: usize = 4096;
const ROUNDS: u32 = 6;

struct F {
    d: Device,
    a: Stream,
    b: Stream,
}

fn f() -> F {
    let d = Device::get(0).unwrap();
    let a = Stream::non_blocking(&d).unwrap();
    let b = Stream::non_blocking(&d).unwrap();
    F { d, a, b }
}

fn buf(f: &F) -> DeviceBuffer<u32> {
    DeviceBuffer::zeroed(&f.d, N).unwrap()
}

/// `x`, `y` written on A, then what `learn` teaches, then a writer of `x` on A and of `y` on B.
fn after(learn: impl Fn(&F, &DeviceBuffer<u32>)) {
    let f = f();
    for round in 0..ROUNDS {
        let (mut x, mut y) = (buf(&f), buf(&f));
        f.a.fill_async(&mut x, round).unwrap();
        f.a.fill_async(&mut y, round).unwrap();
        learn(&f, &y);
        f.a.fill_async(&mut x, round + 1).unwrap();
        f.b.fill_async(&mut y, round + 2).unwrap();
        assert_eq!(x.to_vec().unwrap(), vec![round + 1; N]);
        assert_eq!(y.to_vec().unwrap(), vec![round + 2; N]);
    }
    assert_no_reports();
}

#[test]
fn after_stream_synchronize() {
    after(|f, _| f.a.synchronize().unwrap());
}

#[test]
fn after_device_synchronize() {
    after(|f, _| f.d.synchronize().unwrap());
}

#[test]
fn after_reading_back() {
    after(|_, y| drop(y.to_vec().unwrap()));
}

#[test]
fn after_a_query_says_done() {
    after(|f, _| while !f.a.query().unwrap() {});
}

#[test]
fn after_an_event_synchronize() {
    after(|f, _| f.a.record_event().unwrap().synchronize().unwrap());
}

/// One event, recorded on A after each round's writes and found complete by `Event::query`: the memory
/// model learns A's work up to the record is done, so B's writer of `y` queues no wait for it (issue 56:
/// a query reads its record's generation before the HIP call and the position after it; a record on the
/// same stream as the last keeps its queue).
#[test]
fn an_event_query_teaches_completion_and_saves_the_wait() {
    let f = f();
    let e = Event::new(&f.d).unwrap();
    for round in 0..ROUNDS {
        let (mut x, mut y) = (buf(&f), buf(&f));
        f.a.fill_async(&mut x, round).unwrap();
        f.a.fill_async(&mut y, round).unwrap();
        e.record(&f.a).unwrap();
        while !e.query().unwrap() {}
        let before = shadow::waits();
        f.b.fill_async(&mut y, round + 2).unwrap();
        assert_eq!(
            shadow::waits(),
            before,
            "B waited for work a query found done"
        );
        f.a.fill_async(&mut x, round + 1).unwrap();
        assert_eq!(x.to_vec().unwrap(), vec![round + 1; N]);
        assert_eq!(y.to_vec().unwrap(), vec![round + 2; N]);
    }
    assert_no_reports();
}

#[test]
fn after_b_waits_for_an_event_of_a() {
    after(|f, _| f.b.wait_event(&f.a.record_event().unwrap()).unwrap());
}

#[test]
fn synchronized_weights_read_on_two_streams() {
    let f = f();
    for round in 0..ROUNDS {
        let mut w = buf(&f);
        f.a.fill_async(&mut w, round + 5).unwrap();
        f.a.synchronize().unwrap();
        let (mut r1, mut r2) = (buf(&f), buf(&f));
        f.a.copy_device_async(&w, &mut r1).unwrap();
        f.b.copy_device_async(&w, &mut r2).unwrap();
        f.b.fill_async(&mut w, 0).unwrap(); // then a writer after both readers
        assert_eq!(r1.to_vec().unwrap(), vec![round + 5; N]);
        assert_eq!(r2.to_vec().unwrap(), vec![round + 5; N]);
    }
    assert_no_reports();
}

/// A writes `x`, then `z`; B reads `x`: B waits for the marker after `x`'s write, not for `z`'s.
#[test]
fn marker_covers_the_first_write_only() {
    let f = f();
    for round in 0..ROUNDS {
        let (mut x, mut z, mut y) = (buf(&f), buf(&f), buf(&f));
        f.a.fill_async(&mut x, round + 9).unwrap();
        f.a.fill_async(&mut z, round + 10).unwrap();
        f.b.copy_device_async(&x, &mut y).unwrap();
        f.b.fill_async(&mut z, round + 11).unwrap(); // z: written after A's write, on B
        assert_eq!(y.to_vec().unwrap(), vec![round + 9; N]);
        assert_eq!(z.to_vec().unwrap(), vec![round + 11; N]);
    }
    assert_no_reports();
}

/// Blocking streams (`Stream::new`) and the null stream's legacy order, beside non-blocking ones.
#[test]
fn blocking_streams_with_the_null_stream() {
    let f = f();
    let c = Stream::new(&f.d).unwrap();
    let e = Stream::new(&f.d).unwrap();
    for round in 0..ROUNDS {
        let (mut x, mut y) = (buf(&f), buf(&f));
        c.fill_async(&mut x, round + 1).unwrap();
        e.copy_device_async(&x, &mut y).unwrap();
        x.memset_bytes(0).unwrap(); // the null stream, after both
        f.a.copy_device_async(&y, &mut x).unwrap();
        assert_eq!(x.to_vec().unwrap(), vec![round + 1; N]);
    }
    assert_no_reports();
}
