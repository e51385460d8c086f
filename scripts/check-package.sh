#!/usr/bin/env bash
# `cargo package` of every published crate, as crates.io would receive it: the files each package holds
# (license files included), and each one building from its own .crate alone.
#
# The math and RCCL sys crates are outside the workspace (so `cargo test --workspace` needs none of their
# libraries), and `cargo package --workspace` resolves only workspace members locally: `hiprs`' optional
# dependencies on them would be looked up on crates.io. So this packages a copy of the working tree whose
# workspace lists them as members. Verification builds each .crate with DOCS_RS set (the sys crates'
# committed bindings, as on docs.rs): this machine has no hipBLAS, hipFFT, hipSOLVER or hipBLASLt to bind
# against. hiprs-rccl-sys has no committed bindings and RCCL is not on bookworm: it is packaged without
# verification (its build runs in the RCCL stage, in the experimental chroot).
set -euo pipefail
cd "$(dirname "$0")/.."
ws=target/package-ws
rm -rf "$ws"
mkdir -p "$ws"
git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$ws"
python3 - "$ws/Cargo.toml" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
sys_crates = ["rccl-sys", "hipblas-sys", "hiprand-sys", "hipfft-sys", "hipsolver-sys", "hipsparse-sys", "hipblaslt-sys"]
s = re.sub(r'^exclude = \[.*\]$', 'exclude = ["kernels"]', s, count=1, flags=re.M)
s = re.sub(r'^members = \[(.*)\]$', lambda m: 'members = [' + m.group(1) + ', ' + ", ".join(f'"{c}"' for c in sys_crates) + ']', s, count=1, flags=re.M)
open(p, "w").write(s)
PY
cd "$ws"
export CARGO_TARGET_DIR=$PWD/../package-build
unpublished=(--exclude hip-rs --exclude hip-rs-bench --exclude hip-rs-kernel-types --exclude hiprs-kernel-macros) # publish = false
rm -f "$CARGO_TARGET_DIR"/package/*.crate
cargo package -q --workspace "${unpublished[@]}" --no-verify --allow-dirty
for c in "$CARGO_TARGET_DIR"/package/*.crate; do
    files=$(tar -tzf "$c")
    grep -qE '^[^/]+/LICENSE-MIT$' <<<"$files" && grep -qE '^[^/]+/LICENSE-APACHE$' <<<"$files" ||
        { echo "$c lacks a license file" >&2; exit 1; }
done
# Verification: hiprs' optional dependency on the unverifiable hiprs-rccl-sys must resolve locally too, so
# this pass drops the `rccl` feature and that dependency from the copy (the pass above packaged the real
# manifests). cargo ignores [patch] when packaging.
sed -i 's/^rccl = \["dep:rccl-sys"\]$/rccl = []/; /^rccl-sys = { workspace = true, optional = true }$/d' hip/Cargo.toml
sed -i '/^rccl = \["hip\/rccl"\]$/d' Cargo.toml bench/Cargo.toml
mv "$CARGO_TARGET_DIR"/package "$CARGO_TARGET_DIR"/package-unverified
DOCS_RS=1 cargo package -q --workspace "${unpublished[@]}" --allow-dirty --exclude hiprs-rccl-sys
rm -rf "$CARGO_TARGET_DIR"/package && mv "$CARGO_TARGET_DIR"/package-unverified "$CARGO_TARGET_DIR"/package
ls "$CARGO_TARGET_DIR"/package/*.crate | sed 's|.*/||'
echo "cargo package: $(ls "$CARGO_TARGET_DIR"/package/*.crate | wc -l) crates, each with both license files; all but hiprs-rccl-sys built from their .crate"
