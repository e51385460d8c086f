#!/usr/bin/env bash
# Build the Rust-written kernels (kernels/) for AMD (gfx90a, gfx1100; one offload bundle) and NVIDIA (PTX,
# sm_70) inside the Debian sid chroot, with Debian's own rustc 1.97, rust-src and LLVM 22, through the build
# helper hip-kernel-build (its example build_kernels), exactly as a user's build.rs would.
#
#   scripts/build-rust-kernels.sh            rebuild and write the committed code objects in kernels/prebuilt/
#   scripts/build-rust-kernels.sh --check    rebuild into target/chroot-sid/rust-kernels and fail unless the
#                                            committed ones are byte-identical
#   scripts/build-rust-kernels.sh --out DIR  rebuild into DIR only
#   scripts/build-rust-kernels.sh --install-only   install the toolchain in the chroot and stop (CI runs this
#                                            while other stages build)
#
# The toolchain is apt-installed inside the chroot when missing (idempotent): rustc, cargo, rust-src,
# rust-llvm (clang/lld/llvm 22) and clang-tools-22 (clang-offload-bundler). The chroot's PATH starts with
# the machine's rustup, so Debian's /usr/bin/rustc and /usr/bin/cargo are named explicitly.
set -euo pipefail
cd "$(dirname "$0")/.."
prebuilt=kernels/prebuilt
arches=gfx90a,gfx1100
sm=sm_70

if [ "${HIP_RS_IN_SID_CHROOT:-}" != 1 ]; then
    exec scripts/distro-chroot.sh sid run env HIP_RS_IN_SID_CHROOT=1 scripts/build-rust-kernels.sh "$@"
fi

mode=write out=$prebuilt
case ${1:-} in
    "") ;;
    --check) mode=check out=$CARGO_TARGET_DIR/rust-kernels ;;
    --out) mode=out out=${2:?--out needs a directory} ;;
    --install-only) mode=install ;;
    *) echo "build-rust-kernels: unknown argument '$1' (--check, --out DIR, --install-only)" >&2; exit 2 ;;
esac

packages=(rustc cargo rust-src rust-llvm clang-tools-22)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "build-rust-kernels: installing ${missing[*]} in the sid chroot"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
        { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
fi
echo "build-rust-kernels: $(/usr/bin/rustc -V), $(clang-22 --version | head -1)"
[ "$mode" = install ] && exit 0

build=$CARGO_TARGET_DIR/rust-kernels-build
export HIP_KERNEL_RUSTC=/usr/bin/rustc HIP_KERNEL_CARGO=/usr/bin/cargo RUSTC_BOOTSTRAP=1
# The helper runs on the host toolchain (any stable Rust); only the kernels need Debian's.
(unset RUSTC_BOOTSTRAP; cargo build -q -p hiprs-kernel-build --example build_kernels)
"$CARGO_TARGET_DIR/debug/examples/build_kernels" --crate kernels --out "$build" \
    --amdgpu "$arches" --nvptx "$sm"

files=(hip_rs_kernels-gfx90a.co hip_rs_kernels-gfx1100.co hip_rs_kernels.hipfb hip_rs_kernels-$sm.ptx)
mkdir -p "$out"
for f in "${files[@]}"; do cp "$build/$f" "$out/$f"; done
if [ $mode = check ]; then
    for f in "${files[@]}"; do
        cmp "$out/$f" "$prebuilt/$f" ||
            { echo "build-rust-kernels: $prebuilt/$f differs from kernels/ built now: run scripts/build-rust-kernels.sh" >&2; exit 1; }
    done
    echo "build-rust-kernels: the committed code objects match kernels/"
else
    echo "build-rust-kernels: wrote ${files[*]} to $out"
fi
