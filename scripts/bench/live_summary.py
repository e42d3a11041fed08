#!/usr/bin/env python3
"""Summarises live tunings written by scripts/bench/live_tuning.sh: per searcher, the median
over seeds of the best runtime so far at fixed wall-clock times since launch (a seed without a
valid test yet counts as slower than any), how many seeds
came within a factor of the space's best, and when. Prints a markdown table; --csv writes the
median curves, --plot draws them (matplotlib).

  python3 scripts/bench/live_summary.py DIR [DIR...] --kernel gemm --best-ms 3.587 [--within 1.02]
      [--times 5,10,20,30,45,60] [--csv curves.csv] [--plot curves.png]
      [--energy | --weighted ALPHA --time-ms T --energy-j E] [--best-config INDEX[,INDEX...]]
      [--paired A,B] [--split]

Several folders pool their tunings: a seed one searcher ran in two folders counts as two
tunings (named FOLDER:SEED), a tuning whose log two folders hold copies of is read once, and
--paired pairs the seeds of one folder.

--energy: tunings for energy (TUNE_ARGS="--objective energy"); the least energy per launch so
far, read from each tuning's store, and --best-ms is the space's least energy in J.

--weighted ALPHA --time-ms T --energy-j E: tunings for `weighted:ALPHA`; per test
ALPHA·t/T + (1−ALPHA)·e/E from each tuning's store, T and E the recording's least runtime and
energy (fixed, so that every tuning is scored alike), and --best-ms the recording's least of
that mix.

--best-config INDEX: also a table of how many seeds had tested that configuration (the
space's best, by its index in the space) by each time, and at which test, read from each
tuning's store. Runtimes measured live scatter by a few tenths of a per cent, so near the best
a median of runtimes tells searchers apart by noise; having tested the best configuration does
not. Where two or more configurations are level within that scatter, name them all
(INDEX,INDEX): a seed counts from the first of them it tested.

--paired A,B: also, seed by seed, the best so far of searchers A and B at the last of --times
(the same seed of two searchers starts alike and parts where one choice differs, so a median
over seeds can move by the luck of a path): how many seeds each ended lower in, and the mean of
both over the seeds they share. A seed without a valid test counts as slower than any and
stays out of the means.

--split: also, per searcher, the mean over its seeds of the wall-time split each tuning's
`steer tune --json` summary reports (setup, waiting for compiles, running, validating,
framework, the compiler's CPU time, and the guesses compiled ahead and then tested), as
docs/performance.md shows it.
"""
import argparse
import glob
import hashlib
import json
import os
import re
import statistics
import sys

def summary_of(path):
    """steer tune --json's summary (KERNEL_SEARCHER_SEED.json), or None where it cannot be read."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def shortened_tests(path):
    """The tests a timing cap shortened, from the tuning's summary, or None where the summary
    lacks it (a build before the count, or a run cut short)."""
    summary = summary_of(path)
    return summary.get("shortened") if summary is not None else None


LINE = re.compile(r"^(\d+\.\d+) test (\d+)\S* (\S+) .*\| best (?:([\d.]+) ms|-)")


def read_log(path):
    """[(seconds since launch, best so far in ms or None)] per test."""
    points = []
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                points.append((float(m.group(1)), float(m.group(4)) if m.group(4) else None))
    return points


def read_energy(log, store, value=lambda ms, joules: joules):
    """[(seconds since launch, least value so far or None)] per test: the times from the log,
    each test's value (by default its energy per launch in J) from its runtime and energy in the
    tuning's store (in the order tested)."""
    import sqlite3
    times = [when for when, _ in read_log(log)]
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT status, median_ms, energy_joules_per_launch FROM tests ORDER BY sequence").fetchall()
    points, best = [], None
    for when, (status, ms, joules) in zip(times, rows):
        v = value(ms, joules) if status == "ok" and ms is not None and joules is not None else None
        if v is not None and (best is None or v < best):
            best = v
        points.append((when, best))
    return points


