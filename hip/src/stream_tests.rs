//! Unit tests of the stream's gate and labels (no HIP call: a null stream's handle on a test device).

use super::*;

/// Begins an operation on `h` on a new thread, whose result is the label it took; checks it is still
/// waiting for the gate 20 ms later.
fn begin_on_another_thread(h: &Arc<StreamHandle>) -> std::thread::JoinHandle<u64> {
    let other = {
        let h = h.clone();
        std::thread::spawn(move || h.begin_op().label())
    };
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(
        !other.is_finished(),
        "the other thread began before the gate opened"
    );
    other
}

#[test]
fn an_operation_inside_another_on_the_same_thread_shares_its_label_and_publishes_nothing() {
    let device = Device::for_unit_tests(0);
    let h = StreamHandle::new(std::ptr::null_mut(), &device, false);
    let first = h.begin_op();
    assert_eq!(first.label(), 1);
    drop(first);
    assert_eq!(h.queue.queued(), 1);
    let outer = h.begin_op();
    assert_eq!(outer.label(), 2);
    {
        // An error path or a drop inside the operation begins another on the same stream: it is the
        // same position in the queue (a wait it queues comes with the outer operation's work).
        let inner = h.begin_op();
        assert_eq!(inner.label(), 2);
    }
    // The inner one published nothing: the outer operation is still being queued.
    assert_eq!(h.queue.queued(), 1);
    assert!(h.queue.in_flight(2));
    drop(outer);
    assert_eq!(h.queue.queued(), 2);
    assert!(!h.queue.in_flight(2));
}

#[test]
fn another_thread_waits_for_the_gate_and_takes_the_next_label() {
    let device = Device::for_unit_tests(0);
    let h = StreamHandle::new(std::ptr::null_mut(), &device, false);
    let outer = h.begin_op();
    let other = begin_on_another_thread(&h);
    assert_eq!(h.queue.queued(), 0, "nothing was published meanwhile");
    drop(outer);
    assert_eq!(other.join().unwrap(), 2);
    assert_eq!(h.queue.queued(), 2);
}

#[test]
fn a_completed_operation_counts_as_queued_while_it_keeps_the_gate() {
    let device = Device::for_unit_tests(0);
    let h = StreamHandle::new(std::ptr::null_mut(), &device, false);
    let op = h.begin_op();
    assert!(h.queue.in_flight(1));
    op.completed();
    assert_eq!(h.queue.queued(), 1);
    assert!(!h.queue.in_flight(1));
    // The gate is still closed: no other thread begins, and the reactor's look is refused.
    assert!(h.try_close_gate().is_none());
    let other = begin_on_another_thread(&h);
    drop(op);
    assert_eq!(other.join().unwrap(), 2);
    assert_eq!(h.queue.queued(), 2);
}

#[test]
fn the_gate_held_without_an_operation_hands_out_no_label() {
    let device = Device::for_unit_tests(0);
    let h = StreamHandle::new(std::ptr::null_mut(), &device, false);
    drop(h.begin_op());
    {
        // A capture's start or end holds the gate: an operation inside it (a buffer dropped there) is at
        // the last queued position, and publishes nothing.
        let gate = h.close_gate();
        assert!(h.try_close_gate().is_none());
        let inner = h.begin_op();
        assert_eq!(inner.label(), 1);
        drop(inner);
        assert_eq!(h.queue.queued(), 1);
        drop(gate);
    }
    assert_eq!(h.queue.queued(), 1);
    let next = h.try_close_gate().expect("the gate is open again");
    drop(next);
    assert_eq!(h.begin_op().label(), 2);
}
