//! Arrays, 3-D memory, texture and surface objects on a real device (issue 57, family 7), ported from
//! AMD's hip-tests (`catch/unit/texture`: hipTextureObj2D / hipTextureObjFetchVector / hipNormalizedFloat /
//! hipTextureMipmapObj2D's address-mode cases; `catch/unit/surface`: hipSurfaceObj2D;
//! `catch/unit/memory`: hipMallocArray, hipMalloc3D, hipMallocPitch, hipMemcpy2DAsync,
//! hipMemcpy2DToArrayAsync, hipMemcpy2DFromArrayAsync, hipMemcpy3DAsync): values checked against the
//! host, linear filtering against a host bilinear reference with a tolerance derived from the hardware's
//! 8-bit fractional interpolation weights. Compiled only with `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use common::device;
use common::textures::fetch_2d;
use hip::memory::PitchedBuffer;
use hip::prelude::*;
use hip::texture::{
    AddressMode, Array, ArrayFlags, Extent, FilterMode, ReadMode, SurfaceObject, TextureDesc,
    TextureObject,
};

fn module(d: &Device) -> Module {
    common::load(d, common::textures::KERNELS)
}

/// A texel image with distinct, uneven values.
fn image(w: usize, h: usize) -> Vec<f32> {
    (0..w * h)
        .map(|i| ((i * 37 % 101) as f32) * 0.25 - 7.0)
        .collect()
}

/// An array of `w` x `h` floats holding `texels`, filled through a device buffer.
fn array_of(d: &Device, s: &Stream, texels: &[f32], w: usize, h: usize) -> Array<f32> {
    let mut a = Array::<f32>::zeroed(d, Extent::new(w, h, 0), ArrayFlags::DEFAULT).unwrap();
    let src = DeviceBuffer::from_slice(d, texels).unwrap();
    // A 1-D array (h == 0) is one row to a 2-D copy: zero rows would copy nothing.
    s.copy_2d_to_array_async(&src, w * 4, &mut a, (0, 0), w, h.max(1))
        .unwrap();
    a
}

/// `fetch1d` at each normalized or texel coordinate.
fn fetch_1d(m: &Module, s: &Stream, t: &TextureObject, us: &[f32]) -> Vec<f32> {
    let d = s.device();
    let u = DeviceBuffer::from_slice(d, us).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(d, us.len()).unwrap();
    let n = us.len() as u32;
    let mut args = LaunchArgs::new();
    args.arg(t).arg(&u).arg_mut(&mut out).arg(&n);
    let f = m.function("fetch1d").unwrap();
    // SAFETY: (texture, const float*, float*, unsigned) as fetch1d takes them.
    unsafe { f.launch(s, &LaunchConfig::for_num_elems(n), &mut args) }.unwrap();
    out.to_vec().unwrap()
}

#[test]
fn point_filtering_reads_each_texel_exactly() {
    // hip-tests hipTextureObj2D (point, element type, unnormalized coordinates).
    let d = device();
    let (m, s) = (module(&d), Stream::new(&d).unwrap());
    let (w, h) = (37, 19);
    let texels = image(w, h);
    let a = array_of(&d, &s, &texels, w, h);
    let t = TextureObject::from_array(&a, &TextureDesc::default()).unwrap();
    let xy: Vec<_> = (0..w * h)
        .map(|i| ((i % w) as f32 + 0.5, (i / w) as f32 + 0.5))
        .collect();
    assert_eq!(fetch_2d(&m, &s, &t, &xy), texels);
}

/// The texel at (i, j) with clamping.
fn at(t: &[f32], w: usize, h: usize, i: i64, j: i64) -> f32 {
    let i = i.clamp(0, w as i64 - 1) as usize;
    let j = j.clamp(0, h as i64 - 1) as usize;
    t[j * w + i]
}

