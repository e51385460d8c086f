#!/usr/bin/env bash
# CI for the math libraries (`hip::blas`, `hip::rand`, `hip::fft`, `hip::solver`, `hip::sparse`, `hip::blaslt`;
# no GPU): on the bookworm host, what the
# features do there (hipRAND 5.3.3 builds and is unit-tested; hipBLAS and hipFFT are missing: a build error
# naming what was tried; with `dynamic-loading` all three build from the committed bindings); then in the
# trixie (hipBLAS 5.5.1, hipRAND 5.7.1, hipFFT 6.1.2), sid (6.4.4, 6.4.3, 6.4.3) and experimental (7.2.4)
# chroots: the libraries installed, clippy and docs with warnings denied, the no-device tests, the examples
# without a GPU, the benchmark programs built, and (sid) the committed bindings current. Prints how long
# each part took.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
. scripts/lib/step.sh

bookworm() {
    mkdir -p target/ci-logs
    scripts/install-math-libs.sh rand
    for missing in blas:hipBLAS:hipblas:gemm fft:hipFFT:hipfft:random_fft; do
        local feature name pkg example
        IFS=: read -r feature name pkg example <<<"$missing"
        local log=target/ci-logs/$feature-bookworm.log
        if cargo build -q --features "$feature,rand" --example "$example" >"$log" 2>&1; then
            echo "bookworm has no $name, yet --features $feature built" >&2
            return 1
        fi
        grep -q "$name not found ($pkg/$pkg.h)" "$log" && grep -q "apt-get install lib$pkg-dev" "$log" ||
            { cat "$log" >&2; return 1; }
        echo "without $name: $(grep -m1 "$name not found" "$log")"
    done
    cargo clippy -q --features gpu,rand --all-targets -- -D warnings
    cargo test -q -p hiprs --features rand --lib rand
    cargo test -q -p hiprs --features blas,rand,fft,dynamic-loading --lib -- blas:: rand:: fft::
    cargo run -q --features blas,rand,fft,dynamic-loading --example gemm
    cargo run -q --features blas,rand,fft,dynamic-loading --example random_fft
    # hipSOLVER: no bookworm package (the build error names it); hipSPARSE 5.3.3: its sys crate builds.
    local log=target/ci-logs/solver-bookworm.log
    if cargo build -q --features solver --example solve >"$log" 2>&1; then
        echo "bookworm has no hipSOLVER, yet --features solver built" >&2
        return 1
    fi
    grep -q "hipSOLVER not found (hipsolver/hipsolver.h)" "$log" && grep -q "dynamic-loading" "$log" ||
        { cat "$log" >&2; return 1; }
    echo "without hipSOLVER: $(grep -m1 "hipSOLVER not found" "$log")"
    # hipBLASLt: no bookworm (or trixie) package: the build error names it and the way out.
    log=target/ci-logs/blaslt-bookworm.log
    if cargo build -q -p hiprs --features blaslt >"$log" 2>&1; then
        echo "bookworm has no hipBLASLt, yet --features blaslt built" >&2
        return 1
    fi
    grep -q "hipBLASLt not found (hipblaslt/hipblaslt.h)" "$log" && grep -q "apt-get install libhipblaslt-dev" "$log" &&
        grep -q "dynamic-loading" "$log" || { cat "$log" >&2; return 1; }
    echo "without hipBLASLt: $(grep -m1 "hipBLASLt not found" "$log")"
    cargo test -q -p hiprs --features solver,sparse,blaslt,dynamic-loading --lib -- solver:: sparse:: blaslt::
    cargo clippy -q -p hiprs --features solver,sparse,blaslt,dynamic-loading --all-targets -- -D warnings
    # The library-handle tests (hipBLAS, hipSOLVER, hipSPARSE together) and the host-cost benchmark.
    cargo clippy -q --features gpu,blas,solver,sparse,dynamic-loading --test gpu_library_handles -- -D warnings
    cargo clippy -q -p hip-rs-bench --features solver,blas,hip/dynamic-loading --bin solver -- -D warnings
    cargo run -q --features solver,dynamic-loading --example solve
    cargo run -q --features sparse,dynamic-loading --example sparse
    scripts/install-math-libs.sh sparse
    cargo test -q --manifest-path hipsparse-sys/Cargo.toml
    cargo clippy -q --features gpu,sparse --all-targets -- -D warnings
    RUSTDOCFLAGS="-D warnings" cargo doc -q --no-deps -p hiprs --features sparse
    cargo test -q -p hiprs --features sparse --lib -- sparse::
    cargo run -q --features sparse --example sparse
}
step "bookworm (hipRAND 5.3.3, hipSPARSE 5.3.3; no hipBLAS, hipFFT, hipSOLVER, hipBLASLt): builds, errors, hip::sparse, dynamic-loading from the committed bindings" bookworm

