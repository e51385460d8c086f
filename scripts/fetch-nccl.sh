#!/usr/bin/env bash
# Fetch NCCL 2.21.5 for CUDA 11.8 (PyPI's nvidia-nccl-cu11: nccl.h and libnccl.so.2) into the CUDA-like
# tree of scripts/fetch-cuda11.sh (default target/cuda11/{include,lib}), for the `rccl` feature on HIP's
# NVIDIA platform. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-target/cuda11}
[ -f "$dest/include/nccl.h" ] && [ -f "$dest/lib/libnccl.so.2" ] && { echo "$dest: NCCL present"; exit 0; }
wheels=$(mktemp -d)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux1_x86_64 --platform manylinux2014_x86_64 -d "$wheels" nvidia-nccl-cu11==2.21.5
unpacked=$(mktemp -d)
for w in "$wheels"/*.whl; do python3 -m zipfile -e "$w" "$unpacked"; done
mkdir -p "$dest/include" "$dest/lib"
cp -r "$unpacked/nvidia/nccl/include/." "$dest/include/"
cp -r "$unpacked/nvidia/nccl/lib/." "$dest/lib/"
ln -sf libnccl.so.2 "$dest/lib/libnccl.so"
rm -rf "$wheels" "$unpacked"
echo "NCCL 2.21.5 headers and library in $dest"
