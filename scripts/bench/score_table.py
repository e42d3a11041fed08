#!/usr/bin/env python3
"""The performance score P as Markdown tables, from `steer simulate --score --json` over several spaces.

Reads the JSON that `steer simulate --data A,B,... --score --json` prints (with the runs of other
tools added by --score-runs, e.g. Kernel Tuner's from scripts/bench/kerneltuner_strategies.py) and
prints two tables: the aggregate per strategy (mean and standard deviation over spaces, time- and
feval-based, best first by time), and P per space and strategy ("time / tests").

    build/steer simulate --data "$(ls DIR/*.kt.json.gz | paste -sd,)" --searcher default,random \\
        --runs 100 --score --score-runs RUNS.json ... --json > score.json
    python3 scripts/bench/score_table.py score.json
"""
import argparse
import json
import os
import sys


def cell(value):
    return "–" if value is None else f"{value:.3f}"


def space_name(data):
    name = os.path.basename(data)
    for suffix in (".gz", ".json", ".db", ".kt", ".ktt", ".t4"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("simulation", help="the JSON of steer simulate --score --json over several --data")
    args = parser.parse_args()
    with open(args.simulation) as f:
        document = json.load(f)
    if "spaces" not in document or "aggregate" not in document:
        sys.exit(f"{args.simulation}: not steer simulate --score --json over several --data")

    aggregate = sorted(document["aggregate"], key=lambda a: -(a["score_time"] or -1e9))
    print(f"Mean over {len(document['spaces'])} spaces (standard deviation over spaces in parentheses):\n")
    print("| strategy | P time | P tests |")
    print("|---|---:|---:|")
    for a in aggregate:
        print(f"| {a['name']} | {cell(a['score_time'])} ({cell(a['score_time_spread'])}) | "
              f"{cell(a['score_fevals'])} ({cell(a['score_fevals_spread'])}) |")

    names = [a["name"] for a in aggregate]
    spaces = [space_name(s["data"]) for s in document["spaces"]]
    print("\nP per space, time / tests:\n")
    print("| strategy | " + " | ".join(spaces) + " |")
    print("|---|" + "---:|" * len(spaces))
    by_space = [{e["name"]: e for e in s["searchers"]} for s in document["spaces"]]
    for name in names:
        cells = []
        for searchers in by_space:
            e = searchers.get(name)
            cells.append("" if e is None else f"{cell(e['score_time'])} / {cell(e['score_fevals'])}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    missing = sorted({e["name"] for s in document["spaces"] for e in s["searchers"]} - set(names))
    if missing:
        print(f"\nNot in every space, so left out of the aggregate: {', '.join(missing)}.")


if __name__ == "__main__":
    main()
