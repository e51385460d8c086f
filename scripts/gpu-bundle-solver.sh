#!/usr/bin/env bash
# Build hip::solver's and hip::sparse's GPU tests, examples and benchmark for HIP's NVIDIA platform on a
# machine without a GPU, with hipSOLVER's and hipSPARSE's NVIDIA backends (scripts/build-math-nvidia.sh
# solver|sparse, rocm-5.2.3 sources) over CUDA 11.8's cuSOLVER 11.4, cuBLAS 11.11 and cuSPARSE 11.7, and
# pack them with every library they need at run time for the GPU machine.
#
#   scripts/gpu-bundle-solver.sh HIPSOLVER_SRC HIPSPARSE_SRC [HIPBLAS_SRC]   -> .solver-lib-a/ ... and .solver-bundle/
#
# With HIPBLAS_SRC (rocm-5.2.3), hipBLAS's NVIDIA backend is built too (cuBLAS already travels for
# cuSOLVER): the library-handle tests (gpu_library_handles, gpu_blas_handle) join the bundle, bench-solver's
# host-cost rows include a GEMM, and bench-blas --host-only (its paired GEMM host-cost table against raw
# C++ hipBLAS) runs after bench-solver.
#
# The CUDA libraries are pruned to sm_90 (scripts/prune-fatbin.py), xz-compressed, put in one tar and cut
# into as few equal pieces as let no call carry more than HIP_RS_CALL_MIB (default 55) MiB with the
# checkout's own files; the last piece rides in .solver-bundle/. On the GPU machine, calls in a row (the
# machine stays warm between them), each carrying one folder:
#   carry .solver-lib-a:  bash .solver-lib-a/stash.sh      (and so on for each .solver-lib-* folder)
#   carry .solver-bundle: bash .solver-bundle/run.sh       (tests, tests under memcheck, examples,
#                                                          benchmark; logs in $OUT)
# run.sh's switches: HIP_RS_SKIP_BENCH=1 all but the benchmark; HIP_RS_ONLY_BENCH=1 the benchmark only (a
# second call of its own: the 600 s a call may take); HIP_RS_SKIP_MEMCHECK=1 no memcheck pass;
# HIP_RS_BENCH_ARGS (e.g. --quick) for bench-solver; HIP_RS_RAW_TABLE=1 also bin/baseline-solver's table
# (always when bench-solver was not built).
# The script prints the folders, their sizes and the calls.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '7p' "$0" | sed 's/^# //' >&2; exit 2; }
solver_src=$1 sparse_src=$2 blas_src=${3:-}
cd "$(dirname "$0")/.."

# What the bundle carries: "KIND NAME" with KIND test / example (the root package) or bench (a bin of
# hip-rs-bench, carried as bench-NAME). Each is built with its own required-features; a target that does
# not exist yet (or needs a feature nobody defined yet) is left out with a message.
targets=(
    "test gpu_solver"
    "test gpu_solver_batched"
    "test gpu_sparse"
    "test gpu_math_ordering"
    "example solve"
    "example sparse"
    "bench solver"
)
[ -n "$blas_src" ] && targets+=("test gpu_library_handles" "test gpu_blas_handle" "bench blas")

scripts/build-math-nvidia.sh solver "$solver_src" target/hipsolver-nvidia
scripts/build-math-nvidia.sh sparse "$sparse_src" target/hipsparse-nvidia
cuda=$PWD/target/cuda11
export HIP_PLATFORM=nvidia HIP_SYS_CUDA_INCLUDE=$cuda/include HIP_SYS_CUDA_LIB=$cuda/lib
export HIPSOLVER_PATH=$PWD/target/hipsolver-nvidia HIPSPARSE_PATH=$PWD/target/hipsparse-nvidia
extra_features=
if [ -n "$blas_src" ]; then
    scripts/build-math-nvidia.sh blas "$blas_src" target/hipblas-nvidia
    export HIPBLAS_PATH=$PWD/target/hipblas-nvidia
    extra_features=,blas
fi
export CARGO_TARGET_DIR=target/nvidia CARGO_PROFILE_DEV_DEBUG=0
out=.solver-bundle
rm -rf "$out" .solver-lib-* && mkdir -p "$out/bin" "$out/lib"

