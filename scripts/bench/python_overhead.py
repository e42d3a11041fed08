#!/usr/bin/env python3
"""What the Python layer adds to each test, over the C++ loop that the steer command runs.

Needs the Python package (pip install .; docs/python.md) and, for the device part, OpenCL.

1. Replay (exact, no device noise): the tuning loop over a recording with a ReplayExecutor,
   every configuration once (exhaustive), as `steer simulate` runs it:
     - loop alone: steer.replay(..., on_test=None), nothing in Python per test;
     - with a Python callback: each test's Result converted to a dict and passed to a
       Python function, as tune_kernel and the progress display receive it;
     - with steer's progress display (plain lines, throttled) on that callback.
   The difference per test is what the Python layer adds. Best of --repeats.
2. Device (PoCL): the same trivial kernel (vector add, 1,024 floats) tuned over the same
   space by tune_kernel and by `steer tune` on an equivalent spec (exhaustive, 3 launches a
   test): the loop's framework time per test (median_overhead_ms) of each, and the whole run's
   wall time, where PoCL's compiles (about 0.4 s a test) vary by more than the Python layer costs.

    python3 scripts/bench/python_overhead.py [--binary build/steer] [--recording FILE]
"""
import argparse
import io
import json
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

import steer
from steer._progress import Progress

ROOT = pathlib.Path(__file__).resolve().parents[2]

VECTOR_ADD = """__kernel void vector_add(__global float *c, __global const float *a, __global const float *b, int n) {
    int i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}
"""


def replay_costs(path, repeats):
    recording = steer.Recording.load(path)
    quiet = io.StringIO()
    progress = Progress("replay", stream=quiet, interval_s=0.1)
    progress.bar = None
    cases = {"loop alone": None, "Python callback": lambda result, progress: None, "progress display": progress}
    best = {}
    for _ in range(repeats):
        for name, on_test in cases.items():
            start = time.perf_counter()
            summary = steer.replay(recording, "exhaustive", on_test=on_test)
            elapsed = time.perf_counter() - start
            best[name] = min(best.get(name, float("inf")), elapsed)
    return summary["tests"], best


def device_costs(binary, configurations):
    """(tests, framework ms per test, wall s) of tune_kernel and of `steer tune`, each the second of
    two runs, so that both find their kernels in PoCL's compile cache."""
    python = cli = None
    for _ in range(2):
        python, cli = device_run(binary, configurations)
    return python, cli


def device_run(binary, configurations):
    n = 1024
    a = np.ones(n, np.float32)
    b = np.ones(n, np.float32)
    params = {"block_size_x": configurations}
    start = time.perf_counter()
    _, env = steer.tune_kernel("vector_add", VECTOR_ADD, n, [np.zeros_like(a), a, b, np.int32(n)], params,
                               answer=[a + b, None, None, None], iterations=3, quiet=True, progress=False)
    python_wall = time.perf_counter() - start
    python = (env["tests"], env["median_framework_time_ms"], python_wall)
    if binary is None:
        return python, None
    # One folder every time: the spec's folder is an include path of the compile, which PoCL's
    # cache keys by.
    folder = pathlib.Path(tempfile.gettempdir()) / "steer-python-overhead"
    folder.mkdir(exist_ok=True)
    (folder / "kernel.cl").write_text(VECTOR_ADD)
    np.save(folder / "c.npy", a + b)
    spec = {
        "name": "vector_add",
        "parameters": [{"name": "block_size_x", "values": configurations}],
        "kernel": {"name": "vector_add", "sources": {"opencl": "kernel.cl"},
                   "launch": {"grid": ["cdiv(N, block_size_x)"], "block": ["block_size_x"]},
                   "arguments": [{"name": "c", "type": "float", "size": "N", "output": True},
                                 {"name": "a", "type": "float", "size": "N", "init": {"constant": 1}},
                                 {"name": "b", "type": "float", "size": "N", "init": {"constant": 1}},
                                 {"name": "n", "type": "int32", "value": "N"}]},
        "sizes": {"default": {"N": n}},
        "reference": {"outputs": {"c": str(folder / "c.npy")}, "tolerance": {"abs": 1e-6, "rel": 1e-5}},
    }
    (folder / "spec.json").write_text(json.dumps(spec))
    start = time.perf_counter()
    run = subprocess.run([str(binary), "tune", str(folder / "spec.json"), "--backend", "opencl", "--searcher",
                          "exhaustive", "--repetitions", "3", "--final-check", "0", "--json"],
                         check=True, capture_output=True, text=True)
    cli_wall = time.perf_counter() - start
    summary = json.loads(run.stdout)
    cli = (summary["tests"], summary["median_overhead_ms"], cli_wall)
    return python, cli


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recording", default=str(ROOT / "data/recordings/ktt/pnpoly_rtx3090.ktt.json.gz"))
    parser.add_argument("--binary", type=pathlib.Path, default=None, help="the steer command, for the device part")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    tests, best = replay_costs(args.recording, args.repeats)
    print(f"replay of {pathlib.Path(args.recording).name}, exhaustive: {tests} tests, best of {args.repeats}")
    base = best["loop alone"]
    for name, seconds in best.items():
        added = (seconds - base) / tests * 1e6
        print(f"  {name:<20} {seconds * 1e3:8.1f} ms  {seconds / tests * 1e6:7.2f} us/test  "
              f"{'' if name == 'loop alone' else f'+{added:.2f} us/test'}")

    python, cli = device_costs(args.binary, [32, 64, 128, 256, 512, 1024])
    print("device (OpenCL), vector add, exhaustive: tests, median framework ms per test, wall s")
    print(f"  tune_kernel  {python[0]:4d}  {python[1]:8.3f} ms  {python[2]:6.2f} s")
    if cli:
        print(f"  steer tune   {cli[0]:4d}  {cli[1]:8.3f} ms  {cli[2]:6.2f} s")
        print(f"  tune_kernel - steer tune: {python[1] - cli[1]:+.3f} ms framework per test; whole run "
              f"{python[2] - cli[2]:+.2f} s (set-up, start-up and the compiles' own variation included)")


if __name__ == "__main__":
    sys.exit(main())
