#!/usr/bin/env python3
"""The counter-guided searcher given a model alone (`--model M`, no `source=FILE`), as the
default searcher is when a user passes a model: on every pair of recordings here where the
model comes from another GPU or input, in both directions where both have counters
(docs/results.md, "Counter-guided search", "A model alone").

A model carries the runtimes of the recording it was trained on, and `guided` transfers them
as its source; the row "guided, source=none" is the same searcher told to use none (what a
model without them gives). Beside them: random, bayes, `surrogate` (the time-only default) and
`transfer` from the model's recording. Prints a markdown table of the performance score P
(time / tests) and which row leads each column.

  python3 scripts/bench/model_alone_table.py [--runs 300] [--seed 1] [--steer build/steer] [--out DIR]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

from counter_guided_table import print_leaders, stem

KTT, H200 = "data/recordings/ktt", "data/h200"
# tuned recording, model recording, whether the kernel is compute-bound (spec)
PAIRS = [
    (f"{KTT}/coulomb_rtx2080.ktt.json.gz", f"{KTT}/coulomb_gtx1070.ktt.json.gz", True),
    (f"{KTT}/coulomb_rtx2080.ktt.json.gz", f"{H200}/coulomb_h200.db.gz", True),
    (f"{KTT}/coulomb_gtx1070.ktt.json.gz", f"{KTT}/coulomb_rtx2080.ktt.json.gz", True),
    (f"{KTT}/coulomb_gtx1070.ktt.json.gz", f"{H200}/coulomb_h200.db.gz", True),
    (f"{H200}/coulomb_h200.db.gz", f"{KTT}/coulomb_rtx2080.ktt.json.gz", True),
    (f"{H200}/coulomb_h200.db.gz", f"{KTT}/coulomb_gtx1070.ktt.json.gz", True),
    (f"{KTT}/pnpoly_rtx3090.ktt.json.gz", f"{KTT}/pnpoly_rtx2080ti.ktt.json.gz", False),
    (f"{H200}/gemm_h200.db.gz", f"{H200}/gemm_cube128.db.gz", True),
    (f"{H200}/gemm_cube128.db.gz", f"{H200}/gemm_h200.db.gz", True),
]
SEARCHERS = ["random", "bayes", "surrogate", "transfer", "guided"]
NO_SOURCE = "guided, source=none"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steer", default="build/steer")
    ap.add_argument("--out", help="keep the models and each simulation's JSON here")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    work = args.out or tempfile.mkdtemp()
    os.makedirs(work, exist_ok=True)

    def model_of(data):
        return os.path.join(work, f"{stem(data)}.tree.json")

    for data in dict.fromkeys(p[1] for p in PAIRS):
        subprocess.run([args.steer, "model", "train", "--data", data, "--kind", "tree", "--out", model_of(data)],
                       check=True, capture_output=True)

    def simulate(pair, searchers, settings, tag):
        tuned, data, compute_bound = pair
        cmd = [args.steer, "simulate", "--data", tuned, "--runs", str(args.runs), "--seed", str(args.seed),
               "--threads", "1", "--searcher", ",".join(searchers), "--model", model_of(data), "--json",
               "--compile-times", "mean"]
        if compute_bound and "guided" in searchers:
            settings = settings + ["guided.compute_bound=true"]
        for setting in settings:
            cmd += ["--set", setting]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        open(os.path.join(work, f"{stem(tuned)}_from_{stem(data)}{tag}.json"), "w").write(out)
        data_json = json.loads(out)
        data_json = data_json["spaces"][0] if "spaces" in data_json else data_json
        return {s["name"]: (s["score_time"], s["score_fevals"]) for s in data_json["searchers"]}

    def run(pair):
        rows = simulate(pair, SEARCHERS, [f"transfer.source={pair[1]}"], "")
        rows[NO_SOURCE] = simulate(pair, ["guided"], ["guided.source=none"], "_no_source")["guided"]
        return f"{stem(pair[0])} ← {stem(pair[1])}", rows

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = dict(pool.map(run, PAIRS))
    columns = list(results)
    names = SEARCHERS + [NO_SOURCE]
    print("| searcher | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for n in names:
        print(f"| {n} | " + " | ".join(f"{results[c][n][0]:.3f} / {results[c][n][1]:.3f}" for c in columns) + " |")
    print()
    print_leaders(results, "tuned ← model")


if __name__ == "__main__":
    sys.exit(main())
