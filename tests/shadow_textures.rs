//! Arrays, pitched memory, 2-D/3-D copies, texture and surface objects under the shadow HIP runtime
//! (scripts/shadow.sh): copies into and out of arrays on several streams are ordered like any buffer's
//! (no report, values moved), a kernel reading through a texture is ordered after the copies that wrote
//! its array and before the next write, dropping a texture object or its array while a kernel still
//! reads them neither destroys nor frees anything under it, and a captured fetch keeps them for its
//! replays. The shadow runs no kernel body: a launch reads the texture's descriptor and array (or writes
//! a surface's array) for its declared time.
#![cfg(feature = "shadow")]

#[path = "common/array_host_copy.rs"]
mod array_host_copy;
#[allow(dead_code)] // what the GPU test compares
#[path = "common/mipmaps.rs"]
mod mipmaps;
mod shadow;
#[allow(dead_code)] // the GPU's level-of-detail kernel
#[path = "common/textures.rs"]
mod textures;

use hip::memory::PitchedBuffer;
use hip::prelude::*;
use hip::texture::{Array, ArrayFlags, Extent, SurfaceObject, TextureDesc, TextureObject};
use shadow::assert_no_reports;
use std::sync::OnceLock;

const W: usize = 24;
const H: usize = 10;

fn device() -> Device {
    Device::get(0).expect("the shadow runtime's device 0")
}

fn code() -> &'static [u8] {
    static CODE: OnceLock<Vec<u8>> = OnceLock::new();
    CODE.get_or_init(|| {
        // fetch2d(tex, xs, ys, out, n): the texture, then two inputs, one output.
        shadow::declare_kernel("fetch2d", b"rrrw\0");
        shadow::declare_kernel_duration("fetch2d", 1500);
        // paint(surf, w, h) writes the array through the surface.
        // fetch_lod(tex, lod, out, w, h) reads the texture, writes out.
        shadow::declare_kernel("fetch_lod", b"r\0w\0\0");
        shadow::declare_kernel_duration("fetch_lod", 1500);
        shadow::declare_kernel("paint", b"w\0\0");
        shadow::declare_kernel_duration("paint", 1500);
        let d = device();
        let source = format!("{}{}", textures::KERNELS, textures::MIPMAP_KERNEL_SHADOW);
        let code = hip::rtc::ProgramBuilder::new(&source)
            .arch(d.arch_name().unwrap())
            .compile()
            .unwrap();
        code.code().to_vec()
    })
}

fn texels(round: u32) -> Vec<f32> {
    (0..W * H).map(|i| (i as u32 * 3 + round) as f32).collect()
}

/// A fetch of every texel of `t` into `out` on `s`.
fn fetch(m: &Module, s: &Stream, t: &TextureObject, coords: &Coords, out: &mut DeviceBuffer<f32>) {
    let n = (W * H) as u32;
    let mut args = LaunchArgs::new();
    args.arg(t)
        .arg(&coords.0)
        .arg(&coords.1)
        .arg_mut(out)
        .arg(&n);
    let f = m.function("fetch2d").unwrap();
    // SAFETY: fetch2d(texture, const float*, const float*, float*, unsigned) reads the texture and the
    // coordinates and writes out[..n].
    unsafe { f.launch(s, &LaunchConfig::for_num_elems(n), &mut args) }.unwrap();
}

struct Coords(DeviceBuffer<f32>, DeviceBuffer<f32>);

fn coords(d: &Device) -> Coords {
    let xs: Vec<f32> = (0..W * H).map(|i| (i % W) as f32 + 0.5).collect();
    let ys: Vec<f32> = (0..W * H).map(|i| (i / W) as f32 + 0.5).collect();
    Coords(
        DeviceBuffer::from_slice(d, &xs).unwrap(),
        DeviceBuffer::from_slice(d, &ys).unwrap(),
    )
}

