#!/usr/bin/env bash
# CI stage for the Rust-written kernels, inside the Debian sid chroot (HIP 6.4.3, Debian's rustc 1.97 +
# rust-src + LLVM 22, installed there by scripts/build-rust-kernels.sh when missing):
#   1. build kernels/ for gfx90a, gfx1100 (and their offload bundle) and sm_70 PTX through hip-kernel-build,
#      and fail unless the committed kernels/prebuilt/ files are byte-identical;
#   2. check the code objects with LLVM's own tools: ELF e_machine EM_AMDGPU (224), a `.kd` symbol per
#      kernel, the AMDGPU metadata note naming each kernel; the bundle lists both targets and unbundles to
#      the same ELF files; the PTX declares ISA 7.0, sm_70 and an `.entry` per kernel;
#   3. build examples/rust_kernels with kernels built by its build.rs (HIP_RS_BUILD_KERNELS=1), the route a
#      user takes, and run it (no GPU: it lists the kernels it holds).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${HIP_RS_IN_SID_CHROOT:-}" != 1 ]; then
    exec scripts/distro-chroot.sh sid run env HIP_RS_IN_SID_CHROOT=1 scripts/ci-rust-kernels.sh "$@"
fi

# The raw kernels, then the #[kernel] ones (kernels/src/typed.rs), exported as NAME_hk + a 64-bit fingerprint
# of their signature (tests/rust_kernels.rs pins the exact names against the launchers).
fp='_hk[0-9a-f]{16}'
typed=(affine_f32 block_sum_u32 count_once linear_ids matmul_f32 saxpy_f32 saxpy_f64 scale_chunks_f32 vector_add)
# The #[kernel]s with a Shared handle: their barriers are checked below.
shared=(block_sum_u32 matmul_f32)
kernels=(matmul_f32_unchecked matmul_f32_unchecked_pb saxpy_f32 saxpy_f64 vector_add "${typed[@]/%/$fp}")
fail() { echo "ci-rust-kernels: $*" >&2; exit 1; }

