#!/usr/bin/env bash
# Mutation testing of the code a CPU can test (issue 25): cargo-mutants changes one thing at a time in a
# fixed list of files (an operator, a return value, a match arm) and runs `cargo test -p hiprs --lib` on each
# change; a change no test notices is a "missed" mutant. This stage fails on any missed mutant that
# scripts/mutants-allowed.txt does not list with the reason it cannot (or need not) be caught.
#
# Bounded: the fixed list holds about 1090 mutants with the math libraries' shape checks (a second run with
# their features): about 55 minutes on the 2-core CI machine. Each run tests one sixth of both (round-robin
# over the list, so each sixth covers every file), chosen by the commit count modulo 6: six consecutive
# commits cover all of it. A third took 1114 s in .ci/run (2026-12-06, 362 mutants), which put the whole CI
# over its hour; a sixth, with the rendezvous tests skipped per mutant (below), took 550 s (shard 3/6,
# 181 mutants, in a .ci/run of 3709 s in all), plus installing cargo-mutants on a fresh machine
# (docs/RELIABILITY.md).
#
#   scripts/mutants.sh                 a sixth of the list, by the commit count modulo 6
#   MUTANTS_SHARD=all scripts/...      the whole list
#   MUTANTS_SHARD=k/6 (k = 0..5)       that sixth (any k/n works: 0/3 is a third)
#   MUTANTS_JOBS=N                     parallel builds (default 2)
#   MUTANTS_OUT=DIR                    where mutants.out/ goes (default target/mutants)
#   MUTANTS_JUDGE_ONLY=1               run nothing: judge the results already in MUTANTS_OUT again
#                                      (after editing scripts/mutants-allowed.txt)
#
# Installs cargo-mutants (pinned, --locked, from the crates registry) when missing. GPU-only code is left
# out by -E below: the `gpu` tests, which need a device, cover it.
set -euo pipefail
cd "$(dirname "$0")/.."
version=27.1.0
start=$SECONDS

judge_only=${MUTANTS_JUDGE_ONLY:-0}
if [ "$judge_only" != 1 ] && ! cargo mutants --version 2>/dev/null | grep -qx "cargo-mutants $version"; then
    echo "== installing cargo-mutants $version"
    cargo install cargo-mutants --version "$version" --locked --quiet
fi

