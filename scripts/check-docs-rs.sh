#!/usr/bin/env bash
# docs.rs's build of the published crates, as far as this machine allows: nightly rustdoc with
# `--cfg docsrs` (each feature-gated item marked with its feature), DOCS_RS set (every sys crate uses its
# committed bindings, as on docs.rs, which has no HIP and no math library), warnings denied; `hiprs` with
# the features of its [package.metadata.docs.rs] (all but `rccl`, which has no committed bindings). Then
# scripts/check-doc-links.py over the HTML: rustdoc does not warn on a link to a hidden item, which renders
# as literal text. The dependencies are documented before `hiprs`, so its links to them resolve.
set -euo pipefail
cd "$(dirname "$0")/.."
export DOCS_RS=1 RUSTDOCFLAGS="--cfg docsrs -D warnings" CARGO_TARGET_DIR=target/docs-rs-all
features=$(python3 -c 'import tomllib; print(",".join(tomllib.load(open("hip/Cargo.toml", "rb"))["package"]["metadata"]["docs"]["rs"]["features"]))')
for p in hiprs-build-support hiprs-kernel-build hiprs-sys hiprs-rtc-sys; do
    cargo +nightly doc -q --no-deps -p "$p" --all-features
done
for c in hipblas-sys hiprand-sys hipfft-sys hipsolver-sys hipsparse-sys hipblaslt-sys; do
    cargo +nightly doc -q --no-deps --manifest-path "$c/Cargo.toml" --all-features
done
cargo +nightly doc -q --no-deps -p hiprs --features "$features"
grep -q 'Available on <strong>crate feature <code>blas</code></strong> only' "$CARGO_TARGET_DIR/doc/hip/blas/index.html" ||
    { echo "hip::blas carries no feature mark" >&2; exit 1; }
scripts/check-doc-links.py "$CARGO_TARGET_DIR/doc" hip hip_sys hiprtc_sys hip_build_support hip_kernel_build \
    hipblas_sys hiprand_sys hipfft_sys hipsolver_sys hipsparse_sys hipblaslt_sys
echo "docs.rs-like build: hiprs with $features, every sys crate from its committed bindings, feature marks shown"
