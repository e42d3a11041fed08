#!/usr/bin/env python3
"""Whether a recording's compile times say what the same configurations cost to compile later.

A replay charges each test its configuration's recorded compile time (`steer simulate
--compile-times recorded`) or the mean of the recording's configurations with its outcome
(`--compile-times mean`). The first is right where a configuration's compile time is a
property of the configuration; this script measures whether it is, on Steer stores of the
same kernel: the recording, and later tunings (stores, or .tar.xz or .tar.gz archives of them).

    python3 scripts/bench/compile_time_agreement.py data/h200/gemm_h200.db.gz \\
        data/h200/runs/live_gemm_h200_spread.tar.xz data/h200/runs/live_gemm_h200_same_day.tar.xz

It prints, over the configurations each pair of stores shares (valid tests with a compile
time), Spearman's rank correlation of their compile times:
  * the recording against every later store, and against the median over the later stores
    of each configuration's compile time (pooled);
  * every pair of later stores that share at least --min-shared configurations.
A correlation near 1 says a configuration that compiled long once compiles long again; near
0 says that compile times vary by when they were measured, not by configuration.
"""
import argparse
import gzip
import itertools
import os
import sqlite3
import statistics
import sys
import tarfile
import tempfile


def compile_times(path):
    """{config_key: compile_ms} of the valid tests of a store (.db or .db.gz)."""
    if path.endswith(".gz"):
        fd, plain = tempfile.mkstemp(suffix=".db")
        with os.fdopen(fd, "wb") as out, gzip.open(path, "rb") as data:
            out.write(data.read())
        path = plain
    try:
        db = sqlite3.connect(path)
        rows = db.execute("select config_key, compile_ms from tests where status = 'ok' and compile_ms > 0").fetchall()
        db.close()
    except sqlite3.Error as e:
        sys.exit(f"{path}: not a Steer store ({e})")
    return dict(rows)


def stores_in(path, work):
    """The store files a path names: itself, or the .db files of an archive or a folder."""
    suffix = next((s for s in (".tar.xz", ".tar.gz") if path.endswith(s)), None)
    if suffix:
        target = os.path.join(work, os.path.basename(path)[: -len(suffix)])
        with tarfile.open(path) as archive:
            try:
                archive.extractall(target, filter="data")
            except TypeError:  # Python without extraction filters (before 3.12 and its backports)
                archive.extractall(target)
        path = target
    if os.path.isdir(path):
        return sorted(os.path.join(root, f) for root, _, files in os.walk(path) for f in files if f.endswith(".db"))
    return [path]


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):  # ties share their mean rank
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2
        i = j + 1
    return out


def spearman(a, b):
    """Spearman's rho over the keys both hold, and how many those are."""
    keys = [k for k in a if k in b]
    if len(keys) < 3:
        return None, len(keys)
    return statistics.correlation(ranks([a[k] for k in keys]), ranks([b[k] for k in keys])), len(keys)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recording", help="the recording's store (.db or .db.gz)")
    ap.add_argument("later", nargs="+", help="later stores of the same kernel: .db, .db.gz, folders or .tar.xz or .tar.gz archives")
    ap.add_argument("--min-shared", type=int, default=30, help="configurations a pair of later stores must share")
    args = ap.parse_args()
    recorded = compile_times(args.recording)
    with tempfile.TemporaryDirectory() as work:
        later = {}
        for path in args.later:
            for store in stores_in(path, work):
                times = compile_times(store)
                if times:
                    later[os.path.relpath(store, work) if store.startswith(work) else store] = times
    if not later:
        sys.exit("no later store with compile times")
    print(f"{args.recording}: {len(recorded)} valid configurations, median compile "
          f"{statistics.median(recorded.values()):.1f} ms")
    print("\nthe recording against each later store:")
    rhos = []
    for name, times in later.items():
        rho, n = spearman(recorded, times)
        if rho is not None:
            rhos.append(rho)
            print(f"  {name}: rho {rho:+.3f} over {n} configurations (its median compile "
                  f"{statistics.median(times.values()):.1f} ms)")
    pooled = {}
    for times in later.values():
        for key, ms in times.items():
            pooled.setdefault(key, []).append(ms)
    rho, n = spearman(recorded, {k: statistics.median(v) for k, v in pooled.items()})
    print(f"  median over stores: {statistics.median(rhos):+.3f}; against each configuration's median "
          f"over the later stores: rho {rho:+.3f} over {n} configurations")
    pairs = []
    for (a, ta), (b, tb) in itertools.combinations(later.items(), 2):
        rho, n = spearman(ta, tb)
        if rho is not None and n >= args.min_shared:
            pairs.append(rho)
    if pairs:
        print(f"\npairs of later stores sharing at least {args.min_shared} configurations: {len(pairs)}, "
              f"rho median {statistics.median(pairs):+.3f}, from {min(pairs):+.3f} to {max(pairs):+.3f}")


if __name__ == "__main__":
    main()
