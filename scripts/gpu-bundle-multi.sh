#!/usr/bin/env bash
# Build the two-GPU tests (`--features gpu-multi,rccl`: tests/gpu_rccl.rs, gpu_multi.rs, gpu_multi_ordering.rs), the
# all-reduce / peer-copy benchmark (bench/src/bin/rccl.rs) and its raw C baseline (bench/baseline/
# nccl_bench.c, gcc against nccl.h) for HIP's NVIDIA platform on a machine without a GPU, and pack them with
# the run-time libraries (libcudart 11.8; NVRTC 11.8 and NCCL 2.21.5, xz-compressed) into one folder
# (default .gpu-bundle-multi/) under 64 MiB. On a 2-GPU machine, `bash .gpu-bundle-multi/run.sh` runs it.
#
# PyPI's libnccl.so.2 for CUDA 11 is 192 MB: cubins for sm_35..sm_80 and PTX for compute_80. Hopper runs
# none of those cubins (it JIT-compiles the PTX), so scripts/prune-fatbin.py zeroes them (--keep-sm adds
# architectures back, e.g. KEEP_SM="80" for an A100 machine) before xz.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.gpu-bundle-multi}
scripts/fetch-cuda11.sh target/cuda11 >/dev/null
scripts/fetch-nccl.sh target/cuda11 >/dev/null
export HIP_PLATFORM=nvidia HIP_SYS_CUDA_INCLUDE=$PWD/target/cuda11/include HIP_SYS_CUDA_LIB=$PWD/target/cuda11/lib
export CARGO_TARGET_DIR=target/nvidia CARGO_PROFILE_DEV_DEBUG=0
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
cargo build -q --release -p hip-rs-bench --features rccl --bin rccl
cp "$CARGO_TARGET_DIR/release/rccl" "$out/bin/bench-rccl"
for t in gpu_rccl gpu_multi gpu_multi_ordering; do
    exe=$(cargo test -q --features gpu-multi,rccl --test "$t" --no-run --message-format=json 2>/dev/null |
        python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable"): print(m["executable"])' | tail -1)
    cp "$exe" "$out/bin/test-$t"
done
gcc -O2 -Wall -D__HIP_PLATFORM_NVIDIA__ -I/usr/include -Itarget/cuda11/include bench/baseline/nccl_bench.c \
    -Ltarget/cuda11/lib -lnccl -lcudart -o "$out/bin/nccl_bench"
strip "$out"/bin/*
cp -L target/cuda11/lib/libcudart.so.11.0 "$out/lib/"
keep=(); for sm in ${KEEP_SM:-}; do keep+=(--keep-sm "$sm"); done
python3 scripts/prune-fatbin.py target/cuda11/lib/libnccl.so.2 "$out/lib/libnccl.so.2" "${keep[@]}"
xz -T2 -6 "$out/lib/libnccl.so.2"
for l in libnvrtc.so.11.2 libnvrtc-builtins.so.11.8; do xz -T2 -6 -c "target/cuda11/lib/$l" > "$out/lib/$l.xz"; done
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# On a machine with two NVIDIA GPUs: every two-GPU test, then the benchmark (markdown tables on stdout and
# in $OUT/rccl-bench.md when $OUT is set). Exits non-zero on any failure.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
for f in "$here"/lib/*.xz; do [ -f "${f%.xz}" ] || xz -dk "$f"; done
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# NCCL 2.21.5 for CUDA 11 has no sm_90 cubins: the driver JIT-compiles its PTX once; keep that in a cache
# every process shares, outside the bundle so a re-sent bundle keeps it, and load kernels lazily.
export CUDA_CACHE_PATH="${CUDA_CACHE_PATH:-/tmp/hip-rs-nv-cache}" CUDA_CACHE_MAXSIZE=4294967296 CUDA_MODULE_LOADING=LAZY
fail=0
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader || true
nvidia-smi topo -m 2>/dev/null | head -4 || true
for t in "$here"/bin/test-*; do
    echo "=== $(basename "$t")"
    "$t" --test-threads=1 || fail=1
done
echo "=== bench-rccl"
"$here/bin/bench-rccl" --baseline "$here/bin/nccl_bench" ${MAX_BYTES:+--max-bytes $MAX_BYTES} | tee "${OUT:-$here}/rccl-bench.md" || fail=1
echo "=== overall: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
RUN
chmod +x "$out/run.sh"
du -sh "$out"; ls -la "$out/bin" "$out/lib"
