//! Issue 54, hole 3, under the shadow HIP runtime: an event re-recorded on one thread while another
//! thread makes a stream wait for it.
//!
//! `Event::record` (hip/src/event.rs) called hipEventRecord, then stored the event's position (stream and
//! label); `Stream::wait_event` called hipStreamWaitEvent, then read that position and let the waiting
//! stream learn it (`Queue::learn`). HIP binds a wait to the record current when the wait is queued. When
//! another thread's record landed between the two steps of `wait_event`, the stream learnt the NEW
//! position while its wait waited for the OLD record: B's copy of `x` after A's fill got no wait. The
//! shadow reported it on 8 of 8 seeds at 05e8434 (3 to 12 races per run); a record and its position are
//! now one step (a generation checked across the HIP call), and it reports none.
#![cfg(feature = "shadow")]

mod shadow;

use hip::prelude::*;
use shadow::assert_no_reports;
use std::sync::Mutex;

const N: usize = 4096;
const ROUNDS: u32 = 64;

fn device() -> Device {
    Device::get(0).expect("the shadow runtime's device 0")
}

/// Thread 1 writes `x` on A and re-records `e` on A; thread 2 makes B wait on `e`, then reads `x` on B.
/// Whichever record B's wait binds to, the crate must order B's read after A's write once thread 2 holds
/// `x` after thread 1's write (the Mutex orders the two threads).
#[test]
fn event_rerecorded_while_another_thread_waits() {
    let d = device();
    let a = Stream::non_blocking(&d).unwrap();
    let b = Stream::non_blocking(&d).unwrap();
    for round in 0..ROUNDS {
        let x = Mutex::new(DeviceBuffer::<u32>::zeroed(&d, N).unwrap());
        let e = Event::new(&d).unwrap();
        e.record(&a).unwrap();
        let y = std::thread::scope(|t| {
            t.spawn(|| {
                a.fill_async(&mut *x.lock().unwrap(), round + 1).unwrap();
                e.record(&a).unwrap();
            });
            t.spawn(|| {
                b.wait_event(&e).unwrap();
                let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
                b.copy_device_async(&*x.lock().unwrap(), &mut y).unwrap();
                y
            })
            .join()
            .unwrap()
        });
        let v = y.to_vec().unwrap();
        assert!(
            v == vec![0; N] || v == vec![round + 1; N],
            "round {round}: torn copy"
        );
    }
    assert_no_reports();
}
