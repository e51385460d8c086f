#!/usr/bin/env bash
# Fetch CUDA 11.8's math libraries from PyPI into the CUDA 11.8 tree of scripts/fetch-cuda.sh 11 (default
# target/cuda11/{include,lib}), for the NVIDIA backends of hipBLAS, hipRAND, hipFFT, hipSOLVER and
# hipSPARSE (scripts/build-math-nvidia.sh). Idempotent.
#
#   scripts/fetch-cuda-libs.sh blas|rand|fft|solver|sparse... [--dest DIR]
#
#   blas  nvidia-cublas-cu11 11.11.3.6  cublas_v2.h, libcublas.so.11, libcublasLt.so.11 (about 420 MB)
#   rand  nvidia-curand-cu11 10.3.0.86  curand.h, libcurand.so.10 (about 100 MB)
#   fft   nvidia-cufft-cu11  10.9.0.58  cufft.h, libcufft.so.10 (about 280 MB)
#   sparse nvidia-cusparse-cu11 11.7.5.86 cusparse.h, libcusparse.so.11 (280 MB; CUDA 11.8's)
#   solver nvidia-cusolver-cu11 11.4.1.48 cusolverDn.h, libcusolver.so.11 (303 MB; CUDA 11.8's) and
#          libcusolverMg.so.11 (not used). libcusolver.so.11 needs libcublas.so.11 and libcublasLt.so.11
#          (its NEEDED entries; it opens nothing else, libcusparse included) and cusolverDn.h includes
#          cublas_api.h: solver also fetches blas
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/wheels.sh
dest=target/cuda11
libs=()
while [ $# -gt 0 ]; do
    case $1 in
        --dest) dest=$2; shift 2 ;;
        blas | rand | fft | sparse) libs+=("$1"); shift ;;
        solver) libs+=(blas solver); shift ;;
        *) echo "fetch-cuda-libs: unknown argument '$1' (blas, rand, fft, solver, sparse, --dest DIR)" >&2; exit 2 ;;
    esac
done
for lib in "${libs[@]}"; do
    case $lib in
        blas) wheel=nvidia-cublas-cu11==11.11.3.6 dir=cublas check=libcublasLt.so.11 ;;
        rand) wheel=nvidia-curand-cu11==10.3.0.86 dir=curand check=libcurand.so.10 ;;
        fft) wheel=nvidia-cufft-cu11==10.9.0.58 dir=cufft check=libcufft.so.10 ;;
        sparse) wheel=nvidia-cusparse-cu11==11.7.5.86 dir=cusparse check=libcusparse.so.11 ;;
        solver) wheel=nvidia-cusolver-cu11==11.4.1.48 dir=cusolver check=libcusolver.so.11 ;;
    esac
    [ -f "$dest/lib/$check" ] && { echo "$dest: $wheel present"; continue; }
    unpacked=$(mktemp -d)
    unpack_wheels "$unpacked" "manylinux1_x86_64 manylinux2014_x86_64" "$wheel"
    mkdir -p "$dest/include" "$dest/lib"
    cp "$unpacked/nvidia/$dir/include/"*.h "$dest/include/"
    for so in "$unpacked/nvidia/$dir/lib/"*.so.*; do
        cp "$so" "$dest/lib/"
        base=$(basename "$so")
        ln -sf "$base" "$dest/lib/${base%%.so.*}.so"
    done
    rm -rf "$unpacked"
    echo "$wheel in $dest"
done
