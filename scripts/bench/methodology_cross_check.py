#!/usr/bin/env python3
"""Cross-checks Steer's performance score P against the methodology package's own.

For each space (default: benchmark_hub's convolution_a4000 and dedispersion_mi250x) this
script lets the package autotuning-methodology 1.1.0 run Kernel Tuner 1.5.0's strategies
(default: random_sample and genetic_algorithm) in an experiment of its own (one space per
experiment, so that get_strategy_scores gives that space's P over time), takes the very
runs the package executed out of its results cache, writes them as a runs file (the
format of scripts/bench/kerneltuner_strategies.py) and lets
`steer simulate --data <KT cache> --searcher random --runs 1 --score --score-runs FILE --json`
score them. It prints, per space and strategy, the package's P, Steer's time-based P of
the same runs and their difference, and exits 1 when any |difference| > --tolerance (2
when Steer cannot score runs files).

Also printed, to tell definitions apart from data: "runs file", the package's code applied
to the runs as the runs file holds them (mean over the bagging seeds), and "(spread)", the
range of the package's P over --score-seeds seeds of its bagging (definition (6) below):
the package's P itself moves by that much. --curves writes the package's time_range,
baseline, curve and standardised curve per space and strategy, to compare step by step.

The experiment: the T4 files are the full search spaces (pattern_for_full_search_space_
filenames), the KT caches what Kernel Tuner replays; the space Kernel Tuner searches is
the recorded configurations (the T1 input file this script writes has no conditions; the
restriction "the configuration is in the cache" is added to the tune_kernel call the
package makes, as scripts/bench/kerneltuner_strategies.py does). The package's results
are cached under --work; a second run reuses them (--fresh runs them again).

Runs file: a test is the first evaluation of a configuration, [cumulative seconds, runtime
ms or null]; repeated evaluations are told apart by their zero compilation time (the
script checks that every configuration of the space has a compilation time > 0, and that
a repeat returns a value the run saw before); their time stays on the clock.
--with-repeats writes every evaluation, repeats included, as the package has them.

    python3 scripts/bench/methodology_cross_check.py --steer build/steer --repeats 50
"""
# The package's definitions (autotuning_methodology 1.1.0; file.function), which Steer's are checked against:
#
# (1) Cut-offs (searchspace_statistics.cutoff_point, cutoff_point_fevals_time_start_end). dist = the valid
#     objective values ("time": KT's mean of the timed launches; a T4 result without that measurement: the mean
#     of its runtimes), ascending; N = len(dist); opt = dist[0]. For a percentile p: target = opt +
#     (median(dist) - opt) * (1 - p); i = the first index, in dist sorted worst first (descending), whose value
#     <= target; if that value == opt and p != 1: i -= 1. fevals(p) = ceil(i / (N + 1 - i)). End: p =
#     cutoff_percentile 0.95; start: p = cutoff_percentile_start 0.01. If end - start < 2: end + 2 (start == 0)
#     or end + 1 and start - 1, each capped by min(cutoff_point(1.0)[0], ...), which is a runtime, not a count
#     (a quirk). Times: time(fevals) = fevals * median(total time of the configurations that have one, failed
#     ones included); the start time is 0 when cutoff_percentile_start == 0.
# (2) Time of a configuration or an evaluation: the sum of objective_time_keys "all" = compilation + runtimes
#     (the sum of every timed launch) + framework + search_algorithm + validation, in seconds; a key that is NaN
#     or negative (in the full space also: missing) is left out (an empty runtimes list: left out in the full
#     space, 0 in a run); all left out: no time. KT's names: compile_time + sum(times) + framework_time +
#     strategy_time + verification_time; benchmark_time is not one of them. Full space: the T4 file's times. A
#     run: cumulative over its evaluations in KT's order, repeated evaluations included (KT serves a repeat with
#     compile, verification and benchmark time 0, but its times list, framework and strategy time are charged;
#     framework and strategy time are the simulation's own Python time, amortised over each batch).
# (3) Budget (experiments.calculate_budget, runner.collect_results): KT strategy_options time_limit = end time *
#     (1 + cutoff_margin 0.1); KT stops when its own wall time + the recorded compile + verification + benchmark
#     time of first evaluations passes it, or when the strategy ends. A repeat is run again (up to 20 attempts)
#     while fewer than 2 of its evaluations within [start time, end time * 1.1] are valid or fewer than
#     min_num_evals lie there; min_num_evals = max(min(max(round(0.25 * min(max(round(time_limit / time per
#     feval), 2), size)), 2), 25), 2), size = all configurations (minimum_fraction_of_budget_valid 0.25,
#     minimum_number_of_valid_search_iterations 25).
# (4) Baseline (baseline.RandomSearchCalculatedBaseline, include_nan False, not simulated). time per feval =
#     "mean_per_feval" = mean(total time of the valid configurations) + (fraction of configurations that failed)
#     * mean(total time of the failed ones) -- the valid mean is not weighted by the valid fraction. Over time:
#     M(t) = round(max(t / time per feval, 1)); value(M) = dist_descending[min(N - 1, round(M (N + 1) /
#     (M + 1)))]; smoothing: of equal consecutive M keep the first, then a PCHIP interpolation through those
#     (M, value) evaluated at linspace(M[0], M[-1], len(time_range)) (raw values when <= 2 points); no moving
#     average (smoothing_factor 0). Over fevals: value(M) at each M of the range.
# (5) P over time (report_experiments.get_strategy_scores, get_strategies_aggregated_performance): time_range =
#     linspace(start time, end time, resolution), resolution = visualization_settings.resolution (1000 in
#     experiments_defaults.json; get_aggregation_data's own default 1e4 is not used). Standardised curve =
#     (curve(t) - baseline(t)) / (opt - baseline(t)); with several spaces the standardised curves are averaged
#     point by point. score = round(mean over time_range, 3); the "error" reported = round(np.std of the same
#     standardised curve over the time_range points, 3): a spread over time, not over runs.
# (6) The strategy's curve over time (curves.StochasticOptimizationAlgorithm.get_curve_over_time, use_bagging):
#     per evaluation the best-so-far value (NaN before the first valid one, carried over failed evaluations and
#     repeats) at its cumulative time. Rows (evaluation numbers) where every repeat is NaN are dropped; a time
#     counts only where its value is not NaN. Stopping point: each repeat's last such time, sorted;
#     real_stopping_point_time = the first of them > their median (none: the end of time_range). Points with
#     start * (1 - m) <= t <= end * (1 + m), m = 0.1 + 0.25 / rows, are kept (each repeat needs > 1 of them, else
#     ValueError, upon which get_strategy_scores deletes the results and runs the experiment again) and pooled
#     into one set (t, index of the value in dist: searchsorted left). A plain isotonic fit is computed and then
#     overwritten: the curve is a sklearn BaggingRegressor of IsotonicRegression (decreasing, y_min/y_max = the
#     points' min/max index, out_of_bounds clip), n_estimators = max(repeats, 3), max_samples = 1 / sqrt(
#     n_estimators) of the points drawn with replacement, unseeded (NumPy's global random state); its mean
#     prediction on time_range, np.round (half to even) to an index clipped to [0, N - 1], curve = dist[index].
#     From the first time_range point > real_stopping_point_time on, the curve is held at its value there.
# (7) The curve over fevals (get_curve_over_fevals; P over fevals is not what get_strategy_scores reports):
#     fevals_range = start fevals .. end fevals; repeats that end before floor(median of the repeats' last
#     evaluation) are dropped and the others cut there; per feval the median over the repeats (nanmedian) of
#     the best-so-far's index in dist, rounded; held at its last value beyond the data. Fevals count repeats.
import argparse
import contextlib
import gzip
import json
import math
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import kerneltuner_strategies as kts  # noqa: E402

