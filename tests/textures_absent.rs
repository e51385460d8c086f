//! Arrays, pitched memory, 2-D/3-D copies, texture and surface objects (issue 57, family 7) on a machine
//! without a GPU: every call answers an error naming it (keeping the runtime's raw code), or, where the
//! headers lack a call (surface objects on HIP 5.2), `NotSupported` naming it. The channel descriptors
//! the crate builds are compared with the runtime's own `hipCreateChannelDesc`, and a texture/surface
//! kernel compiled offline by HIPRTC shows how its parameters look to the signature check. The checks
//! made before any HIP call are unit tests (`hip::texture::tests`); with a GPU, tests/gpu_textures.rs.
use hip::result::texture as raw;
use hip::texture::ChannelFormat;
use hip::{sys, Device, Error};

mod common;

/// No usable device here: the tests below check the error paths (they say nothing on a GPU machine).
fn no_device() -> bool {
    Device::count().is_err()
}

/// `e` names `call` and keeps a raw HIP code, or names `call` as not supported by these headers.
fn names(e: &Error, call: &str) {
    let text = e.to_string();
    assert!(text.contains(call), "{text}");
    match e {
        Error::Hip { .. } => assert_ne!(e.hip_code().expect("a raw code").0, 0, "{text}"),
        Error::NotSupported { what, .. } => assert_eq!(*what, call),
        Error::LibraryNotFound { .. } => {}
        other => panic!("unexpected error for {call}: {other:?}"),
    }
}

#[test]
fn allocations_answer_errors_naming_each_call() {
    if !no_device() {
        return;
    }
    let desc = f32::DESC.raw();
    let e = raw::malloc_array(&desc, 64, 32, 0).unwrap_err();
    eprintln!("hipMallocArray without a device: {e}");
    names(&e, "hipMallocArray");
    let extent = sys::hipExtent {
        width: 8,
        height: 8,
        depth: 8,
    };
    names(
        &raw::malloc_3d_array(&desc, extent, 0).unwrap_err(),
        "hipMalloc3DArray",
    );
    names(&raw::malloc_pitch(100, 30).unwrap_err(), "hipMallocPitch");
    names(&raw::malloc_3d(extent).unwrap_err(), "hipMalloc3D");
}

#[test]
fn mipmapped_arrays_answer_errors_naming_each_call() {
    if !no_device() {
        return;
    }
    let desc = f32::DESC.raw();
    let extent = sys::hipExtent {
        width: 64,
        height: 64,
        depth: 0,
    };
    let e = raw::malloc_mipmapped_array(&desc, extent, 7, 0).unwrap_err();
    eprintln!("hipMallocMipmappedArray without a device: {e}");
    names(&e, "hipMallocMipmappedArray");
    // SAFETY: a null handle, which HIP refuses (with no device, before looking at it).
    let e = unsafe { raw::mipmapped_array_level(std::ptr::null_mut(), 0) }.unwrap_err();
    names(&e, "hipGetMipmappedArrayLevel");
    // SAFETY: as above.
    let e = unsafe { raw::free_mipmapped_array(std::ptr::null_mut()) }.unwrap_err();
    names(&e, "hipFreeMipmappedArray");
}

