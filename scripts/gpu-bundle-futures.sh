#!/usr/bin/env bash
# A small GPU bundle for the futures (issue 45): tests/gpu_futures*.rs (debug, as the full bundle builds
# tests) and the release examples futures_bench and async_pipeline, with the run-time libraries (the same
# recipe as scripts/gpu-bundle.sh, a few MiB). On the GPU machine `bash .gpu-bundle-futures/run.sh` runs
# the tests, then the two programs (their numbers go to docs/BENCHMARKS.md, "Futures"), then the tests
# under compute-sanitizer memcheck; it exits non-zero on any failure.
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
for t in gpu_futures gpu_futures_threads; do
    echo "=== test-$t"
    "$here/bin/test-$t" --test-threads=1 --nocapture || fail=1
done
for b in futures_bench async_pipeline; do
    echo "=== bench-$b"; "$here/bin/bench-$b" || fail=1
done
if command -v compute-sanitizer >/dev/null && [ "${SKIP_MEMCHECK:-0}" != 1 ]; then
    for t in gpu_futures gpu_futures_threads; do
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
