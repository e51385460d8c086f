//! The checks made before any HIP call (extents, pitches, regions, descriptions, flags) and how texture
//! and surface objects enter a launch's arguments, on records without a GPU.

use super::object::TextureObject;
use super::*;
use crate::error::Error;
use crate::launch::LaunchArgs;
use crate::memory::{Access, DeviceBuffer};
use crate::stream::Stream;
use crate::Device;
use std::sync::Arc;

fn device() -> Device {
    Device::for_unit_tests(0)
}

/// `e` is `InvalidArgument` for `what`, its reason containing `says`.
fn refused(e: Error, what: &str, says: &str) {
    match &e {
        Error::InvalidArgument {
            what: w, reason, ..
        } => {
            assert_eq!(*w, what, "{e}");
            assert!(reason.contains(says), "{what}: {e}");
        }
        other => panic!("{what}: {other:?}"),
    }
}

#[test]
fn array_extents_are_refused_before_any_call() {
    let d = device();
    for (e, says) in [
        (Extent::new(0, 4, 0), "width of at least 1"),
        (Extent::new(4, 0, 2), "needs a height"),
        (Extent::new(usize::MAX, 2, 0), "overflow"),
        (Extent::new(1 << 40, 1 << 20, 1 << 10), "overflow"),
    ] {
        // SAFETY: refused before anything is allocated.
        let r = unsafe { Array::<f32>::uninit(&d, e, ArrayFlags::DEFAULT) };
        refused(r.unwrap_err(), "array extent", says);
        let r = Array::<[u8; 4]>::zeroed(&d, e, ArrayFlags::SURFACE_LOAD_STORE);
        refused(r.unwrap_err(), "array extent", says);
    }
    // Layered: the layers are the depth, a 1-D layered array has no height.
    for (e, says) in [
        (Extent::new(8, 4, 0), "number of layers"),
        (Extent::new(8, 0, 0), "number of layers"),
        (Extent::new(0, 0, 3), "width of at least 1"),
        (Extent::new(usize::MAX, 0, 2), "overflow"),
    ] {
        // SAFETY: refused before anything is allocated.
        let r = unsafe { Array::<f32>::uninit(&d, e, ArrayFlags::LAYERED) };
        refused(r.unwrap_err(), "array extent", says);
    }
    let r = Array::<f32>::zeroed(&d, Extent::new(8, 0, 3), ArrayFlags::DEFAULT);
    refused(r.unwrap_err(), "array extent", "ArrayFlags::LAYERED");
}

#[test]
fn two_d_copies_refuse_layered_arrays() {
    let d = device();
    let s = Stream::default_for(&d);
    let a = Array::<f32>::for_unit_tests(&d, Extent::new(8, 4, 3), ArrayFlags::LAYERED);
    let mut out = DeviceBuffer::<f32>::for_unit_tests(&d, 8 * 4);
    let err = s
        .copy_2d_from_array_async(&a, (0, 0), &mut out, 8 * 4, 8, 4)
        .unwrap_err();
    assert!(
        err.to_string().contains("a layered array of 3 layers"),
        "{err}"
    );
    refused(err, "hipMemcpy2DFromArrayAsync source", "copy layers with");
}

#[test]
fn copies_into_and_out_of_arrays_check_both_sides() {
    let d = device();
    let s = Stream::default_for(&d);
    let mut a = Array::<f32>::for_unit_tests(&d, Extent::new(16, 8, 0), ArrayFlags::DEFAULT);
    let mut buf = DeviceBuffer::<f32>::for_unit_tests(&d, 16 * 8);
    const TO: &str = "hipMemcpy2DToArrayAsync source";
    const INTO: &str = "hipMemcpy2DToArrayAsync destination";
    // The source's pitch shorter than a row of 16 floats.
    let e = s.copy_2d_to_array_async(&buf, 60, &mut a, (0, 0), 16, 8);
    refused(
        e.unwrap_err(),
        TO,
        "pitch is less than a row's bytes (60 < 64)",
    );
    // Rows past the source's end: 8 rows 72 bytes apart need 7 * 72 + 64 = 568 > 512.
    let e = s.copy_2d_to_array_async(&buf, 72, &mut a, (0, 0), 16, 8);
    refused(
        e.unwrap_err(),
        TO,
        "needs 568 bytes but the memory holds 512",
    );
    // A region past the array along x and along y.
    let e = s.copy_2d_to_array_async(&buf, 64, &mut a, (1, 0), 16, 8);
    refused(e.unwrap_err(), INTO, "along x");
    let e = s.copy_2d_to_array_async(&buf, 64, &mut a, (0, 1), 16, 8);
    refused(e.unwrap_err(), INTO, "along y");
    // An overflowing width.
    let e = s.copy_2d_to_array_async(&buf, 64, &mut a, (0, 0), usize::MAX, 1);
    refused(e.unwrap_err(), "hipMemcpy2DToArrayAsync width", "overflow");
    // Out of the array, the same rules the other way.
    let e = s.copy_2d_from_array_async(&a, (8, 0), &mut buf, 64, 9, 1);
    refused(
        e.unwrap_err(),
        "hipMemcpy2DFromArrayAsync source",
        "along x",
    );
    let e = s.copy_2d_from_array_async(&a, (0, 0), &mut buf, 32, 16, 2);
    refused(
        e.unwrap_err(),
        "hipMemcpy2DFromArrayAsync destination",
        "pitch is less than a row",
    );
    // A 3-D array takes 3-D copies only.
    let mut v = Array::<f32>::for_unit_tests(&d, Extent::new(4, 4, 4), ArrayFlags::DEFAULT);
    let e = s.copy_2d_to_array_async(&buf, 16, &mut v, (0, 0), 4, 4);
    refused(e.unwrap_err(), INTO, "copy_3d_async");
    // Nothing to move and every check passed: no HIP call, Ok.
    s.copy_2d_to_array_async(&buf, 64, &mut a, (16, 8), 0, 0)
        .unwrap();
}

