#!/usr/bin/env python3
"""Kernel Tuner's search strategies replayed on recordings, as runs for Steer's score P.

For each recording and Kernel Tuner (KT) strategy, this script replays the recording in
KT's simulation mode N times (seeds --seed, --seed + 1, ...) and writes every run's tests
to one JSON file per recording, which `steer simulate --score-runs FILE` scores beside
Steer's own searchers with the performance score P of Willemsen et al. (FGCS 2024), the
package autotuning-methodology:

    {"tool": "Kernel Tuner 1.5.0", "data": "<the recording as given>",
     "strategies": {"genetic_algorithm": [{"seed": 1, "wall_s": 3.2,
                                           "tests": [[0.91, 1.234], [1.83, null], ...]}, ...]}}

A test is [cumulative seconds at its end, runtime in ms (KT's objective "time") or null
when the configuration failed]. How a run is made and charged, as the methodology package
(1.1.0) does it for KT in its own runner (autotuning_methodology/runner.py):

  * the space is the recorded configurations (a restriction "the configuration is in the
    cache", as scripts/bench/compare_kerneltuner.py does), the runtimes those of its entries;
  * the budget is time (the package's cutoff_type "time"): strategy_options time_limit =
    the end cut-off time x (1 + 0.1), the package's cutoff_margin. The end cut-off is
    read from Steer (`steer simulate --score --json`, score.end_s). KT counts towards the
    limit its own wall time plus the recorded compile, verification and benchmark times
    of each configuration it serves for the first time; a run also ends when the strategy
    ends on its own (e.g. random_sample stops after 10% of the space, greedy_ils and
    bayes_opt after 100 configurations when no max_fevals is given, as in the package);
  * the time charged for an evaluation is what the package's runner charges: the sum of
    its objective time keys "all" = compilation + runtimes + framework + search_algorithm
    + validation, i.e. KT's compile_time + sum(times) (every timed launch) +
    framework_time + strategy_time + verification_time, in seconds. Note that
    benchmark_time is not among them, and that framework_time and strategy_time are
    those of this simulation (KT overwrites the recorded ones with its own Python time
    per batch), so they depend a little on the machine;
  * KT evaluates a configuration again when a strategy asks for it again: the package
    keeps these repeats as function evaluations, charged sum(times) + framework and
    strategy time (KT zeroes compile, verification and benchmark time of a repeat). Here a
    test is the first evaluation of a configuration; the time of repeats still runs on
    the clock, so each test's seconds are the package's cumulative time at that point.
    --with-repeats writes every evaluation, as the package has them: its P over time pools
    the best-so-far of every evaluation, so repeats weigh in it (see
    scripts/bench/methodology_cross_check.py).

Recordings: Kernel Tuner caches (.json[.gz]) are used as they are; anything else (KTT JSON,
T4, Steer JSON, Steer stores .db[.gz]) goes through `steer import` (stores: as they are)
and `steer export --format kerneltuner`.

Progress goes to standard error; at the end a table of the wall time per run of each
strategy on each recording (with its number of configurations), to plan the cost of a
full table (--summary keeps it). A recording that cannot be read or exported, or a
strategy that raises, is reported with file, strategy and seed; the other jobs go on, and
each recording's file is rewritten whenever one of its strategies has all its runs (a
failed strategy is left out of it). Exit status 1 when anything failed.

The script runs itself inside a virtual environment (--venv) with kernel_tuner 1.5.0 and
autotuning-methodology 1.1.0, installing them there when missing.

    python3 scripts/bench/kerneltuner_strategies.py --runs 50 --jobs 16 --runs-per-job 10 \\
        --out build/kt-runs --summary build/kt-runs/summary.json \\
        "$BENCHMARK_HUB"/convolution_a4000.kt.json.gz data/h200/conv_h200.db.gz
    build/steer simulate --data data/h200/conv_h200.db.gz --searcher random --runs 1 --score \\
        --score-runs build/kt-runs/conv_h200.kt-runs.json --json
"""
import argparse
import concurrent.futures
import contextlib
import gzip
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
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

KERNEL_TUNER_VERSION = "1.5.0"
METHODOLOGY_VERSION = "1.1.0"
REQUIREMENTS = {"kernel_tuner": KERNEL_TUNER_VERSION, "autotuning-methodology": METHODOLOGY_VERSION}

