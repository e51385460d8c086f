#!/usr/bin/env bash
# CI for HIP's NVIDIA platform (no GPU here: builds and lints, no runs):
#   CUDA 12.9 + HIP 5.2.3 headers (the default)  every gpu test, example and benchmark built; clippy on all
#   CUDA 11.8 + HIP 5.2.3 headers                the same build: 11.8 stays supported
#   CUDA 12.9 + HIP 5.7.1 headers                inside the trixie chroot (its own HIP headers), the same build
#                                                and clippy
#   C++ against each: the benchmark's raw C++ baseline (HIP 5.2.3's headers compile as C++ only with 11.8)
#   --features blaslt                            refused with its build error (hipBLASLt has no NVIDIA backend)
# Prints how long each step took. Exports stay inside this script.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
. scripts/lib/step.sh
build() {
    cargo build -q --features gpu --tests --examples --target-dir "$nvidia_target"
    cargo build -q --release -p hip-rs-bench --bins --target-dir "$nvidia_target"
}
baseline() {
    g++ -fsyntax-only -Wno-deprecated-declarations -std=c++17 -D__HIP_PLATFORM_NVIDIA__ -I"$hip_include" -I"$cuda/include" bench/baseline/baseline.cpp
}
cuda12() (
    . scripts/nvidia-env.sh
    step "$nvidia_label: build" build
    step "$nvidia_label: clippy -D warnings (with the cudarc contender)" \
        cargo clippy -q --features gpu --all-targets --target-dir "$nvidia_target" -- -D warnings
    cargo clippy -q -p hip-rs-bench --features cudarc --target-dir "$nvidia_target" -- -D warnings
    step "$nvidia_label: --features blaslt refused (hipBLASLt has no NVIDIA backend)" blaslt_refused
)
# hipBLASLt has no NVIDIA backend: its sys crate's build must stop with a message saying so.
blaslt_refused() {
    mkdir -p target/ci-logs
    local log=target/ci-logs/blaslt-nvidia.log
    if cargo build -q -p hiprs --features blaslt --target-dir "$nvidia_target" >"$log" 2>&1; then
        echo "--features blaslt built for HIP's NVIDIA platform" >&2
        return 1
    fi
    grep -q "hipBLASLt has no NVIDIA backend" "$log" || { cat "$log" >&2; return 1; }
}
cuda11() (
    CUDA_MAJOR=11
    . scripts/nvidia-env.sh
    step "$nvidia_label: build" build
    step "$nvidia_label: C++ baseline" baseline
)
trixie() (
    scripts/fetch-cuda.sh 12 >/dev/null
    HIP_HEADERS=$(scripts/hip-nvidia-headers.sh trixie)
    . scripts/nvidia-env.sh
    step "$nvidia_label: C++ baseline" baseline
    # In the chroot, hip-sys finds trixie's own HIP (5.7.1) in /usr/include: HIP_PATH must not point here.
    cargo fetch -q
    step "$nvidia_label (trixie chroot): build and clippy" scripts/distro-chroot.sh trixie run env -u HIP_PATH \
        HIP_PLATFORM=nvidia HIP_SYS_CUDA_INCLUDE="$cuda/include" HIP_SYS_CUDA_LIB="$cuda/lib" \
        sh -c 'cargo build -q --features gpu --tests --examples --target-dir target/chroot-trixie-nvidia &&
               cargo clippy -q --features gpu --all-targets --target-dir target/chroot-trixie-nvidia -- -D warnings'
    # The bindings really came from 5.7's headers, for the NVIDIA platform.
    info=$(cat target/chroot-trixie-nvidia/debug/build/hiprs-sys-*/out/build_info.rs)
    grep -q 'HIP_PLATFORM: &str = "nvidia"' <<<"$info" && grep -q 'HIP_SYS_VERSION: (u32, u32, u32) = (5, 7,' <<<"$info" ||
        { echo "ci-nvidia: the trixie NVIDIA build did not use HIP 5.7's NVIDIA headers: $info" >&2; exit 1; }
)
cuda12
cuda11
trixie
