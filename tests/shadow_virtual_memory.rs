//! Virtual memory (issue 57, family 3) under the shadow HIP runtime (scripts/shadow.sh), which models
//! reserved ranges, mapped chunks and access per device: a `GrowableBuffer` keeps its contents and its
//! address across growth, its growth and its unmapping are ordered after queued work on other streams
//! (the shadow logs an unmap as a free: one under queued work is a reported race), granularity rounding
//! and overflow are refused clearly. In a child process (so this process's reports stay clean), the
//! detector is shown to see what the crate prevents: an unmap under queued work, and an access where
//! nothing is mapped.
#![cfg(feature = "shadow")]

mod shadow;

use hip::memory::{Granularity, GrowableBuffer, MemAccess};
use hip::prelude::*;
use hip::result::vmm;
use shadow::assert_no_reports;

const CHILD: &str = "HIP_RS_SHADOW_VMM_CHILD";

fn device() -> Device {
    Device::get(0).expect("the shadow runtime's device 0")
}

/// Physical memory exported as a file descriptor and imported (as another process would; here the same
/// one, which the shadow allows): the import has the exporter's size and maps; memory not made
/// shareable, a descriptor that is no export, a size of 0 and a mapping larger than the export are
/// refused, each naming its call.
#[test]
fn shareable_physical_memory_exports_and_imports() {
    use hip::memory::{AddressRange, PhysicalMemory};
    use std::os::fd::AsFd;
    let d = device();
    let g = d.allocation_granularity(Granularity::Minimum).unwrap();
    let mine = PhysicalMemory::new_shareable(&d, 1).unwrap();
    assert_eq!(mine.size(), g);
    let fd = mine.export_fd().unwrap();
    let theirs = PhysicalMemory::import(&d, fd.as_fd(), mine.size()).unwrap();
    assert_eq!(theirs.size(), g);
    let (a, b) = (
        AddressRange::reserve(&d, g).unwrap(),
        AddressRange::reserve(&d, g).unwrap(),
    );
    // SAFETY: nothing uses either mapping; each drops before its range.
    let (ma, mb) = unsafe { (a.map(0, mine).unwrap(), b.map(0, theirs).unwrap()) };
    assert_eq!((ma.size(), mb.size()), (g, g));
    drop((ma, mb));

    let plain = PhysicalMemory::new(&d, g).unwrap();
    let e = plain.export_fd().unwrap_err();
    assert!(
        e.to_string().contains("hipMemExportToShareableHandle"),
        "{e}"
    );
    let null = std::fs::File::open("/dev/null").unwrap();
    let e = PhysicalMemory::import(&d, null.as_fd(), g).unwrap_err();
    assert!(
        e.to_string().contains("hipMemImportFromShareableHandle"),
        "{e}"
    );
    let e = PhysicalMemory::import(&d, fd.as_fd(), 0).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    // An importer that claims more than was exported: the mapping is refused.
    let big = PhysicalMemory::import(&d, fd.as_fd(), 2 * g).unwrap();
    let range = AddressRange::reserve(&d, 2 * g).unwrap();
    // SAFETY: refused before anything is mapped.
    let e = unsafe { range.map(0, big) }.unwrap_err();
    assert!(e.to_string().contains("hipMemMap"), "{e}");
    assert_no_reports();
}

/// The properties physical memory was made with, and a mapping's memory retained: the retained reference
/// keeps the allocation after the mapping and its own handle are gone, so it maps again elsewhere (with
/// the shadow's retain not counting a reference, that mapping is refused); an address nothing maps is
/// refused naming the call.
#[test]
fn mapped_memory_is_retained_and_reports_its_properties() {
    use hip::memory::{AddressRange, PhysicalMemory};
    let d = device();
    let g = d.allocation_granularity(Granularity::Minimum).unwrap();
    let memory = PhysicalMemory::new(&d, g).unwrap();
    let props = memory.properties().unwrap();
    assert_eq!(props.ordinal, d.ordinal());
    assert!(props.pinned && !props.exportable_as_fd, "{props:?}");
    #[cfg(unix)]
    {
        let shareable = PhysicalMemory::new_shareable(&d, g).unwrap();
        assert!(shareable.properties().unwrap().exportable_as_fd);
    }
    let (a, b) = (
        AddressRange::reserve(&d, g).unwrap(),
        AddressRange::reserve(&d, g).unwrap(),
    );
    // SAFETY: nothing uses the mappings; each drops before its range.
    let mapping = unsafe { a.map(0, memory) }.unwrap();
    let retained = mapping.retain_physical().unwrap();
    assert_eq!(
        (retained.size(), retained.properties().unwrap()),
        (g, props)
    );
    drop(mapping);
    // SAFETY: as above.
    let again = unsafe { b.map(0, retained) }.unwrap();
    assert_eq!(again.size(), g);
    let mut word = 0u64;
    let e = hip::result::vmm_query::retain(&mut word as *mut u64 as usize).unwrap_err();
    assert!(
        e.to_string().contains("hipMemRetainAllocationHandle"),
        "{e}"
    );
    drop(again);
    assert_no_reports();
}

