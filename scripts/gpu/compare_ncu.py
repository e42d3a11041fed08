#!/usr/bin/env python3
"""Prints Steer's counters next to Nsight Compute's for the same metrics and configuration.
Usage: compare_ncu.py STEER_PROFILE_JSON NCU_CSV LABEL   (steer profile --json; ncu --csv --print-units base)
The last line, "LABEL worst pct diff X", is the largest |difference| in % over the
*.pct_of_peak_* metrics but DRAM throughput, which reads high after Steer's L2 flush (its dirty
lines are written back during the pass, docs/counters.md): scripts/gpu/ranges.sh judges the
profiler range by it."""
import csv, json, sys
steer = json.load(open(sys.argv[1]))["counters"]
rows = [r for r in csv.reader(open(sys.argv[2])) if r]
header = next((i for i, r in enumerate(rows) if "Metric Name" in r), None)
if header is None:
    print("no ncu table in", sys.argv[2]); sys.exit(0)
h = rows[header]
name_col, value_col = h.index("Metric Name"), h.index("Metric Value")
ncu = {}
for r in rows[header + 1:]:
    if len(r) > value_col:
        ncu.setdefault(r[name_col], float(r[value_col].replace(",", "")))
worst = 0.0
for metric, value in sorted(ncu.items()):
    ours = steer.get(metric)
    diff = (ours - value) / value * 100 if ours is not None and value else float("nan")
    shown = lambda v: "-" if v is None else (f"{v:.0f}" if abs(v) >= 1000 else f"{v:.3f}")
    print(f"{sys.argv[3]:9} {metric:60} steer {shown(ours):>16} ncu {shown(value):>16} diff {diff:+.3f} %")
    if "pct_of_peak" in metric and not metric.startswith("dram__throughput"):
        worst = max(worst, abs(diff)) if diff == diff else 1e9  # a missing value is the worst
print(f"{sys.argv[3]} worst pct diff {worst:.3f}")
