#!/usr/bin/env bash
# How many of the runtime functions HIP's header declares (`hipError_t hipName(` in hip_runtime_api.h) the
# safe crate calls (`sys::hipName(` anywhere under hip/src): issue 57's coverage count.
#
#   scripts/count-runtime-calls.sh [HEADER]     default /usr/include/hip/hip_runtime_api.h (HIP 5.2.3 here)
set -euo pipefail
cd "$(dirname "$0")/.."
header=${1:-/usr/include/hip/hip_runtime_api.h}
declared=$(grep -oE '^\s*hipError_t\s+hip[A-Za-z0-9_]+\s*\(' "$header" | sed -E 's/.*(hip[A-Za-z0-9_]+).*/\1/' | sort -u)
called=$(grep -rhoE 'sys::hip[A-Z][A-Za-z0-9_]*\s*\(' hip/src | sed -E 's/sys::(hip[A-Za-z0-9_]*).*/\1/' | sort -u)
echo "$(comm -12 <(echo "$declared") <(echo "$called") | wc -l) of the $(echo "$declared" | wc -l) functions $header declares"
