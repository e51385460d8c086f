#!/usr/bin/env bash
# Install what building and testing hip-rs needs on Debian (bookworm, trixie, sid) and Ubuntu (22.04,
# 24.04): the real HIP runtime and headers, HIPRTC (with its device libraries and comgr), and libclang for
# bindgen.
#
# The device libraries are named `rocm-device-libs` on bookworm and `rocm-device-libs-N` (N = the LLVM
# version) from trixie on: the script takes whichever the package lists offer, the newest N first.
# HIPRTC has its own package from ROCm 6 (`libhiprtc-dev`); where it exists it is installed too.
#
# Where a ROCm install is found (ROCM_PATH, HIP_PATH or /opt/rocm holding include/hip/hip_runtime_api.h),
# nothing is installed: the crates' build scripts use that install.
set -euo pipefail

for root in "${HIP_PATH:-}" "${ROCM_PATH:-}" /opt/rocm; do
    if [ -n "$root" ] && [ -f "$root/include/hip/hip_runtime_api.h" ]; then
        echo "install-prereqs: ROCm found at $root; installing nothing (bindgen needs libclang: set LIBCLANG_PATH=$root/llvm/lib if none is installed)"
        command -v cargo >/dev/null || { echo "cargo not found: install Rust (https://rustup.rs) first" >&2; exit 1; }
        exit 0
    fi
done

sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
known() { [ -n "$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ && $2 != "(none)"')" ]; }

updated=""
update_once() { [ -n "$updated" ] || { $sudo apt-get update -qq; updated=1; }; }

# The device-library package: the plain name where it exists, else the newest versioned one.
device_libs() {
    if installed rocm-device-libs || known rocm-device-libs; then echo rocm-device-libs; return; fi
    local p
    p=$(apt-cache pkgnames rocm-device-libs- 2>/dev/null | grep -E '^rocm-device-libs-[0-9]+$' | sort -t- -k4 -n | tail -1)
    [ -n "$p" ] || { echo "install-prereqs: no rocm-device-libs package in the apt lists" >&2; exit 1; }
    echo "$p"
}

pkgs=(libamdhip64-dev libclang-dev libamd-comgr-dev libhsa-runtime-dev pkg-config python3)
if ! installed rocm-device-libs && ! dpkg-query -W 'rocm-device-libs-*' 2>/dev/null | grep -q .; then
    update_once
fi
if ! known libamdhip64-dev && ! installed libamdhip64-dev; then update_once; fi
pkgs+=("$(device_libs)")
known libhiprtc-dev && pkgs+=(libhiprtc-dev)

missing=()
for p in "${pkgs[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
    update_once
    echo "installing: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v cargo >/dev/null || { echo "cargo not found: install Rust (https://rustup.rs) first" >&2; exit 1; }
