#!/usr/bin/env bash
# Assemble a HIP header tree for HIP's NVIDIA platform from a Debian suite's HIP, for HIP_HEADERS
# (scripts/nvidia-env.sh). Prints the tree's folder (target/hip-headers/VERSION, holding include/hip/).
#
#   scripts/hip-nvidia-headers.sh trixie                        HIP 5.7.1: its headers still have nvidia_detail/
#   scripts/hip-nvidia-headers.sh sid|experimental HIPOTHER     HIP 6.4.3 / 7.2.4: Debian ships no NVIDIA headers
#                                                               since ROCm 6.1; HIPOTHER is a folder holding
#                                                               AMD hipother's hipnv/include/hip/nvidia_detail
#                                                               (or nvidia_detail/ itself), brought in with the
#                                                               library's fetch tool; never committed here
#
# Only include/hip/ is copied (not the suite's C library headers), so the result builds on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${1:-}
case $suite in
    trixie) release=5.7.1 ;;
    sid) release=6.4.3 ;;
    experimental) release=7.2.4 ;;
    *) echo "hip-nvidia-headers: SUITE is trixie, sid or experimental" >&2; exit 2 ;;
esac
src=$(scripts/distro-chroot.sh "$suite" path)/usr/include/hip
if [ ! -f "$src/hip_version.h" ]; then
    scripts/distro-chroot.sh "$suite" prepare >&2
fi
dest=target/hip-headers/$release
rm -rf "$dest" && mkdir -p "$dest/include"
cp -r "$src" "$dest/include/hip"
if [ "$suite" != trixie ]; then
    other=${2:?"hip-nvidia-headers: $suite needs the path of hipother's NVIDIA headers (see the header of this script)"}
    for d in "$other/hipnv/include/hip/nvidia_detail" "$other/nvidia_detail" "$other"; do
        if [ -f "$d/nvidia_hip_runtime_api.h" ]; then nv=$d; break; fi
    done
    [ -n "${nv:-}" ] || { echo "hip-nvidia-headers: no nvidia_hip_runtime_api.h under $other" >&2; exit 2; }
    mkdir -p "$dest/include/hip/nvidia_detail"
    cp "$nv"/*.h "$dest/include/hip/nvidia_detail/"
    echo "$release + hipother ($(basename "$(cd "$other" && pwd)"))" > "$dest/hip-rs-release"
else
    [ -f "$dest/include/hip/nvidia_detail/nvidia_hip_runtime_api.h" ] ||
        { echo "hip-nvidia-headers: $suite's HIP has no nvidia_detail/" >&2; exit 1; }
    echo "$release" > "$dest/hip-rs-release"
fi
echo "$dest"
