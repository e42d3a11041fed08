#!/usr/bin/env python3
"""Steer's searchers against Kernel Tuner's own strategies, on the same recordings.

For each recording and each strategy pair (Kernel Tuner name <-> Steer name), both tools
replay the recording in simulation mode N times with different seeds, and this script
reports the mean number of tests until the first well-performing configuration (runtime
<= target x the best valid runtime of the recording) and the wall time of the whole
simulated tuning (all N runs) of each tool.

Both tools see the very same Kernel Tuner cache file: Kernel Tuner's recordings as they
are (uncompressed into a temporary folder), Steer's SQLite stores exported with
`steer export --format kerneltuner`.

Counting, the same for both tools:
  * the search space is the recorded configurations (Kernel Tuner: a restriction "the
    configuration is in the cache", passed to tune_kernel; Steer: `steer simulate` without
    --spec builds its space the same way);
  * a test is a configuration evaluated for the first time, whether it worked or failed
    (Kernel Tuner's own count: its simulation runner charges one evaluation to the budget
    for each configuration served from the cache the first time, failed ones included;
    repeats are free. Steer never tests a configuration twice and counts failed tests);
  * well-performing: status ok and runtime <= target x the best valid runtime, where the
    runtime of a configuration is Kernel Tuner's objective "time" (the mean of its timed
    launches); the script checks that Steer's runtime (the median) marks the same
    configurations well-performing, and says so when it does not;
  * a run stops at the first well-performing configuration (Kernel Tuner: its runner is
    wrapped so that the budget is declared spent once one was served, which makes every
    strategy stop through its own StopCriterionReached path; Steer: `steer simulate`
    stops there), or when the budget is spent, or when the strategy ends on its own
    (Kernel Tuner's annealing and genetic algorithm have a finite schedule): then the run
    failed. Means are over the runs that reached the target; failed runs are reported.

Wall time: Kernel Tuner's is the sum over runs of tune_kernel (space construction
included, since each call is one whole simulated tuning), in this process; Steer's is the
wall time of one `steer simulate --runs N --threads 1` process per strategy (loading the
recording included, and the random-search baseline `steer simulate` always runs too).

    python3 scripts/bench/compare_kerneltuner.py --steer build/steer --runs 100 --markdown
"""
import argparse
import contextlib
import glob
import gzip
import hashlib
import io
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