#[test]
fn copies_and_objects_answer_errors_naming_each_call() {
    if !no_device() {
        return;
    }
    // SAFETY (every call below): no device exists (checked above): the runtime refuses before touching
    // the null arrays, pointers and objects.
    unsafe {
        names(
            &hip::result::memory::memset_2d_async(
                std::ptr::null_mut(),
                64,
                7,
                64,
                2,
                std::ptr::null_mut(),
            )
            .unwrap_err(),
            "hipMemset2DAsync",
        );
        names(
            &hip::result::memory::memset_3d_async(
                std::ptr::null_mut(),
                64,
                2,
                7,
                [64, 2, 2],
                std::ptr::null_mut(),
            )
            .unwrap_err(),
            "hipMemset3DAsync",
        );
        names(
            &raw::memcpy_2d_to_array_async(
                std::ptr::null_mut(),
                0,
                0,
                std::ptr::null_mut(),
                64,
                64,
                2,
                sys::hipMemcpyDeviceToDevice,
                std::ptr::null_mut(),
            )
            .unwrap_err(),
            "hipMemcpy2DToArrayAsync",
        );
        names(
            &raw::memcpy_2d_from_array_async(
                std::ptr::null_mut(),
                64,
                std::ptr::null_mut(),
                0,
                0,
                64,
                2,
                sys::hipMemcpyDeviceToDevice,
                std::ptr::null_mut(),
            )
            .unwrap_err(),
            "hipMemcpy2DFromArrayAsync",
        );
        let p = sys::hipMemcpy3DParms::default();
        names(
            &raw::memcpy_3d_async(&p, std::ptr::null_mut()).unwrap_err(),
            "hipMemcpy3DAsync",
        );
        let res = sys::hipResourceDesc {
            resType: sys::hipResourceTypeArray as _,
            ..Default::default()
        };
        let tex = hip::texture::TextureDesc::default().raw();
        let e = raw::create_texture_object(&res, &tex).unwrap_err();
        eprintln!("hipCreateTextureObject without a device: {e}");
        names(&e, "hipCreateTextureObject");
        let e = raw::create_surface_object(&res).unwrap_err();
        eprintln!("hipCreateSurfaceObject without a device: {e}");
        names(&e, "hipCreateSurfaceObject");
        // HIP 5.2.3 exports the surface calls C++-mangled only: NotSupported there, never a link error.
        assert_eq!(
            matches!(e, Error::NotSupported { .. }),
            !hip::texture::HAS_SURFACE_OBJECT,
            "{e}"
        );
    }
}

#[test]
fn channel_descriptors_match_the_runtimes_own() {
    fn same<T: ChannelFormat>() {
        let ours = T::DESC.raw();
        // SAFETY: a pure function of its values (no device needed).
        let theirs =
            unsafe { sys::hipCreateChannelDesc(ours.x, ours.y, ours.z, ours.w, ours.f as _) };
        assert_eq!(
            (ours.x, ours.y, ours.z, ours.w, i64::from(ours.f)),
            (theirs.x, theirs.y, theirs.z, theirs.w, i64::from(theirs.f))
        );
        assert_eq!(T::DESC.bytes(), std::mem::size_of::<T>());
    }
    same::<u8>();
    same::<[u8; 2]>();
    same::<[u8; 4]>();
    same::<i16>();
    same::<[u16; 4]>();
    same::<i32>();
    same::<[u32; 2]>();
    same::<f32>();
    same::<[f32; 4]>();
    same::<hip::half::f16>();
    same::<[i8; 4]>();
    // The kinds are the runtime's values.
    assert_eq!(
        i64::from(<[i8; 4]>::DESC.raw().f),
        i64::from(sys::hipChannelFormatKindSigned)
    );
    assert_eq!(
        i64::from(u16::DESC.raw().f),
        i64::from(sys::hipChannelFormatKindUnsigned)
    );
    assert_eq!(
        i64::from(f32::DESC.raw().f),
        i64::from(sys::hipChannelFormatKindFloat)
    );
}

#[cfg(hip_platform = "amd")]
#[test]
fn texture_and_surface_parameters_are_pointers_in_amd_metadata() {
    // The kernels of tests/gpu_textures.rs, compiled offline.
    use hip::code_object::{CodeObject, ParamKind};
    let out = hip::rtc::ProgramBuilder::new(common::textures::KERNELS)
        .arch(common::OFFLINE_ARCH)
        .compile()
        .unwrap();
    let code = CodeObject::parse(out.code()).unwrap();
    let kinds = |name: &str| -> Vec<(ParamKind, u64)> {
        let k = code.kernel(name, None).expect("the kernel");
        k.params
            .iter()
            .filter(|p| p.kind != ParamKind::Hidden)
            .map(|p| (p.kind, p.size))
            .collect()
    };
    // What `TextureObject` and `SurfaceObject` tell the signature check: 8-byte pointers on AMD.
    const { assert!(hip::texture::OBJECT_IS_POINTER_PARAM) };
    let (ptr, word) = ((ParamKind::Pointer, 8), (ParamKind::Value, 4));
    assert_eq!(kinds("fetch2d"), [ptr, ptr, ptr, ptr, word]);
    assert_eq!(kinds("fetch_linear"), [ptr, ptr, word]);
    assert_eq!(kinds("paint"), [ptr, word, word]);
    assert_eq!(kinds("repaint"), [ptr, word, word]);
}
