"""Steer: an autotuner for GPU kernels, from Python.

Kernel Tuner's interface, run by Steer's C++ core::

    import steer
    results, env = steer.tune_kernel("vector_add", source, n, [c, a, b, np.int32(n)],
                                     {"block_size_x": [64, 128, 256]}, answer=[a + b, None, None, None])

and Steer's own: Space, Tuner (a kernel on numpy arrays, or a spec), searchers, replay and
simulate (recordings), report, Store, counter models. docs/python.md.
"""

import os as _os

# Kernels run in the steer-worker program shipped inside this package (a Python process cannot
# serve as its own worker); STEER_WORKER set by the user wins.
_worker = _os.path.join(_os.path.dirname(__file__), "steer-worker")
if _os.access(_worker, _os.X_OK) and not _os.environ.get("STEER_WORKER"):
    _os.environ["STEER_WORKER"] = _worker

from . import _steer  # noqa: E402
from ._native import Interrupted, Space, Tuner, results_frame
from ._steer import (
    BackendError,
    CompileError,
    CounterModel,
    ExpressionError,
    ModelError,
    Recording,
    Searcher,
    SpaceError,
    Spec,
    SpecError,
    SteerError,
    Store,
    StoreError,
    counters,
    held_out_accuracy,
    load_model,
    load_spec,
    objective_name,
    pareto_optimal,
    parse_spec,
    replay,
    report,
    searchers,
    simulate,
    train_model,
)
from ._tune_kernel import STRATEGIES, tune_kernel

__version__ = "0.1.0"

opencl_built = _steer.opencl_built
cuda_built = _steer.cuda_built

__all__ = [
    "BackendError", "CompileError", "CounterModel", "ExpressionError", "Interrupted", "ModelError", "Recording",
    "STRATEGIES", "Searcher", "Space", "SpaceError", "Spec", "SpecError", "SteerError", "Store", "StoreError",
    "Tuner", "counters", "held_out_accuracy", "load_model", "load_spec", "objective_name", "pareto_optimal",
    "parse_spec", "replay", "report", "results_frame", "searchers", "simulate", "train_model", "tune_kernel",
]
