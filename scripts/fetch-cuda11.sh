#!/usr/bin/env bash
# Fetch CUDA 11.8's headers and run-time libraries from PyPI into one CUDA-like tree (default
# target/cuda11/{include,lib}) for building hip-rs on HIP's NVIDIA platform without a CUDA install.
# HIP 5.2.3's NVIDIA headers compile against CUDA 11.8, not 12/13 (see DESIGN.md).
# No wheel ships libcuda.so: the NVIDIA build makes a link-time stub (scripts/cuda-stub.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-target/cuda11}
[ -f "$dest/include/cuda_profiler_api.h" ] && [ -f "$dest/lib/libnvrtc.so" ] && { echo "$dest: present"; exit 0; }
wheels=$(mktemp -d)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux1_x86_64 --platform manylinux2014_x86_64 -d "$wheels" \
    nvidia-cuda-runtime-cu11==11.8.89 nvidia-cuda-nvrtc-cu11==11.8.89 nvidia-cuda-nvcc-cu11==11.8.89 \
    nvidia-cuda-profiler-api-cu11==11.8.86
unpacked=$(mktemp -d)
for w in "$wheels"/*.whl; do python3 -m zipfile -e "$w" "$unpacked"; done
mkdir -p "$dest/include" "$dest/lib"
for part in cuda_runtime cuda_nvrtc cuda_nvcc cuda_profiler_api; do
    cp -r "$unpacked/nvidia/$part/include/." "$dest/include/"
    [ -d "$unpacked/nvidia/$part/lib" ] && cp -r "$unpacked/nvidia/$part/lib/." "$dest/lib/"
done
ln -sf libcudart.so.11.0 "$dest/lib/libcudart.so"
ln -sf libnvrtc.so.11.2 "$dest/lib/libnvrtc.so"
rm -rf "$wheels" "$unpacked"
echo "CUDA 11.8 headers and libraries in $dest"
