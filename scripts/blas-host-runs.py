#!/usr/bin/env python3
"""Pool the BLAS host-cost tables of many short benchmark processes.

    scripts/blas-host-runs.py OUTPUT...

Each OUTPUT is what one `bench-blas --host-only --host-rounds N` process printed. A file named
`LABEL-anything` (e.g. `new-07.md`) is counted under LABEL, so two builds run alternately can be
compared. One process's interval says nothing about what changes between processes (where the heap
and the stack land, which core runs the thread, the clock): the same C call from Rust read -62 to
+34 ns over raw C++ between runs on one machine start, each run's interval about +-20 ns. So the
figure to read is the mean over processes, with a 95% interval from the spread of the processes'
means (Student's t), printed here per label, method and contender.
"""
import math
import os
import re
import sys
from collections import defaultdict

# Student's t, two-sided 95%, by degrees of freedom. Between the tabulated ones the next smaller is
# used (its t is larger: the interval errs wide, never narrow).
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26,
       10: 2.23, 11: 2.20, 12: 2.18, 13: 2.16, 14: 2.14, 15: 2.13, 16: 2.12, 17: 2.11,
       18: 2.10, 19: 2.09, 20: 2.09, 25: 2.06, 30: 2.04, 40: 2.02, 60: 2.00, 120: 1.98}


def t95(df):
    return T95[max(d for d in T95 if d <= df)]


def parse(text):
    """{(method, contender): mean ns over raw C++} of one process's output."""
    out = {}
    method = None
    for line in text.splitlines():
        if line.startswith("Host time per call"):
            shape = re.search(r"(\d+x\d+x\d+)", line)
            kind = "call by call" if "call by call" in line else "batches"
            method = f"{shape.group(1) if shape else '?'}, {kind}"
        m = re.match(r"\| ([^|]+?) \| (?:(\d+) \| )?([+-]\d+\.\d) ± [\d.]+ \| [+-]?\d+\.\d \|$", line)
        if method and m and not m.group(1).startswith("raw C++"):
            out[(method, m.group(1))] = float(m.group(3))
    return out


def main(paths):
    if not paths:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    runs = defaultdict(lambda: defaultdict(list))
    for path in paths:
        label = os.path.basename(path).split("-")[0]
        with open(path, encoding="utf-8") as f:
            found = parse(f.read())
        if not found:
            sys.exit(f"{path}: no host-cost table (did the process fail?)")
        for key, mean in found.items():
            runs[label][key].append(mean)
    print("| build | method | contender | processes | mean over processes, ns over raw C++ (95% CI) | min | max |")
    print("|---|---|---|---|---|---|---|")
    for label in sorted(runs):
        for (method, who), v in sorted(runs[label].items()):
            n = len(v)
            mean = sum(v) / n
            sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1)) if n > 1 else float("nan")
            ci = t95(n - 1) * sd / math.sqrt(n) if n > 1 else float("nan")
            print(f"| {label} | {method} | {who} | {n} | {mean:+.1f} ± {ci:.1f} | {min(v):+.1f} | {max(v):+.1f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