#[test]
fn three_d_copies_check_each_side_per_axis() {
    let d = device();
    let s = Stream::default_for(&d);
    let a = Array::<u16>::for_unit_tests(&d, Extent::new(8, 4, 2), ArrayFlags::DEFAULT);
    let mut b = Array::<u16>::for_unit_tests(&d, Extent::new(8, 4, 0), ArrayFlags::DEFAULT);
    // A 2-D array is one slice deep: two slices pass its extent along z.
    let e = s.copy_3d_async(&a, [0; 3], &mut b, [0; 3], [8, 4, 2]);
    refused(e.unwrap_err(), "hipMemcpy3DAsync destination", "along z");
    let e = s.copy_3d_async(&a, [1, 0, 0], &mut b, [0; 3], [8, 4, 1]);
    refused(e.unwrap_err(), "hipMemcpy3DAsync source", "along x");
    let e = s.copy_3d_async(&a, [0, 0, usize::MAX], &mut b, [0; 3], [1, 1, 1]);
    refused(e.unwrap_err(), "hipMemcpy3DAsync source", "along z");
    s.copy_3d_async(&a, [0; 3], &mut b, [0; 3], [8, 0, 1])
        .unwrap();
}

#[test]
fn texture_descriptions_the_format_cannot_take_are_refused() {
    const WHAT: &str = "hipCreateTextureObject texture description";
    let linear = TextureDesc {
        filter: FilterMode::Linear,
        ..TextureDesc::default()
    };
    refused(
        linear.check::<u32>(false).unwrap_err(),
        WHAT,
        "linear filtering returns floats",
    );
    refused(
        linear.check::<[i8; 4]>(false).unwrap_err(),
        WHAT,
        "linear filtering returns floats",
    );
    linear.check::<f32>(false).unwrap();
    linear.check::<[crate::half::f16; 2]>(false).unwrap();
    let normalized = TextureDesc {
        read: ReadMode::NormalizedFloat,
        ..linear
    };
    normalized.check::<[u8; 4]>(false).unwrap();
    normalized.check::<i16>(false).unwrap();
    refused(
        normalized.check::<u32>(false).unwrap_err(),
        WHAT,
        "only 8- and 16-bit",
    );
    refused(
        normalized.check::<f32>(false).unwrap_err(),
        WHAT,
        "only 8- and 16-bit",
    );
    for m in [AddressMode::Wrap, AddressMode::Mirror] {
        let d = TextureDesc {
            address: [AddressMode::Clamp, m, AddressMode::Clamp],
            ..TextureDesc::default()
        };
        refused(
            d.check::<f32>(false).unwrap_err(),
            WHAT,
            "normalized coordinates only",
        );
        TextureDesc {
            normalized_coords: true,
            ..d
        }
        .check::<f32>(false)
        .unwrap();
    }
    // Linear memory is fetched by index.
    refused(
        linear.check::<f32>(true).unwrap_err(),
        WHAT,
        "fetched by index",
    );
    TextureDesc::default().check::<f32>(true).unwrap();
    let raw = TextureDesc {
        address: [AddressMode::Wrap, AddressMode::Mirror, AddressMode::Border],
        border_color: [1.0, 2.0, 3.0, 4.0],
        normalized_coords: true,
        ..normalized
    }
    .raw();
    assert_eq!(raw.normalizedCoords, 1);
    assert_eq!(raw.borderColor, [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(raw.addressMode.map(i64::from), [0, 2, 3]);
    assert_eq!(
        i64::from(raw.filterMode),
        i64::from(crate::sys::hipFilterModeLinear)
    );
    assert_eq!(
        i64::from(raw.readMode),
        i64::from(crate::sys::hipReadModeNormalizedFloat)
    );
}

#[test]
fn texture_memory_is_checked_before_any_call() {
    let d = device();
    let buf = DeviceBuffer::<f32>::for_unit_tests(&d, 100);
    let empty = DeviceBuffer::<f32>::for_unit_tests(&d, 0);
    refused(
        TextureObject::from_linear(&empty, &TextureDesc::default()).unwrap_err(),
        "hipCreateTextureObject linear memory",
        "at least one element",
    );
    const WHAT: &str = "hipCreateTextureObject pitched memory";
    let e = TextureObject::from_pitched_2d(&buf, 32, 10, 10, &TextureDesc::default());
    refused(
        e.unwrap_err(),
        WHAT,
        "pitch is less than a row's bytes (32 < 40)",
    );
    let e = TextureObject::from_pitched_2d(&buf, 48, 10, 10, &TextureDesc::default());
    refused(
        e.unwrap_err(),
        WHAT,
        "needs 472 bytes but the memory holds 400",
    );
    let e = TextureObject::from_pitched_2d(&buf, 48, 0, 10, &TextureDesc::default());
    refused(e.unwrap_err(), WHAT, "at least one element");
}

#[test]
fn a_surface_needs_an_array_made_for_it() {
    let d = device();
    let a = Array::<f32>::for_unit_tests(&d, Extent::new(4, 4, 0), ArrayFlags::DEFAULT);
    refused(
        SurfaceObject::new(&a).unwrap_err(),
        "hipCreateSurfaceObject array",
        "SURFACE_LOAD_STORE",
    );
}

#[test]
fn a_texture_argument_is_a_read_of_its_memory_kept_by_graphs() {
    let d = device();
    let a = Array::<f32>::for_unit_tests(&d, Extent::new(4, 4, 0), ArrayFlags::DEFAULT);
    let keep: crate::launch::KeepAlive = Arc::new(7u32);
    let tex = TextureObject::for_unit_tests(&a.alloc, keep.clone());
    let mut out = DeviceBuffer::<f32>::for_unit_tests(&d, 4);
    let mut args = LaunchArgs::new();
    args.arg(&tex).arg_mut(&mut out);
    let uses = args.tracked_uses();
    assert_eq!(uses.len(), 2);
    assert!(Arc::ptr_eq(&uses[0].0, &a.alloc));
    assert_eq!(uses[0].1, Access::Read);
    assert_eq!(uses[1].1, Access::Write);
    let kept: Vec<_> = args.kept_alive().collect();
    assert_eq!(kept.len(), 1);
    assert!(Arc::ptr_eq(&kept[0], &keep));
    // The signature check sees the object as the kernel's metadata declares it: a pointer on AMD (a
    // `__hip_texture*`, `global_buffer`), a 64-bit value on NVIDIA.
    let info = args.infos()[0];
    assert_eq!(info.size, 8);
    assert_eq!(info.pointer, OBJECT_IS_POINTER_PARAM);
}

#[test]
fn two_d_device_copies_check_both_sides() {
    let d = device();
    let s = Stream::default_for(&d);
    let src = DeviceBuffer::<u8>::for_unit_tests(&d, 100);
    let mut dst = DeviceBuffer::<u8>::for_unit_tests(&d, 50);
    // 5 rows of 10 bytes: the source (pitch 20: 4 * 20 + 10 = 90 <= 100) fits, the destination
    // (pitch 11: 4 * 11 + 10 = 54 > 50) does not.
    let e = s.copy_2d_async(&src, 20, &mut dst, 11, 10, 5);
    refused(
        e.unwrap_err(),
        "hipMemcpy2DAsync destination",
        "needs 54 bytes but the memory holds 50",
    );
    let e = s.copy_2d_async(&src, 9, &mut dst, 10, 10, 5);
    refused(
        e.unwrap_err(),
        "hipMemcpy2DAsync source",
        "pitch is less than a row's bytes (9 < 10)",
    );
    let e = s.copy_2d_async(&src, usize::MAX, &mut dst, 10, 10, 5);
    refused(e.unwrap_err(), "hipMemcpy2DAsync source", "overflows");
    s.copy_2d_async(&src, 20, &mut dst, 10, 0, 5).unwrap();
}

#[test]
fn mipmap_level_extents_and_counts() {
    use super::mipmap::{level_extent, max_levels};
    let e = Extent::new(32, 16, 0);
    assert_eq!(max_levels(e), 6);
    assert_eq!(level_extent(e, 1), Extent::new(16, 8, 0));
    assert_eq!(level_extent(e, 4), Extent::new(2, 1, 0));
    assert_eq!(
        level_extent(e, 5),
        Extent::new(1, 1, 0),
        "a side stops at 1"
    );
    assert_eq!(max_levels(Extent::new(1, 0, 0)), 1);
    assert_eq!(
        max_levels(Extent::new(5, 9, 3)),
        4,
        "the largest side counts"
    );
    assert_eq!(level_extent(Extent::new(5, 9, 3), 2), Extent::new(1, 2, 1));
    assert_eq!(
        level_extent(Extent::new(usize::MAX, 0, 0), 200),
        Extent::new(1, 0, 0),
        "a shift past the width's bits"
    );
    assert_eq!(max_levels(Extent::new(usize::MAX, 1, 1)), usize::BITS);
}

#[test]
fn mipmap_descriptions_are_checked_and_clamped_to_the_last_level() {
    let float = TextureDesc::default();
    float.check_mipmap::<f32>().unwrap();
    let blend = TextureDesc {
        mipmap_filter: FilterMode::Linear,
        ..TextureDesc::default()
    };
    blend.check_mipmap::<f32>().unwrap();
    let e = blend.check_mipmap::<u32>().unwrap_err().to_string();
    assert!(e.contains("mipmap_filter Linear"), "{e}");
    for (bias, clamp) in [
        (f32::NAN, [0.0, 1.0]),
        (f32::INFINITY, [0.0, 1.0]),
        (0.0, [f32::NAN, 1.0]),
        (0.0, [-1.0, 1.0]),
        (0.0, [2.0, 1.0]),
    ] {
        let d = TextureDesc {
            mipmap_level_bias: bias,
            mipmap_level_clamp: clamp,
            ..TextureDesc::default()
        };
        assert!(
            d.check_mipmap::<f32>().is_err(),
            "bias {bias}, clamp {clamp:?}"
        );
    }
    let raw = float.raw_mipmapped(4);
    assert_eq!(
        (raw.minMipmapLevelClamp, raw.maxMipmapLevelClamp),
        (0.0, 3.0),
        "the default clamp reaches the last level"
    );
    let raw = TextureDesc {
        mipmap_filter: FilterMode::Linear,
        mipmap_level_bias: 0.5,
        mipmap_level_clamp: [1.0, 2.0],
        ..TextureDesc::default()
    }
    .raw_mipmapped(4);
    assert_eq!(raw.mipmapFilterMode, hip_sys::hipFilterModeLinear as _);
    assert_eq!(
        (
            raw.mipmapLevelBias,
            raw.minMipmapLevelClamp,
            raw.maxMipmapLevelClamp
        ),
        (0.5, 1.0, 2.0)
    );
    let plain = float.raw();
    assert_eq!(
        plain.maxMipmapLevelClamp, 0.0,
        "other textures keep the zeroed fields"
    );
}

#[test]
fn format_views_cover_the_whole_array_and_refuse_another_size() {
    use super::view::format_view;
    let v = format_view::<u32, f32>(Extent::new(8, 4, 0), ArrayFlags::DEFAULT).unwrap();
    assert_eq!((v.width, v.height, v.depth), (8, 4, 0));
    assert_eq!(v.format as u32, f32::DESC.view_format());
    assert_eq!((v.firstMipmapLevel, v.lastMipmapLevel), (0, 0));
    assert_eq!((v.firstLayer, v.lastLayer), (0, 0));
    // A layered array's view takes every layer; a 3-D array has none.
    let v = format_view::<[u8; 4], u32>(Extent::new(8, 4, 3), ArrayFlags::LAYERED).unwrap();
    assert_eq!((v.depth, v.firstLayer, v.lastLayer), (3, 0, 2));
    let v = format_view::<[u8; 4], u32>(Extent::new(8, 4, 3), ArrayFlags::DEFAULT).unwrap();
    assert_eq!((v.depth, v.lastLayer), (3, 0));
    // Another size: refused, naming both.
    let e = format_view::<u16, f32>(Extent::new(8, 0, 0), ArrayFlags::DEFAULT).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument { value, .. } if value.contains("2 bytes") && value.contains("4 bytes")),
        "{e}"
    );
}
