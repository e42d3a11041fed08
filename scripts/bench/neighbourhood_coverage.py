#!/usr/bin/env python3
"""How much of the one-parameter neighbourhood of their fastest configurations live tunings
tested: for each tuning (a results store written by scripts/bench/live_tuning.sh), the
fastest configuration it found, how many of that configuration's neighbours (the valid
configurations that differ from it in one parameter) it tested, and the share of its tests
after the first --after that were neighbours of one of the three fastest so far (and at how
many of those tests one of the three had no untested neighbour left: spent); and, over
every store read, how many of that fastest's neighbours some tuning measured and how many of
those ran faster (none, with all measured: a local minimum of the one-parameter moves).

A local search such as basin-hopping ends on a configuration whose neighbours it has all
tested; a model-guided searcher chooses among neighbours and distant candidates alike, and may
leave a neighbour of its fastest untested that is faster still. docs/results.md ("Live on an
H100: where the gemm_full tunings ended") reads the gemm_full tunings with it.

  steer space kernels/gemm_full --list > space.csv
  python3 scripts/bench/neighbourhood_coverage.py --space space.csv DIR [DIR...] [--after 10]

The space listing's row order is the configurations' index order (config_index in a store).
Stores are the DIR/KERNEL_SEARCHER_SEED.db files (a copy of one already read is skipped); a
folder may hold several kernels' stores only if they share the space.
"""
import argparse
import csv
import glob
import hashlib
import os
import re
import sqlite3
import statistics
import sys


def read_space(path):
    """The configurations of a `steer space --list` CSV, in index order, as tuples of strings."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 2:
        sys.exit(f"neighbourhood_coverage.py: {path} lists no configurations (expected `steer space SPEC --list`)")
    return rows[0], [tuple(r) for r in rows[1:]]


class Neighbourhoods:
    """One-parameter neighbours of a configuration index, among the listed configurations."""

    def __init__(self, configs):
        self.configs = configs
        self.index = {c: i for i, c in enumerate(configs)}
        width = len(configs[0])
        self.values = [sorted({c[p] for c in configs}) for p in range(width)]
        self.cache = {}

    def of(self, i):
        if i not in self.cache:
            c = self.configs[i]
            near = []
            for p, values in enumerate(self.values):
                for v in values:
                    if v != c[p]:
                        j = self.index.get(c[:p] + (v,) + c[p + 1:])
                        if j is not None:
                            near.append(j)
            self.cache[i] = near
        return self.cache[i]


def read_tests(store):
    """(config_index, runtime in ms or None) of a store's tests, in the order tested."""
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return [(int(c), ms if status == "ok" else None)
                for c, ms, status in con.execute("SELECT config_index, median_ms, status FROM tests ORDER BY tuning_id, sequence")]
    finally:
        con.close()


def coverage(tests, hoods, after):
    """The fastest (index, ms), its neighbours and how many were tested, the share of tests
    after the first `after` that were neighbours of one of the three fastest before them, and
    at how many of those tests one of the three fastest had no untested neighbour left."""
    seen, valid, near_top, spent = set(), [], 0, 0
    for k, (c, ms) in enumerate(tests):
        if k >= after:
            top = [i for _, i in sorted(valid)[:3]]
            if any(c in hoods.of(i) for i in top):
                near_top += 1
            if any(all(n in seen for n in hoods.of(i)) for i in top):
                spent += 1
        seen.add(c)
        if ms is not None:
            valid.append((ms, c))
    if not valid:
        return None
    best_ms, best = min(valid)
    near = hoods.of(best)
    later = max(0, len(tests) - after)
    return {"tests": len(tests), "best": best, "best_ms": best_ms, "neighbours": len(near),
            "tested": sum(1 for n in near if n in seen), "near_top_share": near_top / later if later else None,
            "spent": spent}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", metavar="DIR")
    ap.add_argument("--space", required=True, help="`steer space SPEC --list` of the tuned spec")
    ap.add_argument("--after", type=int, default=10, help="tests left out of the share near the three fastest")
    args = ap.parse_args()
    _, configs = read_space(args.space)
    hoods = Neighbourhoods(configs)
    # Each store is read once: folders of successive calls to one machine may each hold
    # copies of the earlier calls' stores.
    stores, digests = [], set()
    for d in args.dirs:
        for s in sorted(glob.glob(os.path.join(d, "*.db"))):
            with open(s, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            if digest not in digests:
                digests.add(digest)
                stores.append(s)
    if not stores:
        sys.exit("neighbourhood_coverage.py: no results stores (*.db) in " + ", ".join(args.dirs))
    tests_of = {}
    for store in stores:
        tests_of[store] = read_tests(store)
        if any(c >= len(configs) for c, _ in tests_of[store]):
            sys.exit(f"neighbourhood_coverage.py: {store} holds a configuration index beyond the "
                     f"{len(configs)} of {args.space}: another space's store")
    # What every tuning read measured of a configuration (the median of its runtimes): a
    # fastest whose neighbours all tunings together measured, none faster, is a local minimum.
    runtimes = {}
    for tests in tests_of.values():
        for c, ms in tests:
            if ms is not None:
                runtimes.setdefault(c, []).append(ms)
    measured = {c: statistics.median(v) for c, v in runtimes.items()}
    by_searcher = {}
    print("| store | tests | fastest (index) | ms | its neighbours tested | tests near the three fastest "
          "| its neighbours any tuning measured | faster among them (fastest) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for store in stores:
        tests = tests_of[store]
        row = coverage(tests, hoods, args.after)
        name = os.path.basename(store)[:-3]
        where = os.path.basename(os.path.dirname(os.path.abspath(store)))
        if row is None:
            print(f"| {where}/{name} | {len(tests)} | - | - | - | - | - | - |")
            continue
        share = "-" if row["near_top_share"] is None else f"{100 * row['near_top_share']:.0f} %"
        near = [(measured[n], n) for n in hoods.of(row["best"]) if n in measured]
        faster = sorted(m for m in near if m[0] < measured[row["best"]])
        faster_text = f"{len(faster)} ({faster[0][1]}, {faster[0][0]:.3f} ms)" if faster else "0"
        print(f"| {where}/{name} | {row['tests']} | {row['best']} | {row['best_ms']:.3f} | "
              f"{row['tested']} of {row['neighbours']} | {share} | {len(near)} of {row['neighbours']} | {faster_text} |")
        m = re.match(r"(.+)_\d+$", name)
        by_searcher.setdefault(m.group(1) if m else name, []).append(row)
    print()
    print("| searcher | tunings | fastest's neighbours all tested | share of them tested (median) "
          "| tests near the three fastest (median) | tests with one of the three fastest spent (all tunings) |")
    print("|---|---:|---:|---:|---:|---:|")
    for searcher, rows in sorted(by_searcher.items()):
        complete = sum(1 for r in rows if r["tested"] == r["neighbours"])
        tested = statistics.median(r["tested"] / r["neighbours"] if r["neighbours"] else 1.0 for r in rows)
        shares = [r["near_top_share"] for r in rows if r["near_top_share"] is not None]
        near = f"{100 * statistics.median(shares):.0f} %" if shares else "-"
        spent = sum(r["spent"] for r in rows)
        print(f"| {searcher} | {len(rows)} | {complete} | {100 * tested:.0f} % | {near} | {spent} |")


if __name__ == "__main__":
    main()