cargo fetch -q # the chroots do not download crates (TLS certificates): the host fetches for them
# One step per suite: hipBLAS, hipRAND and hipFFT (every suite packages them), then hipSOLVER, hipSPARSE and
# hipBLASLt where the suite packages them (each is checked, and said); one clippy, doc and unit-test run of
# the workspace with every library the suite has (it was two steps per suite, each linting, documenting and
# testing the workspace).
for suite in trixie sid experimental; do
    step "$suite: hipBLAS, hipRAND, hipFFT, and hipSOLVER, hipSPARSE, hipBLASLt where packaged: clippy, docs, no-device tests, examples" \
        scripts/distro-chroot.sh "$suite" run sh -c '
        set -e
        scripts/install-math-libs.sh blas rand fft
        features=blas,rand,fft
        more=
        for lib in sparse solver blaslt; do
            if apt-cache show libhip$lib-dev >/dev/null 2>&1; then
                scripts/install-math-libs.sh $lib
                more="$more,$lib"
            else
                echo "$0 packages no hip$lib (libhip$lib-dev)"
            fi
        done
        features=$features$more
        # The sys crates are outside the workspace: their own lints, docs and tests through their manifests.
        for c in hipblas-sys hiprand-sys hipfft-sys $(echo "$more" | tr , " " | sed "s/\([a-z]*\)/hip\1-sys/g"); do
            cargo clippy -q --offline --manifest-path $c/Cargo.toml --all-targets -- -D warnings
            RUSTDOCFLAGS="-D warnings" cargo doc -q --offline --no-deps --manifest-path $c/Cargo.toml
            cargo test -q --offline --manifest-path $c/Cargo.toml
        done
        cargo clippy -q --offline --features gpu,$features --all-targets -- -D warnings
        cargo clippy -q --offline -p hiprs --features blas,rand,fft,dynamic-loading --all-targets -- -D warnings
        # The benchmarks have no hipSPARSE program (no `sparse` feature).
        cargo clippy -q --offline -p hip-rs-bench --features "$(echo "$features" | sed "s/,sparse//")" --bins -- -D warnings
        RUSTDOCFLAGS="-D warnings" cargo doc -q --offline --no-deps -p hiprs --features $features
        cargo test -q --offline -p hiprs --features $features --lib -- blas:: rand:: fft:: solver:: sparse:: blaslt::
        cargo run -q --offline --features blas,rand,fft --example gemm
        cargo run -q --offline --features blas,rand,fft --example random_fft
        for lib in sparse solver; do
            case "$more," in *,$lib,*) ;; *) continue ;; esac
            example=$lib; [ $lib = solver ] && example=solve
            cargo run -q --offline --features $lib --example $example
        done
        case "$more," in
            *,blaslt,*)
                # The mlp example with its hipBLASLt path; the C++ baseline of the BLASLt benchmark.
                cargo run -q --offline --features blas,blaslt --example mlp
                g++ -O2 -std=c++17 -shared -fPIC -D__HIP_PLATFORM_AMD__ -w bench/baseline/blaslt_baseline.cpp \
                    -lhipblaslt -lamdhip64 -o "target/chroot-$0-libhiprs_blaslt_baseline.so" ;;
        esac' "$suite"
done
step "sid: committed hipBLAS, hipRAND, hipFFT, hipSOLVER, hipSPARSE, hipBLASLt bindings current" scripts/regen-math-prebuilt.sh --check