/// CUDA's bilinear filter (programming guide, "Linear Filtering") with clamping, exact weights, and the
/// largest difference between the four texels it mixes.
fn bilinear(t: &[f32], w: usize, h: usize, x: f32, y: f32) -> (f32, f32) {
    let (xb, yb) = (x as f64 - 0.5, y as f64 - 0.5);
    let (i, j) = (xb.floor() as i64, yb.floor() as i64);
    let (a, b) = (xb - xb.floor(), yb - yb.floor());
    let q = [
        at(t, w, h, i, j),
        at(t, w, h, i + 1, j),
        at(t, w, h, i, j + 1),
        at(t, w, h, i + 1, j + 1),
    ];
    let v = (1.0 - a) * (1.0 - b) * q[0] as f64
        + a * (1.0 - b) * q[1] as f64
        + (1.0 - a) * b * q[2] as f64
        + a * b * q[3] as f64;
    let lo = q.iter().cloned().fold(f32::INFINITY, f32::min);
    let hi = q.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    (v as f32, hi - lo)
}

#[test]
fn linear_filtering_matches_a_host_bilinear_reference() {
    // hip-tests hipTextureObj2D with hipFilterModeLinear. The hardware keeps the weights in 9-bit fixed
    // point with 8 fractional bits: each of the two weights may be off by up to 1/256 from the exact
    // one, so the result is within (1/256 + 1/256) x the largest difference between the texels mixed,
    // plus float rounding.
    let d = device();
    let (m, s) = (module(&d), Stream::new(&d).unwrap());
    let (w, h) = (23, 11);
    let texels = image(w, h);
    let a = array_of(&d, &s, &texels, w, h);
    let desc = TextureDesc {
        filter: FilterMode::Linear,
        ..TextureDesc::default()
    };
    let t = TextureObject::from_array(&a, &desc).unwrap();
    let mut xy = Vec::new();
    for j in 0..h {
        for i in 0..w {
            for (fx, fy) in [
                (0.0, 0.0),
                (0.25, 0.5),
                (0.7, 0.1),
                (0.33, 0.9),
                (0.999, 0.501),
            ] {
                xy.push((i as f32 + fx, j as f32 + fy));
            }
        }
    }
    let got = fetch_2d(&m, &s, &t, &xy);
    for (&(x, y), g) in xy.iter().zip(got) {
        let (want, spread) = bilinear(&texels, w, h, x, y);
        let tol = spread * (2.0 / 256.0) + want.abs() * 1e-5 + 1e-6;
        assert!(
            (g - want).abs() <= tol,
            "({x}, {y}): {g} vs {want} (tolerance {tol})"
        );
    }
}

/// Where a normalized coordinate at texel centre `k` (any integer) lands in `w` texels, per mode;
/// `None` for the border.
fn address(mode: AddressMode, k: i64, w: i64) -> Option<i64> {
    match mode {
        AddressMode::Wrap => Some(k.rem_euclid(w)),
        AddressMode::Clamp => Some(k.clamp(0, w - 1)),
        AddressMode::Border => (0..w).contains(&k).then_some(k),
        AddressMode::Mirror => {
            let period = k.rem_euclid(2 * w);
            Some(if period < w {
                period
            } else {
                2 * w - 1 - period
            })
        }
    }
}

#[test]
fn each_address_mode_with_normalized_coordinates() {
    // hip-tests' address-mode cases (hipTextureObj1D / hipTextureMipmapObj2D): a 1-D array sampled at
    // texel centres from -w to 2w with normalized coordinates, point filtering.
    let d = device();
    let (m, s) = (module(&d), Stream::new(&d).unwrap());
    let w = 16usize;
    let texels: Vec<f32> = (0..w).map(|i| i as f32 * 3.0 + 1.0).collect();
    let a = array_of(&d, &s, &texels, w, 0);
    let ks: Vec<i64> = (-(w as i64)..2 * w as i64).collect();
    let us: Vec<f32> = ks.iter().map(|&k| (k as f32 + 0.5) / w as f32).collect();
    for mode in [
        AddressMode::Wrap,
        AddressMode::Clamp,
        AddressMode::Mirror,
        AddressMode::Border,
    ] {
        let desc = TextureDesc {
            address: [mode; 3],
            normalized_coords: true,
            border_color: [-5.0; 4],
            ..TextureDesc::default()
        };
        let t = TextureObject::from_array(&a, &desc).unwrap();
        let got = fetch_1d(&m, &s, &t, &us);
        let want: Vec<f32> = ks
            .iter()
            .map(|&k| address(mode, k, w as i64).map_or(-5.0, |i| texels[i as usize]))
            .collect();
        assert_eq!(got, want, "{mode:?}");
    }
}