DEFAULT_SPACES = ["convolution_a4000", "dedispersion_mi250x"]
DEFAULT_STRATEGIES = ["random_sample", "genetic_algorithm"]


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def default_benchmark_hub():
    # scripts/fetch-benchmark-hub DIR fetches the spaces; BENCHMARK_HUB names that folder.
    folder = os.environ.get("BENCHMARK_HUB")
    return os.path.normpath(folder) if folder and os.path.isdir(folder) else None


def split_space(space):
    """benchmark_hub names are <application>_<gpu>."""
    application, _, gpu = space.rpartition("_")
    if not application or not gpu:
        raise SystemExit(f"space {space}: expected <application>_<gpu>")
    return application, gpu


def gunzip(src, dst):
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rb") as f, open(dst, "wb") as g:
        shutil.copyfileobj(f, g)


def parameter_type(values):
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "int"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "float"
    return "string"


def write_t1_input(path, cache):
    """A T1 input file the package can hand to tune_kernel_T1: parameters and problem size of the cache,
    no conditions (the space is restricted to the recorded configurations at the tune_kernel call)."""
    folder = os.path.dirname(path)
    kernel_file = os.path.join(folder, "kernel.cu")
    with open(kernel_file, "w") as f:
        f.write("// placeholder: Kernel Tuner only replays the cache (simulation mode)\n")
    t1 = {
        "General": {"BenchmarkIterations": 32, "OutputFormat": "JSON"},
        "ConfigurationSpace": {
            "TuningParameters": [{"Name": name, "Type": parameter_type(values), "Values": repr(list(values))}
                                 for name, values in cache["tune_params"].items()],
            "Conditions": [],
        },
        "KernelSpecification": {
            "Language": "CUDA", "KernelName": cache["kernel_name"], "KernelFile": os.path.basename(kernel_file),
            "ProblemSize": cache["problem_size"], "GlobalSize": {"X": "1"}, "LocalSize": {"X": "1"},
            "Arguments": [],
        },
    }
    with open(path, "w") as f:
        json.dump(t1, f, indent=1)


