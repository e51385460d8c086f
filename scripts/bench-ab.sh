#!/usr/bin/env bash
# Paired A/B of the host-path rows (launch, ordering, event) between commits, on one GPU machine start:
#
#   scripts/bench-ab.sh bundle REV...   build here: scripts/bench.sh bundle of the working tree, then the
#                                       same hip-rs-bench at each REV (a git worktree each), as
#                                       .bench-bundle/ab/<label>, and .bench-bundle/ab.sh
#   bash .bench-bundle/ab.sh            on the GPU machine: rounds of `hip-rs-bench --launch-only`, each
#                                       binary once per round in the order built (working tree first),
#                                       into $OUT/ab.md; ROUNDS (default 6) and BUDGET (seconds from the
#                                       start after which no round begins, default 420) bound it
#   scripts/bench-ab.sh report FILE...  here: per row, each binary's median and range over its runs, and
#                                       in how many rounds it beat the last REV's run (the baseline)
#
# Every binary is paired with raw C++ inside its own run, so the rows compare across binaries only
# through those differences; a round holds one run of each, so a slow stretch of the host hits all.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
bundle)
    shift
    [ $# -gt 0 ] || { echo "bench-ab: name at least one commit to pair the working tree with" >&2; exit 2; }
    scripts/bench.sh bundle
    # The headers scripts/bench.sh took for the working tree's binary.
    if [ "${CUDA_MAJOR:-12}" = 12 ] && [ -z "${HIP_HEADERS:-}" ]; then
        HIP_HEADERS=$(scripts/hip-nvidia-headers.sh trixie)
    fi
    . scripts/nvidia-env.sh
    mkdir -p .bench-bundle/ab
    label=$(git rev-parse --short HEAD)
    git diff --quiet HEAD || label="$label+changes"
    mv .bench-bundle/hip-rs-bench ".bench-bundle/ab/$label"
    order=$label
    # A target folder of its own (absolute: cargo runs in each worktree), so the working tree's stays.
    ab_target=$PWD/$nvidia_target-ab
    for rev in "$@"; do
        sha=$(git rev-parse --short "$rev^{commit}")
        wt=$(mktemp -d /var/tmp/bench-ab-XXXX)
        git worktree add -q --detach "$wt" "$sha"
        # The same features as the bundle; after the first commit only the worktree's own crates rebuild.
        (cd "$wt" && cargo build -q --release -p hip-rs-bench --features cudarc --bin hip-rs-bench \
            --target-dir "$ab_target")
        cp "$ab_target/release/hip-rs-bench" ".bench-bundle/ab/$sha"
        strip ".bench-bundle/ab/$sha"
        git worktree remove --force "$wt"
        order="$order $sha"
    done
    echo "$order" > .bench-bundle/ab/order
    cat > .bench-bundle/ab.sh <<'RUN'
#!/usr/bin/env bash
# On the GPU machine: rounds of --launch-only, every binary of ab/order once per round, into $OUT/ab.md.
set -uo pipefail
. "$(dirname "$0")/env.sh"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "host cores: $(nproc)"
  echo "built with: $(cat "$here/built-with")"; } > "$dest/ab.md"
start=$(date +%s)
for round in $(seq 1 "${ROUNDS:-6}"); do
    [ $(( $(date +%s) - start )) -lt "${BUDGET:-420}" ] || break
    for who in $(cat "$here/ab/order"); do
        echo "=== round $round: $who $(date -u +%H:%M:%S)" >> "$dest/ab.md"
        s=$(date +%s)
        timeout 200 "$here/ab/$who" --baseline "$here/lib/libhiprs_baseline.so" --launch-only >> "$dest/ab.md" 2>&1
        echo "=== rc $? in $(( $(date +%s) - s )) s" >> "$dest/ab.md"
    done
done
tail -n 3 "$dest/ab.md"
RUN
    chmod +x .bench-bundle/ab.sh
    echo "order: $order"
    du -sh .bench-bundle
    ;;
report)
    shift
    exec python3 scripts/bench-ab.py "$@"
    ;;
*)
    sed -n '2,15p' "$0" >&2
    exit 2
    ;;
esac
