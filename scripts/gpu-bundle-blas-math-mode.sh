#!/usr/bin/env bash
# Build the math-mode precision test (tests/gpu_blas_math_mode.rs) and hip::blas's other "more" tests
# against hipBLAS 2.x's NVIDIA backend, which has hipblasSetMathMode (hipBLAS 0.51 at rocm-5.2.3 has
# none), for an NVIDIA GPU with TF32. hipBLAS 2.x's headers need HIP's library_types.h: the crate and the
# backend are built with HIP 5.7.1's headers (scripts/hip-nvidia-headers.sh trixie), CUDA 11.8.
#
#   scripts/gpu-bundle-blas-math-mode.sh HIPBLAS_SRC      (hipBLAS at rocm-6.1.0, brought in with fetch)
#                                                          -> .blas-mm-bundle/
#
# On the GPU machine cuBLASLt must be stashed first, as for scripts/gpu-bundle-blas.sh (its two stash
# calls, carrying .blas-lt-a and .blas-lt-b), then: bash .blas-mm-bundle/run.sh (carry .blas-mm-bundle).
set -euo pipefail
[ $# -ge 1 ] || { sed -n '7p' "$0" | sed 's/^# //' >&2; exit 2; }
src=$1
cd "$(dirname "$0")/.."
headers=$(scripts/hip-nvidia-headers.sh trixie)
prefix=$PWD/target/hipblas2-nvidia
ROCM_PATH=$headers/include/.. scripts/build-math-nvidia.sh blas "$src" "$prefix"
export CUDA_MAJOR=11 HIP_HEADERS=$headers
. scripts/nvidia-env.sh
export HIPBLAS_PATH=$prefix CARGO_TARGET_DIR=$nvidia_target-hipblas2 CARGO_PROFILE_DEV_DEBUG=0
out=.blas-mm-bundle
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
for t in gpu_blas_math_mode gpu_blas_more; do
    exe=$(cargo test -q --features gpu,blas --test "$t" --no-run --message-format=json 2>/dev/null |
        python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable"): print(m["executable"])')
    cp "$exe" "$out/bin/test-$t"
done
strip "$out"/bin/*
cp -L "$cuda/lib/$cudart_so" "$prefix/lib/libhipblas.so.0" "$out/lib/"
for l in $nvrtc_libs; do xz -T2 -6 -c "$cuda/lib/$l" > "$out/lib/$l.xz"; done
[ -f .blas-bundle/lib/libcublas.so.11.xz ] || { echo "run scripts/gpu-bundle-blas.sh first (pruned cuBLAS)" >&2; exit 1; }
cp .blas-bundle/lib/libcublas.so.11.xz "$out/lib/"
echo "$nvidia_label, hipBLAS $(grep -hE 'define hipblasVersion(Major|Minor|Patch) ' "$prefix"/include/hipblas/hipblas-version.h | awk '{print $3}' | paste -sd.)" > "$out/built-with"
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# On the GPU machine, after the two cuBLASLt stash calls: the math-mode tests, then under memcheck.
set -u
here=$(cd "$(dirname "$0")" && pwd)
dest=${OUT:-$here}
for f in "$here"/lib/*.xz; do [ -f "${f%.xz}" ] || xz -dk "$f"; done
cat /tmp/hip-rs-blas-lt/lt.aa /tmp/hip-rs-blas-lt/lt.ab | xz -d > "$here/lib/libcublasLt.so.11" || { echo "libcublasLt halves missing: run the two stash calls first"; exit 1; }
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fail=0
echo "built with: $(cat "$here/built-with")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in gpu_blas_math_mode gpu_blas_more; do
    echo "=== test-$t"; "$here/bin/test-$t" --test-threads=1 --nocapture || fail=1
    echo "=== memcheck test-$t"
    compute-sanitizer --tool memcheck --report-api-errors no "$here/bin/test-$t" --test-threads=1 > "$dest/memcheck-$t.log" 2>&1 || fail=1
    grep -E "ERROR SUMMARY|test result" "$dest/memcheck-$t.log"
done
echo "=== exit $fail"
exit $fail
RUN
chmod +x "$out/run.sh"
du -sh "$out"
