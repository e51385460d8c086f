//! What cudarc users reach for: raw allocations handed over and adopted, buffers reinterpreted as another
//! element type, disjoint mutable views, pinned allocation flags, managed-memory attachments, graph
//! instantiation flags and 16-bit float elements. Compiled only with `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use common::device;
use hip::half::{bf16, f16};
use hip::prelude::*;
use hip::{GraphInstantiateFlags, MemAttach, PinnedFlags};

#[test]
fn raw_allocations_are_handed_over_and_adopted() {
    let d = device();
    let data: Vec<u32> = (0..4096).map(|i| i * 3 + 1).collect();
    let b = DeviceBuffer::from_slice(&d, &data).unwrap();
    let (ptr, len) = b.into_raw().unwrap();
    assert_eq!(len, data.len());
    // Another library writes through the raw pointer (here: raw HIP).
    let rc = unsafe { hip::sys::hipMemset(ptr, 0xAB, 16) };
    assert_eq!(rc, hip::sys::hipSuccess);
    // SAFETY: `ptr` came from into_raw of a hipMalloc'd buffer of `len` u32 on `d`, used by nothing else.
    let adopted = unsafe { DeviceBuffer::<u32>::from_raw(&d, ptr, len) }.unwrap();
    let mut want = data.clone();
    want[..4].fill(0xABAB_ABAB);
    assert_eq!(adopted.to_vec().unwrap(), want);
    drop(adopted); // freed once, by the adopting buffer (compute-sanitizer checks)
                   // Memory from raw hipMalloc.
    let mut raw = std::ptr::null_mut();
    assert_eq!(
        unsafe { hip::sys::hipMalloc(&mut raw, 64 * 4) },
        hip::sys::hipSuccess
    );
    // SAFETY: fresh hipMalloc of 64 u32 on the current device (device 0), owned by nothing else.
    let mut adopted = unsafe { DeviceBuffer::<u32>::from_raw(&d, raw, 64) }.unwrap();
    adopted.copy_from_host(&[9u32; 64]).unwrap();
    assert_eq!(adopted.to_vec().unwrap(), vec![9u32; 64]);
    // A null address with bytes, a graph still holding the memory, pool memory: refused by name.
    assert!(matches!(
        unsafe { DeviceBuffer::<u32>::from_raw(&d, std::ptr::null_mut(), 4) },
        Err(Error::InvalidArgument { .. })
    ));
    let s = Stream::new(&d).unwrap();
    let mut held = DeviceBuffer::<u32>::zeroed(&d, 8).unwrap();
    let cap = s.begin_capture(CaptureMode::Global).unwrap();
    s.fill_async(&mut held, 5).unwrap();
    let graph = cap.end().unwrap();
    match held.into_raw() {
        Err(Error::InvalidArgument { reason, .. }) => assert!(
            reason.contains("graph") && reason.contains("other holder(s)"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    drop(graph);
    let pooled = DeviceBuffer::<u32>::zeroed_async(&s, 8).unwrap();
    if pooled.is_stream_ordered() {
        assert!(matches!(
            pooled.into_raw(),
            Err(Error::InvalidArgument { .. })
        ));
    } else {
        // No memory pools on this device: a plain allocation, which can be handed over.
        let (p, n) = pooled.into_raw().unwrap();
        drop(unsafe { DeviceBuffer::<u32>::from_raw(&d, p, n) }.unwrap());
    }
}

#[test]
fn buffers_are_reinterpreted_as_other_element_types_and_split() {
    let d = device();
    let floats = [
        1.0f32,
        -2.5,
        3.25,
        0.0,
        f32::MAX,
        f32::MIN_POSITIVE,
        7.0,
        8.0,
    ];
    let mut b = DeviceBuffer::from_slice(&d, &floats).unwrap();
    let bits: Vec<u32> = floats.iter().map(|f| f.to_bits()).collect();
    assert_eq!(b.reinterpret::<u32>().unwrap().to_vec().unwrap(), bits);
    let quads = b.reinterpret::<[f32; 4]>().unwrap().to_vec().unwrap();
    assert_eq!(
        quads,
        vec![
            [1.0, -2.5, 3.25, 0.0],
            [f32::MAX, f32::MIN_POSITIVE, 7.0, 8.0]
        ]
    );
    assert_eq!(b.reinterpret::<u8>().unwrap().len(), 32);
    // Written as u32, read as f32.
    b.reinterpret_mut::<u32>()
        .unwrap()
        .copy_from_host(&[0.5f32.to_bits(); 8])
        .unwrap();
    assert_eq!(b.to_vec().unwrap(), vec![0.5f32; 8]);
    // Whole elements and alignment are checked.
    let bytes = DeviceBuffer::from_slice(&d, &[0u8; 10]).unwrap();
    assert!(matches!(
        bytes.reinterpret::<u32>(),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        bytes.slice(1..9).unwrap().reinterpret::<u32>(),
        Err(Error::InvalidArgument { .. })
    ));
    assert_eq!(
        bytes
            .slice(4..8)
            .unwrap()
            .reinterpret::<u32>()
            .unwrap()
            .len(),
        1
    );
    // Two halves written at once from two streams.
    let (s1, s2) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    let mut x = DeviceBuffer::from_slice(&d, &vec![u32::MAX; 1000]).unwrap();
    {
        let (mut lo, mut hi) = x.split_at_mut(300).unwrap();
        assert_eq!((lo.len(), hi.len()), (300, 700));
        s1.memset_async(&mut lo, 1).unwrap();
        s2.memset_async(&mut hi, 2).unwrap();
    }
    let got = x.to_vec().unwrap();
    assert!(got[..300].iter().all(|&v| v == 0x0101_0101));
    assert!(got[300..].iter().all(|&v| v == 0x0202_0202));
    assert!(matches!(
        x.split_at_mut(1001),
        Err(Error::OutOfBounds { .. })
    ));
    // Two halves read at once from two streams, from a shared borrow.
    let (mut a, mut b) = (
        DeviceBuffer::<u32>::zeroed(&d, 300).unwrap(),
        DeviceBuffer::<u32>::zeroed(&d, 700).unwrap(),
    );
    {
        let (lo, hi) = x.split_at(300).unwrap();
        assert_eq!((lo.len(), hi.len()), (300, 700));
        s1.copy_device_async(&lo, &mut a).unwrap();
        s2.copy_device_async(&hi, &mut b).unwrap();
    }
    assert_eq!(a.to_vec().unwrap(), vec![0x0101_0101u32; 300]);
    assert_eq!(b.to_vec().unwrap(), vec![0x0202_0202u32; 700]);
    assert!(matches!(x.split_at(1001), Err(Error::OutOfBounds { .. })));
}

#[test]
fn pinned_flags_and_managed_attachments_allocate_memory_that_copies_right() {
    let d = device();
    let s = Stream::new(&d).unwrap();
    for flags in [
        PinnedFlags::DEFAULT,
        PinnedFlags::PORTABLE,
        PinnedFlags::MAPPED,
        PinnedFlags::WRITE_COMBINED,
        PinnedFlags::PORTABLE | PinnedFlags::MAPPED | PinnedFlags::WRITE_COMBINED,
    ] {
        let mut p = PinnedBuffer::<u32>::zeroed_with_flags(&d, 4096, flags).unwrap();
        p.as_mut_slice().unwrap().fill(flags.bits() + 10);
        let mut dev = DeviceBuffer::from_slice(&d, &vec![u32::MAX; 4096]).unwrap();
        s.copy_from_host_async(&p, &mut dev).unwrap();
        assert!(
            dev.to_vec()
                .unwrap()
                .iter()
                .all(|&v| v == flags.bits() + 10),
            "{flags:?}"
        );
        let back = DeviceBuffer::from_slice(&d, &vec![77u32; 4096]).unwrap();
        s.copy_to_host_async(&back, &mut p).unwrap();
        assert!(p.as_slice().unwrap().iter().all(|&v| v == 77), "{flags:?}");
    }
    // Managed memory attached to the host, then to one stream, then globally: it keeps working.
    let concurrent = d
        .attribute(hip::sys::hipDeviceAttributeConcurrentManagedAccess)
        .unwrap();
    match ManagedBuffer::<u32>::zeroed_attached(&d, 1024, MemAttach::Host) {
        Ok(mut m) => {
            assert_ne!(concurrent, 0);
            assert_eq!(
                (m.attachment(), m.attached_stream()),
                (MemAttach::Host, None)
            );
            m.as_mut_slice().unwrap().fill(3);
            m.attach_async(&s, MemAttach::Single).unwrap();
            assert_eq!(
                (m.attachment(), m.attached_stream()),
                (MemAttach::Single, Some(s.id()))
            );
            s.memset_async(&mut m, 4).unwrap();
            assert!(m.as_slice().unwrap().iter().all(|&v| v == 0x0404_0404));
            // Attached to `s`, used from another stream: allowed (a hint here), and ordered after `s`'s
            // memset and before the host's read.
            let other = Stream::new(&d).unwrap();
            other.memset_async(&mut m, 5).unwrap();
            assert_eq!(m.to_vec().unwrap(), vec![0x0505_0505; 1024]);
            m.attach_async(&s, MemAttach::Global).unwrap();
            assert_eq!(
                (m.attachment(), m.attached_stream()),
                (MemAttach::Global, None)
            );
            assert_eq!(m.to_vec().unwrap(), vec![0x0505_0505; 1024]);
        }
        Err(e) => {
            assert_eq!(concurrent, 0, "{e}");
            assert!(matches!(e, Error::NotSupported { .. }), "{e}");
        }
    }
    assert!(matches!(
        ManagedBuffer::<u32>::zeroed_attached(&d, 8, MemAttach::Single),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn graph_instantiation_flags_and_half_precision_elements() {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let mut x = DeviceBuffer::<u32>::zeroed(&d, 256).unwrap();
    let cap = s.begin_capture(CaptureMode::Global).unwrap();
    s.fill_async(&mut x, 42).unwrap();
    let graph = cap.end().unwrap();
    for flags in [
        GraphInstantiateFlags::NONE,
        GraphInstantiateFlags::AUTO_FREE_ON_LAUNCH,
        GraphInstantiateFlags::AUTO_FREE_ON_LAUNCH | GraphInstantiateFlags::USE_NODE_PRIORITY,
    ] {
        x.copy_from_host(&[0; 256]).unwrap();
        let mut exec = graph.instantiate_with_flags(flags).unwrap();
        exec.launch(&s).unwrap();
        assert_eq!(x.to_vec().unwrap(), vec![42; 256], "{flags:?}");
    }
    // Upload at instantiation: HIP 6.1 added it on AMD. CUDA refuses it in cudaGraphInstantiateWithFlags
    // as an invalid value on every version (CUDA 12 takes it only through cudaGraphInstantiateWithParams;
    // measured: CUDA 11.8 and 12.9 on an H100).
    let runtime = hip::runtime_version().unwrap();
    let knows_upload = hip::PLATFORM == "amd" && runtime >= 60_100_000;
    match graph.instantiate_with_flags(GraphInstantiateFlags::UPLOAD) {
        Ok(mut exec) => {
            assert!(knows_upload, "runtime {runtime} accepted the upload flag");
            x.copy_from_host(&[0; 256]).unwrap();
            exec.launch(&s).unwrap();
            assert_eq!(x.to_vec().unwrap(), vec![42; 256]);
        }
        Err(e) => {
            assert!(!knows_upload, "runtime {runtime}: {e}");
            assert_eq!(
                e.hip_code().and_then(|c| c.name()),
                Some("hipErrorInvalidValue"),
                "{e}"
            );
        }
    }
    // f16 and bf16 elements: round trips and 2-byte fills.
    let h: Vec<f16> = (0..1000).map(|i| f16::from_f32(i as f32 * 0.5)).collect();
    let mut dh = DeviceBuffer::from_slice(&d, &h).unwrap();
    assert_eq!(dh.to_vec().unwrap(), h);
    s.fill_async(&mut dh, f16::from_f32(1.5)).unwrap();
    assert!(dh
        .to_vec()
        .unwrap()
        .iter()
        .all(|&v| v == f16::from_f32(1.5)));
    let b: Vec<bf16> = (0..1000)
        .map(|i| bf16::from_f32(i as f32 - 500.0))
        .collect();
    let db = DeviceBuffer::from_slice(&d, &b).unwrap();
    assert_eq!(db.to_vec().unwrap(), b);
}
