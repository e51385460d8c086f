//! Pinned host sides of array copies (`Stream::copy_2d_to_array_from_host_async`,
//! `copy_2d_from_array_to_host_async`), run on the GPU (tests/gpu_textures.rs) and under the shadow
//! runtime (tests/shadow_textures.rs, which also asserts no race is reported).

use hip::prelude::*;
use hip::texture::{Array, ArrayFlags, Extent};

const W: usize = 24;
const H: usize = 10;
/// Elements per row of the host source: wider than a row, so its pitch is not the row's size.
const SRC_ROW: usize = W + 3;

fn texel(x: usize, y: usize, round: u32) -> f32 {
    (y * 1000 + x) as f32 + round as f32 * 0.25
}

/// Host rows (pitch `SRC_ROW` elements) -> array on stream `a`, the host source rewritten at once (it
/// waits for the upload), then a box of the array -> host rows on stream `b` (ordered after the upload by
/// the array's record): the box has the first values, the host padding stays untouched; then the
/// refusals before HIP name the host side.
pub fn pinned_host_sides_of_array_copies(d: &Device) {
    let (a, b) = (
        Stream::non_blocking(d).unwrap(),
        Stream::non_blocking(d).unwrap(),
    );
    let mut arr = Array::<f32>::zeroed(d, Extent::new(W, H, 0), ArrayFlags::DEFAULT).unwrap();
    let mut src = PinnedBuffer::<f32>::zeroed(d, SRC_ROW * H).unwrap();
    let (bw, bh, at) = (W - 5, H - 3, (2, 1));
    let out_row = bw + 1;
    let mut out = PinnedBuffer::from_slice(d, &vec![-1.0f32; out_row * bh]).unwrap();
    for round in 0..3u32 {
        for (i, v) in src.as_mut_slice().unwrap().iter_mut().enumerate() {
            *v = texel(i % SRC_ROW, i / SRC_ROW, round);
        }
        a.copy_2d_to_array_from_host_async(&src, SRC_ROW * 4, &mut arr, (0, 0), W, H)
            .unwrap();
        // Waits for the upload's read of the source before the host writes it.
        src.as_mut_slice().unwrap().fill(f32::NAN);
        b.copy_2d_from_array_to_host_async(&arr, at, &mut out, out_row * 4, bw, bh)
            .unwrap();
        let got = out.as_slice().unwrap(); // waits for the download
        for y in 0..bh {
            for x in 0..bw {
                let want = texel(x + at.0, y + at.1, round);
                assert_eq!(got[y * out_row + x], want, "round {round}: ({x}, {y})");
            }
            assert_eq!(
                got[y * out_row + bw],
                -1.0,
                "round {round}: row {y}'s padding"
            );
        }
    }
    // The host side's pitch shorter than a row, and rows past its end.
    let err = a
        .copy_2d_to_array_from_host_async(&src, W * 4 - 4, &mut arr, (0, 0), W, H)
        .unwrap_err();
    assert!(err.to_string().contains("source (host)"), "{err}");
    let mut short = PinnedBuffer::<f32>::zeroed(d, out_row * (bh - 1)).unwrap();
    let err = b
        .copy_2d_from_array_to_host_async(&arr, at, &mut short, out_row * 4, bw, bh)
        .unwrap_err();
    assert!(err.to_string().contains("destination (host)"), "{err}");
    // A region past the array.
    let err = b
        .copy_2d_from_array_to_host_async(&arr, (W - 1, 0), &mut out, out_row * 4, bw, 1)
        .unwrap_err();
    assert!(err.to_string().contains("source"), "{err}");
}
