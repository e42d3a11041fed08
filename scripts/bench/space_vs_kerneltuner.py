#!/usr/bin/env python3
"""Space construction time and memory: Steer against Kernel Tuner, on gemm_full and conv.

Needs Kernel Tuner (not a project dependency, so not in scripts/setup):

    pip install kernel_tuner

and Steer's benchmark program:

    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build --target space_construction
    python3 scripts/bench/space_vs_kerneltuner.py [--binary build/bench/space_construction]

Kernel Tuner side: kernel_tuner.searchspace.Searchspace(tune_params, restrictions,
max_threads=1024) with its default framework, "PythonConstraint" (python-constraint2;
restriction strings are parsed into specialised constraints), under each of its
python-constraint solvers: "PC_OptimizedBacktrackingSolver" (the default),
"PC_BacktrackingSolver" and "PC_RecursiveBacktrackingSolver". The speed-up is against
the fastest of them for each space. (The "bruteforce" framework filters the whole cross
product, 30 s for gemm_full; "pysmt" and "pyatf" need packages Kernel Tuner does not
install.) Time is the best of 3 constructions; peak memory is tracemalloc's peak over one
more construction (Python-level allocations, numpy included), run apart because tracing
slows Python down.

Steer side: build/bench/space_construction (Google Benchmark) builds the same spaces from
kernels/<name>/spec.json; its time is the best of 3 repetitions of the mean over many
constructions, its memory the built space's storage (BuildStats::memory_bytes).

With --python, the same two definitions are also built from Python in this process, with the
Python package (pip install .): steer.Space(tune_params, restrictions), best of 5, the
dict and the restriction strings converted and handed to the core as Kernel Tuner's
Searchspace gets them.

Times are wall-clock and CPU (time.process_time; Google Benchmark's cpu_time); on a
shared machine the CPU time is the steadier of the two.

The two definitions below are written in Kernel Tuner's (Python) syntax; the script
checks that both tools count the same number of valid configurations.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import time
import tracemalloc

ROOT = pathlib.Path(__file__).resolve().parents[2]

_DIMS = [8, 16, 32]
_HALO = [i for i in range(8, 75) if i <= 26 or 32 <= i <= 42 or i >= 64]
SPACES = {
    "gemm_full": (
        dict(MWG=[16, 32, 64, 128], NWG=[16, 32, 64, 128], KWG=[16, 32], MDIMC=_DIMS, NDIMC=_DIMS, MDIMA=_DIMS,
             NDIMB=_DIMS, KWI=[2, 8], VWM=[1, 2, 4], VWN=[1, 2, 4], STRM=[0, 1], STRN=[0, 1], SA=[0, 1], SB=[0, 1],
             PRECISION=[32]),
        ["KWG % KWI == 0",
         "MWG % (MDIMC * VWM) == 0",
         "NWG % (NDIMC * VWN) == 0",
         "MWG % (MDIMA * VWM) == 0",
         "NWG % (NDIMB * VWN) == 0",
         "KWG % ((MDIMC * NDIMC) // MDIMA) == 0",
         "KWG % ((MDIMC * NDIMC) // NDIMB) == 0"],
    ),
    "conv": (
        dict(TBX=[8, 16, 32, 64], TBY=[8, 16, 32, 64], LOCAL=[0, 1, 2], WPTX=[1, 2, 4, 8], WPTY=[1, 2, 4, 8],
             VECTOR=[1, 2, 4], UNROLL_FACTOR=[1, 7], PADDING=[0, 1], TBX_XL=_HALO, TBY_XL=_HALO),
        # -(-6 // W) is ceil(6 / W): restriction strings cannot call math.ceil.
        ["TBX_XL == (TBX + -(-6 // WPTX) if LOCAL == 2 else TBX)",
         "TBY_XL == (TBY + -(-6 // WPTY) if LOCAL == 2 else TBY)",
         "WPTX % VECTOR == 0 and (LOCAL != 2 or 6 % VECTOR == 0)",
         "PADDING == 0 or LOCAL != 0",
         "TBX % WPTX == 0",
         "TBY % WPTY == 0"],
    ),
}


SOLVERS = ["PC_OptimizedBacktrackingSolver", "PC_BacktrackingSolver", "PC_RecursiveBacktrackingSolver"]


def kernel_tuner(name, solver):
    from kernel_tuner.searchspace import Searchspace

    tune_params, restrictions = SPACES[name]
    wall = cpu = float("inf")
    for _ in range(3):
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        space = Searchspace(tune_params, restrictions, 1024, solver_method=solver)
        wall = min(wall, time.perf_counter() - start_wall)
        cpu = min(cpu, time.process_time() - start_cpu)
    tracemalloc.start()
    Searchspace(tune_params, restrictions, 1024, solver_method=solver)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return space.size, wall, cpu, peak


def steer_from_python(name):
    import steer as steer_package

    tune_params, restrictions = SPACES[name]
    wall = cpu = float("inf")
    for _ in range(5):
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        space = steer_package.Space(tune_params, restrictions)
        wall = min(wall, time.perf_counter() - start_wall)
        cpu = min(cpu, time.process_time() - start_cpu)
    return len(space), wall, cpu


def steer(binary, names):
    run = subprocess.run(
        [str(binary), f"--benchmark_filter=construct/({'|'.join(names)})$", "--benchmark_repetitions=3",
         "--benchmark_format=json"],
        check=True, capture_output=True, text=True)
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    results = {}
    for bench in json.loads(run.stdout)["benchmarks"]:
        if bench.get("run_type") != "iteration":
            continue
        name = bench["name"].split("/")[1]
        wall = bench["real_time"] * scale[bench["time_unit"]]
        cpu = bench["cpu_time"] * scale[bench["time_unit"]]
        if name in results:
            wall, cpu = min(wall, results[name][1]), min(cpu, results[name][2])
        results[name] = (int(bench["configurations"]), wall, cpu, int(bench["memory_bytes"]))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", type=pathlib.Path, default=ROOT / "build" / "bench" / "space_construction")
    parser.add_argument("--python", action="store_true", help="also build the spaces with steer.Space in this process")
    args = parser.parse_args()

    ours = steer(args.binary, list(SPACES))
    print("times in ms (wall / CPU); memory in MiB: Kernel Tuner's tracemalloc peak, Steer's built storage")
    for name in SPACES:
        size, wall, cpu, memory = ours[name]
        print(f"\n{name}: {size:,} valid configurations")
        print(f"  {'Steer':<54} {wall * 1e3:>8.2f} / {cpu * 1e3:>7.2f}  {'':>17}  {memory / 2**20:>8.3f}")
        if args.python:
            py_size, py_wall, py_cpu = steer_from_python(name)
            if py_size != size:
                sys.exit(f"{name}: steer.Space counts {py_size} valid configurations, the benchmark {size}")
            print(f"  {'Steer from Python (steer.Space)':<54} {py_wall * 1e3:>8.2f} / {py_cpu * 1e3:>7.2f}")
        fastest = None
        for solver in SOLVERS:
            kt_size, kt_wall, kt_cpu, kt_peak = kernel_tuner(name, solver)
            if kt_size != size:
                sys.exit(f"{name}: Kernel Tuner counts {kt_size} valid configurations, Steer {size}")
            label = f"Kernel Tuner {solver}" + (" (default)" if solver == SOLVERS[0] else "")
            print(f"  {label:<54} {kt_wall * 1e3:>8.1f} / {kt_cpu * 1e3:>7.1f}  "
                  f"{kt_wall / wall:>6.0f}x / {kt_cpu / cpu:>6.0f}x  {kt_peak / 2**20:>8.1f}")
            if fastest is None or kt_cpu < fastest[1]:
                fastest = (kt_wall, kt_cpu, solver)
        print(f"  speed-up against the fastest ({fastest[2]}): {fastest[0] / wall:.0f}x wall, {fastest[1] / cpu:.0f}x CPU")
        if args.python:
            print(f"  steer.Space against the fastest: {fastest[0] / py_wall:.0f}x wall, {fastest[1] / py_cpu:.0f}x CPU")


if __name__ == "__main__":
    main()
