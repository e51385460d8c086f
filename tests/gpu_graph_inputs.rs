//! New inputs between graph replays: the user keeps the buffers a captured graph reads and writes, puts new
//! inputs in with ordinary copies (on any stream), replays, and reads the outputs; the memory model orders
//! each copy after the replays that use the buffer and each replay after the copies. Every step checked,
//! with a slow kernel in the graph so that an unordered copy would overtake it. Compiled only with
//! `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use common::{device, load, ORDERING_KERNELS};
use hip::prelude::*;

const N: usize = 1 << 18;
const SPIN: i64 = 2_000_000;

#[test]
fn each_replay_reads_the_inputs_written_before_it_and_its_outputs_are_read_after_it() {
    let d = device();
    let m = load(&d, ORDERING_KERNELS);
    let slow_copy = m.function("slow_copy").unwrap();
    let (run, io) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let mut input = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut output = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let n = N as u32;
    let mut cap = run.begin_capture(CaptureMode::Global).unwrap();
    {
        let mut args = LaunchArgs::new();
        args.arg(&input).arg_mut(&mut output).arg(&n).arg(&SPIN);
        // SAFETY: slow_copy(const unsigned*, unsigned*, unsigned, long long) reads input[..n] and writes
        // output[..n]; both buffers are this crate's (kept by the graph).
        unsafe {
            cap.launch(&slow_copy, &LaunchConfig::for_num_elems(N), &mut args)
                .unwrap()
        };
    }
    let mut exec = cap.end().unwrap().instantiate().unwrap();
    let mut staging = PinnedBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut results = PinnedBuffer::<u32>::zeroed(&d, N).unwrap();
    for step in 1..=8u32 {
        // Synchronous copy in, replay, synchronous copy out.
        input.copy_from_host(&vec![step; N]).unwrap();
        exec.launch(&run).unwrap();
        assert!(
            output.to_vec().unwrap().iter().all(|&v| v == step),
            "step {step}, synchronous copies"
        );
        // Asynchronous copies on another stream, through pinned memory: upload, replay, download,
        // then the next upload at once (it must wait for the replay still reading the input).
        let value = 1000 + step;
        staging.as_mut_slice().unwrap().fill(value);
        results.as_mut_slice().unwrap().fill(u32::MAX);
        io.copy_from_host_async(&staging, &mut input).unwrap();
        exec.launch(&run).unwrap();
        io.copy_to_host_async(&output, &mut results).unwrap();
        staging.as_mut_slice().unwrap().fill(0);
        io.copy_from_host_async(&staging, &mut input).unwrap();
        let got = results.as_slice().unwrap();
        let wrong = got.iter().filter(|&&v| v != value).count();
        assert_eq!(
            wrong, 0,
            "step {step}: {wrong} of {N} outputs wrong ({})",
            got[0]
        );
    }
}
