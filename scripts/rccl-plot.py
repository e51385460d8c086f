#!/usr/bin/env python3
"""Plot the two-GPU all-reduce table of bench-rccl's output (rccl-bench.md): bus bandwidth against size,
the safe API and the raw C NCCL program. Usage: scripts/rccl-plot.py rccl-bench.md docs/bench-rccl.png"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

UNITS = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
rows = []
for line in open(sys.argv[1]).read().split("Peer copy")[0].splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) == 6 and cells[0].split()[-1] in UNITS:
        n, unit = cells[0].split()
        rows.append((int(n) * UNITS[unit], float(cells[2]), float(cells[4])))
sizes = [r[0] for r in rows]
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(sizes, [r[1] for r in rows], "o-", label="hip::rccl (safe)")
ax.plot(sizes, [r[2] for r in rows], "s--", label="raw C, NCCL")
ax.set_xscale("log", base=2)
ax.set_xlabel("all-reduce size (bytes, f32 sum, in place)")
ax.set_ylabel("bus bandwidth, GB/s")
ax.set_title("All-reduce over 2 NVIDIA H200 (NVLink), NCCL 2.21.5")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
print(f"wrote {sys.argv[2]} from {len(rows)} sizes")
