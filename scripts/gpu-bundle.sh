#!/usr/bin/env bash
# Build the `gpu` tests and the examples for HIP's NVIDIA platform on a machine without a GPU, and pack
# them with the run-time libraries they need (libcudart, NVRTC; binaries and NVRTC xz-compressed) into one
# folder (default .gpu-bundle/); past the 64 MiB a call carries, also into parts OUT.1, OUT.2, ... (see
# the end). On the GPU machine, `bash .gpu-bundle/run.sh` runs everything,
# then the tests again under compute-sanitizer memcheck, and exits non-zero on any failure.
# example-rust_kernels launches the Rust-built kernels (kernels/prebuilt/*.ptx) and checks their results;
# bench-rust_kernel_vs_hiprtc (release) times the Rust-built vector_add against the HIPRTC-built one;
# bench-typed_launch (release) the #[kernel] launcher against the raw launch (host time) and the checked
# kernels against their unchecked twins (vector_add, memory-bound; tiled matmul, compute-bound).
#
# CUDA 12.9 and the machine's HIP headers by default; CUDA_MAJOR=11 and HIP_HEADERS=DIR (newer HIP headers,
# scripts/hip-nvidia-headers.sh) choose others (scripts/nvidia-env.sh). run.sh prints which it was built with.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.gpu-bundle}
. scripts/nvidia-env.sh
export CARGO_TARGET_DIR=$nvidia_target CARGO_PROFILE_DEV_DEBUG=0
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
cargo build -q --features gpu --examples
cargo build -q --release -p hip-rs-bench --bin rust_kernel_vs_hiprtc --bin typed_launch
cargo build -q --release --example futures_bench --example async_pipeline # the futures' numbers, in release
cargo test -q --features gpu --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["kind"]==["test"] and m["package_id"].find("hip-rs")>=0:
        print(m["executable"], m["target"]["name"])' | while read -r exe name; do
        # AMD-only test files (offline gfx90a compiles) hold no tests on NVIDIA: leave them out.
        # So are files for features this bundle does not build (dynamic-loading, gpu-multi, rccl: see their scripts).
        if grep -qE '^#!\[cfg\((all\()?(hip_platform = "amd"|feature = "(dynamic-loading|gpu-multi|rccl)")' "tests/$name.rs"; then continue; fi
        cp "$exe" "$out/bin/test-$name"
    done
for ex in vector_add device_query rtc_lowered_names rtc_link streams_events inspect_code_object pool_release rust_kernels shared_memory graph_replay; do
    cp "$CARGO_TARGET_DIR/debug/examples/$ex" "$out/bin/example-$ex"
done
cp "$CARGO_TARGET_DIR/release/rust_kernel_vs_hiprtc" "$out/bin/bench-rust_kernel_vs_hiprtc"
cp "$CARGO_TARGET_DIR/release/typed_launch" "$out/bin/bench-typed_launch"
for ex in async_pipeline futures_bench; do
    cp "$CARGO_TARGET_DIR/release/examples/$ex" "$out/bin/bench-$ex"
