#!/usr/bin/env bash
# Fetch cuBLAS 11.11 for CUDA 11.8 (PyPI's nvidia-cublas-cu11: cublas_v2.h, libcublas.so.11 and
# libcublasLt.so.11) into the CUDA-like tree of scripts/fetch-cuda11.sh (default target/cuda11), for
# hipBLAS's NVIDIA backend (scripts/build-hipblas-nvidia.sh). About 420 MB to download; idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-target/cuda11}
[ -f "$dest/include/cublas_v2.h" ] && [ -f "$dest/lib/libcublasLt.so.11" ] && { echo "$dest: cuBLAS present"; exit 0; }
wheels=$(mktemp -d)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux1_x86_64 --platform manylinux2014_x86_64 -d "$wheels" nvidia-cublas-cu11==11.11.3.6
unpacked=$(mktemp -d)
for w in "$wheels"/*.whl; do python3 -m zipfile -e "$w" "$unpacked"; done
mkdir -p "$dest/include" "$dest/lib"
cp "$unpacked"/nvidia/cublas/include/*.h "$dest/include/"
cp "$unpacked"/nvidia/cublas/lib/libcublas*.so.11 "$dest/lib/"
ln -sf libcublas.so.11 "$dest/lib/libcublas.so"
ln -sf libcublasLt.so.11 "$dest/lib/libcublasLt.so"
rm -rf "$wheels" "$unpacked"
echo "cuBLAS 11.11 headers and libraries in $dest"