#[test]
fn copies_through_arrays_on_several_streams_are_ordered() {
    let d = device();
    let (a, b, c) = (
        Stream::new(&d).unwrap(),
        Stream::new(&d).unwrap(),
        Stream::new(&d).unwrap(),
    );
    let mut arr = Array::<f32>::zeroed(&d, Extent::new(W, H, 0), ArrayFlags::DEFAULT).unwrap();
    let mut p = PitchedBuffer::<f32>::zeroed_2d(&d, W, H).unwrap();
    let mut back = DeviceBuffer::<f32>::zeroed(&d, W * H).unwrap();
    for round in 0..4 {
        let src = DeviceBuffer::from_slice(&d, &texels(round)).unwrap();
        let pitch = p.pitch_bytes();
        a.copy_2d_async(&src, W * 4, &mut p, pitch, W, H).unwrap();
        b.copy_2d_to_array_async(&p, pitch, &mut arr, (0, 0), W, H)
            .unwrap();
        c.copy_2d_from_array_async(&arr, (0, 0), &mut back, W * 4, W, H)
            .unwrap();
        assert_eq!(back.to_vec().unwrap(), texels(round), "round {round}");
    }
    // 3-D: pitched -> 3-D array on one stream, a box back out on another.
    let (w, h, z) = (7, 5, 3);
    let vol: Vec<f32> = (0..w * h * z).map(|i| i as f32).collect();
    let mut pv = PitchedBuffer::<f32>::zeroed_3d(&d, w, h, z).unwrap();
    let packed = DeviceBuffer::from_slice(&d, &vol).unwrap();
    let pitch = pv.pitch_bytes();
    a.copy_2d_async(&packed, w * 4, &mut pv, pitch, w, h * z)
        .unwrap();
    let mut a3 = Array::<f32>::zeroed(&d, Extent::new(w, h, z), ArrayFlags::DEFAULT).unwrap();
    b.copy_3d_async(&pv, [0; 3], &mut a3, [0; 3], [w, h, z])
        .unwrap();
    let mut out = PitchedBuffer::<f32>::zeroed_3d(&d, w, h, z).unwrap();
    c.copy_3d_async(&a3, [1, 1, 1], &mut out, [0; 3], [w - 1, h - 1, z - 1])
        .unwrap();
    let got = out.to_vec().unwrap();
    let op = out.pitch();
    for zz in 0..z - 1 {
        for y in 0..h - 1 {
            for x in 0..w - 1 {
                let want = vol[(zz + 1) * w * h + (y + 1) * w + x + 1];
                assert_eq!(got[(zz * h + y) * op + x], want, "({x}, {y}, {zz})");
            }
        }
    }
    assert_no_reports();
}

/// `memset_pitched_async` (`hipMemset2DAsync` / `hipMemset3DAsync`) sets each row's values and leaves the
/// padding, ordered after a copy into the buffer on another stream and before a copy out on a third.
#[test]
fn a_pitched_memset_is_ordered_between_copies_on_other_streams_and_keeps_the_padding() {
    let d = device();
    let (a, b, c) = (
        Stream::new(&d).unwrap(),
        Stream::new(&d).unwrap(),
        Stream::new(&d).unwrap(),
    );
    for depth in [1, 3] {
        let (w, h) = (W - 3, H);
        let mut p = if depth == 1 {
            PitchedBuffer::<u8>::zeroed_2d(&d, w, h).unwrap()
        } else {
            PitchedBuffer::<u8>::zeroed_3d(&d, w, h, depth).unwrap()
        };
        assert!(p.pitch() > w, "no padding to keep");
        let ones = DeviceBuffer::from_slice(&d, &vec![1u8; p.len()]).unwrap();
        let mut out = DeviceBuffer::<u8>::zeroed(&d, p.len()).unwrap();
        for round in 2..5u8 {
            a.copy_device_async(&ones, &mut p).unwrap();
            b.memset_pitched_async(&mut p, round).unwrap();
            c.copy_device_async(&p, &mut out).unwrap();
            let got = out.to_vec().unwrap();
            for (i, &v) in got.iter().enumerate() {
                let want = if i % p.pitch() < w { round } else { 1 };
                assert_eq!(v, want, "depth {depth}, round {round}, byte {i}");
            }
        }
    }
    assert_no_reports();
}

