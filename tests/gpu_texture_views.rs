//! Resource views on a real device (issue 57, family 7): a texture that reads an array's elements as
//! another format of the same size (`TextureObject::from_array_as`), values checked against the host.
//! Compiled only with `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use common::device;
use common::textures::fetch_2d;
use hip::prelude::*;
use hip::texture::{Array, ArrayFlags, Extent, FilterMode, TextureDesc, TextureObject};

/// Kernels reading a 2-D texture at texel centres as `unsigned int` and as `int`.
const INT_FETCH: &str = r#"
#ifdef __CUDACC_RTC__
typedef cudaTextureObject_t tex_t;
#else
#include <hip/hip_runtime.h>
typedef hipTextureObject_t tex_t;
#endif
extern "C" __global__ void fetch_u32(tex_t t, unsigned* out, unsigned w, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<unsigned int>(t, i % w + 0.5f, i / w + 0.5f);
}
extern "C" __global__ void fetch_i32(tex_t t, int* out, unsigned w, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<int>(t, i % w + 0.5f, i / w + 0.5f);
}
"#;

/// `kernel` (fetch_u32 or fetch_i32) of each texel of a `w`-wide texture of `n` texels.
fn fetch_ints<T: hip::DeviceCopy>(
    m: &Module,
    kernel: &str,
    s: &Stream,
    t: &TextureObject,
    w: usize,
    n: usize,
) -> Vec<T> {
    let mut out = DeviceBuffer::<T>::zeroed(s.device(), n).unwrap();
    let (w, n) = (w as u32, n as u32);
    let mut args = LaunchArgs::new();
    args.arg(t).arg_mut(&mut out).arg(&w).arg(&n);
    let f = m.function(kernel).unwrap();
    // SAFETY: (texture, unsigned* or int*, unsigned, unsigned) as both kernels take them; out[..n] is
    // written, 4-byte elements as T is here.
    unsafe { f.launch(s, &LaunchConfig::for_num_elems(n), &mut args) }.unwrap();
    out.to_vec().unwrap()
}

/// Resource views (hip-tests has no case of its own: a view of another format is what
/// `hipCreateTextureObject`'s fourth argument is for): a `u32` array holding the bits of floats read as
/// floats, each float exactly; `[u8; 4]` texels read as one little-endian `u32` each; `u32` read as
/// `i32`, the bits unchanged. Refused before HIP: linear filtering of the integer array read as floats
/// (CUDA checks the filter against the array's own format: it answered `hipErrorUnknown` when asked),
/// and a view of another size.
#[test]
fn arrays_are_read_through_views_of_another_format() {
    let d = device();
    let m = common::load(&d, common::textures::KERNELS);
    let ints = common::load(&d, INT_FETCH);
    let s = Stream::new(&d).unwrap();
    let (w, h) = (16, 4);
    let values: Vec<f32> = (0..w * h)
        .map(|i| ((i * 37 % 101) as f32) * 0.25 - 7.0)
        .collect();
    let bits: Vec<u32> = values.iter().map(|v| v.to_bits()).collect();
    let mut a = Array::<u32>::zeroed(&d, Extent::new(w, h, 0), ArrayFlags::DEFAULT).unwrap();
    let src = DeviceBuffer::from_slice(&d, &bits).unwrap();
    s.copy_2d_to_array_async(&src, w * 4, &mut a, (0, 0), w, h)
        .unwrap();
    let as_float = TextureObject::from_array_as::<f32, _>(&a, &TextureDesc::default()).unwrap();
    let centres: Vec<(f32, f32)> = (0..w * h)
        .map(|i| ((i % w) as f32 + 0.5, (i / w) as f32 + 0.5))
        .collect();
    assert_eq!(fetch_2d(&m, &s, &as_float, &centres), values);
    let as_signed = TextureObject::from_array_as::<i32, _>(&a, &TextureDesc::default()).unwrap();
    let want: Vec<i32> = bits.iter().map(|&b| b as i32).collect();
    assert_eq!(
        fetch_ints::<i32>(&ints, "fetch_i32", &s, &as_signed, w, w * h),
        want
    );
    // Four bytes per texel, read as one u32 (little-endian, as the host packs them).
    let texels: Vec<[u8; 4]> = (0..w * h)
        .map(|i| [i as u8, (i * 3) as u8, (i * 7) as u8, 255 - i as u8])
        .collect();
    let mut rgba = Array::<[u8; 4]>::zeroed(&d, Extent::new(w, h, 0), ArrayFlags::DEFAULT).unwrap();
    let src = DeviceBuffer::from_slice(&d, &texels).unwrap();
    s.copy_2d_to_array_async(&src, w * 4, &mut rgba, (0, 0), w, h)
        .unwrap();
    let packed = TextureObject::from_array_as::<u32, _>(&rgba, &TextureDesc::default()).unwrap();
    let want: Vec<u32> = texels.iter().map(|&t| u32::from_le_bytes(t)).collect();
    assert_eq!(
        fetch_ints::<u32>(&ints, "fetch_u32", &s, &packed, w, w * h),
        want
    );
    // Linear filtering of the integer array read as floats: refused before HIP.
    let linear = TextureDesc {
        filter: FilterMode::Linear,
        ..TextureDesc::default()
    };
    let e = TextureObject::from_array_as::<f32, _>(&a, &linear).unwrap_err();
    assert!(matches!(e, hip::Error::InvalidArgument { .. }), "{e}");
    // A view of another size: refused before HIP, naming both sizes.
    let narrow = Array::<u16>::zeroed(&d, Extent::new(w, 0, 0), ArrayFlags::DEFAULT).unwrap();
    let e = TextureObject::from_array_as::<f32, _>(&narrow, &TextureDesc::default()).unwrap_err();
    assert!(e.to_string().contains("2 bytes"), "{e}");
}
