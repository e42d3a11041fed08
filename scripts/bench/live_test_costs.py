#!/usr/bin/env python3
"""Where the time between two tests of a live tuning goes, from the tunings written by
scripts/bench/live_tuning.sh (KERNEL_SEARCHER_SEED.log and .db): per searcher and range of
tests, the mean interval between one test's end and the next one's (from the log's time
stamps), and of it what the store says went into the test's compile, its timed launches
(repetitions x median) and its validation. The rest is everything else: the searcher's
choice, the warm-up launch, restoring the buffers before each launch, the launches' gaps,
storing the result. A compile made ahead while an earlier test ran (random search) is hidden
behind it, so there the rest comes out negative.

  python3 scripts/bench/live_test_costs.py DIR [--seeds 2,3,4,5] [--bucket 100]
"""
import argparse
import glob
import os
import re
import sqlite3
import sys

LINE = re.compile(r"^(\d+\.\d+) test (\d+)/")
NAME = re.compile(r"^(.+)_(\d+)\.log$")


def intervals(log):
    """{test number from 1: seconds since launch when it ended}."""
    ends = {}
    with open(log) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                ends[int(m.group(2))] = float(m.group(1))
    return ends


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir")
    parser.add_argument("--seeds", default="", help="comma-separated seeds to include (default: all)")
    parser.add_argument("--bucket", type=int, default=100, help="tests per range (default 100)")
    args = parser.parse_args()
    seeds = {int(s) for s in args.seeds.split(",") if s}

    sums = {}  # (kernel_searcher, bucket) -> [n, interval, compile, launches, validation]
    for log in sorted(glob.glob(os.path.join(args.dir, "*.log"))):
        m = NAME.match(os.path.basename(log))
        store = log[:-4] + ".db"
        if not m or not os.path.exists(store) or (seeds and int(m.group(2)) not in seeds):
            continue
        ends = intervals(log)
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
            rows = db.execute("select sequence, compile_ms, validation_ms, repetitions * median_ms from tests "
                              "order by sequence").fetchall()
        for sequence, compile_ms, validation_ms, launches_ms in rows:
            test = sequence + 1
            if test < 2 or test not in ends or test - 1 not in ends:
                continue
            key = (m.group(1), sequence // args.bucket)
            entry = sums.setdefault(key, [0, 0.0, 0.0, 0.0, 0.0])
            entry[0] += 1
            entry[1] += 1000 * (ends[test] - ends[test - 1])
            entry[2] += compile_ms or 0
            entry[3] += launches_ms or 0
            entry[4] += validation_ms or 0
    if not sums:
        sys.exit(f"no tunings with a log and a store in {args.dir}")

    print("| tuning | tests | interval ms | compile ms | timed launches ms | validation ms | rest ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for (name, bucket), (n, interval, compile_ms, launches, validation) in sorted(sums.items()):
        first = bucket * args.bucket + 1
        mean = [v / n for v in (interval, compile_ms, launches, validation)]
        rest = mean[0] - mean[1] - mean[2] - mean[3]
        print(f"| {name} | {first}–{first + args.bucket - 1} | {mean[0]:.1f} | {mean[1]:.1f} | {mean[2]:.1f} | "
              f"{mean[3]:.1f} | {rest:.1f} |")


if __name__ == "__main__":
    main()
