#!/usr/bin/env python3
"""The counter-guided searcher against every Steer searcher (and, given their runs, Kernel
Tuner's strategies) on the recordings with counters, each tuned with a model from another GPU
or input where the repository has one (docs/results.md, "Counter-guided search").

For each pair below it trains a model on the model recording (`steer model train`, a tree
unless --model-kind says otherwise), runs
`steer simulate` with the performance score P on the tuned recording, and prints one markdown
table of P (time / tests) per searcher and recording, then which searcher leads each column.

  python3 scripts/bench/counter_guided_table.py [--runs 100] [--seed 1] [--steer build/steer]
      [--kt-runs DIR --kt-files DIR] [--out DIR] [--objective energy|weighted:ALPHA|edp]
      [--compile-threads N] [--guesses N] [--compile-times recorded|mean] [--model-kind tree|forest|lsq] [--searchers NAME,NAME,...]
      [--set SEARCHER.NAME=VALUE ...]
  python3 scripts/bench/counter_guided_table.py --from data/scores/FILE.json

--kt-runs: the *.kt-runs.json files of scripts/bench/kerneltuner_strategies.py, and --kt-files
the Kernel Tuner cache files they were made on (`steer export --format kerneltuner` of each
recording); their strategies are scored on those files, whose cut-offs are the recording's.

--from: the tables of a file of data/scores/ instead of new simulations.

--objective other than time: only the recordings that also hold energy (ENERGY), each over the
configurations it measured energy for; Kernel Tuner's runs, made for time, are not scored.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

KTT, H200 = "data/recordings/ktt", "data/h200"
# tuned recording, model recording (and source), whether the kernel is compute-bound (spec)
PAIRS = [
    (f"{KTT}/coulomb_rtx2080.ktt.json.gz", f"{KTT}/coulomb_gtx1070.ktt.json.gz", True),
    (f"{KTT}/coulomb_gtx1070.ktt.json.gz", f"{KTT}/coulomb_rtx2080.ktt.json.gz", True),
    (f"{H200}/coulomb_h200.db.gz", f"{KTT}/coulomb_rtx2080.ktt.json.gz", True),
    # pnpoly_rtx3090 has no counters: the RTX 2080 Ti's model for both, the other as source
    (f"{KTT}/pnpoly_rtx2080ti.ktt.json.gz", f"{KTT}/pnpoly_rtx2080ti.ktt.json.gz", False,
     f"{KTT}/pnpoly_rtx3090.ktt.json.gz"),
    (f"{KTT}/pnpoly_rtx3090.ktt.json.gz", f"{KTT}/pnpoly_rtx2080ti.ktt.json.gz", False),
    (f"{H200}/gemm_h200.db.gz", f"{H200}/gemm_cube128.db.gz", True),
    # no other recording of these kernels has counters: their own models, no source
    (f"{H200}/transpose_h200.db.gz", f"{H200}/transpose_h200.db.gz", False, None),
    (f"{H200}/conv_h200.db.gz", f"{H200}/conv_h200.db.gz", True, None),
    (f"{H200}/nbody_h200.db.gz", f"{H200}/nbody_h200.db.gz", True, None),
]
# the tuned recordings of PAIRS that hold energy too
ENERGY = {"gemm_h200", "coulomb_h200"}
SEARCHERS = ["random", "genetic", "bayes", "surrogate", "mcmc", "basin-hopping", "mls", "annealing", "starchart",
             "profile-based", "transfer", "guided"]


def searchers_of(text):
    """The searcher rows of `steer simulate --json` (one space, or several)."""
    data = json.loads(text)
    return (data["spaces"][0] if "spaces" in data else data)["searchers"]


def stem(path):
    return os.path.basename(path).split(".")[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1, help="seed of the first run (steer simulate --seed)")
    ap.add_argument("--steer", default="build/steer")
    ap.add_argument("--kt-runs")
    ap.add_argument("--kt-files")
    ap.add_argument("--out", help="keep each simulation's JSON here")
    ap.add_argument("--save", help="write the simulations' JSON to this file, as the files of data/scores/ hold "
                                   "them (with --objective other than time, under that objective, keeping the "
                                   "file's other objectives)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--objective", default="time")
    ap.add_argument("--model-kind", default="tree", help="steer model train's --kind (default: tree)")
    ap.add_argument("--compile-threads", help="steer simulate's --compile-threads (default: its own)")
    ap.add_argument("--guesses", help="steer simulate's --guesses (default: its own)")
    ap.add_argument("--compile-times", help="steer simulate's --compile-times for Steer's searchers (default: "
                                            "its own); Kernel Tuner's runs keep the compile times they were charged")
    ap.add_argument("--set", action="append", default=[], help="a searcher setting for every recording (repeatable)")
    ap.add_argument("--searchers", help="only these of the searchers (each row's P is its own: rows of "
                                        "different calls can be put side by side)")
    ap.add_argument("--from", dest="from_file", help="print the tables of a saved file of data/scores/ "
                                                     "and stop")
    args = ap.parse_args()
    if args.from_file:
        print_tables(rows_of_file(args.from_file))
        return 0
    pairs = PAIRS if args.objective == "time" else [p for p in PAIRS if stem(p[0]) in ENERGY]
    if args.objective != "time" and args.kt_runs:
        ap.error("Kernel Tuner's runs were made for time: leave out --kt-runs with --objective")
    work = args.out or tempfile.mkdtemp()
    os.makedirs(work, exist_ok=True)

    def model_of(model_data):
        return os.path.join(work, f"{stem(model_data)}.{args.model_kind}.json")

    # trained before the simulations start: two recordings can share a model
    for model_data in dict.fromkeys(pair[1] for pair in pairs):
        if not os.path.exists(model_of(model_data)):
            subprocess.run([args.steer, "model", "train", "--data", model_data, "--kind", args.model_kind,
                            "--out", model_of(model_data)], check=True, capture_output=True)

    def run(pair):
        tuned, model_data, compute_bound = pair[:3]
        source = pair[3] if len(pair) > 3 else model_data
        model = model_of(model_data)
        searchers = [s for s in (args.searchers.split(",") if args.searchers else SEARCHERS)
                     if s != "transfer" or source]
        cmd = [args.steer, "simulate", "--data", tuned, "--runs", str(args.runs), "--seed", str(args.seed), "--threads", "1",
               "--searcher", ",".join(searchers), "--model", model, "--json", "--objective", args.objective]
        if args.compile_threads is not None:
            cmd += ["--compile-threads", args.compile_threads]
        if args.guesses is not None:
            cmd += ["--guesses", args.guesses]
        if args.compile_times is not None:
            cmd += ["--compile-times", args.compile_times]
        settings = []
        if compute_bound:
            settings += ["profile-based.compute_bound=true", "guided.compute_bound=true"]
        if source:
            settings += [f"transfer.source={source}", f"guided.source={source}"]
        else:  # its own model: the runtimes the model carries are the answers (steer simulate leaves them out too)
            settings += ["guided.source=none"]
        for setting in settings + args.set:  # steer simulate refuses settings of searchers it does not run
            if setting.split(".")[0] in searchers:
                cmd += ["--set", setting]
        rows, saved = {}, {}
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        open(os.path.join(work, stem(tuned) + ".json"), "w").write(out)
        saved["steer"] = json.loads(out)
        for s in searchers_of(out):
            rows[s["name"]] = (s["score_time"], s["score_fevals"])
        if args.kt_runs:
            kt = [args.steer, "simulate", "--data", os.path.join(args.kt_files, stem(tuned) + ".kt.json.gz"),
                  "--runs", str(args.runs), "--threads", "1", "--searcher", "random", "--json",
                  "--score-runs", os.path.join(args.kt_runs, stem(tuned) + ".kt-runs.json")]
            out = subprocess.run(kt, check=True, capture_output=True, text=True).stdout
            open(os.path.join(work, stem(tuned) + ".kt.json"), "w").write(out)
            saved["kernel_tuner"] = json.loads(out)
            for s in searchers_of(out):
                if s["name"].startswith("kernel_tuner:"):
                    rows[s["name"]] = (s["score_time"], s["score_fevals"])
        return stem(tuned), rows, saved

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        done = list(pool.map(run, pairs))
    results = {name: rows for name, rows, _ in done}
    if args.save:
        save(args.save, args.objective, {name: saved for name, _, saved in done})
    print_tables(results)


def save(path, objective, by_recording):
    """Writes {RECORDING: {"steer": ..., "kernel_tuner": ...}} to `path`; for an objective other
    than time {OBJECTIVE: {RECORDING: ...}}, with the other objectives the file already holds."""
    data = by_recording
    if objective != "time":
        data = {}
        if os.path.exists(path):
            with open(path) as f:
                data = json.load(f)
            if any(isinstance(v, dict) and "steer" in v for v in data.values()):
                sys.exit(f"counter_guided_table.py: {path} holds a time objective's scores "
                         "({RECORDING: ...}); --save another file for --objective " + objective)
        data[objective] = by_recording
    with open(path, "w") as f:
        json.dump(data, f)
        f.write("\n")


def rows_of_file(path):
    """{column: {searcher: (P over time, P over tests)}} of a file of data/scores/: one column per
    recording of {RECORDING: {"steer": ..., "kernel_tuner": ...}}, in the order of PAIRS, or per
    recording and objective of {OBJECTIVE: {RECORDING: {"steer": ...}}}."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as error:
        sys.exit(f"counter_guided_table.py: cannot read {path}: {error}")
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        sys.exit(f"counter_guided_table.py: {path} is not a file of data/scores/ "
                 '({RECORDING: {"steer": ...}} or {OBJECTIVE: {RECORDING: {"steer": ...}}})')
    order = [stem(pair[0]) for pair in PAIRS]

    def rows(parts):
        if not isinstance(parts, dict):
            sys.exit(f"counter_guided_table.py: {path}: expected a recording's {{\"steer\": ...}}, got {parts!r:.60}")
        found = {}
        for part in ("steer", "kernel_tuner"):
            for s in parts.get(part, {}).get("searchers", []):
                if part == "steer" or s["name"].startswith("kernel_tuner:"):
                    found[s["name"]] = (s["score_time"], s["score_fevals"])
        return found

    if all("steer" in parts for parts in data.values()):
        return {r: rows(data[r]) for r in sorted(data, key=lambda r: order.index(r) if r in order else len(order))}
    columns = {}
    for recording in sorted({r for by_recording in data.values() for r in by_recording},
                            key=lambda r: order.index(r) if r in order else len(order)):
        for objective, by_recording in data.items():
            if recording in by_recording:
                columns[f"{recording}, {objective}"] = rows(by_recording[recording])
    return columns


