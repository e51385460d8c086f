//! Host functions that read and write pinned memory in stream order
//! (`Stream::launch_host_fn_reading`, `launch_host_fn_writing`, `launch_host_fn_with_status`), run on
//! the GPU (tests/gpu_runtime_families.rs) and under the shadow runtime (tests/shadow_runtime_families.rs,
//! which also asserts no race is reported): each round a slow write of a device buffer and its download
//! (a slow kernel, then a copy of the round's values) on stream `a`; on stream `b` a host function reading the download (it waits for `a`'s copy, with no
//! wait by the test) and one writing another pinned buffer, which stream `c` uploads (it waits for the
//! function). Then the status, the host's own borrows waiting for the functions, and the refusal in a
//! capture.

use hip::prelude::*;
use std::sync::mpsc;

const N: usize = 4096;
const ROUNDS: u32 = 4;

/// `slow_write(stream, buffer)` queues a write of the buffer that takes a while (its values do not
/// matter: a copy overwrites them after it on the same stream).
pub fn host_functions_see_pinned_memory_in_stream_order(
    d: &Device,
    slow_write: &dyn Fn(&Stream, &mut DeviceBuffer<f32>),
) {
    let (a, b, c) = (
        Stream::non_blocking(d).unwrap(),
        Stream::non_blocking(d).unwrap(),
        Stream::non_blocking(d).unwrap(),
    );
    let mut dev = DeviceBuffer::<f32>::zeroed(d, N).unwrap();
    let mut host = PinnedBuffer::<f32>::zeroed(d, N).unwrap();
    let mut out = PinnedBuffer::<f32>::zeroed(d, N).unwrap();
    let mut up = DeviceBuffer::<f32>::zeroed(d, N).unwrap();
    let (tx, rx) = mpsc::channel();
    for round in 1..=ROUNDS {
        let v = round as f32;
        let src = DeviceBuffer::from_slice(d, &vec![v; N]).unwrap();
        slow_write(&a, &mut dev);
        a.copy_device_async(&src, &mut dev).unwrap();
        a.copy_to_host_async(&dev, &mut host).unwrap();
        let tx = tx.clone();
        let read = b
            .launch_host_fn_reading(&host, move |data| {
                let data = data.expect("the stream's earlier work succeeded");
                tx.send((round, data.iter().filter(|&&x| x == v).count()))
                    .unwrap();
            })
            .unwrap();
        b.launch_host_fn_writing(&mut out, move |data| {
            data.expect("the stream's earlier work succeeded")
                .iter_mut()
                .enumerate()
                .for_each(|(i, x)| *x = v * 10.0 + i as f32);
        })
        .unwrap();
        c.copy_from_host_async(&out, &mut up).unwrap();
        let got = up.to_vec().unwrap();
        let wrong = (0..N).filter(|&i| got[i] != v * 10.0 + i as f32).count();
        assert_eq!(
            wrong, 0,
            "round {round}: wrong values in the upload of the function's write"
        );
        // The host's own write of the downloaded buffer waits for the reading function.
        host.as_mut_slice().unwrap().fill(-1.0);
        assert_eq!(read.state(), hip::HostFnState::Done, "round {round}");
    }
    drop(tx);
    let seen: Vec<(u32, usize)> = rx.iter().collect();
    assert_eq!(seen, (1..=ROUNDS).map(|r| (r, N)).collect::<Vec<_>>());

    // The status of the stream's earlier work; an empty view; a panic reported by the handle.
    let (tx, rx) = mpsc::channel();
    b.launch_host_fn_with_status(move |s| tx.send(s.is_ok()).unwrap())
        .unwrap();
    let empty = host.slice(0..0).unwrap();
    let lens = b
        .launch_host_fn_reading(&empty, |d| assert_eq!(d.unwrap().len(), 0))
        .unwrap();
    let panics = b
        .launch_host_fn_writing(&mut out, |_| panic!("from the writing function"))
        .unwrap();
    b.synchronize().unwrap();
    assert!(rx.recv().unwrap());
    assert_eq!(lens.state(), hip::HostFnState::Done);
    assert_eq!(
        panics.panic_message().as_deref(),
        Some("from the writing function")
    );

    // Refused on a capturing stream, naming why; the capture stays valid.
    let cap = c.begin_capture(CaptureMode::ThreadLocal).unwrap();
    let e = c.launch_host_fn_reading(&host, |_| {}).unwrap_err();
    assert!(e.to_string().contains("capture"), "{e}");
    let e = c.launch_host_fn_with_status(|_| {}).unwrap_err();
    assert!(e.to_string().contains("capture"), "{e}");
    cap.end().unwrap();
}
