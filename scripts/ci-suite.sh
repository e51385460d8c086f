#!/usr/bin/env bash
# What CI runs on one HIP version, inside its chroot (scripts/distro-chroot.sh SUITE run scripts/ci-suite.sh):
# the README's two commands as written, clippy and docs with warnings denied, every example, the gpu test
# build, and which device-properties symbols a built binary imports. Prints how long each step took.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
hip=$(grep -E 'define HIP_VERSION_(MAJOR|MINOR|PATCH)' /usr/include/hip/hip_version.h | awk '{print $3}' | paste -sd.)
echo "== HIP $hip ($(. /etc/os-release && echo "$PRETTY_NAME"))"

. scripts/lib/step.sh

step "README: install-prereqs and vector_add" sh -c 'scripts/install-prereqs.sh && cargo run -q --example vector_add'
step "clippy -D warnings" cargo clippy -q --workspace --all-targets -- -D warnings
step "docs -D warnings" env RUSTDOCFLAGS="-D warnings" cargo doc -q --workspace --no-deps
step "README: cargo test --workspace" cargo test --workspace
run_examples() {
    for ex in device_query rtc_lowered_names rtc_link streams_events; do
        cargo run -q --example "$ex" | tee "$CARGO_TARGET_DIR/example-$ex.txt"
    done
    # HIPRTC >= 5.3: the linker must really link (no GPU here: comgr, for gfx90a).
    if [ "${hip%%.*}" -gt 5 ] || [ "$(echo "$hip" | cut -d. -f2)" -ge 3 ]; then
        grep -q "linked code object for gfx90a" "$CARGO_TARGET_DIR/example-rtc_link.txt"
    else
        grep -q "not supported" "$CARGO_TARGET_DIR/example-rtc_link.txt"
    fi
}
step "examples" run_examples
step "gpu tests build" cargo build -q --features gpu --tests

# ROCm >= 6 renames hipGetDeviceProperties/hipChooseDevice to their R0600 symbols by macro; a binary must
# import the symbols whose struct layout it was built with.
check_symbols() {
    local bin=$CARGO_TARGET_DIR/debug/examples/device_query imports want
    imports=$(nm -D --undefined-only "$bin" | awk '{print $2}' | sed 's/@.*//' | grep -E '^hip(GetDeviceProperties|ChooseDevice)' || true)
    echo "device_query imports: $(echo "$imports" | paste -sd' ')"
    if [ "${hip%%.*}" -ge 6 ]; then want=hipGetDevicePropertiesR0600; else want=hipGetDeviceProperties; fi
    echo "$imports" | grep -qx "$want" || { echo "expected $want" >&2; return 1; }
    if [ "${hip%%.*}" -ge 6 ]; then
        ! echo "$imports" | grep -qx hipGetDeviceProperties || { echo "imports the 5.x symbol" >&2; return 1; }
    fi
}
step "R0600 symbols" check_symbols
echo "== HIP $hip: all steps passed"
