#!/usr/bin/env bash
# Build hip::rand's or hip::fft's GPU tests, example and benchmark for HIP's NVIDIA platform on a machine
# without a GPU, with the library's NVIDIA backend (scripts/build-math-nvidia.sh) over CUDA 11.8's cuRAND
# 10.3 or cuFFT 10.9, and pack them with their libraries (the CUDA library pruned to sm_90 and
# xz-compressed: cuRAND 38 MB, cuFFT 41 MB) into .rand-bundle/ or .fft-bundle/. hipBLAS has its own
# script (scripts/gpu-bundle-blas.sh: cuBLAS needs three calls).
#
#   scripts/gpu-bundle-math.sh rand|fft SRC     -> .rand-bundle/ or .fft-bundle/
#
# On the GPU machine, two calls in a row (carry each folder): bash .rand-bundle/run.sh, then
# bash .fft-bundle/run.sh (tests, memcheck, the random_fft example, benchmarks; HIP_RS_SKIP_BENCH=1: all
# but the benchmarks).
set -euo pipefail
[ $# -ge 2 ] || { sed -n '8,8p' "$0" | sed 's/^# //' >&2; exit 2; }
lib=$1 src=$2
case $lib in
    rand) name=hiprand cuda_so=libcurand.so.10 soname=1 example= ;;
    fft) name=hipfft cuda_so=libcufft.so.10 soname=0 example=random_fft ;;
    *) echo "gpu-bundle-math: unknown library '$lib' (rand, fft)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
prefix=$PWD/target/$name-nvidia
scripts/build-math-nvidia.sh "$lib" "$src" "$prefix"
cuda=$PWD/target/cuda11
export HIP_PLATFORM=nvidia HIP_SYS_CUDA_INCLUDE=$cuda/include HIP_SYS_CUDA_LIB=$cuda/lib
export CARGO_TARGET_DIR=target/nvidia CARGO_PROFILE_DEV_DEBUG=0
export "$(echo "$name" | tr a-z A-Z)_PATH=$prefix"
features=gpu,$lib
if [ -n "$example" ]; then
    # The example needs both libraries: hipRAND's backend must have been built (gpu-bundle-math.sh rand).
    [ -f target/hiprand-nvidia/lib/libhiprand.so.1 ] || { echo "gpu-bundle-math: build the rand bundle first (the example uses hipRAND)" >&2; exit 1; }
    export HIPRAND_PATH=$PWD/target/hiprand-nvidia
    features=$features,rand
fi
out=.$lib-bundle
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
tests=gpu_$lib
[ "$lib" = rand ] && tests="$tests gpu_rand_half"
for t in $tests; do
    test_exe=$(cargo test -q --features "$features" --test "$t" --no-run --message-format=json 2>/dev/null |
        python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable"): print(m["executable"])')
    cp "$test_exe" "$out/bin/test-$t"
done
if [ -n "$example" ]; then
    cargo build -q --features "$features" --example "$example"
    cp "$CARGO_TARGET_DIR/debug/examples/$example" "$out/bin/example-$example"
    cp -L target/hiprand-nvidia/lib/libhiprand.so.1 "$out/lib/"
fi
cargo build -q --release -p hip-rs-bench --features "$lib" --bin "$lib"
cp "$CARGO_TARGET_DIR/release/$lib" "$out/bin/bench-$lib"
g++ -O2 -std=c++17 -shared -fPIC -D__HIP_PLATFORM_NVIDIA__ -D__HIP_PLATFORM_NVCC__ -I/usr/include -I"$cuda/include" \
    -I"$prefix/include" "bench/baseline/${lib}_baseline.cpp" -o "$out/lib/libhiprs_${lib}_baseline.so" \
    -L"$prefix/lib" -l:lib$name.so.$soname
strip "$out"/bin/* "$out/lib/libhiprs_${lib}_baseline.so"
# Debug binaries with rustfft inside run to 12 MB each: they travel compressed too.
for b in "$out"/bin/*; do xz -T2 -6 "$b"; done
cp -L "$cuda/lib/libcudart.so.11.0" "$prefix/lib/lib$name.so.$soname" "$out/lib/"
# NVRTC travels with the rand bundle only; the fft bundle finds it where the rand bundle left it.
if [ "$lib" = rand ]; then
    for l in libnvrtc.so.11.2 libnvrtc-builtins.so.11.8; do xz -T2 -6 -c "$cuda/lib/$l" > "$out/lib/$l.xz"; done
fi
pruned=$(mktemp)
python3 scripts/prune-fatbin.py "$cuda/lib/$cuda_so" "$pruned" --keep-sm 90 --drop-covered-ptx
xz -T2 -6 -c "$pruned" > "$out/lib/$cuda_so.xz" && rm -f "$pruned"

cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# On the GPU machine: the tests, then under memcheck, the example if any, then the benchmark. Exits
# non-zero on any failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
dest=${OUT:-$here}
for f in "$here"/lib/*.xz "$here"/bin/*.xz; do [ -f "${f%.xz}" ] || xz -dk "$f"; done
chmod +x "$here"/bin/*
# The rand bundle leaves cuRAND and NVRTC in /tmp/hip-rs-math for the fft bundle (they do not fit its call): run the rand bundle first, the fft bundle right after, while the machine is warm.
mkdir -p /tmp/hip-rs-math
for l in libcurand.so.10 libnvrtc.so.11.2 libnvrtc-builtins.so.11.8; do
    [ -f "$here/lib/$l" ] && cp "$here/lib/$l" /tmp/hip-rs-math/
done
export LD_LIBRARY_PATH="$here/lib:/tmp/hip-rs-math${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HIP_RS_CACHE_DISABLE=1
fail=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in "$here"/bin/test-*[!z]; do
    echo "=== $(basename "$t")"; "$t" --test-threads=1 || fail=1
    echo "=== memcheck $(basename "$t")"
    compute-sanitizer --tool memcheck --report-api-errors no "$t" --test-threads=1 > "$dest/memcheck-$(basename "$t").log" 2>&1 || fail=1
    grep -E "ERROR SUMMARY|test result" "$dest/memcheck-$(basename "$t").log"
done
for x in "$here"/bin/example-*[!z]; do [ -f "$x" ] && { echo "=== $(basename "$x")"; "$x" || fail=1; }; done
[ "${HIP_RS_SKIP_BENCH:-}" = 1 ] && { echo "=== benchmarks skipped (HIP_RS_SKIP_BENCH=1)"; echo "=== exit $fail"; exit $fail; }
for b in "$here"/bin/bench-*[!z]; do
    lib=${b##*bench-}
    echo "=== $(basename "$b")"; "$b" --baseline "$here/lib/libhiprs_${lib}_baseline.so" | tee "$dest/$(basename "$b").md" || fail=1
done
echo "=== exit $fail"
exit $fail
RUN
chmod +x "$out/run.sh"
du -sh "$out"
