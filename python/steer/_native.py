"""Steer's own interface in Python: spaces, the tuner on numpy arrays or a spec, and what they return."""

import inspect
import os
from collections.abc import Mapping

import numpy as np

from . import _steer
from ._progress import Chain, Progress


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (KeyboardInterrupt) stopped a tuning run after the test it was in.

    Every test made is in ``results`` (and in the store, when the run had one: call again to
    resume); ``summary`` (or ``env``, from tune_kernel) describes the run so far.
    """

    def __init__(self, message, results, summary=None, env=None):
        super().__init__(message)
        self.results = results
        self.summary = summary
        self.env = env


def constraints(restrictions, parameter_names):
    """Restrictions as the core takes them: expressions as they are, callables as (names, callable).

    Accepted, as in Kernel Tuner: a string (an expression over the parameters, Python syntax); a
    callable of one argument, given a dict of every parameter's value (Kernel Tuner's original
    form); a callable whose arguments are named after parameters, given those (only they join
    the constraint, which keeps the space's independent groups apart); (callable, [names]),
    given the named parameters positionally. A single string or callable may stand for a list.
    """
    if restrictions is None:
        return []
    if isinstance(restrictions, (str, tuple)) or callable(restrictions):
        restrictions = [restrictions]
    names = list(parameter_names)
    out = []
    for index, restriction in enumerate(restrictions):
        if isinstance(restriction, str):
            out.append(restriction)
        elif isinstance(restriction, tuple) and len(restriction) == 2 and callable(restriction[0]):
            out.append((list(restriction[1]), restriction[0]))
        elif callable(restriction):
            out.append(_callable_constraint(restriction, names, index))
        else:
            raise TypeError(f"restrictions[{index}]: a string, a callable or (callable, [names]), "
                            f"got {type(restriction).__name__}")
    return out


def _callable_constraint(function, names, index):
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: Kernel Tuner's dict form
        parameters = None
    if parameters is not None and any(p.kind is p.VAR_KEYWORD for p in parameters):
        return names, lambda *values: function(**dict(zip(names, values)))
    if parameters is not None and parameters and all(p.name in names for p in parameters):
        return [p.name for p in parameters], function
    if parameters is None or len(parameters) == 1:
        return names, lambda *values: function(dict(zip(names, values)))
    unknown = [p.name for p in parameters if p.name not in names]
    raise TypeError(f"restrictions[{index}]: the callable's arguments {unknown} are not tuning parameters; "
                    "take one argument (a dict of every parameter) or arguments named after parameters")


class Space(_steer.Space):
    """The valid configurations of tuning parameters under restrictions.

    ``Space({"TILE": [8, 16, 32], "VEC": [1, 2, 4]}, ["TILE % VEC == 0"])``: parameters as a
    dict (values as a list, or a value-list expression such as ``"[2**i for i in range(6)]"``),
    restrictions as tune_kernel takes them. ``len(space)``, ``space[i]`` (a dict),
    ``space.index(configuration)``, ``neighbours``, ``sample``, ``stats``.
    """

    def __init__(self, parameters, restrictions=None):
        items = list(parameters.items()) if isinstance(parameters, Mapping) else list(parameters)
        super().__init__(items, constraints(restrictions, [name for name, _ in items]))


_ROLES = ("input", "output", "inout")


class Tuner:
    """A kernel on numpy arrays (or a spec file's kernel), tuned by Steer's loop (steer/embed.hpp).

    ::

        tuner = steer.Tuner("saxpy", source, lang="opencl")
        tuner.parameter("BLOCK", [32, 64, 128]).size("N", n)
        tuner.scalar("n", np.int32(n)).scalar("a", np.float32(2)).input("x", x).inout("y", y)
        tuner.launch(["cdiv(N, BLOCK)"], ["BLOCK"])
        tuner.reference({"y": 2 * x + y})
        summary = tuner.tune(tests=20)
    """

    def __init__(self, kernel_name, source=None, *, file=None, lang=None, backend="auto", device=0, platform=-1,
                 _native=None):
        if _native is not None:
            self._tuner = _native
            return
        sources = []
        if file is not None:
            sources.append(("", os.fspath(file), True))
        if source is not None:
            if lang is None:
                raise ValueError("lang: the language of `source`, 'cuda' or 'opencl'")
            sources.append((lang.lower(), source, False))
        if not sources:
            raise ValueError("a kernel needs a source: source=TEXT (with lang=) or file=PATH (.cl or .cu)")
        self._tuner = _steer._Tuner(kernel_name, sources, backend, device, platform)
        self._parameters = []

    @classmethod
    def from_spec(cls, path, *, size="", backend="auto", device=0, platform=-1):
        """A spec file's kernel at one of its sizes, run as `steer tune` runs it."""
        tuner = cls(None, _native=_steer._Tuner.from_spec(os.fspath(path), backend, size, device, platform))
        tuner._parameters = list(tuner.space.parameters)
        return tuner

    # ---- the definition -------------------------------------------------------------------
    def parameter(self, name, values):
        self._tuner.parameter(name, values if isinstance(values, str) else list(values))
        self._parameters.append(name)
        return self

    def constraint(self, restriction):
        for constraint in constraints([restriction], self._parameters):
            self._tuner.constraint(constraint)
        return self

    def size(self, name, value):
        self._tuner.size(name, value)
        return self

    def _bind(self, name, array, role):
        if not isinstance(array, np.ndarray):
            raise TypeError(f"argument '{name}': a numpy array, got {type(array).__name__}")
        if role != "input" and (not array.flags.c_contiguous or not array.flags.writeable):
            raise ValueError(f"argument '{name}': an {role} array must be C-contiguous and writable (it is written back)")
        self._tuner.argument(name, np.ascontiguousarray(array).reshape(-1), role)
        return self

    def input(self, name, array):
        return self._bind(name, array, "input")

    def output(self, name, array):
        return self._bind(name, array, "output")

    def inout(self, name, array):
        return self._bind(name, array, "inout")

    def scalar(self, name, value):
        """A scalar argument: a numpy scalar (np.int32(n), np.float32(a)), whose dtype is the kernel's."""
        if not isinstance(value, np.generic):
            raise TypeError(f"scalar '{name}': a numpy scalar such as np.int32({value!r}), which says its type")
        self._tuner.scalar(name, value.dtype, value.tobytes())
        return self

    def launch(self, grid, block, shared_memory_bytes="0"):
        """Blocks (work-groups) and threads per block: expressions of parameters and size variables."""
        self._tuner.launch([str(g) for g in grid], [str(b) for b in block], str(shared_memory_bytes))
        return self

    def reference(self, expected):
        """Expected outputs: a dict {output name: array}, or a function(inputs) returning one.

        The function gets a dict of every argument's initial value and every size variable.
        """
        if callable(expected):
            self._tuner.reference(expected)
        else:
            self._tuner.expected({name: np.ascontiguousarray(value).reshape(-1) for name, value in expected.items()})
        return self

    def compare(self, name, *, atol=None, rtol=0.0, ulps=None, exact=False, ignore=False):
        """How output `name` is compared: |actual - expected| <= atol + rtol |expected|, ulps, exact, ignore."""
        if ignore:
            self._tuner.compare(name, "ignore")
        elif exact:
            self._tuner.compare(name, "exact")
        elif ulps is not None:
            self._tuner.compare(name, "ulps", ulps=int(ulps))
        elif atol is not None:
            self._tuner.compare(name, "tolerance", abs=float(atol), rel=float(rtol))
        else:
            raise ValueError("compare: give atol (and rtol), ulps, exact=True or ignore=True")
        return self

    def compiler_options(self, options):
        self._tuner.compiler_options(list(options))
        return self

    def searcher(self, name, *, seed=1, model="", **settings):
        """The search strategy (steer.searchers() lists them) and its settings."""
        self._tuner.searcher(name, seed, {k: str(v) for k, v in settings.items()}, os.fspath(model))
        return self

    def store(self, path):
        """A results store: every test is kept, and a later tune() resumes from it."""
        self._tuner.store(os.fspath(path))
        return self

    def options(self, **options):
        """repetitions, warmup, timeout_ms, min_total_ms, max_total_ms, max_test_relative,
        validate_on_device, objective, compile_threads, guesses, final_check, final_rounds, counters (True or
        a list of metrics), energy."""
        self._tuner.set_options(**options)
        return self

    # ---- what it built ----------------------------------------------------------------------
    @property
    def space(self):
        """The space, without what the device cannot launch."""
        return self._tuner.space()

    @property
    def device(self):
        return self._tuner.device()

    @property
    def device_limit(self):
        return self._tuner.device_limit()

    @property
    def problem_size(self):
        return self._tuner.problem_size()

    def instance(self, configuration):
        """A configuration's -D definitions and launch geometry."""
        return self._tuner.instance(configuration)

    def run(self, configuration):
        """Compiles and runs one configuration on the arrays: {"result", "outputs"}; writes outputs back."""
        return self._tuner.run(configuration)

    def tune(self, *, tests=None, seconds=None, fraction=None, target_ms=None, progress=True, on_test=None,
             label=None):
        """Tunes until a stop condition: the summary (a dict: best, results, tests, timings, ...).

        progress: True shows a bar or lines (tqdm when installed), False nothing. on_test:
        called with (result, progress) after every test. Ctrl-C stops after the current test and
        raises steer.Interrupted, which carries every result.
        """
        shown = Progress(label or self._label()) if progress is True else (progress or None)
        callback = Chain(shown, on_test) if (shown or on_test) else None
        try:
            summary = self._tuner.tune(tests, seconds, fraction, target_ms, callback)
        finally:
            if callback is not None:
                callback.close()
        if summary["keyboard_interrupt"]:
            raise Interrupted(f"tuning stopped by Ctrl-C after {summary['tests']} tests; "
                              "the exception's .results hold them (and the store, when there is one)",
                              summary["results"], summary=summary)
        return summary

    def _label(self):
        try:
            return f"tuning {self.problem_size}"
        except _steer.SteerError:
            return "tuning"


def results_frame(results):
    """Results (a list of dicts, as tune_kernel returns them) as a pandas DataFrame."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError("results_frame needs pandas: pip install pandas") from e
    return pandas.DataFrame(results)
