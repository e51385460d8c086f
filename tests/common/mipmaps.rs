//! Mipmapped arrays (`hip::texture::MipmappedArray`), run on the GPU (tests/gpu_textures.rs, which also
//! checks what the kernel sampled) and under the shadow runtime (tests/shadow_textures.rs, which runs no
//! kernel body and asserts no race is reported): every level written on one stream, sampled through one
//! texture on a second and read back on a third, then a level rewritten on the first while the sampling
//! may still run (it waits for it); the refusals before HIP; a level's array kept after its mipmapped
//! array is dropped, and both dropped under a queued fetch.

use hip::prelude::*;
use hip::texture::{Extent, FilterMode, MipmappedArray, TextureDesc, TextureObject};

const W: usize = 32;
const H: usize = 16;
const LEVELS: u32 = 4;

fn texel(level: u32, i: usize, round: u32) -> f32 {
    (level * 1000 + round * 500) as f32 + i as f32
}

/// Sample level `level` (of extent `e`) of `t` at every texel centre into `out` on `s`: `fetch_lod` of
/// tests/common/textures.rs.
fn fetch_level(
    m: &Module,
    s: &Stream,
    t: &TextureObject,
    level: u32,
    e: Extent,
    out: &mut DeviceBuffer<f32>,
) {
    let (w, h) = (e.width as u32, e.height as u32);
    let lod = level as f32;
    let mut args = LaunchArgs::new();
    args.arg(t).arg(&lod).arg_mut(out).arg(&w).arg(&h);
    let f = m.function("fetch_lod").unwrap();
    // SAFETY: fetch_lod(texture, float, float*, unsigned, unsigned) reads the texture and writes
    // out[..w * h], which `out` holds.
    unsafe { f.launch(s, &LaunchConfig::for_num_elems(w * h), &mut args) }.unwrap();
}

/// The case; returns what each level's fetch sampled in the first round (level by level), for the GPU
/// test to compare with [`expected`].
pub fn levels_written_sampled_and_read_back_on_three_streams(
    d: &Device,
    m: &Module,
) -> Vec<Vec<f32>> {
    let (a, b, c) = (
        Stream::non_blocking(d).unwrap(),
        Stream::non_blocking(d).unwrap(),
        Stream::non_blocking(d).unwrap(),
    );
    let mip = MipmappedArray::<f32>::zeroed(d, Extent::new(W, H, 0), LEVELS).unwrap();
    let desc = TextureDesc {
        normalized_coords: true,
        ..TextureDesc::default()
    };
    let t = TextureObject::from_mipmapped(&mip, &desc).unwrap();
    let mut sampled = Vec::new();
    for round in 0..2u32 {
        let mut outs = Vec::new();
        for l in 0..LEVELS {
            let e = mip.level_extent(l).unwrap();
            let n = e.width * e.height;
            let src: Vec<f32> = (0..n).map(|i| texel(l, i, round)).collect();
            let src = DeviceBuffer::from_slice(d, &src).unwrap();
            let mut level = mip.level(l).unwrap();
            assert_eq!(level.extent(), e);
            // Round 1 rewrites the levels on `a` while round 0's fetches on `b` may still run.
            a.copy_2d_to_array_async(&src, e.width * 4, &mut level, (0, 0), e.width, e.height)
                .unwrap();
            let mut out = DeviceBuffer::<f32>::zeroed(d, n).unwrap();
            fetch_level(m, &b, &t, l, e, &mut out);
            outs.push(out);
            let mut back = DeviceBuffer::<f32>::zeroed(d, n).unwrap();
            c.copy_2d_from_array_async(&level, (0, 0), &mut back, e.width * 4, e.width, e.height)
                .unwrap();
            let want: Vec<f32> = (0..n).map(|i| texel(l, i, round)).collect();
            assert_eq!(
                back.to_vec().unwrap(),
                want,
                "level {l}, round {round}, read back"
            );
        }
        if round == 0 {
            sampled = outs.iter().map(|o| o.to_vec().unwrap()).collect();
        }
    }
    b.synchronize().unwrap();

    // Refusals before HIP, each naming what is wrong.
    let e = MipmappedArray::<f32>::zeroed(d, Extent::new(W, H, 0), 0).unwrap_err();
    assert!(e.to_string().contains("mipmap levels"), "{e}");
    let e = MipmappedArray::<f32>::zeroed(d, Extent::new(W, H, 0), 7).unwrap_err();
    assert!(e.to_string().contains("1 to 6 levels"), "{e}");
    let e = mip.level(LEVELS).unwrap_err();
    assert!(e.to_string().contains("has 4 levels"), "{e}");
    let ints = MipmappedArray::<u32>::zeroed(d, Extent::new(8, 8, 0), 2).unwrap();
    let blend = TextureDesc {
        mipmap_filter: FilterMode::Linear,
        ..TextureDesc::default()
    };
    let e = TextureObject::from_mipmapped(&ints, &blend).unwrap_err();
    assert!(e.to_string().contains("mipmap_filter Linear"), "{e}");
    let nan = TextureDesc {
        mipmap_level_clamp: [f32::NAN, 1.0],
        ..TextureDesc::default()
    };
    let e = TextureObject::from_mipmapped(&mip, &nan).unwrap_err();
    assert!(e.to_string().contains("clamp"), "{e}");

    // A level outlives its mipmapped array; both (and the texture) go under a queued fetch.
    let last = mip.level(LEVELS - 1).unwrap();
    let e = last.extent();
    let mut out = DeviceBuffer::<f32>::zeroed(d, e.width * e.height).unwrap();
    fetch_level(m, &b, &t, LEVELS - 1, e, &mut out);
    drop((t, mip));
    let mut back = DeviceBuffer::<f32>::zeroed(d, e.width * e.height).unwrap();
    c.copy_2d_from_array_async(&last, (0, 0), &mut back, e.width * 4, e.width, e.height)
        .unwrap();
    let want: Vec<f32> = (0..e.width * e.height)
        .map(|i| texel(LEVELS - 1, i, 1))
        .collect();
    assert_eq!(
        back.to_vec().unwrap(),
        want,
        "the last level after its mipmapped array went"
    );
    drop(last);
    b.synchronize().unwrap();
    sampled
}

/// What [`levels_written_sampled_and_read_back_on_three_streams`]'s first round samples at level `l`.
pub fn expected(l: u32) -> Vec<f32> {
    let e = hip::texture::Extent::new((W >> l).max(1), (H >> l).max(1), 0);
    (0..e.width * e.height).map(|i| texel(l, i, 0)).collect()
}

pub const LEVEL_COUNT: u32 = LEVELS;
