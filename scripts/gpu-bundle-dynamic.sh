#!/usr/bin/env bash
# The `dynamic-loading` feature on HIP's NVIDIA platform, for the GPU machine: builds tests/gpu.rs,
# gpu_platform, errors and dynamic_loading_nvidia and two examples with the feature (CUDA 12.9 by
# default, scripts/nvidia-env.sh) into .gpu-bundle-dyn/ (about 3 MiB). Its run.sh takes the CUDA libraries
# from .gpu-bundle/lib (scripts/gpu-bundle.sh; carry both), runs everything with them on the loader's path,
# then without them, then with the driver hidden too (root: a private mount namespace).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.gpu-bundle-dyn}
. scripts/nvidia-env.sh
nt=$nvidia_target-dynamic
rm -rf "$out" && mkdir -p "$out/bin"
cargo build -q --features gpu,dynamic-loading --examples --target-dir "$nt"
cargo test -q --features gpu,dynamic-loading --no-run --message-format=json --target-dir "$nt" 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["kind"]==["test"] and m["target"]["name"] in ("dynamic_loading_nvidia","gpu","gpu_platform","errors"):
        print(m["executable"], m["target"]["name"])' | while read -r exe name; do cp "$exe" "$out/bin/test-$name"; done
cp "$nt"/debug/examples/{vector_add,device_query} "$out/bin/"
strip "$out"/bin/*
xz -T2 -6 "$out"/bin/*
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
set -u
here=$(cd "$(dirname "$0")" && pwd)
lib=$here/../.gpu-bundle/lib
for f in "$lib"/*.xz "$here"/bin/*.xz; do [ -f "${f%.xz}" ] || xz -dk "$f"; done
rm -f "$here"/bin/*.xz
chmod +x "$here"/bin/*
fail=0
echo "== NEEDED"
for b in "$here"/bin/*; do echo "$(basename "$b"): $(readelf -d "$b" | grep NEEDED | grep -oE '\[[^]]*\]' | tr '\n' ' ')"; done
echo "== with the bundle's libraries"
for t in "$here"/bin/test-*; do
    echo "=== $(basename "$t")"; LD_LIBRARY_PATH=$lib "$t" --test-threads=1 2>&1 | grep -E "^test |test result" || fail=1
    LD_LIBRARY_PATH=$lib "$t" --test-threads=1 >/dev/null 2>&1 || fail=1
done
LD_LIBRARY_PATH=$lib "$here/bin/vector_add" || fail=1
LD_LIBRARY_PATH=$lib "$here/bin/device_query" | head -8
echo "== without them (what this machine has on its own)"
if "$here/bin/device_query" > "$here/no-libs.txt" 2>&1; then echo "(found CUDA 12 on this machine)"; fi
head -4 "$here/no-libs.txt"
echo "== the driver hidden too"
real=$(readlink -f "$(ldconfig -p | awk '/libcuda\.so\.1 /{print $NF; exit}')")
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
    HIP_RS_CUDART=/nonexistent/libcudart.so.12 HIP_RS_CUDA_DRIVER=/nonexistent/libcuda.so.1 \
        HIP_RS_NVRTC=/nonexistent/libnvrtc.so.12 unshare -m --propagation private sh -c "mount --bind /dev/null '$real' &&
        '$here/bin/test-dynamic_loading_nvidia' --exact without_cuda_every_entry_point_says_library_not_found --ignored" || fail=1
else
    echo "not root or no unshare: skipped"; fail=1
fi
echo "=== overall: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
RUN
chmod +x "$out/run.sh"
du -sh "$out"
