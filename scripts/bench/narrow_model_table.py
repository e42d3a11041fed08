#!/usr/bin/env python3
"""The counter-guided searcher with models that miss a parameter of the tuned space
(docs/guided-measurements.md, "Parameters the model cannot tell apart").

For seven pairs of recordings (the tuned recording, the recording its model is trained on)
it cuts the model recording to the configurations that hold the most common value of one
parameter, for each of the model recording's two parameters of most values, trains a tree
model on each cut (`steer export --format json`, then `steer model train`), and tunes the
whole tuned recording with it: `steer simulate --searcher guided` with each setting given
(default: `guided.ard_unmodelled=false` and `=true`), 100 runs, `--compile-times mean
--no-searcher-time`. Where the cut is of the tuned recording itself, the replay gives guided
no runtimes (they are the answers); elsewhere the cut's runtimes are its source. Prints a
markdown table of P (time / tests) per model and setting, and the mean.

  python3 scripts/bench/narrow_model_table.py [--runs 100] [--seed 1] [--steer build/steer] [--out DIR]
      [--setting NAME=VALUE,NAME=VALUE ...]
"""
import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

from counter_guided_table import H200, KTT, stem

# tuned recording, model recording, whether the kernel is compute-bound (spec)
PAIRS = [
    (f"{H200}/transpose_h200.db.gz", f"{H200}/transpose_h200.db.gz", False),
    (f"{H200}/conv_h200.db.gz", f"{H200}/conv_h200.db.gz", True),
    (f"{H200}/nbody_h200.db.gz", f"{H200}/nbody_h200.db.gz", True),
    (f"{KTT}/coulomb_rtx2080.ktt.json.gz", f"{KTT}/coulomb_gtx1070.ktt.json.gz", True),
    (f"{H200}/coulomb_h200.db.gz", f"{KTT}/coulomb_rtx2080.ktt.json.gz", True),
    (f"{KTT}/pnpoly_rtx3090.ktt.json.gz", f"{KTT}/pnpoly_rtx2080ti.ktt.json.gz", False),
    (f"{H200}/gemm_h200.db.gz", f"{H200}/gemm_cube128.db.gz", True),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steer", default="build/steer")
    ap.add_argument("--out", help="keep the cut recordings, models and each simulation's JSON here")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--setting", action="append",
                    help="guided settings of one row, NAME=VALUE[,NAME=VALUE] (repeatable; "
                         "default: ard_unmodelled=false and ard_unmodelled=true)")
    args = ap.parse_args()
    settings = args.setting or ["ard_unmodelled=false", "ard_unmodelled=true"]
    work = args.out or tempfile.mkdtemp()
    os.makedirs(work, exist_ok=True)

    def steer(*command):
        subprocess.run([args.steer, *command], check=True, capture_output=True)

    cases = []  # (tuned, model file, compute-bound, column name)
    for tuned, recording, compute_bound in PAIRS:
        name = stem(recording)
        exported = os.path.join(work, f"{name}.json")
        if not os.path.exists(exported):
            db = os.path.join(work, f"{name}.db")
            if os.path.exists(db):
                os.remove(db)
            steer("import", recording, "--db", db)
            steer("export", "--db", db, "--format", "json", "--out", exported)
        whole = json.load(open(exported))
        values = collections.defaultdict(collections.Counter)
        for result in whole["results"]:
            for parameter, value in result["configuration"].items():
                values[parameter][value] += 1
        for parameter in sorted(values, key=lambda p: (-len(values[p]), p))[:2]:
            value = values[parameter].most_common(1)[0][0]
            cut = dict(whole, results=[r for r in whole["results"] if r["configuration"][parameter] == value])
            column = f"{stem(tuned)} ← {name}, {parameter}={value}"
            base = os.path.join(work, f"{name}__{parameter}_{value}")
            json.dump(cut, open(base + ".json", "w"))
            steer("model", "train", "--data", base + ".json", "--kind", "tree", "--out", base + ".tree.json")
            cases.append((tuned, base + ".tree.json", compute_bound, column))

    def run(job):
        (tuned, model, compute_bound, column), setting = job
        cmd = [args.steer, "simulate", "--data", tuned, "--runs", str(args.runs), "--seed", str(args.seed),
               "--threads", "1", "--compile-times", "mean", "--searcher", "guided", "--model", model,
               "--no-searcher-time", "--json"]
        for s in (["compute_bound=true"] if compute_bound else []) + setting.split(","):
            cmd += ["--set", f"guided.{s}"]
        out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        out = out["spaces"][0] if "spaces" in out else out
        guided = next(s for s in out["searchers"] if s["name"] == "guided")
        return column, setting, (guided["score_time"], guided["score_fevals"])

    jobs = [(case, setting) for case in cases for setting in settings]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        scores = {(column, setting): p for column, setting, p in pool.map(run, jobs)}
    print("| model | " + " | ".join(settings) + " |")
    print("|---|" + "---:|" * len(settings))
    for case in cases:
        print(f"| {case[3]} | " + " | ".join(f"{scores[(case[3], s)][0]:.3f} / {scores[(case[3], s)][1]:.3f}"
                                            for s in settings) + " |")
    means = [[sum(scores[(c[3], s)][axis] for c in cases) / len(cases) for axis in (0, 1)] for s in settings]
    print("| mean | " + " | ".join(f"{m[0]:.3f} / {m[1]:.3f}" for m in means) + " |")


if __name__ == "__main__":
    sys.exit(main())