done
strip "$out"/bin/*
# Compressed to fit the 64 MiB a GPU-machine call carries; run.sh unpacks them.
xz -T2 -6 "$out"/bin/*
cp -L "$cuda/lib/$cudart_so" "$out/lib/"
# The CUDA headers of the NVRTC that travels (1.4 MiB compressed; HIP_RS_CUDA_INCLUDE): half precision
# (ProgramBuilder::half_precision) and cooperative groups (tests/cooperative_absent.rs compiles
# `this_grid().sync()`); with only the half-precision headers here the test found the GPU machine's own
# CUDA headers, of another CUDA than this NVRTC, and failed.
tar -C "$cuda" -cJf "$out/cuda-include.tar.xz" include
for l in $nvrtc_libs; do xz -T2 -6 -c "$cuda/lib/$l" > "$out/lib/$l.xz"; done
echo "$nvidia_label" > "$out/built-with"
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Run inside the bundle on the GPU machine: every gpu test, every example, then memcheck over the tests.
set -u
here=$(cd "$(dirname "$0")" && pwd)
for f in "$here"/lib/*.xz "$here"/bin/*.xz; do [ -f "${f%.xz}" ] || xz -dk "$f"; done
chmod +x "$here"/bin/*
rm -f "$here"/bin/*.xz
[ -d "$here/include" ] || tar -C "$here" -xJf "$here/cuda-include.tar.xz"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HIP_RS_CUDA_INCLUDE="$here/include"
fail=0
echo "built with: $(cat "$here/built-with")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
for t in "$here"/bin/test-*; do
    echo "=== $(basename "$t")"; "$t" --test-threads=1 || fail=1
    echo "=== memcheck with API errors reported, $(basename "$t")"
    compute-sanitizer --tool memcheck "$t" --test-threads=1 --skip deliberate_device_fault 2>&1 | grep -E "^========= (Program hit|Invalid|ERROR)" | sort | uniq -c
done
for e in "$here"/bin/example-*; do
    echo "=== $(basename "$e")"; "$e" || fail=1
done
for b in "$here"/bin/bench-*; do
    echo "=== $(basename "$b")"; "$b" || fail=1
done
if command -v compute-sanitizer >/dev/null; then
    for t in "$here"/bin/test-*; do
        echo "=== memcheck $(basename "$t")"
        # Memory errors only: the tests provoke API errors on purpose (unknown kernel names, bad images,
        # bad launches), which --report-api-errors would count. The full log shows what was checked.
        log="$here/memcheck-$(basename "$t").log"
        # Tests named `deliberate_device_fault` fault the device on purpose (in a child process, which the
        # sanitizer follows): they run in the plain pass above, not here.
        if ! compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 "$t" --test-threads=1 \
            --skip deliberate_device_fault \
            > "$log" 2>&1; then
            # A binary that never calls the CUDA runtime (PTX parsing only) gives the sanitizer nothing to
            # check: it says so and exits non-zero. That is not a memory error.
            if grep -q "ERROR SUMMARY" "$log" || ! grep -q "test result: ok" "$log"; then fail=1; fi
        fi
        grep -E "ERROR SUMMARY|test result|Target application" "$log"
    done
    # The Rust-built kernels, under memcheck too: an out-of-bounds access in them would show here.
    echo "=== memcheck example-rust_kernels"
    compute-sanitizer --tool memcheck --error-exitcode 3 "$here/bin/example-rust_kernels" \
        > "$here/memcheck-example-rust_kernels.log" 2>&1 || fail=1
    grep -E "ERROR SUMMARY|correct" "$here/memcheck-example-rust_kernels.log"
else
    echo "compute-sanitizer not found"; fail=1
fi
echo "=== overall: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
RUN
chmod +x "$out/run.sh"
du -sh "$out"; ls -la "$out/bin" "$out/lib"
# Past the 64 MiB one call carries: the binaries shared round-robin between OUT.1, OUT.2, ... (each with
# its own copy of the libraries, headers and run.sh, hard links where the file system allows), each to
# be carried and run on its own.
limit=$((64 << 20))
total=$(du -sb "$out" | cut -f1)
if [ "$total" -gt "$limit" ]; then
    shared=$(( $(du -sb "$out/lib" | cut -f1) + $(stat -c %s "$out/cuda-include.tar.xz") ))
    parts=$(( ($(du -sb "$out/bin" | cut -f1) + limit - shared - 1) / (limit - shared - (1 << 20)) ))
    [ "$parts" -ge 2 ] || parts=2
    for k in $(seq 1 "$parts"); do
        rm -rf "$out.$k" && mkdir -p "$out.$k/bin"
        cp -al "$out/lib" "$out/cuda-include.tar.xz" "$out/built-with" "$out/run.sh" "$out.$k/" 2>/dev/null ||
            cp -a "$out/lib" "$out/cuda-include.tar.xz" "$out/built-with" "$out/run.sh" "$out.$k/"
    done
    i=0
    for f in $(ls -S "$out/bin"); do
        k=$(( i % parts + 1 )); i=$((i + 1))
        ln "$out/bin/$f" "$out.$k/bin/" 2>/dev/null || cp "$out/bin/$f" "$out.$k/bin/"
    done
    echo "$out is $((total >> 20)) MiB, past the 64 MiB a call carries: carry $out.1 ... $out.$parts one by one"
    for k in $(seq 1 "$parts"); do du -sh "$out.$k"; done
fi
