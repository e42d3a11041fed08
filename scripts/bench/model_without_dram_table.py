#!/usr/bin/env python3
"""The counter-guided searcher with a model of a counter set that has no DRAM sectors, as KTT
2.3 records it (no dram__sectors_read/write): on every pair of recordings of
scripts/bench/model_alone_table.py and on transpose, conv and nbody on the H200 with their own
models (docs/guided-measurements.md, "A model without DRAM counters").

Each pair's tree model is trained as usual, and a copy of it has its DRAM_RT and DRAM_WT
predictions removed. Without a source, guided ranks the predicted work by instructions alone
there. Rows, P (time / tests), each compile charged the recording's mean:
  full model:            guided, source=none, the model as trained
  without DRAM:          guided, source=none, the copy
  without DRAM, no work: the same with work_prior=false (no predicted work at all)
  without DRAM, source:  guided with the copy and the model's recording as source (pairs only)

  python3 scripts/bench/model_without_dram_table.py [--runs 100] [--seed 1] [--steer build/steer] [--out DIR]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

from counter_guided_table import stem
from model_alone_table import H200, PAIRS

# their own models, no source: no other recording of these kernels has counters
OWN = [(f"{H200}/transpose_h200.db.gz", f"{H200}/transpose_h200.db.gz", False),
       (f"{H200}/conv_h200.db.gz", f"{H200}/conv_h200.db.gz", True),
       (f"{H200}/nbody_h200.db.gz", f"{H200}/nbody_h200.db.gz", True)]
DRAM = {"DRAM_RT", "DRAM_WT"}
ROWS = ["full model", "without DRAM", "without DRAM, no work", "without DRAM, source"]


def without_dram(model_file, out_file):
    model = json.load(open(model_file))
    kept = [k for k, name in enumerate(model["counters"]) if name not in DRAM]
    if len(kept) == len(model["counters"]):
        sys.exit(f"{model_file}: the model predicts no DRAM counters to remove")
    model["counters"] = [model["counters"][k] for k in kept]
    model["model"]["trees"] = [model["model"]["trees"][k] for k in kept]
    json.dump(model, open(out_file, "w"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steer", default="build/steer")
    ap.add_argument("--out", help="keep the models and each simulation's JSON here")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    work = args.out or tempfile.mkdtemp()
    os.makedirs(work, exist_ok=True)
    pairs = PAIRS + OWN

    def model_of(data, tag=""):
        return os.path.join(work, f"{stem(data)}.tree{tag}.json")

    for data in dict.fromkeys(p[1] for p in pairs):
        subprocess.run([args.steer, "model", "train", "--data", data, "--kind", "tree", "--out", model_of(data)],
                       check=True, capture_output=True)
        without_dram(model_of(data), model_of(data, "_no_dram"))

    def simulate(pair, model, settings, tag):
        tuned, data, compute_bound = pair
        cmd = [args.steer, "simulate", "--data", tuned, "--runs", str(args.runs), "--seed", str(args.seed),
               "--threads", "1", "--searcher", "guided", "--model", model, "--json", "--compile-times", "mean"]
        for setting in settings + (["guided.compute_bound=true"] if compute_bound else []):
            cmd += ["--set", setting]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        open(os.path.join(work, f"{stem(tuned)}_from_{stem(data)}{tag}.json"), "w").write(out)
        result = json.loads(out)
        result = result["spaces"][0] if "spaces" in result else result
        guided = next(s for s in result["searchers"] if s["name"] == "guided")
        return guided["score_time"], guided["score_fevals"]

    def run(pair):
        tuned, data, _ = pair
        rows = {
            "full model": simulate(pair, model_of(data), ["guided.source=none"], "_full"),
            "without DRAM": simulate(pair, model_of(data, "_no_dram"), ["guided.source=none"], "_no_dram"),
            "without DRAM, no work": simulate(pair, model_of(data, "_no_dram"),
                                              ["guided.source=none", "guided.work_prior=false"], "_no_work"),
        }
        if tuned != data:
            rows["without DRAM, source"] = simulate(pair, model_of(data, "_no_dram"), [f"guided.source={data}"],
                                                    "_source")
        return f"{stem(tuned)} ← {stem(data)}", rows

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = dict(pool.map(run, pairs))
    columns = list(results)
    print("| guided | " + " | ".join(columns) + " | mean |")
    print("|---|" + "---:|" * (len(columns) + 1))
    for row in ROWS:
        cells = [results[c].get(row) for c in columns]
        scored = [cell for cell in cells if cell]
        mean = (f"{sum(t for t, _ in scored) / len(scored):.3f} / {sum(f for _, f in scored) / len(scored):.3f}"
                if len(scored) == len(cells) else "")
        print(f"| {row} | " + " | ".join(f"{cell[0]:.3f} / {cell[1]:.3f}" if cell else "" for cell in cells)
              + f" | {mean} |")


if __name__ == "__main__":
    sys.exit(main())
