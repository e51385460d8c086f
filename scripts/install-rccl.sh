#!/usr/bin/env bash
# Install RCCL's headers and library (Debian's `librccl-dev`) for the `rccl` feature; idempotent.
# CI runs it inside the experimental chroot (RCCL 7.2.4):
#   scripts/distro-chroot.sh experimental run scripts/install-rccl.sh
# Where a ROCm install already holds include/rccl/rccl.h (ROCM_PATH, /opt/rocm), nothing is installed.
set -euo pipefail
for root in "${RCCL_PATH:-}" "${ROCM_PATH:-}" /opt/rocm; do
    if [ -n "$root" ] && [ -f "$root/include/rccl/rccl.h" ]; then
        echo "install-rccl: RCCL found at $root; installing nothing"
        exit 0
    fi
done
if dpkg-query -W -f='${Status}' librccl-dev 2>/dev/null | grep -q "install ok installed"; then
    echo "install-rccl: librccl-dev $(dpkg-query -W -f='${Version}' librccl-dev) present"
    exit 0
fi
sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends librccl-dev >/dev/null
echo "install-rccl: librccl-dev $(dpkg-query -W -f='${Version}' librccl-dev) installed"