# Every target of the two packages with its required features: "PACKAGE KIND NAME FEATURES|FEATURES-DEFINED".
catalogue=$(cargo metadata -q --no-deps --format-version 1 | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["name"] not in ("hip-rs", "hip-rs-bench"):
        continue
    defined = ",".join(p["features"])
    for t in p["targets"]:
        for kind in t["kind"]:
            print(p["name"], kind, t["name"], ",".join(t.get("required-features", [])) + "|" + defined)')
artifact() { # the executable a `cargo build/test --message-format=json` run produced
    python3 -c 'import json, sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable"): print(m["executable"])' | tail -1
}
built=() skipped=()
for entry in "${targets[@]}"; do
    read -r kind name <<<"$entry"
    case $kind in
        test | example) pkg=hip-rs ;;
        bench) pkg=hip-rs-bench ;;
        *) echo "gpu-bundle-solver: unknown kind '$kind' in the target list" >&2; exit 2 ;;
    esac
    meta_kind=$kind; [ "$kind" = bench ] && meta_kind=bin
    line=$(awk -v p="$pkg" -v k="$meta_kind" -v n="$name" '$1 == p && $2 == k && $3 == n {print $4; exit}' <<<"$catalogue")
    if [ -z "$line" ]; then
        echo "gpu-bundle-solver: $kind '$name' does not exist yet in $pkg: left out"
        skipped+=("$kind-$name")
        continue
    fi
    features=${line%%|*} defined=,${line#*|},
    missing=
    for f in ${features//,/ }; do [[ $defined == *",$f,"* ]] || missing="$missing $f"; done
    if [ -n "$missing" ]; then
        echo "gpu-bundle-solver: $kind '$name' needs feature(s)$missing, which $pkg does not define yet: left out"
        skipped+=("$kind-$name")
        continue
    fi
    case $kind in
        test) exe=$(cargo test -q --features "$features" --test "$name" --no-run --message-format=json | artifact) ;;
        example) exe=$(cargo build -q --features "$features" --example "$name" --message-format=json | artifact) ;;
        bench) exe=$(cargo build -q --release -p hip-rs-bench --features "$features$extra_features" --bin "$name" --message-format=json | artifact) ;;
    esac
    [ -n "$exe" ] || { echo "gpu-bundle-solver: building $kind '$name' gave no executable" >&2; exit 1; }
    cp "$exe" "$out/bin/$kind-$name"
    built+=("$kind-$name")
done

# The raw C++ side: the library the benchmark opens, and the same file as a program printing the table.
base_flags=(-O2 -std=c++17 -D__HIP_PLATFORM_NVIDIA__ -D__HIP_PLATFORM_NVCC__ -I/usr/include -I"$cuda/include"
    -I"$HIPSOLVER_PATH/include" -I"$HIPSPARSE_PATH/include")
base_libs=(-L"$HIPSOLVER_PATH/lib" -L"$HIPSPARSE_PATH/lib" -l:libhipsolver.so.0 -l:libhipsparse.so.0
    -L"$cuda/lib" -lcudart -Wl,-rpath-link,"$cuda/lib")
g++ "${base_flags[@]}" -shared -fPIC bench/baseline/solver_baseline.cpp -o "$out/lib/libhiprs_solver_baseline.so" \
    "${base_libs[@]}" -Wl,--no-undefined
g++ "${base_flags[@]}" -DHIPRS_SOLVER_BASELINE_MAIN bench/baseline/solver_baseline.cpp -o "$out/bin/baseline-solver" \
    "${base_libs[@]}"
if [ -n "$blas_src" ]; then # bench-blas's raw C++ side
    g++ "${base_flags[@]}" -shared -fPIC -I"$HIPBLAS_PATH/include" bench/baseline/blas_baseline.cpp \
        -o "$out/lib/libhiprs_blas_baseline.so" -L"$HIPBLAS_PATH/lib" -l:libhipblas.so.0 -Wl,--no-undefined \
        -L"$cuda/lib" -lcudart -Wl,-rpath-link,"$cuda/lib"