def write_experiment(path, name, folder, application, gpu, input_folder, pattern, strategies, repeats, resolution):
    from importlib.resources import files

    experiment = json.loads(files("autotuning_methodology").joinpath("experiments_defaults.json").read_text())
    experiment["name"] = name
    experiment["parent_folder"] = folder
    defaults = experiment["experimental_groups_defaults"]
    defaults["applications"] = [{"name": application, "folder": input_folder, "input_file": f"{application}.json",
                                 "objective_performance_keys": ["time"]}]
    defaults["gpus"] = [gpu]
    defaults["pattern_for_full_search_space_filenames"] = {"regex": pattern}
    defaults["repeats"] = repeats
    defaults["stochastic"] = True
    experiment["search_strategies"] = [{"name": s, "search_method": s, "display_name": s, "autotuner": "KernelTuner"}
                                       for s in strategies]
    experiment["statistics_settings"] = {"cutoff_percentile": 0.95, "cutoff_percentile_start": 0.01,
                                         "cutoff_type": "time", "objective_time_keys": ["all"]}
    experiment["visualization_settings"]["resolution"] = resolution
    from autotuning_methodology.validators import validate_experimentsfile

    validate_experimentsfile(experiment)
    with open(path, "w") as f:
        json.dump(experiment, f, indent=1)


@contextlib.contextmanager
def recorded_configurations_only(restriction_of_cache_file):
    """The package calls kernel_tuner.tune_kernel_T1, which calls tune_kernel: add the restriction "the
    configuration is in the cache" there, for the cache file it replays."""
    import kernel_tuner.interface as interface

    original = interface.tune_kernel

    def tune_kernel(*args, restrictions=None, cache=None, **kwargs):
        restriction = restriction_of_cache_file(os.path.realpath(str(cache)))
        return original(*args, restrictions=list(restrictions or []) + [restriction], cache=cache, **kwargs)

    interface.tune_kernel = tune_kernel
    try:
        yield
    finally:
        interface.tune_kernel = original


