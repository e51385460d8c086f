//! Stream flags (`hip::StreamFlag`: hipStreamWriteValue64 / hipStreamWaitValue64) under the shadow HIP
//! runtime (scripts/shadow.sh): a flag written on one stream and waited for on another orders the two
//! streams for the race detector and for the memory model, which then queues no event wait of its own; a
//! host write releases a waiting stream; a flag dropped under a queued wait is not freed under it. Also
//! the queries of the same change: pointer attributes, device limits, stream flags and priority.
#![cfg(feature = "shadow")]

#[path = "common/host_fn_memory.rs"]
mod host_fn_memory;
#[path = "common/registered_vec.rs"]
mod registered_vec;
mod shadow;
#[path = "common/slice_upload.rs"]
mod slice_upload;
#[path = "common/view_fills.rs"]
mod view_fills;

use hip::limits::Limit;
use hip::pointer::{self, MemoryType};
use hip::prelude::*;
use hip::{FuncCache, StreamFlag};
use shadow::{assert_no_reports, waits};

const N: usize = 4096;

fn device() -> Device {
    Device::get(0).expect("the shadow runtime's device 0")
}

#[test]
fn a_flag_orders_two_streams_without_an_event_wait() {
    let d = device();
    flag_orders_two_streams(&d, StreamFlag::new(&d).unwrap());
    let narrow = StreamFlag::new_32bit(&d).unwrap();
    assert!(!narrow.is_64bit());
    flag_orders_two_streams(&d, narrow.clone());
    // Values past half the range are refused before HIP (a cyclic wait would end at once).
    let s = Stream::new(&d).unwrap();
    let e = s.write_flag(&narrow, 1 << 31).unwrap_err();
    assert!(
        e.to_string().contains("32-bit flag takes values up to"),
        "{e}"
    );
    assert!(s.wait_flag(&narrow, 1 << 31).is_err());
    assert!(narrow.set(1 << 31).is_err());
    let wide = StreamFlag::new(&d).unwrap();
    assert!(s.write_flag(&wide, u64::MAX).is_err() && s.wait_flag(&wide, u64::MAX).is_err());
    assert_no_reports();
}

/// Eight rounds: a fill on `a`, `a` writes the round to `flag`, `b` waits for it and copies what `a`
/// filled, with no event wait added by the memory model.
fn flag_orders_two_streams(d: &Device, flag: StreamFlag) {
    let (a, b) = (
        Stream::non_blocking(d).unwrap(),
        Stream::non_blocking(d).unwrap(),
    );
    let d = d.clone();
    let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    for round in 1..=8u32 {
        a.fill_async(&mut x, round).unwrap();
        a.write_flag(&flag, u64::from(round)).unwrap();
        b.fill_async(&mut y, 0).unwrap(); // y's last writer is b: the copy below needs nothing for y
        let before = waits();
        b.wait_flag(&flag, u64::from(round)).unwrap();
        b.copy_device_async(&x, &mut y).unwrap();
        assert_eq!(
            waits(),
            before,
            "round {round}: the flag ordered b after a; the memory model must not add an event wait"
        );
        assert_eq!(y.to_vec().unwrap(), vec![round; N], "round {round}");
    }
    b.synchronize().unwrap();
    assert_eq!(flag.value(), 8);
}

const CHILD: &str = "HIP_RS_SHADOW_FLAG_CHILD";

/// The child part of `the_detector_sees_the_order_only_the_flag_gives`: one round of the flag pattern,
/// then the detector's report count.
#[test]
#[ignore = "run by the_detector_sees_the_order_only_the_flag_gives, in a child process"]
fn flag_pattern_in_child() {
    assert!(std::env::var(CHILD).is_ok(), "run by its parent test");
    let d = device();
    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let flag = StreamFlag::new(&d).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    b.fill_async(&mut y, 0).unwrap();
    a.fill_async(&mut x, 9).unwrap();
    a.write_flag(&flag, 1).unwrap();
    b.wait_flag(&flag, 1).unwrap();
    b.copy_device_async(&x, &mut y).unwrap();
    let wrong = y.to_vec().unwrap().iter().filter(|&&v| v != 9).count();
    println!("SHADOW reports={} wrong={wrong}", shadow::reports());
}

