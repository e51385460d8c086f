#!/usr/bin/env bash
# The shadow HIP runtime (shadow-hip/, docs/RELIABILITY.md "The shadow runtime"): a stand-in libamdhip64
# with streams as host queues and a happens-before race detector, loaded through the dynamic-loading
# feature. Builds it, runs the shadow ordering and lifetime tests (tests/shadow_*.rs, feature `shadow`)
# once per seed with zero reports required (tests/shadow_event_race.rs among them: the record-vs-wait race
# of issue 54, hole 3, reported on every seed before its fix), then runs the mutation self-test (a
# dropped hipStreamWaitEvent must be reported). Reuses target/dynamic (scripts/check-dynamic-loading.sh builds the workspace there).
set -euo pipefail
cd "$(dirname "$0")/.."
t=${HIP_RS_SHADOW_TARGET_DIR:-target/dynamic}
seeds=${HIP_RS_SHADOW_SEEDS:-8}
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0} CARGO_PROFILE_DEV_DEBUG=${CARGO_PROFILE_DEV_DEBUG:-0}

# The shadow crate is outside the workspace: the lint stage's `cargo fmt --all` and clippy do not see it.
cargo fmt --manifest-path shadow-hip/Cargo.toml --check
cargo clippy -q --manifest-path shadow-hip/Cargo.toml --target-dir "$t" --all-targets -- -D warnings
cargo test -q --manifest-path shadow-hip/Cargo.toml --target-dir "$t" 2>&1 | sed -n "s/^test result/shadow-hip unit tests: test result/p"
cargo build -q --manifest-path shadow-hip/Cargo.toml --target-dir "$t"
export HIP_RS_AMDHIP64=$PWD/$t/debug/libshadow_hip.so
# HIPRTC is the real one (tests/shadow_kernels.rs compiles its kernels offline for the shadow's gfx90a).
export HIP_RS_HIPRTC=${HIP_RS_HIPRTC:-/usr/lib/$(gcc -dumpmachine)/libamdhip64.so.5}
unset HIP_RS_SHADOW_DROP_WAITS
feature=(--workspace --features dynamic-loading,shadow --target-dir "$t")
shadow_tests=(--test shadow_ordering --test shadow_kernels --test shadow_threads --test shadow_knowledge
    --test shadow_multi --test shadow_event_race --test shadow_holes --test shadow_mutation)
cargo clippy -q "${feature[@]}" "${shadow_tests[@]}" -- -D warnings
cargo test -q "${feature[@]}" "${shadow_tests[@]}" --no-run
bins=$(cargo test "${feature[@]}" "${shadow_tests[@]}" --no-run \
    --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"])')
tests=$(echo "$bins" | grep -E '/shadow_(ordering|kernels|threads|knowledge|multi|event_race|holes)-')
mutation=$(echo "$bins" | grep '/shadow_mutation-')

passed=0 failed=0
log=$t/shadow-run.log
for seed in $(seq 1 "$seeds"); do
    for b in $tests; do
        name=$(basename "$b" | sed 's/-[0-9a-f]*$//')
        devices=1
        if [ "$name" = shadow_multi ]; then devices=2; fi
        # One test at a time: the reports are per process, and no other test's synchronization should
        # order (and so hide) this one's accesses.
        if HIP_RS_SHADOW_DEVICES=$devices HIP_RS_SHADOW_SEED=$seed "$b" -q --test-threads=1 >"$log" 2>&1; then
            passed=$((passed + 1))
            echo "seed $seed, $name: $(grep '^test result' "$log")"
        else
            failed=$((failed + 1))
            echo "seed $seed, $name FAILED:"; cat "$log"
        fi
    done
done
echo "shadow test runs: $passed passed, $failed failed ($(echo "$tests" | wc -w) test programs, seeds 1..$seeds)"

echo "mutation self-test (each hipStreamWaitEvent of a two-stream pattern dropped in turn):"
if "$mutation" --test-threads=1 --nocapture >"$log" 2>&1; then
    grep -E "unmutated:|dropped:|^test result" "$log"
else
    cat "$log"; failed=$((failed + 1))
fi
[ "$failed" -eq 0 ]
