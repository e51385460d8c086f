#!/usr/bin/env bash
# Build hipBLAS's NVIDIA backend (its own library/src/nvcc_detail/hipblas.cpp over cuBLAS) from upstream
# source, for the `blas` feature on HIP's NVIDIA platform. No registry has it: bring the source in yourself
# (hipBLAS at the ROCm tag matching the HIP headers: rocm-5.2.3 for Debian bookworm's HIP 5.2.3), and hand
# its path here. Nothing of it is copied into this repository.
#
#   scripts/build-hipblas-nvidia.sh HIPBLAS_SRC [DEST]
#
# HIPBLAS_SRC: a hipBLAS source tree (holding library/include/hipblas.h). DEST (default
# target/hipblas-nvidia) receives include/hipblas/hipblas.h (+ the generated hipblas-export.h and
# hipblas-version.h) and lib/libhipblas.so.0. cuBLAS comes from scripts/fetch-cublas.sh (CUDA 11.8's
# cuBLAS 11.11), the CUDA runtime from scripts/fetch-cuda11.sh, HIP's headers from the machine's HIP.
# Then build with HIPBLAS_PATH=DEST (see docs/GPU.md).
set -euo pipefail
[ $# -ge 1 ] || { sed -n '6,8p' "$0" | sed 's/^# //' >&2; exit 2; }
src=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
dest=${2:-target/hipblas-nvidia}
[ -f "$src/library/include/hipblas.h" ] || { echo "build-hipblas-nvidia: $src/library/include/hipblas.h missing: not a hipBLAS source tree" >&2; exit 1; }
backend=$src/library/src/nvcc_detail/hipblas.cpp
[ -f "$backend" ] || backend=$src/library/src/nvidia_detail/hipblas.cpp
[ -f "$backend" ] || { echo "build-hipblas-nvidia: no nvcc_detail/ or nvidia_detail/hipblas.cpp under $src/library/src" >&2; exit 1; }
scripts/fetch-cuda11.sh target/cuda11 >/dev/null
scripts/fetch-cublas.sh target/cuda11 >/dev/null
cuda=$PWD/target/cuda11
hip_include=$(dirname "$(dirname "$(readlink -f "$(echo '#include <hip/hip_runtime_api.h>' |
    cpp -H -x c - -D__HIP_PLATFORM_NVIDIA__ -I"$cuda/include" -I"${ROCM_PATH:-/opt/rocm}/include" 2>&1 >/dev/null |
    grep -m1 'hip_runtime_api.h' | awk '{print $2}')")")")
version=$(sed -nE 's/^set *\( *VERSION_STRING *"([0-9.]+)".*/\1/p' "$src/CMakeLists.txt")
IFS=. read -r major minor patch <<<"${version:-0.0.0}"
rm -rf "$dest" && mkdir -p "$dest/include/hipblas" "$dest/lib"
cp "$src"/library/include/*.h "$dest/include/hipblas/"
sed -e "s/@hipblas_VERSION_MAJOR@/$major/; s/@hipblas_VERSION_MINOR@/$minor/g; s/@hipblas_VERSION_PATCH@/$patch/; s/@hipblas_VERSION_TWEAK@/0/" \
    "$src/library/include/hipblas-version.h.in" > "$dest/include/hipblas/hipblas-version.h"
cat > "$dest/include/hipblas/hipblas-export.h" <<'H'
/* Written by scripts/build-hipblas-nvidia.sh in place of CMake's generated export header. */
#ifndef HIPBLAS_EXPORT_H
#define HIPBLAS_EXPORT_H
#define HIPBLAS_EXPORT __attribute__((visibility("default")))
#define HIPBLAS_NO_EXPORT __attribute__((visibility("hidden")))
#define HIPBLAS_DEPRECATED __attribute__((__deprecated__))
#define HIPBLAS_DEPRECATED_EXPORT HIPBLAS_EXPORT HIPBLAS_DEPRECATED
#endif
H
ln -s hipblas/hipblas.h "$dest/include/hipblas.h"
others=()
for f in "$src"/library/src/hipblas_auxiliary.cpp; do [ -f "$f" ] && others+=("$f"); done
g++ -std=c++17 -O2 -fPIC -shared -w -D__HIP_PLATFORM_NVIDIA__ -D__HIP_PLATFORM_NVCC__ \
    -I"$dest/include/hipblas" -I"$src/library/src/include" -I"$hip_include" -I"$cuda/include" \
    "$backend" "${others[@]}" -Wl,-soname,libhipblas.so.0 -o "$dest/lib/libhipblas.so.0" \
    -L"$cuda/lib" -lcublas -lcudart -Wl,--no-undefined
ln -s libhipblas.so.0 "$dest/lib/libhipblas.so"
echo "hipBLAS $version for NVIDIA (over cuBLAS 11.11) in $dest (HIP headers from $hip_include)"
