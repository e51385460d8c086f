#!/usr/bin/env bash
# Build hip::blas's GPU tests, the gemm and mlp examples and the BLAS benchmark for HIP's NVIDIA platform on a
# machine without a GPU, with hipBLAS's NVIDIA backend (scripts/build-math-nvidia.sh blas) over cuBLAS 11.11,
# and pack them for the GPU machine. cuBLAS does not fit one 64 MiB call: its libcublasLt (575 MB; 228 MB
# once the cubins an sm_90 GPU never loads are zeroed, scripts/prune-fatbin.py) travels xz-compressed in
# two halves first.
#
#   scripts/gpu-bundle-blas.sh HIPBLAS_SRC     -> .blas-lt-a/, .blas-lt-b/, .blas-bundle/
#
# On the GPU machine, three calls in a row (the machine stays warm between them):
#   carry .blas-lt-a:   bash .blas-lt-a/stash.sh
#   carry .blas-lt-b:   bash .blas-lt-b/stash.sh
#   carry .blas-bundle: bash .blas-bundle/run.sh     (tests, memcheck, example, benchmark; results in $OUT;
#                                                    HIP_RS_SKIP_BENCH=1: all but the benchmark)
set -euo pipefail
[ $# -ge 1 ] || { sed -n '8p' "$0" | sed 's/^# //' >&2; exit 2; }
src=$1
cd "$(dirname "$0")/.."
scripts/build-math-nvidia.sh blas "$src" target/hipblas-nvidia
cuda=$PWD/target/cuda11
export HIP_PLATFORM=nvidia HIP_SYS_CUDA_INCLUDE=$cuda/include HIP_SYS_CUDA_LIB=$cuda/lib
export HIPBLAS_PATH=$PWD/target/hipblas-nvidia CARGO_TARGET_DIR=target/nvidia CARGO_PROFILE_DEV_DEBUG=0
out=.blas-bundle
rm -rf "$out" .blas-lt-a .blas-lt-b && mkdir -p "$out/bin" "$out/lib" .blas-lt-a .blas-lt-b
cargo build -q --features gpu,blas --example gemm --example mlp
for t in gpu_blas gpu_blas_handle gpu_blas_batched gpu_blas_more gpu_blas_ex; do
    test_exe=$(cargo test -q --features gpu,blas --test "$t" --no-run --message-format=json 2>/dev/null |
        python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable"): print(m["executable"])')
    cp "$test_exe" "$out/bin/test-$t"
done
cp "$CARGO_TARGET_DIR/debug/examples/gemm" "$out/bin/example-gemm"
cp "$CARGO_TARGET_DIR/debug/examples/mlp" "$out/bin/example-mlp"
cargo build -q --release -p hip-rs-bench --features blas,cudarc --bin blas
cp "$CARGO_TARGET_DIR/release/blas" "$out/bin/bench-blas"
g++ -O2 -std=c++17 -shared -fPIC -D__HIP_PLATFORM_NVIDIA__ -I/usr/include -I"$cuda/include" -I"$HIPBLAS_PATH/include" \
    bench/baseline/blas_baseline.cpp -o "$out/lib/libhiprs_blas_baseline.so" -L"$HIPBLAS_PATH/lib" -l:libhipblas.so.0
strip "$out"/bin/* "$out/lib/libhiprs_blas_baseline.so"
cp -L "$cuda/lib/libcudart.so.11.0" "$HIPBLAS_PATH/lib/libhipblas.so.0" "$out/lib/"
for l in libnvrtc.so.11.2 libnvrtc-builtins.so.11.8; do xz -T2 -6 -c "$cuda/lib/$l" > "$out/lib/$l.xz"; done
pruned=$(mktemp -d)
python3 scripts/prune-fatbin.py "$cuda/lib/libcublas.so.11" "$pruned/libcublas.so.11" --keep-sm 90 --drop-covered-ptx
python3 scripts/prune-fatbin.py "$cuda/lib/libcublasLt.so.11" "$pruned/libcublasLt.so.11" --keep-sm 90 --drop-covered-ptx
xz -T2 -6 -c "$pruned/libcublas.so.11" > "$out/lib/libcublas.so.11.xz"
# The compressed halves depend only on cuBLAS: kept in target/ and reused while it is unchanged.
cache=target/blas-lt-$(sha256sum "$pruned/libcublasLt.so.11" | cut -c1-16)
if [ ! -f "$cache/lt.ab" ]; then
    mkdir -p "$cache"
    xz -T2 -6 -c "$pruned/libcublasLt.so.11" > "$pruned/lt.xz"
    split -n 2 "$pruned/lt.xz" "$cache/lt."
fi
rm -rf "$pruned"
cp "$cache/lt.aa" .blas-lt-a/ && cp "$cache/lt.ab" .blas-lt-b/
for half in a b; do
    printf '#!/usr/bin/env bash\n# Keep this half of libcublasLt.so.11.xz on the GPU machine for .blas-bundle/run.sh.\nmkdir -p /tmp/hip-rs-blas-lt && cp "$(dirname "$0")"/lt.a%s /tmp/hip-rs-blas-lt/ && ls -l /tmp/hip-rs-blas-lt\n' "$half" > ".blas-lt-$half/stash.sh"
done
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# On the GPU machine, after both halves of libcublasLt were stashed: the BLAS tests (then under memcheck),
# the gemm example and the benchmark. Exits non-zero on any failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
dest=${OUT:-$here}
for f in "$here"/lib/*.xz; do [ -f "${f%.xz}" ] || xz -dk "$f"; done
cat /tmp/hip-rs-blas-lt/lt.aa /tmp/hip-rs-blas-lt/lt.ab | xz -d > "$here/lib/libcublasLt.so.11" || { echo "libcublasLt halves missing: run the two stash calls first"; exit 1; }
# cudarc opens libcublas.so before any versioned name: point it at this cuBLAS, not the machine's own.
ln -sf libcublas.so.11 "$here/lib/libcublas.so" && ln -sf libcublasLt.so.11 "$here/lib/libcublasLt.so"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HIP_RS_CACHE_DISABLE=1
if ! ldconfig -p | grep -q 'libcuda\.so '; then
    ln -sf "$(ldconfig -p | awk '/libcuda\.so\.1 /{print $NF; exit}')" "$here/lib/libcuda.so"
fi
fail=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tests=(gpu_blas gpu_blas_handle gpu_blas_batched gpu_blas_more gpu_blas_ex)
for t in "${tests[@]}"; do echo "=== test-$t"; "$here/bin/test-$t" --test-threads=1 || fail=1; done
for e in gemm mlp; do echo "=== example-$e"; "$here/bin/example-$e" || fail=1; done
for t in "${tests[@]}"; do
    echo "=== memcheck test-$t"
    compute-sanitizer --tool memcheck --report-api-errors no "$here/bin/test-$t" --test-threads=1 > "$dest/memcheck-$t.log" 2>&1 || fail=1
    grep -E "ERROR SUMMARY|test result" "$dest/memcheck-$t.log"
done
[ "${HIP_RS_SKIP_BENCH:-}" = 1 ] && { echo "=== bench-blas skipped (HIP_RS_SKIP_BENCH=1)"; echo "=== exit $fail"; exit $fail; }
echo "=== bench-blas"; "$here/bin/bench-blas" --baseline "$here/lib/libhiprs_blas_baseline.so" | tee "$dest/bench-blas.md" || fail=1
echo "=== exit $fail"
exit $fail
RUN
chmod +x "$out/run.sh"
du -sh "$out" .blas-lt-a .blas-lt-b
