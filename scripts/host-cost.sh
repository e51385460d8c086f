#!/usr/bin/env bash
# The crate's own host cost per launch, per change of stream and per event record + query, on this CPU
# (no GPU): builds the HIP stub (bench/stub/hipstub.c: every call returns success at once and is counted)
# and bench/src/bin/host_cost.rs (release, `dynamic-loading`), then runs it with HIP_RS_AMDHIP64 = the stub
# and the real HIPRTC compiling the kernels for gfx90a. Prints markdown (docs/BENCHMARKS.md, "Host cost on
# the CPU stub"). Arguments go to the program: --quick, or --spin CONTENDER SECONDS (for perf record).
#
# --math first: the small hipSOLVER / hipSPARSE calls of issue 55 instead (bench/src/bin/math_host_cost.rs,
# with bench/stub/mathstub.c standing in for libhipsolver and libhipsparse); then --spin CALL SECONDS.
# --footprint instead: each contender under valgrind's callgrind with 1 KiB caches (64-byte lines), so
# that nearly every distinct code and data line an operation touches counts as a miss: instructions and
# lines touched per operation, a figure for what an operation costs when its lines are cold (as after a
# driver's microseconds of work on a GPU host), where the stub's warm caches hide it. Needs valgrind.
# CARGO_TARGET_DIR is used if set (else target/); the stub goes to $CARGO_TARGET_DIR/hipstub/.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${CARGO_TARGET_DIR:-target}
mkdir -p "$t/hipstub"
cc=${CC:-gcc}
$cc -O2 -shared -fPIC -fvisibility=hidden -Wall -Wextra -Werror bench/stub/hipstub.c -o "$t/hipstub/libhipstub.so"
export HIP_RS_AMDHIP64=$(cd "$t/hipstub" && pwd)/libhipstub.so
if [ "${1:-}" = --math ]; then
    shift
    $cc -O2 -shared -fPIC -fvisibility=hidden -Wall -Wextra -Werror bench/stub/mathstub.c -o "$t/hipstub/libmathstub.so"
    cargo build -q --release -p hip-rs-bench --features dynamic-loading,solver --bin math_host_cost
    HIP_RS_HIPSOLVER=$(dirname "$HIP_RS_AMDHIP64")/libmathstub.so
    export HIP_RS_HIPSOLVER HIP_RS_HIPSPARSE=$HIP_RS_HIPSOLVER
    exec "$t/release/math_host_cost" "$@"
fi
cargo build -q --release -p hip-rs-bench --features dynamic-loading --bin host_cost
# HIPRTC lives in libamdhip64 on HIP 5.x (bookworm), in libhiprtc from 6.x.
if [ -z "${HIP_RS_HIPRTC:-}" ]; then
    for l in /usr/lib/"$(gcc -dumpmachine)"/{libhiprtc.so.7,libhiprtc.so.6,libamdhip64.so.5}; do
        if [ -e "$l" ]; then export HIP_RS_HIPRTC=$l; break; fi
    done
fi
if [ "${1:-}" = --footprint ]; then
    command -v valgrind >/dev/null || { echo "host-cost: --footprint needs valgrind" >&2; exit 2; }
    cg=$t/hipstub/footprint && mkdir -p "$cg"
    echo "| contender | instructions per operation | code lines | data lines read | data lines written | lines |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: |"
    # The contenders' names, from the program's answer to an unknown one (which fails, as it should).
    { "$t/release/host_cost" --spin '?' 0 2>&1 || true; } | grep -o '"[^"]*"' | tr -d '"' | tail -n +2 | while read -r c; do
        out=$cg/$(echo "$c" | tr -c 'a-zA-Z0-9\n' _).out
        ops=$(valgrind --tool=callgrind --cache-sim=yes --I1=1024,2,64 --D1=1024,2,64 --LL=4096,2,64 \
            --toggle-collect='*host_cost::spin*' --callgrind-out-file="$out" \
            "$t/release/host_cost" --spin "$c" 0.3 2>&1 | grep -o '[0-9]* operations' | cut -d' ' -f1)
        callgrind_annotate "$out" | grep 'PROGRAM TOTALS' | tr -d , | awk -v ops="$ops" -v c="$c" \
            '{ printf "| %s | %.0f | %.1f | %.1f | %.1f | %.1f |\n", c, $1 / ops, $7 / ops, $9 / ops, $11 / ops, ($7 + $9 + $11) / ops }'
    done
    exit 0
fi
exec "$t/release/host_cost" "$@"