def runs_from_package(results_description, with_repeats):
    """The runs the package executed, from its results cache, in the runs-file format."""
    import numpy as np

    results = results_description.get_results()
    keys = list(results_description.objective_time_keys)
    compilation = keys.index("compilation")
    fevals, times = results.fevals_results, results.objective_time_results
    values, per_key = results.objective_performance_results, results.objective_time_results_per_key
    runs = []
    for r in range(fevals.shape[1]):
        tests, seen = [], []
        for i in range(fevals.shape[0]):
            if np.isnan(fevals[i, r]):
                break
            t, value = float(times[i, r]), float(values[i, r])
            if math.isnan(t):
                raise SystemExit(f"{results_description.group_name}: evaluation {i + 1} of repeat {r + 1} has no time")
            runtime = None if math.isnan(value) else value
            repeat = per_key[compilation, i, r] == 0
            if repeat and runtime is not None and runtime not in seen:
                raise SystemExit(f"{results_description.group_name}: evaluation {i + 1} of repeat {r + 1} has no "
                                 "compilation time but a value not seen before in the run: cannot tell repeats")
            if runtime is not None:
                seen.append(runtime)
            if with_repeats or not repeat:
                tests.append([round(t, 6), runtime])
        runs.append({"seed": r + 1, "wall_s": None, "tests": tests})
    return runs


class _RunsAsResults:
    """What the package's Curve reads from a ResultsDescription, built from runs-file runs."""

    def __init__(self, name, application, gpu, runs, num_keys):
        import numpy as np
        from autotuning_methodology.caching import Results

        self.group_name = self.group_display_name = name
        self.application_name, self.device_name = application, gpu
        self.stochastic, self.minimization = True, True
        n = max(len(run["tests"]) for run in runs)
        shape = (n, len(runs))
        fevals, time_, value, best = (np.full(shape, np.nan) for _ in range(4))
        for r, run in enumerate(runs):
            running = np.nan
            for i, (t, v) in enumerate(run["tests"]):
                fevals[i, r], time_[i, r] = i + 1, t
                if v is not None:
                    value[i, r] = v
                    running = np.nanmin([running, v])
                best[i, r] = running
        per_key = np.full((num_keys, *shape), np.nan)
        self._results = Results([fevals, time_, value, best, np.full(shape, np.nan), per_key, per_key.copy()])

    def get_results(self):
        return self._results


def package_score(stats, curve, settings, seed):
    """The package's P (time-based) of one curve on one space, its bagging seeded with `seed`."""
    import numpy as np
    from autotuning_methodology.baseline import RandomSearchCalculatedBaseline
    from autotuning_methodology.report_experiments import get_strategies_aggregated_performance

    _, _, start, end = stats.cutoff_point_fevals_time_start_end(settings["cutoff_percentile_start"],
                                                                settings["cutoff_percentile"])
    time_range = np.linspace(start, end, num=int(settings["resolution"]))
    np.random.seed(seed)
    performance, _, _, _ = get_strategies_aggregated_performance(
        [(RandomSearchCalculatedBaseline(stats), [curve], stats, time_range, None)], settings["confidence_level"])
    return float(np.mean(performance[0]))


