#!/usr/bin/env bash
# Install what building and testing hip-rs needs on Debian bookworm / Ubuntu: the real HIP runtime and
# headers, HIPRTC's device libraries and compiler support, and libclang for bindgen.
set -euo pipefail
pkgs=(libamdhip64-dev libclang-dev rocm-device-libs libamd-comgr-dev libhsa-runtime-dev pkg-config python3)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "installing: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v cargo >/dev/null || { echo "cargo not found: install Rust (https://rustup.rs) first" >&2; exit 1; }
