#!/usr/bin/env bash
# Build the two-GPU tests (`--features gpu-multi,rccl`: tests/gpu_rccl.rs, gpu_multi.rs, gpu_multi_ordering.rs), the
# all-reduce / peer-copy benchmark (bench/src/bin/rccl.rs) and its raw C baseline (bench/baseline/
# nccl_bench.c, gcc against nccl.h) for HIP's NVIDIA platform on a machine without a GPU, and pack them with
# the run-time libraries (libcudart; NVRTC and NCCL 2.21.5, xz-compressed) into one folder
# (default .gpu-bundle-multi/) under 64 MiB. On a 2-GPU machine, `bash .gpu-bundle-multi/run.sh` runs it.
# On a machine with one GPU, `ONE_GPU=1 bash .gpu-bundle-multi/run.sh` runs what needs only one: the
# one-rank group tests (tests/gpu_rccl_one_rank.rs) and the per-call host cost (bench/src/bin/
# rccl_host_cost.rs).
# CUDA 12.9 by default, CUDA_MAJOR=11 for 11.8 (scripts/nvidia-env.sh).
#
# PyPI's libnccl.so.2 holds cubins for many architectures (CUDA 11's: sm_35..sm_80 and PTX for compute_80;
# CUDA 12's: up to sm_90). scripts/prune-fatbin.py zeroes the cubins other than sm_90 (KEEP_SM="80" adds
# an architecture back, e.g. for an A100 machine) before xz.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.gpu-bundle-multi}
. scripts/nvidia-env.sh
scripts/fetch-nccl.sh "$CUDA_MAJOR" "$cuda" >/dev/null
export CARGO_TARGET_DIR=$nvidia_target CARGO_PROFILE_DEV_DEBUG=0
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
cargo build -q --release -p hip-rs-bench --features rccl --bin rccl --bin rccl_host_cost
cp "$CARGO_TARGET_DIR/release/rccl" "$out/bin/bench-rccl"
cp "$CARGO_TARGET_DIR/release/rccl_host_cost" "$out/bin/bench-rccl_host_cost"
for t in gpu_rccl gpu_rccl_group gpu_rccl_one_rank gpu_multi gpu_multi_ordering; do
    exe=$(cargo test -q --features gpu-multi,rccl --test "$t" --no-run --message-format=json 2>/dev/null |
        python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable"): print(m["executable"])' | tail -1)
    cp "$exe" "$out/bin/test-$t"
done
gcc -O2 -Wall -D__HIP_PLATFORM_NVIDIA__ -I"$hip_include" -I"$cuda/include" bench/baseline/nccl_bench.c \
    -L"$cuda/lib" -lnccl -lcudart -o "$out/bin/nccl_bench"
strip "$out"/bin/*
xz -T2 -6 "$out"/bin/*
cp -L "$cuda/lib/$cudart_so" "$out/lib/"
keep=(--keep-sm 90 --drop-covered-ptx); for sm in ${KEEP_SM:-}; do keep+=(--keep-sm "$sm"); done
python3 scripts/prune-fatbin.py "$cuda/lib/libnccl.so.2" "$out/lib/libnccl.so.2" "${keep[@]}"
xz -T2 -6 "$out/lib/libnccl.so.2"
for l in $nvrtc_libs; do xz -T2 -6 -c "$cuda/lib/$l" > "$out/lib/$l.xz"; done
echo "$nvidia_label, NCCL $(grep -oE 'NCCL_(MAJOR|MINOR|PATCH) [0-9]+' "$cuda/include/nccl.h" | awk '{printf "%s%s", (NR>1?".":""), $2}')" > "$out/built-with"
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# On a machine with two NVIDIA GPUs: every two-GPU test, then the benchmark (markdown tables on stdout and
# in $OUT/rccl-bench.md when $OUT is set). Exits non-zero on any failure.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
for f in "$here"/lib/*.xz "$here"/bin/*.xz; do [ -f "${f%.xz}" ] || xz -dk "$f"; done
rm -f "$here"/bin/*.xz
chmod +x "$here"/bin/*
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# NCCL for CUDA 11 has no sm_90 cubins: the driver JIT-compiles its PTX once; keep that in a cache every
# process shares, outside the bundle so a re-sent bundle keeps it, and load kernels lazily.
echo "built with: $(cat "$here/built-with")"
export CUDA_CACHE_PATH="${CUDA_CACHE_PATH:-/tmp/hip-rs-nv-cache}" CUDA_CACHE_MAXSIZE=4294967296 CUDA_MODULE_LOADING=LAZY
fail=0
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader || true
if [ "${ONE_GPU:-0}" = 1 ]; then
    echo "=== test-gpu_rccl_one_rank"
    "$here/bin/test-gpu_rccl_one_rank" --test-threads=1 || fail=1
    echo "=== bench-rccl_host_cost"
    "$here/bin/bench-rccl_host_cost" || fail=1
    echo "=== overall (one GPU): $([ $fail = 0 ] && echo PASS || echo FAIL)"
    exit $fail
fi
nvidia-smi topo -m 2>/dev/null | head -4 || true
for t in "$here"/bin/test-*; do
    echo "=== $(basename "$t")"
    "$t" --test-threads=1 || fail=1
done
echo "=== bench-rccl"
"$here/bin/bench-rccl" --baseline "$here/bin/nccl_bench" ${MAX_BYTES:+--max-bytes $MAX_BYTES} | tee "${OUT:-$here}/rccl-bench.md" || fail=1
echo "=== bench-rccl_host_cost"
"$here/bin/bench-rccl_host_cost" || fail=1
echo "=== overall: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
RUN
chmod +x "$out/run.sh"
du -sh "$out"; ls -la "$out/bin" "$out/lib"