fn child_reports(drop_order: bool) -> (usize, usize) {
    let drop = drop_order.then_some("1");
    let line = shadow::run_child(
        "flag_pattern_in_child",
        &[(CHILD, Some("1")), ("HIP_RS_SHADOW_DROP_VALUE_ORDER", drop)],
    );
    (line.field("reports"), line.field("wrong"))
}

/// Mutation self-check: with the shadow forgetting the order a value wait gives (the wait still holds
/// its stream, so the values stay right), the copy the flag alone ordered after the fill is reported.
/// So the crate queued no event wait there, and the detector does see the flag's order.
#[test]
fn the_detector_sees_the_order_only_the_flag_gives() {
    assert_eq!(child_reports(false), (0, 0), "unmutated: no report");
    let (reports, wrong) = child_reports(true);
    assert_eq!(wrong, 0, "the wait still held the stream");
    assert!(
        reports > 0,
        "the order only the flag gave, forgotten, must be reported"
    );
}

#[test]
fn a_wait_for_a_value_not_yet_queued_still_orders_through_the_memory_model() {
    let d = device();
    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let flag = StreamFlag::new(&d).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    b.wait_flag(&flag, 1).unwrap(); // nothing queued reaches 1 yet: nothing learnt
    a.fill_async(&mut x, 3).unwrap();
    a.write_flag(&flag, 1).unwrap();
    b.copy_device_async(&x, &mut y).unwrap(); // ordered by an event wait instead
    assert_eq!(y.to_vec().unwrap(), vec![3; N]);
    assert_no_reports();
}

#[test]
fn the_host_releases_a_waiting_stream() {
    let d = device();
    let b = Stream::non_blocking(&d).unwrap();
    let flag = StreamFlag::new(&d).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    b.wait_flag(&flag, 100).unwrap();
    b.fill_async(&mut y, 5).unwrap();
    assert!(!b.query().unwrap(), "b holds at the wait");
    flag.set(100).unwrap();
    assert_eq!(flag.value(), 100);
    assert_eq!(y.to_vec().unwrap(), vec![5; N]);
    assert_no_reports();
}