# Kernel Tuner strategy -> Steer searcher. KT's greedy_mls is what Steer's mls follows
# (first improvement); KT's "mls" is the best-improvement variant.
PAIRS = [
    ("random_sample", "random"),
    ("basinhopping", "basin-hopping"),
    ("simulated_annealing", "annealing"),
    ("genetic_algorithm", "genetic"),
    ("greedy_mls", "mls"),
    ("greedy_ils", "ils"),
    ("bayes_opt", "bayes"),
]

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_RECORDINGS = [os.path.join(ROOT, "data", "recordings", "kerneltuner", "convolution_milo_a100.kt.json.gz")] + \
    sorted(glob.glob(os.path.join(ROOT, "data", "h200", "*.db.gz")))


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def kt_cache_for(recording, steer, workdir):
    """An uncompressed Kernel Tuner cache file for the recording (exported from a Steer store)."""
    base = os.path.basename(recording)
    for suffix in (".gz", ".json", ".db", ".kt"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    out = os.path.join(workdir, base + ".json")  # Kernel Tuner insists on the .json suffix
    plain = recording
    if recording.endswith(".gz"):
        plain = os.path.join(workdir, os.path.basename(recording)[:-3])
        with gzip.open(recording, "rb") as src, open(plain, "wb") as dst:
            shutil.copyfileobj(src, dst)
    if plain.endswith(".db"):
        subprocess.run([steer, "export", "--db", plain, "--format", "kerneltuner", "--out", out], check=True,
                       stdout=subprocess.DEVNULL)
    else:
        os.replace(plain, out)
    return out


def runtimes(cache):
    """Per valid configuration key: (Kernel Tuner's objective "time", median of "times")."""
    found = {}
    for key, entry in cache["cache"].items():
        if not isinstance(entry, dict):
            continue
        t = entry.get("time")
        if isinstance(t, (int, float)) and not isinstance(t, bool) and "__error__" not in entry:
            times = entry.get("times") or [t]
            found[key] = (float(t), float(statistics.median(times)))
    return found


def well_performing(valid, target, which):
    best = min(v[which] for v in valid.values())
    return {k for k, v in valid.items() if v[which] <= target * best}


def run_kernel_tuner(cache_file, cache, strategy, runs, budget, target_keys, seed):
    import numpy as np
    import kernel_tuner
    from constraint import FunctionConstraint
    from kernel_tuner import util
    from kernel_tuner.runners import simulation

    names = cache["tune_params_keys"]
    recorded = set(cache["cache"].keys())

    def in_recording(*values):
        return ",".join(str(v) for v in values) in recorded

    def key_of(result):
        return ",".join(str(result[n]) for n in names)

    served = []  # configurations in the order the runner first served them: Kernel Tuner's tests

    class StopAtTarget(simulation.SimulationRunner):
        """Kernel Tuner's simulation runner; the budget is spent once a well-performing
        configuration was served, so every strategy stops as it does at max_fevals."""

        def run(self, parameter_space, tuning_options):
            results = super().run(parameter_space, tuning_options)
            for r in results:
                if r is None:
                    continue
                k = key_of(r)
                if k not in seen:
                    seen.add(k)
                    served.append((k, "__error__" not in r))
                if "__error__" not in r and k in target_keys:
                    tuning_options.budget.max_fevals = tuning_options.budget.num_fevals
            return results

    problem_size = cache["problem_size"]
    problem_size = tuple(problem_size) if isinstance(problem_size, list) else problem_size
    tests, failed, wall = [], 0, 0.0
    original = simulation.SimulationRunner
    simulation.SimulationRunner = StopAtTarget
    try:
        for r in range(runs):
            random.seed(seed + r)
            np.random.seed(seed + r)
            served.clear()
            seen = set()
            start = time.perf_counter()
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore")
                try:
                    kernel_tuner.tune_kernel(
                        cache["kernel_name"], "", problem_size, [], cache["tune_params"],
                        restrictions=[FunctionConstraint(in_recording)], cache=cache_file, simulation_mode=True,
                        strategy=strategy, strategy_options={"max_fevals": budget}, quiet=True)
                except util.StopCriterionReached:
                    # Some strategies test their start outside their own stop handling; a start
                    # that is already well-performing ends the run there.
                    pass
            wall += time.perf_counter() - start
            reached = None
            for n, (k, ok) in enumerate(served, start=1):
                if ok and k in target_keys:
                    reached = n
                    break
            if reached is None:
                failed += 1
            else:
                tests.append(reached)
    finally:
        simulation.SimulationRunner = original
    return tests, failed, wall


def run_steer(steer, cache_file, searcher, runs, budget, target, seed):
    command = [steer, "simulate", "--data", cache_file, "--searcher", searcher, "--runs", str(runs),
               "--target", repr(target), "--budget", str(budget), "--seed", str(seed), "--threads", "1", "--no-score", "--json"]
    start = time.perf_counter()
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - start
    report = json.loads(out)
    entry = next(s for s in report["searchers"] if s["name"] == searcher)
    return entry, wall, report, command


def fmt(value, digits=1):
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recordings", nargs="*", default=DEFAULT_RECORDINGS,
                        help="Kernel Tuner cache files (.json[.gz]) or Steer stores (.db[.gz])")
    parser.add_argument("--steer", default=os.path.join(ROOT, "build", "steer"), help="the steer binary")
    parser.add_argument("--runs", type=int, default=100, help="runs per strategy and tool")
    parser.add_argument("--budget", type=int, default=0, help="tests per run (0: the whole space)")
    parser.add_argument("--target", type=float, default=1.1)
    parser.add_argument("--seed", type=int, default=1, help="seed of the first run (run r: seed + r)")
    parser.add_argument("--strategies", default=",".join(k for k, _ in PAIRS),
                        help="Kernel Tuner strategies to compare (comma-separated)")
    parser.add_argument("--markdown", action="store_true", help="print the docs/results.md section")
    parser.add_argument("--runs-for", action="append", default=[], metavar="RECORDING:STRATEGY=N",
                        help="fewer (or more) runs for one Kernel Tuner strategy on one recording (its file "
                             "name), e.g. for bayes_opt, whose simulation takes tens of seconds a run")
    parser.add_argument("--json", help="also write every number to this file")
    parser.add_argument("--kt-results", action="append", default=[],
                        help="JSON file of Kernel Tuner results to reuse (same recording, strategy, runs, budget, "
                             "target, seed and Kernel Tuner version); new ones are added to the first. Kernel "
                             "Tuner's side is slow (minutes per strategy), Steer's is not")
    parser.add_argument("--only-kt", action="store_true", help="run Kernel Tuner's side only (fills --kt-results)")
    args = parser.parse_args()

    import kernel_tuner
    pairs = dict(PAIRS)
    chosen = [s for s in args.strategies.split(",") if s]
    for s in chosen:
        if s not in pairs:
            parser.error(f"unknown strategy {s}; known: {', '.join(pairs)}")

    runs_for = {}
    for item in args.runs_for:
        where, _, count = item.partition("=")
        recording_name, _, strategy_name = where.partition(":")
        if not count.isdigit() or not strategy_name:
            parser.error(f"--runs-for {item}: expected RECORDING:STRATEGY=N")
        runs_for[(recording_name, strategy_name)] = int(count)

    stored = {}
    for file in args.kt_results:
        if os.path.exists(file):
            with open(file) as f:
                stored.update(json.load(f))

    def kernel_tuner_side(name, cache_file, cache, kt_name, runs, budget, target_keys):
        with open(cache_file, "rb") as f:
            content = hashlib.sha256(f.read()).hexdigest()[:16]  # a re-recorded file is a new recording
        key = f"{name}|{kt_name}|runs={runs}|budget={budget}|target={args.target}|seed={args.seed}|" \
              f"kt={kernel_tuner.__version__}|sha256={content}"
        if key not in stored:
            tests, failed, wall = run_kernel_tuner(cache_file, cache, kt_name, runs, budget, target_keys,
                                                   args.seed)
            stored[key] = {"tests": tests, "failed": failed, "wall_s": wall}
            if args.kt_results:
                mine = {}
                if os.path.exists(args.kt_results[0]):
                    with open(args.kt_results[0]) as f:
                        mine = json.load(f)
                mine[key] = stored[key]
                with open(args.kt_results[0], "w") as f:
                    json.dump(mine, f)
        found = stored[key]
        return found["tests"], found["failed"], found["wall_s"]

    rows, notes, commands = [], [], []
    with tempfile.TemporaryDirectory(prefix="steer-vs-kt-") as workdir:
        for recording in args.recordings:
            cache_file = kt_cache_for(recording, args.steer, workdir)
            with open(cache_file) as f:
                cache = json.load(f)
            valid = runtimes(cache)
            target_keys = well_performing(valid, args.target, 0)
            if target_keys != well_performing(valid, args.target, 1):
                notes.append(f"{os.path.basename(recording)}: the mean and the median of the timed launches mark "
                             "different configurations well-performing; Kernel Tuner is judged by the mean")
            size = len(cache["cache"])
            budget = args.budget if args.budget > 0 else size
            name = os.path.basename(recording)
            log(f"{name}: {size} configurations, {len(valid)} valid, {len(target_keys)} well-performing, "
                f"budget {budget}")
            for kt_name in chosen:
                steer_name = pairs[kt_name]
                runs = runs_for.get((name, kt_name), args.runs)
                if runs == 0:  # --runs-for RECORDING:STRATEGY=0 leaves the pair out
                    notes.append(f"{name}: `{kt_name}` / `{steer_name}` not run")
                    continue
                kt_tests, kt_failed, kt_wall = kernel_tuner_side(name, cache_file, cache, kt_name, runs, budget,
                                                                 target_keys)
                if args.only_kt:
                    log(f"  {kt_name:20} KT {fmt(statistics.fmean(kt_tests) if kt_tests else None)} "
                        f"({kt_failed} failed, {kt_wall:.1f} s)")
                    continue
                entry, steer_wall, report, command = run_steer(args.steer, cache_file, steer_name, runs,
                                                               budget, args.target, args.seed)
                if report["configs"] != size:
                    raise SystemExit(f"{name}: Steer sees {report['configs']} configurations, Kernel Tuner {size}")
                kt_mean = statistics.fmean(kt_tests) if kt_tests else None
                kt_median = statistics.median(kt_tests) if kt_tests else None
                steer_mean = entry["mean_tests"]
                row = {
                    "recording": name, "configs": size, "well_performing": len(target_keys), "budget": budget,
                    "kt": kt_name, "steer": steer_name, "runs": runs,
                    "kt_mean_tests": kt_mean, "kt_median_tests": kt_median, "kt_failed": kt_failed,
                    "kt_wall_s": kt_wall, "steer_mean_tests": steer_mean, "steer_median_tests": entry["median_tests"],
                    "steer_failed": entry["failed_runs"], "steer_wall_s": steer_wall,
                }
                rows.append(row)
                log(f"  {kt_name:20} KT {fmt(kt_mean)} ({kt_failed} failed, {kt_wall:.1f} s)   "
                    f"{steer_name:14} Steer {fmt(steer_mean)} ({entry['failed_runs']} failed, {steer_wall:.2f} s)")
                commands.append(" ".join(command).replace(workdir, "$TMP"))

    if args.only_kt:
        return
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"kernel_tuner": kernel_tuner.__version__, "rows": rows}, f, indent=1)

    table = ["| recording | KT strategy | Steer searcher | runs | KT mean tests | Steer mean tests | Steer / KT | "
             "median KT / Steer | failed runs KT / Steer | KT wall s | Steer wall s | speed-up |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ratio = (r["steer_mean_tests"] / r["kt_mean_tests"]
                 if r["steer_mean_tests"] is not None and r["kt_mean_tests"] else None)
        table.append(f"| {r['recording']} | `{r['kt']}` | `{r['steer']}` | {r['runs']} | {fmt(r['kt_mean_tests'])} | "
                     f"{fmt(r['steer_mean_tests'])} | {fmt(ratio, 2)} | "
                     f"{fmt(r['kt_median_tests'])} / {fmt(r['steer_median_tests'])} | "
                     f"{r['kt_failed']} / {r['steer_failed']} | "
                     f"{r['kt_wall_s']:.1f} | {r['steer_wall_s']:.2f} | {r['kt_wall_s'] / r['steer_wall_s']:.0f}× |")
    if not args.markdown:
        print("\n".join(table))
        return
    recordings = {r["recording"]: r for r in rows}
    print("## Steer vs Kernel Tuner\n")
    print(f"Kernel Tuner {kernel_tuner.__version__}'s own strategies and Steer's searchers replay the same "
          f"recordings, {args.runs} runs each unless the table says fewer (seeds {args.seed}, {args.seed + 1}, …), "
          "each run stopping "
          f"at the first configuration within {args.target}× of the best. Tests are counted alike: configurations "
          "evaluated for the first time, failed ones included, over the space of recorded configurations; means "
          "are over the runs that reached the target, and a run fails when the budget is spent or the strategy "
          "ends on its own first (Kernel Tuner's annealing and genetic algorithm have a finite schedule). Wall "
          "time is the whole simulated tuning of all runs, on one core: Kernel Tuner's `tune_kernel(..., "
          "simulation_mode=True)` calls in one Python process, one `steer simulate --threads 1` process "
          "(which also runs its random-search baseline). How each number is produced: "
          "`scripts/bench/compare_kerneltuner.py` (its docstring).\n")
    for name, r in recordings.items():
        print(f"- `{name}`: {r['configs']} configurations, {r['well_performing']} well-performing, "
              f"budget {r['budget']} tests per run")
    for note in notes:
        print(f"- {note}")
    print()
    print("\n".join(table))
    worse = [r for r in rows if r["kt_mean_tests"] is not None and r["steer_mean_tests"] is not None
             and r["steer_mean_tests"] > r["kt_mean_tests"]]
    never = [r for r in rows if r["kt_mean_tests"] is None or r["steer_mean_tests"] is None]
    print()
    if worse:
        print("Rows where Steer's mean is above Kernel Tuner's: " + "; ".join(
            f"`{r['steer']}` on `{r['recording']}` ({fmt(r['steer_mean_tests'])} against "
            f"{fmt(r['kt_mean_tests'])}, medians {fmt(r['steer_median_tests'])} and {fmt(r['kt_median_tests'])}, "
            f"failed runs {r['steer_failed']} and {r['kt_failed']} of {r['runs']})" for r in worse) + ".")
    else:
        print("In every row Steer's mean is at most Kernel Tuner's.")
    if never:
        print("No run reached the target: " + "; ".join(f"`{r['kt']}` / `{r['steer']}` on `{r['recording']}`"
                                                        for r in never) + ".")
    print("\nReproduce (Kernel Tuner from `pip install kernel_tuner`; the recordings are uncompressed, and Steer "
          "stores exported with `steer export --format kerneltuner`, into a temporary folder):\n")
    print("```sh")
    argv, skip = [], False
    for a in sys.argv[1:]:  # the caches of earlier Kernel Tuner runs and the output files are local
        if skip or a == "--markdown":
            skip = False
            continue
        if a in ("--kt-results", "--json"):
            skip = True
            continue
        if a.startswith(("--kt-results=", "--json=")):
            continue
        argv.append(a)
    argv = " ".join(argv)
    print(f"python3 scripts/bench/compare_kerneltuner.py {argv} --markdown")
    print("# Steer's side, per recording and searcher, is:")
    for c in commands[:1]:
        print(c.replace(args.steer, "build/steer"))
    print("```")


if __name__ == "__main__":
    main()
