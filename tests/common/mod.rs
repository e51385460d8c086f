//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod elf;
pub mod tempdir;

/// The vector-add kernel every test and example compiles.
pub const VECTOR_ADD: &str = r#"
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"#;

/// The offline target used where no GPU is present.
pub const OFFLINE_ARCH: &str = "gfx90a";
