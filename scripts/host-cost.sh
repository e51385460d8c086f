#!/usr/bin/env bash
# The crate's own host cost per launch, per change of stream and per event record + query, on this CPU
# (no GPU): builds the HIP stub (bench/stub/hipstub.c: every call returns success at once and is counted)
# and bench/src/bin/host_cost.rs (release, `dynamic-loading`), then runs it with HIP_RS_AMDHIP64 = the stub
# and the real HIPRTC compiling the kernels for gfx90a. Prints markdown (docs/BENCHMARKS.md, "Host cost on
# the CPU stub"). Arguments go to the program: --quick, or --spin CONTENDER SECONDS (for perf record).
#
# --math first: the small hipSOLVER / hipSPARSE calls of issue 55 instead (bench/src/bin/math_host_cost.rs,
# with bench/stub/mathstub.c standing in for libhipsolver and libhipsparse); then --spin CALL SECONDS.
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
exec "$t/release/host_cost" "$@"
