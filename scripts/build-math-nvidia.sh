#!/usr/bin/env bash
# Build a ROCm math library's NVIDIA backend from its upstream source (hipBLAS over cuBLAS, hipRAND over
# cuRAND, hipFFT over cuFFT), for the `blas` / `rand` / `fft` features on HIP's NVIDIA platform. No
# registry has them: bring the source in yourself at the ROCm tag matching the HIP headers (rocm-5.2.3 for
# Debian bookworm's HIP 5.2.3), and hand its path here. Nothing of it is copied into this repository.
#
#   scripts/build-math-nvidia.sh blas|rand|fft SRC [DEST]
#
# SRC: the library's source tree (its CMakeLists.txt and library/). DEST (default target/hip<lib>-nvidia)
# receives include/hip<lib>/ (the headers, plus what CMake would generate: version and export headers) and
# lib/lib<name>.so.<soname>. The CUDA library comes from scripts/fetch-cuda-libs.sh (CUDA 11.8's: these
# backends are C++ over HIP 5.2.3's headers, which compile as C++ only against CUDA 11), the runtime from
# scripts/fetch-cuda.sh 11, HIP's headers from the machine's HIP. Then build with
# HIPBLAS_PATH / HIPRAND_PATH / HIPFFT_PATH=DEST (docs/GPU.md).
set -euo pipefail
[ $# -ge 2 ] || { sed -n '7,7p' "$0" | sed 's/^# //' >&2; exit 2; }
lib=$1
src=$(cd "$2" && pwd)
cd "$(dirname "$0")/.."
case $lib in
    blas) name=hipblas soname=0 cuda_lib=cublas backend=hipblas.cpp extra=hipblas_auxiliary.cpp ;;
    rand) name=hiprand soname=1 cuda_lib=curand backend=hiprand.cpp extra= ;;
    fft) name=hipfft soname=0 cuda_lib=cufft backend=hipfft.cpp extra= ;;
    *) echo "build-math-nvidia: unknown library '$lib' (blas, rand, fft)" >&2; exit 2 ;;
esac
dest=${3:-target/$name-nvidia}
backend_path=$src/library/src/nvcc_detail/$backend
[ -f "$backend_path" ] || backend_path=$src/library/src/nvidia_detail/$backend
[ -f "$backend_path" ] || { echo "build-math-nvidia: no nvcc_detail/ or nvidia_detail/$backend under $src/library/src" >&2; exit 1; }
scripts/fetch-cuda.sh 11 target/cuda11 >/dev/null
scripts/fetch-cuda-libs.sh "$lib" >/dev/null
cuda=$PWD/target/cuda11
hip_include=$(dirname "$(dirname "$(readlink -f "$(echo '#include <hip/hip_runtime_api.h>' |
    cpp -H -x c - -D__HIP_PLATFORM_NVIDIA__ -I"$cuda/include" -I"${ROCM_PATH:-/opt/rocm}/include" 2>&1 >/dev/null |
    grep -m1 'hip_runtime_api.h' | awk '{print $2}')")")")
# The version, as CMake has it (rocm_setup_version / project VERSION / set(<lib>_VERSION ...)).
version=$(grep -v cmake_minimum_required "$src/CMakeLists.txt" |
    grep -oE '(VERSION_STRING|rocm_setup_version\( *VERSION|_VERSION|VERSION) *"?[0-9]+\.[0-9]+\.[0-9]+' |
    grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -1)
IFS=. read -r major minor patch <<<"${version:-0.0.0}"
inc=$dest/include/$name
rm -rf "$dest" && mkdir -p "$inc" "$dest/lib"
if [ -d "$src/library/include/$name" ]; then
    cp "$src/library/include/$name/"*.h "$inc/"
else
    cp "$src/library/include/"*.h "$inc/"
    ln -s "$name/$name.h" "$dest/include/$name.h"
fi
# The headers CMake generates: each version header from its .in, and an export header.
for tmpl in "$src"/library/include/*version.h.in "$src"/library/include/"$name"/*version.h.in; do
    [ -f "$tmpl" ] || continue
    out=$(basename "$tmpl" .in)
    sed -E -e "s/@[A-Za-z]+_VERSION_MAJOR@/$major/g; s/@[A-Za-z]+_VERSION_MINOR@/$minor/g" \
        -e "s/@[A-Za-z]+_VERSION_PATCH@/$patch/g; s/@[A-Za-z]+_VERSION_TWEAK@/0/g" \
        -e "s/@[A-Za-z]+_VERSION_NUMBER@/$((major * 100000 + minor * 100 + patch))/g" "$tmpl" > "$inc/$out"
done
upper=$(echo "$name" | tr a-z A-Z)
cat > "$inc/$name-export.h" <<H
/* Written by scripts/build-math-nvidia.sh in place of CMake's generated export header. */
#ifndef ${upper}_EXPORT_H
#define ${upper}_EXPORT_H
#define ${upper}_EXPORT __attribute__((visibility("default")))
#define ${upper}_NO_EXPORT __attribute__((visibility("hidden")))
#define ${upper}_DEPRECATED __attribute__((__deprecated__))
#define ${upper}_DEPRECATED_EXPORT ${upper}_EXPORT ${upper}_DEPRECATED
#endif
H
sources=("$backend_path")
[ -n "$extra" ] && [ -f "$src/library/src/$extra" ] && sources+=("$src/library/src/$extra")
g++ -std=c++17 -O2 -fPIC -shared -w -D__HIP_PLATFORM_NVIDIA__ -D__HIP_PLATFORM_NVCC__ \
    -I"$inc" -I"$dest/include" -I"$src/library/src/include" -I"$src/library/include" -I"$hip_include" -I"$cuda/include" \
    "${sources[@]}" -Wl,-soname,lib$name.so.$soname -o "$dest/lib/lib$name.so.$soname" \
    -L"$cuda/lib" -l"$cuda_lib" -lcudart -Wl,--no-undefined
ln -s "lib$name.so.$soname" "$dest/lib/lib$name.so"
echo "$name $version for NVIDIA (over $cuda_lib, CUDA 11.8) in $dest (HIP headers from $hip_include)"
