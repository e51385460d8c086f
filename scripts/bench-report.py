#!/usr/bin/env python3
"""Write docs/BENCHMARKS.md and docs/bench-bandwidth.png from a benchmark run's folder.

usage: bench-report.py RUN_DIR DOCS_DIR
RUN_DIR holds what .bench-bundle/run.sh wrote on the GPU machine (bench.md, copies.csv, machine.txt) and
amd-compile.md from `scripts/bench.sh report` (the compile-time section run here for AMD gfx90a).
"""
import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

run, docs = Path(sys.argv[1]), Path(sys.argv[2])
machine = (run / "machine.txt").read_text().strip().splitlines()
bench = (run / "bench.md").read_text()
amd = (run / "amd-compile.md").read_text()

# The plot: bandwidth against size, one line per copy kind and contender.
rows = list(csv.DictReader((run / "copies.csv").open()))
fig, ax = plt.subplots(figsize=(10, 6))
kinds = list(dict.fromkeys(r["kind"] for r in rows))
colors = dict(zip(kinds, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
for kind in kinds:
    for who, style in [("safe", "-o"), ("C++", "--x")]:
        pts = [(int(r["bytes"]), float(r["median_gbps"])) for r in rows if r["kind"] == kind and r["contender"] == who]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=colors[kind], label=f"{kind}, {'hip (safe)' if who == 'safe' else 'raw C++'}", markersize=4)
ax.set_xscale("log", base=2)
ax.set_yscale("log")
sizes = sorted({int(r["bytes"]) for r in rows})
ax.set_xticks(sizes)
ax.set_xticklabels([f"{s >> 30} GiB" if s >= 1 << 30 else f"{s >> 20} MiB" if s >= 1 << 20 else f"{s >> 10} KiB" for s in sizes], rotation=45)
ax.set_xlabel("copy size (bytes, log scale)")
ax.set_ylabel("achieved bandwidth, GB/s (10^9 bytes/s, log scale)")
gpu = machine[1].split(",")[0] if len(machine) > 1 else "GPU"
ax.set_title(f"hipMemcpy bandwidth on {gpu}: safe hip API (solid) vs raw C++ HIP (dashed), medians")
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=8, ncol=2)
fig.tight_layout()
fig.savefig(docs / "bench-bandwidth.png", dpi=110)

header = "\n".join(f"    {line}" for line in machine)
body = bench.split("\n", 2)[2] if bench.startswith("platform") else bench
# Sections written by other runs (GEMM, random numbers and FFTs, two GPUs, dynamic loading, Rust kernels)
# follow this run's own, from the first heading after its last one ("Reading the numbers"): keep them.
previous = docs / "BENCHMARKS.md"
kept = ""
# "Reading the numbers" is prose about one run, written by hand after it: the previous one is kept as it
# was, and this script reminds whoever runs it to bring it up to date.
reading = "## Reading the numbers\n\n(Write what this run shows here.)\n"
if previous.exists():
    after_own = previous.read_text().split("\n## Reading the numbers\n", 1)
    others = after_own[1].split("\n## ", 1) if len(after_own) == 2 else []
    if len(after_own) == 2:
        reading = "## Reading the numbers\n" + others[0].rstrip("\n") + "\n"
    kept = "\n## " + others[1] if len(others) == 2 else ""
(docs / "BENCHMARKS.md").write_text(f"""# Benchmarks

The safe `hip` crate against raw `hip-sys` calls, a raw C++ program making the same HIP calls (built with
g++ against the same HIP headers and CUDA libraries), and cudarc driving CUDA directly, all in one process
on one GPU, interleaved round by round. HIP runs on HIP's NVIDIA platform here (HIP 5.2.3 headers over CUDA
11.8): no AMD GPU was available, so none of the GPU figures below say anything about AMD hardware. The
compile-time section was also run on the CI-like machine for AMD (gfx90a, CPU only).

Machine (from `nvidia-smi`, date of the run):

{header}

{bench.splitlines()[0]}; {bench.splitlines()[1]}

Reproduce (the middle step is one call on the GPU machine, carrying `.bench-bundle`):

```sh
scripts/bench.sh bundle
bash .bench-bundle/run.sh            # on the GPU machine; writes bench.md, copies.csv, machine.txt to $OUT
scripts/bench.sh report <that folder> # here: the AMD compile section, this page and the plot
```

The run's raw output is kept in [bench-run/](bench-run/).

![bandwidth against size](bench-bandwidth.png)

{body.strip()}

## HIPRTC compile time on the CI-like machine (AMD compiler, no GPU)

{amd.split("## HIPRTC compile time", 1)[1].split("## Targets", 1)[0].strip()}

{reading}{kept}""")
print(f"wrote {docs / 'BENCHMARKS.md'} and {docs / 'bench-bandwidth.png'}")
print("kept the previous 'Reading the numbers': update its figures to this run by hand")
