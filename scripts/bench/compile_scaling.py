#!/usr/bin/env python3
"""The table of scripts/bench/compile_scaling.sh: per kernel and pool width, the median
compile time of one configuration, the compiler time per test and the wall time per test
after setup (what the loop's throughput is when it waits on the compiler).

    python3 scripts/bench/compile_scaling.py OUT
"""
import json
import pathlib
import sqlite3
import statistics
import sys


def order(path):
    """Kernel, then inline before the pool widths in ascending order."""
    kernel, threads = path.stem.rsplit("_", 1)
    return kernel, -1 if threads == "inline" else int(threads)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = pathlib.Path(sys.argv[1])
    print("| kernel | compiles | median compile (ms) | compiler time per test (ms) | wall time per test (ms) |")
    print("|---|---|---:|---:|---:|")
    for summary_file in sorted(out.glob("*_*.json"), key=order):
        kernel, threads = summary_file.stem.rsplit("_", 1)
        summary = json.loads(summary_file.read_text())
        with sqlite3.connect(summary_file.with_suffix(".db")) as store:
            compiles = [ms for (ms,) in store.execute("SELECT compile_ms FROM tests WHERE compile_ms > 0")]
        tests = summary["tests"]
        mode = "inline" if threads == "inline" else f"{threads} thread{'s' if threads != '1' else ''} ahead"
        print(f"| {kernel} | {mode} | {statistics.median(compiles):.1f} | "
              f"{1e3 * summary['compile_cpu_s'] / tests:.1f} | "
              f"{1e3 * (summary['wall_s'] - summary['setup_s']) / tests:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