def package_curves(stats, curve, settings, seed):
    """The pieces of package_score: time_range, the baseline, the strategy's curve (real part and the part
    held after its stopping point) and the standardised curve whose mean is P; computed as
    report_experiments.get_strategies_aggregated_performance does, with the same random state."""
    import numpy as np
    from autotuning_methodology.baseline import RandomSearchCalculatedBaseline

    _, _, start, end = stats.cutoff_point_fevals_time_start_end(settings["cutoff_percentile_start"],
                                                                settings["cutoff_percentile"])
    time_range = np.linspace(start, end, num=int(settings["resolution"]))
    np.random.seed(seed)
    parts = curve.get_curve_over_time(time_range, dist=stats.objective_performances_total_sorted,
                                      confidence_level=settings["confidence_level"])
    stop, values = parts[0], np.concatenate([parts[2], parts[6]]) if parts[5].ndim > 0 else parts[2]
    baseline = RandomSearchCalculatedBaseline(stats)
    random_curve = baseline.get_curve(time_range, "time")
    standardised = baseline.get_standardised_curve(time_range, values, x_type="time")
    return {"time_s": time_range, "baseline_ms": random_curve, "curve_ms": values,
            "held": np.arange(len(time_range)) >= stop, "standardised": standardised}


def write_curves(path, pieces):
    names = list(pieces)
    with open(path, "w") as f:
        f.write(",".join(names) + "\n")
        for i in range(len(pieces["time_s"])):
            f.write(",".join(repr(float(pieces[n][i])) if n != "held" else str(int(pieces[n][i])) for n in names)
                    + "\n")


