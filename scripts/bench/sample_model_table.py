#!/usr/bin/env python3
"""Would counters at hand, without a model from another GPU or input, make the counter-guided
searcher worth choosing? (docs/searchers.md, "The default searcher".)

Counters alone give guided nothing to predict from until some configurations are profiled, so
the most a model learnt during the run could give is that of a model trained on N profiled
configurations of the tuned space itself. This stands in for it, free of the profiling's
cost: for each H200 recording with counters it trains a tree model on N configurations drawn
at random from the recording (a new draw per repetition), then replays the recording with
`guided` given that model and no source, beside `surrogate`, the time-only default. It
also prints what profiling a test costs against a plain test in the recording (compile plus
timed launches), the price an online model would pay per configuration it learns from.

  python3 scripts/bench/sample_model_table.py [--runs 50] [--sizes 20,40] [--draws 3] [--steer build/steer]
"""
import argparse
import concurrent.futures
import gzip
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile

H200 = "data/h200"
# recording, whether the kernel is compute-bound (spec)
RECORDINGS = [("transpose_h200", False), ("conv_h200", False), ("nbody_h200", False),
              ("gemm_h200", True), ("coulomb_h200", True)]


def sample_store(source, target, size, seed):
    """Copy of the store `source` that keeps `size` configurations that ran, drawn with `seed`."""
    shutil.copyfile(source, target)
    db = sqlite3.connect(target)
    db.execute("PRAGMA foreign_keys = ON")
    ids = [row[0] for row in db.execute("SELECT id FROM tests WHERE status = 'ok' ORDER BY id")]
    keep = set(random.Random(seed).sample(ids, size))
    db.executemany("DELETE FROM tests WHERE id = ?", [(i,) for i in ids if i not in keep])
    db.execute("DELETE FROM tests WHERE status != 'ok'")
    db.commit()
    db.execute("VACUUM")
    db.close()


def costs(store):
    """Mean profiling time of a profiled test and mean time of a plain one (ms)."""
    db = sqlite3.connect(store)
    profiling, plain = db.execute(
        "SELECT avg(profiling_ms), avg(median_ms * repetitions + compile_ms) FROM tests WHERE status = 'ok'").fetchone()
    db.close()
    return profiling, plain


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--sizes", default="20,40", help="configurations each model is trained on")
    ap.add_argument("--draws", type=int, default=3, help="random draws of those configurations per size")
    ap.add_argument("--steer", default="build/steer")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    work = tempfile.mkdtemp()
    sizes = [int(s) for s in args.sizes.split(",")]

    stores = {}
    for name, _ in RECORDINGS:
        stores[name] = os.path.join(work, name + ".db")
        with gzip.open(os.path.join(H200, name + ".db.gz")) as f, open(stores[name], "wb") as out:
            shutil.copyfileobj(f, out)

    def run(job):
        (name, compute_bound), size, draw = job
        stem = f"{name}_{size}_{draw}"
        store = os.path.join(work, stem + ".db")
        model = os.path.join(work, stem + ".tree.json")
        sample_store(stores[name], store, size, draw)
        subprocess.run([args.steer, "model", "train", "--data", store, "--kind", "tree", "--out", model],
                       check=True, capture_output=True)
        cmd = [args.steer, "simulate", "--data", os.path.join(H200, name + ".db.gz"), "--runs", str(args.runs),
               "--threads", "1", "--searcher", "guided,surrogate", "--model", model, "--set", "guided.source=none",
               "--compile-times", "mean", "--json"]
        if compute_bound:
            cmd += ["--set", "guided.compute_bound=true"]
        out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        return job, {s["name"]: (s["score_time"], s["score_fevals"]) for s in out["searchers"]}

    jobs = [(r, size, draw) for r in RECORDINGS for size in sizes for draw in range(1, args.draws + 1)]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(run, jobs))

    print(f"P (time / tests), {args.runs} runs; guided's model trained on N random configurations of the "
          f"recording, mean over {args.draws} draws (each draw's P over time in brackets)\n")
    print("| recording | profiling / plain test | surrogate | " + " | ".join(f"guided, N = {n}" for n in sizes) + " |")
    print("|---|---:|---:|" + "---:|" * len(sizes))
    means = {"surrogate": []} | {n: [] for n in sizes}
    for name, _ in RECORDINGS:
        profiling, plain = costs(stores[name])
        row = [r for r in results if r[0][0][0] == name]
        sur = statistics.mean(r[1]["surrogate"][0] for r in row), statistics.mean(r[1]["surrogate"][1] for r in row)
        means["surrogate"].append(sur)
        cells = []
        for n in sizes:
            ps = [r[1]["guided"] for r in row if r[0][1] == n]
            mean = statistics.mean(p[0] for p in ps), statistics.mean(p[1] for p in ps)
            means[n].append(mean)
            cells.append(f"{mean[0]:.3f} / {mean[1]:.3f} ({', '.join(f'{p[0]:.2f}' for p in ps)})")
        print(f"| {name} | {profiling / plain:.1f} | {sur[0]:.3f} / {sur[1]:.3f} | " + " | ".join(cells) + " |")
    cells = [f"{statistics.mean(m[0] for m in means[n]):.3f} / {statistics.mean(m[1] for m in means[n]):.3f}"
             for n in sizes]
    sur = means["surrogate"]
    print(f"| mean | | {statistics.mean(m[0] for m in sur):.3f} / {statistics.mean(m[1] for m in sur):.3f} | "
          + " | ".join(cells) + " |")
    shutil.rmtree(work)


if __name__ == "__main__":
    sys.exit(main())