#[test]
fn granularity_rounding_and_overflow() {
    let d = device();
    let g = d.allocation_granularity(Granularity::Minimum).unwrap();
    assert!(g.is_power_of_two());
    assert_eq!(
        d.allocation_granularity(Granularity::Recommended).unwrap() % g,
        0
    );
    let b = GrowableBuffer::<u32>::new(&d, 3).unwrap();
    assert_eq!((b.len(), b.capacity(), b.mapped_bytes()), (0, g / 4, 0));
    assert_eq!(b.granularity(), g);
    assert!(matches!(
        GrowableBuffer::<u64>::new(&d, usize::MAX).unwrap_err(),
        Error::AllocationTooLarge { .. }
    ));
    // A byte size that fits but whose rounding to the granularity does not.
    assert!(matches!(
        GrowableBuffer::<u8>::new(&d, usize::MAX - 1).unwrap_err(),
        Error::AllocationTooLarge { .. }
    ));
    let mut b = GrowableBuffer::<u32>::from_slice(&d, 16, &[1, 2]).unwrap();
    let e = b.grow_to(b.capacity() + 1).unwrap_err();
    assert!(matches!(e, Error::OutOfBounds { .. }), "{e}");
    assert_eq!(
        b.to_vec().unwrap(),
        [1, 2],
        "a refused growth changes nothing"
    );
    let e = b.extend_from_slice(&vec![0; b.capacity()]).unwrap_err();
    assert!(matches!(e, Error::OutOfBounds { .. }), "{e}");
    assert_eq!(b.len(), 2);
    assert_no_reports();
}

#[test]
fn contents_and_address_are_kept_across_growth() {
    let d = device();
    let g = d.allocation_granularity(Granularity::Minimum).unwrap();
    let per_chunk = g / 4;
    let first: Vec<u32> = (0..per_chunk as u32 + 5).collect();
    let mut b = GrowableBuffer::<u32>::from_slice(&d, 8 * per_chunk, &first).unwrap();
    let address = b.device_ptr();
    assert_eq!(b.mapped_bytes(), 2 * g);
    b.grow_to(5 * per_chunk + 1).unwrap();
    assert_eq!(b.device_ptr(), address, "growth keeps the address");
    assert_eq!(b.mapped_bytes(), 6 * g);
    let all = b.to_vec().unwrap();
    assert_eq!(&all[..first.len()], &first[..]);
    assert!(
        all[first.len()..].iter().all(|&x| x == 0),
        "new elements are zero"
    );
    assert_eq!(b.access(&d).unwrap(), MemAccess::ReadWrite);
    // Copies that span chunks, both ways.
    let tail: Vec<u32> = (0..3 * per_chunk as u32).map(|x| x * 7).collect();
    b.slice_mut(per_chunk..4 * per_chunk)
        .unwrap()
        .copy_from_host(&tail)
        .unwrap();
    assert_eq!(
        b.slice(per_chunk..4 * per_chunk).unwrap().to_vec().unwrap(),
        tail
    );
    // Truncate keeps the mapping; growing back zeroes.
    b.truncate(per_chunk);
    assert_eq!(b.mapped_bytes(), 6 * g);
    b.grow_to(per_chunk + 4).unwrap();
    assert_eq!(b.slice(per_chunk..).unwrap().to_vec().unwrap(), [0; 4]);
    b.shrink_to_fit().unwrap();
    assert_eq!(
        b.mapped_bytes(),
        2 * g,
        "the chunks wholly past the length are unmapped"
    );
    b.grow_to(3 * per_chunk).unwrap();
    assert_eq!(b.to_vec().unwrap()[..per_chunk], first[..per_chunk]);
    assert_no_reports();
}

