#!/usr/bin/env python3
"""The report of scripts/bench-ab.sh: reads the ab.md files of `.bench-bundle/ab.sh` runs and prints, per
row (ns over raw C++), each binary's median and range over its runs, and in how many rounds it beat the
baseline's run of the same round (the baseline: the binary named last in the rounds, the oldest commit).

    python3 scripts/bench-ab.py ab.md [ab.md ...]
"""
import re
import statistics as st
import sys

# Row key -> (label, how to find it in one run's markdown).
ROWS = {
    "empty": "empty launch, batches of 8",
    "steps": "+ bind + LaunchArgs check (public steps), batches of 8",
    "one": "two buffers, one stream",
    "event": "event record + query",
    "floor": "raw, alternating, ordered by hand (the floor)",
    "alt": "safe, alternating",
    "cudarc": "cudarc tracked, alternating",
}
TABLE_ROWS = {
    "one": "safe, one stream",
    "alt": "safe, alternating",
    "floor": "raw hip-sys, alternating, ordered by hand",
    "cudarc": "cudarc tracked, alternating",
}


def first_number(cell):
    return float(cell.split()[0])


def parse_run(body):
    """One run's rows, or None when the run did not finish (a crash or a timeout)."""
    row = {}
    m = re.search(r"^\| 8 \| \d+ \| (\d+) \|(.*)$", body, re.M)
    if not m:
        return None
    cells = [c.strip() for c in m.group(2).split("|") if c.strip()]
    row["steps"], row["empty"] = first_number(cells[4]), first_number(cells[5])
    row["raw_launch"] = float(m.group(1))
    for key, name in TABLE_ROWS.items():
        m = re.search(r"^\| " + re.escape(name) + r"[^|]*\| ([^|]+)\|", body, re.M)
        if not m:
            return None
        row[key] = first_number(m.group(1))
    events = body.split("## Event record", 1)
    if len(events) < 2:
        return None
    m = re.search(r"^\| safe[^|]*\| ([^|]+)\|", events[1], re.M)
    raw = re.search(r"^\| raw C\+\+[^|]*\| ([^|]+)\|", events[1], re.M)
    if not m or not raw:
        return None
    row["event"], row["raw_event"] = first_number(m.group(1)), first_number(raw.group(1))
    return row


def main(paths):
    order, runs, rounds = [], {}, []
    for path in paths:
        text = open(path).read()
        parts = re.split(r"^=== round (\d+): (\S+).*$", text, flags=re.M)
        current = {}
        for i in range(1, len(parts), 3):
            rnd, who, body = parts[i], parts[i + 1], parts[i + 2]
            if who not in order:
                order.append(who)
            row = parse_run(body)
            if row is None:
                print(f"{path}: round {rnd}, {who}: no result", file=sys.stderr)
                continue
            runs.setdefault(who, []).append(row)
            current.setdefault((path, rnd), {})[who] = row
        rounds += current.values()
    if not runs:
        sys.exit("bench-ab: no finished run in " + ", ".join(paths))
    whos = [w for w in order if w in runs]
    base = whos[-1]

    def summary(values):
        return f"{st.median(values):+.1f} ({min(values):+.1f} to {max(values):+.1f})"

    head = [f"{w}: median (range)" for w in whos] + [f"rounds {w} < {base}" for w in whos[:-1]]
    print("| row (ns over raw C++) | " + " | ".join(head) + " |")
    print("| --- |" + " ---: |" * len(head))
    for key, label in ROWS.items():
        cells = [summary([r[key] for r in runs[w]]) for w in whos]
        for w in whos[:-1]:
            paired = [r for r in rounds if w in r and base in r]
            cells.append(f"{sum(r[w][key] < r[base][key] for r in paired)} of {len(paired)}")
        print(f"| {label} | " + " | ".join(cells) + " |")
    for key, label in (("raw_launch", "raw C++ empty launch"), ("raw_event", "raw C++ event record + query")):
        cells = [f"{st.median([r[key] for r in runs[w]]):.0f}" for w in whos]
        print(f"| {label}, ns (absolute) | " + " | ".join(cells) + " |" + " |" * (len(whos) - 1))
    print()
    for w in whos:
        rs = runs[w]
        ratio = [r["alt"] / r["cudarc"] for r in rs]
        floor = [r["floor"] / r["cudarc"] for r in rs]
        under = {k: sum(r[k] <= 50 for r in rs) for k in ("empty", "one", "event")}
        print(
            f"- {w}: {len(rs)} runs; safe alternating / cudarc {st.median(ratio):.2f} "
            f"({min(ratio):.2f}-{max(ratio):.2f}), floor / cudarc {st.median(floor):.2f}; runs at or "
            f"under +50 ns: empty launch {under['empty']}, two buffers {under['one']}, event {under['event']}"
        )


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