#[test]
fn values_only_grow() {
    let d = device();
    let a = Stream::non_blocking(&d).unwrap();
    let flag = StreamFlag::new(&d).unwrap();
    a.write_flag(&flag, 2).unwrap();
    for bad in [0, 1, 2] {
        let e = a.write_flag(&flag, bad).unwrap_err();
        assert!(
            matches!(
                e,
                hip::Error::InvalidArgument {
                    what: "stream flag value",
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            e.to_string().contains("holds or is queued to hold 2"),
            "{e}"
        );
        assert!(flag.set(bad).is_err());
    }
    flag.set(3).unwrap(); // waits for the queued write of 2 first
    assert_eq!(flag.value(), 3);
    assert_no_reports();
}

#[test]
fn a_flag_dropped_under_a_queued_wait_is_freed_after_it() {
    let d = device();
    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    for _ in 0..8 {
        let flag = StreamFlag::new(&d).unwrap();
        let writer = flag.clone();
        b.wait_flag(&flag, 1).unwrap();
        drop(flag);
        a.write_flag(&writer, 1).unwrap();
        drop(writer); // the wait may still be queued: the memory waits for it
    }
    b.synchronize().unwrap();
    a.synchronize().unwrap();
    assert_no_reports();
}

#[test]
fn pointer_attributes_of_the_shadow_allocations() {
    let d = device();
    let x = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let a = pointer::of_device(&x).unwrap();
    assert_eq!(
        (a.memory_type, a.device, a.is_managed),
        (MemoryType::Device, 0, false)
    );
    assert_eq!(a.device_pointer, x.device_ptr());
    assert!(a.host_pointer.is_null());
    let p = PinnedBuffer::<u32>::zeroed(&d, N).unwrap();
    let a = pointer::of_host(&p).unwrap();
    assert_eq!(a.memory_type, MemoryType::Host);
    assert_eq!(a.host_pointer as *const u32, p.host_ptr());
    let m = ManagedBuffer::<u32>::zeroed(&d, N).unwrap();
    assert!(pointer::of_device(&m).unwrap().is_managed);
    let local = 0u64;
    let e = pointer::attributes((&local as *const u64).cast()).unwrap_err();
    assert_eq!(
        e.hip_code().and_then(|c| c.name()),
        Some("hipErrorInvalidValue"),
        "{e}"
    );
}

#[test]
fn limits_stream_flags_and_priority() {
    let d = device();
    let heap = d.limit(Limit::MallocHeapSize).unwrap();
    assert!(heap > 0);
    if hip::limits::HAS_SET_LIMIT {
        d.set_limit(Limit::MallocHeapSize, heap * 2).unwrap();
        assert_eq!(d.limit(Limit::MallocHeapSize).unwrap(), heap * 2);
        d.set_limit(Limit::MallocHeapSize, heap).unwrap();
    } else {
        let e = d.set_limit(Limit::MallocHeapSize, heap).unwrap_err();
        assert!(
            matches!(
                e,
                hip::Error::NotSupported {
                    what: "hipDeviceSetLimit",
                    ..
                }
            ),
            "{e}"
        );
    }
    assert!(Stream::non_blocking(&d).unwrap().is_non_blocking().unwrap());
    assert_eq!(Stream::new(&d).unwrap().flags().unwrap(), 0);
    let (least, greatest) = Stream::priority_range(&d).unwrap();
    assert_eq!(
        Stream::with_priority(&d, greatest, false)
            .unwrap()
            .priority()
            .unwrap(),
        greatest
    );
    assert_eq!(
        Stream::with_priority(&d, least, true)
            .unwrap()
            .priority()
            .unwrap(),
        least
    );
    let e = d.disable_peer_access(&d).unwrap_err();
    assert!(
        matches!(
            e,
            hip::Error::InvalidArgument {
                what: "peer device",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn a_capturing_stream_refuses_flag_operations() {
    let d = device();
    let s = Stream::non_blocking(&d).unwrap();
    let flag = StreamFlag::new(&d).unwrap();
    let mut z = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let cap = s.begin_capture(hip::CaptureMode::ThreadLocal).unwrap();
    for e in [
        s.write_flag(&flag, 1).unwrap_err(),
        s.wait_flag(&flag, 1).unwrap_err(),
    ] {
        assert!(
            matches!(
                e,
                hip::Error::InvalidArgument {
                    what: "operation on a capturing stream",
                    ..
                }
            ),
            "{e}"
        );
    }
    s.fill_async(&mut z, 1).unwrap();
    let graph = cap.end().unwrap();
    assert_eq!(
        graph.node_count().unwrap(),
        1,
        "nothing of the refused calls was captured"
    );
    s.write_flag(&flag, 1).unwrap(); // the refused write of 1 did not count
    s.synchronize().unwrap();
    assert_eq!(flag.value(), 1);
    assert_no_reports();
}

#[test]
fn the_device_cache_preference_is_kept_as_set() {
    let d = device();
    assert_eq!(d.cache_config().unwrap(), FuncCache::PreferNone);
    d.set_cache_config(FuncCache::PreferShared).unwrap();
    assert_eq!(d.cache_config().unwrap(), FuncCache::PreferShared);
    d.set_cache_config(FuncCache::PreferNone).unwrap();
    assert_eq!(d.cache_config().unwrap(), FuncCache::PreferNone);
}

/// Host-to-host copies between pinned buffers and fills of pinned memory (`Stream::copy_host_async`,
/// `Stream::fill_host_async`), on three streams: a download into `a` on one stream, a copy of `a` into
/// `b` on a second and a fill of `a` on a third are ordered by the memory model alone (no wait by the
/// test), and the host's reads wait for them.
#[test]
fn host_to_host_copies_and_pinned_fills_are_ordered_across_streams() {
    let d = device();
    let (s1, s2, s3) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let x = DeviceBuffer::from_slice(&d, &vec![5u32; N]).unwrap();
    let mut a = PinnedBuffer::<u32>::zeroed(&d, N).unwrap();
    let mut b = PinnedBuffer::<u32>::zeroed(&d, N).unwrap();
    for round in 0..4u16 {
        s1.copy_to_host_async(&x, &mut a).unwrap();
        s2.copy_host_async(&a, &mut b).unwrap(); // after the download
        s3.fill_host_async(&mut a, 9).unwrap(); // after the copy read it
        let bs = b.as_slice().unwrap();
        shadow::host_access(bs, false);
        assert!(bs.iter().all(|&v| v == 5), "round {round}");
        let r#as = a.as_slice().unwrap();
        shadow::host_access(r#as, false);
        assert!(r#as.iter().all(|&v| v == 9), "round {round}");
        // 2-byte fills of a view, then 1-byte fills.
        let mut halves = PinnedBuffer::<u16>::zeroed(&d, N).unwrap();
        s1.fill_host_async(&mut halves.slice_mut(..N / 2).unwrap(), 0x1234 + round)
            .unwrap();
        s2.fill_host_async(&mut halves, 7).unwrap();
        s3.fill_host_async(&mut halves.slice_mut(N / 2..).unwrap(), 3)
            .unwrap();
        let h = halves.as_slice().unwrap();
        shadow::host_access(h, false);
        assert!(h[..N / 2].iter().all(|&v| v == 7) && h[N / 2..].iter().all(|&v| v == 3));
    }
    let mut wide = PinnedBuffer::<u64>::zeroed(&d, 4).unwrap();
    let e = s1.fill_host_async(&mut wide, 1).unwrap_err();
    assert!(e.to_string().contains("8 bytes"), "{e}");
    let mut short = PinnedBuffer::<u32>::zeroed(&d, N - 1).unwrap();
    assert!(matches!(
        s1.copy_host_async(&a, &mut short),
        Err(hip::Error::LengthMismatch { .. })
    ));
    assert_no_reports();
}

/// A slow fill (3 ms under the shadow) of a device buffer: `slow_write` of the common cases.
fn slow_fill_kernel(d: &Device) -> Function {
    let code = shadow::compile(
        r#"extern "C" __global__ void slow_fill(float* x, float v, unsigned n) {
            unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) x[i] = v;
        }"#,
        &[shadow::ShadowKernel("slow_fill", b"w\0\0", 3000)],
    );
    Module::load_data(d, &code)
        .unwrap()
        .function("slow_fill")
        .unwrap()
}

/// Queue `f` (slow_fill) writing `x` on `s`.
fn slow_fill(f: &Function, s: &Stream, x: &mut DeviceBuffer<f32>) {
    let (n, v) = (x.len() as u32, -7.0f32);
    let mut args = LaunchArgs::new();
    args.arg_mut(x).arg(&v).arg(&n);
    // SAFETY: slow_fill(float*, float, unsigned) writes x[..n].
    unsafe { f.launch(s, &LaunchConfig::for_num_elems(n), &mut args) }.unwrap();
}

/// Host functions reading and writing pinned memory in stream order (tests/common/host_fn_memory.rs),
/// behind a 3 ms kernel on another stream: no race reported, every value as ordered.
#[test]
fn host_functions_see_pinned_memory_in_stream_order() {
    let d = Device::get(0).unwrap();
    let f = slow_fill_kernel(&d);
    host_fn_memory::host_functions_see_pinned_memory_in_stream_order(&d, &|s, x| {
        slow_fill(&f, s, x)
    });
    assert_no_reports();
}

/// The program's own Vec as a pinned buffer (tests/common/registered_vec.rs), behind 3 ms kernels: no
/// race reported (the unregister included), every value as ordered, the Vec given back.
#[test]
fn a_registered_vec_is_ordered_kept_and_given_back() {
    let d = Device::get(0).unwrap();
    let f = slow_fill_kernel(&d);
    registered_vec::a_registered_vec_is_ordered_kept_and_given_back(&d, &|s, x| {
        slow_fill(&f, s, x)
    });
    assert_no_reports();
}

/// Queued uploads from pageable Vecs (tests/common/slice_upload.rs), behind 3 ms kernels on another
/// stream and on their own: no race reported, every upload lands its own values.
#[test]
fn uploads_from_pageable_slices_are_ordered() {
    let d = Device::get(0).unwrap();
    let f = slow_fill_kernel(&d);
    slice_upload::uploads_from_pageable_slices_are_ordered(&d, &|s, x| slow_fill(&f, s, x));
    assert_no_reports();
}

/// Mapped pinned memory as a kernel argument (`PinnedBuffer::mapped`): a kernel writing it through the
/// mapping on one stream (2 ms), one reading it on another: ordered by the memory model (no report; with
/// the argument's allocation not given to the launch the shadow reports the race), and the host's
/// borrow waits for both.
#[test]
fn mapped_pinned_memory_is_a_kernel_argument_ordered_across_streams() {
    const N: usize = 4096;
    let d = Device::get(0).unwrap();
    let code = shadow::compile(
        r#"extern "C" __global__ void add_one(unsigned* x, unsigned n) {
            unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) x[i] += 1;
        }
        extern "C" __global__ void copy_u32(const unsigned* s, unsigned* d, unsigned n) {
            unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) d[i] = s[i];
        }"#,
        &[
            shadow::ShadowKernel("add_one", b"w\0", 2000),
            shadow::ShadowKernel("copy_u32", b"rw\0", 300),
        ],
    );
    let m = Module::load_data(&d, &code).unwrap();
    let (add_one, copy) = (
        m.function("add_one").unwrap(),
        m.function("copy_u32").unwrap(),
    );
    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let mut host =
        PinnedBuffer::<u32>::zeroed_with_flags(&d, N, hip::memory::PinnedFlags::MAPPED).unwrap();
    let mut dev = DeviceBuffer::<u32>::zeroed(&d, N).unwrap();
    let n = N as u32;
    for _ in 0..3 {
        let mut mapped = host.mapped().unwrap();
        let mut args = LaunchArgs::new();
        args.arg_mut(&mut mapped).arg(&n);
        // SAFETY: add_one(unsigned*, unsigned) writes x[..n]; the shadow runs no body.
        unsafe { add_one.launch(&a, &LaunchConfig::for_num_elems(n), &mut args) }.unwrap();
        let mapped = host.mapped().unwrap();
        let mut args = LaunchArgs::new();
        args.arg(&mapped).arg_mut(&mut dev).arg(&n);
        // SAFETY: copy_u32(const unsigned*, unsigned*, unsigned) reads s[..n], writes d[..n].
        unsafe { copy.launch(&b, &LaunchConfig::for_num_elems(n), &mut args) }.unwrap();
    }
    assert_eq!(host.as_mut_slice().unwrap().len(), N);
    assert_no_reports();
}

/// Fills of device views with 1-, 2- and 4-byte values on three streams (tests/common/view_fills.rs): no
/// race reported, every element as ordered.
#[test]
fn fills_of_device_views_are_ordered_across_streams() {
    view_fills::fills_of_device_views_are_ordered_across_streams(&Device::get(0).unwrap());
    assert_no_reports();
}
