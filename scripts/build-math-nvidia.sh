#!/usr/bin/env bash
# Build a ROCm math library's NVIDIA backend from its upstream source (hipBLAS over cuBLAS, hipRAND over
# cuRAND, hipFFT over cuFFT, hipSOLVER over cuSOLVER, hipSPARSE over cuSPARSE), for the `blas` / `rand` /
# `fft` / `solver` / `sparse` features on HIP's NVIDIA platform. No registry has them: bring the source in
# yourself at the ROCm tag matching the HIP headers (rocm-5.2.3 for Debian bookworm's HIP 5.2.3), and hand
# its path here. Nothing of it is copied into this repository.
#
#   scripts/build-math-nvidia.sh blas|rand|fft|solver|sparse SRC [DEST]
#
# SRC: the library's source tree (its CMakeLists.txt and library/). DEST (default target/hip<lib>-nvidia)
# receives include/hip<lib>/ (the headers, plus what CMake would generate: version and export headers, in
# internal/ where hipSOLVER keeps them) and lib/lib<name>.so.<soname>. The CUDA library comes from
# scripts/fetch-cuda-libs.sh (CUDA 11.8's: these backends are C++ over HIP 5.2.3's headers, which compile
# as C++ only against CUDA 11), the runtime from scripts/fetch-cuda.sh 11, HIP's headers from the
# machine's HIP. Then build with HIPBLAS_PATH / HIPRAND_PATH / HIPFFT_PATH / HIPSOLVER_PATH /
# HIPSPARSE_PATH=DEST (docs/GPU.md).
# hipSOLVER 1.4 (rocm-5.2.3) is three sources (nvcc_detail/hipsolver.cpp; nvcc_detail/hipsolver_compat.cpp
# for the hipsolverDn* names; common/hipsolver_compat_common.cpp) over libcusolver.so.11, which itself
# needs libcublas.so.11 and libcublasLt.so.11 (not libcusparse: cuSOLVER 11.4 carries what it uses of it).
# hipSPARSE 2.1 (rocm-5.2.3) is one source over libcusparse.so.11.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '8,8p' "$0" | sed 's/^# //' >&2; exit 2; }
lib=$1
src=$(cd "$2" && pwd)
cd "$(dirname "$0")/.."
case $lib in
    blas) name=hipblas soname=0 cuda_lib=cublas backend=hipblas.cpp extra=hipblas_auxiliary.cpp ;;
    rand) name=hiprand soname=1 cuda_lib=curand backend=hiprand.cpp extra= ;;
    fft) name=hipfft soname=0 cuda_lib=cufft backend=hipfft.cpp extra= ;;
    # The extra sources are relative to library/src; those that do not exist in a version are left out.
    solver) name=hipsolver soname=0 cuda_lib="cusolver -lcublas -lcublasLt" backend=hipsolver.cpp
        extra="nvcc_detail/hipsolver_compat.cpp nvidia_detail/hipsolver_compat.cpp common/hipsolver_compat_common.cpp" ;;
    sparse) name=hipsparse soname=0 cuda_lib=cusparse backend=hipsparse.cpp extra= ;;
    *) echo "build-math-nvidia: unknown library '$lib' (blas, rand, fft, solver, sparse)" >&2; exit 2 ;;
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
# hipSOLVER keeps its types, functions and generated headers in internal/ beside hipsolver.h.
for sub in internal "$name/internal"; do
    [ -d "$src/library/include/$sub" ] || continue
    mkdir -p "$inc/internal" && cp "$src/library/include/$sub/"*.h "$inc/internal/" 2>/dev/null || true
done
# hipSPARSE 2.1 marks its CUDA-11-deprecated calls `[[deprecated(...)]]` where CUDART_VERSION says CUDA 11:
# C++ syntax in a C header, which C (and bindgen's C mode, which hipsparse-sys uses on NVIDIA) cannot parse.
# GCC's and Clang's attribute says the same in both languages.
{ grep -rlsF '[[deprecated(' "$inc" || true; } | xargs -r sed -i 's/\[\[deprecated(\([^]]*\))\]\]/__attribute__((deprecated(\1)))/g'
# The headers CMake generates: each version header from its .in (where its template sits), and an
# export header where the main header includes it.
for tmpl in "$src"/library/include/*version.h.in "$src"/library/include/"$name"/*version.h.in \
    "$src"/library/include/internal/*version.h.in "$src"/library/include/"$name"/internal/*version.h.in; do
    [ -f "$tmpl" ] || continue
    out=$(basename "$tmpl" .in)
    case $tmpl in */internal/*) out=internal/$out ;; esac
    sed -E -e "s/@[A-Za-z]+_VERSION_MAJOR@/$major/g; s/@[A-Za-z]+_VERSION_MINOR@/$minor/g" \
        -e "s/@[A-Za-z]+_VERSION_PATCH@/$patch/g; s/@[A-Za-z]+_VERSION_TWEAK@/0/g" \
        -e "s/@[A-Za-z]+_VERSION_NUMBER@/$((major * 100000 + minor * 100 + patch))/g" "$tmpl" > "$inc/$out"
done
upper=$(echo "$name" | tr a-z A-Z)
export_header=$name-export.h
grep -qs "internal/$name-export.h" "$inc/$name.h" && export_header=internal/$name-export.h
cat > "$inc/$export_header" <<H
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
defines=()
# cuSPARSE 11.7.5 (CUDA 11.8) dropped cusparseSideMode_t, which hipSPARSE 5.2.3 still converts to and
# from in two functions nothing calls: give them a plain int where the header lacks the type.
if [ "$lib" = sparse ] && ! grep -qs cusparseSideMode_t "$cuda/include/cusparse.h"; then
    defines+=(-DcusparseSideMode_t=int -DCUSPARSE_SIDE_LEFT=0 -DCUSPARSE_SIDE_RIGHT=1)
fi
for e in $extra; do [ -f "$src/library/src/$e" ] && sources+=("$src/library/src/$e"); done
# shellcheck disable=SC2086 # cuda_lib may name several libraries
g++ -std=c++17 -O2 -fPIC -shared -w -D__HIP_PLATFORM_NVIDIA__ -D__HIP_PLATFORM_NVCC__ ${defines[@]+"${defines[@]}"} \
    -I"$inc" -I"$dest/include" -I"$src/library/src/include" -I"$src/library/include" -I"$hip_include" -I"$cuda/include" \
    "${sources[@]}" -Wl,-soname,lib$name.so.$soname -o "$dest/lib/lib$name.so.$soname" \
    -L"$cuda/lib" -l$cuda_lib -lcudart -Wl,--no-undefined
ln -s "lib$name.so.$soname" "$dest/lib/lib$name.so"
echo "$name $version for NVIDIA (over ${cuda_lib%% *}, CUDA 11.8) in $dest (HIP headers from $hip_include)"
