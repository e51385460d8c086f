#!/usr/bin/env bash
# Fetch CUDA's headers and run-time libraries from PyPI into one CUDA-like tree for building hip-rs on HIP's
# NVIDIA platform without a CUDA install.
#
#   scripts/fetch-cuda.sh [12|11] [DEST]     default: 12 into target/cuda12 (11 into target/cuda11)
#
#   12  CUDA 12.9 (runtime 12.9.79, NVRTC 12.9.86, nvcc's crt headers, profiler API, CCCL for nv/target):
#       the default. HIP 5.2.3's NVIDIA headers compile against it as C (the bindings) but not as C++;
#       HIP 5.7.1's compile as both (see DESIGN.md and docs/GPU.md).
#   11  CUDA 11.8 (runtime and NVRTC 11.8.89): what HIP 5.2.3's headers were written for; still built in CI.
# No wheel ships libcuda.so: the NVIDIA build makes a link-time stub (hip-sys/build/nvidia.rs).
# The math libraries and NCCL for either version: scripts/fetch-cuda-libs.sh and scripts/fetch-nccl.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
major=${1:-12}
case $major in
    12) wheels_wanted="nvidia-cuda-runtime-cu12==12.9.79 nvidia-cuda-nvrtc-cu12==12.9.86
            nvidia-cuda-nvcc-cu12==12.9.86 nvidia-cuda-profiler-api-cu12==12.9.79 nvidia-cuda-cccl-cu12==12.9.27"
        parts="cuda_runtime cuda_nvrtc cuda_nvcc cuda_profiler_api cuda_cccl"
        cudart=libcudart.so.12 nvrtc=libnvrtc.so.12 ;;
    11) wheels_wanted="nvidia-cuda-runtime-cu11==11.8.89 nvidia-cuda-nvrtc-cu11==11.8.89
            nvidia-cuda-nvcc-cu11==11.8.89 nvidia-cuda-profiler-api-cu11==11.8.86"
        parts="cuda_runtime cuda_nvrtc cuda_nvcc cuda_profiler_api"
        cudart=libcudart.so.11.0 nvrtc=libnvrtc.so.11.2 ;;
    *) echo "fetch-cuda: CUDA major version '$major' is not one this project fetches (12 or 11)" >&2; exit 2 ;;
esac
dest=${2:-target/cuda$major}
[ -f "$dest/include/cuda_profiler_api.h" ] && [ -f "$dest/lib/libnvrtc.so" ] && { echo "$dest: present"; exit 0; }
. scripts/lib/wheels.sh
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
# shellcheck disable=SC2086 # one wheel per word
unpack_wheels "$unpacked" "manylinux1_x86_64 manylinux2014_x86_64 manylinux_2_17_x86_64 manylinux_2_27_x86_64" \
    $wheels_wanted
mkdir -p "$dest/include" "$dest/lib"
for part in $parts; do
    cp -r "$unpacked/nvidia/$part/include/." "$dest/include/"
    if [ -d "$unpacked/nvidia/$part/lib" ]; then cp -r "$unpacked/nvidia/$part/lib/." "$dest/lib/"; fi
done
# Packaging leftovers and NVRTC 12's alternative build (not used): keep the tree lean.
rm -f "$dest/include/__init__.py" "$dest/lib/__init__.py" "$dest"/lib/*.alt.so*
ln -sf "$cudart" "$dest/lib/libcudart.so"
ln -sf "$nvrtc" "$dest/lib/libnvrtc.so"
echo "CUDA $major headers and libraries in $dest"