def found_at(points, store, configs):
    """(seconds since launch, test number from 1) when the tuning first tested any of
    `configs`, or None; `points` are the tuning's per-test (seconds, ...) from its log."""
    import sqlite3
    times = [when for when, _ in points]
    with sqlite3.connect(store) as db:
        sequences = [row[0] for row in db.execute("SELECT sequence FROM tests ORDER BY sequence")]
        marks = ",".join("?" * len(configs))
        first = db.execute(f"SELECT MIN(sequence) FROM tests WHERE config_index IN ({marks})",
                           list(configs)).fetchone()[0]
    if first is None:
        return None
    position = sequences.index(first)  # the log has a line per test, in the store's order
    return (times[position], position + 1) if position < len(times) else None


def best_at(points, t):
    best = None
    for when, b in points:
        if when > t:
            break
        if b is not None:
            best = b
    return best


def median_best(seeds, t):
    """The median over seeds of the best so far at t, a seed without a valid test yet counting as
    slower than any; None while that is the median."""
    values = [best_at(p, t) for p in seeds.values()]
    m = statistics.median(v if v is not None else float("inf") for v in values)
    return None if m == float("inf") else m


class Seed(str):
    """A tuning's seed as the tables name it: SEED, or FOLDER:SEED where several folders are
    read (the same seed in two folders is two tunings); `order` sorts by folder, then seed."""

    def __new__(cls, folder, position, seed, several):
        self = super().__new__(cls, f"{os.path.normpath(folder)}:{seed}" if several else str(seed))
        self.order = (position, seed)
        return self