fi
strip "$out"/bin/* "$out"/lib/libhiprs_*_baseline.so
# NVRTC (16 MB compressed) only where a carried program links it.
needed=$(for f in "$out"/bin/* "$out"/lib/libhiprs_*_baseline.so; do readelf -d "$f"; done | grep -o 'NEEDED.*' | sort -u)
for b in "$out"/bin/*; do xz -T1 -6 "$b"; done
cp -L "$cuda/lib/libcudart.so.11.0" "$HIPSOLVER_PATH/lib/libhipsolver.so.0" "$HIPSPARSE_PATH/lib/libhipsparse.so.0" "$out/lib/"
[ -n "$blas_src" ] && cp -L "$HIPBLAS_PATH/lib/libhipblas.so.0" "$out/lib/"

# The big libraries, pruned and compressed once per content (target/solver-libs/, reused while unchanged):
# libcusolver needs libcublas and libcublasLt (its NEEDED entries), hipSPARSE libcusparse.
big=(libcusolver.so.11 libcublas.so.11 libcublasLt.so.11 libcusparse.so.11)
grep -q 'libnvrtc\.so' <<<"$needed" && big+=(libnvrtc.so.11.2 libnvrtc-builtins.so.11.8)
mkdir -p target/solver-libs
packed=()
for l in "${big[@]}"; do
    key=$(sha256sum "$cuda/lib/$l" | cut -c1-16)
    xzf=target/solver-libs/$l.$key.xz
    if [ ! -f "$xzf" ]; then
        tmp=$(mktemp)
        case $l in
            libnvrtc*) cp "$cuda/lib/$l" "$tmp" ;; # no fat binaries inside
            *) python3 scripts/prune-fatbin.py "$cuda/lib/$l" "$tmp" --keep-sm 90 --drop-covered-ptx ;;
        esac
        xz -T"${HIP_RS_XZ_THREADS:-1}" -6 -c "$tmp" > "$xzf.part" && mv "$xzf.part" "$xzf"
        rm -f "$tmp"
    fi
    ln -sf "$PWD/$xzf" "target/solver-libs/$l.xz"
    packed+=("$l.xz")
done
tarball=target/solver-libs/libs.tar
tar -C target/solver-libs -chf "$tarball" "${packed[@]}"
tar_sum=$(sha256sum "$tarball" | cut -d' ' -f1)

# Cut the tar into as few equal pieces as fit a call each beside the checkout's own files (tracked and
# untracked ones travel with every call): the last piece rides in the bundle, each other one in a stash
# folder of its own.
mib=1048576
checkout=$(git ls-files -co --exclude-standard -z | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s}')
room=$(( ${HIP_RS_CALL_MIB:-55} * mib - checkout - mib / 4 ))
bundle_now=$(( $(du -sb "$out" | cut -f1) + 65536 )) # and what is written below
tar_size=$(stat -c %s "$tarball")
calls=1
while piece=$(( (tar_size + calls - 1) / calls )); [ "$piece" -gt $(( room - bundle_now )) ]; do calls=$(( calls + 1 )); done
pieces=$(mktemp -d)
split -a 2 -b "$piece" "$tarball" "$pieces/libs.tar."
names=()
for p in "$pieces"/libs.tar.*; do names+=("$(basename "$p")"); done
letters=(a b c d e f g h i j k l m n o p)
dirs=()
for i in "${!names[@]}"; do
    p=$pieces/${names[$i]}
    if [ "$i" -eq $(( ${#names[@]} - 1 )) ]; then
        mkdir -p "$out/pieces" && mv "$p" "$out/pieces/"
        continue
    fi
    d=.solver-lib-${letters[$i]}
    mkdir -p "$d" && mv "$p" "$d/"
    cat > "$d/stash.sh" <<STASH
#!/usr/bin/env bash
# Keep this piece of the solver bundle's libraries on the GPU machine for .solver-bundle/run.sh.
mkdir -p /tmp/hip-rs-solver-libs && cp "\$(dirname "\$0")"/${names[$i]} /tmp/hip-rs-solver-libs/ && ls -l /tmp/hip-rs-solver-libs
STASH
    dirs+=("$d")
done
rm -rf "$pieces"
printf '%s\n' "${names[@]}" > "$out/pieces.txt"
echo "$tar_sum" > "$out/libs.tar.sha256"
printf '%s\n' "${built[@]}" > "$out/built.txt"
: > "$out/skipped.txt" && { [ ${#skipped[@]} -eq 0 ] || printf '%s\n' "${skipped[@]}" > "$out/skipped.txt"; }

cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# On the GPU machine, after every .solver-lib-*/stash.sh ran: the tests, the tests again under memcheck, the
# examples, then the benchmark (bench-solver against lib/libhiprs_solver_baseline.so; bin/baseline-solver's
# raw table where bench-solver was not built, or with HIP_RS_RAW_TABLE=1). Exits non-zero on any failure.
# HIP_RS_SKIP_BENCH=1: no benchmark; HIP_RS_ONLY_BENCH=1: only the benchmark; HIP_RS_SKIP_MEMCHECK=1: no
# memcheck; HIP_RS_BENCH_ARGS: more arguments for bench-solver (--quick).
set -u
here=$(cd "$(dirname "$0")" && pwd)
dest=${OUT:-$here}
stash=/tmp/hip-rs-solver-libs
mkdir -p "$stash"
[ -d "$here/pieces" ] && cp "$here"/pieces/* "$stash/"
missing=
while read -r p; do [ -f "$stash/$p" ] || missing="$missing $p"; done < "$here/pieces.txt"
if [ -n "$missing" ]; then
    echo "library pieces missing in $stash:$missing (run the .solver-lib-*/stash.sh calls first, on this warm machine)"
    exit 1
