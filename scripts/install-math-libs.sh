#!/usr/bin/env bash
# Install the ROCm math libraries' headers and libraries from Debian for the `hip` features that use them;
# idempotent. CI runs it inside the chroots (scripts/distro-chroot.sh SUITE run scripts/install-math-libs.sh blas).
#
#   scripts/install-math-libs.sh blas   libhipblas-dev (trixie 5.5.1 over rocBLAS 5.5.1; sid 6.4.4, with
#                                        hipblas-common; experimental 7.2.4); bookworm has none
#   scripts/install-math-libs.sh rand   libhiprand-dev (bookworm 5.3.3, trixie 5.7.1, sid/experimental 6.4.3)
#   scripts/install-math-libs.sh fft    libhipfft-dev (trixie 6.1.2, sid/experimental 6.4.3); bookworm has none
#   scripts/install-math-libs.sh sparse libhipsparse-dev (bookworm 5.3.3, trixie 5.7.1, sid 6.4.3,
#                                        experimental 7.2.4)
#   scripts/install-math-libs.sh solver libhipsolver-dev (trixie 5.5.1, sid 6.4.1, experimental 7.2.4);
#                                        bookworm has none
#   scripts/install-math-libs.sh blaslt libhipblaslt-dev (sid 7.1.1, experimental 7.2.4); bookworm and
#                                        trixie have none
# (apt-cache policy in each suite's chroot, 2026-11-29; docs/SOLVER_SPARSE.md.)
#
# Where a ROCm install already holds the header (ROCM_PATH, /opt/rocm), nothing is installed.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 blas|rand|fft|sparse|solver|blaslt..." >&2; exit 2; }
packages=()
for lib in "$@"; do
    case $lib in
        blas) header=hipblas/hipblas.h pkg=libhipblas-dev ;;
        rand) header=hiprand/hiprand.h pkg=libhiprand-dev ;; # + librocrand-dev below (hiprand_hcc.h needs it)
        fft) header=hipfft/hipfft.h pkg=libhipfft-dev ;;
        sparse) header=hipsparse/hipsparse.h pkg=libhipsparse-dev ;;
        solver) header=hipsolver/hipsolver.h pkg=libhipsolver-dev ;;
        blaslt) header=hipblaslt/hipblaslt.h pkg=libhipblaslt-dev ;;
        *) echo "install-math-libs: unknown library '$lib' (blas, rand, fft, sparse, solver, blaslt)" >&2; exit 2 ;;
    esac
    for root in "${ROCM_PATH:-}" /opt/rocm; do
        if [ -n "$root" ] && [ -f "$root/include/$header" ]; then
            echo "install-math-libs: $header found under $root; installing nothing for $lib"
            continue 2
        fi
    done
    extra=$pkg; [ "$lib" = rand ] && extra=librocrand-dev
    if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" &&
        dpkg-query -W -f='${Status}' "$extra" 2>/dev/null | grep -q "install ok installed"; then
        echo "install-math-libs: $pkg $(dpkg-query -W -f='${Version}' "$pkg") present"
        continue
    fi
    packages+=("$pkg")
    [ "$lib" = rand ] && packages+=(librocrand-dev)
done
[ ${#packages[@]} -eq 0 ] && exit 0
sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null; then
    echo "install-math-libs: apt-get could not install ${packages[*]} (Debian bookworm has no hipBLAS, hipFFT, hipSOLVER or hipBLASLt, trixie no hipBLASLt: use a newer suite, or ROCm)" >&2
    exit 1
fi
for p in "${packages[@]}"; do echo "install-math-libs: $p $(dpkg-query -W -f='${Version}' "$p") installed"; done
