//! Unit tests (no GPU).

use super::*;
use std::ops::Bound::*;

/// An allocation of no memory on a device record made without a GPU: views of it can be taken and
/// checked, and nothing in these tests hands it to HIP.
fn allocation() -> Arc<Allocation> {
    Allocation::new(
        std::ptr::null_mut(),
        &Device::for_unit_tests(0),
        tracking::Release::Nothing,
    )
}

const BASE: usize = 0x10_0000;

#[test]
fn views_point_at_their_first_element_and_keep_their_parents_allocation() {
    let a = allocation();
    let v = DeviceSlice::<u32>::new(BASE as DevicePtr, 10, &a);
    assert_eq!((v.len(), v.byte_len(), v.is_empty()), (10, 40, false));
    let s = v.slice(2..7).unwrap();
    assert_eq!(
        (s.device_ptr() as usize, s.len(), s.byte_len()),
        (BASE + 8, 5, 20)
    );
    assert!(Arc::ptr_eq(s.allocation(), &a));
    // A view of a view.
    let t = s.slice(1..=1).unwrap();
    assert_eq!((t.device_ptr() as usize, t.len()), (BASE + 12, 1));
    let end = v.slice(10..).unwrap();
    assert_eq!((end.device_ptr() as usize, end.len()), (BASE + 40, 0));
    assert!(end.is_empty());
    assert!(matches!(
        v.slice(3..11),
        Err(Error::OutOfBounds {
            start: 3,
            end: 11,
            len: 10
        })
    ));
    let mut m = DeviceSliceMut::<[u8; 3]>::new(BASE as DevicePtr, 10, &a);
    assert_eq!(m.byte_len(), 30);
    let tail = m.slice_mut(4..).unwrap();
    assert_eq!((tail.device_ptr() as usize, tail.len()), (BASE + 12, 6));
    assert!(Arc::ptr_eq(tail.allocation(), &a));
    assert!(matches!(
        m.slice_mut(..11),
        Err(Error::OutOfBounds { end: 11, .. })
    ));
    assert!(DeviceSlice::<u64>::new(BASE as DevicePtr, 0, &a).is_empty());
}

#[test]
fn split_views_cover_the_whole_without_overlap_and_reinterpreted_views_count_bytes() {
    let a = allocation();
    let mut m = DeviceSliceMut::<u32>::new(BASE as DevicePtr, 10, &a);
    for mid in [0, 1, 3, 10] {
        let (lo, hi) = m.split_at_mut(mid).unwrap();
        assert_eq!((lo.device_ptr() as usize, lo.len()), (BASE, mid));
        assert_eq!(
            (hi.device_ptr() as usize, hi.len()),
            (BASE + 4 * mid, 10 - mid)
        );
        assert!(Arc::ptr_eq(lo.allocation(), &a) && Arc::ptr_eq(hi.allocation(), &a));
    }
    assert!(matches!(
        m.split_at_mut(11),
        Err(Error::OutOfBounds {
            end: 11,
            len: 10,
            ..
        })
    ));
    // The same from shared memory (`&self`): two read-only views, while the parent is still readable.
    let r = DeviceSlice::<u32>::new(BASE as DevicePtr, 10, &a);
    for mid in [0, 4, 10] {
        let (lo, hi) = r.split_at(mid).unwrap();
        assert_eq!((lo.device_ptr() as usize, lo.len()), (BASE, mid));
        assert_eq!(
            (hi.device_ptr() as usize, hi.len()),
            (BASE + 4 * mid, 10 - mid)
        );
        assert!(Arc::ptr_eq(lo.allocation(), &a) && Arc::ptr_eq(hi.allocation(), &a));
        // Both views and the parent may be read at once.
        assert_eq!(lo.len() + hi.len(), r.len());
    }
    assert!(matches!(
        r.split_at(11),
        Err(Error::OutOfBounds {
            end: 11,
            len: 10,
            ..
        })
    ));
    let v = DeviceSlice::<[u16; 2]>::new(BASE as DevicePtr, 6, &a);
    let bytes = v.reinterpret::<u8>().unwrap();
    assert_eq!((bytes.device_ptr() as usize, bytes.len()), (BASE, 24));
    assert_eq!(v.reinterpret::<u64>().unwrap().len(), 3);
    assert!(v.reinterpret::<[u8; 5]>().is_err());
    let w = m.reinterpret_mut::<u16>().unwrap();
    assert_eq!((w.len(), w.byte_len()), (20, 40));
    assert!(Arc::ptr_eq(w.allocation(), &a));
}