/// `memset_pitched_region_async` sets only its box (an offset pointer and a smaller extent: the shadow
/// checks the slice pitch HIP derives from the pitched pointer's height), ordered between copies on two
/// other streams.
#[test]
fn a_region_memset_sets_only_its_box_between_copies_on_other_streams() {
    let d = device();
    let (a, b, c) = (
        Stream::new(&d).unwrap(),
        Stream::new(&d).unwrap(),
        Stream::new(&d).unwrap(),
    );
    for (extent, at, size) in [
        ([W - 3, H, 1], [2, 3, 0], [5, 4, 1]),
        ([W - 3, H, 3], [1, 1, 1], [W - 4, H - 2, 2]),
    ] {
        let [w, h, depth] = extent;
        let mut p = if depth == 1 {
            PitchedBuffer::<u16>::zeroed_2d(&d, w, h).unwrap()
        } else {
            PitchedBuffer::<u16>::zeroed_3d(&d, w, h, depth).unwrap()
        };
        let ones = DeviceBuffer::from_slice(&d, &vec![1u16; p.len()]).unwrap();
        let mut out = DeviceBuffer::<u16>::zeroed(&d, p.len()).unwrap();
        let pitch = p.pitch();
        for round in 2..4u8 {
            a.copy_device_async(&ones, &mut p).unwrap();
            b.memset_pitched_region_async(&mut p, at, size, round)
                .unwrap();
            c.copy_device_async(&p, &mut out).unwrap();
            let got = out.to_vec().unwrap();
            for (i, &v) in got.iter().enumerate() {
                let (x, y, z) = (i % pitch, i / pitch % h, i / pitch / h);
                let inside = (at[0]..at[0] + size[0]).contains(&x)
                    && (at[1]..at[1] + size[1]).contains(&y)
                    && (at[2]..at[2] + size[2]).contains(&z);
                let want = if inside {
                    u16::from_ne_bytes([round; 2])
                } else {
                    1
                };
                assert_eq!(v, want, "{extent:?}, round {round}, value {i}");
            }
        }
    }
    assert_no_reports();
}

#[test]
fn a_texture_fetch_is_ordered_between_the_writes_of_its_array() {
    let d = device();
    let m = Module::load_data(&d, code()).unwrap();
    let (a, b) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    let xy = coords(&d);
    let mut arr = Array::<f32>::zeroed(&d, Extent::new(W, H, 0), ArrayFlags::DEFAULT).unwrap();
    // The texture itself, and one reading it through a format view (the same allocation either way).
    let textures = [
        TextureObject::from_array(&arr, &TextureDesc::default()).unwrap(),
        TextureObject::from_array_as::<u32, _>(&arr, &TextureDesc::default()).unwrap(),
    ];
    let mut outs: Vec<_> = (0..4)
        .map(|_| DeviceBuffer::<f32>::zeroed(&d, W * H).unwrap())
        .collect();
    for (round, out) in outs.iter_mut().enumerate() {
        let src = DeviceBuffer::from_slice(&d, &texels(round as u32)).unwrap();
        // The copy on a writes the array the fetch on b reads; the next round's copy must wait for it.
        a.copy_2d_to_array_async(&src, W * 4, &mut arr, (0, 0), W, H)
            .unwrap();
        fetch(&m, &b, &textures[round % 2], &xy, out);
    }
    b.synchronize().unwrap();
    assert_no_reports();
}

#[test]
fn dropping_a_texture_and_its_array_under_a_fetch_frees_nothing_under_it() {
    let d = device();
    let m = Module::load_data(&d, code()).unwrap();
    let s = Stream::new(&d).unwrap();
    let xy = coords(&d);
    let mut out = DeviceBuffer::<f32>::zeroed(&d, W * H).unwrap();
    for _ in 0..3 {
        let arr = Array::<f32>::zeroed(&d, Extent::new(W, H, 0), ArrayFlags::DEFAULT).unwrap();
        let t = TextureObject::from_array(&arr, &TextureDesc::default()).unwrap();
        fetch(&m, &s, &t, &xy, &mut out);
        // Both go while the fetch (1.5 ms) may still run: the destroy and the free wait for it.
        drop(t);
        drop(arr);
    }
    // A texture over linear memory keeps the buffer too.
    let lin = DeviceBuffer::from_slice(&d, &texels(1)).unwrap();
    let t = TextureObject::from_linear(&lin, &TextureDesc::default()).unwrap();
    drop(lin);
    fetch(&m, &s, &t, &xy, &mut out);
    drop(t);
    s.synchronize().unwrap();
    assert_no_reports();
}

#[test]
fn a_captured_fetch_keeps_its_texture_for_the_replays() {
    let d = device();
    let m = Module::load_data(&d, code()).unwrap();
    let (s, other) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    let xy = coords(&d);
    let mut out = DeviceBuffer::<f32>::zeroed(&d, W * H).unwrap();
    let mut exec = {
        let arr = Array::<f32>::zeroed(&d, Extent::new(W, H, 0), ArrayFlags::DEFAULT).unwrap();
        let t = TextureObject::from_array(&arr, &TextureDesc::default()).unwrap();
        let capture = s.begin_capture(CaptureMode::ThreadLocal).unwrap();
        fetch(&m, capture.stream(), &t, &xy, &mut out);
        capture.end().unwrap().instantiate().unwrap()
        // The texture and the array are dropped here: the graph keeps them.
    };
    for _ in 0..3 {
        exec.launch(&s).unwrap();
        // Another stream reads what the replay wrote: ordered after it.
        let mut copy = DeviceBuffer::<f32>::zeroed(&d, W * H).unwrap();
        other.copy_device_async(&out, &mut copy).unwrap();
    }
    drop(exec);
    s.synchronize().unwrap();
    assert_no_reports();
}

