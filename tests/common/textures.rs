//! The texture and surface kernels of tests/gpu_textures.rs, also compiled offline by
//! tests/textures_absent.rs (HIPRTC on AMD; NVRTC on NVIDIA, where the object types are CUDA's).

/// `fetch2d`, `fetch1d`, `fetch_linear`, `fetch3d`, `fetch2d_layered`, `fetch1d_layered` (texture reads),
/// `paint` and `repaint` (surface writes, and a read then a write).
pub const KERNELS: &str = r#"
#ifdef __CUDACC_RTC__
typedef cudaTextureObject_t tex_t;
typedef cudaSurfaceObject_t surf_t;
#else
#include <hip/hip_runtime.h>
typedef hipTextureObject_t tex_t;
typedef hipSurfaceObject_t surf_t;
#endif
extern "C" __global__ void fetch2d(tex_t t, const float* xs, const float* ys, float* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float>(t, xs[i], ys[i]);
}
extern "C" __global__ void fetch1d(tex_t t, const float* us, float* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(t, us[i]);
}
extern "C" __global__ void fetch_linear(tex_t t, float* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(t, (int)i);
}
extern "C" __global__ void fetch3d(tex_t t, float* out, unsigned w, unsigned h, unsigned d) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < w * h * d) {
        unsigned x = i % w, y = (i / w) % h, z = i / (w * h);
        out[i] = tex3D<float>(t, x + 0.5f, y + 0.5f, z + 0.5f);
    }
}
extern "C" __global__ void fetch2d_layered(tex_t t, float* out, unsigned w, unsigned h, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < w * h * n) {
        unsigned x = i % w, y = (i / w) % h, l = i / (w * h);
        out[i] = tex2DLayered<float>(t, x + 0.5f, y + 0.5f, (int)l);
    }
}
extern "C" __global__ void fetch1d_layered(tex_t t, float* out, unsigned w, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < w * n) out[i] = tex1DLayered<float>(t, i % w + 0.5f, (int)(i / w));
}
extern "C" __global__ void paint(surf_t s, unsigned w, unsigned h) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) surf2Dwrite((float)(y * 1000 + x), s, (int)(x * sizeof(float)), (int)y);
}
extern "C" __global__ void repaint(surf_t s, unsigned w, unsigned h) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) {
        float v;
        surf2Dread(&v, s, (int)(x * sizeof(float)), (int)y);
        surf2Dwrite(v * 2.0f + 1.0f, s, (int)(x * sizeof(float)), (int)y);
    }
}
"#;

/// `fetch_lod`: one mipmap level sampled at every texel centre (`tex2DLod`), appended to [`KERNELS`] by
/// tests/gpu_textures.rs. Not in `KERNELS`: gfx90a, the architecture of the offline compiles and of the
/// shadow runtime's device, has no image instructions with a level of detail (LLVM aborts the compile).
pub const MIPMAP_KERNEL: &str = r#"
extern "C" __global__ void fetch_lod(tex_t t, float lod, float* out, unsigned w, unsigned h) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < w * h) out[i] = tex2DLod<float>(t, (i % w + 0.5f) / w, (i / w + 0.5f) / h, lod);
}
"#;

/// `fetch_lod`'s signature with a level-0 read (`tex2D`) for the shadow runtime, which runs no kernel
/// body (a launch reads the texture's memory for its declared time) on a gfx90a-like device.
pub const MIPMAP_KERNEL_SHADOW: &str = r#"
extern "C" __global__ void fetch_lod(tex_t t, float lod, float* out, unsigned w, unsigned h) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < w * h) out[i] = tex2D<float>(t, (i % w + 0.5f) / w, (i / w + 0.5f) / h) + lod;
}
"#;

/// `fetch2d` (`tex2D<float>`) of `t` at each (x, y), by `m` (a module of [`KERNELS`]) on `s`. The output
/// starts as NaN, which no texel the tests write is, so a fetch that never wrote shows.
#[allow(dead_code)] // tests/shadow_textures.rs includes this file and fetches its own way
pub fn fetch_2d(
    m: &hip::Module,
    s: &hip::Stream,
    t: &hip::texture::TextureObject,
    xy: &[(f32, f32)],
) -> Vec<f32> {
    use hip::prelude::*;
    let d = s.device();
    let xs = DeviceBuffer::from_slice(d, &xy.iter().map(|p| p.0).collect::<Vec<_>>()).unwrap();
    let ys = DeviceBuffer::from_slice(d, &xy.iter().map(|p| p.1).collect::<Vec<_>>()).unwrap();
    let mut out = DeviceBuffer::from_slice(d, &vec![f32::NAN; xy.len()]).unwrap();
    let n = xy.len() as u32;
    let mut args = LaunchArgs::new();
    args.arg(t).arg(&xs).arg(&ys).arg_mut(&mut out).arg(&n);
    let f = m.function("fetch2d").unwrap();
    // SAFETY: (texture, const float*, const float*, float*, unsigned) as fetch2d takes them; it reads
    // xs, ys and the texture and writes out[..n].
    unsafe { f.launch(s, &LaunchConfig::for_num_elems(n), &mut args) }.unwrap();
    out.to_vec().unwrap()
}