#[test]
fn normalized_float_reads_of_bytes() {
    // hip-tests hipNormalizedFloat: unsigned chars read as floats in [0, 1].
    let d = device();
    let (m, s) = (module(&d), Stream::new(&d).unwrap());
    let (w, h) = (31, 3);
    let bytes: Vec<u8> = (0..w * h).map(|i| (i * 7 % 256) as u8).collect();
    let mut a = Array::<u8>::zeroed(&d, Extent::new(w, h, 0), ArrayFlags::DEFAULT).unwrap();
    let src = DeviceBuffer::from_slice(&d, &bytes).unwrap();
    s.copy_2d_to_array_async(&src, w, &mut a, (0, 0), w, h)
        .unwrap();
    let desc = TextureDesc {
        read: ReadMode::NormalizedFloat,
        ..TextureDesc::default()
    };
    let t = TextureObject::from_array(&a, &desc).unwrap();
    let xy: Vec<_> = (0..w * h)
        .map(|i| ((i % w) as f32 + 0.5, (i / w) as f32 + 0.5))
        .collect();
    let got = fetch_2d(&m, &s, &t, &xy);
    for (g, b) in got.iter().zip(&bytes) {
        assert!((g - *b as f32 / 255.0).abs() <= 1e-6, "{g} vs {b}");
    }
}

#[test]
fn textures_over_linear_and_pitched_memory() {
    // hip-tests hipTextureObjFetchVector (linear) and hipTextureObj2D over hipMallocPitch memory.
    let d = device();
    let (m, s) = (module(&d), Stream::new(&d).unwrap());
    let n = 1000usize;
    let values = image(n, 1);
    let lin = DeviceBuffer::from_slice(&d, &values).unwrap();
    let t = TextureObject::from_linear(&lin, &TextureDesc::default()).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(&d, n).unwrap();
    let count = n as u32;
    let mut args = LaunchArgs::new();
    args.arg(&t).arg_mut(&mut out).arg(&count);
    let f = m.function("fetch_linear").unwrap();
    // SAFETY: (texture, float*, unsigned) as fetch_linear takes them.
    unsafe { f.launch(&s, &LaunchConfig::for_num_elems(count), &mut args) }.unwrap();
    assert_eq!(out.to_vec().unwrap(), values);

    let (w, h) = (45, 13);
    let texels = image(w, h);
    let mut p = PitchedBuffer::<f32>::zeroed_2d(&d, w, h).unwrap();
    let packed = DeviceBuffer::from_slice(&d, &texels).unwrap();
    let pitch = p.pitch_bytes();
    s.copy_2d_async(&packed, w * 4, &mut p, pitch, w, h)
        .unwrap();
    let t = TextureObject::from_pitched_2d(&p, pitch, w, h, &TextureDesc::default()).unwrap();
    let xy: Vec<_> = (0..w * h)
        .map(|i| ((i % w) as f32 + 0.5, (i / w) as f32 + 0.5))
        .collect();
    assert_eq!(fetch_2d(&m, &s, &t, &xy), texels);
}