# The files (globs as cargo-mutants takes them) and, within them, what a CPU cannot test. The regexes
# match cargo-mutants' names, `file:line:column: replace ... in function`.
files=(
    'hip/src/error/*.rs'
    hip/src/code_object/mod.rs
    hip/src/code_object/signature.rs
    hip/src/code_object/target.rs
    hip/src/code_object/nvidia.rs
    hip/src/memory/tracking.rs
    hip/src/memory/users.rs
    hip/src/memory/host_lease.rs
    hip/src/memory/mod.rs
    hip/src/launch/mod.rs
    hip/src/launch/check.rs
    hip/src/launch/typed.rs
    hip/src/launch/devices.rs
    hip/src/rtc/cache/entry.rs
    hip/src/rtc/cache.rs
    hip/src/rtc/options.rs
    hip/src/rtc/diagnostics.rs
    hip/src/rtc/arch.rs
    hip/src/memory/views.rs
    hip/src/memory/managed.rs
    hip/src/memory/raw.rs
    hip/src/occupancy.rs
    hip/src/dense_shape.rs
    hip/src/elementwise/mod.rs
    hip/src/rtc/half.rs
)
exclude=(
    # tracking.rs: the Allocation (HIP events, stream waits, frees) and the functions that order an
    # operation's allocations on a live stream need a device; Users (users.rs) is the model.
    'tracking\.rs:.*(Allocation|StreamKey for Arc<StreamHandle>|use_both|by_address)'
    # launch/mod.rs: ordering a launch on a stream and the launch itself call HIP; the dynamic shared
    # memory opt-in asks the runtime (NVIDIA only).
    "launch/mod\\.rs:.*(LaunchArgs<'a>::order_on|Function::launch|LaunchArgs<'a>::check_against|dynamic_shared_opt_in)"
    # launch/typed.rs: looking a kernel up needs a loaded module, and a buffer's length as the kernel
    # receives it a buffer (tests/gpu_typed_kernels.rs); the stale-artifact message is tested here.
    'typed\.rs:.*( load( |$)|kernel_len)'
    # launch/devices.rs: check_devices asks the runtime whether an address is managed memory; the rule
    # (reaches) and the check over the arguments (check_devices_with) are tested here.
    'devices\.rs:.*::check_devices( ->|$)'
    # cache.rs: the directory, file and HIPRTC side (tests/rtc_cache*.rs, with HIPRTC); the key and the
    # names of entries are tested here.
    'cache\.rs:.*(CompileCache::|write_entry|read_dir_if_present|remove_if_present|warn_once|Toolchain::current)'
    # managed.rs: the buffer itself and the attribute query need a device; the decision from the
    # attribute (host_access_for) is the model.
    'managed\.rs:.*(ManagedBuffer|refuse_attach_without_concurrent_access| host_access( |$))'
    # occupancy.rs: the runtime's occupancy calls; the choice among block sizes and the configurations
    # built from it are tested here.
    'occupancy\.rs:.*(Function::|LaunchConfig::for_occupancy)'
    # error/loading.rs: two cfg variants of one function (dynamic-loading or not) share this name; the
    # default one is pinned by error::tests, the other is not compiled in this build.
    'error/loading\.rs:.*replace loader_failure'
    # error/loading.rs: what to install on the NVIDIA platform is compiled only for it (its lib tests, run
    # by hand for CUDA 11 and 12 with dynamic-loading, check each version's packages).
    'error/loading\.rs:.*nvidia_install'
    # arch.rs: the target check asks comgr (AMD) or NVRTC (NVIDIA, not compiled here) which targets they
    # take (tests/rtc*.rs and the gpu tests run those); the option check and NVRTC's rule on a list are
    # tested here.
    'arch\.rs:.*( check -> | in check$|nvrtc_archs|comgr_accepts|comgr_isas)'
    # dense_shape.rs: the operand helpers and checks of hipSOLVER / hipSPARSE are compiled only with their
    # features, which this run does not build (their no-device tests, hip/src/solver/tests.rs and
    # sparse/tests.rs, run in scripts/ci-math.sh); matrix_len, which every library and hip::elementwise
    # use, is tested here.
    'dense_shape\.rs:.*( (read|write|vector|int|matrix) -> | in (vector|int|matrix)$)'
    # rtc/half.rs: cuda_include_candidates only hands the process environment to candidates_from (whose
    # order is tested here); on AMD nothing calls it.
    'half\.rs:.*replace cuda_include_candidates'
    # elementwise/mod.rs: what queues or loads the built-in kernels, and the activation's code the kernel
    # reads, need a device (tests/gpu_elementwise.rs); the shapes, the grid and the kernel names are
    # tested here.
    'elementwise/mod\.rs:.*( (convert|bias_activation|activation|short|run_matrix|prepare|kernel|loaded|load|Activation::code) -> | in (bias_activation|run_matrix|loaded)$)'
)
args=(-p hiprs --no-shuffle)
for f in "${files[@]}"; do args+=(-f "$f"); done
for e in "${exclude[@]}"; do args+=(-E "$e"); done
# The math libraries' shape checks, in a second run built with their features and `dynamic-loading`: the
# committed bindings stand in for the headers bookworm lacks, so no hipBLAS, hipRAND or hipFFT is needed
# (their calls need a device: tests/gpu_blas.rs, gpu_blas_handle.rs, gpu_rand.rs, gpu_fft.rs).
math_files=(hip/src/blas/shape.rs hip/src/rand/checks.rs hip/src/fft/layout.rs hip/src/fft/mod.rs)
math_exclude=(
    # fft/mod.rs: the plan's calls need a device (tests/gpu_fft.rs); how a handle is made or destroyed
    # (create_then_make), the directions and the status mapping are tested here.
    'fft/mod\.rs:.*(Plan<T>::|Drop for Plan|FftFloat for)'
)
math_args=(-p hiprs --no-shuffle --features blas,rand,fft,dynamic-loading)
for f in "${math_files[@]}"; do math_args+=(-f "$f"); done
for e in "${math_exclude[@]}"; do math_args+=(-E "$e"); done

# Tests of code outside both lists, left out of every mutant's run: they cannot notice a change to the
# listed files and cost most of each run's test time. The bitcode reader's (hip/src/rtc/bitcode/) take
# 1.9 of the 2.5 s the whole `--lib` suite takes in this build (a linear-time check, a nesting-depth check
# and a comparison with the llvm-bitcode crate). A whole-list run with them left out (MUTANTS_SHARD=all,
# 2026-11-27: 808 mutants, 705 caught, 99 unviable, 25 minutes) missed only the 4 device-only mutants
# scripts/mutants-allowed.txt lists, which no CPU test can catch.
#
# The rendezvous tests (hip/src/bootstrap/, not listed either) are skipped for the same reason: one of
# them alone takes 2.0 s (ranks that disagree on the world size time out), 0.8 s another, where the
# rest of the suite takes under 1 s of wall time. Of their listed neighbours, only the rendezvous errors
# (hip/src/error/rendezvous.rs) could be caught by them: every mutant of hip/src/error/*.rs run with them
# skipped (2026-12-06: 201 mutants, 167 caught, 34 unviable, 0 missed) is caught by other tests.
skip_tests=(--skip rtc::bitcode:: --skip bootstrap::)

