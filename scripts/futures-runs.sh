#!/usr/bin/env bash
# Issue 56's futures rows over many processes: runs futures_bench and async_pipeline (each alternating the
# waiting thread and the completion reactor inside one process) RUNS times (default 10), keeps each
# process's output under OUT (default futures-runs/), and prints, for every `summary:` key, the median
# and the spread (min-max) over the processes.
#   scripts/futures-runs.sh BIN_DIR [RUNS] [OUT]
# BIN_DIR holds bench-futures_bench and bench-async_pipeline (the futures bundle's bin/), or the two
# release examples (futures_bench, async_pipeline).
set -u
bin=${1:?usage: futures-runs.sh BIN_DIR [RUNS] [OUT]}
runs=${2:-10}
out=${3:-futures-runs}
mkdir -p "$out"
exe() { if [ -x "$bin/bench-$1" ]; then echo "$bin/bench-$1"; else echo "$bin/$1"; fi; }
fail=0
for i in $(seq 1 "$runs"); do
    for b in futures_bench async_pipeline; do
        if ! "$(exe $b)" > "$out/$b-$i.log" 2>&1; then
            echo "run $i of $b FAILED:"; tail -20 "$out/$b-$i.log"; fail=1
        fi
    done
done
echo "=== medians over $runs processes (min-max)"
cat "$out"/*.log | awk '/^summary: / { v[$2] = v[$2] " " $3 }
    END { for (k in v) print k v[k] }' | sort | while read -r key vals; do
    echo "$vals" | tr ' ' '\n' | sort -g | awk -v k="$key" '{ a[NR] = $1 }
        END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2;
              printf "%-34s median %8.3f  (%s-%s, %d processes)\n", k, m, a[1], a[NR], NR }'
done
grep -h "^reactor:" "$out"/futures_bench-*.log | tail -1
exit $fail
