#!/usr/bin/env bash
# The GPU benchmarks (docs/BENCHMARKS.md), in two steps around one call on the GPU machine:
#
#   scripts/bench.sh bundle            build here: the benchmark for HIP's NVIDIA platform (release, with the
#                                      cudarc contender), the C++ baseline with g++ against the same HIP
#                                      headers and CUDA libraries, and those libraries -> .bench-bundle/
#   bash .bench-bundle/run.sh          on the GPU machine (carry .bench-bundle): runs it, writes bench.md,
#                                      copies.csv and machine.txt into $OUT (or the bundle's folder)
#   scripts/bench.sh report DIR        here: runs the compile-time section for AMD (gfx90a, CPU only) and
#                                      writes docs/BENCHMARKS.md and docs/bench-bandwidth.png from DIR
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
bundle)
    out=.bench-bundle
    scripts/fetch-cuda11.sh target/cuda11 >/dev/null
    cuda=$PWD/target/cuda11
    rm -rf "$out" && mkdir -p "$out/lib"
    HIP_PLATFORM=nvidia HIP_SYS_CUDA_INCLUDE=$cuda/include HIP_SYS_CUDA_LIB=$cuda/lib \
        cargo build -q --release -p hip-rs-bench --features cudarc --bin hip-rs-bench --target-dir target/nvidia
    HIP_PLATFORM=nvidia HIP_SYS_CUDA_INCLUDE=$cuda/include HIP_SYS_CUDA_LIB=$cuda/lib \
        cargo build -q --release -p hip-rs-bench --bin compile_cache --target-dir target/nvidia
    cp target/nvidia/release/hip-rs-bench target/nvidia/release/compile_cache "$out/"
    g++ -O2 -std=c++17 -shared -fPIC -D__HIP_PLATFORM_NVIDIA__ -I/usr/include -I"$cuda/include" \
        bench/baseline/baseline.cpp -o "$out/lib/libhiprs_baseline.so" \
        -L"$cuda/lib" -l:libcudart.so.11.0 -l:libnvrtc.so.11.2
    strip "$out/hip-rs-bench" "$out/compile_cache" "$out/lib/libhiprs_baseline.so"
    cp -L "$cuda/lib/libcudart.so.11.0" "$out/lib/"
    for l in libnvrtc.so.11.2 libnvrtc-builtins.so.11.8; do xz -T2 -6 -c "$cuda/lib/$l" > "$out/lib/$l.xz"; done
    cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# On the GPU machine: the whole benchmark, once. Results go to $OUT (else next to this script).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=${OUT:-$here}
for f in "$here"/lib/*.xz; do [ -f "${f%.xz}" ] || xz -dk "$f"; done
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HIP_RS_CACHE_DISABLE=1
# cudarc opens libcuda.so; drivers often install only libcuda.so.1.
if ! ldconfig -p | grep -q 'libcuda\.so '; then
    ln -sf "$(ldconfig -p | awk '/libcuda\.so\.1 /{print $NF; exit}')" "$here/lib/libcuda.so"
fi
q='name,driver_version,pcie.link.gen.max,pcie.link.width.max,pcie.link.gen.current,pcie.link.width.current,clocks.max.sm'
nvidia-smi --query-gpu=$q --format=csv | tee "$dest/machine.txt"
date -u +%Y-%m-%dT%H:%MZ >> "$dest/machine.txt"
# Theoretical host-link rate per direction from the PCIe generation and width the GPU reports.
read -r gen width < <(nvidia-smi --query-gpu=pcie.link.gen.max,pcie.link.width.max --format=csv,noheader,nounits | head -1 | tr -d ' ' | tr ',' ' ')
gbps=$(awk -v g="$gen" -v w="$width" 'BEGIN { r[1]=2.5*0.8; r[2]=5*0.8; r[3]=8*128/130; r[4]=16*128/130; r[5]=32*128/130; r[6]=64*242/256; printf "%.2f", r[g]*w/8 }')
echo "host link: PCIe gen $gen x$width = $gbps GB/s per direction" | tee -a "$dest/machine.txt"
"$here/hip-rs-bench" --baseline "$here/lib/libhiprs_baseline.so" --csv "$dest/copies.csv" --link-gbps "$gbps" "$@" | tee "$dest/bench.md"
RUN
    chmod +x "$out/run.sh"
    du -sh "$out"
    ;;
report)
    dir=${2:?usage: scripts/bench.sh report DIR}
    g++ -O2 -std=c++17 -shared -fPIC -D__HIP_PLATFORM_AMD__ -I/usr/include bench/baseline/baseline.cpp \
        -o target/libhiprs_baseline_amd.so -lamdhip64
    cargo build -q --release -p hip-rs-bench --bin hip-rs-bench
    HIP_RS_CACHE_DISABLE=1 target/release/hip-rs-bench --baseline target/libhiprs_baseline_amd.so > "$dir/amd-compile.md"
    python3 -c 'import matplotlib' 2>/dev/null || pip install -q matplotlib
    python3 scripts/bench-report.py "$dir" docs
    mkdir -p docs/bench-run && cp "$dir"/bench.md "$dir"/copies.csv "$dir"/machine.txt "$dir"/amd-compile.md docs/bench-run/
    ;;
*)
    sed -n '2,12p' "$0"; exit 2 ;;
esac