shard=${MUTANTS_SHARD:-auto}
if [ "$shard" = auto ]; then
    # The number of commits in HEAD's history: consecutive commits take the six sixths in turn.
    commits=$(git rev-list --count HEAD 2>/dev/null || echo 0)
    shard="$((commits % 6))/6"
fi
if [ "$shard" != all ]; then
    args+=(--shard "$shard" --sharding round-robin)
    math_args+=(--shard "$shard" --sharding round-robin)
fi

# cargo-mutants names carry `:line:column`; the allow-list does not (lines move with every edit).
strip() { sed -E 's/^([^:]+):[0-9]+:[0-9]+: /\1: /' | LC_ALL=C sort -u; }

out=${MUTANTS_OUT:-target/mutants}
mkdir -p "$out"
# One cargo-mutants run into $1/mutants.out with the arguments after it.
run_mutants() {
    local dir=$1 status=0
    shift
    echo "== cargo mutants, shard $shard: $*"
    # --lib for every cargo call: only the unit-test binary is built (not also the rlib) and run. No
    # debug info in the copies cargo-mutants builds: each mutant's build and link are faster. Incremental
    # builds even where the caller turned them off (.ci/run does, for disk): each mutant rebuilds one
    # crate changed in one place, and without incremental state the third took 16 minutes instead of 8.
    CARGO_PROFILE_DEV_DEBUG=0 CARGO_PROFILE_TEST_DEBUG=0 CARGO_INCREMENTAL=1 \
        cargo mutants "$@" --cargo-arg=--lib -j "${MUTANTS_JOBS:-2}" -o "$dir" -- -- "${skip_tests[@]}" ||
        status=$?
    # 0: every mutant caught; 2: some missed (judged below); 3: some timed out (a mutant that hangs the
    # tests is one they notice: reported, not failed). Anything else (1 usage, 4 the unmutated tests
    # failed) fails.
    case $status in
        0 | 2 | 3) ;;
        *) echo "cargo mutants failed (exit $status)" >&2; exit "$status" ;;
    esac
}
if [ "$judge_only" != 1 ]; then
    run_mutants "$out" "${args[@]}"
    run_mutants "$out/math" "${math_args[@]}"
fi

# Both runs' results (the math run's where it ran).
runs=("$out/mutants.out")
[ -d "$out/math/mutants.out" ] && runs+=("$out/math/mutants.out")
allowed=$(sed -e '/^#/d' -e '/^[[:space:]]*$/d' -e 's/  # .*$//' scripts/mutants-allowed.txt | LC_ALL=C sort -u)
missed=$(for r in "${runs[@]}"; do cat "$r/missed.txt"; done | strip)
tested=$(python3 -c 'import json, sys
for path in sys.argv[1:]:
    for o in json.load(open(path))["outcomes"]:
        m = o["scenario"]
        if isinstance(m, dict) and "Mutant" in m:
            print(m["Mutant"]["name"])' "${runs[@]/%//outcomes.json}" | strip)
unexplained=$(comm -23 <(echo "$missed") <(echo "$allowed") | sed '/^$/d')
# Listed, tested in this run, and caught: the entry is out of date.
stale=$(comm -12 <(echo "$allowed") <(echo "$tested") | comm -23 - <(echo "$missed") | sed '/^$/d')

count() { for r in "${runs[@]}"; do cat "$r/$1.txt"; done | sed '/^$/d' | wc -l; }
label="shard $shard"
[ "$judge_only" = 1 ] && label="results in $out"
echo "== $label: $(count caught) caught, $(count missed) missed, $(count unviable) unviable, $(count timeout) timed out; $((SECONDS - start)) s"
if [ -n "$stale" ]; then
    echo "== in scripts/mutants-allowed.txt but caught now: remove them"
    echo "$stale"
fi
if [ -n "$unexplained" ]; then
    echo "== missed mutants no test catches and scripts/mutants-allowed.txt does not explain:" >&2
    echo "$unexplained" >&2
    echo "(each is a change to the code that every CPU test still passes: add a test that fails on it," >&2
    echo " or list it in scripts/mutants-allowed.txt with the reason it cannot be caught)" >&2
    exit 1
fi
echo "== every missed mutant is explained in scripts/mutants-allowed.txt"
