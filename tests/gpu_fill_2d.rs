//! Fills of 8/16/32-bit values, pitched 2-D copies, managed prefetch/advice on a real device. Compiled only
//! with `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use hip::prelude::*;
use hip::{DeviceMemory, Error, MemAdvice};

use common::device;

#[test]
fn fills_write_every_element_of_each_width() {
    let d = device();
    let s = Stream::new(&d).unwrap();
    let mut a = DeviceBuffer::<u8>::zeroed(&d, 1001).unwrap();
    let mut b = DeviceBuffer::<u16>::zeroed(&d, 1001).unwrap();
    let mut c = DeviceBuffer::<u32>::zeroed(&d, 1001).unwrap();
    let mut f = DeviceBuffer::<f32>::zeroed(&d, 1001).unwrap();
    s.fill_async(&mut a, 0xAB).unwrap();
    s.fill_async(&mut b, 0xBEEF).unwrap();
    s.fill_async(&mut c, 0xDEAD_BEEF).unwrap();
    s.fill_async(&mut f, 1.5).unwrap();
    s.synchronize().unwrap();
    assert!(a.to_vec().unwrap().iter().all(|&v| v == 0xAB));
    assert!(b.to_vec().unwrap().iter().all(|&v| v == 0xBEEF));
    assert!(c.to_vec().unwrap().iter().all(|&v| v == 0xDEAD_BEEF));
    assert!(f.to_vec().unwrap().iter().all(|&v| v == 1.5));
    let mut wide = DeviceBuffer::<u64>::zeroed(&d, 4).unwrap();
    assert!(matches!(
        s.fill_async(&mut wide, 1),
        Err(Error::InvalidArgument {
            what: "fill element size",
            ..
        })
    ));
}

#[test]
fn two_d_copies_move_only_the_rectangle() {
    let d = device();
    // Host: 3 rows of 5, rows 7 apart. Device: rows 8 apart.
    let (w, h, sp, dp) = (5usize, 3usize, 7usize, 8usize);
    let src: Vec<u32> = (0..(sp * h) as u32).collect();
    let mut dev = DeviceBuffer::<u32>::from_slice(&d, &vec![u32::MAX; dp * h]).unwrap();
    dev.copy_2d_from_host(dp, &src, sp, w, h).unwrap();
    let got = dev.to_vec().unwrap();
    for r in 0..h {
        for c in 0..dp {
            let want = if c < w { src[r * sp + c] } else { u32::MAX };
            assert_eq!(got[r * dp + c], want, "row {r} col {c}");
        }
    }
    // src[0] is 0: a sentinel that no element of `src` is.
    let mut back = vec![u32::MAX; w * h];
    dev.copy_2d_to_host(dp, &mut back, w, w, h).unwrap();
    for r in 0..h {
        assert_eq!(&back[r * w..r * w + w], &src[r * sp..r * sp + w]);
    }
    assert!(matches!(
        dev.copy_2d_from_host(dp, &src[..10], sp, w, h),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        dev.copy_2d_to_host(dp, &mut back, 2, w, h),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn managed_prefetch_and_advice_where_supported() {
    let d = device();
    let concurrent = d
        .attribute(hip::sys::hipDeviceAttributeConcurrentManagedAccess)
        .unwrap()
        != 0;
    let mut m = ManagedBuffer::<u32>::zeroed(&d, 1 << 20).unwrap();
    m.as_mut_slice().unwrap().fill(7);
    let s = Stream::new(&d).unwrap();
    let r = m
        .advise(MemAdvice::SetReadMostly, Some(&d))
        .and_then(|()| s.prefetch_async(&m, Some(&d)));
    if concurrent {
        r.unwrap();
        // Migrated to the device: the device's write must come back with the pages.
        s.memset_async(&mut m, 0x09).unwrap();
        s.prefetch_async(&m, None).unwrap();
        s.synchronize().unwrap();
        m.advise(MemAdvice::UnsetReadMostly, Some(&d)).unwrap();
        assert!(m.as_slice().unwrap().iter().all(|&v| v == 0x0909_0909));
    } else {
        assert!(
            matches!(
                r,
                Err(Error::NotSupported {
                    what: "managed memory prefetch and advice",
                    ..
                })
            ),
            "{r:?}"
        );
        // Refused before anything moved: the host's values stay.
        assert!(m.as_slice().unwrap().iter().all(|&v| v == 7));
    }
    assert_eq!(m.len(), 1 << 20);
}

#[test]
fn byte_array_fills_and_a_one_row_pitch_overflowing_in_bytes() {
    let d = common::device();
    let s = Stream::new(&d).unwrap();
    // [u8; 4] has alignment 1: its fill value is read unaligned, byte for byte.
    let mut quad = DeviceBuffer::<[u8; 4]>::from_slice(&d, &[[9u8; 4]; 256]).unwrap();
    s.fill_async(&mut quad, [1, 2, 3, 4]).unwrap();
    assert!(quad.to_vec().unwrap().iter().all(|v| *v == [1, 2, 3, 4]));
    // One row with a pitch of usize::MAX elements fits check by rows, but not in bytes.
    let mut dst = DeviceBuffer::<u32>::from_slice(&d, &[5u32; 16]).unwrap();
    let err = dst
        .copy_2d_from_host(usize::MAX, &[1u32; 16], 16, 4, 1)
        .unwrap_err();
    assert!(err.to_string().contains("overflows"), "{err}");
    let mut host = [6u32; 16];
    let err = dst
        .copy_2d_to_host(16, &mut host, usize::MAX, 4, 1)
        .unwrap_err();
    assert!(err.to_string().contains("overflows"), "{err}");
    assert_eq!(dst.to_vec().unwrap(), [5u32; 16], "nothing written");
    assert_eq!(host, [6u32; 16], "nothing written");
}
