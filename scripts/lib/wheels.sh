# Sourced by the fetch scripts (fetch-cuda.sh, fetch-nccl.sh, fetch-cuda-libs.sh):
# `unpack_wheels DEST "PLATFORM_TAG..." WHEEL...` downloads the wheels from the Python package registry
# (binary only, no dependencies, for CPython 3.11 on the manylinux platform tags given) and unpacks each
# into DEST.
unpack_wheels() {
    local dest=$1 platform wheels w
    local args=()
    for platform in $2; do args+=(--platform "$platform"); done
    shift 2
    wheels=$(mktemp -d)
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 "${args[@]}" \
        -d "$wheels" "$@"
    for w in "$wheels"/*.whl; do python3 -m zipfile -e "$w" "$dest"; done
    rm -rf "$wheels"
}
