#!/usr/bin/env bash
# A small GPU bundle for the futures (issue 45): tests/gpu_futures*.rs (debug, as the full bundle builds
# tests) and the release examples futures_bench and async_pipeline, with the run-time libraries (the same
# recipe as scripts/gpu-bundle.sh, a few MiB). On the GPU machine `bash .gpu-bundle-futures/run.sh` runs
# the tests with each wake mechanism (HIP_RS_FUTURE_WAKE=thread, then reactor), then the two programs
# once, then both over RUNS processes (default 10) with medians and spread (scripts/futures-runs.sh; their
# numbers go to docs/BENCHMARKS.md, "Futures"), then the tests under compute-sanitizer memcheck with the
# reactor; it exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.gpu-bundle-futures}
. scripts/nvidia-env.sh
export CARGO_TARGET_DIR=$nvidia_target CARGO_PROFILE_DEV_DEBUG=0
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
tests="gpu_futures gpu_futures_threads"
cargo build -q --release --example futures_bench --example async_pipeline
for t in $tests; do
    exe=$(cargo test -q --features gpu --test "$t" --no-run --message-format=json 2>/dev/null |
        T=$t python3 -c 'import json,os,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["name"]==os.environ["T"]:
        print(m["executable"])')
    cp "$exe" "$out/bin/test-$t"
done
for ex in futures_bench async_pipeline; do
    cp "$CARGO_TARGET_DIR/release/examples/$ex" "$out/bin/bench-$ex"
done
strip "$out"/bin/*
xz -T2 -6 "$out"/bin/*
cp -L "$cuda/lib/$cudart_so" "$out/lib/"
for l in $nvrtc_libs; do xz -T2 -6 -c "$cuda/lib/$l" > "$out/lib/$l.xz"; done
cp scripts/futures-runs.sh "$out/futures-runs.sh"
echo "$nvidia_label" > "$out/built-with"
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
set -u
here=$(cd "$(dirname "$0")" && pwd)
for f in "$here"/lib/*.xz "$here"/bin/*.xz; do [ -f "${f%.xz}" ] || xz -dk "$f"; done
chmod +x "$here"/bin/*
rm -f "$here"/bin/*.xz
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fail=0
echo "built with: $(cat "$here/built-with")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
# The futures tests with each wake mechanism (issue 56: the reactor beside the waiting thread).
for wake in thread reactor; do
    for t in gpu_futures gpu_futures_threads; do
        echo "=== test-$t (HIP_RS_FUTURE_WAKE=$wake)"
        HIP_RS_FUTURE_WAKE=$wake "$here/bin/test-$t" --test-threads=1 --nocapture || fail=1
    done
done
for b in futures_bench async_pipeline; do
    echo "=== bench-$b"; "$here/bin/bench-$b" || fail=1
done
# Every row of issue 56's futures table over RUNS processes (default 10), medians and spread.
echo "=== futures-runs ($here/futures-runs/)"
bash "$here/futures-runs.sh" "$here/bin" "${RUNS:-10}" "$here/futures-runs" || fail=1
if command -v compute-sanitizer >/dev/null && [ "${SKIP_MEMCHECK:-0}" != 1 ]; then
    for t in gpu_futures gpu_futures_threads; do
        echo "=== memcheck test-$t (HIP_RS_FUTURE_WAKE=reactor; the waiting thread's pass: scripts/gpu-bundle.sh)"
        log="$here/memcheck-$t.log"
        HIP_RS_FUTURE_WAKE=reactor compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 \
            "$here/bin/test-$t" --test-threads=1 --skip deliberate_device_fault > "$log" 2>&1 || fail=1
        grep -E "ERROR SUMMARY|test result|Target application" "$log"
    done
fi
echo "=== result: $([ $fail = 0 ] && echo ok || echo FAILED)"
exit $fail
RUN
chmod +x "$out/run.sh"
du -sh "$out"
