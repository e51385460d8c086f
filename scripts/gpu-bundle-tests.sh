#!/usr/bin/env bash
# A small GPU bundle of chosen `gpu` test files (debug, as the full bundle builds tests), with the run-time
# libraries (the same recipe as scripts/gpu-bundle.sh, a few MiB), for a quick device run of the tests a
# change concerns:
#
#   scripts/gpu-bundle-tests.sh OUT TEST...     e.g. scripts/gpu-bundle-tests.sh .gpu-bundle-holes gpu_soundness_holes
#
# Default: the soundness issue's tests (issue 54) and the ordering tests they touch. FEATURES adds cargo
# features (e.g. FEATURES=gpu,rccl for tests/gpu_rccl_one_rank.rs; then NCCL must be fetched: see
# scripts/gpu-bundle-multi.sh). On the GPU machine `bash OUT/run.sh` runs each test binary, then each under
# compute-sanitizer memcheck; it exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.gpu-bundle-tests}
shift || true
tests="${*:-gpu_soundness_holes gpu_futures gpu_futures_threads gpu_ordering gpu_overlap gpu_staging gpu_host_fn_release gpu_capture_race gpu_graphs gpu_soundness}"
features=${FEATURES:-gpu}
. scripts/nvidia-env.sh
export CARGO_TARGET_DIR=$nvidia_target CARGO_PROFILE_DEV_DEBUG=0
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
for t in $tests; do
    exe=$(cargo test -q --features "$features" --test "$t" --no-run --message-format=json 2>/dev/null |
        T=$t python3 -c 'import json,os,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["name"]==os.environ["T"]:
        print(m["executable"])')
    cp "$exe" "$out/bin/test-$t"
done
strip "$out"/bin/*
xz -T2 -6 "$out"/bin/*
cp -L "$cuda/lib/$cudart_so" "$out/lib/"
for l in $nvrtc_libs; do xz -T2 -6 -c "$cuda/lib/$l" > "$out/lib/$l.xz"; done
# The CUDA headers of the NVRTC that travels (1.4 MiB compressed): kernels that include CUDA's own
# headers (cooperative_groups.h) must see the ones matching NVRTC's built-in headers, not the GPU
# machine's toolkit (a newer CUDA's cuda_fp8.hpp does not parse under NVRTC 12.9).
tar -C "$cuda" -cJf "$out/cuda-include.tar.xz" include
echo "$nvidia_label" > "$out/built-with"
echo "$tests" > "$out/tests"
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
set -u
here=$(cd "$(dirname "$0")" && pwd)
for f in "$here"/lib/*.xz "$here"/bin/*.xz; do [ -f "${f%.xz}" ] || xz -dk "$f"; done
chmod +x "$here"/bin/*
rm -f "$here"/bin/*.xz
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -d "$here/include" ] || tar -C "$here" -xJf "$here/cuda-include.tar.xz"
export HIP_RS_CUDA_INCLUDE=${HIP_RS_CUDA_INCLUDE:-$here/include}
fail=0
echo "built with: $(cat "$here/built-with")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
for t in $(cat "$here/tests"); do
    echo "=== test-$t"
    "$here/bin/test-$t" --test-threads=1 --nocapture || fail=1
done
if command -v compute-sanitizer >/dev/null && [ "${SKIP_MEMCHECK:-0}" != 1 ]; then
    for t in $(cat "$here/tests"); do
        echo "=== memcheck test-$t"
        log="$here/memcheck-$t.log"
        compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 \
            "$here/bin/test-$t" --test-threads=1 --skip deliberate_device_fault > "$log" 2>&1 || fail=1
        grep -E "ERROR SUMMARY|test result|Target application" "$log"
    done
fi
echo "=== result: $([ $fail = 0 ] && echo ok || echo FAILED)"
exit $fail
RUN
chmod +x "$out/run.sh"
du -sh "$out"
