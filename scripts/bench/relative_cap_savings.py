#!/usr/bin/env python3
"""What `steer tune --max-test-relative F` would have saved in live tunings recorded without it
(docs/performance.md, "Slow tests time fewer launches").

Each archive of data/h200/runs/ holds the stores of live tunings, one per kernel, searcher and
seed (KERNEL_SEARCHER_SEED.db), every test timed REPETITIONS times. For each tuning it replays
the cap test by test, in the order the tests ran: once a valid test has run, a test stops
timing after the launch that brings its timed kernel time to F x the fastest valid median so
far x REPETITIONS (at least one launch). It prints, per archive, kernel and searcher, the mean
over the seeds of the tests, the timed kernel time as recorded, the time under the cap and
the difference. Only launch time changes: compiles, the warm-up launch and validation stay.

  python3 scripts/bench/relative_cap_savings.py [--factor 2] [--repetitions 10] ARCHIVE.tar.xz ...
"""
import argparse
import collections
import os
import re
import sqlite3
import struct
import tarfile
import tempfile

STORE = re.compile(r"([A-Za-z0-9]+?)_(guided|default|random|basin-hopping|profile-based|genetic)_(\d+)\.db$")


def samples(blob):
    return struct.unpack("<%dd" % (len(blob) // 8), blob) if blob else ()


def tuning_times(path, factor, repetitions):
    """(tests, timed s, timed under the cap s) of the newest tuning of a store."""
    con = sqlite3.connect(path)
    tuning = con.execute("select max(id) from tunings").fetchone()[0]
    fastest, timed, capped, tests = 0.0, 0.0, 0.0, 0
    for status, median, blob in con.execute(
            "select status, median_ms, samples_ms from tests where tuning_id = ? order by sequence", (tuning,)):
        launches = samples(blob)
        tests += 1
        timed += sum(launches)
        if launches and fastest > 0:
            cap, spent = factor * fastest * repetitions, 0.0
            for launch in launches:
                spent += launch
                if spent >= cap:
                    break
            capped += spent
        else:
            capped += sum(launches)
        if status == "ok" and median and (fastest == 0 or median < fastest):
            fastest = median
    con.close()
    return tests, timed / 1e3, capped / 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("archives", nargs="+")
    ap.add_argument("--factor", type=float, default=2.0)
    ap.add_argument("--repetitions", type=int, default=10, help="the launches each test was asked for")
    args = ap.parse_args()
    print("| archive | kernel | searcher | seeds | tests | timed launches (s) | under the cap (s) | saved (s) |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for archive in args.archives:
        rows = collections.defaultdict(list)
        with tempfile.TemporaryDirectory() as scratch:
            with tarfile.open(archive) as tar:
                tar.extractall(scratch, filter="data")
            for folder, _, files in os.walk(scratch):
                for name in sorted(files):
                    match = STORE.match(name)
                    if match:
                        rows[(match.group(1), match.group(2))].append(
                            tuning_times(os.path.join(folder, name), args.factor, args.repetitions))
        label = os.path.basename(archive).split(".")[0]
        for (kernel, searcher), runs in sorted(rows.items()):
            n = len(runs)
            tests, timed, capped = (sum(r[i] for r in runs) / n for i in range(3))
            print(f"| {label} | {kernel} | {searcher} | {n} | {tests:.0f} | {timed:.2f} | {capped:.2f} | {timed - capped:.2f} |")


if __name__ == "__main__":
    main()
