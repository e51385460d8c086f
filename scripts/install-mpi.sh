#!/usr/bin/env bash
# Install Open MPI (Debian's `libopenmpi-dev` and `openmpi-bin`: headers, libmpi, mpicc, mpirun) for the
# `mpi` feature (`Comm::from_mpi`, rsmpi); idempotent. CI runs it on the bookworm host (Open MPI 4.1.4):
#   scripts/install-mpi.sh
# Where an MPI is already on the PATH (`mpicc` answers), nothing is installed: rsmpi's build script finds
# it through `mpicc -show` / pkg-config (set MPI_PKG_CONFIG or MPICC to pick another).
set -euo pipefail
if command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1; then
    echo "install-mpi: MPI found ($(mpirun --version 2>/dev/null | head -1)); installing nothing"
    exit 0
fi
sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    libopenmpi-dev openmpi-bin >/dev/null
echo "install-mpi: $(mpirun --version 2>/dev/null | head -1) installed"