def steer_scores(steer, data, runs_file, strategies):
    """Steer's time-based P of the external strategies in runs_file; raises SystemExit when this steer
    cannot score runs files yet."""
    help_text = subprocess.run([steer, "simulate", "--help"], capture_output=True, text=True).stdout
    if "--score-runs" not in help_text:
        raise SystemExit(f"{steer} has no `simulate --score-runs` (runs files cannot be scored by this build yet): "
                         "no comparison made")
    command = [steer, "simulate", "--data", data, "--searcher", "random", "--runs", "1", "--score",
               "--score-runs", runs_file, "--json"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"`{' '.join(command)}` failed: {done.stderr.strip()}")
    report = json.loads(done.stdout)
    entries = [e for value in report.values() if isinstance(value, list) for e in value if isinstance(e, dict)]
    for value in report.values():  # also {"name": entry} maps
        if isinstance(value, dict):
            entries += [dict(e, name=e.get("name", k)) for k, e in value.items() if isinstance(e, dict)]
    found = {}
    for strategy in strategies:
        matches = [e for e in entries if str(e.get("name", "")) == strategy] or \
                  [e for e in entries if str(e.get("name", "")).endswith(strategy)]
        if not matches:
            raise SystemExit(f"Steer's report on {runs_file} lists no strategy {strategy}")
        entry = matches[0]
        score = entry.get("score")
        found[strategy] = {"time": score.get("time"), "fevals": score.get("fevals")} if isinstance(score, dict) \
            else {"time": entry.get("score_time"), "fevals": entry.get("score_fevals")}
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--benchmark-hub", default=default_benchmark_hub(),
                        help="folder with <space>.t4.json.gz and <space>.kt.json.gz (default: $BENCHMARK_HUB; "
                             "scripts/fetch-benchmark-hub DIR fetches them)")
    parser.add_argument("--spaces", default=",".join(DEFAULT_SPACES), help="benchmark_hub spaces, comma-separated")
    parser.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES), help="KT strategies, comma-separated")
    parser.add_argument("--repeats", type=int, default=50, help="runs per strategy (the package's repeats)")
    parser.add_argument("--resolution", type=int, default=1000, help="points of time_range P is averaged over")
    parser.add_argument("--seed", type=int, default=1, help="seed of NumPy's and Python's random state")
    parser.add_argument("--score-seeds", type=int, default=5,
                        help="seeds of the package's bagging the spread of its P is taken over")
    parser.add_argument("--tolerance", type=float, default=0.01, help="largest |package P - Steer P| accepted")
    parser.add_argument("--with-repeats", action="store_true",
                        help="runs files hold every evaluation, repeated ones included")
    parser.add_argument("--curves", action="store_true",
                        help="also write, per space and strategy, the package's time_range, baseline, curve and "
                             "standardised curve (CSV, under --work) to compare with Steer's step by step")
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "methodology-check"),
                        help="folder for the experiments, the package's results and the runs files")
    parser.add_argument("--fresh", action="store_true", help="run the package's experiments again")
    parser.add_argument("--steer", default=os.path.join(ROOT, "build", "steer"), help="the steer binary")
    parser.add_argument("--venv", default=os.path.join(ROOT, "build", "bench-venv"),
                        help="virtual environment with kernel_tuner and autotuning-methodology (made when missing)")
    args = parser.parse_args()
    if not args.benchmark_hub or not os.path.isdir(args.benchmark_hub):
        parser.error("no benchmark_hub folder: give --benchmark-hub or set BENCHMARK_HUB")
    if args.repeats < 1 or args.score_seeds < 1:
        parser.error("--repeats and --score-seeds must be at least 1")

    kts.ensure_venv(args.venv, __file__, sys.argv[1:])

    import random
    import numpy as np
    import kernel_tuner
    import autotuning_methodology  # noqa: F401
    from importlib.metadata import version
    from autotuning_methodology.curves import StochasticOptimizationAlgorithm
    from autotuning_methodology.experiments import execute_experiment
    from autotuning_methodology.report_experiments import get_strategy_scores

    strategies = [s for s in args.strategies.split(",") if s]
    spaces = [s for s in args.spaces.split(",") if s]
    steer = os.path.abspath(args.steer)
    tool = f"Kernel Tuner {kernel_tuner.__version__} (autotuning-methodology {version('autotuning-methodology')})"
    restrictions = {}

    def restriction_of_cache_file(path):
        if path not in restrictions:
            with open(path) as f:
                restrictions[path] = kts.in_cache_restriction(json.load(f))
        return restrictions[path]

    rows = []
    for space in spaces:
        application, gpu = split_space(space)
        t4_src = os.path.join(args.benchmark_hub, f"{space}.t4.json.gz")
        kt_src = os.path.join(args.benchmark_hub, f"{space}.kt.json.gz")
        for f in (t4_src, kt_src):
            if not os.path.exists(f):
                raise SystemExit(f"{space}: no {f}")
        folder = os.path.abspath(os.path.join(args.work, space, f"repeats{args.repeats}-seed{args.seed}"))
        if args.fresh and os.path.isdir(folder):
            shutil.rmtree(folder)
        cachefiles = os.path.join(folder, "cachefiles", application)
        inputs = os.path.join(folder, "kernels")
        os.makedirs(cachefiles, exist_ok=True)
        os.makedirs(inputs, exist_ok=True)
        # benchmark_hub's layout: <application>/<gpu>_T4.json the full space, <gpu>.json the KT cache
        # (the package finds the cache by removing "_T4" from the full space's name)
        t4_file, kt_file = os.path.join(cachefiles, f"{gpu}_T4.json"), os.path.join(cachefiles, f"{gpu}.json")
        gunzip(t4_src, t4_file)
        gunzip(kt_src, kt_file)
        with open(kt_file) as f:
            cache = json.load(f)
        with open(t4_file) as f:
            no_compilation = [r for r in json.load(f)["results"] if not r["times"].get("compilation")]
        if no_compilation and not args.with_repeats:
            raise SystemExit(f"{space}: {len(no_compilation)} configurations have no compilation time: repeated "
                             "evaluations cannot be told apart (use --with-repeats)")
        write_t1_input(os.path.join(inputs, f"{application}.json"), cache)
        experiment_file = os.path.join(folder, "experiment.json")
        write_experiment(experiment_file, f"steer_cross_check_{space}", os.path.join(folder, "experiment"),
                         application, gpu, inputs, os.path.join(folder, "cachefiles", "${applications}",
                                                                "${gpus}_T4.json"),
                         strategies, args.repeats, args.resolution)

        log(f"{space}: the package runs {', '.join(strategies)} ({args.repeats} repeats each, results cached "
            f"in {folder})")
        random.seed(args.seed)
        np.random.seed(args.seed)
        with recorded_configurations_only(restriction_of_cache_file), contextlib.redirect_stdout(sys.stderr):
            experiment, _, stats_of, descriptions = execute_experiment(experiment_file, profiling=False)
            np.random.seed(args.seed)
            scores = get_strategy_scores(experiment_file, full_validate_on_load=False)
        stats = stats_of[gpu][application]
        settings = dict(experiment["statistics_settings"], **experiment["visualization_settings"])

        runs_file = os.path.join(folder, f"{space}.package-runs.json")
        runs_of = {}
        for strategy in strategies:
            runs_of[strategy] = runs_from_package(descriptions[gpu][application][strategy], args.with_repeats)
        kts.write_runs_file(runs_file, tool, kt_src, runs_of)

        for strategy in strategies:
            executed = StochasticOptimizationAlgorithm(descriptions[gpu][application][strategy])
            own = [package_score(stats, executed, settings, args.seed + k) for k in range(args.score_seeds)]
            if args.curves:
                pieces = package_curves(stats, executed, settings, args.seed)
                if abs(float(np.mean(pieces["standardised"])) - own[0]) > 1e-9:
                    raise SystemExit(f"{space} {strategy}: the curves written do not give the package's P")
                write_curves(os.path.join(folder, f"{space}.{strategy}.package-curves.csv"), pieces)
            rebuilt = _RunsAsResults(strategy, application, gpu, runs_of[strategy], len(stats.objective_time_keys))
            from_file = [package_score(stats, StochasticOptimizationAlgorithm(rebuilt), settings, args.seed + k)
                         for k in range(args.score_seeds)]
            rows.append({"space": space, "strategy": strategy, "package": scores[strategy]["score"],
                         "package_error": scores[strategy]["error"], "seeds_min": min(own), "seeds_max": max(own),
                         "runs_file": float(np.mean(from_file)), "runs_file_file": runs_file, "data": kt_src,
                         "tests": float(np.mean([len(r["tests"]) for r in runs_of[strategy]]))})
            log(f"  {strategy}: package P {scores[strategy]['score']:.3f} (error {scores[strategy]['error']:.3f}; "
                f"{args.score_seeds} bagging seeds {min(own):.3f}..{max(own):.3f}), package code on the runs file "
                f"{np.mean(from_file):.3f}")

    print(f"\n{'space':24}{'strategy':20}{'package P':>10}{'(spread)':>16}{'runs file':>10}{'Steer P':>10}"
          f"{'diff':>9}")

    def table(steer_of=None):
        for row in rows:
            steer_p = steer_of[(row["space"], row["strategy"])] if steer_of else None
            diff = None if steer_p is None else steer_p - row["package"]
            spread = f"{row['seeds_min']:.3f}..{row['seeds_max']:.3f}"
            print(f"{row['space']:24}{row['strategy']:20}{row['package']:10.3f}{spread:>16}{row['runs_file']:10.3f}"
                  + (f"{steer_p:10.3f}{diff:+9.3f}" if steer_p is not None else f"{'–':>10}{'–':>9}"))

    try:
        steer_of = {}
        for space in spaces:
            mine = [r for r in rows if r["space"] == space]
            found = steer_scores(steer, mine[0]["data"], mine[0]["runs_file_file"], strategies)
            for r in mine:
                value = found[r["strategy"]]["time"]
                if value is None:
                    raise SystemExit(f"Steer's report gives no time-based score for {r['strategy']} on {space}")
                steer_of[(space, r["strategy"])] = float(value)
    except SystemExit as e:
        table()
        print(f"\nerror: {e}", file=sys.stderr)
        sys.exit(2)
    table(steer_of)
    worst = max(abs(steer_of[(r["space"], r["strategy"])] - r["package"]) for r in rows)
    print(f"\nlargest |Steer P - package P| = {worst:.3f} (tolerance {args.tolerance})")
    sys.exit(1 if worst > args.tolerance else 0)


if __name__ == "__main__":
    main()
