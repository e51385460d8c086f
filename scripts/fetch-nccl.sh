#!/usr/bin/env bash
# Fetch NCCL from PyPI (nccl.h and libnccl.so.2) into the CUDA-like tree of scripts/fetch-cuda.sh, for the
# `rccl` feature on HIP's NVIDIA platform. Idempotent.
#
#   scripts/fetch-nccl.sh [12|11] [DEST]     default: 12 into target/cuda12
#
#   12  nvidia-nccl-cu12 2.21.5: has Hopper code (sm_90 cubins), so nothing is JIT-compiled on an H100/H200.
#   11  nvidia-nccl-cu11 2.21.5: PTX only for Hopper; the driver JIT-compiles it on a machine's first run.
# The same NCCL release for both, so a cold-start comparison differs only in the Hopper code. The newest
# (2.32.3 for CUDA 12) is 451 MB, 40 MB once pruned to sm_90 and xz-packed: with NVRTC 12 beside it, over
# the 64 MiB a GPU-machine call carries.
set -euo pipefail
cd "$(dirname "$0")/.."
major=${1:-12}
case $major in
    12) wheel=nvidia-nccl-cu12==2.21.5 ;;
    11) wheel=nvidia-nccl-cu11==2.21.5 ;;
    *) echo "fetch-nccl: CUDA major version '$major' is not one this project fetches (12 or 11)" >&2; exit 2 ;;
esac
dest=${2:-target/cuda$major}
[ -f "$dest/include/nccl.h" ] && [ -f "$dest/lib/libnccl.so.2" ] && { echo "$dest: NCCL present"; exit 0; }
. scripts/lib/wheels.sh
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
unpack_wheels "$unpacked" "manylinux1_x86_64 manylinux2014_x86_64 manylinux_2_17_x86_64 manylinux_2_18_x86_64
    manylinux_2_27_x86_64 manylinux_2_28_x86_64" "$wheel"
mkdir -p "$dest/include" "$dest/lib"
cp "$unpacked"/nvidia/nccl/include/*.h "$dest/include/"
cp "$unpacked"/nvidia/nccl/lib/libnccl.so.2 "$dest/lib/"
ln -sf libnccl.so.2 "$dest/lib/libnccl.so"
echo "$wheel in $dest"