def paired_table(runs, a, b, t):
    """Lines of markdown: per seed both ran, the best so far of searchers a and b at t, then how
    many seeds each ended lower in and their means over the seeds where both had a valid test."""
    shared = sorted(set(runs[a]) & set(runs[b]), key=lambda seed: seed.order)
    ends = [(seed, best_at(runs[a][seed], t), best_at(runs[b][seed], t)) for seed in shared]
    slower_than_any = lambda v: v if v is not None else float("inf")  # no valid test yet
    lines = [f"Seed by seed, the best so far at {t:g} s:", "",
             f"| seed | {a} | {b} | {b} / {a} |", "|---:|---:|---:|---:|"]
    for seed, x, y in ends:
        ratio = f"{y / x:.4f}" if x is not None and y is not None else "-"
        lines.append(f"| {seed} | " + " | ".join(f"{v:.4f}" if v is not None else "-" for v in (x, y)) + f" | {ratio} |")
    lower_a = sum(1 for _, x, y in ends if slower_than_any(x) < slower_than_any(y))
    lower_b = sum(1 for _, x, y in ends if slower_than_any(y) < slower_than_any(x))
    both = [(x, y) for _, x, y in ends if x is not None and y is not None]
    lines.append("")
    summary = (f"{a} ended lower in {lower_a} of {len(ends)} seeds, {b} in {lower_b}, level in "
               f"{len(ends) - lower_a - lower_b}")
    if both:
        summary += (f"; mean over the {len(both)} seeds both had a valid test: "
                    f"{statistics.mean(x for x, _ in both):.4f} against {statistics.mean(y for _, y in both):.4f}")
    lines.append(summary + ".")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", metavar="DIR")
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--best-ms", type=float, required=True,
                    help="the space's best runtime (exhaustive recording); with --energy its least energy "
                         "in J, with --weighted its least of the mix")
    ap.add_argument("--energy", action="store_true",
                    help="energy per launch from each tuning's store (KERNEL_SEARCHER_SEED.db) instead of runtimes")
    ap.add_argument("--weighted", type=float, metavar="ALPHA",
                    help="the mix ALPHA·t/T + (1−ALPHA)·e/E (needs --time-ms and --energy-j)")
    ap.add_argument("--time-ms", type=float, help="with --weighted: the recording's least runtime T")
    ap.add_argument("--energy-j", type=float, help="with --weighted: the recording's least energy E")
    ap.add_argument("--within", type=float, default=1.02)
    ap.add_argument("--times", default="5,10,20,30,45,60")
    ap.add_argument("--best-config", type=lambda v: [int(i) for i in v.split(",")], metavar="INDEX[,INDEX...]",
                    help="also count, per time, the seeds that had tested this configuration (or any of these)")
    ap.add_argument("--paired", type=lambda v: v.split(","), metavar="A,B",
                    help="also the best at the last time seed by seed for searchers A and B")
    ap.add_argument("--split", action="store_true", help="also the wall-time split of each searcher's tunings")
    ap.add_argument("--csv")
    ap.add_argument("--plot")
    args = ap.parse_args()
    if args.plot:
        try:  # checked first, so that a missing matplotlib does not end the run after the tables
            import matplotlib  # noqa: F401
        except ImportError as error:
            sys.exit(f"live_summary.py: --plot needs matplotlib ({error}); run scripts/setup, which installs it for /usr/bin/python3")
    if args.weighted is not None and (args.time_ms is None or args.energy_j is None):
        ap.error("--weighted needs --time-ms and --energy-j")
    times = [float(t) for t in args.times.split(",")]
    runs, stores, shortened = {}, {}, {}
    several = len(args.dirs) > 1
    read = set()  # the logs read, by name and content: a copy in a second folder is the same tuning
    paths = [(position, folder, path) for position, folder in enumerate(args.dirs)
             for path in sorted(glob.glob(os.path.join(folder, f"{args.kernel}_*_*.log")))]
    for position, folder, path in paths:
        with open(path, "rb") as f:
            digest = (os.path.basename(path), hashlib.sha256(f.read()).hexdigest())
        if digest in read:
            continue
        read.add(digest)
        searcher, number = os.path.basename(path)[len(args.kernel) + 1:-4].rsplit("_", 1)
        seed = Seed(folder, position, int(number), several)
        if args.weighted is not None:
            a = args.weighted
            points = read_energy(path, path[:-4] + ".db",
                                 lambda ms, j: a * ms / args.time_ms + (1 - a) * j / args.energy_j)
        elif args.energy:
            points = read_energy(path, path[:-4] + ".db")
        else:
            points = read_log(path)
        runs.setdefault(searcher, {})[seed] = points
        stores.setdefault(searcher, {})[seed] = path[:-4] + ".db"
        shortened.setdefault(searcher, {})[seed] = shortened_tests(path[:-4] + ".json")
    if not runs:
        sys.exit(f"live_summary.py: no {args.kernel}_*_*.log in {', '.join(args.dirs)}")
    if args.paired is not None:
        if len(args.paired) != 2:
            ap.error(f"--paired expects two searchers A,B, got '{','.join(args.paired)}'")
        for name in args.paired:
            if name not in runs:
                ap.error(f"--paired: no tunings of '{name}' in {', '.join(args.dirs)} (there are: {', '.join(sorted(runs))})")
    target = args.within * args.best_ms
    # Tests a timing cap (steer tune --max-test-relative) shortened: shown where the runs say.
    counted = any(n is not None for seeds in shortened.values() for n in seeds.values())
    header = ["searcher", "seeds", "tests (median)"] + (["shortened (median)"] if counted else []) + [
        f"best at {t:g} s" for t in times] + [
        f"within {args.within:g}x by {times[-1]:g} s", f"first within {args.within:g}x (median)"]
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    grid = [0.5 * i for i in range(1, int(2 * times[-1]) + 1)]
    curves = {}
    for searcher, seeds in runs.items():
        row = [searcher, str(len(seeds)), f"{statistics.median(len(p) for p in seeds.values()):g}"]
        if counted:
            known = [n for n in shortened[searcher].values() if n is not None]
            row.append(f"{statistics.median(known):g}" if known else "-")
        for t in times:
            m = median_best(seeds, t)
            row.append(f"{m:.3f}" if m is not None else "-")
        firsts = []
        for p in seeds.values():
            first = next((when for when, b in p if b is not None and b <= target and when <= times[-1]), None)
            firsts.append(first)
        reached = [f for f in firsts if f is not None]
        row.append(f"{len(reached)} of {len(seeds)}")
        row.append(f"{statistics.median(f if f is not None else float('inf') for f in firsts):.1f} s"
                   if len(reached) * 2 > len(seeds) else "-")
        print("| " + " | ".join(row) + " |")
        curves[searcher] = []
        for t in grid:
            curves[searcher].append(median_best(seeds, t))
    if args.best_config is not None:
        print()
        named = " or ".join(str(i) for i in args.best_config)
        print(f"Seeds that had tested configuration {named} by each time:")
        print()
        print("| searcher | " + " | ".join(f"{t:g} s" for t in times) + " | when (s, per seed) | test (per seed) |")
        print("|---|" + "---:|" * len(times) + "---|---|")
        for searcher, seeds in runs.items():
            in_order = sorted(seeds.items(), key=lambda item: item[0].order)
            found = [found_at(points, stores[searcher][seed], args.best_config) for seed, points in in_order]
            counts = [str(sum(1 for f in found if f is not None and f[0] <= t)) for t in times]
            when = ", ".join(f"{f[0]:.1f}" if f is not None else "never" for f in found)
            tests = ", ".join(str(f[1]) if f is not None else "–" for f in found)
            print(f"| {searcher} | " + " | ".join(counts) + f" | {when} | {tests} |")
    if args.paired is not None:
        print()
        print("\n".join(paired_table(runs, args.paired[0], args.paired[1], times[-1])))
    if args.split:
        print()
        print("Where the time went, mean over the seeds of each `steer tune --json` summary (s):")
        print()
        fields = ["tests", "setup_s", "compile_wait_s", "run_s", "validation_s", "overhead_s", "compile_cpu_s",
                  "guessed", "guesses_tested"]
        print("| searcher | seeds | tests | setup | waiting for compiles | running (launches, read-back) | validating"
              " | framework | compiler time | guesses compiled | guesses tested |")
        print("|---|" + "---:|" * (len(fields) + 1))
        for searcher, seeds in runs.items():
            summaries = [summary_of(stores[searcher][seed][:-3] + ".json") for seed in seeds]
            summaries = [d for d in summaries if d is not None]
            if not summaries:
                print(f"| {searcher} | 0 |" + " - |" * len(fields))
                continue
            means = [statistics.mean(float(d.get(k, 0)) for d in summaries) for k in fields]
            cells = ([f"{means[0]:.0f}"] + [f"{m:.1f}" for m in means[1:5]] + [f"{means[5]:.2f}", f"{means[6]:.1f}"]
                     + [f"{m:.0f}" for m in means[7:]])
            print(f"| {searcher} | {len(summaries)} | " + " | ".join(cells) + " |")
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("seconds," + ",".join(curves) + "\n")
            for i, t in enumerate(grid):
                f.write(f"{t:g}," + ",".join("" if c[i] is None else f"{c[i]:.5f}" for c in curves.values()) + "\n")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for searcher, c in curves.items():
            xs = [t for t, v in zip(grid, c) if v is not None]
            ys = [v for v in c if v is not None]
            ax.plot(xs, ys, label=searcher)
        ax.axhline(args.best_ms, color="grey", lw=0.8, ls=":")
        ax.axhline(target, color="grey", lw=0.8, ls="--", label=f"{args.within:g}x the best")
        ax.set_xlabel("seconds since launch")
        ax.set_ylabel(f"median least weighted:{args.weighted:g} so far" if args.weighted is not None
                      else "median least energy so far (J)" if args.energy else "median best runtime so far (ms)")
        ax.set_title(f"{args.kernel}: live tuning, median over seeds")
        lows = [v for c in curves.values() for v in c if v is not None]
        # live tunings can find better than the recording measured: keep those in view
        ax.set_ylim(min(min(lows), args.best_ms) * 0.98, min(max(lows), args.best_ms * 2))
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)


if __name__ == "__main__":
    main()