rust_kernels_ci() {
    # kernels/ is its own workspace: the root's `cargo fmt --all --check` does not see it.
    cargo fmt --manifest-path kernels/Cargo.toml --check
    scripts/build-rust-kernels.sh --check
    local dir=$CARGO_TARGET_DIR/rust-kernels k f
    for arch in gfx90a gfx1100; do
        f=$dir/hip_rs_kernels-$arch.co
        machine=$(python3 -c 'import sys,struct; print(struct.unpack_from("<H", open(sys.argv[1],"rb").read(), 0x12)[0])' "$f")
        [ "$machine" = 224 ] || fail "$f: e_machine $machine, not EM_AMDGPU (224)"
        # (Outputs are read whole first: grep -q closing a pipe early would fail it under pipefail.)
        header=$(llvm-readelf-22 -h "$f")
        syms=$(llvm-readelf-22 -s "$f")
        notes=$(llvm-readelf-22 --notes "$f")
        grep -qE "Flags: .*, $arch(,|$)" <<<"$header" || fail "$f: ELF flags do not name $arch"
        grep -q 'NT_AMDGPU_METADATA' <<<"$notes" || fail "$f: no AMDGPU metadata note"
        grep -q "amdhsa.target: *amdgcn-amd-amdhsa--$arch" <<<"$notes" || fail "$f: metadata target is not $arch"
        for k in "${kernels[@]}"; do
            grep -qE "OBJECT +GLOBAL .* $k\.kd$" <<<"$syms" || fail "$f: no $k.kd symbol"
            grep -qE "\.name: +$k$" <<<"$notes" || fail "$f: metadata note does not name $k"
        done
        echo "ci-rust-kernels: $f: EM_AMDGPU, $arch, ${#kernels[@]} .kd symbols, metadata note"
        # The bounds checks the #[kernel] types promise (In::get, Out::mine), as the backend emitted them (a
        # backend can drop one: cuda-oxide #396): in each typed kernel a 64-bit compare (v_cmp/v_cmpx ..
        # _u64) and an exec-mask branch come before the first global store. tests/rust_kernels.rs checks
        # the PTX the same way on any machine.
        local dis
        dis=$(llvm-objdump-22 -d --mcpu="$arch" "$f")
        for k in "${typed[@]}"; do
            awk -v k="$k" '
                $0 ~ "^[0-9a-f]+ <" k "_hk[0-9a-f]+>:$" { on = 1; next }
                on && /^[0-9a-f]+ </ { exit }
                on && !store && /v_cmpx?_[a-z]+_u64/ { cmp = 1 }
                on && !store && cmp && /s_cbranch_execz/ { br = 1 }
                on && !store && /global_store/ { store = 1; ok = cmp && br }
                END { exit !(store && ok) }' <<<"$dis" ||
                fail "$f: $k: no 64-bit bound compare and branch before its first store"
        done
        echo "ci-rust-kernels: $f: ${#typed[@]} #[kernel] entry points compare their bounds before storing"
        # Shared::sync's barrier: before every s_barrier (since the one before it), the wavefront counts
        # its live lanes (s_bcnt1 of exec), and the kernel has the trap taken when some are missing (a
        # wavefront in divergent code would pair barriers wrongly: kernel-types/src/gpu.rs).
        # $1: the symbol, as an awk regex.
        barriers_counted() {
            awk -v k="$1" '
                $0 ~ "^[0-9a-f]+ <" k ">:$" { on = 1; next }
                on && /^[0-9a-f]+ </ { exit }
                on && /s_bcnt1_i32_b(32|64) s[0-9]+, exec/ { counted = 1 }
                on && /s_trap/ { trap = 1 }
                on && /s_barrier/ { n++; if (!counted) bad++; counted = 0 }
                END { exit !(n >= 2 && bad == 0 && trap) }' <<<"$dis"
        }
        for k in "${shared[@]}"; do
            barriers_counted "${k}_hk[0-9a-f]+" ||
                fail "$f: $k: an s_barrier without the live-lane count before it, or no trap"
        done
        # Negative control: the raw twin's barriers (gpu::sync_threads) have no count, and the check says so.
        ! barriers_counted matmul_f32_unchecked || fail "$f: the barrier check passes a kernel without counts"
        echo "ci-rust-kernels: $f: ${#shared[@]} Shared kernels count their live lanes before each barrier"
    done
    local listed
    listed=$(clang-offload-bundler-22 -list -type=o -input="$dir/hip_rs_kernels.hipfb")
    for id in host-x86_64-unknown-linux-gnu hipv4-amdgcn-amd-amdhsa--gfx90a hipv4-amdgcn-amd-amdhsa--gfx1100; do
        grep -q "^$id-\{0,1\}$" <<<"$listed" || fail "the bundle has no $id entry: $listed"
    done
    [ "$(wc -l <<<"$listed")" = 3 ] || fail "the bundle should hold 3 entries: $listed"
    for arch in gfx90a gfx1100; do
        clang-offload-bundler-22 -unbundle -type=o -input="$dir/hip_rs_kernels.hipfb" \
            -targets="hipv4-amdgcn-amd-amdhsa--$arch" -output="$dir/unbundled-$arch.co"
        cmp "$dir/unbundled-$arch.co" "$dir/hip_rs_kernels-$arch.co" || fail "bundle's $arch entry differs"
    done
    echo "ci-rust-kernels: bundle: host, gfx90a, gfx1100; entries equal the code objects"
    f=$dir/hip_rs_kernels-sm_70.ptx
    grep -q '^\.version 7\.0$' "$f" && grep -q '^\.target sm_70$' "$f" || fail "$f: not PTX ISA 7.0 for sm_70"
    for k in "${kernels[@]}"; do
        grep -qE "^\.visible \.entry $k\(" "$f" || fail "$f: no .entry $k"
    done
    echo "ci-rust-kernels: $f: PTX 7.0, sm_70, ${#kernels[@]} entries"

    # The example, with kernels its build.rs builds through hip-kernel-build (Debian's toolchain).
    local out
    # It shares the kernel build directory with step 1, so core and the kernels are not built again.
    out=$(HIP_RS_BUILD_KERNELS=1 HIP_KERNEL_RUSTC=/usr/bin/rustc HIP_KERNEL_CARGO=/usr/bin/cargo RUSTC_BOOTSTRAP=1 \
        HIP_KERNEL_TARGET_DIR="$CARGO_TARGET_DIR/rust-kernels-build" \
        CARGO_TARGET_DIR="$CARGO_TARGET_DIR/rust-kernels-example" cargo run -q --example rust_kernels)
    echo "$out"
    # Every kernel for each of the two gfx targets.
    local want=$((2 * ${#kernels[@]}))
    grep -q "$want kernels" <<<"$out" || fail "the example did not find $want kernels in the bundle it was built with"
    local built
    # The newest: earlier build-script runs may have left their own out/ directories.
    built=$(ls -t "$CARGO_TARGET_DIR"/rust-kernels-example/debug/build/hip-rs-*/out/hip_rs_kernels.hipfb | head -1)
    cmp "$built" kernels/prebuilt/hip_rs_kernels.hipfb ||
        fail "the example's build.rs built a bundle that differs from the committed one"
    echo "ci-rust-kernels: the example's build.rs built the same bundle as the committed one"
}

rust_kernels_ci
