//! The source of the built-in kernels, compiled once per device with HIPRTC (NVRTC on NVIDIA).
//!
//! It includes no header, so it compiles the same with every HIPRTC and NVRTC: half-precision values are
//! carried as their 16 bits and converted with integer code that rounds exactly as the `half` crate
//! does (round to nearest, ties to even; overflow to infinity; NaN kept quiet with its high payload
//! bits), so a conversion on the device gives the same bits as `half::f16::from_f32` on the host.

/// Every kernel's name, as [`SOURCE`] defines it: `convert_<from>_<to>`, `bias_act_<type>`, `act_<type>`.
pub(super) const NAMES: [&str; 12] = [
    "convert_f32_f16",
    "convert_f32_bf16",
    "convert_f16_f32",
    "convert_bf16_f32",
    "convert_f16_bf16",
    "convert_bf16_f16",
    "bias_act_f32",
    "bias_act_f16",
    "bias_act_bf16",
    "act_f32",
    "act_f16",
    "act_bf16",
];

/// The program. `act`: 0 none, 1 ReLU, 2 GELU (tanh approximation, as hipBLASLt's and cuBLASLt's
/// GELU epilogues).
pub(super) const SOURCE: &str = r#"
typedef unsigned int hrs_u32;
typedef unsigned short hrs_u16;
typedef unsigned long long hrs_u64;

__device__ static inline float hrs_from_f32(float x) { return x; }
__device__ static inline float hrs_to_f32(float x) { return x; }

__device__ static inline float hrs_from_f16(hrs_u16 h) {
    hrs_u32 sign = (hrs_u32)(h & 0x8000u) << 16;
    hrs_u32 exp = h & 0x7c00u;
    hrs_u32 man = h & 0x03ffu;
    if ((h & 0x7fffu) == 0) return __uint_as_float(sign);
    if (exp == 0x7c00u) {
        if (man == 0) return __uint_as_float(sign | 0x7f800000u);
        return __uint_as_float(sign | 0x7fc00000u | (man << 13));
    }
    if (exp == 0) {
        /* subnormal: normalise */
        int e = 0;
        while ((man & 0x400u) == 0) { man <<= 1; e++; }
        return __uint_as_float(sign | ((hrs_u32)(127 - 15 - e + 1) << 23) | ((man & 0x3ffu) << 13));
    }
    return __uint_as_float(sign | (((exp >> 10) + 112u) << 23) | (man << 13));
}

__device__ static inline hrs_u16 hrs_to_f16(float f) {
    hrs_u32 x = __float_as_uint(f);
    hrs_u32 sign = x & 0x80000000u;
    hrs_u32 exp = x & 0x7f800000u;
    hrs_u32 man = x & 0x007fffffu;
    if (exp == 0x7f800000u) {
        hrs_u32 nan_bit = man == 0 ? 0u : 0x0200u;
        return (hrs_u16)((sign >> 16) | 0x7c00u | nan_bit | (man >> 13));
    }
    hrs_u32 half_sign = sign >> 16;
    int half_exp = (int)(exp >> 23) - 127 + 15;
    if (half_exp >= 0x1f) return (hrs_u16)(half_sign | 0x7c00u);
    if (half_exp <= 0) {
        if (14 - half_exp > 24) return (hrs_u16)half_sign;
        man |= 0x00800000u;
        hrs_u32 half_man = man >> (14 - half_exp);
        hrs_u32 round_bit = 1u << (13 - half_exp);
        if ((man & round_bit) != 0 && (man & (3u * round_bit - 1u)) != 0) half_man += 1;
        return (hrs_u16)(half_sign | half_man);
    }
    hrs_u32 out = half_sign | ((hrs_u32)half_exp << 10) | (man >> 13);
    hrs_u32 round_bit = 0x00001000u;
    if ((man & round_bit) != 0 && (man & (3u * round_bit - 1u)) != 0) out += 1;
    return (hrs_u16)out;
}

__device__ static inline float hrs_from_bf16(hrs_u16 b) {
    hrs_u32 i = b;
    if ((b & 0x7fffu) > 0x7f80u) i |= 0x0040u;
    return __uint_as_float(i << 16);
}

__device__ static inline hrs_u16 hrs_to_bf16(float f) {
    hrs_u32 x = __float_as_uint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (hrs_u16)((x >> 16) | 0x0040u);
    hrs_u32 round_bit = 0x00008000u;
    if ((x & round_bit) != 0 && (x & (3u * round_bit - 1u)) != 0) return (hrs_u16)((x >> 16) + 1u);
    return (hrs_u16)(x >> 16);
}

#define HRS_CONVERT(NAME, FROM_T, TO_T, FROM, TO)                                          \
extern "C" __global__ void NAME(const FROM_T* src, TO_T* dst, hrs_u64 n) {                 \
    hrs_u64 stride = (hrs_u64)blockDim.x * gridDim.x;                                      \
    for (hrs_u64 i = (hrs_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) { \
        dst[i] = TO(FROM(src[i]));                                                         \
    }                                                                                      \
}

HRS_CONVERT(convert_f32_f16, float, hrs_u16, hrs_from_f32, hrs_to_f16)
HRS_CONVERT(convert_f32_bf16, float, hrs_u16, hrs_from_f32, hrs_to_bf16)
HRS_CONVERT(convert_f16_f32, hrs_u16, float, hrs_from_f16, hrs_to_f32)
HRS_CONVERT(convert_bf16_f32, hrs_u16, float, hrs_from_bf16, hrs_to_f32)
HRS_CONVERT(convert_f16_bf16, hrs_u16, hrs_u16, hrs_from_f16, hrs_to_bf16)
HRS_CONVERT(convert_bf16_f16, hrs_u16, hrs_u16, hrs_from_bf16, hrs_to_f16)

__device__ static inline float hrs_act(float x, int act) {
    if (act == 1) return x > 0.0f ? x : 0.0f;
    if (act == 2) {
        float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
        return 0.5f * x * (1.0f + tanhf(inner));
    }
    return x;
}

/* C (column-major, rows x cols, leading dimension ld) = act(C + bias[row]), or act(C) without bias. */
#define HRS_LOOP(BODY)                                                                          \
    hrs_u64 row_stride = (hrs_u64)blockDim.x * gridDim.x;                                      \
    for (hrs_u64 j = blockIdx.y; j < cols; j += gridDim.y) {                                    \
        for (hrs_u64 i = (hrs_u64)blockIdx.x * blockDim.x + threadIdx.x; i < rows;            \
             i += row_stride) {                                                                 \
            BODY                                                                                \
        }                                                                                       \
    }

#define HRS_BIAS_ACT(T, SUFFIX, FROM, TO)                                                        \
extern "C" __global__ void bias_act_##SUFFIX(T* c, const T* bias, hrs_u64 rows, hrs_u64 cols, \
                                             hrs_u64 ld, int act) {                             \
    HRS_LOOP(c[i + j * ld] = TO(hrs_act(FROM(c[i + j * ld]) + FROM(bias[i]), act));)            \
}                                                                                               \
extern "C" __global__ void act_##SUFFIX(T* c, hrs_u64 rows, hrs_u64 cols, hrs_u64 ld, int act) { \
    HRS_LOOP(c[i + j * ld] = TO(hrs_act(FROM(c[i + j * ld]), act));)                            \
}

HRS_BIAS_ACT(float, f32, hrs_from_f32, hrs_to_f32)
HRS_BIAS_ACT(hrs_u16, f16, hrs_from_f16, hrs_to_f16)
HRS_BIAS_ACT(hrs_u16, bf16, hrs_from_bf16, hrs_to_bf16)
"#;