fi
if [ ! -f "$here/lib/.unpacked" ]; then
    # shellcheck disable=SC2046 # one piece a word, in order
    cat $(sed "s|^|$stash/|" "$here/pieces.txt") > "$here/libs.tar"
    [ "$(sha256sum "$here/libs.tar" | cut -d' ' -f1)" = "$(cat "$here/libs.tar.sha256")" ] ||
        { echo "library pieces do not add up to the tar the bundle was built with (stale stash?)"; exit 1; }
    tar -xf "$here/libs.tar" -C "$here/lib" && rm -f "$here/libs.tar"
    for f in "$here"/lib/*.xz "$here"/bin/*.xz; do [ -f "${f%.xz}" ] || xz -d "$f"; done
    chmod +x "$here"/bin/*
    touch "$here/lib/.unpacked"
fi
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HIP_RS_CACHE_DISABLE=1
fail=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "built: $(tr '\n' ' ' < "$here/built.txt")"
[ -s "$here/skipped.txt" ] && echo "left out when built (not written yet): $(tr '\n' ' ' < "$here/skipped.txt")"
tests=$(ls "$here"/bin/test-* 2>/dev/null)
examples=$(ls "$here"/bin/example-* 2>/dev/null)
[ "${HIP_RS_ONLY_BENCH:-}" = 1 ] && { tests=; examples=; echo "=== tests and examples skipped (HIP_RS_ONLY_BENCH=1)"; }
for t in $tests; do
    n=$(basename "$t")
    echo "=== $n"; "$t" --test-threads=1 2>&1 | tee "$dest/$n.log"; [ "${PIPESTATUS[0]}" = 0 ] || fail=1
done
if [ "${HIP_RS_SKIP_MEMCHECK:-}" != 1 ] && [ -n "$tests" ]; then
    for t in $tests; do
        n=$(basename "$t")
        echo "=== memcheck $n"
        compute-sanitizer --tool memcheck --report-api-errors no "$t" --test-threads=1 > "$dest/memcheck-$n.log" 2>&1 || fail=1
        grep -E "ERROR SUMMARY|test result" "$dest/memcheck-$n.log"
    done
fi
for x in $examples; do
    n=$(basename "$x")
    echo "=== $n"; "$x" 2>&1 | tee "$dest/$n.log"; [ "${PIPESTATUS[0]}" = 0 ] || fail=1
done
if [ "${HIP_RS_SKIP_BENCH:-}" = 1 ]; then
    echo "=== benchmark skipped (HIP_RS_SKIP_BENCH=1)"
else
    if [ -f "$here/bin/bench-solver" ]; then
        echo "=== bench-solver ${HIP_RS_BENCH_ARGS:-}"
        # shellcheck disable=SC2086 # the arguments split on spaces
        "$here/bin/bench-solver" --baseline "$here/lib/libhiprs_solver_baseline.so" ${HIP_RS_BENCH_ARGS:-} |
            tee "$dest/bench-solver.md"
        [ "${PIPESTATUS[0]}" = 0 ] || fail=1
    fi
    if [ -f "$here/bin/bench-blas" ]; then
        echo "=== bench-blas --host-only"
        "$here/bin/bench-blas" --baseline "$here/lib/libhiprs_blas_baseline.so" --host-only | tee "$dest/bench-blas.md"
        [ "${PIPESTATUS[0]}" = 0 ] || fail=1
    fi
    if [ ! -f "$here/bin/bench-solver" ] || [ "${HIP_RS_RAW_TABLE:-}" = 1 ]; then
        echo "=== baseline-solver (raw hipSOLVER / hipSPARSE by themselves)"
        "$here/bin/baseline-solver" | tee "$dest/baseline-solver.md"; [ "${PIPESTATUS[0]}" = 0 ] || fail=1
    fi
fi
echo "=== exit $fail"
exit $fail
RUN
chmod +x "$out/run.sh"
[ ${#skipped[@]} -eq 0 ] || echo "gpu-bundle-solver: left out (not written yet): ${skipped[*]}"
echo "gpu-bundle-solver: each call may carry $(( room / mib )) MiB beside the checkout's $(( checkout / mib )) MiB"
du -sh "$out" "${dirs[@]}"
echo "On the GPU machine, one call each, in this order, while it stays warm:"
for d in "${dirs[@]}"; do echo "  carry $d:  bash $d/stash.sh"; done
echo "  carry $out:  bash $out/run.sh"