#[test]
fn copies_of_another_length_are_refused_before_hip() {
    let a = allocation();
    let v = DeviceSlice::<u32>::new(BASE as DevicePtr, 10, &a);
    let mut m = DeviceSliceMut::<u32>::new(BASE as DevicePtr, 10, &a);
    let mismatch = |r: Result<()>, what: &str, expected: usize, actual: usize| match r {
        Err(Error::LengthMismatch {
            what: w,
            expected: e,
            actual: a,
        }) => assert_eq!((w, e, a), (what, expected, actual)),
        other => panic!("{what}: {other:?}"),
    };
    mismatch(v.copy_to_host(&mut [0; 9]), "copy_to_host", 10, 9);
    mismatch(v.copy_to_host(&mut [0; 11]), "copy_to_host", 10, 11);
    mismatch(m.copy_from_host(&[0; 9]), "copy_from_host", 10, 9);
    mismatch(m.copy_from_host(&[]), "copy_from_host", 10, 0);
    let short = DeviceSlice::<u32>::new(BASE as DevicePtr, 9, &a);
    mismatch(m.copy_from_device(&short), "copy_from_device", 10, 9);
}

#[test]
fn operations_with_no_bytes_to_move_succeed_without_hip() {
    let a = allocation();
    let empty = DeviceSlice::<u32>::new(BASE as DevicePtr, 0, &a);
    empty.copy_to_host(&mut []).unwrap();
    assert!(empty.to_vec().unwrap().is_empty());
    let mut m = DeviceSliceMut::<u32>::new(BASE as DevicePtr, 0, &a);
    m.copy_from_host(&[]).unwrap();
    m.copy_from_device(&empty).unwrap();
    m.memset_bytes(0xff).unwrap();
    m.zero().unwrap();
    // Zero-sized elements: any number of them is no bytes.
    let zst = DeviceSlice::<[u32; 0]>::new(BASE as DevicePtr, 5, &a);
    assert_eq!(zst.byte_len(), 0);
    assert_eq!(zst.to_vec().unwrap().len(), 5);
    zst.copy_to_host(&mut [[]; 5]).unwrap();
    let mut zm = DeviceSliceMut::<[u32; 0]>::new(BASE as DevicePtr, usize::MAX, &a);
    // A length mismatch, even with no bytes.
    assert!(matches!(
        zm.copy_from_host(&[]),
        Err(Error::LengthMismatch {
            expected: usize::MAX,
            actual: 0,
            ..
        })
    ));
    zm.memset_bytes(1).unwrap();
    let big = DeviceSlice::<[u32; 0]>::new(BASE as DevicePtr, usize::MAX, &a);
    zm.copy_from_device(&big).unwrap();
    assert_eq!(big.to_vec().unwrap().len(), usize::MAX);
}

#[test]
fn ranges_at_the_extremes_are_checked_without_overflow() {
    let m = usize::MAX;
    assert_eq!(bounds(.., m).unwrap(), (0, m));
    assert_eq!(bounds(m.., m).unwrap(), (m, m));
    assert_eq!(bounds(..m, m).unwrap(), (0, m));
    assert!(matches!(bounds(..=m, m), Err(Error::OutOfBounds { .. })));
    assert!(matches!(
        bounds((Excluded(m), Unbounded), m),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        bounds((Included(1), Excluded(0)), 4),
        Err(Error::OutOfBounds {
            start: 1,
            end: 0,
            len: 4
        })
    ));
    assert!(matches!(bounds(0..5, 4), Err(Error::OutOfBounds { .. })));
    assert_eq!(bounds((Excluded(2), Included(3)), 4).unwrap(), (3, 4));
    assert_eq!(bounds(0..0, 0).unwrap(), (0, 0));
}