DEFAULT_STRATEGIES = ["hybrid_vndx", "adaptive_tabu_greywolf", "genetic_algorithm", "dual_annealing", "bayes_opt",
                      "greedy_ils", "basinhopping", "simulated_annealing", "pso", "firefly_algorithm", "diff_evo",
                      "random_sample"]

# The package's margin on the end cut-off for the budget (experiments.calculate_budget, cutoff_margin).
CUTOFF_MARGIN = 0.1

# The time keys the package's runner sums per evaluation for objective_time_keys "all" (the schema's
# enum less "all"), as Kernel Tuner result keys (SearchspaceStatistics.T4_time_keys_to_kernel_tuner_time_keys_mapping;
# T4 "runtimes" is KT's "times", the list of timed launches).
PACKAGE_TIME_KEYS = ("compile_time", "times", "framework_time", "strategy_time", "verification_time")


def log(*args):
    print(*args, file=sys.stderr, flush=True)


# --- virtual environment ---------------------------------------------------------------------------------------

def _installed_versions(python):
    code = ("import importlib.metadata as m, json, sys\n"
            "out = {}\n"
            "for name in sys.argv[1:]:\n"
            "    try: out[name] = m.version(name)\n"
            "    except m.PackageNotFoundError: out[name] = None\n"
            "print(json.dumps(out))")
    done = subprocess.run([python, "-c", code, *REQUIREMENTS], capture_output=True, text=True)
    return json.loads(done.stdout) if done.returncode == 0 else {}


def ensure_venv(venv, script, argv):
    """Re-executes the script inside the virtual environment `venv`, which gets kernel_tuner and
    autotuning-methodology (the pinned versions) when they are missing. Returns when already inside."""
    venv = os.path.abspath(venv)
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        log(f"creating the virtual environment {venv}")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    versions = _installed_versions(python)
    missing = [f"{name}=={version}" for name, version in REQUIREMENTS.items() if versions.get(name) != version]
    if missing:
        log(f"installing {' '.join(missing)} into {venv}")
        subprocess.run([python, "-m", "pip", "install", "--quiet", *missing], check=True)
    os.execv(python, [python, os.path.abspath(script), *argv])


# --- recordings ------------------------------------------------------------------------------------------------

