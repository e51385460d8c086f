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

fn voxel(x: usize, y: usize, z: usize, round: u32) -> f32 {
    (z * 10_000 + y * 100 + x) as f32 + round as f32 * 0.5
}

/// The element of a dense box of `dims` at `(x, y, z)`.
fn at(dims: [usize; 3], x: usize, y: usize, z: usize) -> usize {
    (z * dims[1] + y) * dims[0] + x
}

/// Pinned host sides of 3-D copies (`Stream::copy_3d_from_host_async`, `copy_3d_to_host_async`): a box of
/// a dense host volume -> a 3-D array on stream `a` (the host source rewritten at once: it waits for the
/// upload), a box of the array -> another host volume at an offset on stream `b` (ordered after the
/// upload by the array's record); the same through a pitched buffer at a nonzero x (no array takes
/// part: positions in bytes on AMD, elements on NVIDIA, which the crate's parameters follow); every
/// element outside the boxes untouched; then the refusals name the host side.
pub fn pinned_host_sides_of_3d_copies(d: &Device) {
    const DIMS: [usize; 3] = [9, 5, 4];
    let (a, b) = (
        Stream::non_blocking(d).unwrap(),
        Stream::non_blocking(d).unwrap(),
    );
    let mut arr = Array::<f32>::zeroed(
        d,
        Extent::new(DIMS[0], DIMS[1], DIMS[2]),
        ArrayFlags::DEFAULT,
    )
    .unwrap();
    let mut pitched = hip::memory::PitchedBuffer::<f32>::zeroed_3d(d, 12, 5, 4).unwrap();
    let src_dims = [DIMS[0] + 2, DIMS[1] + 1, DIMS[2]];
    let mut src = PinnedBuffer::<f32>::zeroed(d, src_dims.iter().product()).unwrap();
    let out_dims = [6, 4, 3];
    let (box_at, box_size, out_at) = ([2, 1, 1], [5, 3, 2], [1, 0, 1]);
    let mut out = PinnedBuffer::from_slice(d, &vec![-1.0f32; 6 * 4 * 3]).unwrap();
    for round in 0..3u32 {
        for z in 0..src_dims[2] {
            for y in 0..src_dims[1] {
                for x in 0..src_dims[0] {
                    src.as_mut_slice().unwrap()[at(src_dims, x, y, z)] = voxel(x, y, z, round);
                }
            }
        }
        // The array holds the source's box from (1, 1, 0).
        a.copy_3d_from_host_async(&src, src_dims, [1, 1, 0], &mut arr, [0; 3], DIMS)
            .unwrap();
        // The pitched buffer holds the same box at x = 3.
        a.copy_3d_from_host_async(&src, src_dims, [1, 1, 0], &mut pitched, [3, 0, 0], DIMS)
            .unwrap();
        src.as_mut_slice().unwrap().fill(f32::NAN); // waits for both uploads' reads
        for side in ["array", "pitched buffer"] {
            out.as_mut_slice().unwrap().fill(-1.0);
            if side == "array" {
                b.copy_3d_to_host_async(&arr, box_at, &mut out, out_dims, out_at, box_size)
                    .unwrap();
            } else {
                let p_at = [box_at[0] + 3, box_at[1], box_at[2]];
                b.copy_3d_to_host_async(&pitched, p_at, &mut out, out_dims, out_at, box_size)
                    .unwrap();
            }
            let got = out.as_slice().unwrap(); // waits for the download
            for z in 0..out_dims[2] {
                for y in 0..out_dims[1] {
                    for x in 0..out_dims[0] {
                        let inside = (0..3).all(|i| {
                            let c = [x, y, z][i];
                            c >= out_at[i] && c < out_at[i] + box_size[i]
                        });
                        let want = if inside {
                            // Box element (x, y, z) - out_at is array element + box_at, which is the
                            // source's element + (1, 1, 0).
                            let s = [
                                x - out_at[0] + box_at[0] + 1,
                                y - out_at[1] + box_at[1] + 1,
                                z - out_at[2] + box_at[2],
                            ];
                            voxel(s[0], s[1], s[2], round)
                        } else {
                            -1.0
                        };
                        let g = got[at(out_dims, x, y, z)];
                        assert_eq!(g, want, "round {round}, {side}: ({x}, {y}, {z})");
                    }
                }
            }
        }
    }
    // A box of more elements than the host memory holds, a box past the host volume, a wrong side.
    let err = a
        .copy_3d_from_host_async(&src, [100, 100, 100], [0; 3], &mut arr, [0; 3], [1, 1, 1])
        .unwrap_err();
    assert!(err.to_string().contains("source (host)"), "{err}");
    let err = b
        .copy_3d_to_host_async(&arr, [0; 3], &mut out, out_dims, [1, 0, 0], [6, 1, 1])
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("destination (host)") && msg.contains("along x"),
        "{msg}"
    );
    let err = a
        .copy_3d_from_host_async(&src, src_dims, [0; 3], &mut arr, [0, 0, 1], DIMS)
        .unwrap_err();
    assert!(err.to_string().contains("destination"), "{err}");
}