#[test]
fn a_surface_write_is_ordered_before_a_copy_on_another_stream() {
    let d = device();
    let m = Module::load_data(&d, code()).unwrap();
    let (a, b) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    let arr =
        Array::<f32>::zeroed(&d, Extent::new(W, H, 0), ArrayFlags::SURFACE_LOAD_STORE).unwrap();
    let mut surface = match SurfaceObject::new(&arr) {
        Ok(s) => s,
        Err(hip::Error::NotSupported { what, .. }) => {
            // The host's HIP 5.2.3 headers (what scripts/shadow.sh builds with): no C surface calls.
            assert!(
                !has_surfaces(),
                "{what} refused where the build has surfaces"
            );
            assert_eq!(what, "hipCreateSurfaceObject");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let (w, h) = (W as u32, H as u32);
    let mut out = DeviceBuffer::<f32>::zeroed(&d, W * H).unwrap();
    for _ in 0..3 {
        let mut args = LaunchArgs::new();
        args.arg_mut(&mut surface).arg(&w).arg(&h);
        let f = m.function("paint").unwrap();
        // SAFETY: paint(surface, unsigned, unsigned) writes the array through the surface only.
        unsafe { f.launch(&a, &LaunchConfig::new((1, h), (64, 1)), &mut args) }.unwrap();
        b.copy_2d_from_array_async(&arr, (0, 0), &mut out, W * 4, W, H)
            .unwrap();
    }
    b.synchronize().unwrap();
    assert_no_reports();
}

/// Whether this build makes surface objects (a function: the answer depends on the headers built with).
fn has_surfaces() -> bool {
    hip::texture::HAS_SURFACE_OBJECT
}

/// 3-D copy nodes (`GraphBuilder::copy_3d`): a pitched volume into a 3-D array, then a box of the array
/// into another pitched volume, replayed after another stream rewrites the source each round: the
/// replays are ordered after that write and before the read-back (no report, the box's values); an empty
/// box adds an empty node; a box past a side is refused naming it.
#[test]
fn graph_3d_copy_nodes_replay_in_order_against_another_stream() {
    let d = device();
    let (a, b) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let (w, h, z) = (7, 5, 3);
    let mut pv = PitchedBuffer::<f32>::zeroed_3d(&d, w, h, z).unwrap();
    let mut a3 = Array::<f32>::zeroed(&d, Extent::new(w, h, z), ArrayFlags::DEFAULT).unwrap();
    let mut out = PitchedBuffer::<f32>::zeroed_3d(&d, w, h, z).unwrap();
    let mut g = hip::GraphBuilder::new(&d).unwrap();
    let into = g
        .copy_3d(&[], &pv, [0; 3], &mut a3, [0; 3], [w, h, z])
        .unwrap();
    let back = g
        .copy_3d(
            &[into],
            &a3,
            [1, 1, 1],
            &mut out,
            [0; 3],
            [w - 1, h - 1, z - 1],
        )
        .unwrap();
    let empty = g
        .copy_3d(&[back], &pv, [0; 3], &mut a3, [0; 3], [0, h, z])
        .unwrap();
    let e = g
        .copy_3d(&[], &pv, [1, 0, 0], &mut a3, [0; 3], [w, h, z])
        .unwrap_err();
    assert!(
        e.to_string().contains("graph 3-D copy node source") && e.to_string().contains("along x"),
        "{e}"
    );
    let graph = g.build().unwrap();
    assert_eq!(graph.node_count().unwrap(), 3);
    let mut exec = graph.instantiate().unwrap();
    for round in 0..3usize {
        let vol: Vec<f32> = (0..w * h * z).map(|i| (i + 1000 * round) as f32).collect();
        let packed = DeviceBuffer::from_slice(&d, &vol).unwrap();
        let pitch = pv.pitch_bytes();
        b.copy_2d_async(&packed, w * 4, &mut pv, pitch, w, h * z)
            .unwrap();
        exec.launch(&a).unwrap();
        let got = out.to_vec().unwrap();
        let op = out.pitch();
        for zz in 0..z - 1 {
            for y in 0..h - 1 {
                for x in 0..w - 1 {
                    let want = vol[(zz + 1) * w * h + (y + 1) * w + x + 1];
                    assert_eq!(
                        got[(zz * h + y) * op + x],
                        want,
                        "round {round} ({x}, {y}, {zz})"
                    );
                }
            }
        }
    }
    // The read-back node updated to copy the whole array into another volume, replayed.
    let mut out2 = PitchedBuffer::<f32>::zeroed_3d(&d, w, h, z).unwrap();
    exec.set_copy_3d_node_params(&graph, back, &a3, [0; 3], &mut out2, [0; 3], [w, h, z])
        .unwrap();
    let e = exec
        .set_copy_3d_node_params(&graph, back, &a3, [0; 3], &mut out2, [0; 3], [w, 0, z])
        .unwrap_err();
    assert!(e.to_string().contains("empty box"), "{e}");
    let e = exec
        .set_copy_3d_node_params(&graph, empty, &a3, [0; 3], &mut out2, [0; 3], [w, h, z])
        .unwrap_err();
    assert!(e.to_string().contains("not"), "{e}");
    let vol: Vec<f32> = (0..w * h * z).map(|i| (i * 3) as f32).collect();
    let packed = DeviceBuffer::from_slice(&d, &vol).unwrap();
    let pitch = pv.pitch_bytes();
    b.copy_2d_async(&packed, w * 4, &mut pv, pitch, w, h * z)
        .unwrap();
    exec.launch(&a).unwrap();
    let got = out2.to_vec().unwrap();
    let op = out2.pitch();
    for (i, want) in vol.iter().enumerate() {
        let (x, yz) = (i % w, i / w);
        assert_eq!(got[yz * op + x], *want, "updated node, element {i}");
    }
    drop(exec);
    assert_no_reports();
}

#[test]
fn pinned_host_sides_of_array_copies() {
    array_host_copy::pinned_host_sides_of_array_copies(&device());
    assert_no_reports();
}

#[test]
fn pinned_host_sides_of_3d_copies() {
    array_host_copy::pinned_host_sides_of_3d_copies(&device());
    assert_no_reports();
}

/// A layered array (`ArrayFlags::LAYERED`) filled by a 3-D copy on one stream and read back by another
/// on a second stream: ordered like any array's copies, values moved layer by layer.
#[test]
fn layered_arrays_copy_by_layer_on_two_streams() {
    let d = device();
    let (a, b) = (Stream::new(&d).unwrap(), Stream::new(&d).unwrap());
    for (w, h, layers) in [(9usize, 5usize, 3usize), (11, 0, 4)] {
        let rows = h.max(1);
        let vol: Vec<f32> = (0..w * rows * layers).map(|i| i as f32 * 0.5).collect();
        let mut src = PitchedBuffer::<f32>::zeroed_3d(&d, w, rows, layers).unwrap();
        let packed = DeviceBuffer::from_slice(&d, &vol).unwrap();
        let pitch = src.pitch_bytes();
        a.copy_2d_async(&packed, w * 4, &mut src, pitch, w, rows * layers)
            .unwrap();
        let mut arr =
            Array::<f32>::zeroed(&d, Extent::new(w, h, layers), ArrayFlags::LAYERED).unwrap();
        a.copy_3d_async(&src, [0; 3], &mut arr, [0; 3], [w, rows, layers])
            .unwrap();
        let mut back = PitchedBuffer::<f32>::zeroed_3d(&d, w, rows, layers).unwrap();
        b.copy_3d_async(&arr, [0; 3], &mut back, [0; 3], [w, rows, layers])
            .unwrap();
        let (got, bp) = (back.to_vec().unwrap(), back.pitch());
        for i in 0..w * rows * layers {
            assert_eq!(
                got[(i / w) * bp + i % w],
                vol[i],
                "{w}x{h}x{layers}: element {i}"
            );
        }
    }
    assert_no_reports();
}

/// Mipmapped arrays (tests/common/mipmaps.rs): levels written, sampled and read back on three streams,
/// rewritten under the sampling, dropped under a fetch; no race reported, values moved.
#[test]
fn mipmap_levels_are_ordered_across_three_streams() {
    let d = device();
    let m = Module::load_data(&d, code()).unwrap();
    mipmaps::levels_written_sampled_and_read_back_on_three_streams(&d, &m);
    assert_no_reports();
}
