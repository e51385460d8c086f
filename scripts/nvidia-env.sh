# Sourced (never run) by the scripts that build for HIP's NVIDIA platform: picks CUDA and the HIP headers,
# fetches that CUDA if missing, and exports what hip-sys reads.
#
#   CUDA_MAJOR   12 (default: CUDA 12.9) or 11 (CUDA 11.8), both from PyPI (scripts/fetch-cuda.sh)
#   HIP_HEADERS  a folder holding include/hip/ (scripts/hip-nvidia-headers.sh makes 5.7.1, 6.4.3, 7.2.4);
#                unset: the machine's own HIP headers (HIP 5.2.3 on Debian bookworm)
#
# Sets: cuda (the CUDA tree), cudart_so and nvrtc_libs (the run-time files a GPU bundle carries),
# hip_include (the folder holding hip/), nvidia_label (e.g. "HIP 5.2.3 headers, CUDA 12.9"), nvidia_target
# (a cargo target folder of its own for the combination), and exports
# HIP_PLATFORM, HIP_SYS_CUDA_INCLUDE, HIP_SYS_CUDA_LIB and, with HIP_HEADERS, HIP_PATH.
# HIP 5.2.3's NVIDIA headers compile against CUDA 12 as C only (the Rust bindings): C++ built against them
# (the benchmark baselines, hipBLAS's NVIDIA backend) needs CUDA 11 or newer HIP headers.
CUDA_MAJOR=${CUDA_MAJOR:-12}
case $CUDA_MAJOR in
    12) cudart_so=libcudart.so.12 nvrtc_libs="libnvrtc.so.12 libnvrtc-builtins.so.12.9" cuda_version=12.9 ;;
    11) cudart_so=libcudart.so.11.0 nvrtc_libs="libnvrtc.so.11.2 libnvrtc-builtins.so.11.8" cuda_version=11.8 ;;
    *) echo "nvidia-env: CUDA_MAJOR=$CUDA_MAJOR: this project builds with 12 or 11" >&2; exit 2 ;;
esac
cuda=$PWD/target/cuda$CUDA_MAJOR
scripts/fetch-cuda.sh "$CUDA_MAJOR" "$cuda" >/dev/null
if [ -n "${HIP_HEADERS:-}" ]; then
    [ -f "$HIP_HEADERS/include/hip/hip_version.h" ] ||
        { echo "nvidia-env: HIP_HEADERS=$HIP_HEADERS has no include/hip/hip_version.h" >&2; exit 2; }
    hip_include=$(cd "$HIP_HEADERS/include" && pwd)
    export HIP_PATH=${hip_include%/include}
else
    hip_include=/usr/include
fi
# The release the headers came from (hip_version.h's patch field is a build number, not the release).
if [ -f "$hip_include/../hip-rs-release" ]; then
    hip_version=$(cat "$hip_include/../hip-rs-release")
elif [ "$hip_include" = /usr/include ] && v=$(dpkg-query -W -f='${Version}' libamdhip64-dev 2>/dev/null); then
    hip_version=${v%%-*}
else
    hip_version=$(awk '/#define HIP_VERSION_(MAJOR|MINOR) /{v=v (v?".":"") $3} END{print v}' "$hip_include/hip/hip_version.h")
fi
nvidia_label="HIP $hip_version headers, CUDA $cuda_version"
# One cargo target folder per combination, so switching never rebuilds the others.
nvidia_target=target/nvidia
[ "$CUDA_MAJOR" = 12 ] || nvidia_target=$nvidia_target-cuda$CUDA_MAJOR
[ -z "${HIP_HEADERS:-}" ] || nvidia_target=$nvidia_target-hip${hip_version%% *}
export HIP_PLATFORM=nvidia HIP_SYS_CUDA_INCLUDE=$cuda/include HIP_SYS_CUDA_LIB=$cuda/lib
