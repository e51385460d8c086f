#!/usr/bin/env bash
# Builds that keep hip-rs honest beyond the default one (all without a GPU):
#  1. hip-sys against the HIP 7.1 headers from the PyPI triton wheel (headers only: library build, no link);
#  2. the docs.rs build (DOCS_RS set) from the committed bindings, with the HIP install hidden;
#  3. the committed bindings equal what bindgen generates from the installed 5.2.3 headers;
#  4. with the HIP install hidden, the build fails with the one readable "no HIP installation found" message;
#  5. an AMD ROCm layout (/opt/rocm-like tree) found through ROCM_PATH.
# 2 and 4 hide /usr/include/hip in a private mount namespace (needs root and unshare).
set -euo pipefail
cd "$(dirname "$0")/.."
cache=target/ci-cache
mkdir -p "$cache"

echo "== 1. hip-sys against HIP 7.1 headers (triton wheel)"
triton_ver=3.9.0
inc="$cache/triton-$triton_ver/triton/backends/amd"
if [ ! -f "$inc/include/hip/hip_version.h" ]; then
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
        --platform manylinux_2_28_x86_64 -d "$cache/wheel" "triton==$triton_ver"
    python3 -m zipfile -e "$cache"/wheel/triton-"$triton_ver"-*.whl "$cache/triton-$triton_ver.tmp" >/dev/null
    mkdir -p "$cache/triton-$triton_ver/triton/backends"
    rm -rf "$inc"; mv "$cache/triton-$triton_ver.tmp/triton/backends/amd" "$inc"
    rm -rf "$cache/triton-$triton_ver.tmp" "$cache/wheel"
fi
grep -q "HIP_VERSION_MAJOR 7" "$inc/include/hip/hip_version.h"
HIP_PATH="$PWD/$inc" HIP_SYS_VERBOSE=1 cargo build -p hiprs-sys --target-dir target/hip71 2>&1 | grep -E "hip-sys: HIP|Finished|error"
out=$(ls -td target/hip71/debug/build/hiprs-sys-*/out | head -1)
grep -q "pub use self::hipGetDevicePropertiesR0600 as hipGetDeviceProperties;" "$out/bindings.rs"
grep -q "pub type hipDeviceProp_t = hipDeviceProp_tR0600;" "$out/bindings.rs"
echo "HIP 7.1: $(grep -c '^ *pub fn hip' "$out/bindings.rs") hip* functions, R0600 names aliased"

echo "== 2. DOCS_RS build with HIP hidden"
unshare -m bash -c 'mount -t tmpfs none /usr/include/hip && DOCS_RS=1 cargo doc -q -p hiprs-sys -p hiprs-rtc-sys --no-deps --target-dir target/docs-rs'
echo "DOCS_RS docs built without HIP"

echo "== 3. committed bindings are current"
scripts/regen-prebuilt.sh --check

echo "== 4. missing HIP gives one clear message"
log=$(unshare -m bash -c 'mount -t tmpfs none /usr/include/hip && cargo build -p hiprs-sys --target-dir target/no-hip 2>&1' || true)
echo "$log" | grep -q "hip-sys: no HIP installation found." || { echo "$log" >&2; exit 1; }
echo "$log" | grep -q "apt-get install libamdhip64-dev"
echo "$log" | grep -q "Set HIP_PATH"
echo "missing HIP: clear message"

echo "== 5. an AMD ROCm layout (/opt/rocm-like tree) through ROCM_PATH"
# AMD's packages install include/hip, include/amd_comgr/amd_comgr.h, lib/libamdhip64.so[.N],
# lib/libhiprtc.so (ROCm >= 6), lib/libamd_comgr.so.N, lib/llvm and amdgcn/bitcode. Discovery needs only
# include/ and lib/; HIPRTC and comgr find lib/llvm and amdgcn/bitcode themselves. Mimic that tree with
# links to this machine's HIP and build and run against it.
rocm=$PWD/target/rocm-layout
triplet=$(gcc -dumpmachine)
rm -rf "$rocm"
mkdir -p "$rocm/include/amd_comgr" "$rocm/lib/llvm" "$rocm/amdgcn/bitcode"
ln -s /usr/include/hip "$rocm/include/hip"
ln -s /usr/include/amd_comgr.h "$rocm/include/amd_comgr/amd_comgr.h"
for f in libamdhip64.so libamdhip64.so.5 libamd_comgr.so.2; do ln -s "/usr/lib/$triplet/$f" "$rocm/lib/$f"; done
log=$(env -u HIP_PATH ROCM_PATH="$rocm" HIP_SYS_VERBOSE=1 cargo build -p hiprs --target-dir target/rocm-layout-build 2>&1)
echo "$log" | grep -q "found by ROCM_PATH=$rocm" || { echo "$log" >&2; exit 1; }
grep -rqx "cargo:comgr_header=$rocm/include/amd_comgr/amd_comgr.h" target/rocm-layout-build/debug/build/hiprs-rtc-sys-*/output
env -u HIP_PATH ROCM_PATH="$rocm" cargo run -q --example rtc_lowered_names --target-dir target/rocm-layout-build >/dev/null
ROCM_PATH="$rocm" scripts/install-prereqs.sh | grep -q "ROCm found at $rocm; installing nothing"
echo "ROCm layout: install-prereqs installs nothing; HIP found through ROCM_PATH, comgr header from include/amd_comgr/, HIPRTC compiles"