def print_tables(results):
    """The table of P (time / tests) per searcher and recording, with the mean over the
    recordings where a searcher has a value on all, then which searcher leads each column."""
    spaces = list(results)
    names = []
    for rows in results.values():
        names += [n for n in rows if n not in names]
    print("| searcher | " + " | ".join(spaces) + " | mean |")
    print("|---|" + "---:|" * (len(spaces) + 1))
    for n in names:
        cells, values = [], []
        for s in spaces:
            v = results[s].get(n)
            cells.append(f"{v[0]:.3f} / {v[1]:.3f}" if v and v[0] is not None else "")
            if v and v[0] is not None:
                values.append(v)
        mean = (f"{sum(v[0] for v in values) / len(values):.3f} / {sum(v[1] for v in values) / len(values):.3f}"
                if len(values) == len(spaces) else "")
        print(f"| {n} | " + " | ".join(cells) + f" | {mean} |")
    print()
    print_leaders(results, "recording")


def print_leaders(results, heading):
    """A markdown table of which searcher leads each column of `results` ({column: {searcher:
    (P over time, P over tests)}}) on each axis, and which follows it."""
    print(f"| {heading} | first over time | first over tests |")
    print("|---|---|---|")
    for s in results:
        lead = []
        for axis in (0, 1):
            ranked = sorted(((round(v[axis], 3), n) for n, v in results[s].items() if v[axis] is not None),
                            key=lambda x: -x[0])
            # level: the same to the three decimals shown
            first = [n for v, n in ranked if v == ranked[0][0]]
            rest = ranked[len(first):]
            following = f" (next: {rest[0][1]} {rest[0][0]:.3f})" if rest else ""
            lead.append(f"{' and '.join(first)} {ranked[0][0]:.3f}{following}")
        print(f"| {s} | {lead[0]} | {lead[1]} |")


if __name__ == "__main__":
    sys.exit(main())