#[test]
fn two_d_copies_with_odd_pitches_round_trip() {
    // hip-tests hipMemcpy2DAsync / hipMemcpy2DToArrayAsync / hipMemcpy2DFromArrayAsync: host (pinned,
    // pitch 41 bytes) -> device (pitch 43) -> pitched -> array -> device (pitch 39) -> host (pitch 37).
    let d = device();
    let s = Stream::new(&d).unwrap();
    let (w, h) = (33usize, 7usize);
    let fill = |pitch: usize| -> Vec<u8> {
        (0..pitch * h)
            .map(|i| {
                if i % pitch < w {
                    (i * 13 % 251) as u8
                } else {
                    0
                }
            })
            .collect()
    };
    let host = PinnedBuffer::from_slice(&d, &fill(41)).unwrap();
    let mut dev = DeviceBuffer::<u8>::zeroed(&d, 43 * h).unwrap();
    s.copy_2d_from_host_async(&host, 41, &mut dev, 43, w, h)
        .unwrap();
    let mut p = PitchedBuffer::<u8>::zeroed_2d(&d, w, h).unwrap();
    let pitch = p.pitch_bytes();
    s.copy_2d_async(&dev, 43, &mut p, pitch, w, h).unwrap();
    let mut a = Array::<u8>::zeroed(&d, Extent::new(w + 5, h + 2, 0), ArrayFlags::DEFAULT).unwrap();
    s.copy_2d_to_array_async(&p, pitch, &mut a, (3, 1), w, h)
        .unwrap();
    let mut back = DeviceBuffer::<u8>::zeroed(&d, 39 * h).unwrap();
    s.copy_2d_from_array_async(&a, (3, 1), &mut back, 39, w, h)
        .unwrap();
    let mut out = PinnedBuffer::<u8>::zeroed(&d, 37 * h).unwrap();
    s.copy_2d_to_host_async(&back, 39, &mut out, 37, w, h)
        .unwrap();
    let (src, got) = (host.as_slice().unwrap(), out.as_slice().unwrap());
    for r in 0..h {
        assert_eq!(
            &got[r * 37..r * 37 + w],
            &src[r * 41..r * 41 + w],
            "row {r}"
        );
    }
    // The array's border (outside the copied region) stayed zero.
    let mut whole = DeviceBuffer::<u8>::zeroed(&d, (w + 5) * (h + 2)).unwrap();
    s.copy_2d_from_array_async(&a, (0, 0), &mut whole, w + 5, w + 5, h + 2)
        .unwrap();
    let whole = whole.to_vec().unwrap();
    assert!(whole[..w + 5].iter().all(|&b| b == 0), "row 0 untouched");
    assert!((1..h + 1).all(|r| whole[r * (w + 5)..r * (w + 5) + 3].iter().all(|&b| b == 0)));
}

#[test]
fn three_d_copies_through_an_array_and_a_3d_fetch() {
    // hip-tests hipMalloc3D / hipMalloc3DArray / hipMemcpy3DAsync: pitched -> array -> pitched (a
    // sub-box at an offset), odd extents; then tex3D reads every texel.
    let d = device();
    let (m, s) = (module(&d), Stream::new(&d).unwrap());
    let (w, h, z) = (13usize, 7usize, 5usize);
    let vol = image(w * h, z);
    let mut src = PitchedBuffer::<f32>::zeroed_3d(&d, w, h, z).unwrap();
    let packed = DeviceBuffer::from_slice(&d, &vol).unwrap();
    // Slices follow each other row after row: a 3-D pitched buffer is h * z rows for a 2-D copy.
    let pitch = src.pitch_bytes();
    s.copy_2d_async(&packed, w * 4, &mut src, pitch, w, h * z)
        .unwrap();
    let mut a = Array::<f32>::zeroed(&d, Extent::new(w, h, z), ArrayFlags::DEFAULT).unwrap();
    s.copy_3d_async(&src, [0; 3], &mut a, [0; 3], [w, h, z])
        .unwrap();
    // A 5 x 4 x 3 box from (2, 1, 1) of the array into (1, 2, 0) of a bigger pitched volume.
    let mut dst = PitchedBuffer::<f32>::zeroed_3d(&d, 9, 8, 4).unwrap();
    s.copy_3d_async(&a, [2, 1, 1], &mut dst, [1, 2, 0], [5, 4, 3])
        .unwrap();
    let got = dst.to_vec().unwrap();
    let dp = dst.pitch();
    for zz in 0..4 {
        for y in 0..8 {
            for x in 0..9 {
                let inside = (1..6).contains(&x) && (2..6).contains(&y) && zz < 3;
                let want = if inside {
                    vol[(zz + 1) * w * h + (y - 2 + 1) * w + (x - 1 + 2)]
                } else {
                    0.0
                };
                assert_eq!(got[(zz * 8 + y) * dp + x], want, "({x}, {y}, {zz})");
            }
        }
    }
    let t = TextureObject::from_array(&a, &TextureDesc::default()).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(&d, w * h * z).unwrap();
    let (wu, hu, zu) = (w as u32, h as u32, z as u32);
    let mut args = LaunchArgs::new();
    args.arg(&t).arg_mut(&mut out).arg(&wu).arg(&hu).arg(&zu);
    let f = m.function("fetch3d").unwrap();
    // SAFETY: (texture, float*, unsigned x3) as fetch3d takes them; it writes out[..w*h*d].
    unsafe { f.launch(&s, &LaunchConfig::for_num_elems(wu * hu * zu), &mut args) }.unwrap();
    assert_eq!(out.to_vec().unwrap(), vol);
}

