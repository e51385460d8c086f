#!/usr/bin/env bash
# The GPU benchmarks (docs/BENCHMARKS.md), in two steps around one call on the GPU machine:
#
#   scripts/bench.sh bundle            build here: the benchmark for HIP's NVIDIA platform (release, with the
#                                      cudarc contender), the C++ baseline with g++ against the same HIP
#                                      headers and CUDA libraries, and those libraries -> .bench-bundle/
#                                      (CUDA 12.9 with HIP 5.7.1's headers; CUDA_MAJOR=11: 11.8 with 5.2.3's)
#   bash .bench-bundle/run.sh          on the GPU machine (carry .bench-bundle): runs it, writes bench.md,
#                                      copies.csv and machine.txt into $OUT (or the bundle's folder)
#   scripts/bench.sh report DIR        here: runs the compile-time section for AMD (gfx90a, CPU only) and
#                                      writes docs/BENCHMARKS.md and docs/bench-bandwidth.png from DIR
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
bundle)
    out=.bench-bundle
    # The C++ baseline needs headers that compile as C++ against the CUDA in use: HIP 5.2.3's do not
    # against CUDA 12, so the default (CUDA 12) takes HIP 5.7.1's (trixie chroot) for both sides.
    if [ "${CUDA_MAJOR:-12}" = 12 ] && [ -z "${HIP_HEADERS:-}" ]; then
        HIP_HEADERS=$(scripts/hip-nvidia-headers.sh trixie)
    fi
    . scripts/nvidia-env.sh
    rm -rf "$out" && mkdir -p "$out/lib"
    cargo build -q --release -p hip-rs-bench --features cudarc --bin hip-rs-bench --target-dir "$nvidia_target"
    cargo build -q --release -p hip-rs-bench --bin compile_cache --target-dir "$nvidia_target"
    cp "$nvidia_target"/release/hip-rs-bench "$nvidia_target"/release/compile_cache "$out/"
    g++ -O2 -std=c++17 -shared -fPIC -D__HIP_PLATFORM_NVIDIA__ -I"$hip_include" -I"$cuda/include" \
        bench/baseline/baseline.cpp -o "$out/lib/libhiprs_baseline.so" \
        -L"$cuda/lib" -l:"$cudart_so" -l:"${nvrtc_libs%% *}"
    strip "$out/hip-rs-bench" "$out/compile_cache" "$out/lib/libhiprs_baseline.so"
    cp -L "$cuda/lib/$cudart_so" "$out/lib/"
    for l in $nvrtc_libs; do xz -T2 -6 -c "$cuda/lib/$l" > "$out/lib/$l.xz"; done
    echo "$nvidia_label" > "$out/built-with"
    # What every runner in the bundle does first (run.sh here, ab.sh of scripts/bench-ab.sh): sourced.
    cat > "$out/env.sh" <<'ENV'
# Sourced by the bundle's runners on the GPU machine: sets here and dest, unpacks the libraries.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dest=${OUT:-$here}
for f in "$here"/lib/*.xz; do [ -f "${f%.xz}" ] || xz -dk "$f"; done
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HIP_RS_CACHE_DISABLE=1
# cudarc opens libcuda.so; drivers often install only libcuda.so.1.
libcuda=$(ldconfig -p | awk '/libcuda\.so\.1 /{print $NF; exit}')
if ! ldconfig -p | grep -q 'libcuda\.so ' && [ -n "$libcuda" ]; then
    ln -sf "$libcuda" "$here/lib/libcuda.so"
fi
ENV
    cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# On the GPU machine: the whole benchmark, once. Results go to $OUT (else next to this script).
set -euo pipefail
. "$(dirname "$0")/env.sh"
q='name,driver_version,pcie.link.gen.max,pcie.link.width.max,pcie.link.gen.current,pcie.link.width.current,clocks.max.sm'
nvidia-smi --query-gpu=$q --format=csv | tee "$dest/machine.txt"
echo "built with: $(cat "$here/built-with")" | tee -a "$dest/machine.txt"
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
