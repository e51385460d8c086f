//! Issue 54's holes 5 and 6 under the shadow HIP runtime (hole 3: tests/shadow_event_race.rs; hole 7:
//! tests/shadow_threads.rs): a graph launched on one thread while a staged pageable copy into the same
//! buffer runs on another, and the second future of a stream behind a dropped first one whose release
//! must wait for another stream. Each checks its values and that the shadow reported nothing.
#![cfg(feature = "shadow")]

mod shadow;

use hip::memory::staging::{self, StagingConfig};
use hip::prelude::*;
use shadow::{assert_no_reports, ShadowKernel};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn device() -> Device {
    Device::get(0).expect("the shadow runtime's device 0")
}

/// Hole 5: the staging ring's chunk events carried the whole copy's label, so waiting for the first
/// chunk's event told the memory model the copy was done, and a graph's fill of the buffer launched
/// meanwhile ran unordered with the later chunks (the shadow reports the overlapping writes; the buffer
/// ends torn).
#[test]
fn a_graph_launched_during_a_staged_copy_waits_for_all_of_it() {
    let d = device();
    // 2 MiB: 8 chunks through 2 pinned buffers; with the ramp, 11 pieces (64 and 128 KiB at both ends).
    for ramp in [false, true] {
        staging::set_config(StagingConfig {
            enabled: true,
            threshold_bytes: 1 << 20,
            chunk_bytes: 256 << 10,
            buffers: 2,
            threads: 2,
            register_bytes: usize::MAX, // the ring's chunks are what this test is about
            ramp,
        });
        copy_against_a_graph_fill(&d);
    }
    staging::set_config(StagingConfig::default());
    assert_no_reports();
}

/// Eight rounds of a staged copy into a buffer while a graph's fill of it is launched at a later
/// moment each round: the buffer ends whole, one or the other.
fn copy_against_a_graph_fill(d: &Device) {
    const N: usize = (2 << 20) / 4;
    const COPY: u32 = 0x1111_1111;
    const FILL: u32 = 0x2222_2222;
    let host = vec![COPY; N];
    let mut x = DeviceBuffer::<u32>::zeroed(d, N).unwrap();
    let g = Stream::non_blocking(d).unwrap();
    let mut exec = {
        let cap = g.begin_capture(CaptureMode::ThreadLocal).unwrap();
        g.fill_async(&mut x, FILL).unwrap();
        cap.end().unwrap().instantiate().unwrap()
    };
    for round in 0..8u64 {
        let copying = AtomicBool::new(false);
        std::thread::scope(|t| {
            t.spawn(|| {
                copying.store(true, Ordering::SeqCst);
                x.copy_from_host(&host).unwrap();
            });
            t.spawn(|| {
                while !copying.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
                std::thread::sleep(Duration::from_micros(200 * round));
                exec.launch(&g).unwrap();
            });
        });
        g.synchronize().unwrap();
        let v = x.to_vec().unwrap();
        assert!(
            v == vec![COPY; N] || v == vec![FILL; N],
            "round {round}: x is torn"
        );
    }
}

const HOLD: &str = r#"
extern "C" __global__ void hold(const unsigned int* x, unsigned int* y, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
extern "C" __global__ void pause(unsigned int n) {}
"#;

/// Hole 6: `f1 = x.to_vec_future(&s); f2 = y.to_vec_future(&s); drop(x); drop(f1)` while stream `busy`
/// still reads `x` for a second (a kernel the shadow holds that long), and `s` is held 0.2 s first so
/// that f1 is still pending when it is dropped. Once f1's copy is done its release frees `x`, which
/// first waits for `busy`'s read: the stream's waiting thread did that before waking f2 (f2 after the
/// second); now the releasing thread does (f2 after the 0.2 s).
#[test]
fn the_second_future_does_not_wait_for_the_first_ones_release() {
    let d = device();
    let code = shadow::compile(
        HOLD,
        &[
            ShadowKernel("hold", b"rw\0", 1_000_000),
            ShadowKernel("pause", b"\0", 200_000),
        ],
    );
    let module = Module::load_data(&d, &code).unwrap();
    let (s, busy) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    const N: usize = 4096;
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let x = DeviceBuffer::from_slice(&d, &vec![1u32; N]).unwrap();
        let y = DeviceBuffer::from_slice(&d, &vec![2u32; N]).unwrap();
        let mut z = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
        assert_eq!(y.to_vec_future(&s).await.unwrap()[0], 2);
        let k = module.function("hold").unwrap();
        let n = N as u32;
        let mut args = LaunchArgs::new();
        args.arg(&x).arg_mut(&mut z).arg(&n);
        let start = Instant::now();
        // SAFETY: hold(const unsigned*, unsigned*, unsigned) reads x[..n], writes z[..n].
        unsafe { k.launch(&busy, &LaunchConfig::for_num_elems(n), &mut args) }.unwrap();
        let pause = module.function("pause").unwrap();
        let mut args = LaunchArgs::new();
        args.arg(&n);
        // SAFETY: pause(unsigned) touches no memory.
        unsafe { pause.launch(&s, &LaunchConfig::new(1, 1), &mut args) }.unwrap();
        let f1 = x.to_vec_future(&s);
        let f2 = y.to_vec_future(&s);
        drop(x);
        drop(f1);
        let v = f2.await.unwrap();
        let took = start.elapsed();
        assert_eq!(v, vec![2u32; N]);
        assert!(
            took >= Duration::from_millis(150) && took < Duration::from_millis(600),
            "f2 resolved {took:?} after the one-second read of x began (it should follow the 0.2 s \
             pause on its stream, not f1's release)"
        );
        busy.synchronize().unwrap();
        assert!(start.elapsed() >= Duration::from_millis(900));
    });
    assert_no_reports();
}