#[test]
fn a_surface_write_is_read_back_and_ordered() {
    // hip-tests hipSurfaceObj2D: a kernel writes the array through a surface, a copy reads it back;
    // a second kernel reads and rewrites it (surf2Dread + surf2Dwrite).
    let d = device();
    let (m, s) = (module(&d), Stream::new(&d).unwrap());
    let (w, h) = (70usize, 9usize);
    let a = Array::<f32>::zeroed(&d, Extent::new(w, h, 0), ArrayFlags::SURFACE_LOAD_STORE).unwrap();
    let mut surface = match SurfaceObject::new(&a) {
        Ok(surface) => surface,
        Err(hip::Error::NotSupported { what, .. }) => {
            assert!(
                !has_surfaces(),
                "{what} refused where the build has surfaces"
            );
            assert_eq!(what, "hipCreateSurfaceObject");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let (wu, hu) = (w as u32, h as u32);
    let config = LaunchConfig::new((wu.div_ceil(64), hu), (64, 1));
    // The writes are on another stream than the copy: the memory model orders the copy after them.
    let other = Stream::new(&d).unwrap();
    for name in ["paint", "repaint"] {
        let mut args = LaunchArgs::new();
        args.arg_mut(&mut surface).arg(&wu).arg(&hu);
        let f = m.function(name).unwrap();
        // SAFETY: (surface, unsigned, unsigned) as the kernel takes them; it touches the w x h array
        // through the surface only.
        unsafe { f.launch(&other, &config, &mut args) }.unwrap();
    }
    let mut out = DeviceBuffer::<f32>::zeroed(&d, w * h).unwrap();
    s.copy_2d_from_array_async(&a, (0, 0), &mut out, w * 4, w, h)
        .unwrap();
    let want: Vec<f32> = (0..w * h)
        .map(|i| ((i / w) * 1000 + i % w) as f32 * 2.0 + 1.0)
        .collect();
    assert_eq!(out.to_vec().unwrap(), want);
}

#[test]
fn a_captured_fetch_keeps_its_texture_and_array() {
    // The graph keeps the texture object and its array: both dropped before the replays.
    let d = device();
    let (m, s) = (module(&d), Stream::new(&d).unwrap());
    let (w, h) = (8usize, 4usize);
    let texels = image(w, h);
    let xy: Vec<_> = (0..w * h)
        .map(|i| ((i % w) as f32 + 0.5, (i / w) as f32 + 0.5))
        .collect();
    let xs = DeviceBuffer::from_slice(&d, &xy.iter().map(|p| p.0).collect::<Vec<_>>()).unwrap();
    let ys = DeviceBuffer::from_slice(&d, &xy.iter().map(|p| p.1).collect::<Vec<_>>()).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(&d, w * h).unwrap();
    let mut exec = {
        let a = array_of(&d, &s, &texels, w, h);
        let t = TextureObject::from_array(&a, &TextureDesc::default()).unwrap();
        let n = (w * h) as u32;
        let f = m.function("fetch2d").unwrap();
        let capture = s.begin_capture(CaptureMode::ThreadLocal).unwrap();
        let mut args = LaunchArgs::new();
        args.arg(&t).arg(&xs).arg(&ys).arg_mut(&mut out).arg(&n);
        // SAFETY: as in fetch_2d; the graph keeps the texture, its array and the buffers.
        unsafe { f.launch(capture.stream(), &LaunchConfig::for_num_elems(n), &mut args) }.unwrap();
        capture.end().unwrap().instantiate().unwrap()
    };
    for _ in 0..3 {
        out.zero().unwrap();
        exec.launch(&s).unwrap();
        assert_eq!(out.to_vec().unwrap(), texels);
    }
}

/// Whether this build makes surface objects (a function: the answer depends on the headers built with).
fn has_surfaces() -> bool {
    hip::texture::HAS_SURFACE_OBJECT
}

/// hip-tests: hipMemset2DAsync / hipMemset3DAsync functional (a pitched allocation's rows set, the
/// padding kept), through `Stream::memset_pitched_async`, after a copy on another stream.
#[test]
fn a_pitched_memset_sets_each_row_and_keeps_the_padding() {
    let d = device();
    let (a, b) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    for (w, h, depth) in [(100, 30, 1), (33, 17, 5)] {
        let mut p = if depth == 1 {
            PitchedBuffer::<u8>::zeroed_2d(&d, w, h).unwrap()
        } else {
            PitchedBuffer::<u8>::zeroed_3d(&d, w, h, depth).unwrap()
        };
        assert!(p.pitch() > w, "no padding to keep");
        let ones = DeviceBuffer::from_slice(&d, &vec![1u8; p.len()]).unwrap();
        a.copy_device_async(&ones, &mut p).unwrap();
        b.memset_pitched_async(&mut p, 0xa5).unwrap();
        let got = p.to_vec().unwrap();
        let wrong = got
            .iter()
            .enumerate()
            .filter(|&(i, &v)| v != if i % p.pitch() < w { 0xa5 } else { 1 })
            .count();
        assert_eq!(wrong, 0, "{w} x {h} x {depth}: {wrong} wrong bytes");
    }
}

/// hip-tests: hipMemset2DAsync / hipMemset3DAsync on part of an allocation (an offset pointer, a
/// smaller extent), through `Stream::memset_pitched_region_async`: only the box is set, the rest of the
/// rows and the padding keep the copy's values; u32 elements, so the box's columns are in elements.
#[test]
fn a_region_memset_sets_only_its_box() {
    let d = device();
    let (a, b) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    for (extent, at, size) in [
        ([100, 30, 1], [20, 3, 0], [10, 5, 1]),
        ([33, 17, 5], [1, 2, 1], [31, 14, 3]),
        ([33, 17, 5], [0, 16, 4], [33, 1, 1]),
    ] {
        let [w, h, depth] = extent;
        let mut p = if depth == 1 {
            PitchedBuffer::<u32>::zeroed_2d(&d, w, h).unwrap()
        } else {
            PitchedBuffer::<u32>::zeroed_3d(&d, w, h, depth).unwrap()
        };
        let ones = DeviceBuffer::from_slice(&d, &vec![1u32; p.len()]).unwrap();
        a.copy_device_async(&ones, &mut p).unwrap();
        b.memset_pitched_region_async(&mut p, at, size, 0xa5)
            .unwrap();
        let got = p.to_vec().unwrap();
        let pitch = p.pitch();
        let inside = |i: usize| {
            let (x, y, z) = (i % pitch, i / pitch % h, i / pitch / h);
            (at[0]..at[0] + size[0]).contains(&x)
                && (at[1]..at[1] + size[1]).contains(&y)
                && (at[2]..at[2] + size[2]).contains(&z)
        };
        let wrong = got
            .iter()
            .enumerate()
            .filter(|&(i, &v)| v != if inside(i) { 0xa5a5_a5a5 } else { 1 })
            .count();
        assert_eq!(
            wrong, 0,
            "{extent:?} box {at:?} + {size:?}: {wrong} wrong values"
        );
    }
    // Past the extent: refused before HIP, naming the axis.
    let mut p = PitchedBuffer::<u32>::zeroed_2d(&d, 8, 8).unwrap();
    let e = a
        .memset_pitched_region_async(&mut p, [4, 0, 0], [5, 1, 1], 0)
        .unwrap_err();
    assert!(e.to_string().contains("along x"), "{e}");
}

/// hip-tests hipGraphAddMemcpyNode (3-D parameters): the copies of the test above as graph nodes
/// (`GraphBuilder::copy_3d`), pitched -> array -> a box at an offset of a bigger pitched volume, replayed
/// after another stream rewrites the source each round; pitched -> pitched too.
#[test]
fn graph_3d_copy_nodes_replay_through_an_array() {
    let d = device();
    let (s, other) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let (w, h, z) = (13usize, 7usize, 5usize);
    let mut src = PitchedBuffer::<f32>::zeroed_3d(&d, w, h, z).unwrap();
    let mut a = Array::<f32>::zeroed(&d, Extent::new(w, h, z), ArrayFlags::DEFAULT).unwrap();
    let mut dst = PitchedBuffer::<f32>::zeroed_3d(&d, 9, 8, 4).unwrap();
    let mut flat = PitchedBuffer::<f32>::zeroed_3d(&d, w, h, z).unwrap();
    let mut g = hip::GraphBuilder::new(&d).unwrap();
    let into = g
        .copy_3d(&[], &src, [0; 3], &mut a, [0; 3], [w, h, z])
        .unwrap();
    g.copy_3d(&[into], &a, [2, 1, 1], &mut dst, [1, 2, 0], [5, 4, 3])
        .unwrap();
    let flat_node = g
        .copy_3d(&[], &src, [3, 0, 1], &mut flat, [0; 3], [w - 3, h, z - 1])
        .unwrap();
    let graph = g.build().unwrap();
    let mut exec = graph.instantiate().unwrap();
    for round in 0..3 {
        let vol: Vec<f32> = image(w * h, z).iter().map(|v| v + round as f32).collect();
        let packed = DeviceBuffer::from_slice(&d, &vol).unwrap();
        let pitch = src.pitch_bytes();
        other
            .copy_2d_async(&packed, w * 4, &mut src, pitch, w, h * z)
            .unwrap();
        exec.launch(&s).unwrap();
        let got = dst.to_vec().unwrap();
        let dp = dst.pitch();
        for zz in 0..4 {
            for y in 0..8 {
                for x in 0..9 {
                    let inside = (1..6).contains(&x) && (2..6).contains(&y) && zz < 3;
                    let want = if inside {
                        vol[(zz + 1) * w * h + (y - 2 + 1) * w + (x - 1 + 2)]
                    } else {
                        0.0
                    };
                    assert_eq!(
                        got[(zz * 8 + y) * dp + x],
                        want,
                        "round {round} ({x}, {y}, {zz})"
                    );
                }
            }
        }
        let got = flat.to_vec().unwrap();
        let fp = flat.pitch();
        for zz in 0..z - 1 {
            for y in 0..h {
                for x in 0..w - 3 {
                    let want = vol[(zz + 1) * w * h + y * w + x + 3];
                    assert_eq!(
                        got[(zz * h + y) * fp + x],
                        want,
                        "round {round} flat ({x}, {y}, {zz})"
                    );
                }
            }
        }
    }
    // hip-tests hipGraphExecMemcpyNodeSetParams: the pitched -> pitched node now copies the whole
    // volume into another one.
    let mut whole = PitchedBuffer::<f32>::zeroed_3d(&d, w, h, z).unwrap();
    let updated = exec.set_copy_3d_node_params(
        &graph,
        flat_node,
        &src,
        [0; 3],
        &mut whole,
        [0; 3],
        [w, h, z],
    );
    if hip::PLATFORM == "nvidia" {
        // CUDA updates a copy node only where both the old and the new operands are 1-dimensional
        // (cudaGraphExecMemcpyNodeSetParams; measured on an H100, CUDA 12.9): a pitched 3-D box is
        // refused, naming the node, and the executable graph replays its old copy.
        let err = updated.unwrap_err();
        assert_eq!(
            err.hip_code().and_then(|c| c.name()),
            Some("hipErrorInvalidValue"),
            "{err}"
        );
        let hip::Error::GraphUpdate { failure, .. } = &err else {
            panic!("not a graph update refusal: {err:?}");
        };
        assert_eq!(
            failure.node.map(|n| (n.index, n.kind)),
            Some((2, "a copy node")),
            "{err}"
        );
        exec.launch(&s).unwrap();
        assert_eq!(whole.to_vec().unwrap(), vec![0.0; whole.pitch() * h * z]);
        return;
    }
    updated.unwrap();
    exec.launch(&s).unwrap();
    let got = whole.to_vec().unwrap();
    let vol: Vec<f32> = image(w * h, z).iter().map(|v| v + 2.0).collect();
    let wp = whole.pitch();
    for (i, want) in vol.iter().enumerate() {
        assert_eq!(
            got[(i / w) * wp + i % w],
            *want,
            "updated node, element {i}"
        );
    }
}

#[test]
fn pinned_host_sides_of_array_copies() {
    common::array_host_copy::pinned_host_sides_of_array_copies(&device());
}

#[test]
fn pinned_host_sides_of_3d_copies() {
    common::array_host_copy::pinned_host_sides_of_3d_copies(&device());
}

/// Layered arrays (`ArrayFlags::LAYERED`, hip-tests' layered texture cases): a 2-D array of 3 layers and
/// a 1-D array of 4, filled and read back by 3-D copies (the layers as slices), then read layer by
/// layer through a texture (`tex2DLayered`, `tex1DLayered`).
#[test]
fn layered_arrays_copy_by_layer_and_fetch_each_layer() {
    let d = device();
    let (m, s) = (module(&d), Stream::new(&d).unwrap());
    for (w, h, layers) in [(9usize, 5usize, 3usize), (11, 0, 4)] {
        let rows = h.max(1);
        let vol = image(w * rows, layers);
        let mut src = PitchedBuffer::<f32>::zeroed_3d(&d, w, rows, layers).unwrap();
        let packed = DeviceBuffer::from_slice(&d, &vol).unwrap();
        let pitch = src.pitch_bytes();
        s.copy_2d_async(&packed, w * 4, &mut src, pitch, w, rows * layers)
            .unwrap();
        let mut a =
            Array::<f32>::zeroed(&d, Extent::new(w, h, layers), ArrayFlags::LAYERED).unwrap();
        s.copy_3d_async(&src, [0; 3], &mut a, [0; 3], [w, rows, layers])
            .unwrap();
        let mut back = PitchedBuffer::<f32>::zeroed_3d(&d, w, rows, layers).unwrap();
        s.copy_3d_async(&a, [0; 3], &mut back, [0; 3], [w, rows, layers])
            .unwrap();
        let (got, bp) = (back.to_vec().unwrap(), back.pitch());
        for (i, want) in vol.iter().enumerate() {
            let (x, r) = (i % w, i / w);
            assert_eq!(got[r * bp + x], *want, "{w}x{h}x{layers}: element {i}");
        }
        let t = TextureObject::from_array(&a, &TextureDesc::default()).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed(&d, w * rows * layers).unwrap();
        let (wu, hu, lu) = (w as u32, rows as u32, layers as u32);
        let mut args = LaunchArgs::new();
        args.arg(&t).arg_mut(&mut out).arg(&wu);
        let f = if h == 0 {
            args.arg(&lu);
            m.function("fetch1d_layered").unwrap()
        } else {
            args.arg(&hu).arg(&lu);
            m.function("fetch2d_layered").unwrap()
        };
        let n = wu * hu * lu;
        // SAFETY: (texture, float*, unsigned...) as fetch1d_layered / fetch2d_layered take them; each
        // writes out[..w*rows*layers].
        unsafe { f.launch(&s, &LaunchConfig::for_num_elems(n), &mut args) }.unwrap();
        assert_eq!(out.to_vec().unwrap(), vol, "{w}x{h}x{layers}: fetched");
    }
}

/// Mipmapped arrays (tests/common/mipmaps.rs; hip-tests' hipMallocMipmappedArray / hipGetMipmappedArrayLevel
/// and mipmapped texture cases): each level written, sampled through one texture at its level of
/// detail (`tex2DLod`, point filtering between levels) and read back on three streams; what each
/// level's fetch sampled is that level's texels. Built with HIP 5.2's NVIDIA headers, which declare no
/// mipmapped arrays, the allocation is refused naming the call.
#[test]
fn mipmap_levels_are_sampled_at_their_level_of_detail() {
    let d = device();
    if !hip::texture::HAS_MIPMAPPED_ARRAY {
        let e =
            hip::texture::MipmappedArray::<f32>::zeroed(&d, Extent::new(64, 64, 0), 7).unwrap_err();
        assert!(
            matches!(
                e,
                Error::NotSupported {
                    what: "hipMallocMipmappedArray",
                    ..
                }
            ),
            "{e}"
        );
        return;
    }
    let source = format!(
        "{}{}",
        common::textures::KERNELS,
        common::textures::MIPMAP_KERNEL
    );
    let m = common::load(&d, &source);
    let sampled = common::mipmaps::levels_written_sampled_and_read_back_on_three_streams(&d, &m);
    for l in 0..common::mipmaps::LEVEL_COUNT {
        assert_eq!(
            sampled[l as usize],
            common::mipmaps::expected(l),
            "level {l}"
        );
    }
}
