"""tune_kernel: Kernel Tuner's interface, run by Steer.

A Kernel Tuner script changes its import (``import steer as kernel_tuner``, or
``from steer import tune_kernel``) and keeps its call. What each argument means is Kernel
Tuner's; docs/python.md has the table of what maps to what and where the two differ.
"""

import math
import os
import re
import sys
import warnings
from pathlib import Path

import numpy as np

from . import _steer
from ._native import Interrupted, Tuner, constraints
from ._progress import Chain, PrintEach, Progress, describe_configuration

# Kernel Tuner's strategies by Steer's searchers. Any name of steer.searchers() is taken too.
STRATEGIES = {
    "brute_force": "exhaustive",
    "random_sample": "random",
    "basinhopping": "basin-hopping",
    "simulated_annealing": "annealing",
    "mls": "mls",
    "greedy_mls": "mls",
    "greedy_ils": "ils",
    "genetic_algorithm": "genetic",
    "bayes_opt": "bayes",
}

# Steer's statuses as Kernel Tuner's error markers (result["__error__"]). Kernel Tuner stops at an
# output that fails verification; Steer records it and goes on.
ERRORS = {
    "compile_error": "CompilationFailedConfig",
    "launch_error": "RuntimeFailedConfig",
    "timeout": "RuntimeFailedConfig",
    "invalid_output": "InvalidOutput",
    "skipped": "InvalidConfig",
}

DEFAULT_BLOCK_SIZE_NAMES = ["block_size_x", "block_size_y", "block_size_z"]
DEFAULT_BLOCK_SIZES = [256, 1, 1]
DIMENSIONS = "xyz"
STEER_OBJECTIVES = ("time", "energy", "edp", "gflops-per-watt")

_UNSUPPORTED = {
    "verify": "compare outputs with answer= and atol= (a tolerance), or use steer.Tuner.compare",
    "cmem_args": "pass constant data as an ordinary argument",
    "texmem_args": "pass the data as an ordinary argument",
    "compiler": "Steer tunes CUDA and OpenCL kernels",
    "defines": "Steer defines every tuning parameter, the block sizes, grid sizes and kernel_tuner",
    "simulation_mode": "replay a recording with steer.simulate() or steer.replay()",
    "parallel": "Steer compiles ahead on a pool while the device runs",
    "observers": "counters and energy are Steer options: counters=, objective='energy'",
    "objectives": "tune for one objective; energy objectives are objective='energy', 'edp', 'weighted:A'",
    "log": "Steer logs nothing to files; use verbose=True",
}


def _identifiers(text):
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


def _read_source(kernel_source):
    """(text, file, include folders) of Kernel Tuner's kernel_source: code, a file name, or a list of files."""
    if callable(kernel_source):
        raise NotImplementedError("kernel_source as a code-generating function: Steer compiles one source "
                                  "with the parameters as -D definitions")
    if isinstance(kernel_source, (list, tuple)):
        files = [Path(f) for f in kernel_source]
        text, file, _ = _read_source(files[0])
        return text, file, sorted({str(f.resolve().parent) for f in files})
    if isinstance(kernel_source, Path) or (isinstance(kernel_source, str) and "\n" not in kernel_source
                                           and len(kernel_source) < 250 and os.path.isfile(kernel_source)):
        path = Path(kernel_source)
        return path.read_text(), path, [str(path.resolve().parent)]
    if isinstance(kernel_source, str):
        return kernel_source, None, []
    raise TypeError("kernel_source: the code as a string, a file name, or a list of file names")


def _language(lang, text):
    if lang is None:
        lowered = text.lower()
        if "__global__" in lowered:
            return "cuda"
        if "__kernel" in lowered:
            return "opencl"
        raise ValueError("could not tell the kernel's language: pass lang='CUDA' or lang='OpenCL'")
    if lang.lower() not in ("cuda", "opencl"):
        raise ValueError(f"lang={lang!r}: Steer tunes CUDA and OpenCL kernels")
    return lang.lower()


def _argument_names(text, kernel_name, count):
    """The kernel's parameter names, from its signature; arg0, arg1, ... when it cannot be read."""
    match = re.search(r"\b" + re.escape(kernel_name) + r"\s*\(", text)
    names = []
    if match:
        depth, start = 1, match.end()
        end = start
        while end < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        for parameter in text[start:end - 1].split(","):
            found = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", re.sub(r"\[.*?\]", "", parameter))
            if found:
                names.append(found[-1])
    if len(names) == count and len(set(names)) == count:
        return names
    return [f"arg{i}" for i in range(count)]


