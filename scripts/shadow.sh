#!/usr/bin/env bash
# The shadow HIP runtime (shadow-hip/, docs/RELIABILITY.md "The shadow runtime"): a stand-in libamdhip64
# with streams as host queues and a happens-before race detector, loaded through the dynamic-loading
# feature. Builds it, runs the shadow ordering and lifetime tests (tests/shadow_*.rs, feature `shadow`)
# once per seed with zero reports required (tests/shadow_event_race.rs among them: the record-vs-wait race
# of issue 54, hole 3, reported on every seed before its fix), then runs the mutation self-test (a
# dropped hipStreamWaitEvent must be reported). Reuses target/dynamic (scripts/check-dynamic-loading.sh builds the workspace there).
# Last, where the experimental chroot has RCCL, the RCCL group tests (tests/shadow_rccl.rs) in that chroot.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${HIP_RS_SHADOW_TARGET_DIR:-target/dynamic}
seeds=${HIP_RS_SHADOW_SEEDS:-8}
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0} CARGO_PROFILE_DEV_DEBUG=${CARGO_PROFILE_DEV_DEBUG:-0}

if [ "${1:-}" = --rccl-in-chroot ]; then
    # Run by the end of this script inside the experimental chroot (RCCL 7.2.4, HIP 7.2.4), where cargo
    # builds into CARGO_TARGET_DIR=target/chroot-experimental. The `rccl` feature links librccl.so.1: a
    # link of that name to the shadow, first in LD_LIBRARY_PATH, makes the dynamic linker map the shadow
    # for it, and the hip crate's dlopen of HIP_RS_AMDHIP64 (the same file) finds that one image
    # (the_shadow_is_one_library_for_hip_and_nccl checks it). The shadow is built here too: the hip crate
    # built from HIP 7.2.4's headers asks for hipGetDevicePropertiesR0600 and their constants.
    seeds=$2 ct=${CARGO_TARGET_DIR:?}
    # (Its lints ran on the host above; built from 7.2.4's headers it differs only by cfg(hip6).)
    cargo build -q --manifest-path shadow-hip/Cargo.toml
    f=(--features dynamic-loading,shadow,rccl --test shadow_rccl)
    cargo clippy -q "${f[@]}" -- -D warnings
    bin=$(cargo test "${f[@]}" --no-run 2>&1 | sed -n 's/^ *Executable .*(\(.*\))$/\1/p')
    mkdir -p "$ct/shadow-rccl"
    ln -sfn "$ct/debug/libshadow_hip.so" "$ct/shadow-rccl/librccl.so.1"
    export HIP_RS_AMDHIP64=$ct/debug/libshadow_hip.so LD_LIBRARY_PATH=$ct/shadow-rccl HIP_RS_SHADOW_DEVICES=2
    unset HIP_RS_SHADOW_DROP_WAITS
    passed=0 failed=0 log=$ct/shadow-rccl.log
    for seed in $(seq 1 "$seeds"); do
        if HIP_RS_SHADOW_SEED=$seed timeout 300 "$bin" -q --test-threads=1 >"$log" 2>&1; then
            passed=$((passed + 1))
            echo "seed $seed, shadow_rccl: $(grep '^test result' "$log")"
        else
            failed=$((failed + 1))
            echo "seed $seed, shadow_rccl FAILED:"; cat "$log"
        fi
    done
    echo "shadow RCCL test runs: $passed passed, $failed failed (seeds 1..$seeds)"
    # What the crate's group refusals prevent, done with them bypassed, must show: hole 4's wrong values,
    # and a race on a collective's output ordered only by an event recorded before ncclGroupEnd.
    echo "RCCL self-check (the refusals bypassed: wrong values and a reported race expected):"
    if timeout 120 "$bin" --ignored --exact the_shadow_sees_what_the_refusals_prevent --nocapture \
        >"$log" 2>&1; then
        grep -E "^self-check:|^race on|^test result" "$log"
    else
        cat "$log"; failed=$((failed + 1))
    fi
    [ "$failed" -eq 0 ]
    exit
fi

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
shadow_tests=(--test shadow_ordering --test shadow_kernels --test shadow_typed_kernels --test shadow_threads --test shadow_futures --test shadow_registered
    --test shadow_knowledge --test shadow_multi --test shadow_event_race --test shadow_holes --test shadow_mutation
    --test shadow_pools --test shadow_runtime_families --test shadow_ipc --test shadow_pool_share --test shadow_cooperative --test shadow_graph_builder --test shadow_graph_edits
    --test shadow_virtual_memory --test shadow_textures)
cargo clippy -q "${feature[@]}" "${shadow_tests[@]}" -- -D warnings
cargo test -q "${feature[@]}" "${shadow_tests[@]}" --no-run
bins=$(cargo test "${feature[@]}" "${shadow_tests[@]}" --no-run \
    --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"])')
# Every program of the list above but the mutation self-test, which runs on its own below.
names=$(printf '%s\n' "${shadow_tests[@]}" | grep -vxE -- '--test|shadow_mutation' | paste -sd'|')
tests=$(echo "$bins" | grep -E "/($names)-")
mutation=$(echo "$bins" | grep '/shadow_mutation-')

passed=0 failed=0
log=$t/shadow-run.log
for seed in $(seq 1 "$seeds"); do
    for b in $tests; do
        name=$(basename "$b" | sed 's/-[0-9a-f]*$//')
        devices=1
        if [ "$name" = shadow_multi ] || [ "$name" = shadow_pools ]; then devices=2; fi
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

# The reactor futures with the executor watch turned off (on by default: hip/src/future/reactor.rs), the
# futures' tests, four seeds.
futures=$(echo "$tests" | grep '/shadow_futures-')
for seed in 1 2 3 4; do
    if HIP_RS_REACTOR_LEAD_US=off HIP_RS_SHADOW_SEED=$seed "$futures" -q --test-threads=1 >"$log" 2>&1; then
        echo "seed $seed, shadow_futures with HIP_RS_REACTOR_LEAD_US=off: $(grep '^test result' "$log")"
    else
        failed=$((failed + 1))
        echo "seed $seed, shadow_futures with HIP_RS_REACTOR_LEAD_US=off FAILED:"; cat "$log"
    fi
done

echo "mutation self-test (each hipStreamWaitEvent of a two-stream pattern dropped in turn):"
if "$mutation" --test-threads=1 --nocapture >"$log" 2>&1; then
    grep -E "unmutated:|dropped:|^test result" "$log"
else
    cat "$log"; failed=$((failed + 1))
fi

# RCCL groups under the shadow (tests/shadow_rccl.rs): the `rccl` feature links RCCL, so they build and
# run in the experimental chroot (RCCL 7.2.4; .ci/run's extra_experimental installs it), by the branch
# at the top of this script. The chroot downloads no crates: the host fetches them.
if [ "$(id -u)" -eq 0 ] && chroot=$(scripts/distro-chroot.sh experimental path 2>/dev/null) &&
    [ -f "$chroot/.hip-rs-ready" ] && [ -f "$chroot/usr/include/rccl/rccl.h" ]; then
    cargo fetch -q
    cargo fetch -q --manifest-path shadow-hip/Cargo.toml
    if ! scripts/distro-chroot.sh experimental run scripts/shadow.sh --rccl-in-chroot "$seeds"; then
        failed=$((failed + 1))
    fi
else
    echo "shadow RCCL tests skipped: no experimental chroot with RCCL (as root:" \
        "scripts/distro-chroot.sh experimental run scripts/install-rccl.sh)"
fi
[ "$failed" -eq 0 ]