#[test]
fn byte_sizes_overflow_into_an_error() {
    assert!(matches!(
        byte_size::<u64>(usize::MAX),
        Err(Error::AllocationTooLarge {
            elements: usize::MAX,
            elem_bytes: 8
        })
    ));
    assert_eq!(byte_size::<[u8; 0]>(usize::MAX).unwrap(), 0);
    assert_eq!(byte_size::<u8>(usize::MAX).unwrap(), usize::MAX);
    assert_eq!(byte_size::<u32>(usize::MAX / 4).unwrap(), usize::MAX - 3);
    // One element past the largest that fits, for an element size that is not a power of two.
    let most = usize::MAX / 3;
    assert_eq!(byte_size::<[u8; 3]>(most).unwrap(), most * 3);
    assert!(matches!(
        byte_size::<[u8; 3]>(most + 1),
        Err(Error::AllocationTooLarge {
            elements,
            elem_bytes: 3
        }) if elements == most + 1
    ));
    assert_eq!(byte_size::<u64>(0).unwrap(), 0);
    assert_eq!(byte_size::<u16>(5).unwrap(), 10);
}

#[test]
fn equal_lengths_pass_and_others_name_both_lengths_and_the_operation() {
    check_len("copy", 0, 0).unwrap();
    check_len("copy", usize::MAX, usize::MAX).unwrap();
    for (expected, actual) in [(4, 3), (3, 4), (0, 1), (1, 0), (usize::MAX, 0)] {
        let err = check_len("copy_to_host", expected, actual).unwrap_err();
        assert!(
            matches!(
                err,
                Error::LengthMismatch { what: "copy_to_host", expected: e, actual: a }
                    if (e, a) == (expected, actual)
            ),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            format!("length mismatch in copy_to_host: expected {expected} elements, got {actual}")
        );
    }
}

#[test]
fn views_start_at_their_first_elements_byte() {
    assert_eq!(element_offset::<u32>(0), 0);
    assert_eq!(element_offset::<u32>(5), 20);
    assert_eq!(element_offset::<[u8; 3]>(7), 21);
    assert_eq!(element_offset::<[u32; 0]>(usize::MAX), 0);
    let base = 0x1000 as DevicePtr;
    assert_eq!(offset(base, 0), base);
    assert_eq!(offset(base, 24) as usize, 0x1018);
    // Addresses wrap instead of overflowing (a zero-sized buffer's dangling pointer may be anywhere).
    assert_eq!(offset(usize::MAX as DevicePtr, 2) as usize, 1);
}

#[test]
fn ranges_inside_the_buffer_give_their_start_and_end() {
    assert_eq!(bounds(2..5, 10).unwrap(), (2, 5));
    assert_eq!(bounds(2..=5, 10).unwrap(), (2, 6));
    assert_eq!(bounds(..=9, 10).unwrap(), (0, 10));
    assert_eq!(bounds(3.., 10).unwrap(), (3, 10));
    assert_eq!(bounds(10.., 10).unwrap(), (10, 10));
    assert_eq!(bounds(4..4, 10).unwrap(), (4, 4));
    assert_eq!(bounds((Excluded(3), Excluded(5)), 10).unwrap(), (4, 5));
    // One past the end, and a start past the end, are refused naming the range and the length.
    assert!(matches!(
        bounds(..=10, 10),
        Err(Error::OutOfBounds {
            start: 0,
            end: 11,
            len: 10
        })
    ));
    assert!(matches!(
        bounds(11.., 10),
        Err(Error::OutOfBounds {
            start: 11,
            end: 10,
            len: 10
        })
    ));
    assert!(matches!(
        bounds(..=usize::MAX, usize::MAX),
        Err(Error::OutOfBounds {
            start: usize::MAX,
            end: usize::MAX,
            len: usize::MAX
        })
    ));
}