def recording_stem(path):
    base = os.path.basename(path)
    for suffix in (".gz", ".json", ".db", ".kt", ".ktt", ".t4"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return base


def _read_bytes(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read()


def kerneltuner_cache(recording, steer, workdir):
    """An uncompressed Kernel Tuner cache file (path ending in .json, as KT insists) for the recording,
    and its contents. KT caches are used as they are; other recordings are exported by Steer."""
    stem = recording_stem(recording)
    out = os.path.join(workdir, stem + ".json")
    content = _read_bytes(recording)
    if content.startswith(b"SQLite format 3\x00"):
        store = os.path.join(workdir, stem + ".db")
        with open(store, "wb") as f:
            f.write(content)
    else:
        data = None
        with contextlib.suppress(ValueError):
            data = json.loads(content)
        if isinstance(data, dict) and isinstance(data.get("cache"), dict) and "tune_params" in data:
            with open(out, "wb") as f:
                f.write(content)
            return out, data
        store = os.path.join(workdir, stem + ".db")
        if os.path.exists(store):
            os.remove(store)
        _steer(steer, ["import", "--db", store, os.path.abspath(recording)])
    _steer(steer, ["export", "--db", store, "--format", "kerneltuner", "--out", out])
    with open(out) as f:
        return out, json.load(f)


def _steer(steer, arguments):
    done = subprocess.run([steer, *arguments], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"`steer {' '.join(arguments)}` failed: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def end_cutoff_seconds(steer, recording):
    """The methodology's end cut-off time (seconds) as Steer computes it for the recording."""
    report = json.loads(_steer(steer, ["simulate", "--data", recording, "--searcher", "random", "--runs", "1",
                                       "--score", "--json"]))
    return float(report["score"]["end_s"])


# --- one run ---------------------------------------------------------------------------------------------------

def charged_seconds(result):
    """The time the package's runner charges for one evaluation (seconds): the sum of its time keys,
    each in ms as KT reports it; a list is summed; a missing, NaN or negative value adds nothing."""
    total = 0.0
    for key in PACKAGE_TIME_KEYS:
        value = result.get(key, [] if key == "times" else None)
        if isinstance(value, (list, tuple)):
            value = sum(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value < 0:
            continue
        total += value / 1000
    return total


def runtime_ms(result):
    """KT's objective "time" of a result, or None when the configuration failed."""
    value = result.get("time")
    if "__error__" in result or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if math.isnan(value) or value >= 1e20:  # 1e20: KT's error value
        return None
    return float(value)


def tests_of(evaluations, names, with_repeats=False):
    """[cumulative seconds, runtime or None] of each configuration's first evaluation, in KT's order;
    the clock runs on through repeated evaluations (with_repeats: these are tests too)."""
    clock, seen, tests = 0.0, set(), []
    for result in evaluations:
        clock += charged_seconds(result)
        key = ",".join(str(result[n]) for n in names)
        if with_repeats or key not in seen:
            seen.add(key)
            tests.append([round(clock, 6), runtime_ms(result)])
    return tests


def in_cache_restriction(cache):
    """A python-constraint restriction that keeps exactly the recorded configurations.

    KT builds its search space before a run, on the run's clock. A restriction that can only
    judge whole configurations makes python-constraint enumerate the parameters' whole
    Cartesian product (3.7 million for conv on the H200, whose recording holds 5,248), which
    took longer than the run's budget; one that also cuts a partial configuration as soon as
    two of its values never occur together in the recording builds the same space in a
    fraction of the time, as a kernel's own restrictions would let KT do."""
    import itertools

    from constraint import Constraint

    names = list(cache["tune_params"].keys())
    recorded = set(cache["cache"].keys())
    rows = [key.split(",") for key in recorded]
    together = {}
    for i, j in itertools.combinations(range(len(names)), 2):
        together[names[i], names[j]] = {(row[i], row[j]) for row in rows}

    class InRecording(Constraint):
        def __call__(self, variables, domains, assignments, forwardcheck=False, _unassigned=None):
            assigned = [name for name in names if name in assignments]
            if len(assigned) == len(names):
                return ",".join(str(assignments[name]) for name in names) in recorded
            for a, b in itertools.combinations(assigned, 2):  # in the order of `names`, as `together`
                if (str(assignments[a]), str(assignments[b])) not in together[a, b]:
                    return False
            return True

    return InRecording()


@contextlib.contextmanager
def recording_evaluations():
    """Makes KT's simulation runner append every result it returns (what the strategies' CostFunc
    collects as the run's results, repeats included) to the yielded list."""
    from kernel_tuner.runners import simulation

    evaluations = []
    original = simulation.SimulationRunner

    class RecordingRunner(original):
        def run(self, parameter_space, tuning_options):
            results = super().run(parameter_space, tuning_options)
            evaluations.extend(r for r in results if r)
            return results

    simulation.SimulationRunner = RecordingRunner
    try:
        yield evaluations
    finally:
        simulation.SimulationRunner = original


def strategy_accepts_seed(strategy):
    from kernel_tuner.interface import strategy_map

    options = getattr(strategy_map[strategy], "_options", {})
    return isinstance(options, dict) and "seed" in options


def run_once(cache_file, cache, strategy, seed, time_limit, with_repeats=False):
    """One seeded simulated tuning; returns {"seed", "wall_s", "tests"}."""
    import numpy as np
    import kernel_tuner
    from kernel_tuner import util

    options = {"time_limit": time_limit}
    if strategy_accepts_seed(strategy):
        options["seed"] = seed
    problem_size = cache["problem_size"]
    problem_size = tuple(problem_size) if isinstance(problem_size, list) else problem_size
    random.seed(seed)
    np.random.seed(seed)
    start = time.perf_counter()
    with recording_evaluations() as evaluations, warnings.catch_warnings(), \
            contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            kernel_tuner.tune_kernel(cache["kernel_name"], "", problem_size, [], cache["tune_params"],
                                     restrictions=[in_cache_restriction(cache)], cache=cache_file,
                                     simulation_mode=True, strategy=strategy, strategy_options=options, quiet=True)
        except util.StopCriterionReached:
            pass  # some strategies let the budget's end escape from their first evaluations
    wall = time.perf_counter() - start
    tests = tests_of(evaluations, cache["tune_params_keys"], with_repeats)
    return {"seed": seed, "wall_s": round(wall, 3), "tests": tests}


def run_job(job):
    """All runs of one (recording, strategy); returns (job, runs, error message or None)."""
    runs = []
    try:
        with open(job["cache_file"]) as f:
            cache = json.load(f)
        for r in range(job["runs"]):
            seed = job["seed"] + r
            run = run_once(job["cache_file"], cache, job["strategy"], seed, job["time_limit"], job["with_repeats"])
            runs.append(run)
            if job["verbose"]:
                log(f"    {job['name']} {job['strategy']} seed {seed}: {len(run['tests'])} tests, "
                    f"{run['tests'][-1][0] if run['tests'] else 0:.0f} s simulated, {run['wall_s']:.2f} s wall")
        return job, runs, None
    except Exception as e:  # noqa: BLE001 -- any failure of a strategy is reported, the other jobs go on
        seed = job["seed"] + len(runs)
        detail = traceback.format_exception_only(type(e), e)[-1].strip()
        return job, runs, f"{job['recording']}: strategy {job['strategy']} failed at seed {seed}: {detail}"


# --- output ----------------------------------------------------------------------------------------------------

def write_runs_file(path, tool, data, strategies):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"tool": tool, "data": data, "strategies": strategies}, f, separators=(",", ":"))
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recordings", nargs="+", help="recordings: Kernel Tuner caches, KTT JSON, T4, Steer JSON or "
                                                      "Steer stores (.gz allowed)")
    parser.add_argument("--steer", default=os.path.join(ROOT, "build", "steer"), help="the steer binary")
    parser.add_argument("--venv", default=os.path.join(ROOT, "build", "bench-venv"),
                        help="virtual environment with kernel_tuner and autotuning-methodology (made when missing); "
                             "none: this interpreter, which has them")
    parser.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES), help="KT strategies, comma-separated")
    parser.add_argument("--runs", type=int, default=50, help="seeded runs per strategy and recording")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first run (run r: seed + r)")
    parser.add_argument("--jobs", type=int, default=1, help="(recording, strategy) jobs run in parallel processes")
    parser.add_argument("--runs-per-job", type=int, default=0,
                        help="split a strategy's runs into jobs of this many runs (default: one job per recording "
                             "and strategy), so that slow strategies spread over --jobs processes too")
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "kt-runs"), help="folder for the runs files")
    parser.add_argument("--end-s", action="append", default=[], metavar="RECORDING=SECONDS",
                        help="end cut-off of one recording (its file name) instead of Steer's, e.g. to plan the "
                             "cost of another definition (repeatable)")
    parser.add_argument("--with-repeats", action="store_true",
                        help="a configuration KT evaluates again is a test again, as the package counts it")
    parser.add_argument("--summary", help="also write the cost per run and the errors to this JSON file")
    parser.add_argument("--quiet", action="store_true", help="no line per run")
    args = parser.parse_args()
    if args.runs < 1 or args.jobs < 1 or args.runs_per_job < 0:
        parser.error("--runs and --jobs must be at least 1, --runs-per-job not negative")

    end_s_of = {}
    for item in args.end_s:
        name, _, seconds = item.rpartition("=")
        try:
            end_s_of[name] = float(seconds)
        except ValueError:
            parser.error(f"--end-s {item}: expected RECORDING=SECONDS")

    if args.venv != "none":
        ensure_venv(args.venv, __file__, sys.argv[1:])

    from kernel_tuner.interface import strategy_map
    import kernel_tuner

    strategies = [s for s in args.strategies.split(",") if s]
    unknown = [s for s in strategies if s not in strategy_map]
    if unknown:
        parser.error(f"unknown strategies {', '.join(unknown)}; Kernel Tuner has {', '.join(strategy_map)}")
    steer = os.path.abspath(args.steer)
    needs_steer = any(not r.endswith((".kt.json", ".kt.json.gz")) or os.path.basename(r) not in end_s_of
                      for r in args.recordings)
    if needs_steer and not os.access(steer, os.X_OK):
        parser.error(f"no steer binary at {steer} (--steer): it exports recordings and gives their cut-offs")
    tool = f"Kernel Tuner {kernel_tuner.__version__}"
    os.makedirs(args.out, exist_ok=True)

    chunk = args.runs_per_job or args.runs
    errors, spaces, jobs, pending = [], {}, [], {}
    workdir = tempfile.mkdtemp(prefix="steer-kt-strategies-")
    try:
        for recording in args.recordings:
            name = os.path.basename(recording)
            try:
                cache_file, cache = kerneltuner_cache(recording, steer, workdir)
                end_s = end_s_of[name] if name in end_s_of else end_cutoff_seconds(steer, recording)
            except Exception as e:  # noqa: BLE001
                errors.append(f"{recording}: cannot be read or exported: {e}")
                log(f"error: {errors[-1]}")
                continue
            out = os.path.join(args.out, recording_stem(recording) + ".kt-runs.json")
            spaces[recording] = {"name": name, "configs": len(cache["cache"]), "end_s": end_s, "out": out,
                                 "strategies": {}}
            log(f"{name}: {len(cache['cache'])} configurations, end cut-off {end_s:.1f} s, "
                f"time limit {end_s * (1 + CUTOFF_MARGIN):.1f} s")
            for strategy in strategies:
                for first in range(0, args.runs, chunk):
                    jobs.append({"recording": recording, "name": name, "cache_file": cache_file,
                                 "strategy": strategy, "runs": min(chunk, args.runs - first),
                                 "seed": args.seed + first, "time_limit": end_s * (1 + CUTOFF_MARGIN),
                                 "with_repeats": args.with_repeats, "verbose": not args.quiet})
                pending[(recording, strategy)] = math.ceil(args.runs / chunk)

        cost = {}  # (recording, strategy) -> wall seconds of its runs
        collected = {}  # (recording, strategy) -> runs of its finished jobs

        def finished(job, runs, error, done):
            space, which = spaces[job["recording"]], (job["recording"], job["strategy"])
            pending[which] -= 1
            if error:
                errors.append(error)
                log(f"[{done}/{len(jobs)}] error: {error}")
                collected[which] = None  # the strategy is left out of the runs file
                return
            seeds = f"{job['seed']}..{job['seed'] + len(runs) - 1}"
            log(f"[{done}/{len(jobs)}] {job['name']} {job['strategy']} seeds {seeds}: "
                f"{statistics.fmean(len(r['tests']) for r in runs):.0f} tests and "
                f"{statistics.fmean(r['wall_s'] for r in runs):.2f} s wall per run")
            if collected.get(which, []) is None:
                return
            collected[which] = collected.get(which, []) + runs
            if pending[which] == 0:  # the strategy's runs are complete: (re)write its recording's file
                space["strategies"][job["strategy"]] = sorted(collected[which], key=lambda r: r["seed"])
                cost[which] = [r["wall_s"] for r in collected[which]]
                write_runs_file(space["out"], tool, job["recording"], space["strategies"])
                log(f"    {job['name']} {job['strategy']}: {len(collected[which])} runs -> {space['out']}")

        start = time.perf_counter()
        if args.jobs == 1:
            for done, job in enumerate(jobs, start=1):
                finished(*run_job(job), done)
        else:
            with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
                futures = [pool.submit(run_job, job) for job in jobs]
                for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
                    finished(*future.result(), done)
        total = time.perf_counter() - start
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    # the cost table: wall time per run, per recording (its size) and strategy
    print(f"\nwall time per run (s), {tool}, simulation mode, one process each:")
    names = list(spaces)
    header = f"{'strategy':24}" + "".join(f"{spaces[r]['name'][:28]:>30}" for r in names) + f"{'all runs':>12}"
    print(header)
    print(f"{'(configurations)':24}" + "".join(f"{spaces[r]['configs']:>30}" for r in names))
    for strategy in strategies:
        cells, total_strategy = [], 0.0
        for r in names:
            walls = cost.get((r, strategy))
            cells.append(f"{statistics.fmean(walls):30.2f}" if walls else f"{'failed':>30}")
            total_strategy += sum(walls or [])
        print(f"{strategy:24}" + "".join(cells) + f"{total_strategy:12.1f}")
    print(f"total wall time {total:.1f} s with {args.jobs} job(s)")
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump({"tool": tool, "runs": args.runs, "seed": args.seed, "jobs": args.jobs, "total_wall_s": total,
                       "recordings": {r: {"configs": s["configs"], "end_s": s["end_s"], "out": s["out"]}
                                      for r, s in spaces.items()},
                       "wall_s_per_run": {r: {st: statistics.fmean(cost[(r, st)]) for st in strategies
                                              if (r, st) in cost} for r in names},
                       "errors": errors}, f, indent=1)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
