"""Steer: an autotuner for GPU kernels, from Python.

Kernel Tuner's interface, run by Steer's C++ core::

    import steer
    results, env = steer.tune_kernel("vector_add", source, n, [c, a, b, np.int32(n)],
                                     {"block_size_x": [64, 128, 256]}, answer=[a + b, None, None, None])

and Steer's own: Space, Tuner (a kernel on numpy arrays, or a spec), searchers, replay and
simulate (recordings), report, Store, counter models. docs/python.md.
"""

from . import _steer
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