def _divisors(grid_div, default_name, tune_params):
    if grid_div is None:
        return [default_name] if default_name in tune_params else []
    if callable(grid_div):
        raise NotImplementedError("grid_div as a function: write it as a string expression, "
                                  "e.g. grid_div_x=['block_size_x/32']")
    if isinstance(grid_div, (str, int, np.integer)):
        grid_div = [grid_div]
    out = []
    for divisor in grid_div:
        if callable(divisor):
            raise NotImplementedError("a grid divisor as a function: write it as a string expression")
        out.append(str(int(divisor)) if isinstance(divisor, (int, np.integer)) else str(divisor))
    return out


def _geometry(problem_size, grid_divs, block_size_names, tune_params):
    """Launch expressions in Kernel Tuner's terms: grid = ceil(problem size / product of int(divisor))."""
    if callable(problem_size):
        raise NotImplementedError("problem_size as a function: write each dimension as an int or a string expression")
    if isinstance(problem_size, (str, int, np.integer)):
        problem_size = (problem_size,)
    problem_size = list(problem_size)
    if not 1 <= len(problem_size) <= 3:
        raise ValueError("problem_size: an int, a string, or a tuple of 1 to 3 of them")
    sizes, extents = {}, []
    for d, extent in enumerate(problem_size):
        if isinstance(extent, (int, np.integer)):
            sizes[f"problem_size_{DIMENSIONS[d]}"] = int(extent)
            extents.append(f"problem_size_{DIMENSIONS[d]}")
        elif isinstance(extent, str):
            extents.append(f"int({extent})")
        else:
            raise TypeError("problem_size should only contain strings or integers")
    extents += ["1"] * (3 - len(extents))
    grid, block = [], []
    for d in range(3):
        divisors = _divisors(grid_divs[d], block_size_names[d], tune_params)
        product = " * ".join(f"int({divisor})" for divisor in divisors) or "1"
        grid.append(f"ceil({extents[d]} / ({product}))")
        name = block_size_names[d]
        block.append(name if name in tune_params else str(DEFAULT_BLOCK_SIZES[d]))
    return sizes, grid, block


def _static_grid(grid, sizes, tune_params):
    """The grid when it reads no tuning parameter (Kernel Tuner's grid_size_x/y/z definitions), else None."""
    if any(_identifiers(g) & set(tune_params) for g in grid):
        return None
    namespace = {"ceil": math.ceil, "int": int, **sizes}
    return [int(eval(g, {"__builtins__": {}}, namespace)) for g in grid]


def _bind_arguments(tuner, text, kernel_name, arguments, answer):
    if answer is not None and len(answer) != len(arguments):
        raise TypeError("The length of argument list and provided results do not match.")
    names = _argument_names(text, kernel_name, len(arguments))
    expected = {}
    for i, (name, argument) in enumerate(zip(names, arguments)):
        wanted = answer[i] if answer is not None else None
        if isinstance(argument, np.ndarray):
            if wanted is None:
                tuner.input(name, argument)
                continue
            wanted = np.asarray(wanted)
            if not np.can_cast(argument.dtype, wanted.dtype):
                raise TypeError(f"Element {i} of the expected results list has a dtype that is not compatible with "
                                f"the dtype of the kernel output: {wanted.dtype} != {argument.dtype}.")
            if wanted.size != argument.size:
                raise ValueError(f"Element {i} of the expected results list has a size different from the kernel "
                                 f"argument: {wanted.size} != {argument.size}.")
            # A copy: the caller's array stays as it was, as Kernel Tuner leaves it.
            tuner.inout(name, np.ascontiguousarray(argument).reshape(-1).copy())
            expected[name] = np.ascontiguousarray(wanted, dtype=argument.dtype)
        elif isinstance(argument, np.generic):
            if wanted is not None:
                raise TypeError(f"answer[{i}]: argument {i} is a scalar, which the kernel cannot write; use None")
            tuner.scalar(name, argument)
        else:
            raise TypeError(f"argument {i} ({name}) is {type(argument).__name__}: pass numpy arrays, and numpy "
                            f"scalars (np.int32(n), np.float32(x)) for scalars")
    return names, expected


def _label_expression_error(error, restrictions):
    """An ExpressionError of a restriction, with the restriction's place in the list."""
    if not isinstance(restrictions, (list, tuple)):
        restrictions = [restrictions]
    for index, restriction in enumerate(restrictions):
        if isinstance(restriction, str) and restriction == getattr(error, "expression", None):
            labelled = type(error)(f"restrictions[{index}]: {error}")
            labelled.expression, labelled.position = error.expression, error.position
            return labelled
    return error


