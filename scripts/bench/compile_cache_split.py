#!/usr/bin/env python3
"""Splits the compile times of tunings made one after another on one machine into first
compiles (no earlier tuning had tested the configuration) and compiles of configurations an
earlier tuning had compiled. NVRTC 12.9 and later keep what they compile in the CUDA driver's
compute cache, shared by the machine's processes (docs/simulate.md, "NVRTC's compile cache"):
where tunings share it, the second group are look-ups, a fraction of the first; where each
tuning has a cache of its own (scripts/bench/live_tuning.sh), the two groups look alike.

  python3 scripts/bench/compile_cache_split.py STORE.db [STORE.db ...]

Each store's tests are ordered by their time stamps (column `timestamp`, whole seconds) and
matched by configuration (`config_key`) and problem size; the stores must come from one
machine. Prints the count, median and 10th and 90th percentiles of each group, in ms.
"""
import argparse
import sqlite3
import statistics


def tests(store):
    with sqlite3.connect(store) as db:
        return db.execute(
            "SELECT timestamp, problem_size, config_key, compile_ms FROM tests WHERE compile_ms IS NOT NULL"
        ).fetchall()


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
    args = ap.parse_args()
    rows = sorted(row for store in args.stores for row in tests(store))
    seen, first, again = set(), [], []
    for _, size, key, ms in rows:
        (again if (size, key) in seen else first).append(ms)
        seen.add((size, key))
    print(f"first compile on the machine: {describe(first)}")
    print(f"compiled before on the machine: {describe(again)}")


if __name__ == "__main__":
    main()
