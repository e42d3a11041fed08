#!/usr/bin/env python3
"""Splits the compile times of tunings made one after another on one machine into first
compiles (no earlier tuning had tested the configuration) and compiles of configurations an
earlier tuning had compiled. NVRTC 12.9 and later keep what they compile in the CUDA driver's
compute cache, shared by the machine's processes (docs/simulate.md, "NVRTC's compile cache"):
where tunings share it, the second group are look-ups, a fraction of the first; where each
tuning has a cache of its own (scripts/bench/live_tuning.sh), the two groups look alike.

  python3 scripts/bench/compile_cache_split.py STORE.db [STORE.db ...] [--first N] [--recording R]

--first N: also, per tuning (a store named KERNEL_SEARCHER_SEED.db, as
scripts/bench/live_tuning.sh writes them), how many of its first N tests were of
configurations an earlier tuning had compiled: one line per searcher, seeds in order.

--recording R: also, per group, Spearman's rank correlation between its valid tests' compile
times and those the recording R (a store, .db or .db.gz, of the same kernel) holds for the
same configurations: whether a configuration's recorded compile time says what it costs to
compile again, as a full compile and as a look-up (scripts/bench/compile_time_agreement.py
compares whole stores).

Each store's tests are ordered by their time stamps (column `timestamp`, whole seconds) and
matched by configuration (`config_key`) and problem size; the stores must come from one
machine. Prints the count, median and 10th and 90th percentiles of each group, in ms.
"""
import argparse
import collections
import os
import re
import sqlite3
import statistics

from compile_time_agreement import compile_times, spearman


def tests(store):
    """(timestamp, problem size, configuration, compile ms, test's sequence, valid, store) of each test."""
    with sqlite3.connect(store) as db:
        rows = db.execute(
            "SELECT timestamp, problem_size, config_key, compile_ms, sequence, status = 'ok' FROM tests"
            " WHERE compile_ms IS NOT NULL"
        ).fetchall()
    return [row + (store,) for row in rows]


def searcher_and_seed(store):
    match = re.match(r"[^_]+_(.+)_(\d+)\.db$", os.path.basename(store))
    if not match:
        raise SystemExit(f"compile_cache_split.py: --first needs stores named KERNEL_SEARCHER_SEED.db, not {store}")
    return match.group(1), int(match.group(2))


def describe(values):
    if not values:
        return "none"
    values = sorted(values)
    n = len(values)
    return (f"{n} compiles, median {statistics.median(values):.1f}, "
            f"p10 {values[n // 10]:.1f}, p90 {values[n * 9 // 10]:.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stores", nargs="+")
    ap.add_argument("--first", type=int, metavar="N")
    ap.add_argument("--recording", metavar="R")
    args = ap.parse_args()
    recorded = compile_times(args.recording) if args.recording else None
    rows = sorted(row for store in args.stores for row in tests(store))
    seen, first, again = set(), [], []
    pairs = {False: ([], []), True: ([], [])}  # compiled before -> (recorded, this compile) of valid tests
    looked_up = collections.Counter()  # store -> compiled before, among its first N tests
    for _, size, key, ms, sequence, valid, store in rows:
        before = (size, key) in seen
        (again if before else first).append(ms)
        if recorded is not None and valid and key in recorded:
            pairs[before][0].append(recorded[key])
            pairs[before][1].append(ms)
        if args.first is not None and sequence < args.first and before:
            looked_up[store] += 1
        seen.add((size, key))
    print(f"first compile on the machine: {describe(first)}")
    print(f"compiled before on the machine: {describe(again)}")
    if recorded is not None:
        for before, name in ((False, "first compiles"), (True, "compiled before")):
            recorded_ms, live_ms = pairs[before]
            keys = range(len(live_ms))  # spearman() pairs two dicts by key
            rho, n = spearman(dict(zip(keys, recorded_ms)), dict(zip(keys, live_ms)))
            shown = "too few" if rho is None else f"{rho:+.3f}"
            print(f"against {os.path.basename(args.recording)}, {name}: rho {shown} over {n} compiles")
    if args.first is not None:
        print(f"compiled before, of each tuning's first {args.first} tests (seeds in order):")
        by_searcher = collections.defaultdict(list)
        for store in args.stores:
            searcher, seed = searcher_and_seed(store)
            by_searcher[searcher].append((seed, looked_up[store]))
        for searcher, counts in sorted(by_searcher.items()):
            print(f"  {searcher}: " + ", ".join(str(n) for _, n in sorted(counts)))


if __name__ == "__main__":
    main()