/// Work queued on other streams uses the buffer while it grows, shrinks and drops: the growth's memset,
/// the unmap of `shrink_to_fit` and the unmap at drop are ordered after it (the shadow reports any unmap
/// that is not).
#[test]
fn growth_shrink_and_drop_are_ordered_after_queued_work() {
    let d = device();
    let per_chunk = d.allocation_granularity(Granularity::Minimum).unwrap() / 4;
    let a = Stream::non_blocking(&d).unwrap();
    let c = Stream::non_blocking(&d).unwrap();
    for _ in 0..4 {
        let mut b = GrowableBuffer::<u32>::new(&d, 16 * per_chunk).unwrap();
        b.grow_to(2 * per_chunk).unwrap();
        a.memset_async(&mut b, 1).unwrap();
        let mut out = DeviceBuffer::<u32>::zeroed(&d, 2 * per_chunk).unwrap();
        c.copy_device_async(&b, &mut out).unwrap();
        // Growth while `a` and `c` may still run: the mapped part is untouched, the new part zeroed
        // after them.
        b.grow_to(6 * per_chunk).unwrap();
        a.memset_async(&mut b.slice_mut(2 * per_chunk..).unwrap(), 2)
            .unwrap();
        c.copy_device_async(&b.slice(..2 * per_chunk).unwrap(), &mut out)
            .unwrap();
        b.truncate(per_chunk);
        b.shrink_to_fit().unwrap();
        assert_eq!(b.to_vec().unwrap(), vec![0x0101_0101; per_chunk]);
        b.grow_to(8 * per_chunk).unwrap();
        a.memset_async(&mut b, 3).unwrap();
        drop(b); // unmapped once `a`'s memset is done
        assert_eq!(out.to_vec().unwrap(), vec![0x0101_0101; 2 * per_chunk]);
    }
    a.synchronize().unwrap();
    assert_no_reports();
}

/// A captured graph keeps the memory mapped: shrinking is refused while it lives.
#[test]
fn shrink_is_refused_while_a_graph_holds_the_buffer() {
    let d = device();
    let per_chunk = d.allocation_granularity(Granularity::Minimum).unwrap() / 4;
    let s = Stream::non_blocking(&d).unwrap();
    let mut b = GrowableBuffer::<u32>::new(&d, 4 * per_chunk).unwrap();
    b.grow_to(per_chunk).unwrap();
    b.grow_to(3 * per_chunk).unwrap(); // a second chunk
    let capture = s.begin_capture(CaptureMode::Global).unwrap();
    s.memset_async(&mut b, 7).unwrap();
    let graph = capture.end().unwrap();
    b.truncate(1);
    let e = b.shrink_to_fit().unwrap_err();
    assert!(e.to_string().contains("graph"), "{e}");
    let mut exec = graph.instantiate().unwrap();
    exec.launch(&s).unwrap();
    drop((exec, graph));
    b.shrink_to_fit().unwrap();
    assert_eq!(b.mapped_bytes(), b.granularity());
    assert_eq!(b.to_vec().unwrap(), [0x0707_0707]);
    assert_no_reports();
}

#[test]
#[ignore = "run by the_detector_sees_an_unmap_under_work_and_an_unmapped_access in a child process"]
fn raw_misuse_in_child() {
    let d = device();
    let g = d.allocation_granularity(Granularity::Minimum).unwrap();
    let s = Stream::non_blocking(&d).unwrap();
    let base = vmm::address_reserve(4 * g, g).unwrap();
    let h = vmm::create(0, g).unwrap();
    let what = std::env::var(CHILD).unwrap();
    // SAFETY (all below): addresses of this reservation; the misuse is the point, and the shadow's memory
    // behind a reservation stays allocated, so nothing here touches freed host memory.
    unsafe {
        vmm::map(base, g, h).unwrap();
        vmm::set_access(base, g, 0, vmm::ACCESS_READ_WRITE).unwrap();
        match what.as_str() {
            "ordered" => {
                hip::result::memset_async(base, 1, g, s.raw()).unwrap();
                s.synchronize().unwrap();
                vmm::unmap(base, g).unwrap();
            }
            "unmap-under-work" => {
                hip::result::memset_async(base, 1, g, s.raw()).unwrap();
                vmm::unmap(base, g).unwrap();
                s.synchronize().unwrap();
            }
            _ => {
                // Past the mapped chunk, inside the reservation.
                let past = base.cast::<u8>().add(g).cast();
                hip::result::memset_async(past, 1, 64, s.raw()).unwrap();
                s.synchronize().unwrap();
                vmm::unmap(base, g).unwrap();
            }
        }
        vmm::release(h).unwrap();
        vmm::address_free(base, 4 * g).unwrap();
    }
    println!("SHADOW reports={}", shadow::reports());
}

fn child_reports(what: &str) -> usize {
    shadow::run_child("raw_misuse_in_child", &[(CHILD, Some(what))]).field("reports")
}

#[test]
fn the_detector_sees_an_unmap_under_work_and_an_unmapped_access() {
    assert_eq!(
        child_reports("ordered"),
        0,
        "an unmap after the work: no report"
    );
    assert!(
        child_reports("unmap-under-work") > 0,
        "the unmap races the memset"
    );
    assert!(
        child_reports("unmapped-access") > 0,
        "nothing is mapped there"
    );
}