def _kt_result(result, metrics):
    out = dict(result["configuration"])
    if result["status"] == "ok":
        out["time"] = result["time"]["median_ms"]
        out["times"] = list(result["samples_ms"])
    else:
        out["__error__"] = ERRORS.get(result["status"], result["status"])
        out["message"] = result["message"]
    out["status"] = result["status"]
    out["compile_time"] = result["compile_ms"]
    out["verification_time"] = result["validation_ms"]
    out["benchmark_time"] = float(sum(result["samples_ms"]))
    out["framework_time"] = result["overhead_ms"]
    if result["counters"]:
        out.update(result["counters"])
    if result["energy"]:
        out["energy"] = result["energy"]["joules_per_launch"]
        out["power"] = result["energy"]["average_watts"]
    out["timestamp"] = result["timestamp"]
    if metrics and "__error__" not in out:
        for name, metric in metrics.items():
            out[name] = metric(out) if callable(metric) else eval(metric, {"__builtins__": {}}, dict(out))
    return out


def _best(results, objective, higher_is_better):
    scored = [r for r in results if "__error__" not in r and isinstance(r.get(objective), (int, float))]
    if not scored:
        return None
    return (max if higher_is_better else min)(scored, key=lambda r: r[objective])


def _store_path(cache):
    """A Steer store for Kernel Tuner's cache file name: 'x' and 'x.json' keep their tests in 'x.db'."""
    path = Path(cache)
    return path.with_suffix(".db") if path.suffix in ("", ".json") else path


def tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None, grid_div_y=None,
                grid_div_z=None, restrictions=None, answer=None, atol=1e-6, verify=None, verbose=False, lang=None,
                device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None, compiler=None,
                compiler_options=None, defines=None, log=None, iterations=7, block_size_names=None, quiet=False,
                strategy=None, strategy_options=None, cache=None, metrics=None, simulation_mode=None, parallel=None,
                observers=None, objective=None, objective_higher_is_better=None, objectives=None, seed=None, *,
                rtol=1e-5, counters=None, final_check=0, progress=None):
    """Tunes a kernel as Kernel Tuner's tune_kernel does, with Steer's core.

    Returns (results, env): every tested configuration as a dict of its parameters and "time"
    (ms: the median of the `iterations` launches; "times" holds them all) or "__error__", and
    a dict describing the run (device, strategy, timings, "best_config"). Steer's own options,
    keyword-only: rtol (with atol, as numpy.allclose), counters (True or metric names; CUDA),
    final_check (measure the N best again at the end), progress (False, True, or a callable).
    Ctrl-C stops after the current test and raises steer.Interrupted carrying the results.
    """
    given = {"verify": verify, "cmem_args": cmem_args, "texmem_args": texmem_args, "compiler": compiler,
             "defines": defines, "simulation_mode": simulation_mode, "parallel": parallel, "observers": observers,
             "objectives": objectives, "log": log}
    for name, value in given.items():
        if value:
            raise NotImplementedError(f"tune_kernel({name}=...) is Kernel Tuner's alone: {_UNSUPPORTED[name]}")
    text, file, include_dirs = _read_source(kernel_source)
    language = _language(lang, text)
    names = list(block_size_names or [])
    names += DEFAULT_BLOCK_SIZE_NAMES[len(names):]
    if not any(name in tune_params for name in names):
        warnings.warn("None of the tunable parameters specify thread block dimensions!", UserWarning, stacklevel=2)

    tuner = Tuner(kernel_name, text, lang=language, backend=language, device=device, platform=platform)
    for name, values in tune_params.items():
        tuner.parameter(name, [v.item() if isinstance(v, np.generic) else v for v in values])
    for constraint in constraints(restrictions, list(tune_params)):
        tuner._tuner.constraint(constraint)
    sizes, grid, block = _geometry(problem_size, (grid_div_x, grid_div_y, grid_div_z), names, tune_params)
    for name, value in sizes.items():
        tuner.size(name, value)
    shared = "0"
    if smem_args and "size" in smem_args:
        size = smem_args["size"]
        if callable(size):
            raise NotImplementedError("smem_args size as a function: write it as a string expression")
        shared = str(size)
    tuner.launch(grid, block, shared)

    # What Kernel Tuner defines in the source besides the parameters: block sizes, grid sizes, kernel_tuner.
    options = list(compiler_options or []) + [f"-I{folder}" for folder in include_dirs]
    options += [f"-D{name}={DEFAULT_BLOCK_SIZES[d]}" for d, name in enumerate(names) if name not in tune_params]
    static_grid = _static_grid(grid, sizes, tune_params)
    reads_grid = bool(_identifiers(text) & {"grid_size_x", "grid_size_y", "grid_size_z"})
    if static_grid is not None:
        options += [f"-Dgrid_size_{DIMENSIONS[d]}={g}" for d, g in enumerate(static_grid)]
    elif reads_grid:
        raise NotImplementedError("the kernel reads grid_size_x/y/z, and its grid depends on tuning parameters: "
                                  "Steer defines grid sizes only when they are the same for every configuration")
    options.append("-Dkernel_tuner=1")
    tuner.compiler_options(options)

    argument_names, expected = _bind_arguments(tuner, text, kernel_name, arguments, answer)
    if expected:
        tuner.reference(expected)
        for name in expected:
            tuner.compare(name, atol=atol, rtol=rtol)

    strategy_options = dict(strategy_options or {})
    strategy = strategy or "brute_force"
    searcher = STRATEGIES.get(strategy, strategy)
    known = {name for name, _ in _steer.searchers()}
    if searcher not in known:
        raise ValueError(f"Unknown strategy {strategy}: Kernel Tuner's {', '.join(sorted(STRATEGIES))} or Steer's "
                         f"{', '.join(sorted(known))}")
    tests = strategy_options.pop("max_fevals", None)
    seconds = strategy_options.pop("time_limit", None)
    fraction = strategy_options.pop("fraction", None)
    if "seed" in strategy_options:
        seed = strategy_options.pop("seed")
    tuner.searcher(searcher, seed=int(seed or 1), **strategy_options)

    objective = objective or "time"
    metric_objective = objective not in STEER_OBJECTIVES and not objective.startswith("weighted:")
    if metric_objective:
        if not metrics or objective not in metrics:
            raise ValueError(f"objective {objective!r}: Steer's time, energy, edp, gflops-per-watt, weighted:ALPHA, "
                             "or the name of one of metrics")
        if searcher != "exhaustive":
            warnings.warn(f"objective {objective!r} is a metric: the {searcher} search ranks by time, and the best "
                          "configuration is chosen by the metric among those it tested", UserWarning, stacklevel=2)
    higher_is_better = bool(objective_higher_is_better) if objective_higher_is_better is not None else False
    # Every configuration timed `iterations` times, as Kernel Tuner times it: no cap on slow ones.
    tuner.options(repetitions=int(iterations), objective="time" if metric_objective else objective,
                  final_check=int(final_check), max_test_relative=0)
    if counters:
        tuner.options(counters=counters)
    if cache:
        tuner.store(_store_path(cache))

    try:
        space_size = len(tuner.space)
    except _steer.ExpressionError as error:
        raise _label_expression_error(error, restrictions) from None
    device_info = tuner.device
    if not quiet:
        print(f"Using: {device_info['name']}")
    if verbose:
        print(f"Searchspace has {space_size} configurations after restrictions.")
        limit = tuner.device_limit
        if limit["left_out"]:
            print(f"{limit['left_out']} configurations left out: {limit['rule']}")
    if progress is None:
        progress = not quiet
    shown = PrintEach() if (verbose and not quiet and progress is True) else progress
    interrupted = None
    try:
        summary = tuner.tune(tests=tests, seconds=seconds, fraction=fraction, progress=shown, label=kernel_name)
    except Interrupted as stopped:
        summary = stopped.summary
        interrupted = stopped

    results = [_kt_result(result, metrics) for result in summary["results"]]
    best = _best(results, objective, higher_is_better)
    if final_check and summary["best"] is not None and not metric_objective:
        best = next((r for r in results if r["status"] == "ok" and
                     all(r[k] == v for k, v in summary["best"]["configuration"].items())), best)
    env = {
        "kernel_name": kernel_name,
        "device_name": device_info["name"],
        "backend": device_info["backend"],
        "device": device_info,
        "problem_size": problem_size,
        "size_variables": sizes,
        "grid": grid,
        "block": block,
        "argument_names": argument_names,
        "tune_params": tune_params,
        "iterations": iterations,
        "strategy": strategy,
        "searcher": searcher,
        "objective": objective,
        "compiler_options": options,
        "block_size_names": names,
        "searchspace_size": space_size,
        "device_limit": tuner.device_limit,
        "cache": str(_store_path(cache)) if cache else None,
        "tests": summary["tests"],
        "valid": summary["valid"],
        "failed": summary["failed"],
        "resumed": summary["resumed"],
        "stop_reason": summary["stop_reason"],
        "interrupted": summary["interrupted"],
        "total_time_s": summary["wall_s"],
        "setup_time_s": summary["setup_s"],
        "total_compile_time_s": summary["compile_cpu_s"],
        "total_benchmark_time_s": summary["run_s"],
        "total_verification_time_s": summary["validation_s"],
        "total_framework_time_s": summary["overhead_s"],
        "median_framework_time_ms": summary["median_overhead_ms"],
        "warnings": summary["warnings"],
        "steer_summary": summary,
    }
    if best is not None:
        env["best_config"] = best
    if interrupted is not None:
        raise Interrupted(str(interrupted), results, summary=summary, env=env)
    if not quiet:
        if best is None:
            print("no valid configuration was found", file=sys.stderr)
        else:
            keys = list(tune_params) + [objective] + [m for m in (metrics or {}) if m != objective]
            shown_best = {k: best[k] for k in keys if k in best}
            print("best performing configuration:")
            print(describe_configuration(shown_best))
    return results, env
