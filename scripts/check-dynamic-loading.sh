#!/usr/bin/env bash
# The dynamic-loading feature on a machine without a GPU (run by .ci/run; needs root for the mounts):
#  1. built here (HIP 5.2.3 headers): no HIP library among the examples' NEEDED entries; the README's test
#     command, with the feature, passes;
#  2. HIP hidden (empty files bind-mounted over its libraries, in a private mount namespace): a program
#     starts, and every entry point answers LibraryNotFound naming HIP_RS_AMDHIP64's path first;
#  3. no HIP headers at all: the crates build from the committed 5.2.3 bindings;
#  4. the very binaries of step 1 run in the trixie, sid and experimental chroots against HIP 5.7.1, 6.4.3
#     and 7.2.4: the tests, and every example;
#  5. on the NVIDIA platform (CUDA 12): no CUDA library among the examples' NEEDED entries; without CUDA
#     on the machine every entry point answers LibraryNotFound naming HIP_RS_CUDART's path first.
set -euo pipefail
cd "$(dirname "$0")/.."
t=target/dynamic
feature=(--workspace --features dynamic-loading --target-dir "$t")
examples=(vector_add device_query rtc_lowered_names rtc_link streams_events)

echo "== 1. built on HIP 5.2.3 headers: no link-time HIP, tests pass"
cargo build -q "${feature[@]}" --tests --examples
for ex in "${examples[@]}"; do
    if readelf -d "$t/debug/examples/$ex" | grep NEEDED | grep -E "amdhip64|hiprtc"; then
        echo "$ex links HIP" >&2; exit 1
    fi
done
echo "examples need no HIP library at load time"
# One run (about a minute of tests): its summary, or the whole output when it fails.
log=$t/test-run.log
if cargo test -q "${feature[@]}" >"$log" 2>&1; then
    grep -E "^test result|FAILED|panicked" "$log" | sort | uniq -c
else
    cat "$log"; exit 1
fi
bins=$(cargo test "${feature[@]}" --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    # A proc-macro crate'"'"'s own unit tests link the toolchain'"'"'s libstd dynamically (no HIP in them):
    # the chroots cannot start them, and they test nothing this stage is about.
    if (m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]
            and "proc-macro" not in m["target"]["kind"]):
        print(m["executable"])')

echo "== 2. HIP hidden: LibraryNotFound from every entry point"
triplet=$(gcc -dumpmachine)
libs=$(for l in /usr/lib/"$triplet"/libamdhip64.so* /usr/lib/"$triplet"/libhiprtc.so*; do
    if [ -e "$l" ]; then readlink -f "$l"; fi; done | sort -u)
dyn_test=$(echo "$bins" | grep '/dynamic_loading-')
unshare -m --propagation private sh -c '
    for l in '"$(echo $libs)"'; do mount --bind /dev/null "$l"; done
    export HIP_RS_AMDHIP64=/nonexistent/libamdhip64.so HIP_RS_HIPRTC=/nonexistent/libhiprtc.so
    '"$dyn_test"' --ignored --exact without_hip_every_entry_point_says_library_not_found -q
    out=$('"$t"'/debug/examples/device_query 2>&1) && { echo "device_query succeeded without HIP" >&2; exit 1; }
    echo "device_query without HIP: $out"
    echo "$out" | grep -q "could not be loaded; tried: /nonexistent/libamdhip64.so"
'

echo "== 3. no HIP headers: builds from the committed bindings"
unshare -m --propagation private sh -c 'mount -t tmpfs none /usr/include/hip &&
    HIP_SYS_VERBOSE=1 cargo build -p hiprs --features dynamic-loading --target-dir target/dynamic-no-headers 2>&1' |
    grep "prebuilt 5.2.3 (dynamic-loading, no HIP headers found)"

echo "== 4. the same binaries against HIP 5.7.1, 6.4.3, 7.2.4"
for s in trixie sid experimental; do
    scripts/distro-chroot.sh "$s" run bash -c '
        set -eo pipefail
        hip=$(grep -E "define HIP_VERSION_(MAJOR|MINOR|PATCH)" /usr/include/hip/hip_version.h | awk "{print \$3}" | paste -sd.)
        for b in '"$(echo $bins)"'; do "$b" -q >/tmp/dyn-test.log 2>&1 || { echo "$b failed on HIP $hip:" >&2; cat /tmp/dyn-test.log >&2; exit 1; }
            grep "^test result" /tmp/dyn-test.log; done | awk -v hip="$hip" "{p+=\$4; f+=\$6; i+=\$8} END {print \"HIP \" hip \": \" p \" passed, \" f \" failed, \" i \" ignored\"}"
        for ex in '"${examples[*]}"'; do '"$t"'/debug/examples/$ex >/dev/null; done
        echo "HIP $hip: every example ran"'
done

echo "== 5. HIP's NVIDIA platform: CUDA 12's runtime, driver and NVRTC opened at run time"
# This machine has no CUDA libraries on the loader's path (target/cuda12/lib is only for building):
# the programs start, link no CUDA library, and every entry point says LibraryNotFound.
(
    . scripts/nvidia-env.sh
    nt=$nvidia_target-dynamic
    cargo build -q --features gpu,dynamic-loading --tests --examples --target-dir "$nt"
    for ex in "${examples[@]}"; do
        if readelf -d "$nt/debug/examples/$ex" | grep NEEDED | grep -E "cudart|libcuda|nvrtc"; then
            echo "$ex links CUDA" >&2; exit 1
        fi
    done
    echo "NVIDIA examples need no CUDA library at load time"
    export HIP_RS_CUDART=/nonexistent/libcudart.so.12 HIP_RS_CUDA_DRIVER=/nonexistent/libcuda.so.1 \
        HIP_RS_NVRTC=/nonexistent/libnvrtc.so.12
    cargo test -q --features dynamic-loading --test dynamic_loading_nvidia --target-dir "$nt" -- --include-ignored
    out=$("$nt"/debug/examples/device_query 2>&1) && { echo "device_query succeeded without CUDA" >&2; exit 1; }
    echo "device_query without CUDA: $out"
    echo "$out" | grep -q "the CUDA runtime and driver (HIP's NVIDIA platform) could not be loaded; tried: /nonexistent/libcudart.so.12"
)
